//! `wiregen serve`: the validation service. A small, stateless HTTP/1.1 server that checks messages and
//! session streams with the same [`Engine`](crate::engine::Engine) as `wiregen validate`, so teams can check
//! live traffic and stored history from any language.
//!
//! # Endpoints
//! - `POST /v1/validate`: `application/json` (one envelope) or `application/x-ndjson` (JSONL, checked line by
//!   line as the body arrives); `?stream=true` also applies the stream rules
//!   ([`StreamChecker`](crate::stream::StreamChecker)). Answers `200 {"valid": bool, "results": [Record...]}`,
//!   each [`Record`](crate::validate::Record) exactly as `wiregen validate --format json` prints it. A line
//!   that is not JSON (or not UTF-8, or nests too deep) is a result, not a server error.
//! - `POST /v1/rollup`: JSONL in, `{"valid", "records", "invalid", "rollup"}` out (the stream checker's rollup).
//! - `GET /v1/schema` (the bundled schema, `application/schema+json`), `GET /v1/schema/events/{t}` (one event's
//!   schema, standalone), `GET /healthz`, `GET /metrics` (Prometheus text).
//!
//! Protocol errors are JSON bodies `{"error": {"code", "status", "message"}}` with a stable code
//! ([`ErrorCode`]): 400 `bad-query` / `unreadable-body`, 404 `not-found` / `unknown-event`, 405
//! `method-not-allowed`, 408 `timeout`, 413 `body-too-large`, 414 `uri-too-long`, 431 `headers-too-large`, 415
//! `unsupported-media-type`, 501 `unsupported-transfer-coding`, 503 `overloaded`. A request head hyper cannot
//! parse gets hyper's own answer (a 400 without a body) and is counted and logged apart
//! ([`App`]'s `connection_ended`).
//!
//! # Safety limits
//! The body limit is enforced from `Content-Length` before reading and again while the body streams in; a JSONL
//! body is never held whole (only the current line). Every request has a deadline, requests in flight and open
//! connections are capped, headers must arrive within a deadline, and JSON nesting is bounded by the engine's
//! parser ([`crate::engine::MAX_DEPTH`]). SIGTERM/SIGINT stop accepting connections and let in-flight
//! requests finish (up to a grace period).
//!
//! # Example
//! ```no_run
//! # async fn demo() -> std::io::Result<()> {
//! use wiregen::serve::{App, ServeOptions};
//! let proto = wiregen::load::load("schema".as_ref()).expect("schema loads");
//! let opts = ServeOptions::default();
//! let app = App::new(proto, &opts).expect("the schema has a root type");
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
//! wiregen::serve::serve(listener, app, &opts, std::future::pending()).await
//! # }
//! ```
//!
//! # Errors
//! [`run`] fails with a [`ServeError`] when the schema does not load or the address cannot be bound; once the
//! server runs, every problem with a request is an HTTP answer.

mod app;
mod body;
mod error;
mod memory;
mod metrics;

use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::pin::pin;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::{watch, Semaphore};

pub use app::App;
pub use error::ErrorCode;
pub use metrics::Metrics;

/// Options of the service: where to listen, which schema, the limits. `wiregen serve`'s flags (in the binary)
/// convert into it; [`ServeOptions::default`] holds the same defaults as the flags.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServeOptions {
    /// Address to listen on (`host:port`, resolved); port 0 picks a free port. Default `127.0.0.1:8080`.
    pub listen: String,
    /// The schema directory or one schema file, loaded once at start-up by [`run`]. Default `None`: the session
    /// protocol compiled into this build ([`crate::builtin`]).
    pub schema: Option<PathBuf>,
    /// Largest request body in bytes (413 `body-too-large` above it). Default 16 MiB.
    pub max_body: u64,
    /// Largest answer of `/v1/validate` in bytes: records past it are left out and the answer says
    /// `"truncated": true` with the full counts. Default 32 MiB.
    pub max_answer: u64,
    /// Also check that ids are cuid2-shaped. Default off.
    pub strict_ids: bool,
    /// Deadline for a whole request, body included, in milliseconds (408 `timeout` after it); also how long a client
    /// may read nothing of its answer before its connection is dropped. Default 30000.
    pub timeout_ms: u64,
    /// Requests processed at once; more get 503 `overloaded` (health and metrics are exempt). Default 256; 0 is
    /// taken as 1, and more than tokio's `Semaphore::MAX_PERMITS` as that (the `wiregen` binary refuses both).
    pub max_concurrency: usize,
    /// Open connections at once; more wait in the listen backlog. Default 1024; bounded as `max_concurrency`.
    pub max_connections: usize,
    /// Deadline for a request's headers to arrive, in milliseconds. Default 10000.
    pub header_timeout_ms: u64,
    /// After the shutdown signal, how long in-flight requests may take to finish, in milliseconds. Default 30000.
    pub shutdown_grace_ms: u64,
    /// No `tracing` event per request (warnings are still emitted). Default off.
    pub quiet: bool,
}

impl Default for ServeOptions {
    fn default() -> Self {
        ServeOptions {
            listen: "127.0.0.1:8080".into(),
            schema: None,
            max_body: 16 * 1024 * 1024,
            max_answer: 32 * 1024 * 1024,
            strict_ids: false,
            timeout_ms: 30_000,
            max_concurrency: 256,
            max_connections: 1024,
            header_timeout_ms: 10_000,
            shutdown_grace_ms: 30_000,
            quiet: false,
        }
    }
}

/// Why the service could not start. `Display` says what failed; the cause is
/// [`source()`](std::error::Error::source).
#[derive(Debug)]
#[non_exhaustive]
pub enum ServeError {
    /// The schema directory did not load.
    Schema(crate::diag::SchemaErrors),
    /// The listen address could not be parsed or bound.
    Bind {
        /// The address as given.
        addr: String,
        /// The cause.
        source: std::io::Error,
    },
    /// The async runtime could not start, or the server failed.
    Io(std::io::Error),
    /// The schema has no type to validate.
    Engine(crate::engine::EngineError),
}

impl std::fmt::Display for ServeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ServeError::Schema(e) => {
                write!(f, "the schema has {}", e.count("error"))
            }
            ServeError::Bind { addr, .. } => write!(f, "cannot listen on {addr}"),
            ServeError::Io(_) => f.write_str("server error"),
            // The engine's own words ask for `--type`, which the service does not take (helper 78).
            ServeError::Engine(crate::engine::EngineError::NoRoot) => f.write_str(
                "nothing to validate: the service checks the schema's root type, and the schema names none; mark \
                 the type it should check with `\"x-root\": true`",
            ),
            ServeError::Engine(_) => f.write_str("nothing to validate"),
        }
    }
}

impl std::error::Error for ServeError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ServeError::Schema(e) => Some(e),
            ServeError::Bind { source, .. } => Some(source),
            ServeError::Io(e) => Some(e),
            ServeError::Engine(crate::engine::EngineError::NoRoot) => None,
            ServeError::Engine(e) => Some(e),
        }
    }
}

/// Runs the service until SIGTERM or SIGINT: loads the schema, binds, calls `on_listening` with the bound address
/// (the `wiregen` binary prints `listening on http://ADDR` there), serves on a multi-threaded tokio runtime, and
/// drains in-flight requests on the signal.
///
/// It prints nothing and installs no `tracing` subscriber: its events (start, stop, one per request unless
/// [`ServeOptions::quiet`], warnings) go to whatever subscriber the caller installed, and nowhere otherwise.
/// To run the service inside your own runtime, use [`App`], [`serve`] and [`shutdown_signal`] instead.
///
/// # Errors
/// See [`ServeError`].
pub fn run(opts: &ServeOptions, on_listening: impl FnOnce(SocketAddr)) -> Result<(), ServeError> {
    let proto = match &opts.schema {
        Some(dir) => crate::load::load(dir),
        None => crate::builtin::load(),
    }
    .map_err(ServeError::Schema)?;
    memory::give_back_large_blocks();
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().map_err(ServeError::Io)?;
    let served = rt.block_on(async {
        let bind_err = |source| ServeError::Bind { addr: opts.listen.clone(), source };
        // `--listen 127.0.0.1` said only "invalid socket address" (helper 82): the form is named.
        let with_form = |e: std::io::Error| match e.kind() {
            std::io::ErrorKind::InvalidInput => std::io::Error::new(
                e.kind(),
                format!("{e}: an address is HOST:PORT, as 127.0.0.1:8080 or [::1]:8080 (port 0 picks a free one)"),
            ),
            _ => e,
        };
        let addr: SocketAddr = tokio::net::lookup_host(&opts.listen)
            .await
            .map_err(|e| bind_err(with_form(e)))?
            .next()
            .ok_or_else(|| bind_err(std::io::Error::new(std::io::ErrorKind::InvalidInput, "no address")))?;
        let listener = TcpListener::bind(addr).await.map_err(bind_err)?;
        let shutdown = process_signals().map_err(ServeError::Io)?;
        let local = listener.local_addr().map_err(ServeError::Io)?;
        let events = proto.protocol.as_ref().map_or(0, |p| p.events.len());
        let proto_has_strict = proto.has_strict_patterns();
        let app = App::new(proto, opts).map_err(ServeError::Engine)?;
        on_listening(local);
        tracing::info!(addr = %local, events, strict_ids = opts.strict_ids, "wiregen serve started");
        if opts.strict_ids && !proto_has_strict {
            tracing::warn!("{}", crate::engine::NO_STRICT_PATTERN);
        }
        serve(listener, app, opts, shutdown).await.map_err(ServeError::Io)?;
        tracing::info!("wiregen serve stopped");
        Ok(())
    });
    // Past the grace period, work still running (a check not yet at its deadline) does not hold the process:
    // dropping the runtime would wait for it.
    rt.shutdown_background();
    served
}

/// Installs the SIGINT and SIGTERM handlers now (call it inside the runtime, before announcing the address, so
/// a signal sent right after start-up is never missed) and returns a future that completes on either.
///
/// # Errors
/// When a handler cannot be installed.
pub fn shutdown_signal() -> std::io::Result<impl Future<Output = ()>> {
    let log = |sig: &str| tracing::info!(signal = sig, "shutting down: finishing in-flight requests");
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let mut int = signal(SignalKind::interrupt())?;
        let mut term = signal(SignalKind::terminate())?;
        Ok(async move {
            tokio::select! {
                _ = int.recv() => log("SIGINT"),
                _ = term.recv() => log("SIGTERM"),
            }
        })
    }
    #[cfg(not(unix))]
    {
        Ok(async move {
            if tokio::signal::ctrl_c().await.is_ok() {
                log("SIGINT");
            } else {
                std::future::pending::<()>().await;
            }
        })
    }
}

/// [`shutdown_signal`] for the `wiregen serve` process itself: the first SIGINT or SIGTERM starts the graceful
/// shutdown, and a second one during it ends the process at once (exit 130), as an operator pressing Ctrl-C again
/// expects (the grace period had them wait, 30 s by default).
fn process_signals() -> std::io::Result<impl Future<Output = ()>> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let mut int = signal(SignalKind::interrupt())?;
        let mut term = signal(SignalKind::terminate())?;
        Ok(async move {
            let first = tokio::select! {
                _ = int.recv() => "SIGINT",
                _ = term.recv() => "SIGTERM",
            };
            tracing::info!(
                signal = first,
                "shutting down: finishing in-flight requests (a second signal exits at once)"
            );
            tokio::spawn(async move {
                let second = tokio::select! {
                    _ = int.recv() => "SIGINT",
                    _ = term.recv() => "SIGTERM",
                };
                tracing::warn!(signal = second, "second signal: exiting without finishing in-flight requests");
                std::process::exit(130);
            });
        })
    }
    #[cfg(not(unix))]
    {
        shutdown_signal()
    }
}

/// Serves `app` on `listener` until `shutdown` completes, then stops accepting, lets every connection finish
/// its in-flight request (idle keep-alive connections close at once) and returns, or returns after
/// [`ServeOptions::shutdown_grace_ms`] at the latest.
///
/// Each connection is HTTP/1.1 served by hyper with a header-read deadline; at most
/// [`ServeOptions::max_connections`] are open at once (further ones wait in the listen backlog).
///
/// # Errors
/// None in practice: accept errors (e.g. out of file descriptors) are logged and retried.
pub async fn serve(
    listener: TcpListener,
    app: App,
    opts: &ServeOptions,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let router = app.router();
    let overflow_router = app.overflow_router();
    let mut http = hyper::server::conn::http1::Builder::new();
    // hyper's own limits stay above the service's (app::MAX_HEADERS, MAX_HEADER_BYTES), so that a request over
    // the service's limits still gets a JSON answer.
    http.timer(TokioTimer::new())
        .header_read_timeout(Duration::from_millis(opts.header_timeout_ms.max(1)))
        .max_headers(1024)
        .max_buf_size(CONNECTION_BUFFER)
        .keep_alive(true)
        // A client that shuts its sending side after the request (`nc -N`, some proxies) still gets the answer;
        // without it hyper closed the connection at that end of input and dropped the request unanswered.
        .half_close(true);
    let mut http_overflow = hyper::server::conn::http1::Builder::new();
    http_overflow
        .timer(TokioTimer::new())
        .header_read_timeout(Duration::from_millis(opts.header_timeout_ms.clamp(1, OVERFLOW_HEADER_MS)))
        .max_buf_size(CONNECTION_BUFFER)
        .keep_alive(false)
        .half_close(true);
    let conns = Arc::new(Semaphore::new(opts.max_connections.clamp(1, Semaphore::MAX_PERMITS)));
    let overflow = Arc::new(Semaphore::new(OVERFLOW_CONNECTIONS));
    let (close_tx, close_rx) = watch::channel(());
    let mut shutdown = pin!(shutdown);
    loop {
        // A slot first (a regular one when there is one), then the connection; with every slot taken, further
        // connections wait in the listen backlog.
        let slot = match conns.clone().try_acquire_owned() {
            Ok(p) => Slot { _permit: p, overflow: false },
            Err(_) => tokio::select! {
                p = conns.clone().acquire_owned() => match p { Ok(p) => Slot { _permit: p, overflow: false }, Err(_) => break },
                p = overflow.clone().acquire_owned() => match p { Ok(p) => Slot { _permit: p, overflow: true }, Err(_) => break },
                _ = &mut shutdown => break,
            },
        };
        let (stream, _peer) = tokio::select! {
            r = listener.accept() => match r {
                Ok(s) => s,
                Err(e) => {
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = &mut shutdown => break,
        };
        let _ = stream.set_nodelay(true);
        // A regular slot may have been freed while the overflow one waited for this connection.
        let slot = match slot.overflow.then(|| conns.clone().try_acquire_owned().ok()).flatten() {
            Some(p) => Slot { _permit: p, overflow: false },
            None => slot,
        };
        let (svc, builder) = if slot.overflow {
            (TowerToHyperService::new(overflow_router.clone()), &http_overflow)
        } else {
            (TowerToHyperService::new(router.clone()), &http)
        };
        let stream = SendDeadline::new(stream, Duration::from_millis(opts.timeout_ms.max(1)));
        let conn = builder.serve_connection(TokioIo::new(stream), svc);
        let mut close = close_rx.clone();
        let app = app.clone();
        tokio::spawn(async move {
            let mut conn = conn;
            let mut closing = false;
            let done = loop {
                tokio::select! {
                    r = std::future::poll_fn(|cx| conn.poll_without_shutdown(cx)) => {
                        match &r {
                            Ok(()) => break true,
                            Err(e) => {
                                app.connection_ended(e);
                                // hyper answered a head it could not parse (400, 414, 431): close as carefully.
                                break e.is_parse() && !e.is_parse_version_h2();
                            }
                        }
                    }
                    _ = close.changed(), if !closing => {
                        closing = true;
                        std::pin::Pin::new(&mut conn).graceful_shutdown();
                    }
                }
            };
            if done {
                linger(conn.into_parts().io.into_inner().stream).await;
            }
            drop(slot);
            drop(close);
        });
    }
    drop(listener);
    drop(close_rx);
    let _ = close_tx.send(());
    let grace = Duration::from_millis(opts.shutdown_grace_ms);
    if tokio::time::timeout(grace, close_tx.closed()).await.is_err() {
        tracing::warn!(connections = close_tx.receiver_count(), "grace period over: dropping unfinished connections");
    }
    Ok(())
}

/// The most a connection buffers of what it reads or writes (hyper's default is ~400 KB): what an answer's
/// client has not read yet stays in the answer, under the request's place, but for this much (and one piece,
/// `app::ANSWER_PIECE`) once hyper took the last piece. A request head must fit in it: larger heads get hyper's
/// own 431, without a body (the service's JSON 431 starts at 16 KiB).
const CONNECTION_BUFFER: usize = 64 << 10;

/// Connections over `--max-connections` that are still accepted, for `/healthz` alone (everything else is
/// 503): an orchestrator's probe gets through when slow clients hold every regular connection.
pub const OVERFLOW_CONNECTIONS: usize = 64;

/// The header deadline of an overflow connection (or `--header-timeout-ms` when shorter), in milliseconds.
pub const OVERFLOW_HEADER_MS: u64 = 2_000;

/// How long a closed connection keeps reading, and how much, before the socket is closed (see [`linger`]).
const LINGER_TIME: Duration = Duration::from_secs(10);
const LINGER_IDLE: Duration = Duration::from_secs(2);
const LINGER_BYTES: u64 = 256 << 20;

/// A connection's socket with a deadline on sending: a write that makes no progress for `limit` (the client does
/// not read its answer) fails with `TimedOut`, and hyper drops the connection and the answer it held. Reading has
/// its own deadlines (the header deadline, `--timeout-ms` for the request).
struct SendDeadline {
    stream: tokio::net::TcpStream,
    limit: Duration,
    /// Armed when a write finds the socket full; disarmed by any progress.
    stalled: Option<std::pin::Pin<Box<tokio::time::Sleep>>>,
}

impl SendDeadline {
    fn new(stream: tokio::net::TcpStream, limit: Duration) -> Self {
        SendDeadline { stream, limit, stalled: None }
    }

    /// What a write that got `r` from the socket returns.
    fn progress<T>(
        &mut self,
        cx: &mut std::task::Context<'_>,
        r: Poll<std::io::Result<T>>,
    ) -> Poll<std::io::Result<T>> {
        if r.is_ready() {
            self.stalled = None;
            return r;
        }
        let limit = self.limit;
        let sleep = self.stalled.get_or_insert_with(|| Box::pin(tokio::time::sleep(limit)));
        match sleep.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!("the client read nothing of its answer for {} ms (--timeout-ms)", limit.as_millis()),
            ))),
            Poll::Pending => Poll::Pending,
        }
    }
}

impl tokio::io::AsyncRead for SendDeadline {
    fn poll_read(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.get_mut().stream).poll_read(cx, buf)
    }
}

impl tokio::io::AsyncWrite for SendDeadline {
    fn poll_write(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        let r = std::pin::Pin::new(&mut this.stream).poll_write(cx, buf);
        this.progress(cx, r)
    }

    fn poll_write_vectored(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        let r = std::pin::Pin::new(&mut this.stream).poll_write_vectored(cx, bufs);
        this.progress(cx, r)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let r = std::pin::Pin::new(&mut this.stream).poll_flush(cx);
        this.progress(cx, r)
    }

    fn poll_shutdown(self: std::pin::Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.get_mut().stream).poll_shutdown(cx)
    }
}

/// A connection's place: held until the connection is closed, from the regular pool or the overflow pool.
struct Slot {
    _permit: tokio::sync::OwnedSemaphorePermit,
    overflow: bool,
}

/// Closes a connection the way a careful server does ("lingering close", as nginx): our side of the stream is
/// shut first, then what the client still sends is read and dropped until it closes too, for at most
/// `LINGER_TIME` and `LINGER_BYTES` (and `LINGER_IDLE` between reads). A client that writes its whole body before
/// reading (Python's `http.client`, `requests`) would otherwise get a reset instead of the 413 answer that was
/// already written for it.
async fn linger(mut stream: tokio::net::TcpStream) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let _ = stream.shutdown().await;
    let deadline = tokio::time::Instant::now() + LINGER_TIME;
    let mut seen = 0u64;
    let mut buf = vec![0u8; 64 << 10];
    while seen < LINGER_BYTES {
        let idle = deadline.min(tokio::time::Instant::now() + LINGER_IDLE);
        match tokio::time::timeout_at(idle, stream.read(&mut buf)).await {
            Ok(Ok(n)) if n > 0 => seen += n as u64,
            _ => break,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_leave_their_cause_to_source() {
        let e = ServeError::Bind { addr: "nowhere:1".into(), source: std::io::Error::other("no such host") };
        let levels: Vec<String> =
            std::iter::successors(Some(&e as &dyn std::error::Error), |e| e.source()).map(|e| e.to_string()).collect();
        assert_eq!(levels, ["cannot listen on nowhere:1", "no such host"]);
    }
}

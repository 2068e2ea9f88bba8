//! The router, its handlers and the per-request middleware (limits, deadline, metrics, one log line).

use std::collections::BTreeMap;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes, HttpBody};
use axum::extract::{Path, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode, Uri, Version};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use hyper::body::{Frame, SizeHint};
use tokio::sync::Semaphore;

use super::body::{self, Kind, Limited, Lines};
use super::error::{ApiError, ErrorCode};
use super::metrics::{Metrics, Tally};
use super::ServeOptions;
use crate::engine::EngineError;
use crate::engine::{Engine, EngineOptions};
use crate::ir::Model;
use crate::load::uri::percent_decode;
use crate::rules::Rule;
use crate::stream::StreamChecker;
use crate::validate::Record;

/// The service: the compiled engine, the pre-rendered schemas, the limits and the metrics. Cheap to clone.
#[derive(Clone)]
pub struct App {
    state: Arc<Shared>,
}

struct Shared {
    engine: Engine,
    /// The bundled schema, or why the schema output refuses this model.
    schema: Result<Bytes, String>,
    events: BTreeMap<String, Bytes>,
    max_body: u64,
    max_answer: usize,
    timeout: Duration,
    max_concurrency: usize,
    limiter: Arc<Semaphore>,
    /// One permit per core for the checks of large bodies ([`check`]).
    heavy: Semaphore,
    metrics: Metrics,
    log: bool,
}

impl App {
    /// Builds the service for `model` (a [`Model`], or an `Arc` of one to share it) with the limits of `opts`.
    /// The service owns the model through its engine; dropping the last clone of the `App` frees it.
    ///
    /// # Errors
    /// When the model has no root type to validate.
    pub fn new(model: impl Into<Arc<Model>>, opts: &ServeOptions) -> Result<App, EngineError> {
        let engine = Engine::new(
            model,
            EngineOptions { strict_ids: opts.strict_ids, max_errors: Some(crate::engine::REPORTED_ERRORS) },
        )?;
        use crate::emit::schema as bundled;
        let m = engine.model();
        // The bundled schema, and per event of the protocol its body's schema standalone (by the bundle's names).
        let names = bundled::def_names(m);
        let schema = bundled::bundle(m, &crate::emit::EmitOptions::default())
            .map(|b| Bytes::from(bundled::pretty(&b)))
            .map_err(|e| e.to_string());
        let mut events = BTreeMap::new();
        if let (Some(p), Ok(names)) = (&m.protocol, &names) {
            for e in &p.events {
                let name = names.get(e.ty.0).map_or("", String::as_str);
                let comment = format!(
                    "The body (`{}`) of a `{}` event: `$defs/{name}` of the bundled schema, standalone.",
                    p.union_field, e.tag
                );
                if let Ok(v) = bundled::standalone(m, e.ty, &comment) {
                    events.insert(e.tag.clone(), Bytes::from(bundled::pretty(&v)));
                }
            }
        }
        Ok(App {
            state: Arc::new(Shared {
                engine,
                schema,
                events,
                max_body: opts.max_body,
                max_answer: usize::try_from(opts.max_answer).unwrap_or(usize::MAX),
                timeout: Duration::from_millis(opts.timeout_ms.max(1)),
                max_concurrency: opts.max_concurrency.clamp(1, Semaphore::MAX_PERMITS),
                limiter: Arc::new(Semaphore::new(opts.max_concurrency.clamp(1, Semaphore::MAX_PERMITS))),
                heavy: Semaphore::new(std::thread::available_parallelism().map_or(1, |n| n.get())),
                metrics: Metrics::default(),
                log: !opts.quiet,
            }),
        })
    }

    /// The axum router with every route, the JSON 404/405 answers and the per-request middleware.
    pub fn router(&self) -> Router {
        let st = self.state.clone();
        Router::new()
            .route("/v1/validate", post(validate))
            .route("/v1/rollup", post(rollup))
            .route("/v1/schema", get(schema))
            .route("/v1/schema/events/{t}", get(event))
            .route("/healthz", get(healthz))
            .route("/metrics", get(metrics))
            .fallback(not_found)
            .layer(middleware::from_fn_with_state(st.clone(), around))
            .with_state(st)
    }

    /// The service for connections over `--max-connections`: `/healthz` answers (an orchestrator's probe must get
    /// through a slow-client flood), anything else is 503 `overloaded`; counted and logged like every request.
    pub(crate) fn overflow_router(&self) -> Router {
        let st = self.state.clone();
        Router::new()
            .route("/healthz", get(healthz))
            .fallback(overloaded)
            .layer(middleware::from_fn_with_state(st.clone(), around))
            .with_state(st)
    }

    /// The metrics (what `GET /metrics` renders).
    pub fn metrics(&self) -> &Metrics {
        &self.state.metrics
    }

    /// Counts and logs a connection that ended with `e`, when `e` says its request head could not be parsed. Such
    /// a request never reaches the router: hyper answers it itself, without a body (400 for a malformed request
    /// line or header field, `Content-Length` included; 414 or 431 past its own limits, which are above the
    /// service's), or not at all (an HTTP/2 preface), and closes the connection. Other connection errors (the
    /// client went away, the header deadline) are no request and are not counted.
    pub(crate) fn connection_ended(&self, e: &hyper::Error) {
        if !e.is_parse() {
            let timed_out = std::error::Error::source(e)
                .and_then(|s| s.downcast_ref::<std::io::Error>())
                .is_some_and(|io| io.kind() == std::io::ErrorKind::TimedOut);
            if timed_out && self.state.log {
                tracing::info!(error = %e, "client not reading its answer: connection dropped");
            } else {
                tracing::debug!(error = %e, "connection ended with an error");
            }
            return;
        }
        let reason = if e.is_parse_version_h2() {
            "http2-preface"
        } else if e.is_parse_too_large() {
            "head-too-large"
        } else {
            "bad-head"
        };
        self.state.metrics.malformed(reason);
        if self.state.log {
            tracing::info!(reason, error = %e, "malformed request");
        }
    }
}

type St = State<Arc<Shared>>;

/// The route template of a path, for metrics labels (bounded cardinality).
fn route_of(path: &str) -> &'static str {
    match path {
        "/v1/validate" => "/v1/validate",
        "/v1/rollup" => "/v1/rollup",
        "/v1/schema" => "/v1/schema",
        "/healthz" => "/healthz",
        "/metrics" => "/metrics",
        p if p.strip_prefix("/v1/schema/events/").is_some_and(|t| !t.is_empty() && !t.contains('/')) => {
            "/v1/schema/events/{t}"
        }
        _ => "unmatched",
    }
}

/// Every request passes here: the head's limits and `Host`, concurrency limit, deadline, JSON 405, metrics, one
/// log line, and `Connection: close` when the body was not read to its end.
async fn around(State(st): St, req: Request, next: Next) -> Response {
    // Counted and logged once, however the request ends (dropped when the client goes away mid-request).
    let request = InFlight::start(st, req.method().clone(), target_of(req.uri()));
    let (st, route) = (&request.st, request.route);
    let exempt = matches!(route, "/healthz" | "/metrics");
    let (req, body_read) = ReadToEnd::track(req);
    let version = req.version();
    let mut permit = None;
    let mut resp = if let Some(e) = head_too_large(&req).or_else(|| bad_host(&req)).or_else(|| unknown_method(&req)) {
        e.into_response()
    } else {
        permit = if exempt { None } else { st.limiter.clone().try_acquire_owned().ok() };
        if !exempt && permit.is_none() {
            ApiError::new(
                ErrorCode::Overloaded,
                format!(
                    "{} in flight already, the most this server takes (--max-concurrency); retry shortly",
                    crate::engine::counted(st.max_concurrency as u64, "request", "requests")
                ),
            )
            .into_response()
        } else {
            match tokio::time::timeout(st.timeout, next.run(req)).await {
                Ok(r) => r,
                Err(_) => timeout_error(st.timeout).into_response(),
            }
        }
    };
    if resp.status() == StatusCode::METHOD_NOT_ALLOWED && !resp.headers().contains_key(header::CONTENT_TYPE) {
        // axum adds the `Allow` header on the way out.
        let allowed = if matches!(route, "/v1/validate" | "/v1/rollup") { "POST" } else { "GET, HEAD" };
        let (method, path) = (&request.method, &request.path);
        resp = ApiError::new(ErrorCode::MethodNotAllowed, format!("{method} is not allowed on {path}; use {allowed}"))
            .into_response();
    }
    if !body_read.load(Ordering::Relaxed) {
        // The rest of the body was not read: the connection cannot carry another request, and the client is told
        // so (RFC 9112 section 9.6) instead of finding the connection closed under its next request.
        resp.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
        if version == Version::HTTP_10 {
            // Answered as HTTP/1.0 (hyper answers a 1.0 client so anyway): otherwise hyper, seeing an HTTP/1.1
            // answer to a 1.0 client that asked for keep-alive, appends `keep-alive` to the `close` (`Connection:
            // close, keep-alive`), and the client reuses a connection that is closing.
            *resp.version_mut() = Version::HTTP_10;
        }
    }
    let tally = resp.extensions_mut().remove::<Tally>().unwrap_or_default();
    request.finish(resp.status().as_u16(), &tally);
    // The permit goes with the answer until hyper has taken its last piece: the permits bound the answers held in
    // memory, those of clients that do not read them too (the connection drops such a client after
    // `--timeout-ms` without progress, `serve::SendDeadline`).
    match permit {
        Some(permit) => resp.map(|body| Body::new(Answer { body, piece: Bytes::new(), permit: Some(permit) })),
        None => resp,
    }
}

/// The 408 of a request that ran past `--timeout-ms`: the middleware's, and a check's that its deadline stopped.
fn timeout_error(timeout: Duration) -> ApiError {
    ApiError::new(
        ErrorCode::Timeout,
        format!("the request did not complete within {} ms (--timeout-ms)", timeout.as_millis()),
    )
}

/// A request body that notes when it has been read to its end (or had none).
struct ReadToEnd {
    body: Body,
    ended: Arc<AtomicBool>,
}

impl ReadToEnd {
    fn track(req: Request) -> (Request, Arc<AtomicBool>) {
        let ended = Arc::new(AtomicBool::new(false));
        let flag = ended.clone();
        let req = req.map(|body| {
            flag.store(body.is_end_stream(), Ordering::Relaxed);
            Body::new(ReadToEnd { body, ended: flag })
        });
        (req, ended)
    }
}

impl HttpBody for ReadToEnd {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let r = Pin::new(&mut self.body).poll_frame(cx);
        if matches!(r, Poll::Ready(None)) || self.body.is_end_stream() {
            self.ended.store(true, Ordering::Relaxed);
        }
        r
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// The most bytes of an answer handed to hyper at once ([`Answer`]).
const ANSWER_PIECE: usize = 64 << 10;

/// An answer handed to hyper [`ANSWER_PIECE`] bytes at a time, holding the request's concurrency permit until the
/// last piece is taken (hyper takes the next piece only when its write buffer has room).
struct Answer {
    body: Body,
    /// What is left of the data frame being handed out.
    piece: Bytes,
    permit: Option<tokio::sync::OwnedSemaphorePermit>,
}

impl HttpBody for Answer {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        if self.piece.is_empty() {
            match std::task::ready!(Pin::new(&mut self.body).poll_frame(cx)) {
                Some(Ok(frame)) => match frame.into_data() {
                    Ok(data) => self.piece = data,
                    Err(frame) => return Poll::Ready(Some(Ok(frame))),
                },
                end => {
                    self.permit = None;
                    return Poll::Ready(end);
                }
            }
        }
        let n = self.piece.len().min(ANSWER_PIECE);
        let data = self.piece.split_to(n);
        if self.piece.is_empty() && self.body.is_end_stream() {
            self.permit = None;
        }
        Poll::Ready(Some(Ok(Frame::data(data))))
    }

    fn is_end_stream(&self) -> bool {
        self.piece.is_empty() && self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        let mut h = self.body.size_hint();
        let piece = self.piece.len() as u64;
        h.set_lower(h.lower() + piece);
        if let Some(upper) = h.upper() {
            h.set_upper(upper + piece);
        }
        h
    }
}

/// The status a request is counted and logged with when its client went away before the answer (nginx's "client
/// closed request").
pub(crate) const CLIENT_CLOSED: u16 = 499;

/// A request being served: in the in-flight gauge from [`InFlight::start`] until it is finished, and counted and
/// logged once, by [`InFlight::finish`] or, when the request future is dropped (the client went away), by `Drop`
/// with [`CLIENT_CLOSED`].
struct InFlight {
    st: Arc<Shared>,
    route: &'static str,
    method: axum::http::Method,
    path: String,
    start: Instant,
    done: bool,
}

impl InFlight {
    fn start(st: Arc<Shared>, method: axum::http::Method, path: String) -> Self {
        st.metrics.start();
        InFlight { st, route: route_of(&path), method, path, start: Instant::now(), done: false }
    }

    fn finish(mut self, status: u16, tally: &Tally) {
        self.record(status, tally);
    }

    fn record(&mut self, status: u16, tally: &Tally) {
        self.done = true;
        let elapsed = self.start.elapsed();
        self.st.metrics.messages(tally);
        self.st.metrics.finish(self.route, status, elapsed);
        if self.st.log {
            tracing::info!(
                method = %self.method,
                path = %self.path,
                status,
                micros = elapsed.as_micros() as u64,
                messages = tally.messages,
                invalid = tally.invalid,
                "request"
            );
        }
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        if !self.done {
            self.record(CLIENT_CLOSED, &Tally::default());
        }
    }
}

/// The longest request target the service reads.
pub(crate) const MAX_URI: usize = 8 << 10;
/// The most header fields the service reads.
pub(crate) const MAX_HEADERS: usize = 100;
/// The most header bytes (names and values) the service reads.
pub(crate) const MAX_HEADER_BYTES: usize = 16 << 10;

/// A request head over the service's limits, as a JSON error (hyper's own, larger limits answer without a body).
fn head_too_large(req: &Request) -> Option<ApiError> {
    let uri = req.uri().to_string().len();
    if uri > MAX_URI {
        return Some(ApiError::new(
            ErrorCode::UriTooLong,
            format!("the request target is {uri} bytes; the limit is {MAX_URI} (the query takes `stream` only)"),
        ));
    }
    let h = req.headers();
    let bytes: usize = h.iter().map(|(k, v)| k.as_str().len() + v.len()).sum();
    if h.len() > MAX_HEADERS || bytes > MAX_HEADER_BYTES {
        return Some(ApiError::new(
            ErrorCode::HeadersTooLarge,
            format!(
                "{}, {}; the limits are {MAX_HEADERS} fields and {MAX_HEADER_BYTES} bytes",
                crate::engine::counted(h.len() as u64, "header field", "header fields"),
                crate::engine::counted(bytes as u64, "byte", "bytes")
            ),
        ));
    }
    None
}

/// A request without exactly one `Host` field holding a host, as RFC 9112 section 3.2 requires of HTTP/1.1 (a
/// server must answer 400). HTTP/1.0 requests may have none.
fn bad_host(req: &Request) -> Option<ApiError> {
    let mut hosts = req.headers().get_all(header::HOST).iter();
    let problem = match (hosts.next(), hosts.next()) {
        (None, _) if req.version() == axum::http::Version::HTTP_10 => return None,
        (None, _) => "no `Host` field".to_string(),
        (Some(_), Some(_)) => "more than one `Host` field".to_string(),
        (Some(h), None) => {
            if is_host(h.as_bytes()) {
                return None;
            }
            format!("`Host: {}` is not a host", String::from_utf8_lossy(h.as_bytes()))
        }
    };
    Some(ApiError::new(ErrorCode::BadHost, format!("{problem}: an HTTP/1.1 request has exactly one, naming the host")))
}

/// A method neither RFC 9110 (section 9) nor RFC 5789 (`PATCH`) defines: 501, the server does not know it (RFC
/// 9110 section 15.6.2), where a method it knows that the route does not take gets 405. Method names are
/// case-sensitive: `get` is no method it knows.
fn unknown_method(req: &Request) -> Option<ApiError> {
    const KNOWN: [&str; 9] = ["GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH"];
    let m = req.method().as_str();
    (!KNOWN.contains(&m)).then(|| {
        ApiError::new(
            ErrorCode::UnknownMethod,
            format!("`{m}` is no HTTP method this service knows (method names are case-sensitive); it takes GET, HEAD and POST"),
        )
    })
}

async fn overloaded() -> ApiError {
    ApiError::new(ErrorCode::Overloaded, "every connection slot is taken; retry shortly")
}

/// Parses the query of a POST route: only `allowed` names, each at most once (`?stream=true&stream=false` does
/// not say which it means), names and values percent-decoded; returns whether `stream` is on.
fn stream_flag(uri: &Uri, allowed: &[&str]) -> Result<bool, ApiError> {
    let mut stream = false;
    let mut seen: Vec<String> = Vec::new();
    for pair in uri.query().unwrap_or("").split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let undecodable =
            |raw: &str| ApiError::new(ErrorCode::BadQuery, format!("`{raw}` is not percent-encoded UTF-8"));
        let k = percent_decode(k).ok_or_else(|| undecodable(k))?;
        let v = percent_decode(v).ok_or_else(|| undecodable(v))?;
        if seen.contains(&k) {
            return Err(ApiError::new(ErrorCode::BadQuery, format!("query parameter `{k}` given twice")));
        }
        if !allowed.contains(&k.as_str()) {
            let expected = if allowed.is_empty() { "none".to_string() } else { allowed.join(", ") };
            return Err(ApiError::new(
                ErrorCode::BadQuery,
                format!("unknown query parameter `{k}` (expected: {expected})"),
            ));
        }
        stream = match v.to_ascii_lowercase().as_str() {
            "" | "true" | "1" => true,
            "false" | "0" => false,
            _ => {
                return Err(ApiError::new(
                    ErrorCode::BadQuery,
                    format!("`{k}={v}`: expected true or false (also 1 or 0; `{k}` alone is true)"),
                ))
            }
        };
        seen.push(k);
    }
    Ok(stream)
}

/// Reads the body record by record: the whole body as one record for `application/json` (it must be UTF-8),
/// line by line as it arrives for JSONL. The checks stop at the request's deadline (see [`check`]).
async fn records(
    st: &Shared,
    kind: Kind,
    body: Body,
    headers: &HeaderMap,
    mut each: impl FnMut(usize, &[u8]),
) -> Result<(), ApiError> {
    // The middleware's deadline started a moment before: this one ends no earlier (`--timeout-ms` from here).
    let deadline = Instant::now() + st.timeout;
    let heavy = &st.heavy;
    let mut body = Limited::new(body, headers, st.max_body)?;
    match kind {
        Kind::Json => {
            let mut buf = Vec::new();
            while let Some(c) = body.next().await? {
                buf.extend_from_slice(&c);
            }
            if let Err(e) = std::str::from_utf8(&buf) {
                let at = e.valid_up_to() + 1;
                // A UTF-16 body is named as such, as in a JSONL body's first record (helper 103).
                let message = match crate::validate::utf16_hint(&buf) {
                    Some(hint) => format!("the application/json body is not UTF-8 (byte {at}){hint}"),
                    None => format!(
                        "the application/json body is not UTF-8 (byte {at}); send JSONL to get per-line results"
                    ),
                };
                return Err(ApiError::new(ErrorCode::UnreadableBody, message));
            }
            let doc = one_line(&buf);
            check(heavy, doc.len(), deadline, st.timeout, || each(1, doc)).await?;
        }
        Kind::Jsonl => {
            let mut lines = Lines::default();
            while let Some(c) = body.next().await? {
                let bytes = lines.pending() + c.len();
                check(heavy, bytes, deadline, st.timeout, || lines.feed(&c, &mut each)).await?;
            }
            check(heavy, lines.pending(), deadline, st.timeout, || lines.finish(&mut each)).await?;
        }
    }
    Ok(())
}

/// An `application/json` body of one line and its line break (`\n` or `\r\n`) is that line, as `wiregen validate`
/// reads a file of it: with the break, a line cut short was "malformed JSON: ... at line 2 column 0" here and
/// "unexpected end of input at column 10" there (helper 108). Any other body is one document as it is.
fn one_line(body: &[u8]) -> &[u8] {
    match body.strip_suffix(b"\n") {
        Some(line) if !line.contains(&b'\n') => line.strip_suffix(b"\r").unwrap_or(line),
        _ => body,
    }
}

/// Above this many bytes, checking is long enough (~1 ms and more) to be run as blocking work (see [`check`]).
const BLOCKING_BYTES: usize = 256 << 10;

/// Runs `f`, which checks about `bytes` bytes of lines, until `deadline` at the latest: past it, the engine's
/// work is abandoned ([`crate::engine::deadline`]) and the request gets the 408 of `--timeout-ms`. The
/// middleware's own timeout cannot stop `f`, which runs without yielding: a schema that costs milliseconds a
/// value held a core for minutes after its client's 408, and past the shutdown's grace period.
///
/// When `bytes` is much, `f` first waits for one of the `heavy` permits (one per core) and then runs as blocking
/// work (`block_in_place`), so the runtime moves this worker's other tasks (`/healthz`, small requests) to
/// another thread instead of holding them until the check ends, and no more large checks run at once than
/// there are cores (16 concurrent 16 MB lines had kept `/healthz` waiting up to 3 s).
async fn check<R>(
    heavy: &Semaphore,
    bytes: usize,
    deadline: Instant,
    timeout: Duration,
    f: impl FnOnce() -> R,
) -> Result<R, ApiError> {
    let bounded = || crate::engine::deadline::within(deadline, f).map_err(|_| timeout_error(timeout));
    // The usual small chunk costs one comparison; only a large one asks which runtime this is.
    let blocking_allowed = || {
        tokio::runtime::Handle::try_current()
            .is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread)
    };
    if bytes <= BLOCKING_BYTES || !blocking_allowed() {
        return bounded();
    }
    let _permit = heavy.acquire().await;
    tokio::task::block_in_place(bounded)
}

/// Records serialized as they come (compact), up to the answer's size limit, and their tally.
struct Results {
    json: Vec<u8>,
    max: usize,
    truncated: bool,
    tally: Tally,
}

impl Results {
    fn new(max: usize) -> Self {
        Results { json: Vec::new(), max, truncated: false, tally: Tally::default() }
    }

    fn push(&mut self, rec: &Record) {
        self.tally.add(rec.errors.first().map(|e| e.rule));
        if self.truncated {
            return;
        }
        let before = self.json.len();
        if before > 0 {
            self.json.push(b',');
        }
        rec.write_json(&mut self.json);
        if self.json.len() > self.max {
            // Past the limit: this record and every later one are counted, not listed.
            self.json.truncate(before);
            self.json.shrink_to_fit();
            self.truncated = true;
        }
    }
}

/// The record of an `application/json` body as `wiregen validate` words the record of a file holding one
/// document: where a multi-line (pretty-printed) body holds each error's value (`(line 7, column 15 of the
/// document)`; they were left out). And one that holds more than one JSON value (JSONL sent with the wrong type,
/// or with `curl --data`, which joins the lines) is malformed JSON with trailing characters: say what to send
/// instead.
fn ndjson_hint(kind: Kind, bytes: &[u8], mut rec: Record) -> Record {
    // A JSONL body in UTF-16 (PowerShell 5's `Out-File`): its first record says so, as `wiregen validate`'s does.
    if rec.line == 1 {
        if let (Some(e), Some(hint)) = (rec.errors.first_mut(), crate::validate::utf16_hint(bytes)) {
            e.message.push_str(&hint);
        }
    }
    if kind == Kind::Json {
        // A body of one line and its line break is a line, as `wiregen validate` reads a file of it.
        crate::validate::place_in_document(bytes.trim_ascii_end(), &mut rec.errors);
        if let Some(e) = rec.errors.first_mut().filter(|e| e.rule == Rule::MalformedJson.id()) {
            let mut values = serde_json::Deserializer::from_slice(bytes).into_iter::<serde::de::IgnoredAny>();
            if values.next().is_some_and(|v| v.is_ok()) && values.next().is_some_and(|v| v.is_ok()) {
                e.message.push_str(
                    "; several envelopes? send them as `application/x-ndjson`, each compact on a line of its own \
                     (with curl: `--data-binary @file`, as `--data` strips the newlines)",
                );
            }
        }
    }
    rec
}

fn json_response(status: StatusCode, body: Vec<u8>, tally: Tally) -> Response {
    let mut r = (status, [(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))], body).into_response();
    r.extensions_mut().insert(tally);
    r
}

async fn validate(State(st): St, uri: Uri, headers: HeaderMap, body: Body) -> Result<Response, ApiError> {
    let stream = stream_flag(&uri, &["stream"])?;
    let kind = body::kind(&headers)?;
    let mut out = Results::new(st.max_answer);
    if stream {
        let mut checker = StreamChecker::new(&st.engine);
        records(&st, kind, body, &headers, |line, bytes| {
            out.push(&ndjson_hint(kind, bytes, checker.check(line, bytes)));
        })
        .await?;
    } else {
        let engine = &st.engine;
        records(&st, kind, body, &headers, |line, bytes| {
            // The same call as `wiregen validate`: the fast path, explained by the precise engine when invalid.
            out.push(&ndjson_hint(kind, bytes, Record::new(line, engine.check_line_fast(bytes))));
        })
        .await?;
    }
    let mut body = Vec::with_capacity(out.json.len() + 32);
    body.extend_from_slice(if out.tally.invalid == 0 {
        b"{\"valid\":true,\"results\":["
    } else {
        b"{\"valid\":false,\"results\":["
    });
    body.extend_from_slice(&out.json);
    if out.truncated {
        let counts =
            format!("],\"truncated\":true,\"records\":{},\"invalid\":{}}}", out.tally.messages, out.tally.invalid);
        body.extend_from_slice(counts.as_bytes());
    } else {
        body.extend_from_slice(b"]}");
    }
    Ok(json_response(StatusCode::OK, body, out.tally))
}

async fn rollup(State(st): St, uri: Uri, headers: HeaderMap, body: Body) -> Result<Response, ApiError> {
    stream_flag(&uri, &[])?;
    let kind = body::kind(&headers)?;
    // The check's deadline (`records` starts its own a moment later), which building the answer keeps too.
    let deadline = Instant::now() + st.timeout;
    let mut checker = StreamChecker::new(&st.engine);
    let mut tally = Tally::default();
    records(&st, kind, body, &headers, |line, bytes| {
        let rec = checker.check(line, bytes);
        tally.add(rec.errors.first().map(|e| e.rule));
    })
    .await?;
    // The answer lists every open scope: as many as the lines, each costing about a line to write. It is built as
    // a large check is run, under the same deadline (helper 135: 100,000 open calls took ~0.4 s on the server's own
    // thread, past the deadline, and kept `/healthz` waiting up to a second with four such requests at once).
    let head = format!(
        "{{\"valid\":{},\"records\":{},\"invalid\":{},\"rollup\":",
        tally.invalid == 0,
        tally.messages,
        tally.invalid
    );
    let lines = usize::try_from(tally.messages).unwrap_or(usize::MAX);
    let answer = check(&st.heavy, lines.saturating_mul(LINE_BYTES), deadline, st.timeout, || {
        let mut out = head.into_bytes();
        let start = out.len();
        if serde_json::to_writer(&mut out, &checker.rollup()).is_err() {
            out.truncate(start);
            out.extend_from_slice(b"null");
        }
        out.push(b'}');
        (Instant::now() <= deadline).then_some(out)
    })
    .await?;
    let answer = answer.ok_or_else(|| timeout_error(st.timeout))?;
    Ok(json_response(StatusCode::OK, answer, tally))
}

/// About what a session line takes, for telling how long writing the rollup of so many lines may take.
const LINE_BYTES: usize = 256;

async fn schema(State(st): St) -> Result<Response, ApiError> {
    match &st.schema {
        Ok(s) => {
            Ok(([(header::CONTENT_TYPE, HeaderValue::from_static("application/schema+json"))], s.clone())
                .into_response())
        }
        Err(e) => Err(ApiError::new(ErrorCode::NotFound, format!("this schema has no bundled form: {e}"))),
    }
}

async fn event(
    State(st): St,
    t: Result<Path<String>, axum::extract::rejection::PathRejection>,
) -> Result<Response, ApiError> {
    let Path(t) = t.map_err(|e| ApiError::new(ErrorCode::NotFound, format!("bad event path: {e}")))?;
    if let Err(e) = &st.schema {
        return Err(ApiError::new(ErrorCode::NotFound, format!("this schema has no bundled form: {e}")));
    }
    match st.events.get(&t) {
        Some(s) => {
            Ok(([(header::CONTENT_TYPE, HeaderValue::from_static("application/schema+json"))], s.clone())
                .into_response())
        }
        None => {
            let known: Vec<&str> = st.events.keys().map(String::as_str).collect();
            let message = if known.is_empty() {
                // A plain type package (helper 78: "expected one of " and nothing after it).
                format!("`{t}` is not an event: this schema has no events")
            } else {
                format!("`{t}` is not an event; expected one of {}", known.join(", "))
            };
            Err(ApiError::new(ErrorCode::UnknownEvent, message))
        }
    }
}

async fn healthz() -> Response {
    ([(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))], "{\"status\":\"ok\"}").into_response()
}

async fn metrics(State(st): St) -> Response {
    (
        [(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"))],
        st.metrics.render(),
    )
        .into_response()
}

async fn not_found(method: Method, uri: Uri) -> ApiError {
    ApiError::new(ErrorCode::NotFound, format!("no route for {method} {}", target_of(&uri)))
}

/// What the log line, a 404 and a 405 name of a request's target: its path, or the whole target when it has none
/// (`CONNECT host:443`, `OPTIONS *`).
fn target_of(uri: &Uri) -> String {
    if uri.path().is_empty() || uri.path() == "*" {
        uri.to_string()
    } else {
        uri.path().to_string()
    }
}

/// Whether `h` is `uri-host [ ":" port ]` (RFC 9112 section 3.2, RFC 3986 section 3.2.2): a name of unreserved,
/// percent-encoded (`%` and two hex digits) and sub-delims characters, which may be empty, or an IP literal in
/// brackets (an IPv6 address, with a zone `%25...` as RFC 6874 writes one, or `v<hex>.<...>`), then a port of
/// digits.
fn is_host(h: &[u8]) -> bool {
    let Ok(h) = std::str::from_utf8(h) else { return false };
    let unreserved_or_sub = |c: char| c.is_ascii_alphanumeric() || "-._~!$&'()*+,;=".contains(c);
    // The characters `ok` allows and percent-encoded octets.
    let chars = |s: &str, ok: &dyn Fn(char) -> bool| {
        let b = s.as_bytes();
        let mut i = 0;
        while i < b.len() {
            if b[i] == b'%' {
                if !(b.len() > i + 2 && b[i + 1].is_ascii_hexdigit() && b[i + 2].is_ascii_hexdigit()) {
                    return false;
                }
                i += 3;
            } else if ok(b[i] as char) {
                i += 1;
            } else {
                return false;
            }
        }
        true
    };
    let port = match h.strip_prefix('[') {
        Some(rest) => {
            let Some((literal, after)) = rest.split_once(']') else { return false };
            let ip = match literal.strip_prefix(['v', 'V']) {
                Some(future) => future.split_once('.').is_some_and(|(v, x)| {
                    !v.is_empty()
                        && v.bytes().all(|c| c.is_ascii_hexdigit())
                        && !x.is_empty()
                        && x.chars().all(|c| unreserved_or_sub(c) || c == ':')
                }),
                None => match literal.split_once("%25") {
                    Some((address, zone)) => {
                        address.parse::<std::net::Ipv6Addr>().is_ok()
                            && !zone.is_empty()
                            && chars(zone, &|c| c.is_ascii_alphanumeric() || "-._~".contains(c))
                    }
                    None => literal.parse::<std::net::Ipv6Addr>().is_ok(),
                },
            };
            if !ip {
                return false;
            }
            after
        }
        None => {
            let (name, port) = h.find(':').map_or((h, ""), |i| h.split_at(i));
            if !chars(name, &unreserved_or_sub) {
                return false;
            }
            port
        }
    };
    port.is_empty() || port.strip_prefix(':').is_some_and(|p| p.bytes().all(|c| c.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_have_bounded_labels() {
        assert_eq!(route_of("/v1/schema/events/text"), "/v1/schema/events/{t}");
        assert_eq!(route_of("/v1/schema/events/a/b"), "unmatched");
        assert_eq!(route_of("/anything"), "unmatched");
    }

    #[test]
    fn query_flags() {
        let u = |s: &str| s.parse::<Uri>().unwrap();
        assert_eq!(stream_flag(&u("/v1/validate"), &["stream"]), Ok(false));
        assert_eq!(stream_flag(&u("/v1/validate?stream=true"), &["stream"]), Ok(true));
        assert_eq!(stream_flag(&u("/v1/validate?stream"), &["stream"]), Ok(true));
        assert_eq!(stream_flag(&u("/v1/validate?stream=0"), &["stream"]), Ok(false));
        assert_eq!(stream_flag(&u("/v1/validate?stream=maybe"), &["stream"]).unwrap_err().code, ErrorCode::BadQuery);
        // Percent-encoded names and values mean what they decode to; a broken escape is a bad query.
        assert_eq!(stream_flag(&u("/v1/validate?str%65am=%74rue"), &["stream"]), Ok(true));
        assert_eq!(stream_flag(&u("/v1/validate?stream=FALSE"), &["stream"]), Ok(false));
        assert_eq!(stream_flag(&u("/v1/validate?stream=TRUE"), &["stream"]), Ok(true));
        for broken in ["stream=%7", "stream=%zz", "stream=%ff", "str%+5am=1"] {
            let e = stream_flag(&u(&format!("/v1/validate?{broken}")), &["stream"]).unwrap_err();
            assert_eq!(e.code, ErrorCode::BadQuery, "{broken}");
        }
        let twice = stream_flag(&u("/v1/validate?stream=1&%73tream=0"), &["stream"]).unwrap_err();
        assert!(twice.message.contains("given twice"), "{}", twice.message);
        assert_eq!(stream_flag(&u("/v1/validate?steam=1"), &["stream"]).unwrap_err().code, ErrorCode::BadQuery);
        let twice = stream_flag(&u("/v1/validate?stream=true&stream=false"), &["stream"]).unwrap_err();
        assert_eq!((twice.code, twice.message.as_str()), (ErrorCode::BadQuery, "query parameter `stream` given twice"));
        assert_eq!(stream_flag(&u("/v1/validate?stream&stream"), &["stream"]).unwrap_err().code, ErrorCode::BadQuery);
    }
}

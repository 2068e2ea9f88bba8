//! The `wiregen` command line: a thin clap wrapper over the library.

use std::io::{BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use wiregen::diag::{printable, shown_pointer};
use wiregen::emit::Output;
use wiregen::engine::{counted, Engine, EngineOptions};
use wiregen::stream::StreamSummary;
use wiregen::validate::{validate_reader_into, Piece, Record, Summary, Threads};

/// A line on stdout that cannot panic: `println!` panics when stdout cannot be written (a closed pipe, a full
/// disk). The first failure is kept and [`main`] reports it.
macro_rules! outln {
    ($($t:tt)*) => {
        stdout_line(format_args!($($t)*))
    };
}

/// A line on stderr that cannot panic: one that cannot be written (a closed pipe, a full disk) is dropped, since
/// there is nowhere left to say so; the exit status still tells.
macro_rules! errln {
    ($($t:tt)*) => {{
        let _ = writeln!(std::io::stderr(), $($t)*);
    }};
}

/// The first error writing stdout through [`outln!`].
static STDOUT_FAILED: std::sync::Mutex<Option<std::io::Error>> = std::sync::Mutex::new(None);

fn stdout_line(args: std::fmt::Arguments<'_>) {
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_fmt(args).and_then(|()| out.write_all(b"\n")).and_then(|()| out.flush()) {
        if let Ok(mut first) = STDOUT_FAILED.lock() {
            first.get_or_insert(e);
        }
    }
}

/// Schema-first codegen and validation for the agent session protocol.
///
/// JSON Schema files in `schema/` are the single source of truth; wiregen generates Rust,
/// TypeScript/Zod, a bundled standard schema and a markdown reference from them, and validates
/// messages and streams.
///
/// Examples:
///   wiregen generate                           regenerate everything in generated/
///   wiregen generate --only docs               regenerate only generated/docs/
///   wiregen check                              exit 1 and name the fix if generated/ is stale
///   wiregen validate session.jsonl             check every line of a session log
///   wiregen validate --stream session.jsonl    also check the stream's sequence rules
///   wiregen diff main:schema schema            who the schema changes since main break
///   wiregen help generate                      more about one command
#[derive(Parser)]
// clap's own `help` subcommand takes only subcommand names: `wiregen help --help` was a usage error.
#[command(name = "wiregen", version, verbatim_doc_comment, disable_help_subcommand = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    Text,
    Json,
}

#[derive(Subcommand)]
enum Command {
    /// Regenerate the outputs from the schema, writing only files that changed.
    ///
    /// Each output owns one subdirectory of --out (schema/, rust/, ts/, docs/) and a manifest of
    /// the files it wrote; files it no longer produces are deleted. Nothing is written when the
    /// schema is broken. Exit status: 0 done, 2 broken schema or I/O error.
    ///
    /// Examples:
    ///   wiregen generate                            everything, into generated/
    ///   wiregen generate --only rust,ts             the Rust crate and the TypeScript package
    ///   wiregen generate --only docs --out /tmp/g   the markdown reference, into /tmp/g/docs/
    ///   wiregen generate --format json              diagnostics and the report as JSON
    #[command(verbatim_doc_comment)]
    Generate(GenArgs),
    /// Regenerate in memory and exit 1 if any generated file is stale, missing or extra.
    ///
    /// Names each file that differs (with a short diff) and the command that fixes them.
    /// Exit status: 0 up to date, 1 out of date, 2 broken schema, usage or I/O error.
    ///
    /// Examples:
    ///   wiregen check                  every output in generated/
    ///   wiregen check --only docs      only generated/docs/
    ///   wiregen check --format json    one JSON object: what is stale and the fix command
    #[command(verbatim_doc_comment)]
    Check(GenArgs),
    /// Validate envelopes: a file with one JSON envelope, JSONL (one per line), or `-` for stdin.
    ///
    /// Exit status: 0 all valid, 1 something invalid, 2 broken schema, usage or I/O error.
    /// Examples:
    ///   wiregen validate --format json session.jsonl   one JSON record per input line
    ///   wiregen validate --stream --summary a.jsonl    ordering rules too, and the session rollup
    #[command(verbatim_doc_comment)]
    Validate(ValidateArgs),
    /// Print the generated module of one schema file (or directory) in one language.
    ///
    /// The root type of a single file is `Root`: in Rust a type `Root` that `serde_json::from_str`
    /// decodes only when valid; in Zod an ES module exporting `rootSchema` and the type `Root`; in
    /// standalone TypeScript an ES module exporting `validateRoot(value)`, which returns the error list.
    /// Exit status: 0 printed, 2 a schema wiregen refuses (located) or an I/O error.
    /// Examples:
    ///   wiregen types --lang zod person.schema.json           the Zod module on stdout
    ///   wiregen types --lang rust person.schema.json > person.rs
    #[command(verbatim_doc_comment)]
    Types(TypesArgs),
    /// Compare two versions of a schema and say who each change breaks.
    ///
    /// OLD and NEW are schema directories, schema files, or REV:PATH read from git (the path as
    /// `git show` reads it, from the repository root). Both are loaded into the model and compared:
    /// events by tag (or declared rename), fields, required-ness, enums, bounds, openness,
    /// nullability, role rules and x-removed entries. Each change has a rule id, its place in OLD and
    /// NEW, and who it breaks: old producers (NEW rejects what they send), old consumers (they reject
    /// what NEW allows) and stored history (OLD messages NEW cannot read, even after declared renames).
    ///
    /// Policies (schema-registry meanings): backward = NEW reads everything OLD wrote (nothing may
    /// break old producers or stored history); forward = OLD reads everything NEW writes (nothing may
    /// break old consumers); full = both; none = report only.
    /// Exit status: 0 nothing fails the policy, 1 a change fails it, 2 a side cannot be read or
    /// loaded (its schema diagnostics are printed as `generate` prints them).
    ///
    /// Examples:
    ///   wiregen diff main:schema schema                          what this branch changes
    ///   wiregen diff --policy full --format markdown main:schema schema > CHANGES.md
    ///   wiregen diff --policy none examples/happy-wire/schema/sessionProtocol.schema.json schema
    #[command(verbatim_doc_comment)]
    Diff(DiffArgs),
    /// Rewrite a JSONL stream of OLD messages as NEW messages.
    ///
    /// Each line is checked against OLD, upgraded with NEW's declared renames and moves
    /// (`x-renamed-from`, `x-moved-from`: the same steps as the generated `upgrade` functions,
    /// except that a move into a property OLD's event already has is not taken: it was declared for
    /// an older version), and checked against NEW. Nothing is invented: a value NEW requires that the upgrade cannot carry is
    /// reported (`field-moved`) and its line refused. A property NEW does not have refuses the line,
    /// or with `--on-loss drop` is dropped with a warning. With `--stream`, a line that breaks one of
    /// NEW's sequence rules among the lines written before it is refused too. Refused lines are not
    /// written, so the output passes `wiregen validate` (with `--stream`: `validate --stream`). Every warning and refusal names the line, rule id and JSON Pointer
    /// (on stderr; `--format json` prints one JSON report there instead).
    /// Exit status: 0 every line written, 1 some line refused, 2 a side cannot be loaded or I/O failed.
    ///
    /// Examples:
    ///   wiregen migrate --from examples/happy-wire/schema --to schema v1.jsonl > v2.jsonl
    ///   wiregen migrate --from main:schema --to schema --on-loss drop --out v2.jsonl v1.jsonl
    #[command(verbatim_doc_comment)]
    Migrate(MigrateArgs),
    /// Run the validation service: HTTP endpoints that validate envelopes and JSONL streams.
    ///
    /// Prints `listening on http://ADDR` on stdout, logs one line per request on stderr, and
    /// finishes in-flight requests on SIGTERM/SIGINT (a second one exits at once). Exit status:
    /// 0 after shutdown, 130 after a second signal, 2 if it cannot start.
    /// Example: wiregen serve --listen 0.0.0.0:8080 --max-body 1048576
    #[command(verbatim_doc_comment)]
    #[cfg(feature = "serve")]
    Serve(ServeArgs),
    /// Print this message or the help of the given subcommand(s)
    Help {
        /// The subcommand (and its subcommands) whose help to print
        #[arg(value_name = "COMMAND")]
        command: Vec<String>,
    },
}

#[derive(clap::Args)]
struct GenArgs {
    /// The schema directory, or one schema file.
    #[arg(long, default_value = "schema")]
    schema: PathBuf,
    /// The output root; each output writes its own subdirectory.
    #[arg(long, default_value = "generated")]
    out: PathBuf,
    /// Only these outputs (comma-separated): schema, rust, ts, docs.
    #[arg(long, value_delimiter = ',', value_parser = parse_output)]
    only: Vec<Output>,
    /// Diagnostic format.
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
}

#[derive(clap::Args)]
struct ValidateArgs {
    /// The schema directory, or one schema file; default: the session protocol compiled into this binary.
    #[arg(long)]
    schema: Option<PathBuf>,
    /// The type to check each record against: its name in the schema, in an output (`SessionTextEvent`,
    /// `sessionTextEventSchema`) or in the bundled schema's `$defs` (`TextEvent`); default: the schema's root type.
    /// Not with --stream, whose records are the protocol's envelopes.
    #[arg(long = "type", value_name = "NAME", conflicts_with = "stream")]
    type_name: Option<String>,
    /// Also check that ids are cuid2-shaped.
    #[arg(long)]
    strict_ids: bool,
    /// Output format: text (`path:line: pointer: message [rule]`) or json (one record per line).
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
    /// Check each file as one session stream (JSONL): the protocol's sequence rules, line by line.
    #[arg(long)]
    stream: bool,
    /// With --stream: print one JSON summary per file (counts, first error, session rollup) instead of the
    /// records: pretty-printed, or one line each with --format json.
    #[arg(long, requires = "stream")]
    summary: bool,
    /// Files to check (a directory: every *.jsonl below it); `-` or nothing reads stdin. Several are checked side
    /// by side, their output in argument order.
    paths: Vec<PathBuf>,
}

/// The flags of `wiregen serve`; they convert into the library's [`wiregen::serve::ServeOptions`].
#[cfg(feature = "serve")]
#[derive(Debug, Clone, clap::Args)]
struct ServeArgs {
    /// Address to listen on; port 0 picks a free port. The bound address is printed on stdout.
    #[arg(long, default_value = "127.0.0.1:8080")]
    listen: String,
    /// The schema directory or one schema file, loaded once at start-up; default: the session protocol compiled
    /// into this binary.
    #[arg(long)]
    schema: Option<PathBuf>,
    /// Largest request body in bytes (413 `body-too-large` above it).
    #[arg(long, default_value_t = 16 * 1024 * 1024, value_name = "BYTES")]
    max_body: u64,
    /// Largest `/v1/validate` answer in bytes; records past it are counted, not listed (`"truncated": true`).
    #[arg(long, default_value_t = 32 * 1024 * 1024, value_name = "BYTES")]
    max_answer: u64,
    /// Also check that ids are cuid2-shaped.
    #[arg(long)]
    strict_ids: bool,
    /// Deadline for a whole request, body included (408 `timeout` after it); also how long a client may read
    /// nothing of its answer before its connection is dropped.
    #[arg(long, default_value_t = 30_000, value_name = "MS", value_parser = clap::value_parser!(u64).range(1..))]
    timeout_ms: u64,
    /// Requests processed at once; more get 503 `overloaded` (health and metrics are exempt).
    #[arg(long, default_value_t = 256, value_name = "N", value_parser = at_least_one())]
    max_concurrency: usize,
    /// Open connections at once; more wait in the listen backlog (but for 64 more that answer only
    /// `/healthz`).
    #[arg(long, default_value_t = 1024, value_name = "N", value_parser = at_least_one())]
    max_connections: usize,
    /// Deadline for a request's headers to arrive (and for an idle keep-alive connection's next request).
    #[arg(long, default_value_t = 10_000, value_name = "MS", value_parser = clap::value_parser!(u64).range(1..))]
    header_timeout_ms: u64,
    /// On SIGTERM/SIGINT, how long in-flight requests may take to finish before the process exits anyway
    /// (a second signal exits at once).
    #[arg(long, default_value_t = 30_000, value_name = "MS")]
    shutdown_grace_ms: u64,
    /// Do not log one line per request (warnings and errors still go to stderr).
    #[arg(long)]
    quiet: bool,
}

#[cfg(feature = "serve")]
impl From<ServeArgs> for wiregen::serve::ServeOptions {
    fn from(a: ServeArgs) -> Self {
        wiregen::serve::ServeOptions {
            listen: a.listen,
            schema: a.schema,
            max_body: a.max_body,
            max_answer: a.max_answer,
            strict_ids: a.strict_ids,
            timeout_ms: a.timeout_ms,
            max_concurrency: a.max_concurrency,
            max_connections: a.max_connections,
            header_timeout_ms: a.header_timeout_ms,
            shutdown_grace_ms: a.shutdown_grace_ms,
            quiet: a.quiet,
        }
    }
}

/// The service's log on stderr, written by a thread of its own: a request hands its line over and goes on. A log
/// whose reader stalls (a full pipe) blocked every worker writing to it, so nothing was answered, `/healthz`
/// neither, and SIGTERM waited for the reader; now lines past [`Log::WAITING`] waiting are dropped.
#[cfg(feature = "serve")]
#[derive(Clone)]
struct Log {
    tx: std::sync::mpsc::SyncSender<Vec<u8>>,
    /// Lines handed over and not written yet.
    pending: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

#[cfg(feature = "serve")]
impl Log {
    /// Lines that may wait for stderr.
    const WAITING: usize = 1024;

    fn start() -> Log {
        use std::sync::atomic::Ordering;
        let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<u8>>(Self::WAITING);
        let pending = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let left = pending.clone();
        std::thread::spawn(move || {
            for line in rx {
                let _ = std::io::stderr().write_all(&line);
                left.fetch_sub(1, Ordering::Release);
            }
        });
        Log { tx, pending }
    }

    /// Waits (at most `within`) for the lines handed over to be written, so the last ones are not lost at exit.
    fn drain(&self, within: std::time::Duration) {
        let until = std::time::Instant::now() + within;
        while self.pending.load(std::sync::atomic::Ordering::Acquire) > 0 && std::time::Instant::now() < until {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }
}

/// One log line being formatted; handed to the log's thread when it is done (dropped when too many wait).
#[cfg(feature = "serve")]
struct LogLine<'a> {
    log: &'a Log,
    buf: Vec<u8>,
}

#[cfg(feature = "serve")]
impl Write for LogLine<'_> {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.buf.extend_from_slice(b);
        Ok(b.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(feature = "serve")]
impl Drop for LogLine<'_> {
    fn drop(&mut self) {
        if self.buf.is_empty() {
            return;
        }
        let pending = &self.log.pending;
        pending.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        if self.log.tx.try_send(std::mem::take(&mut self.buf)).is_err() {
            pending.fetch_sub(1, std::sync::atomic::Ordering::AcqRel);
        }
    }
}

#[cfg(feature = "serve")]
impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Log {
    type Writer = LogLine<'a>;

    fn make_writer(&'a self) -> LogLine<'a> {
        LogLine { log: self, buf: Vec::new() }
    }
}

/// A count of at least one (`--max-concurrency 0` would serve nothing) and at most what a tokio semaphore holds
/// (more made the service panic at start-up).
#[cfg(feature = "serve")]
fn at_least_one() -> clap::builder::RangedU64ValueParser<usize> {
    clap::builder::RangedU64ValueParser::<usize>::new().range(1..=tokio::sync::Semaphore::MAX_PERMITS as u64)
}

/// `wiregen serve`: the binary, not the library, installs the log subscriber (one line per request on stderr,
/// colours only on a terminal) and prints the bound address as the first line on stdout.
#[cfg(feature = "serve")]
fn serve(a: ServeArgs) -> ExitCode {
    let level = if a.quiet { tracing::Level::WARN } else { tracing::Level::INFO };
    let log = Log::start();
    let _ = tracing_subscriber::fmt()
        .with_writer(log.clone())
        .with_max_level(level)
        .with_target(false)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        // A log line that cannot be written (the log's reader went away, a full disk) is dropped: by default the
        // subscriber reports that with `eprintln!`, which panics on the same stderr and took the request with it.
        .log_internal_errors(false)
        .try_init();
    let announce = |addr| {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "listening on http://{addr}");
        let _ = out.flush();
    };
    let schema = a.schema.clone();
    let ran = wiregen::serve::run(&a.into(), announce);
    log.drain(std::time::Duration::from_secs(2));
    match ran {
        Ok(()) => ExitCode::SUCCESS,
        Err(wiregen::serve::ServeError::Schema(errs)) => {
            errln!(
                // The diagnostics as every command prints them, one `file:line:col:` a line (only the first had
                // the command's name before it; helper 82).
                "{errs}\nwiregen serve: the schema has {}",
                errs.count("error")
            );
            if let Some(schema) = &schema {
                name_the_schema(&errs, Format::Text, schema);
            }
            ExitCode::from(2)
        }
        Err(e) => {
            errln!("wiregen serve: {}", chain(&e));
            ExitCode::from(2)
        }
    }
}

#[derive(clap::Args)]
struct TypesArgs {
    /// The language: rust, zod or ts-standalone.
    #[arg(long, value_parser = parse_lang)]
    lang: wiregen::emit::Lang,
    /// Diagnostic format.
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
    /// The schema file (or directory).
    schema: PathBuf,
}

#[derive(clap::Args)]
struct DiffArgs {
    /// The policy whose breaks make the exit status 1: backward, forward, full or none.
    #[arg(long, default_value = "backward", value_parser = parse_policy)]
    policy: wiregen::diff::Policy,
    /// Output format: text, json (one document) or markdown (a changelog table for a pull request).
    #[arg(long, value_enum, default_value = "text")]
    format: DiffFormat,
    /// The old version: a schema directory, a schema file or REV:PATH.
    old: String,
    /// The new version: a schema directory, a schema file or REV:PATH.
    new: String,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum DiffFormat {
    Text,
    Json,
    Markdown,
}

fn parse_policy(s: &str) -> Result<wiregen::diff::Policy, String> {
    wiregen::diff::Policy::from_id(s)
        .ok_or_else(|| format!("unknown policy `{s}` (expected backward, forward, full or none)"))
}

fn diff(a: DiffArgs) -> ExitCode {
    use wiregen::diff::{DiffError, Format as F, Side};
    let schema_format = if a.format == DiffFormat::Json { Format::Json } else { Format::Text };
    let load = |spec: &str| match Side::load(spec) {
        Ok(s) => Ok(s),
        Err(DiffError::Schema { spec, errors }) => {
            let closing = format!("wiregen diff: `{spec}` has {}", errors.count("schema error"));
            report_schema_errors(&errors, schema_format, Some(closing));
            Err(())
        }
        Err(e) => {
            match schema_format {
                Format::Json => outln!("{}", json_error(&chain(&e))),
                Format::Text => errln!("wiregen diff: {}", chain(&e)),
            }
            Err(())
        }
    };
    let (Ok(old), Ok(new)) = (load(&a.old), load(&a.new)) else { return ExitCode::from(2) };
    let report = wiregen::diff::diff(&old, &new);
    let format = match a.format {
        DiffFormat::Text => F::Text,
        DiffFormat::Json => F::Json,
        DiffFormat::Markdown => F::Markdown,
    };
    let text = match wiregen::diff::render(&report, format, a.policy) {
        Ok(t) => t,
        Err(e) => {
            errln!("wiregen diff: {}", chain(&e));
            return ExitCode::from(2);
        }
    };
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        return output_failed(&e, report.violates(a.policy));
    }
    ExitCode::from(if report.violates(a.policy) { 1 } else { 0 })
}

#[derive(clap::Args)]
struct MigrateArgs {
    /// The old version: a schema directory, a schema file or REV:PATH.
    #[arg(long)]
    from: String,
    /// The new version: a schema directory, a schema file or REV:PATH.
    #[arg(long)]
    to: String,
    /// What to do with a property NEW does not have: refuse the line, or drop the property with a warning.
    #[arg(long, value_enum, default_value = "refuse")]
    on_loss: OnLossArg,
    /// Report format on stderr: text (one line per note and a summary) or json (one document).
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
    /// The input is one session: also refuse a line that breaks one of NEW's sequence rules (its
    /// `x-sequence`) among the lines written before it, so the output passes `wiregen validate --stream`.
    #[arg(long)]
    stream: bool,
    /// Write the migrated stream here instead of stdout (replaced once the whole input is migrated, so it may be
    /// FILE itself; `-` is stdout).
    #[arg(long)]
    out: Option<PathBuf>,
    /// The JSONL file to migrate (`-` for stdin).
    #[arg(default_value = "-")]
    file: PathBuf,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum OnLossArg {
    Refuse,
    Drop,
}

fn migrate(a: MigrateArgs) -> ExitCode {
    use wiregen::diff::{DiffError, Side};
    use wiregen::migrate::{migrate_file, migrate_reader, FileError, OnLoss, Outcome};
    // What stops the run, on stderr (stdout is the migrated stream's): with `--format json` as JSON objects only.
    let fail = |message: String| match a.format {
        Format::Json => errln!("{}", json_error(&message)),
        Format::Text => errln!("wiregen migrate: {message}"),
    };
    let load = |spec: &str| match Side::load(spec) {
        Ok(s) => Some(s),
        Err(DiffError::Schema { spec, errors }) => {
            report_schema_errors_on(&errors, a.format, &mut std::io::stderr());
            if a.format == Format::Text {
                fail(format!("`{spec}` has {}", errors.count("schema error")));
            }
            None
        }
        Err(e) => {
            fail(chain(&e));
            None
        }
    };
    let (Some(old), Some(new)) = (load(&a.from), load(&a.to)) else { return ExitCode::from(2) };
    if old.model.protocol.is_none() || new.model.protocol.is_none() {
        fail("both sides must be session protocols (an envelope with events)".to_string());
        return ExitCode::from(2);
    }
    let shown = shown_path(&a.file);
    // Written where it is read (`wiregen migrate ... v1.jsonl >> v1.jsonl`), the run would read what it writes,
    // without end. (`--out FILE` is staged: the input is read whole before FILE is replaced.)
    let output = match a.out.as_ref().filter(|p| p.as_os_str() != "-") {
        None => wiregen::validate::output_file(),
        Some(p) if wiregen::migrate::names_a_descriptor(p) => wiregen::validate::file_of(p),
        Some(_) => None,
    };
    if output.is_some() && output == wiregen::validate::file_of(&a.file) {
        let named = a.file.as_os_str() != "-" && !wiregen::migrate::names_a_descriptor(&a.file);
        let in_place = if !named { String::new() } else { format!(", or give --out {shown} to migrate it in place") };
        fail(format!("{shown} is this run's output: it would read what it writes, without end; write the output elsewhere{in_place}"));
        return ExitCode::from(2);
    }
    let input: Box<dyn std::io::BufRead> = if a.file.as_os_str() == "-" {
        Box::new(BufReader::new(std::io::stdin()))
    } else {
        match std::fs::File::open(&a.file) {
            Ok(f) => Box::new(BufReader::new(f)),
            Err(e) => {
                fail(format!("{shown}: {e}"));
                return ExitCode::from(2);
            }
        }
    };
    let on_loss = if a.on_loss == OnLossArg::Drop { OnLoss::Drop } else { OnLoss::Refuse };
    let migrated = match a.out.as_ref().filter(|p| p.as_os_str() != "-") {
        // Staged and renamed at the end: `--out` may be the input file, and a failure leaves it as it was.
        Some(p) => migrate_file(&old.model, &new.model, input, p, on_loss, a.stream),
        None => {
            let out = std::io::BufWriter::new(std::io::stdout().lock());
            migrate_reader(&old.model, &new.model, input, out, on_loss, a.stream)
        }
    };
    let s = match migrated {
        Ok(s) => s,
        Err(FileError::Input(e)) => {
            fail(format!("{shown}: {e}"));
            return ExitCode::from(2);
        }
        Err(e) => {
            fail(e.to_string());
            return ExitCode::from(2);
        }
    };
    match a.format {
        Format::Json => {
            let doc = serde_json::json!({"file": json_path(&a.file), "from": a.from, "to": a.to, "summary": s});
            errln!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
        }
        Format::Text => {
            for n in &s.notes {
                let what = if n.outcome == Outcome::Refused { "refused" } else { "warning: dropped" };
                let at = shown_pointer(&n.pointer);
                errln!("{shown}:{}: {what}: {at} [{}] ({}): {}", n.line, n.rule, n.side, printable(&n.message));
            }
            errln!(
                "wiregen migrate: {}: {} written ({} with values dropped), {} refused",
                counted(s.lines as u64, "line", "lines"),
                s.written,
                s.with_loss,
                s.refused
            );
        }
    }
    ExitCode::from(if s.refused > 0 { 1 } else { 0 })
}

fn parse_lang(s: &str) -> Result<wiregen::emit::Lang, String> {
    wiregen::emit::Lang::from_name(s)
        .ok_or_else(|| format!("unknown language `{s}` (expected rust, zod or ts-standalone)"))
}

fn types(a: TypesArgs) -> ExitCode {
    let (model, sources) = match wiregen::load::load_with_sources(&a.schema) {
        Ok(m) => m,
        Err(errs) => {
            report_schema_errors(
                &errs,
                a.format,
                Some(format!("wiregen types: the schema has {}", errs.count("error"))),
            );
            return ExitCode::from(2);
        }
    };
    match a.lang.module(&model) {
        Ok(text) => {
            let mut out = std::io::stdout().lock();
            match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => output_failed(&e, false),
            }
        }
        Err(e) => {
            let located = e.located(&sources);
            match (located.is_empty(), a.format) {
                (false, format) => report_schema_errors(&wiregen::diag::SchemaErrors(located), format, None),
                (true, Format::Json) => {
                    let code = wiregen::diag::SchemaErrorKind::Unexpressible.code();
                    outln!("{}", serde_json::json!({"code": code, "message": e.to_string()}))
                }
                (true, Format::Text) => errln!("wiregen: {e}"),
            }
            ExitCode::from(2)
        }
    }
}

fn parse_output(s: &str) -> Result<Output, String> {
    Output::from_name(s).ok_or_else(|| format!("unknown output `{s}` (expected schema, rust, ts or docs)"))
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let status = match cli.command {
        Command::Generate(a) => generate(a, false),
        Command::Check(a) => generate(a, true),
        Command::Validate(a) => validate(a),
        Command::Types(a) => types(a),
        Command::Diff(a) => diff(a),
        Command::Migrate(a) => migrate(a),
        #[cfg(feature = "serve")]
        Command::Serve(a) => serve(a),
        Command::Help { command } => help(&command),
    };
    // What `outln!` could not write.
    match STDOUT_FAILED.lock().ok().and_then(|mut e| e.take()) {
        Some(e) => lost_output(&e, status),
        None => status,
    }
}

/// `wiregen help [COMMAND...]`: the long help of the root or of the named subcommand, as `--help` prints it.
fn help(path: &[String]) -> ExitCode {
    let mut cmd = <Cli as clap::CommandFactory>::command();
    cmd.build();
    let mut target = &mut cmd;
    for name in path {
        let known = target.get_subcommands().any(|c| c.get_name() == name);
        if !known {
            let e =
                target.error(clap::error::ErrorKind::InvalidSubcommand, format!("unrecognized subcommand '{name}'"));
            let _ = e.print();
            return ExitCode::from(2);
        }
        target = target.find_subcommand_mut(name).expect("just found");
    }
    match target.print_long_help() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => output_failed(&e, false),
    }
}

/// An error and its causes on one line, `: `-separated (what anyhow's `{:#}` prints): each level's `Display`
/// says what failed there and leaves its cause to `source()`, so nothing repeats.
fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        s.push_str(": ");
        s.push_str(&c.to_string());
        cause = c.source();
    }
    s
}

/// The model's type names (base names, sorted), for a message that asks for one: at most 40, then how many more.
fn type_names(model: &wiregen::ir::Model) -> String {
    // Aliases too: `--type` takes them (`Model::type_named`).
    let mut names: Vec<&str> =
        model.types.iter().flat_map(|t| std::iter::once(&t.names).chain(&t.aliases)).map(|n| n.base.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    let shown: Vec<String> = names.iter().take(40).map(|n| format!("`{n}`")).collect();
    match names.len().saturating_sub(40) {
        0 => shown.join(", "),
        more => format!("{}, and {more} more", shown.join(", ")),
    }
}

/// For the commands with `--schema`: when the schema path itself could not be read (no such path, not a directory,
/// no `.json` file in it; not a file inside it), which flag names another.
fn name_the_schema(errs: &wiregen::diag::SchemaErrors, format: Format, schema: &Path) {
    let whole = |e: &wiregen::diag::SchemaError| e.kind == wiregen::diag::SchemaErrorKind::Io && e.file == schema;
    // A directory that is there but cannot be read is the right flag (`Permission denied` says what is wrong).
    let unreadable_dir = schema.is_dir() && std::fs::read_dir(schema).is_err();
    if format == Format::Text && !unreadable_dir && errs.0.iter().any(whole) {
        errln!("wiregen: --schema takes the schema directory, or one schema file");
    }
}

/// Schema diagnostics as `--format` asks: JSON objects on stdout (one per line), or text on stderr.
/// The schema's errors ([`report_schema_errors_on`] stdout), and in text the command's closing line that counts
/// them (`closing`, `wiregen types: the schema has 2 errors`): one place for what every command prints then.
fn report_schema_errors(errs: &wiregen::diag::SchemaErrors, format: Format, closing: Option<String>) {
    report_schema_errors_on(errs, format, &mut std::io::stdout());
    if let (Format::Text, Some(line)) = (format, closing) {
        errln!("{line}");
    }
}

/// [`report_schema_errors`] with the JSON diagnostics written to `json` (text goes to stderr either way).
fn report_schema_errors_on(errs: &wiregen::diag::SchemaErrors, format: Format, json: &mut dyn Write) {
    match format {
        Format::Json => {
            for d in &errs.0 {
                let _ = writeln!(json, "{}", d.to_json());
            }
        }
        Format::Text => errln!("{errs}"),
    }
}

fn options(a: &GenArgs) -> wiregen::Options {
    let mut o = wiregen::Options::new(&a.schema, &a.out);
    if !a.only.is_empty() {
        o.outputs = a.only.clone();
    }
    o.emit.regenerate = regenerate_command(a);
    o
}

/// Reports what stopped `generate` (`writes`) or `check`: `generate` adds that it wrote nothing (it changes
/// nothing when it fails), `check` writes nothing anyway.
fn report_error(e: &wiregen::Error, format: Format, schema: &Path, writes: bool) {
    let nothing = if writes { "; nothing was written" } else { "" };
    match (e, format) {
        (wiregen::Error::Schema(errs), _) => {
            report_schema_errors(
                errs,
                format,
                Some(format!("wiregen: the schema has {}{nothing}", errs.count("error"))),
            );
            name_the_schema(errs, format, schema);
        }
        (e, Format::Json) => outln!("{}", json_error(&chain(e))),
        (e @ wiregen::Error::NotRestored { .. }, Format::Text) => errln!("wiregen: {}", chain(e)),
        (e, Format::Text) => errln!("wiregen: {}{nothing}", chain(e)),
    }
}

fn generate(a: GenArgs, check_only: bool) -> ExitCode {
    let opts = options(&a);
    if check_only {
        match wiregen::check(&opts) {
            Err(e) => {
                report_error(&e, a.format, &a.schema, false);
                ExitCode::from(2)
            }
            Ok(r) if r.is_clean() => {
                if a.format == Format::Json {
                    outln!("{}", serde_json::json!({"clean": true, "fresh": r.fresh}));
                } else {
                    errln!(
                        "wiregen check: {} up to date",
                        counted(r.fresh as u64, "generated file is", "generated files are")
                    );
                }
                ExitCode::SUCCESS
            }
            Ok(r) => {
                let fix = fix_command(&a, &opts);
                if a.format == Format::Json {
                    let show = |v: &[PathBuf]| v.iter().map(|p| p.display().to_string()).collect::<Vec<_>>();
                    let changed: Vec<String> = r.changed.iter().map(|(p, _)| p.display().to_string()).collect();
                    outln!(
                        "{}",
                        serde_json::json!({"clean": false, "missing": show(&r.missing), "changed": changed, "extra": show(&r.extra), "fix": fix})
                    );
                } else {
                    for p in &r.missing {
                        errln!("missing: {}", printable(&p.display().to_string()));
                    }
                    for (p, d) in &r.changed {
                        errln!("stale:   {}\n{d}", printable(&p.display().to_string()));
                    }
                    for p in &r.extra {
                        errln!("extra:   {}", printable(&p.display().to_string()));
                    }
                    errln!(
                        "wiregen check: {} out of date; run `{fix}` to fix",
                        counted((r.missing.len() + r.changed.len() + r.extra.len()) as u64, "file", "files")
                    );
                }
                ExitCode::from(1)
            }
        }
    } else {
        match wiregen::generate(&opts) {
            Err(e) => {
                report_error(&e, a.format, &a.schema, true);
                ExitCode::from(2)
            }
            Ok(r) => {
                if a.format == Format::Json {
                    let show = |v: &[PathBuf]| v.iter().map(|p| p.display().to_string()).collect::<Vec<_>>();
                    outln!(
                        "{}",
                        serde_json::json!({"written": show(&r.written), "unchanged": r.unchanged.len(), "deleted": show(&r.deleted)})
                    );
                    return ExitCode::SUCCESS;
                }
                errln!(
                    "wiregen generate: {} written, {} unchanged, {} deleted",
                    r.written.len(),
                    r.unchanged.len(),
                    r.deleted.len()
                );
                for p in &r.written {
                    errln!("  wrote {}", p.display());
                }
                for p in &r.deleted {
                    errln!("  deleted {}", p.display());
                }
                ExitCode::SUCCESS
            }
        }
    }
}

/// The command that regenerates every output of `a`, named in the files' `@generated` headers: the directories
/// are named when they are not the defaults, relative to where `a` was run (so run it from there). One directory
/// spelt two ways (`./schema/`, `schema`, or its absolute path) gives one command, so `check` does not find every
/// file stale because it was spelt differently from `generate`.
fn regenerate_command(a: &GenArgs) -> String {
    let mut s = String::from(wiregen::emit::REGENERATE);
    let (schema, out) = (as_named(&a.schema), as_named(&a.out));
    if schema != std::path::Path::new("schema") {
        s.push_str(&flag("--schema", &schema));
    }
    if out != std::path::Path::new("generated") {
        s.push_str(&flag("--out", &out));
    }
    s
}

/// ` --name VALUE` as a POSIX shell reads it back: a value with any character besides letters, digits and
/// `_./:@%+=,-` in single quotes, and one that starts with `-` joined by `=` (the printed fix command failed on
/// `--out "sp ace"` and `--out=-o`; helper 82).
fn flag(name: &str, value: &std::path::Path) -> String {
    let v = value.display().to_string();
    let plain = !v.is_empty() && v.chars().all(|c| c.is_ascii_alphanumeric() || "_./:@%+=,-".contains(c));
    let word = if plain { v.clone() } else { format!("'{}'", v.replace('\'', "'\\''")) };
    if v.starts_with('-') {
        format!(" {name}={word}")
    } else {
        format!(" {name} {word}")
    }
}

/// A directory as the headers name it: relative to the working directory when it lies below it, without `.`
/// steps or a trailing `/` (`..` steps are kept: which directory they lead to depends on links).
fn as_named(p: &std::path::Path) -> std::path::PathBuf {
    let below = std::env::current_dir().ok().and_then(|d| p.strip_prefix(d).ok().map(std::path::Path::to_path_buf));
    let p = below.unwrap_or_else(|| p.to_path_buf());
    let clean: std::path::PathBuf = p.components().filter(|c| !matches!(c, std::path::Component::CurDir)).collect();
    if clean.as_os_str().is_empty() {
        std::path::PathBuf::from(".")
    } else {
        clean
    }
}

/// The command that fixes what `check` found: [`regenerate_command`], restricted to the outputs checked.
fn fix_command(a: &GenArgs, opts: &wiregen::Options) -> String {
    let mut s = regenerate_command(a);
    // The headers name the installed binary's command; a `wiregen` run by `cargo run` in this repository (which
    // sets `CARGO_PKG_NAME` for the program it runs) names that.
    if std::env::var_os("CARGO_PKG_NAME").is_some_and(|n| n == "wiregen") {
        if let Some(rest) = s.strip_prefix("wiregen ") {
            s = format!("cargo run -p wiregen -- {rest}");
        }
    }
    if !a.only.is_empty() {
        // Each output once, as the run produced them.
        s.push_str(" --only ");
        s.push_str(&opts.outputs().iter().map(|o| o.name()).collect::<Vec<_>>().join(","));
    }
    s
}

fn validate(a: ValidateArgs) -> ExitCode {
    let loaded = match &a.schema {
        Some(dir) => wiregen::load::load(dir),
        None => wiregen::builtin::load(),
    };
    let proto = match loaded {
        Ok(p) => p,
        Err(errs) => {
            let closing = format!("wiregen validate: the schema has {}", errs.count("error"));
            report_schema_errors(&errs, a.format, Some(closing));
            if let Some(schema) = &a.schema {
                name_the_schema(&errs, a.format, schema);
            }
            return ExitCode::from(2);
        }
    };
    let proto = std::sync::Arc::new(proto);
    let opts = EngineOptions { strict_ids: a.strict_ids, max_errors: Some(wiregen::engine::REPORTED_ERRORS) };
    let engine = match &a.type_name {
        Some(t) => Engine::for_type_named(proto.clone(), t, opts),
        None => Engine::new(proto.clone(), opts),
    };
    let engine = match engine {
        Ok(e) => e,
        Err(e) => {
            let message = format!("{e}; --type NAME takes one of its types: {}", type_names(&proto));
            errln!("wiregen: {message}");
            if a.format == Format::Json {
                outln!("{}", json_error(&message));
            }
            return ExitCode::from(2);
        }
    };
    let rules = proto.protocol.as_ref().map_or(0, |p| p.sequence.rules.len());
    if a.strict_ids && !proto.has_strict_patterns() && a.format == Format::Text {
        errln!("wiregen validate: {}", wiregen::engine::NO_STRICT_PATTERN);
    }
    if a.stream && rules == 0 && a.format == Format::Text {
        errln!("wiregen validate: --stream: the schema declares no sequence rules (`x-sequence`), so each line is checked on its own");
    }
    let paths = if a.paths.is_empty() { vec![PathBuf::from("-")] } else { a.paths.clone() };
    let paths = match wiregen::validate::expand_inputs(&paths, wiregen::validate::output_file()) {
        Ok(p) => p,
        Err(e) => {
            errln!("wiregen: {}", wiregen::diag::printable(&e.message));
            // Not into stdout when that is one of the inputs: the refusal wrote into the file it spared.
            if a.format == Format::Json && !e.reads_the_output {
                outln!("{}", json_error(&e.message));
            }
            return ExitCode::from(2);
        }
    };
    // A directory stands for several files, however many it holds: its records name their file.
    let name_file = paths.len() > 1 || a.paths.iter().any(|p| p.is_dir());
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut tally = Tally { json: a.format == Format::Json, ..Tally::default() };
    if paths.len() == 1 {
        // One input: all cores on it.
        let r = check_one(&engine, &a, &paths[0], name_file, &mut out, Threads::AllCores);
        if let Some(code) = tally.add(r, &mut out) {
            return code;
        }
    } else {
        // Several: one input per core, their output in argument order, byte for byte what one after another gives.
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let mut sink = OrderedOut { out: &mut out, tally: &mut tally, exit: None, inputs: paths.len(), failed: None };
        wiregen::validate::in_order(
            paths.len(),
            threads,
            &|i, w| check_one(&engine, &a, &paths[i], name_file, w, Threads::One),
            &mut sink,
        );
        if let Some(code) = sink.exit {
            return code;
        }
    }
    if let Err(e) = out.flush() {
        return output_failed(&e, tally.any_invalid());
    }
    if a.format == Format::Text {
        errln!(
            "wiregen validate: {}, {} invalid",
            counted(tally.counts.records as u64, "record", "records"),
            tally.counts.invalid
        );
    }
    ExitCode::from(if tally.any_invalid() { 1 } else { 0 })
}

/// Why checking one input stopped.
enum Failed {
    /// The input could not be opened or read (exit 2, `wiregen: <input>: <error>`).
    Input(String),
    /// The output could not be written; what was checked of the input by then.
    Output(std::io::Error, Summary),
}

/// The counts of a `validate` run so far.
#[derive(Default)]
struct Tally {
    counts: Summary,
    /// `--format json`: an input that cannot be read is also an error object on stdout, in its place among the
    /// records (`{"code": "error", "message": ...}`, as `generate`, `check` and `diff` write one).
    json: bool,
}

impl Tally {
    fn any_invalid(&self) -> bool {
        self.counts.invalid > 0
    }

    /// Counts one input's result; the exit status when the run must stop there.
    fn add(&mut self, r: Result<Summary, Failed>, out: &mut dyn Write) -> Option<ExitCode> {
        match r {
            Ok(s) => {
                self.counts += s;
                None
            }
            Err(Failed::Input(e)) => {
                // A name with a line break or another control character is escaped (it split the line).
                errln!("wiregen: {}", wiregen::diag::printable(&e));
                if self.json {
                    let _ = writeln!(out, "{}", json_error(&e)).and_then(|()| out.flush());
                }
                Some(ExitCode::from(2))
            }
            Err(Failed::Output(e, checked)) => {
                self.counts += checked;
                Some(output_failed(&e, self.any_invalid()))
            }
        }
    }
}

/// Writes the inputs' output as [`wiregen::validate::in_order`] delivers it and counts their results.
struct OrderedOut<'a, W: Write> {
    out: &'a mut W,
    tally: &'a mut Tally,
    exit: Option<ExitCode>,
    /// How many inputs the run has.
    inputs: usize,
    /// The output failed while writing this input's bytes: its result is still counted, then the run stops.
    failed: Option<std::io::Error>,
}

impl<W: Write> wiregen::validate::OrderedSink<Result<Summary, Failed>> for OrderedOut<'_, W> {
    fn piece(&mut self, job: usize, piece: Piece<Result<Summary, Failed>>) -> std::ops::ControlFlow<()> {
        let stop = match piece {
            Piece::Bytes(b) => {
                if self.failed.is_none() {
                    self.failed = self.out.write_all(&b).err();
                }
                None
            }
            Piece::Done(r) => match self.failed.take() {
                None => {
                    let unread = matches!(r, Err(Failed::Input(_)));
                    let stop = self.tally.add(r, self.out);
                    let rest = self.inputs - job - 1;
                    let before = self.tally.counts.records;
                    if unread && (rest > 0 || before > 0) {
                        // What the run leaves out is said, not only where it stopped, and what it checked before
                        // (the last input failing hid the invalid records before it behind exit 2; helper 82).
                        let _ = self.out.flush();
                        let left = if rest > 0 {
                            format!(": {} after it not checked", counted(rest as u64, "input", "inputs"))
                        } else {
                            String::new()
                        };
                        errln!(
                            "wiregen validate: the run stops there{left}; {} before it, {} invalid",
                            counted(before as u64, "record", "records"),
                            self.tally.counts.invalid
                        );
                    }
                    stop
                }
                Some(e) => {
                    let checked = match r {
                        Ok(s) | Err(Failed::Output(_, s)) => s,
                        Err(Failed::Input(_)) => Summary::default(),
                    };
                    self.tally.add(Err(Failed::Output(e, checked)), self.out)
                }
            },
        };
        match stop {
            Some(code) => {
                self.exit = Some(code);
                std::ops::ControlFlow::Break(())
            }
            None => std::ops::ControlFlow::Continue(()),
        }
    }

    fn idle(&mut self) {
        // A failed flush shows again at the next write.
        let _ = self.out.flush();
    }
}

/// [`check_input`] of an input that could be listed; the reason of one that could not.
fn check_one(
    engine: &Engine,
    a: &ValidateArgs,
    input: &wiregen::validate::Input,
    name_file: bool,
    out: &mut impl Write,
    threads: Threads,
) -> Result<Summary, Failed> {
    match input {
        Ok(path) => check_input(engine, a, path, name_file, out, threads),
        Err(e) => Err(Failed::Input(e.clone())),
    }
}

/// Checks one input (`-` is stdin) into `out`: its records, or with `--stream --summary` its summary.
fn check_input(
    engine: &Engine,
    a: &ValidateArgs,
    path: &Path,
    name_file: bool,
    out: &mut impl Write,
    threads: Threads,
) -> Result<Summary, Failed> {
    let shown = shown_path(path);
    // An input that may keep the run waiting (stdin, a FIFO, a device: opening or reading it can block) gets what
    // the inputs before it wrote out first; on one core they were held back until it was read (helper 94).
    let may_wait = path.as_os_str() == "-" || std::fs::metadata(path).is_ok_and(|m| !m.is_file());
    if may_wait {
        let _ = out.flush();
    }
    let reader: Box<dyn std::io::BufRead + Send> = if path.as_os_str() == "-" {
        Box::new(BufReader::new(std::io::stdin()))
    } else {
        match std::fs::File::open(path) {
            Ok(f) => Box::new(BufReader::with_capacity(1 << 16, f)),
            Err(e) => return Err(Failed::Input(format!("{shown}: {e}"))),
        }
    };
    let mut write_err = None;
    // How a record is written: by the thread that checks it, into a buffer the sink writes whole.
    let named = json_path(path);
    let format = RecordFormat::new(a.format, &shown, &named, name_file);
    let write = |rec: &Record, out: &mut Vec<u8>| format.write(rec, out);
    let res = if a.stream && a.summary {
        // Only the summary is printed.
        StreamSummary::of_reader(engine, &named, reader, |_: Record| {}).map(|s| {
            let r = match a.format {
                Format::Json => serde_json::to_writer(&mut *out, &s),
                Format::Text => serde_json::to_writer_pretty(&mut *out, &s),
            };
            if let Err(e) = r.map_err(std::io::Error::from).and_then(|_| out.write_all(b"\n")) {
                write_err.get_or_insert(e);
            }
            s.counts()
        })
    } else {
        let mut sink = CliSink { out, error: &mut write_err };
        if a.stream {
            wiregen::stream::check_reader_into(engine, reader, &write, &mut sink)
        } else {
            validate_reader_into(engine, reader, &write, &mut sink, threads)
        }
    };
    match (res, write_err) {
        (res, Some(e)) => Err(Failed::Output(e, res.unwrap_or_default())),
        (Ok(s), None) => Ok(s),
        (Err(e), None) => Err(Failed::Input(format!("{shown}: {e}"))),
    }
}

/// Where `validate` writes its records' bytes. A write error stops the run (a reader that went away, as with
/// `| head -1`, stops the validation too); while the input is idle, the output is flushed, so
/// `tail -f log | wiregen validate -` shows each record as its line arrives.
struct CliSink<'a, W: Write> {
    out: &'a mut W,
    error: &'a mut Option<std::io::Error>,
}

/// How `validate` writes a record: a JSON line (naming its file when more than one is checked), or text lines whose
/// input-derived parts are escaped.
struct RecordFormat<'a> {
    format: Format,
    shown: &'a str,
    /// The opening of a JSON record that names its file, `{"file":"a.jsonl",`, escaped once for all its records
    /// (empty when records do not name it).
    file: Vec<u8>,
}

impl<'a> RecordFormat<'a> {
    fn new(format: Format, shown: &'a str, named: &str, name_file: bool) -> Self {
        let mut file = Vec::new();
        if name_file && format == Format::Json {
            file.extend_from_slice(b"{\"file\":");
            let _ = serde_json::to_writer(&mut file, named);
            file.push(b',');
        }
        RecordFormat { format, shown, file }
    }

    fn write(&self, rec: &Record, out: &mut Vec<u8>) {
        match self.format {
            Format::Json => {
                // `{"file":"a.jsonl","line":...}`: the record's own object with the file first.
                out.extend_from_slice(&self.file);
                let start = out.len();
                rec.write_json(out);
                if !self.file.is_empty() {
                    // The record's own opening brace goes: the file is its first member.
                    out.remove(start);
                }
                out.push(b'\n');
            }
            Format::Text => {
                for e in &rec.errors {
                    let ptr = shown_pointer(&e.pointer);
                    let links = e.links("rejected");
                    let _ = writeln!(
                        out,
                        "{}:{}: {}: {} [{}]{links}",
                        printable(self.shown),
                        rec.line,
                        ptr,
                        printable(&e.message),
                        e.rule
                    );
                }
            }
        }
    }
}

impl<W: Write> wiregen::validate::ByteSink for CliSink<'_, W> {
    fn write(&mut self, bytes: &[u8]) -> std::ops::ControlFlow<()> {
        match self.out.write_all(bytes) {
            Ok(()) => std::ops::ControlFlow::Continue(()),
            Err(e) => {
                *self.error = Some(e);
                std::ops::ControlFlow::Break(())
            }
        }
    }

    fn idle(&mut self) {
        if let Err(e) = self.out.flush() {
            self.error.get_or_insert(e);
        }
    }
}

/// An input's name as records and messages show it: `<stdin>` for `-`; a byte of the name that is not UTF-8 as
/// `\xFF` and a backslash as `\\` (lossy display made `s\xff.jsonl` and `s\xfe.jsonl` both `s\u{FFFD}.jsonl`, so a reader could not
/// tell which was invalid).
/// An error a command could not go on after, as `--format json` writes it on stdout: `{"code": "error",
/// "message": ...}` (one shape for `generate`, `check`, `diff` and `validate`).
fn json_error(message: &str) -> String {
    serde_json::json!({"code": "error", "message": message}).to_string()
}

/// A path as JSON output names it: the name itself when it is UTF-8 (JSON escapes what it must; a backslash
/// doubled by [`shown_path`] named a file that does not exist, helper 82), else [`shown_path`]'s form.
fn json_path(path: &Path) -> String {
    match path.to_str() {
        Some(_) if path.as_os_str() == "-" => "<stdin>".to_string(),
        Some(s) => s.to_string(),
        None => shown_path(path),
    }
}

fn shown_path(path: &Path) -> String {
    if path.as_os_str() == "-" {
        return "<stdin>".to_string();
    }
    let mut out = String::new();
    for chunk in path.as_os_str().as_encoded_bytes().utf8_chunks() {
        // A backslash of the name is doubled, so `\xFF` is only ever the byte.
        out.push_str(&chunk.valid().replace('\\', "\\\\"));
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02X}"));
        }
    }
    out
}

/// The exit status after the output could not be written: a reader that went away (broken pipe) is not an error
/// of ours; anything else (a full disk) is reported and exits 2.
fn output_failed(e: &std::io::Error, any_invalid: bool) -> ExitCode {
    lost_output(e, ExitCode::from(if any_invalid { 1 } else { 0 }))
}

/// The exit status after stdout could not be written: `status` (the command's own) when its reader went away,
/// else 2 with the error said.
fn lost_output(e: &std::io::Error, status: ExitCode) -> ExitCode {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        return status;
    }
    errln!("wiregen: writing the output: {e}");
    ExitCode::from(2)
}

#[cfg(all(test, feature = "serve"))]
mod tests {
    use super::*;

    #[test]
    fn serve_flag_defaults_are_the_library_defaults() {
        #[derive(Parser)]
        struct Cli {
            #[command(flatten)]
            serve: ServeArgs,
        }
        let parsed: wiregen::serve::ServeOptions = Cli::parse_from(["wiregen-serve"]).serve.into();
        assert_eq!(parsed, wiregen::serve::ServeOptions::default());
    }
}

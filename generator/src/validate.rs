//! `validate`: checks a file or stdin holding one JSON envelope (possibly pretty-printed) or JSONL, line by
//! line with flat memory, and reports one [`Record`] per input record in input order.

use std::collections::BTreeMap;
use std::io::{self, BufRead, Read};
use std::ops::ControlFlow;

use serde::Serialize;

use crate::engine::{Engine, Issue};

/// The verdict on one input record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Record {
    /// 1-based line where the record starts.
    pub line: usize,
    /// Whether the record passed every rule.
    pub valid: bool,
    /// The errors, first error first.
    pub errors: Vec<Issue>,
}

impl Record {
    /// A record for `line` with `errors`.
    pub fn new(line: usize, errors: Vec<Issue>) -> Self {
        Record { line, valid: errors.is_empty(), errors }
    }

    /// Appends the record as compact JSON: the bytes its `Serialize` writes through `serde_json`, the
    /// record of an error-free line (nearly all of them) written directly (serde's generic path costs several
    /// hundred instructions a record, as much as checking a short line).
    pub fn write_json(&self, out: &mut Vec<u8>) {
        if !self.errors.is_empty() {
            // Writing into a Vec cannot fail (string keys, no I/O).
            let _ = serde_json::to_writer(out, self);
            return;
        }
        out.extend_from_slice(b"{\"line\":");
        out.extend_from_slice(itoa::Buffer::new().format(self.line).as_bytes());
        out.extend_from_slice(if self.valid {
            b",\"valid\":true,\"errors\":[]}"
        } else {
            b",\"valid\":false,\"errors\":[]}"
        });
    }
}

/// Counts of one validation run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Summary {
    /// Records checked.
    pub records: usize,
    /// Records with at least one error.
    pub invalid: usize,
}

impl Summary {
    /// Counts one record.
    pub(crate) fn add(&mut self, rec: &Record) {
        *self += Summary { records: 1, invalid: usize::from(!rec.valid) };
    }
}

/// The counts of two runs (or parts of one) together.
impl std::ops::AddAssign for Summary {
    fn add_assign(&mut self, other: Summary) {
        self.records += other.records;
        self.invalid += other.invalid;
    }
}

/// How much input after an incomplete first line is buffered to see whether it is one pretty-printed document:
/// as much as the longest line ([`MAX_LINE`]), so a document may be as large as a line may.
pub(crate) const PRETTY_DOCUMENT_LIMIT: u64 = MAX_LINE as u64;

/// The text after a UTF-8 byte order mark, which an editor may put before a document (the checkers still refuse
/// it, once, in the record that holds it).
fn after_bom(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}

/// Whether a first line is the start of a JSON value that continues on the next lines (after a byte order mark:
/// a document saved with one was read line by line, one error per line after the first).
fn first_line_incomplete(first: &[u8]) -> bool {
    std::str::from_utf8(first)
        .ok()
        .map(after_bom)
        .filter(|t| !t.trim().is_empty())
        .is_some_and(|t| serde_json::from_str::<serde::de::IgnoredAny>(t).is_err_and(|e| e.is_eof()))
}

/// What the first error of an input's first line adds when the line looks like UTF-16 or UTF-32
/// ([`crate::diag::utf16_sign`]): the CLI's inputs and the service's JSONL bodies alike.
pub(crate) fn utf16_hint(first: &[u8]) -> Option<String> {
    crate::diag::utf16_sign(first).map(|sign| {
        format!(
            " (the input looks like UTF-16 or UTF-32, not UTF-8: {sign}; JSON lines are UTF-8: convert it, e.g. with \
             `iconv -t UTF-8`)"
        )
    })
}

/// Reads the first line of the input: `Some` of it when it is an ordinary line (the caller checks it, and the rest
/// line by line); else, when it is an incomplete JSON value, reads the input's records and calls `each` with the
/// bytes of each until it says stop, and returns `None` (also for an empty input). Those records are one multi-line
/// JSON document when the whole input is one complete value, else the JSONL lines (without their newlines), in
/// order; when the first line is only an opening `{` or `[` (as pretty-printers write it), the first line's call
/// also gets what to add to its first error: where the input breaks read as one document (a pretty-printed envelope
/// with a trailing comma on line 5 is that comma, not "line 1 ends early" and one error per line after it), its
/// first byte that is not UTF-8, or that it is longer than a document may be. Message mode and stream mode both
/// start their input with this.
///
/// # Errors
/// Only I/O errors while reading, and a line longer than [`MAX_LINE`].
pub(crate) fn start_records<R: BufRead>(
    reader: &mut R,
    each: &mut dyn FnMut(Vec<u8>, Option<String>) -> ControlFlow<()>,
) -> io::Result<Option<Vec<u8>>> {
    let mut first = Vec::new();
    if read_line(reader, &mut first)? == 0 {
        return Ok(None);
    }
    if let Some(hint) = utf16_hint(&first) {
        // The lines of a UTF-16 input are refused: the first says why, once (each was "invalid UTF-8" or
        // "malformed JSON" and nothing named the encoding; helper 74).
        let mut buf = first;
        let mut hint = Some(hint);
        loop {
            if each(std::mem::take(&mut buf), hint.take()).is_break() || read_line(reader, &mut buf)? == 0 {
                return Ok(None);
            }
        }
    }
    if !first_line_incomplete(&first) {
        return Ok(Some(first));
    }
    // Possibly one pretty-printed document: read what follows into one buffer after the first line, up to a bound.
    let head = first.len() + 1;
    let mut whole = first;
    whole.push(b'\n');
    (&mut *reader).take(PRETTY_DOCUMENT_LIMIT).read_to_end(&mut whole)?;
    let complete = ((whole.len() - head) as u64) < PRETTY_DOCUMENT_LIMIT;
    let first_line = whole[..head].strip_prefix("\u{feff}".as_bytes()).unwrap_or(&whole[..head]);
    let pretty = matches!(trim_end(first_line.trim_ascii_start()), b"{" | b"[");
    let why = if !complete {
        Some(format!("longer than {} MiB, the most wiregen reads as one document", MAX_LINE >> 20))
    } else {
        match std::str::from_utf8(&whole) {
            Err(e) => {
                let (line, column) = crate::diag::byte_line_col(&whole, e.valid_up_to());
                Some(format!("invalid UTF-8 at line {line} column {column}"))
            }
            Ok(text) => match serde_json::from_str::<serde::de::IgnoredAny>(after_bom(text)) {
                Ok(_) => {
                    let _ = each(trim_end(&whole).to_vec(), None);
                    return Ok(None);
                }
                // Where the engine's own reading of the document stops, in its words: a repeated key before the
                // break is the first problem a reader meets (every checker refuses it), and nesting too deep
                // stops it before the break (skipping the value, serde_json has no depth limit: the note said
                // `EOF while parsing a list at line 201 column 0` where the engine stops at line 128; helper 114).
                Err(e) => {
                    let said = match crate::engine::parse_json(after_bom(text).as_bytes()) {
                        Err(issue) => issue.message,
                        Ok(_) => {
                            format!("{} at {}", crate::engine::parse_error_what(&e), crate::engine::parse_error_at(&e))
                        }
                    };
                    let said = said.strip_prefix("malformed JSON: ").unwrap_or(&said).to_string();
                    // Past the first line only (`at line L column C`): what breaks the first line is its own error.
                    said.contains("at line ").then_some(said)
                }
            },
        }
    };
    let hint = why.filter(|_| pretty).map(|w| format!(" (read as one multi-line document: {w})"));
    if each(whole[..head - 1].to_vec(), hint).is_break() {
        return Ok(None);
    }
    let mut rest = io::Cursor::new(whole);
    rest.set_position(head as u64);
    let mut chained = io::BufReader::new(rest.chain(reader));
    let mut buf = Vec::new();
    while read_line(&mut chained, &mut buf)? > 0 {
        if each(std::mem::take(&mut buf), None).is_break() {
            break;
        }
    }
    Ok(None)
}

/// Adds to each error of a record that is one multi-line document (a pretty-printed envelope) where its value is
/// in the document, `(line 8, column 15 of the document)`: the record's line is where the document starts, and the
/// errors of a one-line record need no more than their pointer. Lines end at `\n` and columns count bytes, after a
/// byte order mark: as the positions of a syntax error or of too deep a value in the same answer count (serde_json's;
/// this one counted characters and a lone `\r` as a line end, helper 114).
pub(crate) fn place_in_document(bytes: &[u8], errors: &mut [Issue]) {
    if !bytes.contains(&b'\n') || errors.iter().all(|e| e.pointer.is_empty()) {
        return;
    }
    let Ok(text) = std::str::from_utf8(bytes) else { return };
    let text = after_bom(text);
    let at = crate::diag::Locator::in_bytes(text);
    for e in errors.iter_mut().filter(|e| !e.pointer.is_empty()) {
        let (line, col) = at.locate(&e.pointer);
        e.message.push_str(&format!(" (line {line}, column {col} of the document)"));
    }
}

fn trim_end(b: &[u8]) -> &[u8] {
    let mut end = b.len();
    while end > 0 && matches!(b[end - 1], b'\n' | b'\r' | b' ' | b'\t') {
        end -= 1;
    }
    &b[..end]
}

/// The longest line read, in bytes (its `\n` not counted): 64 MiB. A longer line stops the reading with an
/// [`io::ErrorKind::InvalidData`] error (saying so): the lines before it were checked, the rest of the input
/// is not. Without a bound, input without newlines (`wiregen validate /dev/zero`, a log whose newlines were lost)
/// was held whole and grew until the machine ran out of memory; with it, reading holds at most this much per line
/// (checking an invalid line can take several times its size: see the README's resource table).
pub const MAX_LINE: usize = 64 << 20;

/// The error of a line longer than [`MAX_LINE`].
fn line_too_long() -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!(
            "a line is longer than {} MiB ({MAX_LINE} bytes), the longest line wiregen reads from a file or standard \
             input: the lines before it were checked, it and the rest of the input were not",
            MAX_LINE >> 20
        ),
    )
}

/// Reads one line into `buf` (cleared first) without its `\n` or `\r\n`. Returns bytes consumed (0 at end).
///
/// # Errors
/// I/O errors, and a line longer than [`MAX_LINE`] (nothing past `MAX_LINE + 1` of its bytes is read).
pub(crate) fn read_line<R: BufRead>(r: &mut R, buf: &mut Vec<u8>) -> io::Result<usize> {
    buf.clear();
    let n = r.take(MAX_LINE as u64 + 1).read_until(b'\n', buf)?;
    if buf.len() > MAX_LINE && buf.last() != Some(&b'\n') {
        return Err(line_too_long());
    }
    if buf.last() == Some(&b'\n') {
        buf.pop();
        if buf.last() == Some(&b'\r') {
            buf.pop();
        }
    }
    Ok(n)
}

/// Hands every line of `reader` (JSONL: each line without its `\n` or `\r\n`) to `out` in order on the calling
/// thread, until it says stop. The input is read in batches straight into a buffer (no copy per line);
/// [`Consumer::idle`] is called before each read, when everything so far has been handed over (the moment to flush
/// output, so a live stream's records are seen as they come).
///
/// # Errors
/// Only I/O errors while reading, and a line longer than [`MAX_LINE`].
pub(crate) fn each_line_here<R: BufRead>(reader: &mut R, out: &mut dyn for<'l> Consumer<&'l [u8]>) -> io::Result<()> {
    struct Each<'a>(&'a mut dyn for<'l> Consumer<&'l [u8]>);
    impl<'l> Consumer<(usize, &'l [u8])> for Each<'_> {
        fn consume(&mut self, (_, data): (usize, &'l [u8])) -> ControlFlow<()> {
            lines_of(data).try_for_each(|line| self.0.consume(line))
        }
        fn idle(&mut self) {
            self.0.idle();
        }
    }
    batches_here(reader, &mut Vec::new(), None, 0, &mut Each(out))
}

/// Hands every batch of `reader` (its whole lines, with the number of its first line, counting from `line`) to
/// `out` in order on the calling thread, from `head` when it was read already, until it says stop;
/// [`Consumer::idle`] is called before each read. `carry` holds what follows the last batch cut.
fn batches_here<R: BufRead>(
    reader: &mut R,
    carry: &mut Vec<u8>,
    head: Option<Batch>,
    mut line: usize,
    out: &mut dyn for<'l> Consumer<(usize, &'l [u8])>,
) -> io::Result<()> {
    let (mut next, mut buf) = (head, None);
    loop {
        let batch = match next.take() {
            Some(b) => b,
            None => {
                out.idle();
                match next_batch(reader, carry, buf.take().unwrap_or_else(batch_buffer))? {
                    Some(b) => b,
                    None => return Ok(()),
                }
            }
        };
        let stopped = out.consume((line, batch.lines())).is_break();
        line += batch.lines;
        if stopped || batch.eof {
            spare(batch.data);
            return Ok(());
        }
        buf = Some(batch.data);
    }
}

/// Bytes per batch handed to the worker threads: bounds memory to a few batches whatever the input size.
pub(crate) const BATCH_BYTES: usize = 1 << 20;

/// Lines per batch at most: a batch's results (one record per line) stay bounded however short the lines are.
pub(crate) const BATCH_LINES: usize = 8192;

/// The lines of a run of whole lines (each ending in `\n`, except perhaps the last line of the input), without
/// their `\n` or `\r\n`.
fn lines_of(data: &[u8]) -> impl Iterator<Item = &[u8]> {
    let body = data.strip_suffix(b"\n").unwrap_or(data);
    let mut ends = memchr::memchr_iter(b'\n', body);
    let mut start = if data.is_empty() { None } else { Some(0) };
    std::iter::from_fn(move || {
        let from = start?;
        let line = match ends.next() {
            Some(end) => {
                start = Some(end + 1);
                &body[from..end]
            }
            None => {
                start = None;
                &body[from..]
            }
        };
        Some(line.strip_suffix(b"\r").unwrap_or(line))
    })
}

/// A batch of whole lines (`data[..len]`; the buffer past `len` is room for reading), how many lines it holds (as
/// [`lines_of`] gives them), and whether the input ended with it.
struct Batch {
    data: Vec<u8>,
    len: usize,
    lines: usize,
    eof: bool,
}

impl Batch {
    fn lines(&self) -> &[u8] {
        &self.data[..self.len]
    }
}

/// Room left free for each read: at least a `BufReader`'s whole buffer, so that once the reader's buffer is drained
/// a read goes from the source straight into the batch (no copy through the reader's buffer).
const READ_ROOM: usize = 64 << 10;

/// Reads the next batch of whole lines into `buf` (a buffer from [`batch_buffer`] or an earlier batch): at least
/// one line, cut after [`BATCH_LINES`] lines or once past [`BATCH_BYTES`], or earlier when the input has nothing
/// more to give right now (so a slow pipe still sees its records promptly). `carry` holds what follows the cut
/// between calls. Every byte is scanned once, so a long line costs time in proportion to its length, wherever it is.
fn next_batch<R: BufRead>(reader: &mut R, carry: &mut Vec<u8>, mut buf: Vec<u8>) -> io::Result<Option<Batch>> {
    let mut len = carry.len();
    if buf.len() < len + READ_ROOM {
        buf.resize(len + READ_ROOM, 0);
    }
    buf[..len].copy_from_slice(carry);
    carry.clear();
    let (mut scanned, mut lines, mut last) = (0usize, 0usize, None::<usize>);
    let (mut eof, mut short) = (false, false);
    loop {
        for off in memchr::memchr_iter(b'\n', &buf[scanned..len]) {
            if scanned + off - last.map_or(0, |p| p + 1) > MAX_LINE {
                return Err(line_too_long());
            }
            lines += 1;
            last = Some(scanned + off);
            if lines == BATCH_LINES {
                break;
            }
        }
        scanned = len;
        let cut = match last {
            Some(p) if lines >= BATCH_LINES || (!eof && (len >= BATCH_BYTES || short)) => Some(p),
            _ => None,
        };
        if let Some(p) = cut {
            carry.extend_from_slice(&buf[p + 1..len]);
            return Ok(Some(Batch { data: buf, len: p + 1, lines, eof: false }));
        }
        // The line being read (the last one at the end of the input) is too long already.
        if len - last.map_or(0, |p| p + 1) > MAX_LINE {
            return Err(line_too_long());
        }
        if eof {
            if len == 0 {
                spare(buf);
                return Ok(None);
            }
            // Every newline is counted (no cut came before the end); a last line without one is a line too.
            let lines = lines + usize::from(buf[len - 1] != b'\n');
            return Ok(Some(Batch { data: buf, len, lines, eof: true }));
        }
        if buf.len() - len < READ_ROOM {
            // A long line: the room doubles, so reading it costs time in proportion to its length.
            buf.resize(len + READ_ROOM.max(len), 0);
        }
        let n = match reader.read(&mut buf[len..]) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        len += n;
        eof = n == 0;
        short = n < 8192;
    }
}

thread_local! {
    /// Batch buffers this thread is done with, for its next input: a directory of small files reuses them instead
    /// of allocating, zeroing and (when the allocator gives the memory back) faulting in new ones for every file.
    static SPARE: std::cell::RefCell<Vec<Vec<u8>>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// A batch buffer: one this thread kept ([`spare`]), or a new one with room for the first read. It grows (and is
/// zeroed) only as far as the batches read into it need, once; batches reuse it, so a small input does not pay
/// for a whole batch's buffer.
fn batch_buffer() -> Vec<u8> {
    SPARE.with(|s| s.borrow_mut().pop()).unwrap_or_else(|| vec![0; 2 * READ_ROOM])
}

/// Keeps a batch buffer for this thread's next input (two at most, so memory stays bounded).
fn spare(buf: Vec<u8>) {
    SPARE.with(|s| {
        let mut s = s.borrow_mut();
        if s.len() < 2 {
            s.push(buf);
        }
    });
}

/// Where [`validate_reader`] sends its records.
pub trait RecordSink {
    /// Takes the next record (in input order); [`ControlFlow::Break`] stops the run (say, the reader of the
    /// output went away): no more input is read than is already on its way.
    fn record(&mut self, rec: Record) -> ControlFlow<()>;

    /// Called when every record so far has been handed over and the next one is not ready yet (the input is a
    /// slow pipe): the moment to flush buffered output, so a live stream's records are seen as they come.
    fn idle(&mut self) {}
}

impl<F: FnMut(Record)> RecordSink for F {
    fn record(&mut self, rec: Record) -> ControlFlow<()> {
        self(rec);
        ControlFlow::Continue(())
    }
}

/// Validates every record of `reader` with message-level rules, handing each to `sink` in input order (a closure
/// `|rec: Record| ...`, or a [`RecordSink`] that can stop the run and flush while the input is idle).
///
/// Work is spread over the machine's cores (a reader thread, one worker per core, results in input order); input
/// that ends within one batch is checked on the calling thread, without starting threads.
///
/// # Errors
/// Only I/O errors while reading, and a line longer than [`MAX_LINE`] (`InvalidData`); every problem with the
/// data is a [`Record`].
pub fn validate_reader<R: BufRead + Send>(engine: &Engine, reader: R, sink: impl RecordSink) -> io::Result<Summary> {
    validate_reader_with(engine, reader, sink, Threads::AllCores)
}

/// How many threads check one input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Threads {
    /// A reader thread and one worker per core, results in input order (one large input).
    AllCores,
    /// Everything on the calling thread (several inputs checked side by side, one per thread: see [`in_order`]).
    One,
}

/// [`validate_reader`] with the choice of [`Threads`]; the records are the same either way.
///
/// # Errors
/// Only I/O errors while reading, and a line longer than [`MAX_LINE`] (`InvalidData`); every problem with the
/// data is a [`Record`].
pub fn validate_reader_with<R: BufRead + Send>(
    engine: &Engine,
    mut reader: R,
    sink: impl RecordSink,
    threads: Threads,
) -> io::Result<Summary> {
    let mut out = Numbered { sink, next_line: 1, summary: Summary::default() };
    if start(engine, &mut reader, &mut out)?.is_continue() {
        for_each_line(reader, &|line| engine.check_line_fast(line), &mut out, threads)?;
    }
    Ok(out.summary)
}

/// Checks the first line, or the whole input when it is one pretty-printed document: `Continue` when the rest is
/// to be checked line by line (from line 2).
fn start<R: BufRead>(
    engine: &Engine,
    reader: &mut R,
    out: &mut dyn Consumer<Vec<Issue>>,
) -> io::Result<ControlFlow<()>> {
    let first = start_records(reader, &mut |bytes, hint| {
        let mut issues = engine.check_line_fast(&bytes);
        if let (Some(hint), Some(first)) = (hint, issues.first_mut()) {
            first.message.push_str(&hint);
        }
        place_in_document(&bytes, &mut issues);
        out.consume(issues)
    })?;
    Ok(match first {
        Some(line) => out.consume(engine.check_line_fast(&line)),
        None => ControlFlow::Break(()),
    })
}

/// Where [`validate_reader_into`] writes: the records' bytes, in input order.
pub trait ByteSink {
    /// The next records, written; [`ControlFlow::Break`] stops the run (as [`RecordSink::record`]).
    fn write(&mut self, bytes: &[u8]) -> ControlFlow<()>;

    /// As [`RecordSink::idle`]: the moment to flush.
    fn idle(&mut self) {}
}

/// Writes one record as output bytes (on the thread that checked it).
pub type Format<'a> = &'a (dyn Fn(&Record, &mut Vec<u8>) + Sync);

/// [`validate_reader_with`] for output that is bytes: each record is written by `format` on the thread that checked
/// it (with all cores, writing the records is spread over them as checking is), and `sink` gets the bytes in input
/// order, byte for byte what formatting the records of [`validate_reader_with`] one after another gives.
///
/// # Errors
/// Only I/O errors while reading, and a line longer than [`MAX_LINE`] (`InvalidData`); every problem with the
/// data is a record.
pub fn validate_reader_into<R: BufRead + Send>(
    engine: &Engine,
    mut reader: R,
    format: Format<'_>,
    sink: &mut dyn ByteSink,
    threads: Threads,
) -> io::Result<Summary> {
    struct Written<'a> {
        sink: &'a mut dyn ByteSink,
        format: Format<'a>,
        next_line: usize,
        summary: Summary,
    }
    impl Consumer<Vec<Issue>> for Written<'_> {
        fn consume(&mut self, errors: Vec<Issue>) -> ControlFlow<()> {
            let rec = Record::new(self.next_line, errors);
            self.next_line += 1;
            self.summary.add(&rec);
            let mut bytes = Vec::new();
            (self.format)(&rec, &mut bytes);
            self.sink.write(&bytes)
        }
        fn idle(&mut self) {
            self.sink.idle();
        }
    }
    impl Consumer<(Vec<u8>, Summary)> for Written<'_> {
        fn consume(&mut self, (bytes, s): (Vec<u8>, Summary)) -> ControlFlow<()> {
            self.next_line += s.records;
            self.summary += s;
            self.sink.write(&bytes)
        }
        fn idle(&mut self) {
            self.sink.idle();
        }
    }
    let mut out = Written { sink, format, next_line: 1, summary: Summary::default() };
    if start(engine, &mut reader, &mut out)?.is_continue() {
        let work = |first: usize, data: &[u8]| {
            let (mut bytes, mut s) = (Vec::new(), Summary::default());
            for (i, line) in lines_of(data).enumerate() {
                let rec = Record::new(first + i, engine.check_line_fast(line));
                s.add(&rec);
                format(&rec, &mut bytes);
            }
            (bytes, s)
        };
        let next = out.next_line;
        for_each_batch(reader, next, &work, &mut out, threads)?;
    }
    Ok(out.summary)
}

/// Takes the results of [`for_each_line`] in input order.
pub(crate) trait Consumer<T> {
    /// The next result; `Break` stops the run.
    fn consume(&mut self, t: T) -> ControlFlow<()>;
    /// Everything so far is consumed and the next result is not ready yet.
    fn idle(&mut self);
}

/// Numbers the error lists of consecutive lines into records and counts them.
struct Numbered<S> {
    sink: S,
    next_line: usize,
    summary: Summary,
}

impl<S: RecordSink> Consumer<Vec<Issue>> for Numbered<S> {
    fn consume(&mut self, errors: Vec<Issue>) -> ControlFlow<()> {
        let rec = Record::new(self.next_line, errors);
        self.next_line += 1;
        self.summary.add(&rec);
        self.sink.record(rec)
    }

    fn idle(&mut self) {
        self.sink.idle();
    }
}

/// Runs `work` on every batch of lines of `reader` (JSONL: each line without its `\n` or `\r\n`, as [`lines_of`]
/// gives them, with the number of the batch's first line, counting from `first_line`) on all cores, and hands the
/// results to `out` in input order, until it says stop.
///
/// A reader thread cuts the input into batches of whole lines, one worker thread per core runs `work` over a batch
/// at a time, and the calling thread consumes the results in order while the workers go on with the next batches;
/// [`Consumer::idle`] is called whenever the calling thread has consumed everything so far and must wait. At most a
/// few batch buffers exist (they are recycled), so memory stays bounded even when `consume` is slow. With
/// [`Threads::One`], on one core, or for input that ends within one batch, everything runs on the calling thread.
///
/// # Errors
/// Only I/O errors while reading, and a line longer than [`MAX_LINE`].
pub(crate) fn for_each_batch<R: BufRead + Send, B: Send>(
    mut reader: R,
    first_line: usize,
    work: &(dyn Fn(usize, &[u8]) -> B + Sync),
    out: &mut dyn Consumer<B>,
    threads: Threads,
) -> io::Result<()> {
    use std::sync::mpsc::{channel, sync_channel};
    use std::sync::{Arc, Mutex};

    let mut carry = Vec::new();
    // Reading may wait on a slow pipe: what came before is handed over first.
    out.idle();
    let Some(head) = next_batch(&mut reader, &mut carry, batch_buffer())? else { return Ok(()) };
    // With one core, a reader thread and one worker would only take turns with this thread.
    let workers = cores();
    if head.eof || threads == Threads::One || workers == 1 {
        struct Here<'a, B> {
            work: &'a (dyn Fn(usize, &[u8]) -> B + Sync),
            out: &'a mut dyn Consumer<B>,
        }
        impl<'l, B> Consumer<(usize, &'l [u8])> for Here<'_, B> {
            fn consume(&mut self, (line, data): (usize, &'l [u8])) -> ControlFlow<()> {
                self.out.consume((self.work)(line, data))
            }
            fn idle(&mut self) {
                self.out.idle();
            }
        }
        return batches_here(&mut reader, &mut carry, Some(head), first_line, &mut Here { work, out });
    }
    // reader -> workers: numbered batches; workers -> here: results, put back in order; here -> reader: buffers.
    let (work_tx, work_rx) = sync_channel::<(usize, usize, Batch)>(workers);
    // Only the workers hold the receiver: when they are gone, the reader's next send fails and it stops.
    let work_rx = Arc::new(Mutex::new(work_rx));
    // At most this many batch buffers exist: the reader waits for a checked one when all are in flight.
    let buffers = 2 * workers + 2;
    let (free_tx, free_rx) = sync_channel::<Vec<u8>>(buffers);
    std::thread::scope(|scope| {
        let (done_tx, done_rx) = channel::<(usize, Vec<u8>, B)>();
        let producer = scope.spawn(move || {
            let mut data = Some(head);
            let (mut seq, mut line) = (0, first_line);
            let mut allocated = 1;
            while let Some(d) = data {
                let lines = d.lines;
                // A closed channel means the consumer stopped; the rest of the input is not needed.
                if work_tx.send((seq, line, d)).is_err() {
                    break;
                }
                seq += 1;
                line += lines;
                let buf = match free_rx.try_recv() {
                    Ok(b) => b,
                    Err(_) if allocated < buffers => {
                        allocated += 1;
                        batch_buffer()
                    }
                    Err(_) => match free_rx.recv() {
                        Ok(b) => b,
                        Err(_) => break,
                    },
                };
                data = next_batch(&mut reader, &mut carry, buf)?;
            }
            Ok::<(), io::Error>(())
        });
        for _ in 0..workers {
            let (work_rx, done_tx) = (work_rx.clone(), done_tx.clone());
            scope.spawn(move || loop {
                let next = work_rx.lock().map(|rx| rx.recv());
                let Ok(Ok((seq, line, batch))) = next else { break };
                let result = work(line, batch.lines());
                if done_tx.send((seq, batch.data, result)).is_err() {
                    break;
                }
            });
        }
        drop(work_rx);
        drop(done_tx);
        let mut pending = BTreeMap::new();
        let mut want = 0;
        'consume: loop {
            let Some(next) = recv_or_idle(&done_rx, || out.idle()) else { break };
            let (seq, data, result) = next;
            pending.insert(seq, (data, result));
            while let Some((data, result)) = pending.remove(&want) {
                if out.consume(result).is_break() {
                    break 'consume;
                }
                let _ = free_tx.send(data);
                want += 1;
            }
        }
        // Stopping early: the workers see the closed result channel, the reader the closed buffer channel.
        drop(done_rx);
        drop(free_tx);
        producer.join().unwrap_or_else(|p| std::panic::resume_unwind(p))
    })
}

/// [`for_each_batch`] with `work` run on every line, its results consumed one by one.
pub(crate) fn for_each_line<R: BufRead + Send, T: Send>(
    reader: R,
    work: &(dyn Fn(&[u8]) -> T + Sync),
    out: &mut dyn Consumer<T>,
    threads: Threads,
) -> io::Result<()> {
    struct Each<'a, T>(&'a mut dyn Consumer<T>);
    impl<T> Consumer<Vec<T>> for Each<'_, T> {
        fn consume(&mut self, results: Vec<T>) -> ControlFlow<()> {
            results.into_iter().try_for_each(|r| self.0.consume(r))
        }
        fn idle(&mut self) {
            self.0.idle();
        }
    }
    for_each_batch(reader, 0, &|_, data| lines_of(data).map(work).collect::<Vec<T>>(), &mut Each(out), threads)
}

/// The cores this process may use, asked once (the answer reads cgroup files: too slow to ask per input).
fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// The next message of `rx`, calling `idle` first when none is ready (the moment to flush output); `None` once
/// every sender is gone.
fn recv_or_idle<T>(rx: &std::sync::mpsc::Receiver<T>, idle: impl FnOnce()) -> Option<T> {
    match rx.try_recv() {
        Ok(x) => Some(x),
        Err(std::sync::mpsc::TryRecvError::Disconnected) => None,
        Err(std::sync::mpsc::TryRecvError::Empty) => {
            idle();
            rx.recv().ok()
        }
    }
}

/// One input of a `validate` run in its place, or why what stands there cannot be read (a directory that cannot
/// be listed or holds no `*.jsonl` file, a `*.jsonl` in it that is no regular file): that is told when the run
/// gets there, after the output of the inputs before it, as a file that cannot be opened is.
pub type Input = Result<std::path::PathBuf, String>;

/// A file by its device and inode: what two names of one file share.
pub type FileId = (u64, u64);

/// The file this process writes its output to (stdout), when that is a regular file or a pipe: an input that is it
/// would be read without end (`wiregen validate a.jsonl /dev/stdout | cat` read its own output pipe and never saw
/// its end; helper 95). Not a socket: what is read from one is what the other end sends, not what is written to it
/// (a service whose stdin and stdout are one socket reads its requests there).
#[must_use]
pub fn output_file() -> Option<FileId> {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        use std::os::unix::fs::{FileTypeExt, MetadataExt};
        let m = metadata_of(std::io::stdout().as_fd())?;
        let t = m.file_type();
        (t.is_file() || t.is_fifo()).then(|| (m.dev(), m.ino()))
    }
    #[cfg(not(unix))]
    None
}

/// The metadata of the file an open descriptor names.
#[cfg(unix)]
fn metadata_of(fd: std::os::fd::BorrowedFd<'_>) -> Option<std::fs::Metadata> {
    std::fs::File::from(fd.try_clone_to_owned().ok()?).metadata().ok()
}

/// The file `path` names (stdin for `-`), if any.
#[must_use]
pub fn file_of(path: &std::path::Path) -> Option<FileId> {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        use std::os::unix::fs::MetadataExt;
        let m = if path.as_os_str() == "-" {
            metadata_of(std::io::stdin().as_fd())?
        } else {
            std::fs::metadata(path).ok()?
        };
        Some((m.dev(), m.ino()))
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        None
    }
}

/// Why the inputs of a `validate` run are refused as a whole ([`expand_inputs`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    /// What is wrong, naming the input.
    pub message: String,
    /// An input is this run's output: nothing may be written to stdout then (it is that input).
    pub reads_the_output: bool,
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// The inputs of a `validate` run: `-` (stdin) and files as given, and for a directory every `*.jsonl` file below
/// it (recursively; symbolic links to directories are not followed, a link named `*.jsonl` to a file is an
/// input, a broken one failing as a missing file does), sorted by path, so a run is repeatable. What cannot be
/// listed is an [`Input`] error in its place.
///
/// # Errors
/// `-` given twice (stdin is read once: the second would silently be an empty input), and so a pipe, a socket or
/// a terminal given twice under any names (`-` and `/dev/stdin`: two readers split its lines between them); an
/// input that is the file `output` (this run's stdout, [`output_file`]): the run would read what it writes, and
/// grow the file until the disk is full (`wiregen validate sessions/ > sessions/report.jsonl`).
pub fn expand_inputs(paths: &[std::path::PathBuf], output: Option<FileId>) -> Result<Vec<Input>, Refused> {
    let refused = |message: String| Refused { message, reads_the_output: false };
    if paths.iter().filter(|p| p.as_os_str() == "-").count() > 1 {
        return Err(refused("`-` (stdin) is given more than once; it can be read once".into()));
    }
    #[cfg(unix)]
    {
        use std::io::IsTerminal;
        use std::os::fd::AsFd;
        use std::os::unix::fs::{FileTypeExt, MetadataExt};
        let pipe = |m: &std::fs::Metadata| m.file_type().is_fifo() || m.file_type().is_socket();
        // Stdin, when it is read once (a pipe, a socket, a terminal): `-` and another name of it are one input.
        let stdin = metadata_of(std::io::stdin().as_fd())
            .filter(|m| pipe(m) || std::io::stdin().is_terminal())
            .map(|m| (m.dev(), m.ino()));
        let mut seen: Vec<(FileId, &std::path::Path)> = Vec::new();
        for p in paths {
            let id = if p.as_os_str() == "-" {
                stdin
            } else {
                std::fs::metadata(p)
                    .ok()
                    .map(|m| (pipe(&m), (m.dev(), m.ino())))
                    .and_then(|(once, id)| (once || Some(id) == stdin).then_some(id))
            };
            let Some(id) = id else { continue };
            if let Some((_, first)) = seen.iter().find(|(x, _)| *x == id) {
                let name = |p: &std::path::Path| {
                    if p.as_os_str() == "-" {
                        "`-` (stdin)".to_string()
                    } else {
                        p.display().to_string()
                    }
                };
                return Err(refused(format!(
                    "{} and {} are one pipe, socket or terminal: it can be read once (two readers would split its \
                     lines between them)",
                    name(first),
                    name(p)
                )));
            }
            seen.push((id, p));
        }
    }
    // What cannot be listed or read is an error in its place, and the listing goes on: the run stops there, and
    // says how many inputs it leaves unchecked (an unlistable subdirectory hid the files after it).
    fn walk(dir: &std::path::Path, out: &mut Vec<Input>) {
        let mut entries = match std::fs::read_dir(dir).and_then(|d| d.collect::<Result<Vec<_>, _>>()) {
            Ok(e) => e,
            Err(e) => return out.push(Err(format!("{}: {e}", dir.display()))),
        };
        entries.sort_by_key(std::fs::DirEntry::file_name);
        for e in entries {
            let p = e.path();
            let kind = match e.file_type() {
                Ok(k) => k,
                Err(err) => {
                    out.push(Err(format!("{}: {err}", p.display())));
                    continue;
                }
            };
            if kind.is_dir() {
                walk(&p, out);
                continue;
            }
            // By the name's end: a file named just `.jsonl` is one too (`Path::extension` has none for it).
            if !e.file_name().as_encoded_bytes().ends_with(b".jsonl") {
                continue;
            }
            // A link is taken as what it names: a file is an input, and so is nothing (it fails to open like a
            // missing file argument, rather than leaving the run one file short without a word); a directory is
            // not followed.
            let named = if kind.is_symlink() { std::fs::metadata(&p).ok().map(|m| m.file_type()) } else { Some(kind) };
            match named {
                Some(k) if k.is_dir() => {}
                Some(k) if !k.is_file() => {
                    // A FIFO or a device would be read without end (a FIFO in the directory was skipped, a link to
                    // one blocked the run): refused like an unreadable directory. Given by name, it is read.
                    out.push(Err(format!(
                        "{}: not a regular file (a FIFO, a socket or a device); give it by name to read it",
                        p.display()
                    )));
                }
                _ => out.push(Ok(p)),
            }
        }
    }
    let mut out = Vec::new();
    for p in paths {
        if p.as_os_str() != "-" && p.is_dir() {
            let before = out.len();
            walk(p, &mut out);
            if out.len() == before {
                out.push(Err(format!("{}: a directory with no *.jsonl file", p.display())));
            }
        } else {
            out.push(Ok(p.clone()));
        }
    }
    if let Some(o) = output {
        if let Some(p) = out.iter().flatten().find(|p| file_of(p) == Some(o)) {
            let name = if p.as_os_str() == "-" { "stdin".to_string() } else { p.display().to_string() };
            return Err(Refused {
                message: format!(
                    "{name} is this run's output (stdout is that file): it would read what it writes, without end; \
                     write the output outside the inputs"
                ),
                reads_the_output: true,
            });
        }
    }
    Ok(out)
}

/// What a job of [`in_order`] hands on: bytes it wrote, or its result once it is done.
#[derive(Debug)]
pub enum Piece<R> {
    /// Output, in the order written.
    Bytes(Vec<u8>),
    /// The job's result, after all of its output.
    Done(R),
}

/// Where an [`in_order`] job writes: chunks go through a bounded channel, so a job that runs ahead of the output
/// waits instead of piling up memory (or, with one thread, straight to the sink). A write fails (`BrokenPipe`) once
/// the output has stopped.
pub struct JobOutput<'s, R> {
    buf: Vec<u8>,
    to: To<'s, R>,
}

/// Where a [`JobOutput`]'s pieces go.
enum To<'s, R> {
    /// Through a bounded channel to the thread that delivers them in job order.
    Channel(std::sync::mpsc::SyncSender<Piece<R>>),
    /// Straight to the sink: the jobs run one after another on the calling thread.
    Sink { sink: &'s mut dyn OrderedSink<R>, job: usize, stopped: bool },
}

/// Bytes a job buffers before handing them on.
const CHUNK: usize = 64 << 10;
/// Chunks a job may have waiting: memory is bounded by threads x this x [`CHUNK`].
const CHUNKS_AHEAD: usize = 16;

impl<R> JobOutput<'_, R> {
    fn send(&mut self) -> io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let chunk = std::mem::take(&mut self.buf);
        self.deliver(Piece::Bytes(chunk))
    }

    fn deliver(&mut self, piece: Piece<R>) -> io::Result<()> {
        let stopped = || io::Error::new(io::ErrorKind::BrokenPipe, "the output stopped");
        match &mut self.to {
            To::Channel(tx) => tx.send(piece).map_err(|_| stopped()),
            To::Sink { stopped: true, .. } => Err(stopped()),
            To::Sink { sink, job, stopped: s } => {
                *s = sink.piece(*job, piece).is_break();
                if *s {
                    Err(stopped())
                } else {
                    Ok(())
                }
            }
        }
    }
}

impl<R> io::Write for JobOutput<'_, R> {
    /// A large write (a whole batch's records at once) is handed on in pieces of at most `CHUNK` (64 KiB): as one
    /// piece, a job ahead held 16 batches' records (~95 MB) where the bound says 1 MiB.
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        let mut rest = b;
        while !rest.is_empty() {
            let take = (CHUNK - self.buf.len().min(CHUNK)).clamp(1, rest.len());
            self.buf.extend_from_slice(&rest[..take]);
            rest = &rest[take..];
            if self.buf.len() >= CHUNK {
                self.send()?;
            }
        }
        Ok(b.len())
    }

    /// Hands on what is buffered (a job flushes when its input is idle, so a live stream's records are seen).
    fn flush(&mut self) -> io::Result<()> {
        self.send()?;
        if let To::Sink { sink, .. } = &mut self.to {
            sink.idle();
        }
        Ok(())
    }
}

/// Where [`in_order`] delivers: each job's pieces, job after job in order.
pub trait OrderedSink<R> {
    /// The next piece of job `job`; [`ControlFlow::Break`] stops the run (no job is started after it, running
    /// ones stop at their next write).
    fn piece(&mut self, job: usize, piece: Piece<R>) -> ControlFlow<()>;
    /// Everything so far is delivered and the next piece is not ready yet.
    fn idle(&mut self) {}
}

/// Runs `run(0) .. run(jobs - 1)` on up to `threads` threads (in order of starting), and delivers what each
/// writes and returns to `sink` in job order, as it comes: the output is byte for byte what running the jobs one
/// after another into one writer gives, while the jobs run side by side. A job ahead of the one being delivered
/// buffers at most a few chunks, then waits. With one thread the jobs run one after another on the calling thread,
/// writing straight to the sink (no thread to hand each piece to).
pub fn in_order<R: Send>(
    jobs: usize,
    threads: usize,
    run: &(dyn Fn(usize, &mut JobOutput<'_, R>) -> R + Sync),
    sink: &mut dyn OrderedSink<R>,
) {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::sync::mpsc::sync_channel;
    use std::sync::Mutex;

    if threads <= 1 {
        for i in 0..jobs {
            let mut out = JobOutput { buf: Vec::new(), to: To::Sink { sink: &mut *sink, job: i, stopped: false } };
            let r = run(i, &mut out);
            // A job's last bytes, then its result; a stopped sink takes nothing more.
            if out.send().is_err() || out.deliver(Piece::Done(r)).is_err() {
                break;
            }
        }
        return;
    }

    // The channels of the jobs within `window` of the one being delivered, made as delivery moves on: made for
    // every job at once, 120,000 inputs held ~195 MB of empty channels (helper 94). A thread that takes a job past
    // the window waits for its channel.
    let window = threads.saturating_mul(4).max(16);
    let senders: Mutex<std::collections::VecDeque<(usize, std::sync::mpsc::SyncSender<Piece<R>>)>> =
        Mutex::new(std::collections::VecDeque::new());
    let made = std::sync::Condvar::new();
    let mut receivers = std::collections::VecDeque::new();
    let mut upto = 0;
    let mut make = |until: usize, receivers: &mut std::collections::VecDeque<_>| {
        let Ok(mut s) = senders.lock() else { return };
        while upto < until.min(jobs) {
            let (tx, rx) = sync_channel::<Piece<R>>(CHUNKS_AHEAD);
            s.push_back((upto, tx));
            receivers.push_back(rx);
            upto += 1;
        }
        made.notify_all();
    };
    make(window, &mut receivers);
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    std::thread::scope(|scope| {
        for _ in 0..threads.clamp(1, jobs.max(1)) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= jobs {
                    break;
                }
                let tx = {
                    let Ok(mut s) = senders.lock() else { break };
                    loop {
                        if stop.load(Ordering::Relaxed) {
                            break None;
                        }
                        if let Some(at) = s.iter().position(|(j, _)| *j == i) {
                            break s.remove(at).map(|(_, tx)| tx);
                        }
                        s = match made.wait(s) {
                            Ok(s) => s,
                            Err(_) => break None,
                        };
                    }
                };
                let Some(tx) = tx else { break };
                let mut out = JobOutput { buf: Vec::new(), to: To::Channel(tx) };
                let r = run(i, &mut out);
                // A job's last bytes, then its result; a closed channel means the output stopped.
                if out.send().is_err() || out.deliver(Piece::Done(r)).is_err() {
                    stop.store(true, Ordering::Relaxed);
                    made.notify_all();
                    break;
                }
            });
        }
        'jobs: for i in 0..jobs {
            make(i + 1 + window, &mut receivers);
            let Some(rx) = receivers.pop_front() else { break };
            loop {
                let Some(piece) = recv_or_idle(&rx, || sink.idle()) else { break };
                if sink.piece(i, piece).is_break() {
                    break 'jobs;
                }
            }
        }
        // Stopping early: no new job starts (a thread waiting for a channel is woken to see it), and running ones
        // see their channel closed.
        stop.store(true, Ordering::Relaxed);
        if let Ok(_s) = senders.lock() {
            made.notify_all();
        }
        receivers.clear();
    });
}

/// A [`ByteSink`] for tests: keeps what it is given, and says stop once it holds `.1` bytes (when set).
#[cfg(test)]
pub(crate) struct Bytes(pub Vec<u8>, pub Option<usize>);

#[cfg(test)]
impl ByteSink for Bytes {
    fn write(&mut self, b: &[u8]) -> ControlFlow<()> {
        self.0.extend_from_slice(b);
        match self.1 {
            Some(n) if self.0.len() >= n => ControlFlow::Break(()),
            _ => ControlFlow::Continue(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A record's JSON is what its `Serialize` writes, whether it has errors or not, whatever its line number.
    #[test]
    fn record_json_is_its_serialization() {
        let issue = |rule: crate::rules::Rule, pointer: &str, message: &str| Issue::new(rule, pointer, message);
        let mut linked = issue(crate::rules::Rule::Type, "/ev/\"t\"\n", "expected \u{1} a string, got \u{2028}");
        linked.related = Some(3);
        linked.caused_by = Some(2);
        let records = [
            Record::new(1, vec![]),
            Record::new(0, vec![]),
            Record::new(usize::MAX, vec![]),
            Record { line: 42, valid: false, errors: vec![] },
            Record::new(7, vec![issue(crate::rules::Rule::Required, "", "missing `id`"), linked]),
        ];
        for rec in &records {
            let mut got = b"prefix".to_vec();
            rec.write_json(&mut got);
            let want = [b"prefix".as_slice(), &serde_json::to_vec(rec).expect("a record serializes")].concat();
            assert_eq!(String::from_utf8_lossy(&got), String::from_utf8_lossy(&want));
        }
    }

    /// Collects what [`in_order`] delivers, and stops after `stop_after` bytes when set.
    struct Collect {
        bytes: Vec<u8>,
        done: Vec<(usize, usize)>,
        stop_after: Option<usize>,
    }

    impl OrderedSink<usize> for Collect {
        fn piece(&mut self, job: usize, piece: Piece<usize>) -> ControlFlow<()> {
            match piece {
                Piece::Bytes(b) => self.bytes.extend_from_slice(&b),
                Piece::Done(r) => self.done.push((job, r)),
            }
            match self.stop_after {
                Some(n) if self.bytes.len() >= n => ControlFlow::Break(()),
                _ => ControlFlow::Continue(()),
            }
        }
    }

    /// Job `i` writes `i`'s lines (some jobs far more than a chunk, some nothing), slower for early jobs.
    fn job(i: usize, out: &mut JobOutput<usize>) -> usize {
        use std::io::Write;
        let lines = [0, 3, 40_000, 1, 25_000, 0, 7][i % 7];
        if i.is_multiple_of(3) {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        for l in 0..lines {
            if writeln!(out, "job {i} line {l}").is_err() {
                return usize::MAX;
            }
        }
        lines
    }

    #[test]
    fn jobs_side_by_side_deliver_what_one_after_another_gives() {
        let mut want = Vec::new();
        for i in 0..20 {
            for l in 0..[0, 3, 40_000, 1, 25_000, 0, 7][i % 7] {
                want.extend_from_slice(format!("job {i} line {l}\n").as_bytes());
            }
        }
        for threads in [1, 2, 4] {
            let mut c = Collect { bytes: Vec::new(), done: Vec::new(), stop_after: None };
            in_order(20, threads, &job, &mut c);
            assert!(c.bytes == want, "{threads} thread(s): not the sequential output");
            let jobs: Vec<usize> = c.done.iter().map(|d| d.0).collect();
            assert_eq!(jobs, (0..20).collect::<Vec<_>>());
            assert_eq!(c.done[2].1, 40_000);
        }
    }

    /// However a job writes (here one write of 5 MB), what it hands on comes in pieces of at most [`CHUNK`], so a
    /// job ahead holds at most [`CHUNKS_AHEAD`] x [`CHUNK`] (1 MiB) waiting.
    #[test]
    fn a_large_write_is_handed_on_in_chunks() {
        struct Largest(usize, usize);
        impl OrderedSink<()> for Largest {
            fn piece(&mut self, _: usize, piece: Piece<()>) -> ControlFlow<()> {
                if let Piece::Bytes(b) = piece {
                    self.0 = self.0.max(b.len());
                    self.1 += b.len();
                }
                ControlFlow::Continue(())
            }
        }
        let big = |_: usize, out: &mut JobOutput<()>| {
            use std::io::Write;
            out.write_all(b"x").expect("write");
            out.write_all(&vec![b'y'; 5 << 20]).expect("write");
        };
        for threads in [1, 2] {
            let mut sink = Largest(0, 0);
            in_order(3, threads, &big, &mut sink);
            assert_eq!(sink.1, 3 * ((5 << 20) + 1), "{threads}");
            assert!(sink.0 <= CHUNK, "{threads} thread(s): a piece of {} bytes", sink.0);
        }
    }

    /// Jobs that write nothing never wait for the output, and a slow sink does not let them run ahead without
    /// bound: a job starts within a window of the one being delivered (channels were made for every job at once:
    /// 120,000 inputs held ~195 MB; helper 94).
    #[test]
    fn jobs_run_ahead_of_the_delivered_one_by_a_window_at_most() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        struct Slow<'a>(&'a AtomicUsize);
        impl OrderedSink<()> for Slow<'_> {
            fn piece(&mut self, job: usize, piece: Piece<()>) -> ControlFlow<()> {
                if matches!(piece, Piece::Done(())) {
                    if job < 20 {
                        std::thread::sleep(std::time::Duration::from_millis(2));
                    }
                    self.0.store(job + 1, Ordering::SeqCst);
                }
                ControlFlow::Continue(())
            }
        }
        let delivered = AtomicUsize::new(0);
        let lead = AtomicUsize::new(0);
        let quiet = |i: usize, _: &mut JobOutput<()>| {
            lead.fetch_max(i.saturating_sub(delivered.load(Ordering::SeqCst)), Ordering::SeqCst);
        };
        in_order(5_000, 4, &quiet, &mut Slow(&delivered));
        assert_eq!(delivered.load(Ordering::SeqCst), 5_000);
        let most = lead.load(Ordering::SeqCst);
        assert!((1..=16 + 1).contains(&most), "a job started {most} jobs ahead of the delivered one");
    }

    #[test]
    fn a_sink_that_stops_stops_the_jobs() {
        for threads in [1, 2] {
            let mut c = Collect { bytes: Vec::new(), done: Vec::new(), stop_after: Some(100_000) };
            in_order(1000, threads, &job, &mut c);
            assert!(c.bytes.len() >= 100_000 && c.bytes.len() < 100_000 + 2 * CHUNK, "{threads}: {}", c.bytes.len());
            assert!(c.done.len() < 10, "{threads}: jobs went on after the stop: {:?}", c.done.len());
        }
    }

    #[test]
    fn inputs_expand_directories_to_their_jsonl_files_in_path_order() {
        let dir = std::env::temp_dir().join(format!("wiregen-expand-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for d in ["d/b", "d/a/deeper", "empty"] {
            std::fs::create_dir_all(dir.join(d)).expect("mkdir");
        }
        for f in ["d/b/2.jsonl", "d/a/1.jsonl", "d/a/deeper/0.jsonl", "d/a/notes.txt", "d/top.jsonl"] {
            std::fs::write(dir.join(f), "").expect("write");
        }
        // Links: to a file (an input), to nothing (an input that will fail to open), to a directory (not followed).
        std::os::unix::fs::symlink(dir.join("d/top.jsonl"), dir.join("d/b/3-link.jsonl")).expect("link");
        std::os::unix::fs::symlink(dir.join("gone.jsonl"), dir.join("d/b/4-broken.jsonl")).expect("link");
        std::os::unix::fs::symlink(dir.join("d/a"), dir.join("d/b/5-dir.jsonl")).expect("link");
        let got = expand_inputs(&[dir.join("x.jsonl"), dir.join("d"), "-".into()], None).expect("expand");
        let want: Vec<Input> = [
            "x.jsonl",
            "d/a/1.jsonl",
            "d/a/deeper/0.jsonl",
            "d/b/2.jsonl",
            "d/b/3-link.jsonl",
            "d/b/4-broken.jsonl",
            "d/top.jsonl",
        ]
        .iter()
        .map(|f| dir.join(f))
        .chain(["-".into()])
        .map(Ok)
        .collect();
        assert_eq!(got, want);
        // What cannot be listed is told in its place, after what comes before it.
        let got = expand_inputs(&[dir.join("d/top.jsonl"), dir.join("empty")], None).expect("expand");
        assert_eq!(got[0], Ok(dir.join("d/top.jsonl")));
        assert!(got[1].as_ref().unwrap_err().contains("empty: a directory with no *.jsonl"), "{got:?}");
        // A FIFO named `*.jsonl` in a directory, or a link to one, would block the run: refused, both ways (the
        // FIFO was skipped without a word and the link blocked). Given by name, it is an input.
        let fifo = dir.join("pipe.jsonl");
        assert!(std::process::Command::new("mkfifo").arg(&fifo).status().expect("mkfifo").success());
        assert_eq!(expand_inputs(std::slice::from_ref(&fifo), None).expect("by name"), [Ok(fifo.clone())]);
        std::fs::create_dir_all(dir.join("f")).expect("mkdir");
        std::os::unix::fs::symlink(&fifo, dir.join("f/link.jsonl")).expect("link");
        let err = expand_inputs(&[dir.join("f")], None).expect("expand").remove(0).unwrap_err();
        assert!(err.contains("f/link.jsonl: not a regular file"), "{err}");
        std::fs::remove_file(dir.join("f/link.jsonl")).expect("rm");
        std::fs::rename(&fifo, dir.join("f/pipe.jsonl")).expect("mv");
        let err = expand_inputs(&[dir.join("f")], None).expect("expand").remove(0).unwrap_err();
        assert!(err.contains("f/pipe.jsonl: not a regular file"), "{err}");
        // The listing goes on past what cannot be read: what follows it is counted among the inputs left out.
        std::fs::write(dir.join("f/z.jsonl"), "").expect("write");
        let got = expand_inputs(&[dir.join("f")], None).expect("expand");
        assert!(got[0].is_err() && got[1] == Ok(dir.join("f/z.jsonl")), "{got:?}");
        // The run's own output among the inputs (through a link too) is refused before anything is read.
        let output = file_of(&dir.join("d/top.jsonl"));
        let err = expand_inputs(&[dir.join("d/a/1.jsonl"), dir.join("d")], output).unwrap_err();
        assert!(err.message.contains("d/b/3-link.jsonl is this run's output") && err.reads_the_output, "{err}");
        // A FIFO given twice is read once: refused (two readers split its lines), and so is a file named `.jsonl`
        // found (it was left out: `Path::extension` has none for it).
        let fifo = dir.join("f/pipe.jsonl");
        let err = expand_inputs(&[fifo.clone(), dir.join("d/top.jsonl"), fifo.clone()], None).unwrap_err();
        assert!(err.message.contains("are one pipe, socket or terminal") && !err.reads_the_output, "{err}");
        std::fs::create_dir_all(dir.join("h")).expect("mkdir");
        std::fs::write(dir.join("h/.jsonl"), "").expect("write");
        assert_eq!(expand_inputs(&[dir.join("h")], None).expect("expand"), [Ok(dir.join("h/.jsonl"))]);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// The bytes of [`validate_reader_into`] are the records of [`validate_reader_with`], formatted one after
    /// another, with all cores and with one, across many batches (lines cut by count and by size, `\r\n`, a last
    /// line without a newline); a sink that says stop gets nothing more.
    #[test]
    fn written_records_are_the_records_formatted_in_order() {
        let schema = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../schema");
        let engine = Engine::new(crate::load::load(&schema).expect("the schema loads"), Default::default())
            .expect("a root type");
        let good = r#"{"id":"m","time":1,"role":"user","ev":{"t":"text","text":"hi"}}"#;
        let bad = r#"{"id":"m","time":1,"role":"user","ev":{"t":"turn-start"}}"#;
        let mut input = String::new();
        for i in 0..3 * BATCH_LINES {
            input.push_str(if i % 997 == 0 { bad } else { good });
            input.push_str(if i % 5 == 0 { "\r\n" } else { "\n" });
            if i == BATCH_LINES + 7 {
                input.push_str(&format!("{{\"pad\":\"{}\"}}\n", "x".repeat(BATCH_BYTES)));
            }
        }
        input.push_str(bad);
        let format = |rec: &Record, out: &mut Vec<u8>| {
            out.extend_from_slice(format!("{}:{}:{}\n", rec.line, rec.valid, rec.errors.len()).as_bytes());
        };
        let mut want = Vec::new();
        let counts = validate_reader_with(&engine, input.as_bytes(), |r: Record| format(&r, &mut want), Threads::One)
            .expect("read");
        for threads in [Threads::AllCores, Threads::One] {
            let mut got = Bytes(Vec::new(), None);
            let s = validate_reader_into(&engine, input.as_bytes(), &format, &mut got, threads).expect("read");
            assert_eq!((s.records, s.invalid), (counts.records, counts.invalid), "{threads:?}");
            assert!(got.0 == want, "{threads:?}: the bytes differ");
            let mut stopped = Bytes(Vec::new(), Some(100));
            validate_reader_into(&engine, input.as_bytes(), &format, &mut stopped, threads).expect("read");
            assert!(stopped.0.len() < want.len() && want.starts_with(&stopped.0), "{threads:?}: went on after a stop");
        }
        assert_eq!(counts.records, 3 * BATCH_LINES + 2);
    }

    /// A reader that gives at most `step` bytes per read, like a pipe that is slower than its reader.
    struct Trickle<'a> {
        data: &'a [u8],
        step: usize,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = self.data.len().min(self.step).min(buf.len());
            buf[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
    }

    #[test]
    fn a_long_line_costs_time_in_proportion_to_its_length() {
        // A 4 MiB second line arriving 512 bytes at a time: rescanning the buffer for a newline after every read
        // would touch ~16 GiB; one pass touches 4 MiB.
        let mut data = b"{}\n".to_vec();
        data.extend(std::iter::repeat_n(b'a', 4 << 20));
        data.extend_from_slice(b"\n{}\n");
        let mut reader = io::BufReader::with_capacity(512, Trickle { data: &data, step: 512 });
        let start = std::time::Instant::now();
        let mut carry = Vec::new();
        let mut lines = 0;
        while let Some(b) = next_batch(&mut reader, &mut carry, batch_buffer()).expect("read") {
            assert_eq!(b.lines, lines_of(b.lines()).count(), "a batch counts its lines");
            lines += b.lines;
        }
        assert_eq!(lines, 3);
        assert!(start.elapsed() < std::time::Duration::from_secs(10), "took {:?}", start.elapsed());
    }

    /// The lines `next_batch` gives for `data` read `step` bytes at a time, or its error's kind.
    fn batch_lines(data: &[u8], step: usize) -> Result<Vec<usize>, io::ErrorKind> {
        let mut reader = io::BufReader::with_capacity(step.min(64 << 10), Trickle { data, step });
        let (mut carry, mut lens) = (Vec::new(), Vec::new());
        while let Some(b) = next_batch(&mut reader, &mut carry, batch_buffer()).map_err(|e| e.kind())? {
            lens.extend(lines_of(b.lines()).map(<[u8]>::len));
        }
        Ok(lens)
    }

    #[test]
    fn a_line_longer_than_max_line_stops_the_reading_wherever_it_is() {
        let line = |n: usize| vec![b'a'; n];
        let cat = |parts: &[&[u8]]| parts.concat();
        let (max, over) = (line(MAX_LINE), line(MAX_LINE + 1));
        // Small reads and reads larger than the line (a file), so a line read in one go is measured too.
        for step in [64 << 10, 256 << 20] {
            let ok = cat(&[b"{}\n", &max, b"\n{}\n"]);
            assert_eq!(batch_lines(&ok, step), Ok(vec![2, MAX_LINE, 2]), "step {step}");
            assert_eq!(batch_lines(&cat(&[b"{}\n", &max]), step), Ok(vec![2, MAX_LINE]), "step {step}");
            for bad in [cat(&[b"{}\n", &over, b"\n{}\n"]), cat(&[b"{}\n", &over]), cat(&[&over, b"\n"])] {
                assert_eq!(batch_lines(&bad, step), Err(io::ErrorKind::InvalidData), "step {step}");
            }
        }
        // The first line (read on its own), and the lines after a first line that opens a multi-line document.
        let mut buf = Vec::new();
        let mut r = io::Cursor::new(cat(&[&max, b"\n", &over, b"\n"]));
        assert_eq!(read_line(&mut r, &mut buf).map(|_| buf.len()).ok(), Some(MAX_LINE));
        assert_eq!(read_line(&mut r, &mut buf).map_err(|e| e.kind()).err(), Some(io::ErrorKind::InvalidData));
        assert!(line_too_long().to_string().contains("longer than 64 MiB"));
        let mut lines = 0;
        let mut r = io::Cursor::new(cat(&[b"{\n\n", &over]));
        let r = start_records(&mut r, &mut |_, _| {
            lines += 1;
            ControlFlow::Continue(())
        });
        assert_eq!((r.map_err(|e| e.kind()).err(), lines), (Some(io::ErrorKind::InvalidData), 2));
    }

    #[test]
    fn batches_hold_a_bounded_number_of_lines() {
        let data = vec![b'\n'; 3 * BATCH_LINES + 5];
        let mut reader = io::Cursor::new(&data);
        let mut carry = Vec::new();
        let mut sizes = Vec::new();
        while let Some(b) = next_batch(&mut reader, &mut carry, batch_buffer()).expect("read") {
            assert_eq!(b.lines, lines_of(b.lines()).count(), "a batch counts its lines");
            sizes.push(b.lines);
        }
        assert_eq!(sizes, vec![BATCH_LINES, BATCH_LINES, BATCH_LINES, 5]);
    }

    #[test]
    fn batches_split_into_the_same_lines_as_the_whole() {
        let inputs: [&[u8]; 6] = [b"", b"\n", b"a\n\nb\r\nc", b"a\nb\n", b"\n\n\n", b"{\"x\":1}\n\r\n{}\nlast"];
        for data in inputs {
            let whole: Vec<&[u8]> = lines_of(data).collect();
            // Cut at every line end: the pieces' lines are the whole's lines.
            let mut joined: Vec<&[u8]> = Vec::new();
            let mut start = 0;
            for (i, &b) in data.iter().enumerate() {
                if b == b'\n' {
                    joined.extend(lines_of(&data[start..=i]));
                    start = i + 1;
                }
            }
            joined.extend(lines_of(&data[start..]));
            assert_eq!(joined, whole, "{data:?}");
        }
        assert_eq!(lines_of(b"a\n\nb\r\nc").collect::<Vec<_>>(), vec![&b"a"[..], b"", b"b", b"c"]);
        assert_eq!(lines_of(b"").count(), 0);
        assert_eq!(lines_of(b"\n").collect::<Vec<_>>(), vec![&b""[..]]);
    }
}

//! `validate`: checks a file or stdin holding one JSON envelope (possibly pretty-printed) or JSONL, line by
//! line with flat memory, and reports one [`Record`] per input record in input order.

use std::io::{self, BufRead, Read};

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
}

/// Counts of one validation run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Summary {
    /// Records checked.
    pub records: usize,
    /// Records with at least one error.
    pub invalid: usize,
}

/// How much input after an incomplete first line is buffered to see whether it is one pretty-printed document.
pub const PRETTY_DOCUMENT_LIMIT: u64 = 16 << 20;

/// One raw input record: its first line number and bytes (without the newline).
pub struct RawRecord {
    /// 1-based line number.
    pub line: usize,
    /// The bytes.
    pub bytes: Vec<u8>,
}

/// Splits input into records: JSONL lines, or one multi-line JSON document when the first line is an
/// incomplete JSON value and the whole input is one complete value.
pub fn records<R: BufRead>(mut reader: R, mut each: impl FnMut(RawRecord)) -> io::Result<()> {
    let mut first = Vec::new();
    let n = read_line(&mut reader, &mut first)?;
    if n == 0 {
        return Ok(());
    }
    let first_incomplete = std::str::from_utf8(&first)
        .ok()
        .filter(|t| !t.trim().is_empty())
        .is_some_and(|t| serde_json::from_str::<serde::de::IgnoredAny>(t).is_err_and(|e| e.is_eof()));
    if first_incomplete {
        // Possibly one pretty-printed document: buffer what follows, up to a bound (a single envelope is small).
        let mut rest = Vec::new();
        (&mut reader).take(PRETTY_DOCUMENT_LIMIT).read_to_end(&mut rest)?;
        if (rest.len() as u64) < PRETTY_DOCUMENT_LIMIT {
            let mut whole = first.clone();
            whole.push(b'\n');
            whole.extend_from_slice(&rest);
            let parses =
                std::str::from_utf8(&whole).ok().is_some_and(|t| serde_json::from_str::<serde::de::IgnoredAny>(t).is_ok());
            if parses {
                each(RawRecord { line: 1, bytes: trim_end(&whole).to_vec() });
                return Ok(());
            }
        }
        each(RawRecord { line: 1, bytes: first });
        let mut chained = io::BufReader::new(io::Cursor::new(rest).chain(reader));
        let mut line = 1;
        let mut buf = Vec::new();
        while read_line(&mut chained, &mut buf)? > 0 {
            line += 1;
            each(RawRecord { line, bytes: std::mem::take(&mut buf) });
        }
        return Ok(());
    }
    each(RawRecord { line: 1, bytes: first });
    let mut line = 1;
    let mut buf = Vec::new();
    while read_line(&mut reader, &mut buf)? > 0 {
        line += 1;
        each(RawRecord { line, bytes: std::mem::take(&mut buf) });
    }
    Ok(())
}

fn trim_end(b: &[u8]) -> &[u8] {
    let mut end = b.len();
    while end > 0 && matches!(b[end - 1], b'\n' | b'\r' | b' ' | b'\t') {
        end -= 1;
    }
    &b[..end]
}

/// Reads one line into `buf` (cleared first) without its `\n` or `\r\n`. Returns bytes consumed (0 at end).
pub fn read_line<R: BufRead>(r: &mut R, buf: &mut Vec<u8>) -> io::Result<usize> {
    buf.clear();
    let n = r.read_until(b'\n', buf)?;
    if buf.last() == Some(&b'\n') {
        buf.pop();
        if buf.last() == Some(&b'\r') {
            buf.pop();
        }
    }
    Ok(n)
}

/// Records per batch handed to the worker threads (a batch is also cut at [`BATCH_BYTES`]).
pub const BATCH_RECORDS: usize = 4096;
/// Bytes per batch: bounds memory to a few batches whatever the input size.
pub const BATCH_BYTES: usize = 4 << 20;

/// Validates every record of `reader` with message-level rules, calling `sink` in input order.
///
/// Work is spread over the machine's cores: a reader thread cuts the input into batches while rayon checks the
/// previous batch in parallel; records still come out in input order and memory stays bounded by a few batches.
///
/// # Errors
/// Only I/O errors while reading; every problem with the data is a [`Record`].
pub fn validate_reader<R: BufRead + Send>(engine: &Engine<'_>, reader: R, mut sink: impl FnMut(Record)) -> io::Result<Summary> {
    use rayon::prelude::*;
    let mut summary = Summary::default();
    std::thread::scope(|scope| {
        let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<RawRecord>>(2);
        let producer = scope.spawn(move || {
            let mut batch = Vec::with_capacity(BATCH_RECORDS);
            let mut bytes = 0;
            records(reader, |raw| {
                bytes += raw.bytes.len();
                batch.push(raw);
                if batch.len() >= BATCH_RECORDS || bytes >= BATCH_BYTES {
                    bytes = 0;
                    // A closed receiver means the consumer stopped; the remaining input is not needed.
                    let _ = tx.send(std::mem::replace(&mut batch, Vec::with_capacity(BATCH_RECORDS)));
                }
            })?;
            if !batch.is_empty() {
                let _ = tx.send(batch);
            }
            Ok::<(), io::Error>(())
        });
        for batch in rx {
            let results: Vec<Vec<Issue>> = if batch.len() > 64 {
                batch.par_iter().map(|r| engine.check_line_fast(&r.bytes)).collect()
            } else {
                batch.iter().map(|r| engine.check_line_fast(&r.bytes)).collect()
            };
            for (raw, errors) in batch.into_iter().zip(results) {
                let rec = Record::new(raw.line, errors);
                summary.records += 1;
                if !rec.valid {
                    summary.invalid += 1;
                }
                sink(rec);
            }
        }
        producer.join().unwrap_or_else(|p| std::panic::resume_unwind(p))
    })?;
    Ok(summary)
}

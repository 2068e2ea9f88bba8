//! `validate`: checks a file or stdin holding one JSON envelope (possibly pretty-printed) or JSONL, line by
//! line with flat memory, and reports one [`Record`] per input record in input order.

use std::collections::BTreeMap;
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
pub(crate) const PRETTY_DOCUMENT_LIMIT: u64 = 16 << 20;

/// Whether a first line is the start of a JSON value that continues on the next lines.
fn first_line_incomplete(first: &[u8]) -> bool {
    std::str::from_utf8(first)
        .ok()
        .filter(|t| !t.trim().is_empty())
        .is_some_and(|t| serde_json::from_str::<serde::de::IgnoredAny>(t).is_err_and(|e| e.is_eof()))
}

/// Splits input into records once its first line (without the newline) has been read, calling `each` with the
/// bytes of each: one multi-line JSON document when the first line is an incomplete JSON value and the whole input
/// is one complete value, else JSONL lines (without their newlines), in order.
fn records_after_first<R: BufRead>(first: Vec<u8>, mut reader: R, each: &mut dyn FnMut(Vec<u8>)) -> io::Result<()> {
    if first_line_incomplete(&first) {
        // Possibly one pretty-printed document: buffer what follows, up to a bound (a single envelope is small).
        let mut rest = Vec::new();
        (&mut reader).take(PRETTY_DOCUMENT_LIMIT).read_to_end(&mut rest)?;
        if (rest.len() as u64) < PRETTY_DOCUMENT_LIMIT {
            let mut whole = first.clone();
            whole.push(b'\n');
            whole.extend_from_slice(&rest);
            let parses = std::str::from_utf8(&whole)
                .ok()
                .is_some_and(|t| serde_json::from_str::<serde::de::IgnoredAny>(t).is_ok());
            if parses {
                each(trim_end(&whole).to_vec());
                return Ok(());
            }
        }
        each(first);
        let mut chained = io::BufReader::new(io::Cursor::new(rest).chain(reader));
        let mut buf = Vec::new();
        while read_line(&mut chained, &mut buf)? > 0 {
            each(std::mem::take(&mut buf));
        }
        return Ok(());
    }
    each(first);
    let mut buf = Vec::new();
    while read_line(&mut reader, &mut buf)? > 0 {
        each(std::mem::take(&mut buf));
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
pub(crate) fn read_line<R: BufRead>(r: &mut R, buf: &mut Vec<u8>) -> io::Result<usize> {
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

/// Bytes per batch handed to the worker threads: bounds memory to a few batches whatever the input size.
pub(crate) const BATCH_BYTES: usize = 1 << 20;

/// The lines of a run of whole lines (each ending in `\n`, except perhaps the last line of the input), without
/// their `\n` or `\r\n`.
fn lines_of(data: &[u8]) -> impl Iterator<Item = &[u8]> {
    let empty = data.is_empty();
    let data = data.strip_suffix(b"\n").unwrap_or(data);
    data.split(|&b| b == b'\n').map(|l| l.strip_suffix(b"\r").unwrap_or(l)).filter(move |_| !empty)
}

/// Reads the next batch of whole lines: at least one line, cut at [`BATCH_BYTES`], or earlier when the input
/// has nothing more to give right now (so a slow pipe still sees its records promptly). `carry` holds a
/// partial last line between calls.
fn next_batch<R: BufRead>(reader: &mut R, carry: &mut Vec<u8>, mut buf: Vec<u8>) -> io::Result<Option<Vec<u8>>> {
    buf.clear();
    buf.append(carry);
    loop {
        let (n, short) = {
            let avail = reader.fill_buf()?;
            let n = avail.len();
            buf.extend_from_slice(avail);
            (n, n < 8192)
        };
        reader.consume(n);
        if n == 0 {
            return Ok((!buf.is_empty()).then_some(buf));
        }
        if buf.len() >= BATCH_BYTES || short {
            if let Some(p) = buf.iter().rposition(|&b| b == b'\n') {
                carry.extend_from_slice(&buf[p + 1..]);
                buf.truncate(p + 1);
                return Ok(Some(buf));
            }
        }
    }
}

/// A batch buffer with room for a whole batch, so that reading never grows it.
fn batch_buffer() -> Vec<u8> {
    Vec::with_capacity(BATCH_BYTES + (64 << 10))
}

/// Validates every record of `reader` with message-level rules, calling `sink` in input order.
///
/// Work is spread over the machine's cores (a reader thread, one worker per core, results in input order); input that fits in one batch is checked on the
/// calling thread, without starting threads.
///
/// # Errors
/// Only I/O errors while reading; every problem with the data is a [`Record`].
pub fn validate_reader<R: BufRead + Send>(
    engine: &Engine,
    mut reader: R,
    mut sink: impl FnMut(Record),
) -> io::Result<Summary> {
    let mut summary = Summary::default();
    let mut next_line = 1;
    let mut emit = |errors: Vec<Issue>| {
        let rec = Record::new(next_line, errors);
        next_line += 1;
        summary.records += 1;
        summary.invalid += usize::from(!rec.valid);
        sink(rec);
    };
    let mut first = Vec::new();
    if read_line(&mut reader, &mut first)? == 0 {
        return Ok(summary);
    }
    if first_line_incomplete(&first) {
        records_after_first(first, reader, &mut |bytes| emit(engine.check_line_fast(&bytes)))?;
        return Ok(summary);
    }
    emit(engine.check_line_fast(&first));
    for_each_line(reader, &|line| engine.check_line_fast(line), &mut emit)?;
    Ok(summary)
}

/// Runs `work` on every line of `reader` (JSONL: each line without its `\n` or `\r\n`) on all cores, and hands the
/// results to `consume` in input order.
///
/// A reader thread cuts the input into batches of whole lines, one worker thread per core runs `work` over a batch
/// at a time, and the calling thread consumes the results in order while the workers go on with the next batches.
/// At most a few batch buffers exist (they are recycled), so memory stays bounded even when `consume` is slow.
/// Input that fits in one batch runs on the calling thread, without starting threads.
///
/// # Errors
/// Only I/O errors while reading.
pub(crate) fn for_each_line<R: BufRead + Send, T: Send>(
    mut reader: R,
    work: &(dyn Fn(&[u8]) -> T + Sync),
    consume: &mut dyn FnMut(T),
) -> io::Result<()> {
    use std::sync::mpsc::{channel, sync_channel};
    use std::sync::Mutex;

    let check = |data: &[u8]| -> Vec<T> { lines_of(data).map(work).collect() };
    let mut carry = Vec::new();
    let Some(head) = next_batch(&mut reader, &mut carry, batch_buffer())? else { return Ok(()) };
    let Some(more) = next_batch(&mut reader, &mut carry, batch_buffer())? else {
        check(&head).into_iter().for_each(consume);
        return Ok(());
    };
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
    // reader -> workers: numbered batches; workers -> here: results, put back in order; here -> reader: buffers.
    let (work_tx, work_rx) = sync_channel::<(usize, Vec<u8>)>(workers);
    let work_rx = Mutex::new(work_rx);
    // At most this many batch buffers exist: the reader waits for a checked one when all are in flight.
    let buffers = 2 * workers + 2;
    let (free_tx, free_rx) = sync_channel::<Vec<u8>>(buffers);
    std::thread::scope(|scope| {
        let (done_tx, done_rx) = channel::<(usize, Vec<u8>, Vec<T>)>();
        let producer = scope.spawn(move || {
            let mut second = Some(more);
            let mut data = Some(head);
            let mut seq = 0;
            let mut allocated = 2;
            while let Some(d) = data {
                // A closed channel means the consumer stopped; the rest of the input is not needed.
                if work_tx.send((seq, d)).is_err() {
                    break;
                }
                seq += 1;
                data = match second.take() {
                    Some(d) => Some(d),
                    None => {
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
                        next_batch(&mut reader, &mut carry, buf)?
                    }
                };
            }
            Ok::<(), io::Error>(())
        });
        for _ in 0..workers {
            let (work_rx, done_tx, check) = (&work_rx, done_tx.clone(), &check);
            scope.spawn(move || loop {
                let next = work_rx.lock().map(|rx| rx.recv());
                let Ok(Ok((seq, data))) = next else { break };
                let results = check(&data);
                if done_tx.send((seq, data, results)).is_err() {
                    break;
                }
            });
        }
        drop(done_tx);
        let mut pending = BTreeMap::new();
        let mut want = 0;
        for (seq, data, results) in done_rx {
            pending.insert(seq, (data, results));
            while let Some((data, results)) = pending.remove(&want) {
                results.into_iter().for_each(&mut *consume);
                let _ = free_tx.send(data);
                want += 1;
            }
        }
        producer.join().unwrap_or_else(|p| std::panic::resume_unwind(p))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

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

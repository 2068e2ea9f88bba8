//! Reading request bodies: the content type, a size-limited frame reader, and a JSONL line splitter that
//! works on frames as they arrive (only the current partial line is kept).

use std::pin::Pin;

use axum::body::{Body, Bytes, HttpBody};
use axum::http::{header, HeaderMap};

use super::error::{ApiError, ErrorCode};

/// What the body holds, from its `Content-Type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `application/json`: one envelope (possibly pretty-printed).
    Json,
    /// `application/x-ndjson` (or `application/jsonl`): one envelope per line.
    Jsonl,
}

/// The body kind from the headers.
///
/// # Errors
/// 415 `unsupported-media-type` for a missing, repeated or other content type, a charset other than UTF-8, or a
/// content encoding (`gzip`, ...), in any of the fields that carry one: the body would be read as text it is not.
/// 501 `unsupported-transfer-coding` for a transfer coding other than `chunked` (`gzip, chunked`: the HTTP layer
/// undoes the chunking alone, RFC 9112 section 6.1).
pub fn kind(headers: &HeaderMap) -> Result<Kind, ApiError> {
    let expected = "expected `application/json` (one envelope) or `application/x-ndjson` (one envelope per line; also \
                    `application/jsonl`, `application/x-jsonlines`)";
    // Every field of a list-valued header, as one comma-separated list (RFC 9110 section 5.3).
    let codings = |name| -> String {
        let fields = headers.get_all(name).iter().map(|v| v.to_str().unwrap_or("?").trim().to_ascii_lowercase());
        fields.collect::<Vec<_>>().join(", ")
    };
    let is_only = |list: &str, coding: &str| list.split(',').map(str::trim).all(|c| c.is_empty() || c == coding);
    let enc = codings(header::CONTENT_ENCODING);
    if !is_only(&enc, "identity") {
        return Err(ApiError::new(
            ErrorCode::UnsupportedMediaType,
            format!("Content-Encoding `{enc}`: the body must be sent unencoded"),
        ));
    }
    let te = codings(header::TRANSFER_ENCODING);
    // `chunked` applied twice (`chunked, chunked`) is a coding before the final `chunked` too (RFC 9112 section
    // 6.1: a sender must not).
    if !is_only(&te, "chunked") || te.matches("chunked").count() > 1 {
        return Err(ApiError::new(
            ErrorCode::UnsupportedTransferCoding,
            format!("Transfer-Encoding `{te}`: only `chunked`, once, is read"),
        ));
    }
    let mut types = headers.get_all(header::CONTENT_TYPE).iter();
    let Some(ct) = types.next() else {
        return Err(ApiError::new(ErrorCode::UnsupportedMediaType, format!("no Content-Type: {expected}")));
    };
    if types.next().is_some() {
        return Err(ApiError::new(
            ErrorCode::UnsupportedMediaType,
            format!("Content-Type given more than once: {expected}, once"),
        ));
    }
    let ct = String::from_utf8_lossy(ct.as_bytes()).to_ascii_lowercase();
    let mut parts = ct.split(';').map(str::trim);
    let media = parts.next().unwrap_or("");
    for p in parts {
        // `name=value`; spaces around `=` are not HTTP (RFC 9110 section 5.6.6), but a charset written so still
        // says what the body is.
        let Some((name, value)) = p.split_once('=') else { continue };
        if name.trim_end() == "charset" {
            let cs = value.trim_start().trim_matches('"');
            if cs != "utf-8" && cs != "utf8" {
                return Err(ApiError::new(
                    ErrorCode::UnsupportedMediaType,
                    format!("charset `{cs}`: only UTF-8 is accepted"),
                ));
            }
        }
    }
    match media {
        "application/json" => Ok(Kind::Json),
        "application/x-ndjson" | "application/jsonl" | "application/x-jsonlines" => Ok(Kind::Jsonl),
        other => Err(ApiError::new(ErrorCode::UnsupportedMediaType, format!("Content-Type `{other}`: {expected}"))),
    }
}

/// A body read frame by frame that fails once more than `max` bytes have arrived.
pub struct Limited {
    body: Body,
    seen: u64,
    max: u64,
}

impl Limited {
    /// Checks `Content-Length` against `max` before anything is read.
    ///
    /// # Errors
    /// 413 `body-too-large` when the declared length is over the limit.
    pub fn new(body: Body, headers: &HeaderMap, max: u64) -> Result<Self, ApiError> {
        let declared =
            headers.get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.parse::<u64>().ok());
        if let Some(n) = declared {
            if n > max {
                return Err(too_large(max, Some(n)));
            }
        }
        Ok(Limited { body, seen: 0, max })
    }

    /// The next chunk of data, or `None` at the end.
    ///
    /// # Errors
    /// 413 `body-too-large` once the limit is passed; 400 `unreadable-body` when the body breaks off.
    pub async fn next(&mut self) -> Result<Option<Bytes>, ApiError> {
        loop {
            let frame = std::future::poll_fn(|cx| Pin::new(&mut self.body).poll_frame(cx)).await;
            match frame {
                None => return Ok(None),
                Some(Err(e)) => {
                    return Err(ApiError::new(
                        ErrorCode::UnreadableBody,
                        format!(
                            "the body could not be read after {}: {e}",
                            crate::engine::counted(self.seen, "byte", "bytes")
                        ),
                    ))
                }
                Some(Ok(f)) => {
                    let Ok(data) = f.into_data() else { continue }; // trailers
                    self.seen += data.len() as u64;
                    if self.seen > self.max {
                        return Err(too_large(self.max, None));
                    }
                    return Ok(Some(data));
                }
            }
        }
    }
}

fn too_large(max: u64, declared: Option<u64>) -> ApiError {
    let what = match declared {
        Some(n) => format!("the body is {n} bytes"),
        None => format!("the body is over {max} bytes"),
    };
    ApiError::new(ErrorCode::BodyTooLarge, format!("{what}; the limit is {max} bytes (--max-body)"))
}

/// Splits a byte stream into lines as chunks arrive, with the same line rules as `wiregen validate`: lines end
/// at `\n`, a `\r` before it is dropped, a last line without `\n` counts, an empty input has no lines.
#[derive(Debug, Default)]
pub struct Lines {
    pending: Vec<u8>,
    line: usize,
}

impl Lines {
    /// Feeds one chunk; calls `each(line_number, bytes)` for every line it completes.
    pub fn feed(&mut self, mut chunk: &[u8], each: &mut impl FnMut(usize, &[u8])) {
        while let Some(i) = chunk.iter().position(|&b| b == b'\n') {
            let (head, rest) = (&chunk[..i], &chunk[i + 1..]);
            self.line += 1;
            if self.pending.is_empty() {
                each(self.line, strip_cr(head));
            } else {
                self.pending.extend_from_slice(head);
                each(self.line, strip_cr(&self.pending));
                self.pending.clear();
            }
            chunk = rest;
        }
        self.pending.extend_from_slice(chunk);
    }

    /// Ends the input: the last line, if it had no newline.
    pub fn finish(&mut self, each: &mut impl FnMut(usize, &[u8])) {
        if !self.pending.is_empty() {
            self.line += 1;
            let last = std::mem::take(&mut self.pending);
            each(self.line, &last);
        }
    }

    /// Bytes held for the current, unfinished line.
    pub fn pending(&self) -> usize {
        self.pending.len()
    }
}

fn strip_cr(b: &[u8]) -> &[u8] {
    b.strip_suffix(b"\r").unwrap_or(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(chunks: &[&[u8]]) -> Vec<(usize, Vec<u8>)> {
        let mut out = Vec::new();
        let mut l = Lines::default();
        let mut each = |n: usize, b: &[u8]| out.push((n, b.to_vec()));
        for c in chunks {
            l.feed(c, &mut each);
        }
        l.finish(&mut each);
        out
    }

    fn reference(input: &[u8]) -> Vec<(usize, Vec<u8>)> {
        let mut r = std::io::Cursor::new(input);
        let mut out = Vec::new();
        let mut buf = Vec::new();
        while crate::validate::read_line(&mut r, &mut buf).unwrap() > 0 {
            out.push((out.len() + 1, buf.clone()));
        }
        out
    }

    #[test]
    fn lines_match_validate_for_every_chunking() {
        let inputs: &[&[u8]] =
            &[b"", b"a", b"a\n", b"a\nb", b"a\r\nb\r\n", b"\n\n", b"a\n\nb\n", b"{\"x\":1}\r\n\xff\xfe\n{}", b"\r\n"];
        for input in inputs {
            let want = reference(input);
            for size in 1..=input.len().max(1) {
                let chunks: Vec<&[u8]> = input.chunks(size).collect();
                assert_eq!(split(&chunks), want, "input {input:?} in chunks of {size}");
            }
        }
    }

    #[test]
    fn only_the_partial_line_is_kept() {
        let mut l = Lines::default();
        let mut n = 0;
        l.feed(b"{}\n{}\n{\"a\":", &mut |_, _| n += 1);
        assert_eq!((n, l.pending()), (2, 5));
    }

    #[test]
    fn content_types() {
        let mut h = HeaderMap::new();
        assert_eq!(kind(&h).unwrap_err().code, ErrorCode::UnsupportedMediaType);
        for (ct, k) in [
            ("application/json", Some(Kind::Json)),
            ("Application/JSON; charset=UTF-8", Some(Kind::Json)),
            ("application/x-ndjson", Some(Kind::Jsonl)),
            ("application/json; charset=latin1", None),
            ("application/json; charset = latin1", None),
            ("application/json;charset=\"utf-8\"", Some(Kind::Json)),
            ("text/plain", None),
        ] {
            h.insert(header::CONTENT_TYPE, ct.parse().unwrap());
            assert_eq!(kind(&h).ok(), k, "{ct}");
        }
        // A value that is not ASCII is shown as it came, not as an empty name.
        h.insert(header::CONTENT_TYPE, axum::http::HeaderValue::from_bytes(b"text/\xe9t\xe9").unwrap());
        assert!(kind(&h).unwrap_err().message.contains("text/\u{fffd}t\u{fffd}"), "{}", kind(&h).unwrap_err().message);
        // An encoded body is not the text it would be read as.
        h.insert(header::CONTENT_TYPE, "application/x-ndjson".parse().unwrap());
        for (enc, k) in [("identity", Some(Kind::Jsonl)), ("gzip", None), ("br", None), ("GZIP, identity", None)] {
            h.insert(header::CONTENT_ENCODING, enc.parse().unwrap());
            assert_eq!(kind(&h).ok(), k, "{enc}");
        }
        assert!(kind(&h).unwrap_err().message.contains("Content-Encoding `gzip, identity`"));
        // Every field counts: a second field cannot hide an encoding, a type or a transfer coding behind the first.
        h.insert(header::CONTENT_ENCODING, "identity".parse().unwrap());
        h.append(header::CONTENT_ENCODING, "gzip".parse().unwrap());
        assert!(kind(&h).unwrap_err().message.contains("Content-Encoding `identity, gzip`"));
        h.remove(header::CONTENT_ENCODING);
        h.append(header::CONTENT_TYPE, "text/plain".parse().unwrap());
        assert_eq!(kind(&h).unwrap_err().code, ErrorCode::UnsupportedMediaType);
        h.insert(header::CONTENT_TYPE, "application/x-ndjson".parse().unwrap());
        for (te, k) in [
            ("chunked", Ok(Kind::Jsonl)),
            ("gzip, chunked", Err(ErrorCode::UnsupportedTransferCoding)),
            ("chunked, chunked", Err(ErrorCode::UnsupportedTransferCoding)),
        ] {
            h.insert(header::TRANSFER_ENCODING, te.parse().unwrap());
            assert_eq!(kind(&h).map_err(|e| e.code), k, "{te}");
        }
        h.insert(header::TRANSFER_ENCODING, "chunked".parse().unwrap());
        h.append(header::TRANSFER_ENCODING, "x-custom".parse().unwrap());
        assert!(kind(&h).unwrap_err().message.contains("Transfer-Encoding `chunked, x-custom`"));
    }
}

//! JSON tokens on raw bytes for the fast path: strings (escapes, control bytes and UTF-8 checked in the one pass
//! that finds the closing quote), numbers (read exactly or not at all) and whitespace.
//!
//! Every function answers `None` when the input is not what serde_json would accept *or* when the answer is not
//! cheap to get exactly (a lone surrogate escape, a number too large to hold): the caller then leaves the line to
//! the precise path, which parses it with serde_json itself. So these functions may refuse valid input, but
//! never accept input serde_json rejects.

#[cfg(any(test, not(target_arch = "x86_64")))]
const ONES: u64 = 0x0101_0101_0101_0101;
#[cfg(any(test, not(target_arch = "x86_64")))]
const HIGH: u64 = 0x8080_8080_8080_8080;

/// Marks the bytes of `w` (little-endian) that end a plain run inside a string: `"`, `\`, a control byte (below
/// 0x20) or a non-ASCII byte. The lowest marked byte is exact; bytes above it may be marked spuriously (a borrow
/// only leaves a byte that is itself marked), which does not matter since the scan stops at the lowest.
#[cfg(any(test, not(target_arch = "x86_64")))]
#[inline(always)]
fn specials(w: u64) -> u64 {
    let quote = w ^ (ONES * u64::from(b'"'));
    let backslash = w ^ (ONES * u64::from(b'\\'));
    (quote.wrapping_sub(ONES) | backslash.wrapping_sub(ONES) | w.wrapping_sub(ONES * 0x20) | w) & HIGH
}

/// Skips JSON whitespace from `i`; the index of the first other byte (or the end).
#[inline(always)]
pub(super) fn ws(b: &[u8], mut i: usize) -> usize {
    while let Some(&c) = b.get(i) {
        if !matches!(c, b' ' | b'\n' | b'\r' | b'\t') {
            break;
        }
        i += 1;
    }
    i
}

/// A bit per byte of `chunk` (bit 0 for its first) that ends a plain run inside a string: `"`, `\\`, a control
/// byte or a non-ASCII byte.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn special_mask16(chunk: &[u8; 16]) -> u32 {
    use std::arch::x86_64::*;
    // SAFETY: SSE2 is part of the x86_64 baseline; the unaligned load reads exactly the 16 bytes of `chunk`.
    let m = unsafe {
        let v = _mm_loadu_si128(chunk.as_ptr().cast());
        let quote = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8));
        let backslash = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8));
        // A signed comparison: below 0x20 (control) or from 0x80 up (non-ASCII, negative as i8).
        let other = _mm_cmplt_epi8(v, _mm_set1_epi8(0x20));
        _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(quote, backslash), other))
    };
    m as u32
}

/// The same from two 8-byte words where SSE2 is not available.
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn special_mask16(chunk: &[u8; 16]) -> u32 {
    special_mask16_words(chunk)
}

/// [`special_mask16`] from two 8-byte words: only its lowest bit (all the scan uses) is exact.
#[cfg(any(test, not(target_arch = "x86_64")))]
#[inline(always)]
fn special_mask16_words(chunk: &[u8; 16]) -> u32 {
    let (lo, hi) = chunk.split_at(8);
    let word = |h: &[u8]| u64::from_le_bytes(h.try_into().unwrap_or([0; 8]));
    // Only the lowest marked byte of each word is exact: keep that one.
    let bits = |m: u64| if m == 0 { 0 } else { 1u32 << (m.trailing_zeros() / 8) };
    match bits(specials(word(lo))) {
        0 => bits(specials(word(hi))) << 8,
        m => m,
    }
}

/// [`special_mask16`] with every bit exact (for the tail of a line, where the bytes before the scan are masked
/// off): SSE2 gives that; elsewhere a loop over the 16 bytes.
#[inline(always)]
fn special_mask16_all(chunk: &[u8; 16]) -> u32 {
    #[cfg(target_arch = "x86_64")]
    {
        special_mask16(chunk)
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        chunk.iter().enumerate().filter(|(_, &c)| is_special(c)).fold(0, |m, (k, _)| m | 1 << k)
    }
}

/// Whether a byte ends a plain run inside a string.
#[cfg(any(test, not(target_arch = "x86_64")))]
fn is_special(c: u8) -> bool {
    c == b'"' || c == b'\\' || !(0x20..0x80).contains(&c)
}

/// The first byte of `chunk` that ends a plain run inside a string, if any.
#[inline(always)]
fn first_special16(chunk: &[u8; 16]) -> Option<usize> {
    let m = special_mask16(chunk);
    (m != 0).then(|| m.trailing_zeros() as usize)
}

/// A string whose opening quote is at `i`: the index just past its closing quote, and whether it holds an
/// escape. Its content (`b[i + 1..end - 1]`) is then valid UTF-8 with valid escapes and no control byte.
#[inline]
pub(super) fn string(b: &[u8], i: usize) -> Option<(usize, bool)> {
    debug_assert_eq!(b.get(i), Some(&b'"'));
    let mut i = i + 1;
    let mut escaped = false;
    loop {
        loop {
            // Two chunks at a time while they last (a long text has few special bytes), then one.
            if let Some(pair) = b.get(i..).and_then(<[u8]>::first_chunk::<32>) {
                let (lo, hi) = pair.split_at(16);
                let lo = special_mask16(lo.try_into().unwrap_or(&[0; 16]));
                let m = if lo != 0 { lo } else { special_mask16(hi.try_into().unwrap_or(&[0; 16])) << 16 };
                if m != 0 {
                    i += m.trailing_zeros() as usize;
                    break;
                }
                i += 32;
                continue;
            }
            if let Some(chunk) = b.get(i..).and_then(<[u8]>::first_chunk::<16>) {
                if let Some(at) = first_special16(chunk) {
                    i += at;
                    break;
                }
                i += 16;
            } else {
                // Fewer than 16 bytes left: the line's last 16, without the bytes before `i`.
                if let Some(base) = b.len().checked_sub(16) {
                    let m = special_mask16_all(b[base..].first_chunk::<16>()?) >> (i - base);
                    i = if m == 0 { b.len() } else { i + m.trailing_zeros() as usize };
                }
                break;
            }
        }
        match *b.get(i)? {
            b'"' => return Some((i + 1, escaped)),
            b'\\' => {
                escaped = true;
                i = escape(b, i)?;
            }
            0..=0x1F => return None,
            0x80.. => i = utf8(b, i)?,
            _ => i += 1,
        }
    }
}

/// A key of at most 15 plain bytes (no escape, ASCII, no control byte) whose opening quote is at `i`, read from
/// one 16-byte load: its length and its bytes as two little-endian words, zero-padded. `None` when the key is
/// anything else (the caller then reads it with [`string`]) or when fewer than 16 bytes follow the quote.
#[inline(always)]
pub(super) fn short_key(b: &[u8], i: usize) -> Option<(usize, u64, u64)> {
    if b.get(i) != Some(&b'"') {
        return None;
    }
    let chunk = b.get(i + 1..)?.first_chunk::<16>()?;
    let n = first_special16(chunk)?;
    if chunk[n] != b'"' {
        return None;
    }
    let (w0, w1) = words16(chunk);
    Some((n, w0 & low_bytes(n), w1 & low_bytes(n.saturating_sub(8))))
}

/// The first 16 bytes of `name` as two little-endian words, zero-padded (the key words of [`short_key`]).
pub(super) fn key_words(name: &[u8]) -> (u64, u64) {
    let mut a = [0u8; 16];
    let n = name.len().min(16);
    a[..n].copy_from_slice(&name[..n]);
    words16(&a)
}

/// The 16 bytes at `b[i..]` as two little-endian words, if there are 16.
#[inline(always)]
pub(super) fn words_at(b: &[u8], i: usize) -> Option<(u64, u64)> {
    Some(words16(b.get(i..)?.first_chunk::<16>()?))
}

#[inline(always)]
fn words16(a: &[u8; 16]) -> (u64, u64) {
    let (lo, hi) = a.split_at(8);
    let word = |h: &[u8]| u64::from_le_bytes(h.try_into().unwrap_or([0; 8]));
    (word(lo), word(hi))
}

/// A mask of the low `n` bytes of a word (all of them from 8 up).
#[inline(always)]
fn low_bytes(n: usize) -> u64 {
    if n >= 8 {
        u64::MAX
    } else {
        (1u64 << (8 * n)) - 1
    }
}

/// An escape whose backslash is at `i`: the index past it. A `\u` surrogate must be a high one followed by a low
/// one (serde_json rejects lone surrogates when it builds a string).
#[inline]
fn escape(b: &[u8], i: usize) -> Option<usize> {
    match *b.get(i + 1)? {
        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => Some(i + 2),
        b'u' => {
            let c = hex4(b, i + 2)?;
            match c {
                0xD800..=0xDBFF => {
                    if b.get(i + 6) != Some(&b'\\') || b.get(i + 7) != Some(&b'u') {
                        return None;
                    }
                    matches!(hex4(b, i + 8)?, 0xDC00..=0xDFFF).then_some(i + 12)
                }
                0xDC00..=0xDFFF => None,
                _ => Some(i + 6),
            }
        }
        _ => None,
    }
}

fn hex4(b: &[u8], i: usize) -> Option<u32> {
    let h = b.get(i..i + 4)?;
    h.iter().try_fold(0u32, |acc, &c| Some(acc << 4 | char::from(c).to_digit(16)?))
}

/// A UTF-8 sequence whose lead byte (non-ASCII) is at `i`: the index past it, if it is well formed (shortest
/// form, no surrogate, at most U+10FFFF), exactly as `std::str::from_utf8` decides.
#[inline]
fn utf8(b: &[u8], i: usize) -> Option<usize> {
    let cont = |j: usize| b.get(j).is_some_and(|&c| c & 0xC0 == 0x80);
    let second = |lo: u8, hi: u8| b.get(i + 1).is_some_and(|&c| (lo..=hi).contains(&c));
    match b[i] {
        0xC2..=0xDF => cont(i + 1).then_some(i + 2),
        0xE0 => (second(0xA0, 0xBF) && cont(i + 2)).then_some(i + 3),
        0xE1..=0xEC | 0xEE..=0xEF => (cont(i + 1) && cont(i + 2)).then_some(i + 3),
        0xED => (second(0x80, 0x9F) && cont(i + 2)).then_some(i + 3),
        0xF0 => (second(0x90, 0xBF) && cont(i + 2) && cont(i + 3)).then_some(i + 4),
        0xF1..=0xF3 => (cont(i + 1) && cont(i + 2) && cont(i + 3)).then_some(i + 4),
        0xF4 => (second(0x80, 0x8F) && cont(i + 2) && cont(i + 3)).then_some(i + 4),
        _ => None,
    }
}

/// Decodes the content of a string that [`string`] accepted (so every escape is well formed) into `out`.
pub(super) fn decode(raw: &[u8], out: &mut Vec<u8>) -> Option<()> {
    out.clear();
    let mut i = 0;
    while let Some(at) = memchr::memchr(b'\\', &raw[i..]) {
        out.extend_from_slice(&raw[i..i + at]);
        i += at;
        let c = match *raw.get(i + 1)? {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            _ => {
                let hi = hex4(raw, i + 2)?;
                if (0xD800..=0xDBFF).contains(&hi) {
                    let lo = hex4(raw, i + 8)?;
                    i += 6;
                    char::from_u32(0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00))?
                } else {
                    char::from_u32(hi)?
                }
            }
        };
        i += if matches!(raw[i + 1], b'u') { 6 } else { 2 };
        out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
    }
    out.extend_from_slice(&raw[i..]);
    Some(())
}

/// A number starting at `i`: the index past it, its value as serde_json gives it to a validator (`u64`/`i64`
/// converted to `f64`, or the correctly rounded `f64` of the text, since the workspace enables serde_json's
/// `float_roundtrip`). `None` for bad syntax (a leading zero, a lone `-`, `1.`, `1e`), and for a value serde_json
/// rejects (out of `f64` range). The flag says the number was read as a plain integer (so it has no fraction).
#[inline]
pub(super) fn number(b: &[u8], start: usize) -> Option<(usize, f64, bool)> {
    // The common case in one pass: a plain integer of 1 to 19 digits not starting with 0.
    let neg = b.get(start) == Some(&b'-');
    let first = start + usize::from(neg);
    if let Some(d @ b'1'..=b'9') = b.get(first) {
        let mut mag = u64::from(d - b'0');
        let mut i = first + 1;
        // Eight digits at a time while they fit in 19.
        while let Some(w) = b.get(i..).and_then(<[u8]>::first_chunk::<8>).map(|w| u64::from_le_bytes(*w)) {
            if i - first > 11 || !eight_digits(w) {
                break;
            }
            mag = mag * 100_000_000 + parse_eight(w);
            i += 8;
        }
        while let Some(d @ b'0'..=b'9') = b.get(i) {
            if i - first == 19 {
                break;
            }
            mag = mag * 10 + u64::from(d - b'0');
            i += 1;
        }
        if !matches!(b.get(i), Some(b'0'..=b'9' | b'.' | b'e' | b'E')) {
            let v = mag as f64;
            return Some((i, if neg { -v } else { v }, true));
        }
    }
    number_slow(b, start).map(|(end, v)| (end, v, false))
}

/// Whether the 8 bytes of `w` are all ASCII digits.
#[inline(always)]
fn eight_digits(w: u64) -> bool {
    const LOW: u64 = 0x0F0F_0F0F_0F0F_0F0F;
    (w & !LOW) == 0x3030_3030_3030_3030 && ((w.wrapping_add(0x0606_0606_0606_0606)) & !LOW) == 0x3030_3030_3030_3030
}

/// The value of 8 ASCII digits (the first, lowest byte is the most significant).
#[inline(always)]
fn parse_eight(w: u64) -> u64 {
    let w = w - 0x3030_3030_3030_3030;
    let w = (w * 10 + (w >> 8)) & 0x00FF_00FF_00FF_00FF;
    let w = (w * 100 + (w >> 16)) & 0x0000_FFFF_0000_FFFF;
    (w * 10_000 + (w >> 32)) & 0xFFFF_FFFF
}

/// [`number`] for any number.
fn number_slow(b: &[u8], start: usize) -> Option<(usize, f64)> {
    let (end, simple, digits) = number_syntax(b, start)?;
    let neg = b[start] == b'-';
    if simple && digits <= 19 {
        let first = start + usize::from(neg);
        let mag = b[first..end].iter().fold(0u64, |acc, &c| acc * 10 + u64::from(c - b'0'));
        let v = mag as f64;
        return Some((end, if neg { -v } else { v }));
    }
    let v: f64 = std::str::from_utf8(&b[start..end]).ok()?.parse().ok()?;
    v.is_finite().then_some((end, v))
}

/// Like [`number`] when only validity matters (a value nobody constrains): parses the digits only when the
/// number could be out of range.
#[inline]
pub(super) fn skip_number(b: &[u8], start: usize) -> Option<usize> {
    let first = start + usize::from(b.get(start) == Some(&b'-'));
    if let Some(b'1'..=b'9') = b.get(first) {
        let mut i = first + 1;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if i - first <= 300 && !matches!(b.get(i), Some(b'.' | b'e' | b'E')) {
            return Some(i);
        }
    }
    let (end, simple, digits) = number_syntax(b, start)?;
    if digits <= 300 && (simple || !b[start..end].iter().any(|&c| c == b'e' || c == b'E')) {
        return Some(end);
    }
    number_slow(b, start).map(|(end, _)| end)
}

/// The JSON number grammar from `start`: the end, whether it is an integer without fraction or exponent, and how
/// many digits its integer part has.
#[inline(always)]
fn number_syntax(b: &[u8], start: usize) -> Option<(usize, bool, usize)> {
    let digits_from = |mut i: usize| {
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        i
    };
    let mut i = start + usize::from(b.get(start) == Some(&b'-'));
    let int_start = i;
    match *b.get(i)? {
        b'0' => i += 1,
        b'1'..=b'9' => i = digits_from(i + 1),
        _ => return None,
    }
    let digits = i - int_start;
    let mut simple = true;
    if b.get(i) == Some(&b'.') {
        let end = digits_from(i + 1);
        if end == i + 1 {
            return None;
        }
        i = end;
        simple = false;
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        let end = digits_from(i);
        if end == i {
            return None;
        }
        i = end;
        simple = false;
    }
    // A digit right after a leading zero (`01`) is not JSON.
    if b.get(i).is_some_and(u8::is_ascii_digit) {
        return None;
    }
    Some((i, simple, digits))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn str_ok(s: &str) -> Option<bool> {
        let b = s.as_bytes();
        let (end, esc) = string(b, 0)?;
        (end == b.len()).then_some(esc)
    }

    fn serde_str_ok(s: &str) -> bool {
        serde_json::from_str::<serde_json::Value>(s).is_ok()
    }

    #[test]
    fn strings_agree_with_serde_json() {
        let cases = [
            r#""""#,
            r#""plain ascii text that is longer than eight bytes""#,
            r#""é→😀 mixed ünïcödé, longer than a word""#,
            r#""esc \" \\ \/ \b \f \n \r \t""#,
            r#""\u0041\u00e9\u2192""#,
            r#""\ud83d\ude00""#,
            r#""\ud800""#,
            r#""\udc00""#,
            r#""\ud800\u0041""#,
            r#""\ud800x""#,
            r#""\x""#,
            r#""\u12""#,
            r#""\u12g4""#,
            "\"tab\there\"",
            "\"nul\u{0}\"",
            "\"del\u{7f}\"",
            "\"unterminated",
            "\"ends in backslash\\",
            r#""a"#,
        ];
        for c in cases {
            assert_eq!(str_ok(c).is_some(), serde_str_ok(c), "{c:?}");
        }
        assert_eq!(str_ok(r#""plain""#), Some(false));
        assert_eq!(str_ok(r#""a\nb""#), Some(true));
    }

    #[test]
    fn invalid_utf8_is_refused_like_from_utf8() {
        let bad: [&[u8]; 10] = [
            b"\xff",
            b"\xc0\x80",
            b"\xc3",
            b"\xe0\x80\x80",
            b"\xed\xa0\x80",
            b"\xf0\x80\x80\x80",
            b"\xf4\x90\x80\x80",
            b"\xf5\x80\x80\x80",
            b"\x80",
            b"\xe2\x86",
        ];
        let good: [&[u8]; 5] =
            [b"\xc3\xa9", b"\xe2\x86\x92", b"\xf0\x9f\x98\x80", b"\xef\xbf\xbf", b"\xf4\x8f\xbf\xbf"];
        for (bytes, ok) in bad.iter().map(|b| (b, false)).chain(good.iter().map(|b| (b, true))) {
            for pad in ["", "0123456789abcdef"] {
                let mut s = b"\"".to_vec();
                s.extend_from_slice(pad.as_bytes());
                s.extend_from_slice(bytes);
                s.extend_from_slice(pad.as_bytes());
                s.push(b'"');
                assert_eq!(std::str::from_utf8(bytes).is_ok(), ok);
                let got = string(&s, 0).is_some_and(|(end, _)| end == s.len());
                assert_eq!(got, ok, "{bytes:x?} with padding {pad:?}");
            }
        }
    }

    #[test]
    fn control_bytes_are_refused_at_every_offset() {
        // Lengths that end inside the first chunk, in a pair of chunks, and past two pairs.
        for len in [20, 40, 70] {
            for at in 0..len {
                for c in [0u8, 0x1F, b'\n'] {
                    let mut s = vec![b'a'; len];
                    s[at] = c;
                    let mut q = b"\"".to_vec();
                    q.extend_from_slice(&s);
                    q.push(b'"');
                    assert_eq!(string(&q, 0), None, "byte {c:#x} at {at} of {len}");
                }
            }
        }
    }

    #[test]
    fn the_closing_quote_and_an_escape_are_found_at_every_offset() {
        for len in 0..100 {
            // A plain string followed by more line, so the scan's chunks reach past the closing quote.
            let mut q = b"\"".to_vec();
            q.extend(std::iter::repeat_n(b'x', len));
            q.extend_from_slice(b"\",\"after\":\"more text after the string\"}");
            assert_eq!(string(&q, 0), Some((len + 2, false)), "plain, {len} bytes");
            if len > 0 {
                let mut e = q.clone();
                e[len] = b'\\';
                e.insert(len + 1, b'n');
                assert_eq!(string(&e, 0), Some((len + 3, true)), "escape at {len}");
            }
        }
    }

    #[test]
    fn the_word_scan_finds_the_same_first_special_byte() {
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let interesting = [b'"', b'\\', 0, 0x1F, 0x20, 0x21, 0x7F, 0x80, 0xC3, 0xFF, b'a', b'0', b'"' ^ 1, b'\\' ^ 1];
        for _ in 0..20_000 {
            let mut chunk = [b'a'; 16];
            for byte in chunk.iter_mut() {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                if state.is_multiple_of(4) {
                    *byte = interesting[(state >> 8) as usize % interesting.len()];
                }
            }
            let want = chunk.iter().position(|&c| is_special(c));
            let all = chunk.iter().enumerate().filter(|(_, &c)| is_special(c)).fold(0, |m, (k, _)| m | 1 << k);
            let first = |m: u32| (m != 0).then(|| m.trailing_zeros() as usize);
            assert_eq!(special_mask16_all(&chunk), all, "{chunk:x?}");
            assert_eq!(first(special_mask16(&chunk)), want, "{chunk:x?}");
            assert_eq!(first(special_mask16_words(&chunk)), want, "{chunk:x?}");
        }
    }

    #[test]
    fn decode_matches_serde_json() {
        for c in [r#""a\nb\u00e9\ud83d\ude00\"\\\/\b\f\r\t end""#, r#""no escape""#, r#""\u0000""#] {
            let raw = &c.as_bytes()[1..c.len() - 1];
            let mut out = Vec::new();
            decode(raw, &mut out).expect("decodes");
            let want: String = serde_json::from_str(c).expect("json");
            assert_eq!(out, want.as_bytes(), "{c}");
        }
    }

    #[test]
    fn numbers_agree_with_serde_json() {
        let cases = [
            "0",
            "-0",
            "1",
            "-1",
            "1.0",
            "1e2",
            "1E+2",
            "1e-2",
            "-0.0",
            "9007199254740993",
            "18446744073709551615",
            "18446744073709551616",
            "-9223372036854775808",
            "-9223372036854775809",
            "9999999999999999999",
            "1234567890123456789",
            "-1234567890123456789",
            "12345678",
            "123456789",
            "1739347200007",
            "1234567:",
            "12345678/",
            "99999999999999999999",
            "1e308",
            "1.7976931348623157e308",
            "1.7976931348623159e308",
            "1e309",
            "-1e400",
            "1e-400",
            "0e999999999999999999999",
            "0.1",
            "123.456e-7",
            "01",
            "-",
            "1.",
            ".5",
            "1e",
            "1e+",
            "+1",
            "-01",
            "00",
            "1.5e3x",
        ];
        for c in cases {
            let b = c.as_bytes();
            let ours = number(b, 0).filter(|(end, _, _)| *end == b.len()).map(|(_, v, _)| v);
            let theirs = serde_json::from_str::<serde_json::Value>(c).ok().and_then(|v| v.as_f64());
            assert_eq!(ours.map(f64::to_bits), theirs.map(f64::to_bits), "{c}");
            let skip = skip_number(b, 0).filter(|end| *end == b.len());
            assert_eq!(skip.is_some(), theirs.is_some(), "skip {c}");
        }
        let long = format!("1{}", "0".repeat(400));
        assert!(serde_json::from_str::<serde_json::Value>(&long).is_err());
        assert_eq!(skip_number(long.as_bytes(), 0), None);
        let long_frac = format!("{}.5", "1".repeat(350));
        assert!(serde_json::from_str::<serde_json::Value>(&long_frac).is_err());
        assert_eq!(skip_number(long_frac.as_bytes(), 0), None);
    }
}

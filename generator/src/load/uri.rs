//! URI references as JSON Schema uses them: resolving a `$ref` against the base URI of the schema that holds
//! it (RFC 3986, section 5.2), and JSON Pointer fragments.

/// Splits a URI into the part before `#` and the fragment (without `#`).
pub(crate) fn split_fragment(uri: &str) -> (&str, &str) {
    uri.split_once('#').unwrap_or((uri, ""))
}

/// The scheme of a URI (`https`, `urn`, `wiregen`), if it has one.
fn scheme(s: &str) -> Option<&str> {
    let end = s.find(':')?;
    let sch = &s[..end];
    let mut chars = sch.chars();
    let first = chars.next()?;
    (first.is_ascii_alphabetic() && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))
        .then_some(sch)
}

/// Resolves `reference` against the absolute URI `base`. Returns `None` when the result is not defined (a
/// relative path against a URI that has no hierarchical path, such as a URN).
pub(crate) fn resolve(base: &str, reference: &str) -> Option<String> {
    let (base, _) = split_fragment(base);
    if scheme(reference).is_some() {
        let (r, frag) = split_fragment(reference);
        return Some(with_fragment(&normalize_uri(r), frag));
    }
    if let Some(frag) = reference.strip_prefix('#') {
        return Some(with_fragment(base, frag));
    }
    let (rpath, frag) = split_fragment(reference);
    if rpath.is_empty() {
        // The empty reference is the base document itself (RFC 3986, 5.2.2), as `#` is.
        return Some(with_fragment(base, frag));
    }
    let sch = scheme(base)?;
    let rest = &base[sch.len() + 1..];
    let (authority, path) = match rest.strip_prefix("//") {
        Some(r) => {
            let end = r.find(['/', '?']).unwrap_or(r.len());
            (Some(&r[..end]), &r[end..])
        }
        None => (None, rest),
    };
    let path = path.split('?').next().unwrap_or("");
    let prefix = match authority {
        Some(a) => format!("{sch}://{a}"),
        None => format!("{sch}:"),
    };
    if let Some(net) = rpath.strip_prefix("//") {
        return Some(with_fragment(&normalize_uri(&format!("{sch}://{net}")), frag));
    }
    let merged = if rpath.starts_with('/') {
        rpath.to_string()
    } else {
        if authority.is_none() && !path.starts_with('/') {
            // e.g. `urn:uuid:...` has no hierarchy to resolve a relative path against.
            return None;
        }
        match path.rfind('/') {
            Some(i) => format!("{}{rpath}", &path[..=i]),
            None => format!("/{rpath}"),
        }
    };
    Some(with_fragment(&format!("{prefix}{}", remove_dot_segments(&merged)), frag))
}

fn with_fragment(uri: &str, frag: &str) -> String {
    if frag.is_empty() {
        uri.to_string()
    } else {
        format!("{uri}#{frag}")
    }
}

/// An absolute URI with its path's dot segments removed.
fn normalize_uri(uri: &str) -> String {
    let Some(sch) = scheme(uri) else { return uri.to_string() };
    let rest = &uri[sch.len() + 1..];
    match rest.strip_prefix("//") {
        Some(r) => {
            let end = r.find('/').unwrap_or(r.len());
            format!("{sch}://{}{}", &r[..end], remove_dot_segments(&r[end..]))
        }
        None => uri.to_string(),
    }
}

/// RFC 3986, section 5.2.4.
fn remove_dot_segments(path: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    let segs: Vec<&str> = path.split('/').collect();
    let n = segs.len();
    for (i, seg) in segs.iter().enumerate() {
        match *seg {
            "." => {
                if i == n - 1 {
                    out.push("");
                }
            }
            ".." => {
                if out.len() > 1 {
                    out.pop();
                }
                if i == n - 1 {
                    out.push("");
                }
            }
            s => out.push(s),
        }
    }
    out.join("/")
}

/// Decodes a JSON Pointer fragment (`/a~1b/%25`) into its reference tokens, or `None` when it is malformed.
pub(crate) fn pointer_tokens(fragment: &str) -> Option<Vec<String>> {
    let decoded = percent_decode(fragment)?;
    if decoded.is_empty() {
        return Some(Vec::new());
    }
    let rest = decoded.strip_prefix('/')?;
    Some(rest.split('/').map(crate::diag::unescape_token).collect())
}

/// `s` with its `%XX` escapes decoded; `None` for a broken escape (`%7`, `%zz`, `%+5`, which `from_str_radix`
/// alone would take) or bytes that are not UTF-8. Used for URI fragments and for the service's query.
pub(crate) fn percent_decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let h = b.get(i + 1..i + 3).filter(|h| h.iter().all(u8::is_ascii_hexdigit))?;
            out.push(u8::from_str_radix(std::str::from_utf8(h).ok()?, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_like_rfc_3986() {
        let b = "https://x.dev/v2/events/text.schema.json";
        assert_eq!(
            resolve(b, "../defs.schema.json#/$defs/id").as_deref(),
            Some("https://x.dev/v2/defs.schema.json#/$defs/id")
        );
        assert_eq!(resolve(b, "#/a").as_deref(), Some("https://x.dev/v2/events/text.schema.json#/a"));
        assert_eq!(resolve(b, "/root.json").as_deref(), Some("https://x.dev/root.json"));
        assert_eq!(resolve(b, "urn:x:y#/a").as_deref(), Some("urn:x:y#/a"));
        assert_eq!(resolve("urn:uuid:1", "#/$defs/a").as_deref(), Some("urn:uuid:1#/$defs/a"));
        assert_eq!(resolve("urn:uuid:1", "other.json"), None);
        assert_eq!(resolve(b, "").as_deref(), Some(b));
        assert_eq!(resolve("urn:uuid:1", "").as_deref(), Some("urn:uuid:1"));
        assert_eq!(resolve("wiregen:///events/a.json", "../b.json").as_deref(), Some("wiregen:///b.json"));
        assert_eq!(
            resolve("file:///folder/file.json", "#/$defs/foo").as_deref(),
            Some("file:///folder/file.json#/$defs/foo")
        );
    }

    #[test]
    fn pointer_fragments_decode() {
        assert_eq!(pointer_tokens("/a~1b/c%25d/~0").unwrap(), vec!["a/b", "c%d", "~"]);
        assert_eq!(pointer_tokens("").unwrap(), Vec::<String>::new());
        assert!(pointer_tokens("a").is_none());
        assert_eq!(pointer_tokens("/$defs//a").unwrap(), vec!["$defs", "", "a"]);
    }
}

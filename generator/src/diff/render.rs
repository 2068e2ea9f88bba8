//! The report as text (for a terminal), JSON (for tools) or markdown (a changelog for a pull request).

use serde::Serialize;
use serde_json::{json, Value};

use super::{Change, ChangeRule, Location, Policy, Report, Row};
use crate::diag::{printable, shown_pointer};
use crate::emit::docs::{code, markdown_environment};

const TEMPLATE: &str = include_str!("../../templates/diff/changelog.md.j2");

/// An output format of [`render`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Format {
    /// Lines for a terminal: one block per change, the summary, the removals and a count.
    Text,
    /// One JSON document: `changes`, `rows`, `removed`, and the counts.
    Json,
    /// A changelog a reviewer can paste into a pull request: a table of changes, the summary and the removals.
    Markdown,
}

/// The changelog template failed (a bug in the template; minijinja's error is the source).
#[derive(Debug)]
pub struct RenderError(minijinja::Error);

impl std::fmt::Display for RenderError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the changelog template failed")
    }
}

impl std::error::Error for RenderError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.0)
    }
}

/// Renders a report; `policy` decides which changes are marked as failing it.
///
/// # Errors
/// Only the markdown template can fail, and only through a bug in it.
pub fn render(r: &Report, format: Format, policy: Policy) -> Result<String, RenderError> {
    Ok(match format {
        Format::Text => text(r, policy),
        Format::Json => {
            let v = to_json(r, policy);
            let mut s = serde_json::to_string_pretty(&v).unwrap_or_else(|_| v.to_string());
            s.push('\n');
            s
        }
        Format::Markdown => markdown(r, policy).map_err(RenderError)?,
    })
}

fn loc_text(l: &Location) -> String {
    format!("{}:{}:{} {}", l.file, l.line, l.col, shown_pointer(&l.pointer))
}

fn breaks_text(c: &Change) -> String {
    let ps = c.breaks.parties();
    if ps.is_empty() {
        "nobody".into()
    } else {
        ps.iter().map(|p| p.id().replace('-', " ")).collect::<Vec<_>>().join(", ")
    }
}

/// The row's "New?" cell as a protocol document writes it: `modified (added `steer`)`.
pub(crate) fn status_cell(row: &Row) -> String {
    let mut s = row.status.word().to_string();
    if let Some(n) = &row.note {
        s.push_str(&format!(" ({n})"));
    }
    s
}

fn row_name(row: &Row) -> String {
    match (&row.tag, &row.was) {
        (None, _) => "envelope".into(),
        (Some(t), Some(w)) => format!("{t} (was {w})"),
        (Some(t), None) => t.clone(),
    }
}

fn text(r: &Report, policy: Policy) -> String {
    let mut out = String::new();
    for c in &r.changes {
        out.push_str(&format!("{}: {}: {}\n", printable(&c.subject()), c.rule.id(), printable(&c.message)));
        if let Some(l) = &c.old {
            out.push_str(&format!("    old: {}\n", printable(&loc_text(l))));
        }
        if let Some(l) = &c.new {
            out.push_str(&format!("    new: {}\n", printable(&loc_text(l))));
        }
        let verdict = if policy.violated_by(c.breaks) { "fails" } else { "passes" };
        out.push_str(&format!("    breaks: {} ({verdict} --policy {})\n", breaks_text(c), policy.id()));
    }
    if !r.rows.is_empty() {
        out.push_str("\nsummary (the envelope and each event; `also`: its changes besides properties added, removed or renamed):\n");
        let width = r.rows.iter().map(|x| row_name(x).chars().count()).max().unwrap_or(0);
        for row in &r.rows {
            let mut line = format!("  {:width$}  {}", printable(&row_name(row)), printable(&status_cell(row)));
            if !row.also.is_empty() {
                // Counts per rule, in catalogue order.
                let mut counts: Vec<(ChangeRule, usize)> = Vec::new();
                for c in row.also.iter().filter_map(|i| r.changes.get(*i)) {
                    match counts.iter_mut().find(|(k, _)| *k == c.rule) {
                        Some((_, n)) => *n += 1,
                        None => counts.push((c.rule, 1)),
                    }
                }
                counts.sort();
                let parts: Vec<String> = counts.iter().map(|(k, n)| format!("{n} {}", k.id())).collect();
                line.push_str(&format!("; also {}", parts.join(", ")));
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
    }
    if !r.removals.is_empty() {
        out.push_str("\nremoved (NEW's x-removed, checked against OLD):\n");
        for rm in &r.removals {
            out.push_str(&format!("  {} — {}\n", printable(&rm.what), printable(&rm.why)));
            for it in &rm.items {
                let how = if it.renamed { "renamed to" } else { "replaced by" };
                let old = match &it.in_old {
                    Some(l) => format!("in OLD at {}", loc_text(l)),
                    None if it.removed_in_old => "removed in OLD already".to_string(),
                    None => "not in OLD".to_string(),
                };
                out.push_str(&format!(
                    "    {} {how} `{}`: {}\n",
                    printable(&it.thing),
                    printable(&it.replacement),
                    printable(&old)
                ));
            }
        }
    }
    out.push_str(&format!(
        "\n{} from {} to {}; {} --policy {}\n",
        crate::engine::counted(r.changes.len() as u64, "change", "changes"),
        printable(&r.old),
        printable(&r.new),
        match r.violations(policy) {
            1 => String::from("1 fails"),
            n => format!("{n} fail"),
        },
        policy.id()
    ));
    out
}

fn to_json(r: &Report, policy: Policy) -> Value {
    let changes: Vec<Value> = r
        .changes
        .iter()
        .map(|c| {
            json!({
                "rule": c.rule.id(),
                "subject": c.subject(),
                "message": c.message,
                "was": c.was,
                "old": c.old,
                "new": c.new,
                "breaks": c.breaks.parties().iter().map(|p| p.id()).collect::<Vec<_>>(),
                "fails_policy": policy.violated_by(c.breaks),
            })
        })
        .collect();
    let rows: Vec<Value> = r
        .rows
        .iter()
        .map(|row| {
            json!({
                "t": row.tag,
                "was": row.was,
                "category": row.category,
                "roles": row.roles,
                "status": row.status,
                "note": row.note,
                "also": row.also,
            })
        })
        .collect();
    let removed: Vec<Value> = r
        .removals
        .iter()
        .map(|rm| {
            json!({
                "what": rm.what,
                "why": rm.why,
                "at": rm.at,
                "items": rm.items.iter().map(|it| json!({
                    "thing": it.thing,
                    "replacement": it.replacement,
                    "renamed": it.renamed,
                    "in_old": it.in_old,
                    "removed_in_old": it.removed_in_old,
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({
        "old": r.old,
        "new": r.new,
        "policy": policy.id(),
        "changes_count": r.changes.len(),
        "fails_policy_count": r.violations(policy),
        "changes": changes,
        "rows": rows,
        "removed": removed,
    })
}

#[derive(Serialize)]
struct MdChange {
    fails: bool,
    subject: String,
    rule: &'static str,
    message: String,
    breaks: String,
    old: Option<String>,
    new: Option<String>,
}

#[derive(Serialize)]
struct MdRow {
    name: String,
    was: Option<String>,
    roles: String,
    status: String,
    also: Vec<String>,
}

#[derive(Serialize)]
struct MdItem {
    thing: String,
    how: &'static str,
    replacement: String,
    old: String,
}

#[derive(Serialize)]
struct MdRemoval {
    what: String,
    why: String,
    items: Vec<MdItem>,
}

#[derive(Serialize)]
struct MdView {
    old: String,
    new: String,
    policy: &'static str,
    total: usize,
    failing: usize,
    changes: Vec<MdChange>,
    rows: Vec<MdRow>,
    removals: Vec<MdRemoval>,
}

fn md_loc(l: &Location) -> String {
    format!("{}:{} {}", l.file, l.line, shown_pointer(&l.pointer))
}

fn markdown(r: &Report, policy: Policy) -> Result<String, minijinja::Error> {
    let view = MdView {
        old: r.old.clone(),
        new: r.new.clone(),
        policy: policy.id(),
        total: r.changes.len(),
        failing: r.violations(policy),
        changes: r
            .changes
            .iter()
            .map(|c| MdChange {
                fails: policy.violated_by(c.breaks),
                subject: c.subject(),
                rule: c.rule.id(),
                message: c.message.clone(),
                breaks: breaks_text(c),
                old: c.old.as_ref().map(md_loc),
                new: c.new.as_ref().map(md_loc),
            })
            .collect(),
        rows: r
            .rows
            .iter()
            .map(|row| MdRow {
                name: row.tag.clone().unwrap_or_else(|| "envelope".into()),
                was: row.was.clone(),
                roles: row.roles.join("/"),
                status: status_cell(row),
                also: row
                    .also
                    .iter()
                    .filter_map(|i| r.changes.get(*i))
                    .map(|c| format!("{} {}", c.rule.id(), c.subject()))
                    .collect(),
            })
            .collect(),
        removals: r
            .removals
            .iter()
            .map(|rm| MdRemoval {
                what: rm.what.clone(),
                why: rm.why.clone(),
                items: rm
                    .items
                    .iter()
                    .map(|it| MdItem {
                        thing: it.thing.clone(),
                        how: if it.renamed { "renamed to" } else { "replaced by" },
                        replacement: it.replacement.clone(),
                        old: match &it.in_old {
                            Some(l) => code(md_loc(l)),
                            None if it.removed_in_old => "removed in OLD already".into(),
                            None => "not in OLD".into(),
                        },
                    })
                    .collect(),
            })
            .collect(),
    };
    let mut env = markdown_environment();
    env.add_template("changelog.md", TEMPLATE)?;
    let mut s = env.get_template("changelog.md")?.render(&view)?;
    if !s.ends_with('\n') {
        s.push('\n');
    }
    Ok(s)
}

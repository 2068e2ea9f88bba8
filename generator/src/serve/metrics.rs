//! Prometheus metrics, hand-rolled: counters in atomics and small locked maps, rendered as the text format.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// Upper bounds of the latency histogram buckets, in seconds.
pub(crate) const BUCKETS: [f64; 16] =
    [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0];

/// The service's metrics.
#[derive(Debug, Default)]
pub struct Metrics {
    requests: Mutex<BTreeMap<(&'static str, u16), u64>>,
    malformed: Mutex<BTreeMap<&'static str, u64>>,
    invalid_by_rule: Mutex<BTreeMap<&'static str, u64>>,
    messages: AtomicU64,
    invalid: AtomicU64,
    in_flight: AtomicI64,
    buckets: [AtomicU64; BUCKETS.len()],
    latency_count: AtomicU64,
    latency_sum_nanos: AtomicU64,
}

/// What one request validated, merged into [`Metrics`] once per request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Tally {
    /// Messages (lines) checked.
    pub messages: u64,
    /// Messages with at least one error.
    pub invalid: u64,
    /// Invalid messages by the rule of their first (canonical) error.
    pub by_rule: BTreeMap<&'static str, u64>,
}

impl Tally {
    /// Counts one message whose first error has rule `first_rule` (`None` when valid).
    pub fn add(&mut self, first_rule: Option<&'static str>) {
        self.messages += 1;
        if let Some(r) = first_rule {
            self.invalid += 1;
            *self.by_rule.entry(r).or_default() += 1;
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Metrics {
    /// A request started.
    pub(crate) fn start(&self) {
        self.in_flight.fetch_add(1, Ordering::Relaxed);
    }

    /// A request finished on `route` (a route template) with `status` after `elapsed`.
    pub(crate) fn finish(&self, route: &'static str, status: u16, elapsed: Duration) {
        self.in_flight.fetch_sub(1, Ordering::Relaxed);
        *lock(&self.requests).entry((route, status)).or_default() += 1;
        let secs = elapsed.as_secs_f64();
        if let Some(i) = BUCKETS.iter().position(|&b| secs <= b) {
            self.buckets[i].fetch_add(1, Ordering::Relaxed);
        }
        self.latency_count.fetch_add(1, Ordering::Relaxed);
        self.latency_sum_nanos.fetch_add(elapsed.as_nanos().min(u64::MAX as u128) as u64, Ordering::Relaxed);
    }

    /// A request head the HTTP layer could not parse, answered there and never routed, by `reason`.
    pub(crate) fn malformed(&self, reason: &'static str) {
        *lock(&self.malformed).entry(reason).or_default() += 1;
    }

    /// Merges what one request validated.
    pub(crate) fn messages(&self, t: &Tally) {
        if t.messages == 0 {
            return;
        }
        self.messages.fetch_add(t.messages, Ordering::Relaxed);
        self.invalid.fetch_add(t.invalid, Ordering::Relaxed);
        if !t.by_rule.is_empty() {
            let mut m = lock(&self.invalid_by_rule);
            for (r, n) in &t.by_rule {
                *m.entry(r).or_default() += n;
            }
        }
    }

    /// The Prometheus text exposition (version 0.0.4).
    pub fn render(&self) -> String {
        let mut s = String::new();
        s.push_str("# HELP wiregen_http_requests_total HTTP requests by route template and status.\n");
        s.push_str("# TYPE wiregen_http_requests_total counter\n");
        for ((route, status), n) in lock(&self.requests).iter() {
            let _ = writeln!(s, "wiregen_http_requests_total{{route=\"{route}\",status=\"{status}\"}} {n}");
        }
        s.push_str(
            "# HELP wiregen_http_malformed_requests_total Request heads that are not HTTP/1.1, answered by the HTTP \
             layer without a route, by reason.\n",
        );
        s.push_str("# TYPE wiregen_http_malformed_requests_total counter\n");
        for (reason, n) in lock(&self.malformed).iter() {
            let _ = writeln!(s, "wiregen_http_malformed_requests_total{{reason=\"{reason}\"}} {n}");
        }
        s.push_str("# HELP wiregen_http_requests_in_flight Requests being processed.\n");
        s.push_str("# TYPE wiregen_http_requests_in_flight gauge\n");
        let _ = writeln!(s, "wiregen_http_requests_in_flight {}", self.in_flight.load(Ordering::Relaxed));
        s.push_str("# HELP wiregen_messages_validated_total Messages (lines) checked.\n");
        s.push_str("# TYPE wiregen_messages_validated_total counter\n");
        let _ = writeln!(s, "wiregen_messages_validated_total {}", self.messages.load(Ordering::Relaxed));
        s.push_str("# HELP wiregen_messages_invalid_total Messages with at least one error.\n");
        s.push_str("# TYPE wiregen_messages_invalid_total counter\n");
        let _ = writeln!(s, "wiregen_messages_invalid_total {}", self.invalid.load(Ordering::Relaxed));
        s.push_str(
            "# HELP wiregen_invalid_messages_by_rule_total Invalid messages by the rule id of their first error.\n",
        );
        s.push_str("# TYPE wiregen_invalid_messages_by_rule_total counter\n");
        for (rule, n) in lock(&self.invalid_by_rule).iter() {
            let _ = writeln!(s, "wiregen_invalid_messages_by_rule_total{{rule=\"{}\"}} {n}", label(rule));
        }
        s.push_str("# HELP wiregen_http_request_duration_seconds Time from request head to response head.\n");
        s.push_str("# TYPE wiregen_http_request_duration_seconds histogram\n");
        let mut cum = 0;
        for (b, n) in BUCKETS.iter().zip(&self.buckets) {
            cum += n.load(Ordering::Relaxed);
            let _ = writeln!(s, "wiregen_http_request_duration_seconds_bucket{{le=\"{b}\"}} {cum}");
        }
        let count = self.latency_count.load(Ordering::Relaxed);
        let _ = writeln!(s, "wiregen_http_request_duration_seconds_bucket{{le=\"+Inf\"}} {count}");
        let sum = self.latency_sum_nanos.load(Ordering::Relaxed) as f64 / 1e9;
        let _ = writeln!(s, "wiregen_http_request_duration_seconds_sum {sum}");
        let _ = writeln!(s, "wiregen_http_request_duration_seconds_count {count}");
        s
    }
}

/// A label value as the text exposition writes it: `\\`, `"` and a line feed escaped. The rule ids are the
/// only labels that come from the schema; the loader holds them to a form that needs none of this
/// (`load::sequence::is_rule_id`), so one scrape stays readable whatever a schema says.
fn label(v: &str) -> String {
    v.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_counters_and_a_cumulative_histogram() {
        let m = Metrics::default();
        m.start();
        m.finish("/v1/validate", 200, Duration::from_micros(700));
        m.start();
        m.finish("/v1/validate", 200, Duration::from_secs(20));
        let mut t = Tally::default();
        t.add(None);
        t.add(Some("enum"));
        t.add(Some("enum"));
        m.messages(&t);
        let s = m.render();
        assert!(s.contains("wiregen_http_requests_total{route=\"/v1/validate\",status=\"200\"} 2\n"), "{s}");
        assert!(s.contains("wiregen_messages_validated_total 3\n"));
        assert!(s.contains("wiregen_messages_invalid_total 2\n"));
        assert!(s.contains("wiregen_invalid_messages_by_rule_total{rule=\"enum\"} 2\n"));
        assert!(s.contains("wiregen_http_request_duration_seconds_bucket{le=\"0.0005\"} 0\n"));
        assert!(s.contains("wiregen_http_request_duration_seconds_bucket{le=\"0.001\"} 1\n"));
        assert!(s.contains("wiregen_http_request_duration_seconds_bucket{le=\"10\"} 1\n"));
        assert!(s.contains("wiregen_http_request_duration_seconds_bucket{le=\"+Inf\"} 2\n"));
        assert!(s.contains("wiregen_http_request_duration_seconds_count 2\n"));
        assert!(s.contains("wiregen_http_requests_in_flight 0\n"));
    }

    #[test]
    fn label_values_are_escaped() {
        assert_eq!(label("turn.already-open"), "turn.already-open");
        assert_eq!(label("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
    }
}

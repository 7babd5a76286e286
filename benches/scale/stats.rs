//! Small helpers: milliseconds, medians and percentiles.

use std::time::Duration;

use serde_json::{json, Value};

pub fn ms(d: Duration) -> f64 {
    (d.as_secs_f64() * 1e6).round() / 1e3
}

/// The `p`-th percentile (0–100) of sorted values, nearest rank.
pub fn pct(sorted: &[Duration], p: usize) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = (sorted.len() * p).div_ceil(100).max(1);
    sorted[rank.min(sorted.len()) - 1]
}

/// `{n, median_ms, p99_ms, max_ms}` of some frame or cycle times.
pub fn summary(v: &[Duration]) -> Value {
    let mut s = v.to_vec();
    s.sort();
    json!({
        "n": s.len(),
        "median_ms": ms(pct(&s, 50)),
        "p99_ms": ms(pct(&s, 99)),
        "max_ms": ms(s.last().copied().unwrap_or_default()),
    })
}

pub fn median(v: &[Duration]) -> Duration {
    let mut s = v.to_vec();
    s.sort();
    pct(&s, 50)
}

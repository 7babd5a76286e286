//! Helpers of the generator's tests (the same as the demo crate's own test helpers).

use std::path::{Path, PathBuf};

use rusqlite::Connection;

/// A fixed "now" (2026-11-30T06:08:09.175Z) so failures are reproducible.
pub(crate) const NOW: i64 = 1_796_018_889_175;

/// A unique path in the temp dir, removed (with `-wal`/`-shm`) on drop.
pub(crate) struct TempDb(pub PathBuf);

impl TempDb {
    pub(crate) fn new(tag: &str) -> Self {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let name = format!("turnscope-demo-{tag}-{}-{nanos}.db", std::process::id());
        TempDb(std::env::temp_dir().join(name))
    }
}

impl Drop for TempDb {
    fn drop(&mut self) {
        for suffix in ["", "-wal", "-shm"] {
            let mut p = self.0.clone().into_os_string();
            p.push(suffix);
            let _ = std::fs::remove_file(Path::new(&p));
        }
    }
}

pub(crate) fn strings(c: &Connection, sql: &str) -> Vec<String> {
    let mut st = c.prepare(sql).expect("prepare");
    let rows = st.query_map([], |r| r.get::<_, String>(0)).expect("query");
    rows.map(|r| r.expect("row")).collect()
}

/// No whitespace outside JSON strings. (Re-serializing is not a usable check: serde_json's default
/// float parser is not exact, so `0.00020480000000000002` would come back as `0.0002048`.)
pub(crate) fn is_compact(json: &str) -> bool {
    let (mut in_str, mut esc) = (false, false);
    for ch in json.chars() {
        match (in_str, esc, ch) {
            (true, true, _) => esc = false,
            (true, false, '\\') => esc = true,
            (_, false, '"') => in_str = !in_str,
            (false, _, c) if c.is_whitespace() => return false,
            _ => {}
        }
    }
    !in_str
}

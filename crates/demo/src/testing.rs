//! Helpers for the tests of this crate and of the scale generator (`turnscope-bench`, through
//! the `testing` feature): a fixed clock, temporary database paths, and row queries.

use std::path::{Path, PathBuf};

use rusqlite::{Connection, OpenFlags};

/// A fixed "now" (2026-11-30T06:08:09.175Z) so failures are reproducible.
pub const NOW: i64 = 1_796_018_889_175;

/// A unique path in the temp dir, removed (with `-wal`/`-shm`) on drop.
pub struct TempDb(pub PathBuf);

impl TempDb {
    pub fn new(tag: &str) -> Self {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        let name = format!("turnscope-demo-{tag}-{}-{nanos}.db", std::process::id());
        TempDb(std::env::temp_dir().join(name))
    }

    /// Write the demo at [`NOW`] and open it read-only.
    pub fn written(tag: &str) -> (Self, Connection) {
        let t = Self::new(tag);
        crate::write_demo(&t.0, NOW).expect("demo written");
        let c = Connection::open_with_flags(&t.0, OpenFlags::SQLITE_OPEN_READ_ONLY).expect("open");
        (t, c)
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

pub fn strings(c: &Connection, sql: &str) -> Vec<String> {
    let mut st = c.prepare(sql).expect("prepare");
    let rows = st.query_map([], |r| r.get::<_, String>(0)).expect("query");
    rows.map(|r| r.expect("row")).collect()
}

/// No whitespace outside JSON strings. (Re-serializing is not a usable check: serde_json's default
/// float parser is not exact, so `0.00020480000000000002` would come back as `0.0002048`.)
pub fn is_compact(json: &str) -> bool {
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

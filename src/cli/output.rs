//! Output helpers: aligned tables, truncation (terminal-safe text is in [`turnscope_core::text`]) and the
//! one way a JSON document is printed.

use turnscope_core::text::sanitize;

/// A JSON document on its own, pretty-printed and ending in a newline (every `--json` output).
pub fn print_json(out: &mut dyn std::io::Write, doc: &serde_json::Value) -> std::io::Result<()> {
    // Written as it is formatted, not formatted into one string first: a whale's `show --json`
    // is 15 MB of text that would sit beside its document at the peak.
    use std::io::Write;
    let mut w = std::io::BufWriter::with_capacity(1 << 16, out);
    serde_json::to_writer_pretty(&mut w, doc)?;
    writeln!(w)?;
    w.flush()
}

/// Cut `text` to at most `max` characters, marking the cut with `…`.
pub fn truncate(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut s: String = text.chars().take(max.saturating_sub(1)).collect();
    s.push('…');
    s
}

/// Render rows as left-aligned columns separated by two spaces (cells are sanitized).
pub fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    // Every cell is shown terminal-safe (sanitizing is idempotent, so cells that already are stay
    // unchanged).
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|r| r.iter().map(|c| sanitize(c)).collect())
        .collect();
    let rows = &rows;
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for r in rows {
        for (i, cell) in r.iter().enumerate() {
            widths[i] = widths[i].max(cell.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let mut s = String::new();
        for (i, c) in cells.iter().enumerate() {
            if i + 1 == cells.len() {
                s.push_str(c);
            } else {
                s.push_str(c);
                s.push_str(&" ".repeat(widths[i] - c.chars().count() + 2));
            }
        }
        s.trim_end().to_string()
    };
    let mut out = line(header.to_vec());
    out.push('\n');
    for r in rows {
        out.push_str(&line(r.iter().map(String::as_str).collect()));
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_aligns() {
        let t = table(&["A", "BB"], &[vec!["xxx".into(), "y".into()]]);
        assert_eq!(t, "A    BB\nxxx  y\n");
    }
}

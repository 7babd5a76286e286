//! A submission's own image chunk rows (a direct prompt's images: owner `submission`, part `''`),
//! which the runtime's row parser reads for every submission row before its checks
//! (`parseSubmission(row, chunks)`), attached to each row as it is read.
//!
//! Most journals have none: one index probe says so and nothing more is read. Otherwise one query
//! reads the rows of the submissions the read selects (its own `WHERE` and `LIMIT` as a subquery:
//! one submission for a `show`, a page of a listing), without their data.

use std::collections::HashMap;

use rusqlite::types::ValueRef;
use rusqlite::Connection;
use turnscope_core::journal::images::{ChunkRow, MAX_IMAGE_DATA_UNITS};
use turnscope_core::journal::submission_rows::SubmissionRow;

use crate::StoreError;

/// Each submission's rows, by owner, for the submissions one read selects.
pub(crate) struct SubmissionImages(HashMap<String, Vec<ChunkRow>>);

impl SubmissionImages {
    /// The rows of the submissions `FROM flue_agent_submissions {selection}` selects (with
    /// `params`). `has_table`: whether the database has `flue_image_chunks`.
    ///
    /// Each row's columns are read as the runtime's `parseChunkRow` checks them, and its data's
    /// length: bytes (`octet_length`, read without the data), or, where its image's bytes are over
    /// the payload check's limit, the data itself, to count its UTF-16 units as JavaScript does.
    pub(crate) fn read(
        conn: &Connection,
        has_table: bool,
        selection: &str,
        params: &[&dyn rusqlite::ToSql],
    ) -> Result<Self, StoreError> {
        let any = has_table
            && conn
                .prepare_cached(
                    "SELECT EXISTS (SELECT 1 FROM flue_image_chunks WHERE owner_kind = 'submission')",
                )
                .and_then(|mut s| s.query_row([], |r| r.get::<_, bool>(0)))
                .map_err(err)?;
        if !any {
            return Ok(SubmissionImages(HashMap::new()));
        }
        let sql = format!(
            "SELECT owner_id, image_id, chunk_index, chunk_count, typeof(data) = 'text',
                    octet_length(data),
                    CASE WHEN sum(octet_length(data)) OVER (PARTITION BY owner_id, image_id)
                              > {MAX_IMAGE_DATA_UNITS} THEN data END
               FROM flue_image_chunks
              WHERE owner_kind = 'submission' AND owner_part = ''
                AND owner_id IN (SELECT submission_id FROM flue_agent_submissions {selection})
              ORDER BY owner_id, image_id, chunk_index"
        );
        Ok(SubmissionImages(grouped(conn, &sql, params).map_err(err)?))
    }

    /// Set `row.image_chunks` to the rows the runtime reads with it.
    pub(crate) fn attach(&mut self, row: &mut SubmissionRow) {
        row.image_chunks = self.0.remove(&row.submission_id).unwrap_or_default();
    }
}

/// The rows of `sql` (its column 0 the owner's id, then [`chunk_row`]'s), by owner, in order.
/// A row whose owner id is not text is left out: it never equals the runtime's text one.
pub(super) fn grouped(
    conn: &Connection,
    sql: &str,
    params: &[&dyn rusqlite::ToSql],
) -> rusqlite::Result<HashMap<String, Vec<ChunkRow>>> {
    let mut out: HashMap<String, Vec<ChunkRow>> = HashMap::new();
    let mut stmt = conn.prepare_cached(sql)?;
    let mut rows = stmt.query(params)?;
    while let Some(r) = rows.next()? {
        let ValueRef::Text(owner) = r.get_ref(0)? else {
            continue;
        };
        let owner = String::from_utf8_lossy(owner).into_owned();
        out.entry(owner).or_default().push(chunk_row(r)?);
    }
    Ok(out)
}

/// One chunk row of a query whose columns 1–6 are its id, `chunk_index`, `chunk_count`,
/// `typeof(data) = 'text'`, `octet_length(data)`, and `data` where its item's bytes are over the
/// limit (else NULL): its columns as `parseChunkRow` checks them, its data's length in UTF-16 units.
pub(super) fn chunk_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<ChunkRow> {
    let data_units = match r.get_ref(6)? {
        ValueRef::Text(t) | ValueRef::Blob(t) => {
            String::from_utf8_lossy(t).encode_utf16().count() as u64
        }
        // Within the limit: the byte length, never less than the UTF-16 units.
        _ => r.get::<_, i64>(5)?.max(0) as u64,
    };
    Ok(ChunkRow {
        image_id: crate::parse::chunk_cell(r.get_ref(1)?),
        index: crate::parse::chunk_cell(r.get_ref(2)?),
        count: crate::parse::chunk_cell(r.get_ref(3)?),
        data_is_text: r.get::<_, bool>(4)?,
        data_units,
    })
}

fn err(e: rusqlite::Error) -> StoreError {
    StoreError::sqlite("reading a submission's image chunk rows", e)
}

#[cfg(test)]
mod tests {
    use super::*;
    use turnscope_core::journal::images::ChunkCell;
    use turnscope_core::testing::sub;

    /// A chunk table with `owners` submissions of one image each (two rows, the second owner's
    /// index stored as text), and rows of other owners that are never theirs.
    fn journal(owners: usize) -> Connection {
        let c = Connection::open_in_memory().unwrap();
        c.execute_batch(
            "CREATE TABLE flue_image_chunks (owner_kind TEXT NOT NULL, owner_id TEXT NOT NULL,
             owner_part TEXT NOT NULL, image_id TEXT NOT NULL, chunk_index INTEGER NOT NULL,
             chunk_count INTEGER NOT NULL, data TEXT NOT NULL,
             PRIMARY KEY (owner_kind, owner_id, owner_part, image_id, chunk_index));
             INSERT INTO flue_image_chunks VALUES ('session_entry', 's0', '', '0', 0, 1, 'x');
             INSERT INTO flue_image_chunks VALUES ('submission', 's0', 'part', '0', 0, 1, 'x');",
        )
        .unwrap();
        for i in 0..owners {
            let index = if i == 1 { "'x'" } else { "0" };
            c.execute_batch(&format!(
                "INSERT INTO flue_image_chunks VALUES ('submission', 's{i}', '', '0', {index}, 2, 'abcd');
                 INSERT INTO flue_image_chunks VALUES ('submission', 's{i}', '', '0', 1, 2, '€');"
            ))
            .unwrap();
        }
        c
    }

    /// A submissions table of `n` rows `s0`, `s1`, ….
    fn with_submissions(c: &Connection, n: usize) {
        c.execute_batch("CREATE TABLE flue_agent_submissions (sequence INTEGER PRIMARY KEY, submission_id TEXT)")
            .unwrap();
        for i in 0..n {
            c.execute(
                "INSERT INTO flue_agent_submissions VALUES (?1, ?2)",
                rusqlite::params![i as i64, format!("s{i}")],
            )
            .unwrap();
        }
    }

    /// The rows attached to each of the `rows` submissions a read of `selection` visits.
    fn attached(
        c: &Connection,
        selection: &str,
        params: &[&dyn rusqlite::ToSql],
        rows: usize,
    ) -> Vec<Vec<ChunkRow>> {
        let mut images = SubmissionImages::read(c, true, selection, params).unwrap();
        (0..rows)
            .map(|i| {
                let mut row = sub();
                row.submission_id = format!("s{i}");
                images.attach(&mut row);
                row.image_chunks
            })
            .collect()
    }

    #[test]
    fn each_row_gets_its_own_rows_and_only_the_selected_rows_are_read() {
        let c = journal(100);
        with_submissions(&c, 101);
        let rows = attached(&c, "ORDER BY sequence", &[], 101);
        for (i, r) in rows.iter().enumerate() {
            if i == 100 {
                assert!(r.is_empty());
                continue;
            }
            assert_eq!(
                r.len(),
                2,
                "s{i}: the other part's and owner's rows are not its"
            );
            // Within the limit: bytes stand for the units.
            let units: u64 = r.iter().map(|c| c.data_units).sum();
            assert_eq!(units, 7);
            let text_index = r.iter().any(|c| c.index == ChunkCell::Text("x".into()));
            assert_eq!(text_index, i == 1, "s{i}");
        }
        // A read of one submission, or of a page, reads its own rows only.
        let one = attached(&c, "WHERE submission_id = ?1", &[&"s7"], 10);
        assert_eq!(
            one.iter().map(Vec::len).collect::<Vec<_>>(),
            [0, 0, 0, 0, 0, 0, 0, 2, 0, 0]
        );
        let page = attached(
            &c,
            "WHERE sequence > ?1 ORDER BY sequence LIMIT 3",
            &[&5],
            10,
        );
        assert_eq!(page.iter().filter(|r| !r.is_empty()).count(), 3);
        assert!(page[6].len() == 2 && page[8].len() == 2 && page[9].is_empty());
    }

    #[test]
    fn no_row_no_read_and_an_image_over_the_limit_is_counted_in_utf16_units() {
        let c = journal(0);
        with_submissions(&c, 1);
        // No submission's row at all: nothing is read (not even the subquery's table).
        c.execute_batch("DELETE FROM flue_image_chunks WHERE owner_kind = 'submission'")
            .unwrap();
        assert!(SubmissionImages::read(&c, true, "NOT A SELECTION", &[])
            .unwrap()
            .0
            .is_empty());
        // Over 14 MiB of bytes, two characters of 3 bytes each: 14 MiB of units, at the limit.
        c.execute_batch(
            "INSERT INTO flue_image_chunks VALUES ('submission', 's0', '', '0', 0, 1,
             '€€' || hex(zeroblob(7340031)))",
        )
        .unwrap();
        let rows = attached(&c, "", &[], 1);
        assert_eq!(rows[0][0].data_units, MAX_IMAGE_DATA_UNITS);
    }
}

//! A submission's own image chunk rows (a direct prompt's images: owner `submission`, part `''`),
//! which the runtime's row parser reads for every submission row before its checks
//! (`parseSubmission(row, chunks)`), attached to each row as it is read.
//!
//! Most journals have none: one index probe says so and nothing more is read. Otherwise the
//! first rows of a read look up their own rows (an indexed query each: a `show` reads one); a read
//! of more rows (a listing) reads every submission's rows at once instead, without their data.

use std::collections::HashMap;

use rusqlite::types::ValueRef;
use rusqlite::Connection;
use turnscope_core::journal::images::{ChunkRow, MAX_IMAGE_DATA_UNITS};
use turnscope_core::journal::submission_rows::SubmissionRow;

use crate::StoreError;

/// Rows looked up one by one before a read turns to reading them all.
const ONE_BY_ONE: usize = 64;

/// The columns of a chunk row, as the runtime's `parseChunkRow` checks them, and its data's
/// length: bytes (`octet_length`, read without the data), or, where its image's bytes are over
/// the payload check's limit, the data itself, to count its UTF-16 units as JavaScript does.
const COLUMNS: &str = "owner_id, image_id, chunk_index, chunk_count, typeof(data) = 'text',
     octet_length(data),
     CASE WHEN sum(octet_length(data)) OVER (PARTITION BY owner_id, image_id) > ?9 THEN data END
     FROM flue_image_chunks
     WHERE owner_kind = 'submission' AND owner_part = ''";

/// Attaches each submission row's chunk rows as a read visits it.
pub(crate) struct SubmissionImages<'c> {
    conn: &'c Connection,
    state: State,
}

enum State {
    /// The database has no submission chunk row (or no chunk table).
    None,
    /// Rows looked up so far, one by one.
    OneByOne(usize),
    /// Every submission's rows, by owner.
    All(HashMap<String, Vec<ChunkRow>>),
}

impl<'c> SubmissionImages<'c> {
    /// `has_table`: whether the database has `flue_image_chunks`.
    pub(crate) fn new(conn: &'c Connection, has_table: bool) -> Result<Self, StoreError> {
        let any = has_table
            && conn
                .prepare_cached(
                    "SELECT EXISTS (SELECT 1 FROM flue_image_chunks WHERE owner_kind = 'submission')",
                )
                .and_then(|mut s| s.query_row([], |r| r.get::<_, bool>(0)))
                .map_err(err)?;
        Ok(SubmissionImages {
            conn,
            state: if any { State::OneByOne(0) } else { State::None },
        })
    }

    /// Set `row.image_chunks` to the rows the runtime reads with it.
    pub(crate) fn attach(&mut self, row: &mut SubmissionRow) -> Result<(), StoreError> {
        match &mut self.state {
            State::None => {}
            State::OneByOne(n) if *n < ONE_BY_ONE => {
                *n += 1;
                row.image_chunks = self
                    .read(" AND owner_id = ?1", Some(&row.submission_id))?
                    .remove(&row.submission_id)
                    .unwrap_or_default();
            }
            State::OneByOne(_) => {
                let mut all = self.read("", None)?;
                row.image_chunks = all.remove(&row.submission_id).unwrap_or_default();
                self.state = State::All(all);
            }
            State::All(all) => {
                row.image_chunks = all.remove(&row.submission_id).unwrap_or_default();
            }
        }
        Ok(())
    }

    fn read(
        &self,
        and: &str,
        owner: Option<&str>,
    ) -> Result<HashMap<String, Vec<ChunkRow>>, StoreError> {
        let sql = format!("SELECT {COLUMNS}{and} ORDER BY owner_id, image_id, chunk_index");
        let mut stmt = self.conn.prepare_cached(&sql).map_err(err)?;
        if let Some(owner) = owner {
            stmt.raw_bind_parameter(1, owner).map_err(err)?;
        }
        stmt.raw_bind_parameter(9, MAX_IMAGE_DATA_UNITS as i64)
            .map_err(err)?;
        let mut rows = stmt.raw_query();
        let mut out: HashMap<String, Vec<ChunkRow>> = HashMap::new();
        while let Some(r) = rows.next().map_err(err)? {
            // A BLOB owner id never equals the runtime's text one.
            let ValueRef::Text(owner) = r.get_ref(0).map_err(err)? else {
                continue;
            };
            let owner = String::from_utf8_lossy(owner).into_owned();
            let data_units = match r.get_ref(6).map_err(err)? {
                ValueRef::Text(t) | ValueRef::Blob(t) => {
                    String::from_utf8_lossy(t).encode_utf16().count() as u64
                }
                // Within the limit: the byte length, never less than the UTF-16 units.
                _ => r.get::<_, i64>(5).map_err(err)?.max(0) as u64,
            };
            let row = ChunkRow {
                image_id: crate::parse::chunk_cell(r.get_ref(1).map_err(err)?),
                index: crate::parse::chunk_cell(r.get_ref(2).map_err(err)?),
                count: crate::parse::chunk_cell(r.get_ref(3).map_err(err)?),
                data_is_text: r.get::<_, bool>(4).map_err(err)?,
                data_units,
            };
            out.entry(owner).or_default().push(row);
        }
        Ok(out)
    }
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

    /// Each of `rows` submissions read in order, with the rows attached to it.
    fn attached(c: &Connection, rows: usize) -> Vec<Vec<ChunkRow>> {
        let mut images = SubmissionImages::new(c, true).unwrap();
        (0..rows)
            .map(|i| {
                let mut row = sub();
                row.submission_id = format!("s{i}");
                images.attach(&mut row).unwrap();
                row.image_chunks
            })
            .collect()
    }

    #[test]
    fn each_row_gets_its_own_rows_one_by_one_and_all_at_once() {
        let c = journal(3 * ONE_BY_ONE);
        // Past ONE_BY_ONE the rest are read at once; one more row has none.
        let rows = attached(&c, 3 * ONE_BY_ONE + 1);
        for (i, r) in rows.iter().enumerate() {
            if i == 3 * ONE_BY_ONE {
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
    }

    #[test]
    fn no_row_no_read_and_an_image_over_the_limit_is_counted_in_utf16_units() {
        let c = journal(0);
        assert!(matches!(
            SubmissionImages::new(&c, true).unwrap().state,
            State::OneByOne(0)
        ));
        c.execute_batch("DELETE FROM flue_image_chunks WHERE owner_kind = 'submission'")
            .unwrap();
        assert!(matches!(
            SubmissionImages::new(&c, true).unwrap().state,
            State::None
        ));
        // Over 14 MiB of bytes, two characters of 3 bytes each: 14 MiB of units, at the limit.
        c.execute_batch(
            "INSERT INTO flue_image_chunks VALUES ('submission', 's0', '', '0', 0, 1,
             '€€' || hex(zeroblob(7340031)))",
        )
        .unwrap();
        let rows = attached(&c, 1);
        assert_eq!(rows[0][0].data_units, MAX_IMAGE_DATA_UNITS);
    }
}

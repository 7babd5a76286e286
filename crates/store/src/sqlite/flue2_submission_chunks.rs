//! A 2.x submission's `flue_submission_chunks` rows (its user message's attachments, spilled in
//! 256 KiB chunks), which the runtime's row parser reads before it checks the row
//! (`parseSubmission(row, chunks)`, SAES:661): read for the running rows a read selects, so that
//! `turnscope_core::flue2::submission_parse` can say what the parser does with each.
//!
//! Most journals have none: one probe of the table says so and nothing more is read. Otherwise
//! one query reads the rows of the submissions the read selects (its own `WHERE` as a subquery),
//! without their data but where an item's bytes are over the payload check's limit.

use std::collections::HashMap;

use rusqlite::Connection;
use turnscope_core::journal::images::{ChunkRow, MAX_IMAGE_DATA_UNITS};

use crate::StoreError;

/// Each submission's rows, by submission id, in the runtime's order (`ORDER BY item_id,
/// chunk_index`), for the submissions `FROM flue_agent_submissions {selection}` selects.
pub(super) fn read(
    conn: &Connection,
    selection: &str,
    params: &[&dyn rusqlite::ToSql],
) -> Result<HashMap<String, Vec<ChunkRow>>, StoreError> {
    let any = conn
        .prepare_cached("SELECT EXISTS (SELECT 1 FROM flue_submission_chunks)")
        .and_then(|mut s| s.query_row([], |r| r.get::<_, bool>(0)))
        .map_err(err)?;
    if !any {
        return Ok(HashMap::new());
    }
    let sql = format!(
        "SELECT submission_id, item_id, chunk_index, chunk_count, typeof(data) = 'text',
                octet_length(data),
                CASE WHEN sum(octet_length(data)) OVER (PARTITION BY submission_id, item_id)
                          > {MAX_IMAGE_DATA_UNITS} THEN data END
           FROM flue_submission_chunks
          WHERE submission_id IN (SELECT submission_id FROM flue_agent_submissions {selection})
          ORDER BY submission_id, item_id, chunk_index"
    );
    super::submission_images::grouped(conn, &sql, params).map_err(err)
}

fn err(e: rusqlite::Error) -> StoreError {
    StoreError::sqlite("reading a submission's flue_submission_chunks rows", e)
}

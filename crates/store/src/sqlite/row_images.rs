//! Whole-row access for SQLite inside the writer's transaction ([`RowAccess`]): the row images
//! an apply records and the restores an undo makes. Table and column names come only from the
//! fixed set turnscope writes (checked), values are bound.

use rusqlite::types::{Value as Sql, ValueRef};
use rusqlite::Connection;
use serde_json::{Map, Value};

use crate::images::{changed_columns, primary_key, RowAccess, RowImage};
use crate::StoreError;

const TABLES: [&str; 8] = [
    "flue_session_entries",
    "flue_sessions",
    "flue_agent_turn_journals",
    "flue_agent_submissions",
    "flue_agent_stream_chunks",
    "flue_event_streams",
    "flue_event_stream_entries",
    "flue_event_stream_keys",
];

/// A table or column name safe to splice into SQL: one of the tables turnscope writes, a column
/// made of lower-case letters, digits and `_`.
pub(crate) fn checked_name(name: &str, table: bool) -> Result<&str, StoreError> {
    let ok = if table {
        TABLES.contains(&name)
    } else {
        !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
    };
    if ok {
        Ok(name)
    } else {
        Err(StoreError::Sqlite {
            context: "undo".into(),
            detail: format!("the audit row names {name:?}, which turnscope never writes"),
        })
    }
}

fn to_json(v: ValueRef<'_>) -> Value {
    match v {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => Value::from(i),
        ValueRef::Real(f) => Value::from(f),
        ValueRef::Text(t) => Value::String(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Blob(b) => {
            let hex: String = b.iter().map(|x| format!("{x:02x}")).collect();
            serde_json::json!({ "$blob": hex })
        }
    }
}

fn to_sql(v: &Value) -> Sql {
    match v {
        Value::Null => Sql::Null,
        Value::Bool(b) => Sql::Integer(i64::from(*b)),
        Value::Number(n) => match n.as_i64() {
            Some(i) => Sql::Integer(i),
            None => Sql::Real(n.as_f64().unwrap_or(0.0)),
        },
        Value::String(s) => Sql::Text(s.clone()),
        Value::Object(o) => match o.get("$blob").and_then(Value::as_str) {
            Some(hex) => Sql::Blob(
                (0..hex.len() / 2)
                    .filter_map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).ok())
                    .collect(),
            ),
            None => Sql::Text(Value::Object(o.clone()).to_string()),
        },
        Value::Array(_) => Sql::Text(v.to_string()),
    }
}

fn where_key(key: &Map<String, Value>, first: usize) -> Result<(String, Vec<Sql>), StoreError> {
    let mut parts = Vec::new();
    let mut values = Vec::new();
    for (i, (k, v)) in key.iter().enumerate() {
        parts.push(format!("{} = ?{}", checked_name(k, false)?, first + i));
        values.push(to_sql(v));
    }
    Ok((parts.join(" AND "), values))
}

fn db(e: rusqlite::Error) -> StoreError {
    StoreError::sqlite("reading or restoring a row", e)
}

/// [`RowAccess`] on the writer's connection (inside its transaction).
pub(super) struct SqliteRows<'a>(pub &'a Connection);

impl RowAccess for SqliteRows<'_> {
    fn rows(
        &mut self,
        table: &str,
        key: &Map<String, Value>,
    ) -> Result<Vec<Map<String, Value>>, StoreError> {
        let table = checked_name(table, true)?;
        let (cond, values) = where_key(key, 1)?;
        let order = primary_key(table).join(", ");
        let mut stmt = self
            .0
            .prepare(&format!(
                "SELECT * FROM {table} WHERE {cond} ORDER BY {order}"
            ))
            .map_err(db)?;
        let names: Vec<String> = stmt.column_names().iter().map(|s| s.to_string()).collect();
        let rows = stmt
            .query_map(rusqlite::params_from_iter(values), |r| {
                let mut m = Map::new();
                for (i, n) in names.iter().enumerate() {
                    m.insert(n.clone(), to_json(r.get_ref(i)?));
                }
                Ok(m)
            })
            .map_err(db)?
            .collect::<Result<Vec<_>, _>>()
            .map_err(db)?;
        Ok(rows)
    }

    fn put(
        &mut self,
        table: &str,
        key: &Map<String, Value>,
        now: Option<&Map<String, Value>>,
        to: Option<&Map<String, Value>>,
    ) -> Result<(), StoreError> {
        let table = checked_name(table, true)?;
        match (now, to) {
            (_, None) => {
                let (cond, values) = where_key(key, 1)?;
                self.0
                    .execute(
                        &format!("DELETE FROM {table} WHERE {cond}"),
                        rusqlite::params_from_iter(values),
                    )
                    .map_err(db)?;
            }
            (Some(now), Some(to)) => {
                let cols = changed_columns(now, to);
                if cols.is_empty() {
                    return Ok(());
                }
                let mut sets = Vec::new();
                let mut values = Vec::new();
                for (i, (c, v)) in cols.iter().enumerate() {
                    sets.push(format!("{} = ?{}", checked_name(c, false)?, i + 1));
                    values.push(to_sql(v));
                }
                let (cond, key_values) = where_key(key, values.len() + 1)?;
                values.extend(key_values);
                self.0
                    .execute(
                        &format!("UPDATE {table} SET {} WHERE {cond}", sets.join(", ")),
                        rusqlite::params_from_iter(values),
                    )
                    .map_err(db)?;
            }
            (None, Some(to)) => {
                let mut cols = Vec::new();
                let mut marks = Vec::new();
                let mut values = Vec::new();
                for (i, (c, v)) in to.iter().enumerate() {
                    cols.push(checked_name(c, false)?);
                    marks.push(format!("?{}", i + 1));
                    values.push(to_sql(v));
                }
                self.0
                    .execute(
                        &format!(
                            "INSERT INTO {table} ({}) VALUES ({})",
                            cols.join(", "),
                            marks.join(", ")
                        ),
                        rusqlite::params_from_iter(values),
                    )
                    .map_err(db)?;
            }
        }
        Ok(())
    }
}

/// The images recorded in an audit row's `changes` column.
pub(super) fn images_json(images: &[RowImage]) -> String {
    serde_json::to_string(images).unwrap_or_else(|_| "[]".into())
}

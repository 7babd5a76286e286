//! PostgreSQL columns as SQLite-style values, so one set of row parsers (`store::parse`) reads
//! both backends.

use postgres::types::Type;
use rusqlite::types::Value;

/// A PostgreSQL row as SQLite-style values, for the shared parsers: integers of any width become
/// `Integer`, booleans 0/1, text `Text`, anything else its text form when it has one.
pub(crate) fn sqlite_values(row: &postgres::Row) -> Vec<Value> {
    (0..row.len()).map(|i| cell(row, i)).collect()
}

/// One column as an SQLite-style value (never panics on an unexpected column type).
pub(crate) fn cell(row: &postgres::Row, i: usize) -> Value {
    let ty = row.columns()[i].type_();
    let int = |v: Option<i64>| v.map_or(Value::Null, Value::Integer);
    if *ty == Type::INT8 {
        int(row.try_get::<_, Option<i64>>(i).ok().flatten())
    } else if *ty == Type::INT4 {
        int(row
            .try_get::<_, Option<i32>>(i)
            .ok()
            .flatten()
            .map(i64::from))
    } else if *ty == Type::INT2 {
        int(row
            .try_get::<_, Option<i16>>(i)
            .ok()
            .flatten()
            .map(i64::from))
    } else if *ty == Type::BOOL {
        int(row
            .try_get::<_, Option<bool>>(i)
            .ok()
            .flatten()
            .map(i64::from))
    } else {
        row.try_get::<_, Option<String>>(i)
            .ok()
            .flatten()
            .map_or(Value::Null, Value::Text)
    }
}

/// A column as text (`""` for NULL), whatever its type.
pub(crate) fn cell_text(row: &postgres::Row, i: usize) -> String {
    cell_opt_text(row, i).unwrap_or_default()
}

pub(crate) fn cell_opt_text(row: &postgres::Row, i: usize) -> Option<String> {
    match cell(row, i) {
        Value::Text(t) => Some(t),
        Value::Integer(n) => Some(n.to_string()),
        _ => None,
    }
}

/// A column as an integer, whatever its integer type (`None` for NULL or non-numbers).
pub(crate) fn cell_int(row: &postgres::Row, i: usize) -> Option<i64> {
    match cell(row, i) {
        Value::Integer(n) => Some(n),
        Value::Text(t) => t.trim().parse().ok(),
        _ => None,
    }
}

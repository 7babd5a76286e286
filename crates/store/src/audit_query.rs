//! Which audit records `turnscope audit` asks for, as one SQL condition both backends run: the
//! filters are applied by the database, not by reading the whole trail and dropping rows.

/// The audit records to read (every field `None`: the whole trail), newest first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuditQuery {
    /// Records of submissions whose id starts with this (a full id is its own prefix).
    pub submission_prefix: Option<String>,
    /// Records written at or after this instant (ms since the epoch).
    pub since_ms: Option<i64>,
    /// Records of exactly this operator.
    pub operator: Option<String>,
    /// Records of exactly this batch (a bulk apply, or the undo of one).
    pub batch: Option<String>,
    /// The newest this many of the records that match.
    pub limit: Option<usize>,
}

/// A value bound to a placeholder of [`AuditQuery::condition`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AuditParam {
    Text(String),
    Int(i64),
}

impl AuditQuery {
    /// Whether any filter is set (`limit` included).
    pub fn is_filtered(&self) -> bool {
        *self != AuditQuery::default()
    }

    /// The `WHERE` condition and its parameters, numbered `?1…` (`dollar` false, SQLite) or
    /// `$1…` (PostgreSQL). `has_batch_column` is false on an audit table of a turnscope older than
    /// batches: no record there has a batch, so a batch filter matches none.
    pub fn condition(&self, dollar: bool, has_batch_column: bool) -> (String, Vec<AuditParam>) {
        let mut terms: Vec<String> = Vec::new();
        let mut params: Vec<AuditParam> = Vec::new();
        let bind = |p: AuditParam, params: &mut Vec<AuditParam>| {
            params.push(p);
            format!("{}{}", if dollar { '$' } else { '?' }, params.len())
        };
        if let Some(prefix) = &self.submission_prefix {
            // substr/length count characters on both backends and, unlike LIKE, treat `_` and
            // `%` in an id as themselves and compare case-sensitively.
            let p = bind(AuditParam::Text(prefix.clone()), &mut params);
            terms.push(format!("substr(submission_id, 1, length({p})) = {p}"));
        }
        if let Some(since) = self.since_ms {
            let p = bind(AuditParam::Int(since), &mut params);
            terms.push(format!("at >= {p}"));
        }
        if let Some(op) = &self.operator {
            let p = bind(AuditParam::Text(op.clone()), &mut params);
            terms.push(format!("operator = {p}"));
        }
        if let Some(batch) = &self.batch {
            if has_batch_column {
                let p = bind(AuditParam::Text(batch.clone()), &mut params);
                terms.push(format!("batch_id = {p}"));
            } else {
                terms.push("1 = 0".into());
            }
        }
        if terms.is_empty() {
            return ("1 = 1".into(), params);
        }
        (terms.join(" AND "), params)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_filter_is_every_row() {
        assert_eq!(
            AuditQuery::default().condition(false, true),
            ("1 = 1".to_string(), vec![])
        );
        assert!(!AuditQuery::default().is_filtered());
    }

    #[test]
    fn every_filter_binds_its_value_in_order() {
        let q = AuditQuery {
            submission_prefix: Some("ab_%".into()),
            since_ms: Some(5),
            operator: Some("alice".into()),
            batch: Some("b1".into()),
            limit: Some(3),
        };
        let (sql, params) = q.condition(true, true);
        assert_eq!(
            sql,
            "substr(submission_id, 1, length($1)) = $1 AND at >= $2 AND operator = $3 AND batch_id = $4"
        );
        assert_eq!(
            params,
            vec![
                AuditParam::Text("ab_%".into()),
                AuditParam::Int(5),
                AuditParam::Text("alice".into()),
                AuditParam::Text("b1".into()),
            ]
        );
        let (sql, _) = q.condition(false, true);
        assert!(
            sql.starts_with("substr(submission_id, 1, length(?1)) = ?1"),
            "{sql}"
        );
    }

    #[test]
    fn a_batch_filter_on_a_table_without_batches_matches_nothing() {
        let q = AuditQuery {
            batch: Some("b1".into()),
            ..AuditQuery::default()
        };
        assert_eq!(q.condition(false, false), ("1 = 0".to_string(), vec![]));
        assert!(AuditQuery {
            limit: Some(1),
            ..AuditQuery::default()
        }
        .is_filtered());
    }
}

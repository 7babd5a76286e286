//! flue 2.x's submission row (`flue_agent_submissions` as 2.0.0–2.1.0 create it, SAES:737), as
//! the store reads it: no I/O here, only what the row says (its expired lease, its input entry).

use std::collections::HashMap;

use super::classify::{submission_entry_id, SessionKey};

/// One `flue_agent_submissions` row of a 2.x journal. Times are ms since the epoch (0 or `None`
/// where the runtime has not set them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Flue2SubmissionRow {
    pub sequence: i64,
    pub submission_id: String,
    pub session_key: String,
    /// `dispatch` or `direct`.
    pub kind: String,
    /// `queued`, `running`, `terminalizing`, `settled`, `joining` or `joined` (SAES:704).
    pub status: String,
    pub accepted_at: Option<i64>,
    pub canonical_ready_at: Option<i64>,
    pub attempt_id: Option<String>,
    pub input_applied_at: Option<i64>,
    pub abort_requested_at: Option<i64>,
    pub started_at: Option<i64>,
    pub joined_into: Option<String>,
    pub settled_at: Option<i64>,
    pub error: Option<String>,
    pub attempt_count: i64,
    pub max_attempts: i64,
    pub timeout_at: i64,
    pub owner_id: Option<String>,
    pub lease_expires_at: i64,
    pub settlement_record_id: Option<String>,
    /// The `submission_settled` record reserved for the settlement (JSON text), where reserved.
    pub settlement_record: Option<String>,
    /// The columns whose text is not valid UTF-8 (damage: the runtime writes only UTF-8), read
    /// with U+FFFD in place of each bad sequence, as the runtime's `node:sqlite` reads them.
    /// turnscope never writes such a row (its fence and undo could not keep the bytes).
    pub not_utf8: Vec<&'static str>,
    /// A column the runtime's row parser checks (`typeof` string or number, SAES:704) stored in
    /// another SQLite storage class, e.g. a kind stored as a BLOB; the values above are read from
    /// it anyway. The runtime's pass settles such a running row as failed.
    pub stored_as: Option<crate::journal::submission_rows::StoredAs>,
    /// What the runtime's row parser does with the row, its payload and its
    /// `flue_submission_chunks` rows (checked by the store as it reads a row a pass parses, see
    /// `flue2::submission_parse`; `Parses` for other rows).
    pub parse: ParseOutcome,
    /// Why every reconciliation pass of the journal throws before its expired-lease scan: a
    /// terminalizing row whose settlement obligation the runtime cannot parse
    /// (`flue2::submission_parse::obligation_failure`). A journal-wide fact, set by the store on
    /// each running and terminalizing row it reads (the rows it stops); `None` where passes run.
    pub pass_fails: Option<String>,
}

/// What the runtime's row parser (`parseSubmission`, ported by `flue2::submission_parse`) does
/// with a row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParseOutcome {
    /// It parses.
    Parses,
    /// It throws: what turnscope found, and the runtime's message (`None`: `JSON.parse`'s
    /// message, which turnscope cannot give for this text).
    Fails {
        problem: String,
        error: Option<String>,
    },
    /// turnscope cannot tell: `acceptedAt` is not in the form the runtime writes, and
    /// `Date.parse`'s other forms (local time, the legacy parser) are not ported.
    Undecided { why: String },
}

/// The statuses a 2.x row may have (the runtime's row check).
pub const FLUE2_STATUSES: [&str; 6] = [
    "queued",
    "running",
    "terminalizing",
    "settled",
    "joining",
    "joined",
];

impl Flue2SubmissionRow {
    /// The runtime's expired-lease test, unchanged from beta.7 (the recovery scan's
    /// `status = 'running' AND lease_expires_at > 0 AND lease_expires_at < now`).
    pub fn lease_expired(&self, now_ms: i64) -> bool {
        self.status == "running" && self.lease_expires_at > 0 && self.lease_expires_at < now_ms
    }

    /// The session key as the runtime parses it (`None`: not one it writes).
    pub fn session(&self) -> Option<SessionKey> {
        SessionKey::parse(&self.session_key)
    }

    /// The reserved settlement's `outcome` (`completed`, `failed`, `aborted`, …), where the
    /// row holds one that says.
    pub fn settlement_outcome(&self) -> Option<String> {
        let record: serde_json::Value =
            crate::js::lone_surrogates::from_str(self.settlement_record.as_deref()?).ok()?;
        record.get("outcome")?.as_str().map(str::to_string)
    }

    /// Every attempt of the budget spent (`attempt_count >= max_attempts`): the reconciler's
    /// budget step fails the submission at its next pass.
    pub fn attempts_exhausted(&self) -> bool {
        self.attempt_count >= self.max_attempts
    }

    /// The deadline (`timeout_at`, 0: none) has passed at `now_ms`, as the reconciler's timeout
    /// step tests it (`timeoutAt > 0 && Date.now() >= timeoutAt`): at `timeout_at` itself too.
    pub fn deadline_passed(&self, now_ms: i64) -> bool {
        self.timeout_at > 0 && now_ms >= self.timeout_at
    }

    /// The id of the submission's input entry (`submissionEntryId(kind, id)`).
    pub fn input_entry_id(&self) -> String {
        submission_entry_id(&self.kind, &self.submission_id)
    }
}

/// The deliveries joined into each submission and not settled yet (`joined_into` on a row whose
/// status is `joined`), by the submission they were joined into: the runtime settles them before
/// it, so every plan of a host names them.
pub fn joined_by_host(rows: &[Flue2SubmissionRow]) -> HashMap<String, Vec<String>> {
    let mut joined: HashMap<String, Vec<String>> = HashMap::new();
    for r in rows {
        if let (Some(host), "joined") = (&r.joined_into, r.status.as_str()) {
            joined
                .entry(host.clone())
                .or_default()
                .push(r.submission_id.clone());
        }
    }
    joined
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(status: &str, lease: i64) -> Flue2SubmissionRow {
        Flue2SubmissionRow {
            sequence: 1,
            submission_id: "sub_1".into(),
            session_key: r#"agent-session:["worker","s1","default","default"]"#.into(),
            kind: "dispatch".into(),
            status: status.into(),
            accepted_at: None,
            canonical_ready_at: None,
            attempt_id: None,
            input_applied_at: None,
            abort_requested_at: None,
            started_at: None,
            joined_into: None,
            settled_at: None,
            error: None,
            attempt_count: 0,
            max_attempts: 10,
            timeout_at: 0,
            owner_id: None,
            lease_expires_at: lease,
            settlement_record_id: None,
            settlement_record: None,
            not_utf8: Vec::new(),
            stored_as: None,
            parse: crate::flue2::rows::ParseOutcome::Parses,
            pass_fails: None,
        }
    }

    #[test]
    fn joined_deliveries_are_grouped_by_their_host_and_only_while_joined() {
        let mut rows = Vec::new();
        for (id, status, host) in [
            ("sub_a", "joined", Some("sub_h1")),
            ("sub_b", "joined", Some("sub_h2")),
            ("sub_c", "joined", Some("sub_h1")),
            ("sub_d", "completed", Some("sub_h1")),
            ("sub_e", "joined", None),
            ("sub_h1", "running", None),
        ] {
            let mut r = row(status, 0);
            r.submission_id = id.into();
            r.joined_into = host.map(str::to_string);
            rows.push(r);
        }
        let joined = joined_by_host(&rows);
        assert_eq!(joined.len(), 2);
        assert_eq!(joined["sub_h1"], ["sub_a", "sub_c"]);
        assert_eq!(joined["sub_h2"], ["sub_b"]);
    }

    #[test]
    fn only_a_running_row_with_a_past_nonzero_lease_is_expired() {
        assert!(row("running", 100).lease_expired(101));
        assert!(!row("running", 100).lease_expired(100));
        assert!(!row("running", 0).lease_expired(101));
        assert!(!row("terminalizing", 100).lease_expired(101));
        assert!(!row("queued", 100).lease_expired(101));
    }

    #[test]
    fn the_settlement_outcome_budget_and_deadline_come_from_the_row() {
        let mut r = row("terminalizing", 0);
        assert_eq!(r.settlement_outcome(), None);
        r.settlement_record =
            Some(r#"{"v":1,"type":"submission_settled","outcome":"aborted"}"#.into());
        assert_eq!(r.settlement_outcome().as_deref(), Some("aborted"));
        r.settlement_record = Some("not json".into());
        assert_eq!(r.settlement_outcome(), None);
        assert!(!r.attempts_exhausted());
        r.attempt_count = 10;
        assert!(r.attempts_exhausted());
        assert!(!r.deadline_passed(5));
        r.timeout_at = 4;
        assert!(r.deadline_passed(5) && r.deadline_passed(4) && !r.deadline_passed(3));
    }

    #[test]
    fn the_session_key_names_the_stream_and_the_input_entry() {
        let r = row("queued", 0);
        assert_eq!(r.session().unwrap().stream_path(), "agents/worker/s1");
        assert_eq!(r.input_entry_id(), "entry_dispatch_c3ViXzE");
    }
}

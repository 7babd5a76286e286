//! The backend-neutral traits for the SQLite backend, delegating to `SqliteStore`'s and
//! `SqliteWriter`'s own methods (kept where they are, so their bodies evolve in one place).

use std::collections::HashMap;

use crate::{
    Applied, ApplyError, AuditInfo, AuditLog, AuditRecord, JournalWriter, SessionBrowse,
    SessionRecord, SessionSummary, SqliteStore, SqliteWriter, StoreError,
};
use turnscope_core::recovery::changes::{Fence, RowChange};

impl SessionBrowse for SqliteStore {
    fn list_sessions(&self) -> Result<Vec<SessionSummary>, StoreError> {
        SqliteStore::list_sessions(self)
    }

    fn load_session(&self, key: &str) -> Result<Option<SessionRecord>, StoreError> {
        SqliteStore::load_session(self, key)
    }

    fn journal_phases(&self) -> Result<HashMap<String, (String, i64)>, StoreError> {
        SqliteStore::journal_phases(self)
    }

    fn bundle_fingerprint(
        &self,
        submission_id: &str,
        session_key: &str,
    ) -> Result<String, StoreError> {
        SqliteStore::bundle_fingerprint(self, submission_id, session_key)
    }
}

impl AuditLog for SqliteStore {
    fn audit_query(&self, query: &crate::AuditQuery) -> Result<Vec<AuditRecord>, StoreError> {
        SqliteStore::audit_query(self, query)
    }
}

impl JournalWriter for SqliteWriter {
    fn apply(
        &mut self,
        fence: &Fence,
        changes: &[RowChange],
        audit: &AuditInfo,
    ) -> Result<Applied, ApplyError> {
        SqliteWriter::apply(self, fence, changes, audit)
    }

    fn undo(
        &mut self,
        target: &crate::UndoTarget,
        audit: &AuditInfo,
        commit: bool,
    ) -> Result<crate::Undone, ApplyError> {
        SqliteWriter::undo(self, target, audit, commit)
    }
}

//! Why a worker request failed, carried up to the screen that shows it: the message and its hint
//! stay apart until `WorkerError::line` renders them (the one place that writes "message · hint").

use turnscope_store::{ApplyError, StoreError};

/// A failed worker request: what went wrong and, when the store knows one, what to do about it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct WorkerError {
    pub message: String,
    pub hint: Option<String>,
}

impl WorkerError {
    /// The worker's own refusal (read-only mode, a vanished database, an export file): no hint.
    pub fn message(message: impl Into<String>) -> WorkerError {
        WorkerError {
            message: message.into(),
            hint: None,
        }
    }

    /// The text the status line (and a screen's error line) shows: `message · hint`.
    pub fn line(&self) -> String {
        match &self.hint {
            Some(hint) => format!("{} · {hint}", self.message),
            None => self.message.clone(),
        }
    }
}

impl From<StoreError> for WorkerError {
    fn from(e: StoreError) -> WorkerError {
        WorkerError {
            hint: Some(e.hint()),
            message: e.to_string(),
        }
    }
}

impl From<ApplyError> for WorkerError {
    /// A store failure keeps its hint; a refused or unmatched write is its own explanation.
    fn from(e: ApplyError) -> WorkerError {
        match e {
            ApplyError::Store(e) => e.into(),
            other => WorkerError::message(other.to_string()),
        }
    }
}

impl From<&str> for WorkerError {
    fn from(message: &str) -> WorkerError {
        WorkerError::message(message)
    }
}

impl From<String> for WorkerError {
    fn from(message: String) -> WorkerError {
        WorkerError::message(message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_store_error_keeps_its_hint_apart_until_rendered() {
        let e = WorkerError::from(StoreError::Locked {
            detail: "busy".into(),
        });
        assert_eq!(e.message, "the database is locked (busy)");
        let hint = e.hint.clone().expect("a store error has a hint");
        assert_eq!(e.line(), format!("the database is locked (busy) · {hint}"));
        assert_eq!(e.to_string(), e.message);
    }

    #[test]
    fn a_message_renders_alone() {
        let e = WorkerError::message("no session s-1");
        assert_eq!(e.line(), "no session s-1");
    }

    #[test]
    fn a_refused_write_has_no_hint_but_a_store_failure_under_it_does() {
        let refused = WorkerError::from(ApplyError::Refused("already undone".into()));
        assert_eq!(refused.line(), "refused, nothing written: already undone");
        let store = WorkerError::from(ApplyError::Store(StoreError::Locked {
            detail: "busy".into(),
        }));
        assert!(store.hint.is_some());
    }
}

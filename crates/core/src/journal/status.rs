//! The two lifecycle facts of the journal as types: a submission's `status` (spec §1.4) and a
//! turn journal's `phase` (spec §3.1), as the rows hold them. A damaged database may hold any
//! text: it is [`Other`](SubmissionStatus::Other), kept byte for byte, so the JSON documents and
//! the views still show it as found, and a misspelt state cannot compile.

use std::fmt;

/// `flue_agent_submissions.status`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum SubmissionStatus {
    Queued,
    Running,
    Terminalizing,
    Settled,
    /// Not a status the runtime writes (a damaged row): kept as stored.
    Other(String),
}

impl SubmissionStatus {
    /// The statuses the runtime writes, in lifecycle order.
    pub const KNOWN: [SubmissionStatus; 4] = [
        SubmissionStatus::Queued,
        SubmissionStatus::Running,
        SubmissionStatus::Terminalizing,
        SubmissionStatus::Settled,
    ];

    pub fn parse(text: &str) -> SubmissionStatus {
        match text {
            "queued" => SubmissionStatus::Queued,
            "running" => SubmissionStatus::Running,
            "terminalizing" => SubmissionStatus::Terminalizing,
            "settled" => SubmissionStatus::Settled,
            other => SubmissionStatus::Other(other.to_string()),
        }
    }

    /// The text the runtime stores.
    pub fn as_str(&self) -> &str {
        match self {
            SubmissionStatus::Queued => "queued",
            SubmissionStatus::Running => "running",
            SubmissionStatus::Terminalizing => "terminalizing",
            SubmissionStatus::Settled => "settled",
            SubmissionStatus::Other(s) => s,
        }
    }
}

impl fmt::Display for SubmissionStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The stored text, parsed ([`SubmissionStatus::parse`]).
impl From<&str> for SubmissionStatus {
    fn from(text: &str) -> SubmissionStatus {
        SubmissionStatus::parse(text)
    }
}

/// As the stored text (the JSON documents show what the row holds).
impl serde::Serialize for SubmissionStatus {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// `flue_agent_turn_journals.phase`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum JournalPhase {
    BeforeProvider,
    ProviderStarted,
    ToolRequestRecorded,
    Committed,
    /// Not a phase the runtime writes (a damaged row): kept as stored.
    Other(String),
}

impl JournalPhase {
    /// The phases the runtime writes, in the order a turn goes through them.
    pub const KNOWN: [JournalPhase; 4] = [
        JournalPhase::BeforeProvider,
        JournalPhase::ProviderStarted,
        JournalPhase::ToolRequestRecorded,
        JournalPhase::Committed,
    ];

    pub fn parse(text: &str) -> JournalPhase {
        match text {
            "before_provider" => JournalPhase::BeforeProvider,
            "provider_started" => JournalPhase::ProviderStarted,
            "tool_request_recorded" => JournalPhase::ToolRequestRecorded,
            "committed" => JournalPhase::Committed,
            other => JournalPhase::Other(other.to_string()),
        }
    }

    /// The text the runtime stores.
    pub fn as_str(&self) -> &str {
        match self {
            JournalPhase::BeforeProvider => "before_provider",
            JournalPhase::ProviderStarted => "provider_started",
            JournalPhase::ToolRequestRecorded => "tool_request_recorded",
            JournalPhase::Committed => "committed",
            JournalPhase::Other(s) => s,
        }
    }

    /// Whether the runtime writes this phase (a damaged row's is reported as a problem).
    pub fn is_known(&self) -> bool {
        !matches!(self, JournalPhase::Other(_))
    }
}

impl fmt::Display for JournalPhase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The stored text, parsed ([`JournalPhase::parse`]).
impl From<&str> for JournalPhase {
    fn from(text: &str) -> JournalPhase {
        JournalPhase::parse(text)
    }
}

/// As the stored text.
impl serde::Serialize for JournalPhase {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_known_state_round_trips_and_a_damaged_one_is_kept() {
        for s in SubmissionStatus::KNOWN {
            assert_eq!(SubmissionStatus::parse(s.as_str()), s);
        }
        for p in JournalPhase::KNOWN {
            assert_eq!(JournalPhase::parse(p.as_str()), p);
            assert!(p.is_known());
        }
        let damaged = SubmissionStatus::parse("Running ");
        assert_eq!(damaged, SubmissionStatus::Other("Running ".into()));
        assert_eq!(damaged.to_string(), "Running ");
        let phase = JournalPhase::parse("half_written");
        assert!(!phase.is_known());
        assert_eq!(phase.as_str(), "half_written");
    }
}

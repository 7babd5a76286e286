//! The CLI on fixtures and on bad input: exit codes, one-line errors with a hint.

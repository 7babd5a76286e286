//! The runtime's SQLite schema (beta.7): the demo and the scale generator write journals with it,
//! and an export opened with `--db` is loaded into it (`export_db`).

/// The built-in SQLite adapter's schema, byte for byte as `sqlite_master` of a beta.7 database
/// shows it (SQLite stores the statement text after `CREATE TABLE`/`INDEX`, so the runtime's
/// `IF NOT EXISTS` does not appear there).
pub const DDL: &str = "CREATE TABLE flue_meta (\n\t\t key TEXT PRIMARY KEY,\n\t\t value TEXT NOT NULL\n\t\t);
CREATE TABLE flue_sessions (\n\t\t id TEXT PRIMARY KEY,\n\t\t data TEXT NOT NULL\n\t\t);
CREATE TABLE flue_session_entries (\n\t\t session_id TEXT NOT NULL,\n\t\t entry_id TEXT NOT NULL,\n\t\t position INTEGER NOT NULL,\n\t\t data TEXT NOT NULL,\n\t\t PRIMARY KEY (session_id, entry_id)\n\t\t);
CREATE INDEX flue_session_entries_session_position_idx\n\t\t ON flue_session_entries (session_id, position ASC);
CREATE TABLE flue_agent_submissions (\n\t\t sequence INTEGER PRIMARY KEY AUTOINCREMENT,\n\t\t submission_id TEXT NOT NULL UNIQUE,\n\t\t session_key TEXT NOT NULL,\n\t\t kind TEXT NOT NULL,\n\t\t payload TEXT NOT NULL,\n\t\t status TEXT NOT NULL,\n\t\t accepted_at INTEGER NOT NULL,\n\t\t attempt_id TEXT,\n\t\t input_applied_at INTEGER,\n\t\t recovery_requested_at INTEGER,\n\t\t started_at INTEGER,\n\t\t settled_at INTEGER,\n\t\t error TEXT,\n\t\t attempt_count INTEGER NOT NULL DEFAULT 0,\n\t\t max_retry INTEGER NOT NULL DEFAULT 10,\n\t\t timeout_at INTEGER NOT NULL DEFAULT 0,\n\t\t owner_id TEXT,\n\t\t lease_expires_at INTEGER NOT NULL DEFAULT 0,\n\t\t terminal_event_key TEXT,\n\t\t terminal_event_json TEXT,\n\t\t terminal_event_offset TEXT\n\t\t);
CREATE TABLE flue_agent_session_deletions (\n\t\t session_key TEXT PRIMARY KEY,\n\t\t started_at INTEGER NOT NULL\n\t\t);
CREATE TABLE flue_agent_dispatch_receipts (\n\t\t dispatch_id TEXT PRIMARY KEY,\n\t\t accepted_at INTEGER NOT NULL\n\t\t);
CREATE TABLE flue_agent_attempt_markers (\n\t\t submission_id TEXT NOT NULL,\n\t\t attempt_id TEXT NOT NULL,\n\t\t created_at INTEGER NOT NULL,\n\t\t PRIMARY KEY (submission_id, attempt_id)\n\t\t);
CREATE INDEX flue_agent_submissions_status_sequence_idx ON flue_agent_submissions (status, sequence ASC);
CREATE INDEX flue_agent_submissions_session_status_sequence_idx ON flue_agent_submissions (session_key, status, sequence ASC);
CREATE TABLE flue_agent_turn_journals (\n\t\t submission_id TEXT PRIMARY KEY,\n\t\t session_key TEXT NOT NULL,\n\t\t kind TEXT NOT NULL,\n\t\t attempt_id TEXT NOT NULL,\n\t\t operation_id TEXT NOT NULL,\n\t\t turn_id TEXT NOT NULL,\n\t\t phase TEXT NOT NULL,\n\t\t revision INTEGER NOT NULL,\n\t\t created_at INTEGER NOT NULL,\n\t\t updated_at INTEGER NOT NULL,\n\t\t checkpoint_leaf_id TEXT,\n\t\t tool_request_json TEXT,\n\t\t stream_key TEXT,\n\t\t stream_consumed_at INTEGER,\n\t\t committed INTEGER NOT NULL DEFAULT 0,\n\t\t committed_leaf_id TEXT\n\t\t);
CREATE TABLE flue_agent_stream_chunks (\n\t\t stream_key TEXT NOT NULL,\n\t\t segment_index INTEGER NOT NULL,\n\t\t body TEXT NOT NULL,\n\t\t PRIMARY KEY (stream_key, segment_index)\n\t\t);
CREATE TABLE flue_image_chunks (\n\t\t owner_kind TEXT NOT NULL,\n\t\t owner_id TEXT NOT NULL,\n\t\t owner_part TEXT NOT NULL,\n\t\t image_id TEXT NOT NULL,\n\t\t chunk_index INTEGER NOT NULL,\n\t\t chunk_count INTEGER NOT NULL,\n\t\t data TEXT NOT NULL,\n\t\t PRIMARY KEY (owner_kind, owner_id, owner_part, image_id, chunk_index)\n\t\t);
CREATE TABLE flue_runs (\n\t\t\t run_id TEXT PRIMARY KEY,\n\t\t\t workflow_name TEXT,\n\t\t\t status TEXT NOT NULL,\n\t\t\t started_at TEXT NOT NULL,\n\t\t\t payload TEXT,\n\t\t\t traceparent TEXT,\n\t\t\t tracestate TEXT,\n\t\t\t ended_at TEXT,\n\t\t\t is_error INTEGER,\n\t\t\t duration_ms INTEGER,\n\t\t\t result TEXT,\n\t\t\t error TEXT\n\t\t\t);
CREATE INDEX flue_runs_workflow_started_idx ON flue_runs (workflow_name, started_at DESC);
CREATE INDEX flue_runs_status_started_idx ON flue_runs (status, started_at DESC, run_id DESC);
CREATE TABLE flue_event_streams (\n  path         TEXT PRIMARY KEY,\n  next_offset  INTEGER NOT NULL DEFAULT 0,\n  closed       INTEGER NOT NULL DEFAULT 0\n);
CREATE TABLE flue_event_stream_entries (\n  path    TEXT NOT NULL,\n  seq     INTEGER NOT NULL,\n  data    TEXT NOT NULL,\n  PRIMARY KEY (path, seq)\n);
CREATE TABLE flue_event_stream_keys (\n  path    TEXT NOT NULL,\n  key     TEXT NOT NULL,\n  seq     INTEGER NOT NULL,\n  data    TEXT NOT NULL,\n  PRIMARY KEY (path, key),\n  UNIQUE (path, seq)\n);
CREATE TRIGGER flue_event_stream_key_append\nAFTER INSERT ON flue_event_stream_keys\nBEGIN\n  INSERT INTO flue_event_stream_entries (path, seq, data)\n  VALUES (NEW.path, NEW.seq, NEW.data);\n  UPDATE flue_event_streams SET next_offset = next_offset + 1\n  WHERE path = NEW.path;\nEND;
";

//! The reads (and the undo) of the 2.x sessions, incidents and audit screens, on the worker
//! thread, each answered with what the CLI computes: `turnscope_engine::flue2_find` (the matches
//! as `sessions --json` lists them), `flue2_incidents` (the `incidents --json` document) and the
//! store's audit query and undo (`audit --json`'s records, `undo`'s preview and write).

use serde_json::{json, Value};
use turnscope_core::journal::search::Needle;
use turnscope_engine::flue2_find::find_streams;
use turnscope_engine::flue2_incidents::incidents;
use turnscope_store::{AuditInfo, AuditQuery, UndoTarget};

use super::screens_messages::{HealthCell, ScreenRequest, ScreenResponse};
use super::screens_search::Search;
use super::worker::Flue2Worker;
use crate::worker_error::WorkerError;
use turnscope_engine::flue2_health::{stream_health, RowIndex};

/// The minimum length of a text search, as beta.7's sessions screen.
pub const MIN_TEXT: usize = 3;

impl Flue2Worker {
    pub(super) fn screen(&mut self, req: ScreenRequest) -> Option<ScreenResponse> {
        Some(match req {
            ScreenRequest::StopSearch => {
                self.search = None;
                return None;
            }
            ScreenRequest::Sessions { query } => {
                // A new query ends the search of the last one.
                self.search = None;
                let result = self.sessions(&query).map_err(WorkerError::from);
                let text = result.is_ok() && self.start_search(&query);
                ScreenResponse::Sessions {
                    query,
                    result,
                    text,
                }
            }
            ScreenRequest::InstanceRows { stream } => {
                let result = self
                    .reader()
                    .submissions()
                    .map(|rows| {
                        rows.into_iter()
                            .filter(|r| {
                                r.session().map(|k| k.stream_path()).as_ref() == Some(&stream)
                            })
                            .map(|r| r.submission_id)
                            .collect()
                    })
                    .map_err(WorkerError::from);
                ScreenResponse::InstanceRows { stream, result }
            }
            ScreenRequest::Incidents { now_ms } => ScreenResponse::Incidents(
                incidents(self.reader(), self.options(), now_ms)
                    .map(|i| Value::Object(i.doc(self.options(), self.reader().format_version())))
                    .map_err(WorkerError::from),
            ),
            ScreenRequest::Audit => ScreenResponse::Audit(
                self.reader()
                    .audit_query(&AuditQuery::default())
                    .map(|records| {
                        // As `audit --json` writes each record.
                        records
                            .iter()
                            .map(|a| {
                                let mut v = serde_json::to_value(a).unwrap_or_default();
                                v["batch"] = json!(a.batch_id);
                                v
                            })
                            .collect()
                    })
                    .map_err(WorkerError::from),
            ),
            ScreenRequest::Health { streams, now_ms } => {
                ScreenResponse::Health(self.health(streams, now_ms))
            }
            ScreenRequest::Undo {
                target,
                operator,
                reason,
                commit,
            } => {
                let result = self.undo(&target, operator, reason.clone(), commit);
                ScreenResponse::Undo {
                    target,
                    reason,
                    commit,
                    result,
                }
            }
        })
    }

    /// Each stream's health as `turnscope health` judges it (one stream folded at a time, in one
    /// snapshot with the rows its notes read).
    fn health(
        &self,
        streams: Vec<String>,
        now_ms: i64,
    ) -> Vec<(String, Result<HealthCell, WorkerError>)> {
        let options = self.options().clone();
        let read = self.reader().in_snapshot(|reader| {
            let rows = reader.submissions()?;
            let index = RowIndex::new(&rows);
            Ok(streams
                .iter()
                .map(|s| {
                    let cell = stream_health(reader, s, &index, &options, now_ms)
                        .map(|hs| {
                            let mut found = hs.iter().flat_map(|h| h.health.findings.iter());
                            let first = found.next().map(|f| f.hazard.kind().to_string());
                            HealthCell {
                                findings: usize::from(first.is_some()) + found.count(),
                                first,
                            }
                        })
                        .map_err(WorkerError::from);
                    (s.clone(), cell)
                })
                .collect::<Vec<_>>())
        });
        match read {
            Ok(v) => v,
            Err(e) => {
                let e = WorkerError::from(e);
                streams.into_iter().map(|s| (s, Err(e.clone()))).collect()
            }
        }
    }

    /// The text search of `query` (from [`MIN_TEXT`] characters) started on its own thread and
    /// connection, so the list, the detail and the writes' plans are not held up by a read of
    /// every record (seconds on a big journal): its matches come as they are found, with its
    /// progress, and esc stops it. Whether it started.
    fn start_search(&mut self, query: &str) -> bool {
        let q = query.trim().to_string();
        let (Some(notify), Some(needle)) = (self.notify.clone(), Needle::new(&q)) else {
            return false;
        };
        if q.chars().count() < MIN_TEXT {
            return false;
        }
        self.search = Search::start(self.reader().path(), query, needle, notify);
        self.search.is_some()
    }

    /// Wait for the text search to end (the test harness: answers in a known order).
    pub fn wait_search(&mut self) {
        if let Some(s) = self.search.as_mut() {
            s.wait();
        }
    }

    fn sessions(&self, query: &str) -> Result<Vec<Value>, turnscope_store::StoreError> {
        let reader = self.reader();
        let q = query.trim();
        reader.in_snapshot(|reader| {
            if q.is_empty() {
                return Ok(reader
                    .streams()?
                    .iter()
                    .map(|s| {
                        json!({
                            "stream": s.path,
                            "instance": turnscope_engine::flue2_find::instance_of(s),
                        })
                    })
                    .collect());
            }
            // The ids here; the text on its own thread (`start_search`).
            Ok(find_streams(reader, q)?.iter().map(|m| m.json()).collect())
        })
    }

    fn undo(
        &mut self,
        target: &str,
        operator: String,
        reason: Option<String>,
        commit: bool,
    ) -> Result<Vec<String>, String> {
        let target = UndoTarget::parse(target);
        let info = AuditInfo {
            operator,
            action: "undo".into(),
            reason,
            summary: String::new(),
            now_ms: turnscope_store::clock::now_ms(),
            batch_id: match &target {
                UndoTarget::Batch(_) => Some(turnscope_engine::actions::run::new_batch_id()),
                UndoTarget::Audit(_) => None,
            },
            side_effects: None,
        };
        let writer = self.writer()?;
        match writer.undo(&target, &info, commit) {
            Ok(done) => {
                let ids: Vec<String> = done
                    .records
                    .iter()
                    .map(|(id, _)| format!("#{id}"))
                    .collect();
                let mut lines = vec![if commit {
                    format!(
                        "undone: {} row(s) restored, write lock held {:.2} ms, recorded as audit {}",
                        done.restored.len(),
                        done.lock_held.as_secs_f64() * 1000.0,
                        done.audit_ids
                            .iter()
                            .map(|id| format!("#{id}"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                } else {
                    format!(
                        "undo {target}: revert audit {} ({} row(s)), in one fenced transaction:",
                        ids.join(", "),
                        done.restored.len()
                    )
                }];
                if !commit {
                    lines.extend(done.restored.iter().map(|l| format!("  {l}")));
                }
                Ok(lines)
            }
            Err(turnscope_store::ApplyError::Fenced(d)) => Err(format!(
                "refused, nothing written: the rows changed since turnscope wrote them ({})",
                d.join("; ")
            )),
            Err(e) => Err(e.to_string()),
        }
    }
}

//! The worker's writes and exports: plans for a key press, their fenced applies (each followed
//! until the runtime acts on it, `RuntimeActed`), the writer connection, and exports. A child of
//! `worker`, so it reaches the worker's state.

use super::*;

impl Worker {
    /// The submissions written to whose rows moved since: each read whole once and told from
    /// its baseline (`report::observed`). A row that did not move costs one row read.
    pub(super) fn runtime_acted(&mut self) -> Vec<crate::messages::RuntimeActed> {
        use turnscope_engine::report::observed::{observe, row_moved};
        if self.after_write.is_empty() {
            return Vec::new();
        }
        let cw = self.context_window;
        let watched = std::mem::take(&mut self.after_write);
        let Ok(store) = self.store() else {
            self.after_write = watched;
            return Vec::new();
        };
        let store = store.reader();
        let mut acted = Vec::new();
        let mut done = Vec::new();
        for (id, base) in &watched {
            let Ok(row) = store.find_submission(id) else {
                continue;
            };
            if !row_moved(&base.row, &row) {
                continue;
            }
            let now = turnscope_store::clock::now_ms();
            let Ok(after) = SubmissionReport::load(store, id, cw, now) else {
                continue;
            };
            if let Some(o) = observe(base, &after) {
                acted.push(crate::messages::RuntimeActed {
                    submission_id: id.clone(),
                    predicted: base.predicted.clone(),
                    as_predicted: base.as_predicted(&o),
                    observed: o,
                });
                done.push(id.clone());
            }
        }
        self.after_write = watched;
        for id in done {
            self.after_write.remove(&id);
        }
        acted
    }

    /// Plan `kind` on each submission, freshly read at `now_ms` (the fence is what this read saw).
    pub(super) fn plan(
        &mut self,
        kind: ActionKind,
        ids: &[String],
        reason: Option<String>,
        now_ms: i64,
    ) -> Planned {
        let cw = self.context_window;
        let mut items = Vec::with_capacity(ids.len());
        let live = self
            .store()
            .ok()
            .and_then(|s| turnscope_engine::actions::live::live_runtime(s.reader(), now_ms));
        let mut next_pass = None;
        for id in ids {
            let ids = self.id_source;
            let loaded = if self.writable {
                self.store().and_then(|s| {
                    run::prepare(
                        s.reader(),
                        kind,
                        id,
                        reason.as_deref(),
                        None,
                        cw,
                        now_ms,
                        ids,
                    )
                    .map_err(WorkerError::from)
                })
            } else {
                Err("turnscope is read-only: start it with --write to act on submissions".into())
            };
            if let Ok(p) = &loaded {
                next_pass = Some(turnscope_engine::actions::live::next_pass(&p.report));
            }
            let item = match loaded {
                Ok(p) => PlanItem {
                    submission_id: p.report.row().submission_id.clone(),
                    before: Some(StateSummary::of(&p.report)),
                    result: p.plan,
                },
                Err(e) => PlanItem {
                    submission_id: id.clone(),
                    before: None,
                    result: Err(Refusal {
                        reason: e.line(),
                        instead: "refresh and try again".into(),
                    }),
                },
            };
            items.push(item);
        }
        // One submission: what the runtime would do with it; a bulk: with each of them.
        let what = match (items.len(), next_pass) {
            (1, Some(n)) => n,
            _ => turnscope_engine::actions::live::BULK_NEXT_PASS.into(),
        };
        Planned {
            kind,
            reason,
            items,
            live_runtime: live.map(|l| l.warning(&what)).unwrap_or_default(),
            hidden: Vec::new(),
        }
    }

    /// Apply each planned item in its own fenced transaction, then re-read it.
    pub(super) fn apply(
        &mut self,
        items: &[PlanItem],
        operator: &str,
        now_ms: i64,
    ) -> Vec<Outcome> {
        let cw = self.context_window;
        let mut out = Vec::with_capacity(items.len());
        // A bulk apply: one batch id on all its audit rows (undone together with `U`).
        let writes = items
            .iter()
            .filter(|i| i.result.as_ref().is_ok_and(|p| !p.is_noop()))
            .count();
        let batch = (writes > 1).then(run::new_batch_id);
        for item in items {
            let result = match &item.result {
                Err(r) => OutcomeResult::Refused(r.clone()),
                Ok(plan) if plan.is_noop() => OutcomeResult::Noop(plan.summary.clone()),
                Ok(plan) => match self.writer() {
                    Err(e) => OutcomeResult::Error(e),
                    Ok(w) => match run::apply_in_batch(
                        &mut **w,
                        plan,
                        operator,
                        now_ms,
                        batch.as_deref(),
                    ) {
                        Ok(applied) => {
                            let after = self
                                .store()
                                .ok()
                                .and_then(|s| run::reread(s.reader(), plan, cw, now_ms).ok());
                            if let Some(a) = &after {
                                self.after_write.insert(
                                    plan.submission_id.clone(),
                                    turnscope_engine::report::observed::Baseline::of(a),
                                );
                            }
                            OutcomeResult::Applied {
                                applied,
                                after: after.as_ref().map(|r| Box::new(StateSummary::of(r))),
                            }
                        }
                        Err(ApplyError::Fenced(diffs)) => OutcomeResult::Fenced(diffs),
                        Err(e @ (ApplyError::Refused(_) | ApplyError::NotFound(_))) => {
                            OutcomeResult::Error(WorkerError::from(e))
                        }
                        Err(ApplyError::Store(e)) => {
                            // A broken connection is reopened on the next apply.
                            self.writer = None;
                            OutcomeResult::Error(WorkerError::from(e))
                        }
                    },
                },
            };
            let published = item
                .result
                .as_ref()
                .is_ok_and(|p| p.published_stream().is_some());
            let written = matches!(result, OutcomeResult::Applied { .. });
            out.push(Outcome {
                submission_id: item.submission_id.clone(),
                before: item.before.clone(),
                result,
                batch: batch.clone().filter(|_| written),
                published: published && written,
            });
        }
        out
    }

    pub(super) fn writer(&mut self) -> Result<&mut Box<dyn JournalWriter>, WorkerError> {
        if !self.writable {
            return Err(
                "turnscope is read-only: start it with --write to act on submissions".into(),
            );
        }
        if self.writer.is_none() {
            self.writer =
                Some(turnscope_store::open_writer(&self.target).map_err(WorkerError::from)?);
        }
        Ok(self.writer.as_mut().expect("just opened"))
    }

    /// The next request of `target` (`turnscope next-request`'s text): a popup's title and lines.
    pub(super) fn next_request(
        &mut self,
        target: &Target,
        now_ms: i64,
    ) -> Result<(String, Vec<String>), WorkerError> {
        use turnscope_engine::report::next_request::{NextRequestError, NextRequestReport};
        let cw = self.context_window;
        let store = self.store()?;
        let query = match target {
            Target::Submission(id) => id.as_str(),
            Target::Session(key) => key.as_str(),
        };
        let report =
            NextRequestReport::load(store, query, cw, now_ms, None).map_err(|e| match e {
                NextRequestError::Store(e) => WorkerError::from(e),
                NextRequestError::NotWhole(what) => {
                    WorkerError::message(format!("the session could not be read whole: {what}"))
                }
            })?;
        Ok((
            "Next request: what the model is sent next".into(),
            report.text_lines(),
        ))
    }

    pub(super) fn export(
        &mut self,
        target: &Target,
        path: &Path,
        redact: bool,
        now_ms: i64,
    ) -> Result<PathBuf, WorkerError> {
        let cw = self.context_window;
        let store = self.store()?;
        let what = match target {
            Target::Submission(id) => ExportTarget::Submission(id),
            Target::Session(key) => ExportTarget::Session(key),
        };
        let redaction = redact.then_some(turnscope_engine::report::redact::Redaction::ALL);
        let built = export::build(store, what, cw, now_ms, redaction).map_err(WorkerError::from)?;
        write_export(path, &export::to_text(&built.document))
    }
}

/// An export's text written to `path`, a file made for it (never one replaced), readable by its
/// owner only (an export holds whole conversations); removed again if it cannot be written
/// whole. Both formats' `e` write through it.
pub(crate) fn write_export(path: &Path, text: &str) -> Result<PathBuf, WorkerError> {
    let mut o = std::fs::OpenOptions::new();
    o.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(0o600);
    }
    let shown = path.display();
    let mut f = o.open(path).map_err(|e| {
        let fix = match e.kind() {
            std::io::ErrorKind::AlreadyExists => "choose another name (an export never replaces a file)",
            std::io::ErrorKind::PermissionDenied | std::io::ErrorKind::ReadOnlyFilesystem => {
                "press e again and give a directory you can write, e.g. ~/ or /tmp/ (or set export_dir in the configuration)"
            }
            _ => "press e again and give a path in an existing directory you can write",
        };
        WorkerError::message(format!("could not create {shown}: {e}; {fix}"))
    })?;
    if let Err(e) = f.write_all(text.as_bytes()).and_then(|_| f.sync_all()) {
        drop(f);
        let _ = std::fs::remove_file(path);
        return Err(WorkerError::message(format!(
            "could not write {shown}: {e}"
        )));
    }
    Ok(path.to_path_buf())
}

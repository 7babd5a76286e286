//! Write actions (write mode only): what a write key plans, what an apply asks the worker,
//! and how their answers open the confirm popup (`popups/confirm.rs`).

use super::*;

impl App {
    /// `w`: back to read-only at once; to write mode after a confirm (the worker then opens the
    /// writer, and a database that takes no writes says so). The place on screen is kept.
    pub(super) fn toggle_write_mode(&mut self) {
        if let Some(b) = &self.busy {
            let msg = format!("one action at a time: still {b}");
            self.info(&msg);
            return;
        }
        if self.write_mode() {
            self.cfg.read_only = true;
            self.list.clear_marks();
            self.effects
                .push(Effect::Request(Request::WriteMode(false)));
            self.info("read-only: the write keys are off (w switches back)");
            return;
        }
        if self.cfg.is_export {
            self.error("write mode is not available: an export is read-only (open the live database to act on submissions)");
            return;
        }
        if let Some(why) = self.cfg.write_refusal.clone() {
            self.error(&format!("write mode is not available: {why}"));
            return;
        }
        self.show(Popup::Confirm(Confirm::enable_writes(&self.cfg.operator)));
    }

    pub(super) fn request_write_mode(&mut self) {
        self.busy = Some("opening the database for writes…".into());
        self.effects.push(Effect::Request(Request::WriteMode(true)));
    }

    pub(super) fn on_write_mode(&mut self, on: bool, result: Result<(), WorkerError>) {
        self.busy = None;
        match (on, result) {
            (true, Ok(())) => {
                self.cfg.read_only = false;
                self.info(&format!(
                    "write mode as {}: every write is previewed and asks first · w goes back to read-only",
                    self.cfg.operator
                ));
            }
            (true, Err(e)) => {
                self.error(&format!("write mode is not available: {}", e.line()));
            }
            (false, _) => {}
        }
    }

    /// The submissions an action applies to: the marked rows (from the list), else the selected
    /// row, else the opened submission.
    pub(super) fn action_targets(&self) -> Result<Vec<String>, String> {
        if let Some(ins) = self.inspect() {
            return match ins.submission() {
                Some(s) => Ok(vec![s.report.row().submission_id.clone()]),
                None => Err("open a submission (⏎ on its input) to act on it".into()),
            };
        }
        match self.focus {
            Pane::List => self.list.write_targets(&self.items).map_err(String::from),
            Pane::Incidents => self
                .incidents
                .write_targets(&self.items, &self.list.marks)
                .map_err(String::from),
            // Only `R` is bound there: the batch the session's health says can be completed.
            Pane::Sessions => self.sessions.repair_target(),
            _ => Err("select a submission first".into()),
        }
    }

    pub(super) fn act(&mut self, kind: ActionKind) {
        if let Some(b) = &self.busy {
            let msg = format!("one action at a time: still {b}");
            self.info(&msg);
            return;
        }
        let ids = match self.action_targets() {
            Ok(ids) => ids,
            Err(e) => {
                self.info(&e);
                return;
            }
        };
        match ListScreen::write_ask(kind, ids) {
            WriteAsk::Reason(r) => self.show(Popup::Reason(r)),
            WriteAsk::Plan { kind, ids } => self.request_plan(kind, ids, None),
        }
    }

    pub(super) fn request_plan(
        &mut self,
        kind: ActionKind,
        ids: Vec<String>,
        reason: Option<String>,
    ) {
        let what = if ids.len() == 1 {
            popup_text::short_id(&ids[0])
        } else {
            format!("{} marked submissions", ids.len())
        };
        self.busy = Some(format!("planning {} of {what}…", kind.as_str()));
        self.info(&format!("reading {what} and planning {}…", kind.as_str()));
        self.effects.push(Effect::Request(Request::Plan {
            kind,
            ids,
            reason,
            now_ms: self.now_ms,
        }));
    }

    pub(super) fn request_apply(&mut self, kind: ActionKind, items: Vec<PlanItem>) {
        self.busy = Some(format!("applying {}…", kind.as_str()));
        self.show(Popup::Confirm(Confirm::applying(kind, &items)));
        self.effects.push(Effect::Request(Request::Apply {
            kind,
            items,
            operator: self.cfg.operator.clone(),
            now_ms: self.now_ms,
        }));
    }

    pub(super) fn request_undo(
        &mut self,
        target: turnscope_store::UndoTarget,
        reason: Option<String>,
        commit: bool,
    ) {
        if let Some(b) = &self.busy {
            let msg = format!("one action at a time: still {b}");
            self.info(&msg);
            return;
        }
        self.busy = Some(format!(
            "{} the undo of {target}…",
            if commit { "applying" } else { "checking" }
        ));
        self.effects.push(Effect::Request(Request::Undo {
            target,
            operator: self.cfg.operator.clone(),
            reason,
            commit,
        }));
    }

    /// `u` on an apply's result: ask why, unless the audit trail already shows the undo would
    /// be refused (then one line says so, and nothing is asked).
    pub(super) fn ask_undo(&mut self, target: turnscope_store::UndoTarget) {
        match self.audit.ask_undo(target) {
            crate::screens::Ask::Error(m) => self.error(&m),
            crate::screens::Ask::Show(p) => self.show(p),
            _ => {}
        }
    }

    pub(super) fn on_undo(
        &mut self,
        target: turnscope_store::UndoTarget,
        reason: Option<String>,
        commit: bool,
        result: Result<turnscope_store::Undone, WorkerError>,
    ) {
        self.busy = None;
        let popup = match (&result, commit) {
            (Ok(u), false) => Confirm::for_undo(&target, reason, u),
            (Ok(u), true) => {
                let ids: Vec<String> = u.audit_ids.iter().map(|i| format!("#{i}")).collect();
                // Our own undo is not "changed under you".
                for (_, submission) in &u.records {
                    self.own_writes.insert(submission.clone());
                }
                self.info(&format!(
                    "undone {target}: recorded as audit {}",
                    ids.join(", ")
                ));
                self.request_refresh();
                self.effects.push(Effect::Request(Request::Audit));
                Confirm::for_undone(&target, u, &ids)
            }
            (Err(e), _) => {
                self.error(&format!(
                    "undo {}",
                    crate::write::confirm::undo_refusal_line(&e.line())
                ));
                Confirm::undo_refused(&target, &e.line())
            }
        };
        self.show(Popup::Confirm(popup));
    }

    pub(super) fn on_planned(&mut self, mut p: Planned) {
        self.busy = None;
        // Marks the list does not show are named in the preview, so none is acted on unseen.
        let hidden: std::collections::HashSet<String> =
            self.list.hidden_marks(&self.items).into_iter().collect();
        p.hidden = p
            .items
            .iter()
            .filter(|i| hidden.contains(&i.submission_id))
            .map(|i| i.submission_id.clone())
            .collect();
        let (popup, note) = Confirm::for_planned(p);
        self.note(note);
        self.show(Popup::Confirm(popup));
    }

    pub(super) fn note(&mut self, note: Note) {
        match note {
            Note::Clear => self.status = None,
            Note::Info(m) => self.info(&m),
            Note::Error(m) => self.error(&m),
        }
    }

    pub(super) fn on_applied(&mut self, kind: ActionKind, outcomes: Vec<Outcome>) {
        self.busy = None;
        for o in &outcomes {
            if matches!(o.result, popup_text::OutcomeResult::Applied { .. }) {
                self.own_writes.insert(o.submission_id.clone());
            }
        }
        let (popup, note) = Confirm::for_applied(kind, &outcomes);
        self.note(note);
        self.show(Popup::Confirm(popup));
        // The marked rows an action went through are done with.
        for o in &outcomes {
            self.list.marks.remove(&o.submission_id);
        }
        // Fresh data everywhere: the list, the opened submission, the audit trail.
        self.request_refresh();
        if self.root != Root::Audit {
            self.effects.push(Effect::Request(Request::Audit));
        }
    }
}

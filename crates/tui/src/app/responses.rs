//! The worker's answers: snapshots merged into the screens (flashes; the "changed under you"
//! banner is worded by the list, `ListScreen::changed_under_you`, and the opened view,
//! `Inspect::on_refresh`),
//! opened views, entry bodies, exports, plans and results, the audit trail.

use super::*;

impl App {
    pub fn on_response(&mut self, resp: Response) {
        self.on_response_inner(resp);
        // A newly opened tree selects a row whose body may be needed.
        self.request_reads();
    }

    pub(super) fn on_response_inner(&mut self, resp: Response) {
        match resp {
            Response::Snapshot(Ok(snap)) => self.on_snapshot(*snap),
            Response::Verdicts(batch) => self.on_verdicts(batch),
            Response::Siblings { key, ids } => self.scale.siblings = Some((key, ids)),
            Response::Snapshot(Err(e)) => {
                // Also how a worker panic arrives: never leave an action waiting forever.
                self.busy = None;
                self.refresh_pending = false;
                self.last_refresh = Some(self.ui_now);
                self.db_error = Some(e);
            }
            Response::Opened { target, result } => {
                if let (Target::Submission(_), Ok(Opened::Submission(s))) = (&target, &result) {
                    self.want_siblings(&s.report.row().session_key.clone());
                }
                if let Some(ins) = self.stack.iter_mut().rev().find(|i| i.target == target) {
                    ins.on_read(result);
                }
            }
            Response::EntryBody {
                session,
                entry_id,
                result,
            } => {
                let full = result.ok().flatten();
                for ins in self.stack.iter_mut() {
                    ins.on_body(&session, &entry_id, full.as_deref());
                }
            }
            Response::Previews { session, result } => {
                for ins in self.stack.iter_mut() {
                    ins.on_previews(&session, &result);
                }
            }
            Response::SearchText {
                session,
                needle,
                result,
            } => self.on_search_text(&session, &needle, result),
            Response::WriteMode(on, result) => self.on_write_mode(on, result),
            Response::SessionHealth(answers) => self.sessions.on_health(
                answers
                    .into_iter()
                    .map(|(k, r)| (k, r.map_err(|e| e.line())))
                    .collect(),
            ),
            Response::FoundSessions { generation, result } => self
                .sessions
                .on_ids(generation, result.map_err(|e| e.line())),
            Response::SessionText {
                generation,
                matches,
                searched,
                error,
            } => self
                .sessions
                .on_text(generation, matches, searched, error.map(|e| e.line())),
            Response::NextRequest(Ok((title, lines))) => {
                self.status = None;
                self.show(Popup::info(
                    title,
                    lines
                        .into_iter()
                        .map(crate::popup_line::PopupLine::from)
                        .collect(),
                ));
            }
            Response::NextRequest(Err(e)) => self.error(&format!("next request: {}", e.line())),
            Response::Exported(Ok(path)) => self.info(&format!("exported to {}", path.display())),
            Response::Exported(Err(e)) => self.error(&format!("export failed: {}", e.line())),
            Response::Planned(p) => self.on_planned(p),
            Response::Applied { kind, outcomes } => self.on_applied(kind, outcomes),
            Response::Audit(result) => self.audit.on_read(result),
            Response::Undo {
                target,
                reason,
                commit,
                result,
            } => self.on_undo(target, reason, commit, result),
        }
    }

    pub(super) fn on_snapshot(&mut self, snap: Snapshot) {
        for a in &snap.runtime_acted {
            let msg = format!(
                "{}: {}",
                turnscope_core::journal::submission_rows::short_id(&a.submission_id),
                a.line()
            );
            if a.as_predicted {
                self.info(&msg);
            } else {
                self.error(&msg);
            }
            self.runtime_acted
                .insert(a.submission_id.clone(), a.clone());
        }
        self.refresh_pending = false;
        self.last_refresh = Some(self.ui_now);
        self.refresh_took = Some(snap.took);
        self.db_error = None;
        if self.cfg.now_override.is_none() {
            self.now_ms = snap.now_ms;
        }
        let selected_before = self.selected_item().cloned();
        let watched = snap.watched.clone();
        let same_filter = self.scale.filter == Some(snap.filter);
        let mut snap = snap;
        if self.loaded && same_filter {
            let until = self.ui_now + FLASH;
            self.scale
                .merge_pending(&self.items, &mut snap.items, &self.own_writes);
            let old: HashMap<&str, String> = self
                .items
                .iter()
                .map(|i| (i.row.submission_id.as_str(), i.signature()))
                .collect();
            for it in snap.items.iter().filter(|i| !i.pending) {
                if old.get(it.row.submission_id.as_str()) != Some(&it.signature()) {
                    self.flashes.insert(it.row.submission_id.clone(), until);
                }
            }
        } else {
            self.scale.pending_base.clear();
        }
        self.scale.on_snapshot(&snap);
        self.items = snap.items;
        // A marked row that no longer exists cannot be acted on: forget it (rows of another
        // filter are not loaded, so only a refresh of the same filter tells).
        let items = &self.items;
        if same_filter {
            self.list
                .marks
                .retain(|id| items.iter().any(|i| &i.row.submission_id == id));
        }
        if let Some(c) = snap.counts {
            self.counts = c;
            self.scale.counts_known = true;
        }
        if let Some(sessions) = snap.sessions {
            self.sessions.rows = sessions;
            self.scale.sessions_loaded = true;
        }
        let first = !self.loaded;
        self.loaded = true;
        self.rebuild_list();
        self.rebuild_sessions();
        if self
            .status
            .as_ref()
            .is_some_and(|s| s.level == Level::Refreshing)
        {
            let ms = self.refresh_took.map_or(0, |d| d.as_millis());
            self.info(&format!("refreshed in {ms} ms"));
        }
        // Our own writes are not "changed under you": forget them after this refresh.
        let own = std::mem::take(&mut self.own_writes);
        self.scale.own_recent = own.clone();
        // The selected row changed under the operator (the opened submission is checked below).
        if self.banner.is_none() {
            self.banner_base = None;
        }
        if self.stack.is_empty() {
            if let Some((c, base)) = self.list.changed_under_you(
                selected_before,
                self.banner_base.as_ref(),
                &self.items,
                watched.as_ref(),
                &own,
            ) {
                self.banner = Some(c);
                self.banner_base = Some(base);
            }
        }
        if first {
            // Said once the counts are in (they follow the first snapshot).
            self.scale.greet = true;
            self.greet();
        }
        if let Some((target, result)) = snap.open {
            let Some(ins) = self.stack.last_mut() else {
                return;
            };
            if ins.target != target {
                return;
            }
            if let Some((c, base)) = ins.on_refresh(result, self.banner_base.as_ref(), &own) {
                self.banner = Some(c);
                self.banner_base = Some(base);
            }
        }
    }
}

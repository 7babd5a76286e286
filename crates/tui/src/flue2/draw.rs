//! The 2.x app's drawing: the frame's layout, the header (format, classifier, view counts), the
//! navigation line, the status line, the footer's key hints and the help, beside the state and
//! keys in `mod.rs` (as beta.7's `app/draw.rs` and `app/chrome.rs`).

use super::*;

impl Flue2App {
    pub fn draw(&mut self, f: &mut Frame) {
        let area = f.area();
        if area.width < 30 || area.height < 8 {
            let msg = format!(
                "turnscope needs at least 30x8 (now {}x{})",
                area.width, area.height
            );
            f.render_widget(Paragraph::new(msg), area);
            return;
        }
        let [header, nav, body, status, footer] = RLayout::vertical([
            Constraint::Length(1),
            Constraint::Length(1),
            Constraint::Min(0),
            Constraint::Length(1),
            Constraint::Length(1),
        ])
        .areas(area);
        self.draw_header(f, header);
        self.draw_nav(f, nav);
        let t = self.cfg.theme;
        match self.detail.as_mut() {
            Some(d) => {
                d.page = body.height as usize;
                match (&d.doc, &d.error) {
                    (_, Some(e)) => f.render_widget(
                        Paragraph::new(Span::styled(format!(" {}", e.line()), t.error())),
                        body,
                    ),
                    (Some(doc), None) => {
                        // Only the rows on screen are held (a whale's are 80 MB); a scroll
                        // past the end, clamped to it, is built once more.
                        let (width, page) = (body.width as usize, d.page);
                        d.width = width;
                        let (mut shown, rows) = detail::window(
                            doc,
                            t,
                            self.now_ms,
                            width,
                            d.scroll,
                            page,
                            &mut d.entry_rows,
                        );
                        let scroll = d.scroll.min(rows.saturating_sub(page.max(1)));
                        if scroll != d.scroll {
                            shown = detail::window(
                                doc,
                                t,
                                self.now_ms,
                                width,
                                scroll,
                                page,
                                &mut d.entry_rows,
                            )
                            .0;
                        }
                        d.rows = rows;
                        d.scroll = scroll;
                        detail::draw(f, &shown, 0, body);
                    }
                    (None, None) => {
                        f.render_widget(Paragraph::new(Span::styled(" reading…", t.dim())), body)
                    }
                }
            }
            None if self.screen.is_some() => {
                let marks = self.cfg.write.then_some(&self.list.marks);
                if let Some(s) = self.screen.as_mut() {
                    s.draw(f, &t, self.now_ms, body, marks);
                }
            }
            None if !self.loaded && self.error.is_none() && self.list.rows.is_empty() => {
                f.render_widget(Paragraph::new(Span::styled(" reading…", t.dim())), body)
            }
            None => self.list.draw(f, &t, self.now_ms, body),
        }
        self.draw_status(f, status);
        self.draw_footer(f, footer);
        if let Some(p) = self.next_request.as_mut() {
            p.draw(f, &t, area);
        }
        if let Some(w) = &self.write {
            w.draw(f, &t, area);
        }
        if let Some(u) = &self.undo {
            u.draw(f, &t, area);
        }
        if let Some(e) = &self.export {
            e.render(f, area, t);
        }
        self.draw_palette(f, area);
        if self.help.is_some() {
            self.draw_help(f, area);
        }
        crate::text::scrub(f.buffer_mut());
    }

    fn draw_header(&self, f: &mut Frame, area: Rect) {
        let t = self.cfg.theme;
        let w = area.width as usize;
        let mut right = vec![if self.cfg.write {
            Span::styled(" WRITE ", t.badge_write())
        } else {
            Span::styled(" READ-ONLY ", t.badge_read_only())
        }];
        if let (true, Some(pinned)) = (self.cfg.show_pinned_clock, self.cfg.now_override) {
            right.push(Span::styled(
                format!(
                    " clock pinned to {} ",
                    turnscope_core::journal::time::iso_from_ms(pinned)
                ),
                t.badge_write(),
            ));
        }
        let fv = &self.cfg.format_version;
        let o = &self.cfg.options;
        // The format and the rules always; at length where there is room.
        let candidates = [
            format!(
                "{} · {} (as {})",
                format_label(fv),
                rules_label(o),
                o.variant.releases().join(", ")
            ),
            format!("{} · {}", format_label(fv), rules_label(o)),
            format!("flue 2.x · rules {} ({})", o.release, o.variant_name()),
        ];
        let name = clean(&self.cfg.display_name);
        let fixed = width(" turnscope ") + 2 + right.iter().map(|s| s.width()).sum::<usize>() + 2;
        // The longest form that leaves the name 24 cells (or all it needs); the name is cut to
        // what is left.
        let need = width(&name).min(24);
        let format = candidates
            .iter()
            .find(|c| w >= fixed + width(c) + need)
            .unwrap_or(&candidates[2])
            .clone();
        let name = fit(&name, w.saturating_sub(fixed + width(&format)).max(8));
        let mut v = vec![
            Span::styled(" turnscope ", t.title()),
            Span::raw(" "),
            Span::raw(name),
            Span::raw(" "),
        ];
        v.extend(right);
        v.push(Span::raw("  "));
        v.push(Span::styled(format, t.key()));
        f.render_widget(line(v), area);
    }

    fn draw_nav(&self, f: &mut Frame, area: Rect) {
        let t = self.cfg.theme;
        let mut v = vec![Span::raw(" ")];
        match (&self.detail, &self.screen) {
            (Some(d), _) => {
                v.push(Span::styled(
                    format!(
                        " {} ",
                        self.screen.as_ref().map_or("Submissions", |s| s.name())
                    ),
                    t.dim(),
                ));
                v.push(Span::styled(format!("› {} ", clean(&d.id)), t.selected()));
            }
            (None, Some(s)) => {
                v.push(Span::styled(" Submissions ", t.dim()));
                v.push(Span::styled(format!(" {} ", s.name()), t.selected()));
                if let Some(n) = s.nav() {
                    v.push(Span::styled(format!("  {n}"), t.matched()));
                }
            }
            (None, None) => {
                v.push(Span::styled(" Submissions ", t.selected()));
                v.push(Span::raw(" "));
                for (n, f) in [
                    RowFilter::Expired,
                    RowFilter::All,
                    RowFilter::Queued,
                    RowFilter::Running,
                    RowFilter::Terminalizing,
                    RowFilter::Settled,
                ]
                .into_iter()
                .enumerate()
                {
                    let view = view_of(f).unwrap_or_default();
                    let count = self
                        .list
                        .rows
                        .iter()
                        .filter(|r| match view {
                            View::Expired => r.lease_expired,
                            View::All => true,
                            View::Status(s) => r.status == s,
                        })
                        .count();
                    if n > 0 {
                        v.push(Span::styled(" · ", t.dim()));
                    }
                    let text = format!(
                        "[{}] {} {count}",
                        self.key_label(Action::Filter(f)),
                        view.name()
                    );
                    v.push(if view == self.list.view {
                        Span::styled(text, t.selected())
                    } else {
                        Span::styled(text, t.dim())
                    });
                }
                if let Some(n) = &self.list.narrow {
                    v.push(Span::styled(
                        format!("  {} (esc: all)", clean(&n.label)),
                        t.matched(),
                    ));
                }
                if self.searching || !self.list.query.is_empty() {
                    v.push(Span::styled(
                        format!(
                            "  /{}{}",
                            clean(&self.list.query),
                            if self.searching { "▏" } else { "" }
                        ),
                        t.matched(),
                    ));
                }
            }
        }
        f.render_widget(line(v), area);
    }

    fn draw_status(&self, f: &mut Frame, area: Rect) {
        let t = self.cfg.theme;
        let span = if let Some(e) = &self.error {
            Span::styled(format!(" {}", e.line()), t.error())
        } else if let Some(s) = &self.status {
            Span::styled(format!(" {s}"), t.warn())
        } else if let (None, Some(s)) = (&self.detail, &self.screen) {
            Span::styled(s.status(), t.dim())
        } else if self.detail.is_some() && self.cfg.write {
            Span::styled(
                " write mode: X abort, Q requeue, E extend, F fail this submission, each previewed first",
                t.dim(),
            )
        } else if self.detail.is_some() {
            Span::styled(
                " read-only: a flue 2.x journal's submissions are shown, not changed",
                t.dim(),
            )
        } else if self.classifying {
            Span::styled(
                format!(
                    " {} submission(s) in view {}: classifying them (their streams are being folded)…",
                    self.list.shown(self.now_ms).len(),
                    self.list.view.name()
                ),
                t.dim(),
            )
        } else if self.loaded {
            let marks = if self.list.marks.is_empty() {
                String::new()
            } else {
                format!(" · {}", self.marks_summary())
            };
            Span::styled(
                format!(
                    " {} of {} submission(s) in view {}{marks}",
                    self.list.shown(self.now_ms).len(),
                    self.list.rows.len(),
                    self.list.view.name()
                ),
                t.dim(),
            )
        } else {
            Span::styled(" reading the journal…", t.dim())
        };
        f.render_widget(line(vec![span]), area);
    }

    fn draw_footer(&self, f: &mut Frame, area: Rect) {
        let t = self.cfg.theme;
        let hints: Vec<(String, &str)> = if self.searching {
            vec![
                ("⏎".into(), "keep"),
                ("esc".into(), "clear"),
                ("⌫".into(), "delete"),
            ]
        } else if let (None, Some(s)) = (&self.detail, &self.screen) {
            let mut v = vec![(self.key_label(Action::Enter), "open")];
            if !matches!(s, screens::Screen::Incidents { .. }) {
                v.push((self.key_label(Action::StartFilter), "search"));
            }
            if self.cfg.write && matches!(s, screens::Screen::Audit { .. }) {
                v.push(("u/U".into(), "undo/batch"));
            }
            if self.cfg.write && matches!(s, screens::Screen::Incidents { .. }) {
                v.push((self.write_key_label(Action::ToggleMark), "mark all of it"));
                v.push(("X/Q/E/F".into(), "act"));
            }
            v.extend([
                (self.key_label(Action::Back), "back"),
                (self.key_label(Action::Copy), "copy"),
                (self.key_label(Action::Help), "help"),
                (self.key_label(Action::Quit), "quit"),
            ]);
            v
        } else if self.detail.is_some() {
            let mut v = vec![(
                format!(
                    "{}/{}",
                    self.key_label(Action::Down),
                    self.key_label(Action::Up)
                ),
                "scroll",
            )];
            v.push((self.key_label(Action::Search), "find"));
            if self
                .detail
                .as_ref()
                .and_then(|d| d.search.as_ref())
                .is_some_and(|s| !s.hits.is_empty())
            {
                v.push((
                    format!(
                        "{}/{}",
                        self.key_label(Action::SearchNext),
                        self.key_label(Action::SearchPrev)
                    ),
                    "next/previous",
                ));
            }
            if self.cfg.write {
                v.push(("X/Q/E/F".into(), "act"));
            }
            v.extend([
                (self.key_label(Action::Back), "back"),
                (self.key_label(Action::Copy), "copy"),
                (self.key_label(Action::Help), "help"),
                (self.key_label(Action::Quit), "quit"),
            ]);
            v
        } else {
            let mut v = vec![(self.key_label(Action::Enter), "open")];
            if self.cfg.write {
                v.push(("X/Q/E/F".into(), "act"));
                v.push((self.write_key_label(Action::ToggleMark), "mark"));
            }
            v.extend([
                ("1-6".into(), "view"),
                (self.key_label(Action::StartFilter), "search"),
                (self.key_label(Action::Copy), "copy"),
                (self.key_label(Action::Refresh), "refresh"),
                (self.key_label(Action::Help), "help"),
                (self.key_label(Action::Quit), "quit"),
            ]);
            v
        };
        let mut v = Vec::new();
        let mut used = 0;
        for (k, d) in hints {
            let need = width(&k) + width(d) + 3;
            if used + need > area.width as usize {
                break;
            }
            used += need;
            v.push(Span::styled(format!(" {k}"), t.key()));
            v.push(Span::raw(format!(" {d} ")));
        }
        f.render_widget(line(v), area);
    }

    fn draw_help(&mut self, f: &mut Frame, area: Rect) {
        let t = self.cfg.theme;
        let mut lines = vec![
            Line::styled(
                if self.cfg.write {
                    "A flue 2.x journal, write mode: the submissions, their detail, four actions, undo."
                } else {
                    "A flue 2.x journal, read-only: the submissions, their detail, sessions, incidents, audit."
                },
                t.title(),
            ),
            Line::styled(
                "s sessions · f find one (id or text) · I incidents · a audit trail · esc back",
                t.dim(),
            ),
            Line::raw(""),
        ];
        for (a, text) in HANDLED {
            lines.push(Line::from(vec![
                Span::styled(format!("{:<10}", self.key_label(*a)), t.key()),
                Span::raw(*text),
            ]));
        }
        // The write keys exist only in write mode (k9s: dangerous keys absent in read-only).
        if self.cfg.write {
            for (k, text) in write::KEYS {
                lines.push(Line::from(vec![
                    Span::styled(format!("{k:<10}"), t.key()),
                    Span::raw(text),
                ]));
            }
            for (key, text) in [
                (
                    self.write_key_label(Action::ToggleMark),
                    "mark or unmark the row; on incidents, every submission of the worker",
                ),
                (
                    self.write_key_label(Action::MarkAll),
                    "mark every row shown (the view and the / query)",
                ),
                (
                    self.write_key_label(Action::MarkRange),
                    "mark the rows from the last one marked to the cursor",
                ),
                (self.write_key_label(Action::ClearMarks), "unmark every row"),
                (
                    "X/Q/E/F".into(),
                    "with marks: act on every marked row, one batch (previewed)",
                ),
            ] {
                lines.push(Line::from(vec![
                    Span::styled(format!("{key:<10}"), t.key()),
                    Span::raw(text),
                ]));
            }
            lines.push(Line::from(vec![
                Span::styled(format!("{:<10}", "u / U"), t.key()),
                Span::raw("audit trail: undo the record / its bulk apply (asks why, previewed)"),
            ]));
        }
        lines.push(Line::raw(""));
        lines.push(Line::styled(
            format!(
                "{} marks the trailing uncommitted tool batch the classification names",
                PARTIAL_MARK
            ),
            t.partial(),
        ));
        if let Some(view) = self.help.as_mut() {
            view.draw(f, area, lines, t);
        }
    }
}

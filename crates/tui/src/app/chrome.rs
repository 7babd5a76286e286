//! Header (database, READ-ONLY or WRITE badge, marks, counts per status), the navigation line
//! (views, filters, breadcrumb), the banner, the status line and the footer of key hints.

use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::Span;
use ratatui::Frame;

use super::App;
use crate::keymap::{self, Action, FilterLabel};
use crate::messages::Target;
use crate::text::{clean, fit, width};
use crate::theme::Theme;
use crate::view_state::{InputMode, Level, Root};
use crate::widgets::line;
use turnscope_store::RowFilter;

/// Pick the first variant that fits `w` cells.
fn first_fit<'a>(variants: Vec<Vec<Span<'a>>>, w: usize) -> Vec<Span<'a>> {
    let n = variants.len();
    for (i, v) in variants.into_iter().enumerate() {
        let total: usize = v.iter().map(|s| s.width()).sum();
        if total <= w || i + 1 == n {
            return v;
        }
    }
    Vec::new()
}

pub fn header(f: &mut Frame, app: &App, area: Rect) {
    let t = app.cfg.theme;
    let name = clean(&app.cfg.display_name);
    let mut left = vec![Span::styled(" turnscope ", t.title()), Span::raw(" ")];
    left.push(Span::styled(name.clone(), Style::new()));
    left.push(Span::raw(" "));
    if app.cfg.read_only {
        left.push(Span::styled(" READ-ONLY ", t.badge_read_only()));
    } else {
        left.push(Span::styled(" WRITE ", t.badge_write()));
        if !app.list.marks.is_empty() {
            let hidden = app.list.hidden_marks(&app.items).len();
            let hidden = if hidden > 0 {
                format!(", {hidden} hidden by the filter")
            } else {
                String::new()
            };
            // The selection's total, as the incident strip totals a worker's rows.
            let costs = app.list.marked_costs(&app.items);
            let total: f64 = costs.iter().flatten().sum();
            let without = costs.iter().filter(|c| c.is_none()).count();
            // At least: some marked rows have no figure yet (space's status line counts them).
            let at_least = if without > 0 { "≥" } else { "" };
            left.push(Span::styled(
                format!(
                    " {} marked · {at_least}{}{hidden}",
                    app.list.marks.len(),
                    turnscope_engine::report::cost_text::money(total)
                ),
                t.marked(),
            ));
        }
    }
    if let (true, Some(pinned)) = (app.cfg.show_pinned_clock, app.cfg.now_override) {
        left.push(Span::styled(
            format!(
                " clock pinned to {} (writes use the real clock) ",
                turnscope_core::journal::time::iso_from_ms(pinned)
            ),
            t.badge_write(),
        ));
    }
    // -1: not counted yet (the counts follow the first frame; failed is counted in the background).
    // The four statuses add up to the rows; failed is a part of settled, so it is shown inside
    // it ("settled 34 (2 failed)"), not beside it as if it were a fifth status.
    let long = [
        RowFilter::Running,
        RowFilter::Queued,
        RowFilter::Terminalizing,
        RowFilter::Settled,
    ]
    .map(|f| (f, app.count_known(f).map_or(-1, |n| n as i64)));
    let failed = app.count_known(RowFilter::Failed).map_or(-1, |n| n as i64);
    let n_text = |n: i64| {
        // -1: still being counted.
        if n < 0 {
            "…".to_string()
        } else {
            n.to_string()
        }
    };
    let failed_span = |label: &str| {
        Span::styled(
            format!(" ({} {label})", n_text(failed)),
            if failed > 0 {
                t.filter(RowFilter::Failed)
            } else {
                t.dim()
            },
        )
    };
    let short = long.map(|(f, _)| f.short_label());
    let counts = |labels: &[&'static str], failed_label: &str| -> Vec<Span<'static>> {
        let mut v = vec![Span::raw("  ")];
        for (i, ((filter, n), label)) in long.iter().zip(labels).enumerate() {
            if i > 0 {
                v.push(Span::styled(" · ", t.dim()));
            }
            v.push(Span::styled(
                format!("{label} {}", n_text(*n)),
                if *n > 0 { t.filter(*filter) } else { t.dim() },
            ));
            if *filter == RowFilter::Settled && failed != 0 {
                v.push(failed_span(failed_label));
            }
        }
        v
    };
    let w = area.width as usize;
    let base: usize = left.iter().map(|s| s.width()).sum();
    let long_labels: Vec<&str> = long.iter().map(|(f, _)| f.label()).collect();
    // Narrowest: only the statuses that have rows.
    let mut nonzero = vec![Span::raw("  ")];
    for ((filter, n), label) in long.iter().zip(short) {
        if *n > 0 {
            nonzero.push(Span::styled(format!("{label} {n}"), t.filter(*filter)));
            if *filter == RowFilter::Settled && failed > 0 {
                nonzero.push(failed_span(RowFilter::Failed.short_label()));
            }
            nonzero.push(Span::raw(" "));
        }
    }
    // The format the journal was written in (a 2.x journal has its own header, `flue2/`) comes
    // first, in full where there is room, else as its release's suffix (`beta.7`).
    let format = clean(&app.cfg.format);
    let short_format = format.rsplit('-').next().unwrap_or(&format).to_string();
    let with = |f: &str, mut v: Vec<Span<'static>>| {
        v.insert(0, Span::styled(format!(" {f}"), t.key()));
        v
    };
    let tail = first_fit(
        vec![
            with(&format, counts(&long_labels, RowFilter::Failed.label())),
            with(&format, counts(&short, RowFilter::Failed.short_label())),
            with(
                &short_format,
                counts(&short, RowFilter::Failed.short_label()),
            ),
            with(&short_format, nonzero),
            with(&short_format, Vec::new()),
            Vec::new(),
        ],
        w.saturating_sub(base),
    );
    if base > w {
        // Very narrow: shorten the database name first.
        let keep = w.saturating_sub(base - width(&name)).max(4);
        left[2] = Span::raw(fit(&name, keep));
    }
    left.extend(tail);
    f.render_widget(line(left), area);
}

pub fn nav(f: &mut Frame, app: &App, area: Rect) {
    let t = app.cfg.theme;
    let w = area.width as usize;
    let tab = |name: &'static str, on: bool| {
        Span::styled(format!(" {name} "), if on { t.selected() } else { t.dim() })
    };
    if let Some(ins) = app.inspect() {
        let mut v = vec![Span::raw(" ")];
        let root = match app.root {
            Root::Submissions => "Submissions",
            Root::Sessions => "Sessions",
            Root::Audit => "Audit trail",
            Root::Incidents => "Incidents",
        };
        v.push(Span::styled(root, t.dim()));
        for (i, level) in app.stack.iter().enumerate() {
            v.push(Span::styled(" › ", t.dim()));
            let label = match &level.target {
                Target::Submission(id) => {
                    let short = turnscope_core::journal::submission_rows::short_id(id);
                    let inst = app
                        .items
                        .iter()
                        .find(|it| &it.row.submission_id == id)
                        .map(|it| format!(" ({} {})", it.row.kind, clean(&it.instance)))
                        .unwrap_or_default();
                    clean(&format!("submission {short}{inst}"))
                }
                Target::Session(key) => {
                    let inst = turnscope_core::journal::submission_rows::instance_id_of(key)
                        .unwrap_or_else(|| key.clone());
                    format!("session {}", clean(&inst))
                }
            };
            let style = if i + 1 == app.stack.len() {
                t.title()
            } else {
                Style::new()
            };
            v.push(Span::styled(label, style));
        }
        if !ins.search.query.is_empty() || app.input == Some(InputMode::Search) {
            let hits = ins.search.hits.len();
            v.push(Span::styled("  search ", t.dim()));
            v.push(Span::styled("/", t.key()));
            v.push(Span::styled(
                clean(&ins.search.query),
                if app.input_fresh {
                    t.selected()
                } else {
                    t.key()
                },
            ));
            if app.input == Some(InputMode::Search) {
                v.push(Span::styled("▏", t.key()));
            }
            v.push(Span::styled(
                format!(" {hits} hit{}", if hits == 1 { "" } else { "s" }),
                t.dim(),
            ));
            if ins.text_search_pending() {
                // The worker is reading the session's stored text (a whale's takes a second).
                v.push(Span::styled(" · searching the stored text…", t.dim()));
            }
        }
        f.render_widget(line(first_fit(vec![v], w)), area);
        return;
    }
    if app.root == Root::Audit {
        let n = app.audit.rows.len();
        let v = vec![
            Span::raw(" "),
            Span::styled(" Audit trail ", t.selected()),
            Span::styled(
                format!(
                    "  {n} applied action{} · newest first · a/esc back",
                    if n == 1 { "" } else { "s" }
                ),
                t.dim(),
            ),
        ];
        f.render_widget(line(first_fit(vec![v], w)), area);
        return;
    }
    if app.root == Root::Incidents {
        let (groups, stuck) = (app.incidents.groups.len(), app.incidents.stuck());
        let computing = match app.incidents.computing {
            0 => String::new(),
            n => format!(" · {n} plans computing"),
        };
        let v = vec![
            Span::raw(" "),
            Span::styled(" Incidents ", t.selected()),
            Span::styled(
                format!(
                    "  {stuck} stuck in {groups} group{} by worker{computing} · I/esc back",
                    if groups == 1 { "" } else { "s" }
                ),
                t.dim(),
            ),
        ];
        f.render_widget(line(first_fit(vec![v], w)), area);
        return;
    }
    let tabs = vec![
        tab("Submissions", app.root == Root::Submissions),
        tab("Sessions", app.root == Root::Sessions),
        Span::raw(" "),
    ];
    let mut rest: Vec<Vec<Span>> = Vec::new();
    if app.root == Root::Submissions {
        for short in [false, true] {
            let mut v = vec![Span::raw(" ")];
            for fl in RowFilter::all() {
                let on = app.list.filter == fl;
                let label = if short { fl.short_label() } else { fl.label() };
                v.push(Span::styled(format!("{}", fl.key()), t.key()));
                v.push(Span::styled(
                    format!(" {label} {} ", app.count_label(fl)),
                    if on { t.selected() } else { Style::new() },
                ));
                v.push(Span::raw(" "));
            }
            rest.push(v);
        }
    } else {
        rest.push(vec![Span::styled(
            turnscope_core::text::plural(app.sessions.rows.len() as u64, "session", "sessions"),
            t.dim(),
        )]);
    }
    let query = match app.root {
        Root::Submissions | Root::Audit | Root::Incidents => &app.list.query,
        Root::Sessions => &app.sessions.query,
    };
    // The worker narrowing (⏎ on the incidents screen) comes first: it must stay in sight.
    let mut chip = Vec::new();
    if let (Root::Submissions, Some(owner)) = (app.root, &app.list.owner) {
        let who = match owner {
            Some(o) => format!(
                "worker {}",
                clean(&turnscope_core::journal::submission_rows::short_id(o))
            ),
            None => "no owner".to_string(),
        };
        chip.push(Span::styled(format!(" {who} "), t.marked()));
    }
    let mut q = Vec::new();
    if !query.is_empty() || app.input == Some(InputMode::Filter) {
        q.push(Span::styled("/", t.key()));
        // Selected while typing would replace it.
        q.push(if app.input_fresh {
            Span::styled(clean(query), t.selected())
        } else {
            Span::raw(clean(query))
        });
        if app.input == Some(InputMode::Filter) {
            q.push(Span::styled("▏", t.key()));
        }
    }
    // What a query on a paged list searched: shown where it fits (the empty list says it too).
    let mut q_said = q.clone();
    if app.root == Root::Submissions && !query.is_empty() {
        if let Some(s) = app.searched_label() {
            q_said.push(Span::styled(format!(" · {s}"), t.dim()));
        }
    }
    let qw: usize = q.iter().map(|s| s.width()).sum();
    let tw: usize = tabs.iter().map(|s| s.width()).sum();
    let mut variants: Vec<Vec<Span>> = Vec::new();
    for q in [&q_said, &q] {
        for r in &rest {
            let mut v = tabs.clone();
            v.extend(chip.iter().cloned());
            v.extend(r.iter().cloned());
            v.extend(q.iter().cloned());
            variants.push(v);
        }
        for r in &rest {
            // Without the tabs: the current view is in the title anyway.
            let mut v = chip.clone();
            v.extend(r.iter().cloned());
            v.extend(q.iter().cloned());
            variants.push(v);
        }
    }
    let _ = (qw, tw);
    f.render_widget(line(first_fit(variants, w)), area);
}

pub fn banner(f: &mut Frame, app: &App, area: Rect) {
    if let Some(b) = &app.banner {
        let text = fit(&format!(" ⚠ {}", clean(b)), area.width as usize);
        f.render_widget(
            line(vec![Span::styled(
                format!("{text:<w$}", w = area.width as usize),
                app.cfg.theme.banner(),
            )]),
            area,
        );
    }
}

pub fn status(f: &mut Frame, app: &App, area: Rect) {
    let t = app.cfg.theme;
    let w = area.width as usize;
    let (text, style) = if let Some(e) = &app.db_error {
        (format!(" ✗ {}", clean(&e.line())), t.error())
    } else if let Some(s) = &app.status {
        match s.level {
            Level::Error => (format!(" ✗ {}", clean(&s.text)), t.error()),
            Level::Info | Level::Refreshing => (format!(" {}", clean(&s.text)), Style::new()),
        }
    } else if !app.loaded {
        (" reading the database…".to_string(), t.dim())
    } else {
        (String::new(), Style::new())
    };
    // Right side: where the cursor is, and how fresh the data is.
    let pos = match (app.inspect(), app.root) {
        (Some(ins), _) => format!(
            "{}/{}",
            (ins.sel + 1).min(ins.visible.len()),
            ins.visible.len()
        ),
        (None, Root::Submissions) => format!(
            "{}/{}",
            (app.list.selected + 1).min(app.list.view.len()),
            app.list.view.len()
        ),
        (None, Root::Sessions) => format!(
            "{}/{}",
            (app.sessions.selected + 1).min(app.sessions.view.len()),
            app.sessions.view.len()
        ),
        (None, Root::Incidents) => format!(
            "{}/{}",
            (app.incidents.selected + 1).min(app.incidents.groups.len()),
            app.incidents.groups.len()
        ),
        (None, Root::Audit) => format!(
            "{}/{}",
            (app.audit.selected + 1).min(app.audit.rows.len()),
            app.audit.rows.len()
        ),
    };
    let fresh = match app.last_refresh {
        _ if app.refresh_pending && app.loaded => " ⟳".to_string(),
        Some(t0) => {
            let s = app.ui_now.saturating_duration_since(t0).as_secs();
            format!(" ↻{s}s")
        }
        None => String::new(),
    };
    let progress = app
        .progress_label()
        .map(|p| format!("{p} · "))
        .unwrap_or_default();
    let right = format!("{progress}{pos}{fresh} ");
    let room = w.saturating_sub(width(&right) + 1);
    let left = fit(&text, room);
    let gap = w.saturating_sub(width(&left) + width(&right));
    f.render_widget(
        line(vec![
            Span::styled(left, style),
            Span::raw(" ".repeat(gap)),
            Span::styled(right, t.dim()),
        ]),
        area,
    );
}

pub fn footer(f: &mut Frame, app: &App, area: Rect) {
    let t = app.cfg.theme;
    let owned = |v: &[(&str, &'static str)]| -> Vec<(String, &'static str, bool)> {
        v.iter().map(|(k, t)| (k.to_string(), *t, false)).collect()
    };
    let hints: Vec<(String, &str, bool)> = if app.input.is_some() {
        owned(&input_hints())
    } else if let Some(hints) = app.popup.as_ref().and_then(|p| p.footer_hints()) {
        owned(&hints)
    } else {
        let can_go_back = app.inspect().is_some()
            || app.popup.is_some()
            || app.banner.is_some()
            || !app.list.query.is_empty()
            || app.list.owner.is_some()
            || app.root == Root::Incidents
            || !app.sessions.query.is_empty();
        let help_open = matches!(app.popup, Some(crate::popups::Popup::Help(_)));
        keymap::footer(&app.contexts(), app.write_mode())
            .into_iter()
            .filter(|(_, _, a)| match a {
                Action::Confirm | Action::Yes => !help_open,
                Action::NextPane => app.inspect().is_some(),
                Action::Back => can_go_back,
                Action::JumpCheckpoint | Action::JumpMatched => {
                    app.inspect().is_some_and(|i| i.submission().is_some())
                }
                _ => true,
            })
            .map(|(k, t, a)| {
                let key = match app.cfg.keys.key_for(a) {
                    // The configuration file rebound it: show the key that works.
                    Some(key) => keymap::key_label(&key),
                    None => k.to_string(),
                };
                (key, t, matches!(a, Action::Help | Action::Quit))
            })
            .collect()
    };
    f.render_widget(line(footer_spans(hints, area.width as usize, t)), area);
}

/// The footer's hints `(key, what, pinned)` that fit in `w` cells, in order. Room is kept at the
/// end for the pinned ones (help and quit), so a narrow terminal drops middle hints, never the
/// way to help or out.
fn footer_spans(hints: Vec<(String, &str, bool)>, w: usize, t: Theme) -> Vec<Span<'static>> {
    let need = |k: &str, desc: &str| width(k) + width(desc) + 3;
    let (pinned, rest): (Vec<_>, Vec<_>) = hints.into_iter().partition(|(_, _, p)| *p);
    let reserved: usize = pinned.iter().map(|(k, d, _)| need(k, d)).sum();
    let mut spans = Vec::new();
    let mut used = 0;
    let push = |k: &str, desc: &str, spans: &mut Vec<Span<'static>>| {
        spans.push(Span::styled(format!(" {k}"), t.key()));
        spans.push(Span::styled(format!(" {desc} "), t.dim()));
    };
    for (k, desc, _) in &rest {
        let n = need(k, desc);
        if used + n + reserved > w {
            break;
        }
        push(k, desc, &mut spans);
        used += n;
    }
    for (k, desc, _) in &pinned {
        let n = need(k, desc);
        if used + n > w {
            break;
        }
        push(k, desc, &mut spans);
        used += n;
    }
    spans
}

/// Keys that are plain text while typing in a filter or search (for the footer).
fn input_hints() -> Vec<(&'static str, &'static str)> {
    vec![("⏎", "keep"), ("esc", "clear"), ("^u", "erase")]
}

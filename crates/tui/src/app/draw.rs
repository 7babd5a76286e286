//! Drawing: the frame composer, the router's own render. It reads the app, builds the screens'
//! `DrawCtx` and calls every screen with its own state; the screens never see the app and
//! nothing here is used back by them. The chrome around the screens (header, navigation,
//! banner, status line, footer) is `chrome.rs`. The only state drawing touches is the layout (hit areas for the mouse and paging, and
//! scroll offsets that keep the selection in view).

use ratatui::layout::{Constraint, Layout as RLayout, Rect};
use ratatui::widgets::Paragraph;
use ratatui::Frame;

use super::{chrome, App};
use crate::view_state::{Layout, Root};

use crate::screens::inspect::{detail_pane, tree_pane};

/// Draw the whole screen. Every frame ends with [`crate::text::scrub`], so whatever a view
/// draws, no control, bidi or zero-width character reaches the terminal.
pub fn draw(f: &mut Frame, app: &mut App) {
    // The screens draw from `&App`; what drawing writes (offsets, hit areas) goes to the layout.
    let mut view = std::mem::take(&mut app.layout);
    view.new_frame();
    draw_views(f, app, &mut view);
    app.layout = view;
    // The previews of the tree rows just drawn that the view does not hold yet.
    app.request_previews();
    // The health of the sessions rows just drawn (the sessions screen's HEALTH column).
    app.request_health();
    crate::text::scrub(f.buffer_mut());
}

fn draw_views(f: &mut Frame, app: &App, view: &mut Layout) {
    let area = f.area();
    if area.width < 30 || area.height < 8 {
        let msg = format!(
            "turnscope needs at least 30x8 (now {}x{})",
            area.width, area.height
        );
        f.render_widget(Paragraph::new(msg), area);
        return;
    }
    let banner_h = u16::from(app.banner.is_some());
    // Header, navigation, the screen, the "changed under you" banner, status line, footer.
    let [header, nav, body, banner, status, footer] = RLayout::vertical([
        Constraint::Length(1),
        Constraint::Length(1),
        Constraint::Min(0),
        Constraint::Length(banner_h),
        Constraint::Length(1),
        Constraint::Length(1),
    ])
    .areas(area);
    chrome::header(f, app, header);
    chrome::nav(f, app, nav);
    if app.inspect().is_some() {
        inspect(f, app, view, body);
    } else {
        match app.root {
            Root::Submissions => app
                .list
                .draw(f, &app.draw_ctx(), &app.list_rows(), view, body),
            Root::Sessions => app.sessions.draw(f, &app.draw_ctx(), view, body),
            Root::Audit => app.audit.draw(f, &app.draw_ctx(), view, body),
            Root::Incidents => {
                app.incidents
                    .draw(f, &app.draw_ctx(), &app.incident_rows(), view, body)
            }
        }
    }
    if banner_h > 0 {
        chrome::banner(f, app, banner);
    }
    chrome::status(f, app, status);
    chrome::footer(f, app, footer);
    app.draw_popup(f, area, &mut view.popup);
}

/// Tree and detail side by side when there is room, stacked otherwise.
fn inspect(f: &mut Frame, app: &App, view: &mut Layout, body: Rect) {
    let [t, d] = if body.width >= 110 {
        let tw = body.width * 11 / 20;
        RLayout::horizontal([Constraint::Length(tw), Constraint::Min(0)]).areas(body)
    } else {
        // Stacked: the tree takes what it needs, up to 55%; the detail gets the rest.
        let rows = app.inspect().map_or(0, |i| i.visible.len()) as u16 + 2;
        let th = rows
            .clamp(5, (body.height * 11 / 20).max(5))
            .min(body.height.saturating_sub(3));
        RLayout::vertical([Constraint::Length(th), Constraint::Min(0)]).areas(body)
    };
    let cx = app.draw_ctx();
    tree_pane::draw(f, &cx, &app.stack, view, t);
    detail_pane::draw(f, &cx, &app.stack, view, d);
}

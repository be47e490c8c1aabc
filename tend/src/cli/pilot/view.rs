//! Drawing the fleet view. Only the rows that fit are built: with 200
//! panes a frame costs what a screenful costs (docs/PERFORMANCE.md).

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Modifier, Style, Stylize};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};
use ratatui::Frame;

use super::app::{App, Input, Mode};
use super::model::{self, BANDS, BAND_KEYS};
use tend_protocol::reply::Restorable;

/// What `?` shows.
pub(crate) const KEYS_HELP: &str = "\
↑ ↓  j k      choose an agent (PgUp PgDn, g G: first, last)
Enter         go to it (the popup closes)
a  y          approve its dialog (re-read first: sent only while it shows)
d  n          deny its dialog
t             type a prompt and send it (Enter sends, Esc cancels)
p             park with a note (on a parked agent: unpark)
s             snooze: then 1 15 minutes, 3 30 minutes, 6 6 hours, 0 until you type
u             unpark or unsnooze
C             continue it after its usage limit (the resume text; re-read first)
e             explain its state (rules, evidence)
c             capture it as a test case
1 … 0  l      show one band only (blocked … exited, l limited); again: all
r             fetch the list again
R             after a restart: what ran and where; Enter restores one, A every one
?             these keys
q  Esc        close";

/// One line of the list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Item {
    Header(usize, usize),
    Row(usize),
}

fn items(app: &App) -> Vec<Item> {
    let mut out = Vec::with_capacity(app.rows.len() + BANDS.len() + 1);
    let mut last = usize::MAX;
    for (i, &r) in app.rows.iter().enumerate() {
        let g = model::group_of(&app.panes[r]);
        if g != last {
            let n = app.rows[i..]
                .iter()
                .take_while(|&&x| model::group_of(&app.panes[x]) == g)
                .count();
            out.push(Item::Header(g, n));
            last = g;
        }
        out.push(Item::Row(i));
    }
    out
}

fn group_name(g: usize) -> &'static str {
    BANDS
        .get(g)
        .map_or("unreachable", |b| model::band_label(*b))
}

/// Draws the whole view.
pub(crate) fn draw(f: &mut Frame<'_>, app: &mut App) {
    let area = f.area();
    let preview_h = if area.height >= 16 {
        (area.height / 3).min(16)
    } else {
        0
    };
    let [top, list, preview, foot] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Min(1),
        Constraint::Length(preview_h),
        Constraint::Length(1),
    ])
    .areas(area);
    draw_bar(f, app, top);
    draw_list(f, app, list);
    if preview_h > 0 {
        draw_preview(f, app, preview);
    }
    draw_foot(f, app, foot);
    if let Mode::Restore(items, at) = &app.mode {
        draw_restore(f, inset(area, 2, 1), items, *at);
    }
    if let Mode::Text(title, lines, at) = &app.mode {
        let r = inset(area, 2, 1);
        f.render_widget(Clear, r);
        let h = r.height.saturating_sub(2) as usize;
        let at = (*at).min(lines.len().saturating_sub(h));
        let body: Vec<Line<'_>> = lines
            .iter()
            .skip(at)
            .take(h)
            .map(|l| Line::raw(l.as_str()))
            .collect();
        let block = Block::default().borders(Borders::ALL).title(format!(
            " {} — any key closes, ↑ ↓ scroll ",
            model::sanitize(title, 40)
        ));
        f.render_widget(Paragraph::new(body).block(block), r);
    }
}

/// Draws the list over the view.
fn draw_restore(f: &mut Frame<'_>, area: Rect, items: &[Restorable], at: usize) {
    f.render_widget(Clear, area);
    let mut lines: Vec<Line<'_>> = Vec::new();
    let mut selected_row = 0;
    for (i, c) in items.iter().enumerate() {
        if i == at {
            selected_row = lines.len();
        }
        let style = if i == at {
            Style::default().add_modifier(Modifier::REVERSED)
        } else {
            Style::default()
        };
        for (n, l) in crate::cli::restore::line(c, false).lines().enumerate() {
            let text = model::sanitize(l, 400);
            lines.push(if n == 0 {
                Line::styled(text, style)
            } else {
                Line::raw(text)
            });
        }
    }
    let h = area.height.saturating_sub(2) as usize;
    let skip = (selected_row + 2).saturating_sub(h);
    let body: Vec<Line<'_>> = lines.into_iter().skip(skip).collect();
    let block = Block::default().borders(Borders::ALL).title(
        " what ran when the last server ended — Enter restore this one · A every one · Esc back ",
    );
    f.render_widget(Paragraph::new(body).block(block), area);
}

fn inset(r: Rect, dx: u16, dy: u16) -> Rect {
    Rect {
        x: r.x + dx.min(r.width / 2),
        y: r.y + dy.min(r.height / 2),
        width: r.width.saturating_sub(2 * dx),
        height: r.height.saturating_sub(2 * dy),
    }
}

fn draw_bar(f: &mut Frame<'_>, app: &App, area: Rect) {
    let counts = model::counts(&app.panes);
    let mut spans = vec![Span::raw("tend pilot ").bold()];
    for (g, b) in BANDS.iter().enumerate() {
        if counts[g] == 0 && app.filter != Some(g) {
            continue;
        }
        let text = format!(" {} {} {} ", BAND_KEYS[g], model::band_label(*b), counts[g]);
        let style = if app.filter == Some(g) {
            Style::default().add_modifier(Modifier::REVERSED)
        } else if b.is_demand() {
            Style::default().add_modifier(Modifier::BOLD)
        } else {
            Style::default()
        };
        spans.push(Span::styled(text, style));
        spans.push(Span::raw("│"));
    }
    if app.filter.is_some() {
        spans.push(Span::raw(" (same key: all)"));
    }
    f.render_widget(Paragraph::new(Line::from(spans)), area);
}

fn draw_list(f: &mut Frame<'_>, app: &mut App, area: Rect) {
    let h = area.height as usize;
    if h == 0 {
        return;
    }
    if app.rows.is_empty() {
        let text = if app.filter.is_some() {
            "no agent in this band (press the same key again for all)"
        } else {
            "no agents"
        };
        f.render_widget(Paragraph::new(text), area);
        return;
    }
    let items = items(app);
    // Keep the selection in sight, its band's header too when it fits.
    let sel = app.selected_index();
    if let Some(pos) = sel.and_then(|s| items.iter().position(|i| *i == Item::Row(s))) {
        let want_top = if pos > 0 && matches!(items[pos - 1], Item::Header(..)) {
            pos - 1
        } else {
            pos
        };
        if want_top < app.offset {
            app.offset = want_top;
        } else if pos >= app.offset + h {
            app.offset = pos + 1 - h;
        }
    }
    app.offset = app.offset.min(items.len().saturating_sub(1));
    let w = area.width as usize;
    // Columns: marker 2, badge 9, agent, place, project, clock.
    let agent_w = 18.min(w / 5);
    let place_w = 16.min(w / 5);
    let project_w = 24.min(w / 4);
    let lines: Vec<Line<'_>> = items[app.offset..]
        .iter()
        .take(h)
        .map(|it| match *it {
            Item::Header(g, n) => Line::from(format!("── {} ({n})", group_name(g))).bold(),
            Item::Row(i) => {
                let p = &app.panes[app.rows[i]];
                let text = format!(
                    "{} {:<9}{:<aw$} {:<pw$} {:<jw$} {}",
                    if Some(i) == sel { "▶" } else { " " },
                    model::badge(p).unwrap_or(""),
                    fit(&model::agent_label(p), agent_w),
                    fit(&model::place(p), place_w),
                    fit(
                        &model::sanitize(p.project.as_deref().unwrap_or(""), 80),
                        project_w
                    ),
                    model::clock(p, app.now),
                    aw = agent_w,
                    pw = place_w,
                    jw = project_w,
                );
                if Some(i) == sel {
                    // The whole width, so that the selection reads as a bar.
                    Line::raw(format!("{:<w$}", fit(&text, w))).reversed()
                } else {
                    Line::raw(fit(&text, w))
                }
            }
        })
        .collect();
    f.render_widget(Paragraph::new(lines), area);
}

/// `s` cut to `w` characters.
fn fit(s: &str, w: usize) -> String {
    if s.chars().count() <= w {
        s.to_owned()
    } else {
        model::sanitize(s, w)
    }
}

fn draw_preview(f: &mut Frame<'_>, app: &App, area: Rect) {
    let Some(p) = app.current() else {
        f.render_widget(Block::default().borders(Borders::TOP), area);
        return;
    };
    let (for_pane, screen, dialog) = &app.preview;
    let mut lines: Vec<Line<'_>> = Vec::new();
    if for_pane == &p.pane {
        if !dialog.is_empty() {
            lines.push(Line::from("dialog:").bold());
            lines.extend(dialog.iter().map(|l| Line::raw(format!("  {l}"))));
            lines.push(Line::from("a approve · d deny").italic());
        } else {
            lines.extend(screen.iter().map(|l| Line::raw(l.as_str())));
        }
    }
    let h = area.height.saturating_sub(1) as usize;
    let skip = lines.len().saturating_sub(h);
    let lines: Vec<Line<'_>> = lines.into_iter().skip(skip).collect();
    let mut title = format!(
        " {} {} ",
        model::sanitize(&p.pane, 24),
        model::agent_label(p)
    );
    if let Some(m) = p.message.as_deref().filter(|m| !m.is_empty()) {
        title.push_str(&format!("— {} ", model::sanitize(m, 60)));
    }
    let block = Block::default().borders(Borders::TOP).title(title);
    f.render_widget(Paragraph::new(lines).block(block), area);
}

fn draw_foot(f: &mut Frame<'_>, app: &App, area: Rect) {
    let left = match &app.mode {
        Mode::Typing(Input::Prompt, pane, text) => {
            format!("prompt for {pane}: {}█", model::sanitize(text, 400))
        }
        Mode::Typing(Input::Note, pane, text) => {
            format!("park {pane}, note: {}█", model::sanitize(text, 400))
        }
        Mode::Snooze(pane) => {
            format!("snooze {pane}: 1 15m · 3 30m · 6 6h · 0 until you type · Esc")
        }
        _ if !app.connected => format!("not connected: {}", app.status),
        _ if !app.status.is_empty() => app.status.clone(),
        _ => "? keys · Enter go · a approve · d deny · t prompt · p park · s snooze · q quit"
            .to_owned(),
    };
    let sentences = model::sentences(&app.panes, app.now, crate::cli::limits::utc_offset());
    let mut spans = Vec::new();
    for (i, s) in sentences.iter().enumerate() {
        if i > 0 {
            spans.push(Span::raw(" │ "));
        }
        spans.push(Span::raw(s.clone()).reversed());
    }
    let right_w: usize = sentences.iter().map(|s| s.chars().count() + 3).sum();
    let [l, r] = Layout::horizontal([
        Constraint::Min(1),
        Constraint::Length(right_w.min(area.width as usize / 2) as u16),
    ])
    .areas(area);
    f.render_widget(Paragraph::new(fit(&left, l.width as usize)), l);
    f.render_widget(Paragraph::new(Line::from(spans)).right_aligned(), r);
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::backend::TestBackend;
    use ratatui::Terminal;
    use tend_protocol::PaneView;

    fn fleet(n: usize) -> Vec<PaneView> {
        let bands = ["blocked", "waiting", "quiet", "working", "idle", "parked"];
        (0..n)
            .map(|i| PaneView {
                pane: format!("%{i}"),
                session: "work".into(),
                agent: Some(["claude", "codex", "gemini"][i % 3].into()),
                version: Some("1.2.3".into()),
                state: Some(tend_vocab::State::Working.into()),
                reason: (i % 6 < 2).then(|| {
                    [
                        tend_vocab::Reason::Approval,
                        tend_vocab::Reason::Question,
                        tend_vocab::Reason::Error,
                    ][i % 3]
                }),
                band: tend_vocab::PaneBand::parse(bands[i % 6]),
                since: Some(1_000.0 + i as f64),
                place: Some(format!("work:{}.{}", i / 4, i % 4)),
                project: Some("shop · main".into()),
                ..PaneView::default()
            })
            .collect()
    }

    fn text(t: &Terminal<TestBackend>) -> String {
        let b = t.backend().buffer();
        let mut s = String::new();
        for y in 0..b.area.height {
            for x in 0..b.area.width {
                s.push_str(b[(x, y)].symbol());
            }
            s.push('\n');
        }
        s
    }

    #[test]
    fn draws_bands_rows_and_sentences() {
        let mut app = App::new(fleet(12));
        app.now = 1_200.0;
        let mut t = Terminal::new(TestBackend::new(100, 30)).unwrap();
        t.draw(|f| draw(f, &mut app)).unwrap();
        let s = text(&t);
        assert!(s.contains("1 blocked 2"), "{s}");
        assert!(s.contains("── blocked (2)"), "{s}");
        assert!(s.contains("4 agents need you"), "{s}");
        assert!(s.contains("2 agents have gone quiet"), "{s}");
        let blocked = s.find("── blocked").unwrap();
        let waiting = s.find("── waiting").unwrap();
        assert!(blocked < waiting, "{s}");
    }

    /// The time to draw a frame of 200 agents, printed:
    /// `cargo test -p tend --release --lib pilot_render_time -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn pilot_render_time() {
        let mut app = App::new(fleet(200));
        app.now = 2_000.0;
        let mut t = Terminal::new(TestBackend::new(160, 50)).unwrap();
        let rounds = 500;
        let start = std::time::Instant::now();
        for i in 0..rounds {
            app.step(if i % 2 == 0 { 7 } else { -3 });
            t.draw(|f| draw(f, &mut app)).unwrap();
        }
        let per = start.elapsed() / rounds;
        let start = std::time::Instant::now();
        for _ in 0..rounds {
            app.reorder();
        }
        let order = start.elapsed() / rounds;
        println!("pilot: 200 agents, 160x50: {per:?} a frame, {order:?} to order the rows");
    }
}

//! `tend pilot`: the fleet view. Every agent by band in one full-screen
//! view, live from the daemon's event stream, with the actions a user
//! needs (jump, approve, deny, prompt, park, snooze, explain, capture).
//! `prefix A` opens it in a `display-popup`; it runs in any terminal too.
//!
//! It costs the daemon nothing while closed: it is a client like `tend
//! events`. While open it fetches the list once (and again after a
//! reconnect or a lagged stream), then asks `get` for each pane an event
//! names, and `explain` for the selected pane's screen. Every action is the
//! request its CLI command sends (`answer`, `prompt`, `park`, `snooze`,
//! `goto`, …): typed text goes to the daemon as JSON, never through tmux or
//! a shell. Agent text is drawn through [`model::sanitize`].

mod app;
pub mod model;
mod restore;
mod view;

use crate::error::ErrorKind;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, Sender};
use std::time::{Duration, Instant};

use clap::Args;
use ratatui::crossterm::event::{
    DisableBracketedPaste, EnableBracketedPaste, KeyCode, KeyEvent, KeyModifiers,
};
use ratatui::crossterm::execute;
use ratatui::crossterm::terminal::{
    disable_raw_mode, enable_raw_mode, EnterAlternateScreen, LeaveAlternateScreen,
};
use tend_protocol::{params, BusEvent, Call};

use super::keyboard::{self, Typed};
use super::target::{ServerArgs, Target};
use crate::client;
use crate::error::CliError;
use tend_protocol::PaneView;

use app::{unix_now, App, Input, Mode, Msg};

const TIMEOUT: Duration = Duration::from_secs(5);

/// Arguments of `tend pilot`.
#[derive(Debug, Args)]
#[command(after_help = "\
Keys: ↑/↓ (j/k) choose · Enter go to it · a approve · d deny · t type a prompt ·
p park with a note (again: unpark) · s snooze (then 1 15m, 3 30m, 6 6h, 0 until
you type) · u unpark/unsnooze · e explain · c capture · 1…0 show one band (again:
all) · ? keys · q quit")]
pub struct PilotArgs {
    /// The tmux client that Enter moves (`prefix A` passes the one that
    /// pressed it; default: the most recently active).
    #[arg(long)]
    pub client: Option<String>,
    /// The daemon's control socket (what `prefix A` passes; default: the
    /// one for this tmux server).
    #[arg(long, hide = true)]
    pub socket: Option<PathBuf>,
}

fn io(e: std::io::Error) -> CliError {
    CliError::new(ErrorKind::Io, format!("terminal: {e}"))
}

/// Subscribes to the event stream on a thread: `Subscribed`, then each
/// event, then `Lost`.
fn subscribe(control: PathBuf, tx: Sender<Msg>) {
    std::thread::spawn(move || {
        let lost = |e: String| {
            let _ = tx.send(Msg::Lost(e));
        };
        let mut stream = match client::connect(&control) {
            Ok(s) => s,
            Err(e) => return lost(e.message),
        };
        let subscribe = client::request_line(params::Events::default());
        if let Err(e) = stream.write_all(subscribe.as_bytes()) {
            return lost(e.to_string());
        }
        for (i, line) in BufReader::new(stream).lines().enumerate() {
            let Ok(line) = line else { break };
            let msg = if i == 0 {
                Msg::Subscribed
            } else {
                Msg::Event(serde_json::from_str(&line).ok())
            };
            if tx.send(msg).is_err() {
                return;
            }
        }
        lost("the daemon closed the event stream".into());
    });
}

fn list(control: &Path) -> Result<Vec<PaneView>, CliError> {
    client::call(control, params::List {}, TIMEOUT)
}

/// Restores the terminal however the view ends.
struct Screen;

impl Drop for Screen {
    fn drop(&mut self) {
        let _ = disable_raw_mode();
        let _ = execute!(
            std::io::stdout(),
            DisableBracketedPaste,
            LeaveAlternateScreen,
            ratatui::crossterm::cursor::Show
        );
    }
}

/// `tend pilot`.
pub fn run(server: &ServerArgs, args: &PilotArgs) -> Result<(), CliError> {
    let control = match &args.socket {
        Some(s) => s.clone(),
        None => Target::resolve(server)?.control,
    };
    let panes = list(&control)?;
    let (tx, rx) = mpsc::channel();
    subscribe(control.clone(), tx.clone());
    enable_raw_mode().map_err(io)?;
    let _screen = Screen;
    execute!(
        std::io::stdout(),
        EnterAlternateScreen,
        EnableBracketedPaste
    )
    .map_err(io)?;
    let backend = ratatui::backend::CrosstermBackend::new(std::io::stdout());
    let mut term = ratatui::Terminal::new(backend).map_err(io)?;
    let mut app = App::new(panes);
    let mut pilot = Pilot {
        control,
        client: args.client.clone(),
        tx,
        reconnect_at: None,
        preview_for: None,
        preview_due: Some(Instant::now()),
    };
    pilot.offer_restore(&mut app);
    // A frame when something changed (a key, a resize, the daemon, the
    // preview), else once a second for the clocks.
    let mut drawn: Option<Instant> = None;
    let mut dirty = true;
    let mut keys = keyboard::Decoder::default();
    let mut pasting = false;
    loop {
        if pilot.preview_due.is_some_and(|d| Instant::now() >= d) {
            pilot.preview_due = None;
            pilot.load_preview(&mut app);
            dirty = true;
        }
        if dirty || drawn.is_none_or(|d| d.elapsed() >= Duration::from_secs(1)) {
            app.now = unix_now();
            term.draw(|f| view::draw(f, &mut app)).map_err(io)?;
            drawn = Some(Instant::now());
            dirty = false;
        }
        // Keys through tend's own decoder: the terminal's answers to
        // queries (which tmux 3.3a hands a new popup as if typed) are
        // dropped whole, never read as keys (cli/keyboard.rs). A resize
        // needs no event: each frame is drawn at the terminal's size.
        for typed in keyboard::read(&mut keys, Duration::from_millis(100)).map_err(io)? {
            dirty = true;
            let k = match typed {
                Typed::Key(k) => k,
                Typed::PasteStart => {
                    pasting = true;
                    continue;
                }
                Typed::PasteEnd => {
                    pasting = false;
                    continue;
                }
            };
            // A line break pasted into a prompt is text, not Enter.
            let k = if pasting && k.code == KeyCode::Enter {
                KeyEvent::new(KeyCode::Char(' '), KeyModifiers::NONE)
            } else {
                k
            };
            if !pilot.key(&mut app, k) {
                return Ok(());
            }
        }
        dirty |= pilot.drain(&mut app, &rx);
    }
}

struct Pilot {
    control: PathBuf,
    client: Option<String>,
    tx: Sender<Msg>,
    reconnect_at: Option<Instant>,
    preview_for: Option<String>,
    preview_due: Option<Instant>,
}

impl Pilot {
    fn call<C: Call>(&self, call: C) -> Result<C::Reply, CliError> {
        client::call(&self.control, call, TIMEOUT)
    }

    /// Everything the threads sent since the last round; whether there
    /// was anything.
    fn drain(&mut self, app: &mut App, rx: &Receiver<Msg>) -> bool {
        let mut dirty: Vec<String> = Vec::new();
        let mut relist = false;
        let mut any = false;
        while let Ok(m) = rx.try_recv() {
            any = true;
            match m {
                Msg::Subscribed => {
                    app.connected = true;
                    relist = true;
                }
                Msg::Lost(why) => {
                    app.connected = false;
                    app.status = format!("{why}; reconnecting…");
                    self.reconnect_at = Some(Instant::now() + Duration::from_secs(1));
                }
                Msg::Event(Some(BusEvent::Lagged { .. })) => relist = true,
                Msg::Event(ev) => {
                    if let Some(p) = ev.as_ref().and_then(BusEvent::pane) {
                        if !dirty.iter().any(|d| d == p) {
                            dirty.push(p.to_owned());
                        }
                    }
                }
            }
        }
        if self.reconnect_at.is_some_and(|t| Instant::now() >= t) {
            self.reconnect_at = None;
            subscribe(self.control.clone(), self.tx.clone());
        }
        if relist {
            if let Ok(p) = list(&self.control) {
                app.panes = p;
                app.reorder();
                app.status.clear();
            }
            self.preview_due = Some(Instant::now());
            return true;
        }
        for pane in dirty {
            self.refresh(app, &pane);
            if app.selected.as_deref() == Some(pane.as_str()) {
                self.preview_due = Some(Instant::now() + Duration::from_millis(150));
            }
        }
        any
    }

    fn refresh(&self, app: &mut App, pane: &str) {
        let get = params::Get {
            pane: pane.to_owned(),
        };
        match self.call(get) {
            Ok(v) => app.upsert(pane, Some(v)),
            Err(e) if e.kind == ErrorKind::Daemon(tend_protocol::ErrorCode::UnknownPane) => {
                app.upsert(pane, None)
            }
            Err(_) => {}
        }
    }

    /// The selected pane's last screen lines (`explain` returns the
    /// daemon's screen: no tmux command) and, for an approval, the
    /// dialog's text (`answer` with `dry_run`, as the picker does).
    fn load_preview(&mut self, app: &mut App) {
        let Some(p) = app.current().cloned() else {
            app.preview = Default::default();
            return;
        };
        self.preview_for = Some(p.pane.clone());
        let mut screen = Vec::new();
        let mut dialog = Vec::new();
        let explain = params::Explain {
            pane: p.pane.clone(),
        };
        match self.call(explain) {
            Ok(v) => screen = model::tail(&v.screen, 12, 200),
            Err(e) => screen.push(model::sanitize(&e.message, 200)),
        }
        if p.reason == Some(tend_vocab::Reason::Approval) {
            let dry_run = params::Answer {
                pane: p.pane.clone(),
                action: "approve".into(),
                dry_run: true,
            };
            if let Ok(d) = self.call(dry_run) {
                dialog = model::tail(&d.dialog, 8, 200);
            }
        }
        app.preview = (p.pane, screen, dialog);
    }

    fn said<T>(&self, app: &mut App, what: &str, r: Result<T, CliError>) {
        app.status = match r {
            Ok(_) => what.to_owned(),
            Err(e) => model::sanitize(&e.message, 300),
        };
    }

    /// One key; `false` ends the view.
    fn key(&mut self, app: &mut App, k: KeyEvent) -> bool {
        if k.modifiers.contains(KeyModifiers::CONTROL) && k.code == KeyCode::Char('c') {
            return false;
        }
        match app.mode.clone() {
            Mode::Typing(what, pane, mut text) => {
                match k.code {
                    KeyCode::Esc => app.mode = Mode::List,
                    KeyCode::Enter => {
                        app.mode = Mode::List;
                        let r = match what {
                            Input::Prompt => self
                                .call(params::Prompt {
                                    pane: pane.clone(),
                                    text,
                                    ..Default::default()
                                })
                                .map(drop),
                            Input::Note => self
                                .call(params::Park {
                                    pane: pane.clone(),
                                    note: text,
                                    gate: None,
                                })
                                .map(drop),
                        };
                        let done = match what {
                            Input::Prompt => format!("{pane}: prompt sent"),
                            Input::Note => format!("{pane}: parked"),
                        };
                        self.said(app, &done, r);
                        self.refresh(app, &pane);
                    }
                    KeyCode::Backspace => {
                        text.pop();
                        app.mode = Mode::Typing(what, pane, text);
                    }
                    KeyCode::Char(c) if !c.is_control() => {
                        text.push(c);
                        app.mode = Mode::Typing(what, pane, text);
                    }
                    _ => {}
                }
                return true;
            }
            Mode::Snooze(pane) => {
                self.snooze_key(app, k.code, pane);
                return true;
            }
            Mode::Text(title, lines, at) => {
                let page = 10;
                app.mode = match k.code {
                    KeyCode::Down | KeyCode::Char('j') => {
                        Mode::Text(title, lines, at.saturating_add(1))
                    }
                    KeyCode::Up | KeyCode::Char('k') => {
                        Mode::Text(title, lines, at.saturating_sub(1))
                    }
                    KeyCode::PageDown | KeyCode::Char(' ') => {
                        Mode::Text(title, lines, at.saturating_add(page))
                    }
                    KeyCode::PageUp => Mode::Text(title, lines, at.saturating_sub(page)),
                    _ => Mode::List,
                };
                return true;
            }
            Mode::Restore(items, at) => return self.restore_key(app, k, items, at),
            Mode::List => {}
        }
        let pane = app.current().map(|p| p.pane.clone());
        let before = app.selected.clone();
        match k.code {
            KeyCode::Char('q') | KeyCode::Esc => return false,
            KeyCode::Down | KeyCode::Char('j') => app.step(1),
            KeyCode::Up | KeyCode::Char('k') => app.step(-1),
            KeyCode::PageDown => app.step(10),
            KeyCode::PageUp => app.step(-10),
            KeyCode::Home | KeyCode::Char('g') => app.step(isize::MIN / 2),
            KeyCode::End | KeyCode::Char('G') => app.step(isize::MAX / 2),
            KeyCode::Char('?') => {
                app.mode = Mode::Text(
                    "keys".into(),
                    view::KEYS_HELP.lines().map(str::to_owned).collect(),
                    0,
                )
            }
            KeyCode::Char(c) if model::BAND_KEYS.contains(&c) => {
                let g = model::BAND_KEYS.iter().position(|x| *x == c).unwrap_or(0);
                app.toggle_filter(g);
            }
            KeyCode::Char('R') => self.open_restore(app),
            KeyCode::Char('r') => {
                if let Ok(p) = list(&self.control) {
                    app.panes = p;
                    app.reorder();
                }
                self.preview_due = Some(Instant::now());
            }
            _ => {
                let Some(pane) = pane else { return true };
                return self.act(app, k.code, pane);
            }
        }
        if app.selected != before {
            self.preview_due = Some(Instant::now() + Duration::from_millis(120));
        }
        true
    }

    /// A key after `s`: the snooze's length (anything else: none).
    fn snooze_key(&self, app: &mut App, code: KeyCode, pane: String) {
        app.mode = Mode::List;
        let len = match code {
            KeyCode::Char('1') => "15m",
            KeyCode::Char('3') => "30m",
            KeyCode::Char('6') => "6h",
            KeyCode::Char('0') => "unlimited",
            _ => return,
        };
        let r = self.call(params::Snooze {
            pane: pane.clone(),
            length: Some(len.to_owned()),
        });
        self.said(app, &format!("{pane}: snoozed ({len})"), r);
        self.refresh(app, &pane);
    }

    /// An action on the selected pane.
    fn act(&mut self, app: &mut App, code: KeyCode, pane: String) -> bool {
        let view = app.current().cloned().unwrap_or_default();
        match code {
            KeyCode::Enter => {
                // `goto` moves the client (across sessions and windows, or
                // to a remote's window); then the popup closes.
                let goto = params::Goto {
                    pane: pane.clone(),
                    client: self.client.clone(),
                };
                match self.call(goto) {
                    Ok(_) => return false,
                    Err(e) => app.status = model::sanitize(&e.message, 300),
                }
            }
            KeyCode::Char('a') | KeyCode::Char('y') | KeyCode::Char('d') | KeyCode::Char('n') => {
                let approve = matches!(code, KeyCode::Char('a') | KeyCode::Char('y'));
                let action = if approve { "approve" } else { "deny" };
                // The daemon reads the screen again first: nothing is sent
                // unless the dialog is still there.
                let r = self.call(params::Answer {
                    pane: pane.clone(),
                    action: action.to_owned(),
                    dry_run: false,
                });
                let word = if approve { "approved" } else { "denied" };
                self.said(app, &format!("{pane}: {word}"), r);
                self.refresh(app, &pane);
                self.preview_due = Some(Instant::now() + Duration::from_millis(300));
            }
            KeyCode::Char('C') => {
                // The daemon reads the screen again first: nothing is sent
                // unless the agent still shows its usage limit.
                let r = self.call(params::Resume {
                    pane: pane.clone(),
                    text: None,
                });
                let word = match &r {
                    Ok(v) => match &v.text {
                        Some(t) => format!("{pane}: resumed, sent {t:?}"),
                        None => format!("{pane}: resumed, pressed {}", v.keys.join(" ")),
                    },
                    Err(_) => String::new(),
                };
                self.said(app, &word, r);
                self.refresh(app, &pane);
                self.preview_due = Some(Instant::now() + Duration::from_millis(300));
            }
            KeyCode::Char('t') => app.mode = Mode::Typing(Input::Prompt, pane, String::new()),
            KeyCode::Char('p') if view.parked => {
                let r = self.call(params::Unpark { pane: pane.clone() });
                self.said(app, &format!("{pane}: unparked"), r);
                self.refresh(app, &pane);
            }
            KeyCode::Char('p') => app.mode = Mode::Typing(Input::Note, pane, String::new()),
            KeyCode::Char('s') => app.mode = Mode::Snooze(pane),
            KeyCode::Char('u') => {
                let p = pane.clone();
                let (r, word) = if view.parked {
                    (self.call(params::Unpark { pane: p }).map(drop), "unparked")
                } else {
                    (
                        self.call(params::Unsnooze { pane: p }).map(drop),
                        "unsnoozed",
                    )
                };
                self.said(app, &format!("{pane}: {word}"), r);
                self.refresh(app, &pane);
            }
            KeyCode::Char('e') => {
                let mut out = Vec::new();
                let args = super::explain::ExplainArgs {
                    pane: Some(pane.clone()),
                    file: None,
                    agent: None,
                    title: None,
                    alternate: false,
                    json: false,
                };
                let text = match super::explain::live_at(&self.control, &pane, &args, &mut out) {
                    Ok(()) => String::from_utf8_lossy(&out).into_owned(),
                    Err(e) => e.message,
                };
                app.mode = Mode::Text(format!("explain {pane}"), text_lines(&text), 0);
            }
            KeyCode::Char('c') => {
                let mut out = Vec::new();
                let args = super::capture::CaptureArgs {
                    pane: pane.clone(),
                    dir: None,
                    json: false,
                };
                let text = match super::capture::run_at(&self.control, &args, &mut out) {
                    Ok(()) => String::from_utf8_lossy(&out).into_owned(),
                    Err(e) => e.message,
                };
                app.mode = Mode::Text(format!("capture {pane}"), text_lines(&text), 0);
            }
            _ => {}
        }
        true
    }
}

fn text_lines(text: &str) -> Vec<String> {
    text.lines().map(|l| model::sanitize(l, 400)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pane(id: &str, band: &str, since: f64) -> PaneView {
        PaneView {
            pane: id.into(),
            agent: Some("codex".into()),
            state: Some(tend_vocab::State::Working.into()),
            band: tend_vocab::PaneBand::parse(band),
            since: Some(since),
            ..PaneView::default()
        }
    }

    #[test]
    fn the_selection_follows_its_pane_and_filters_toggle() {
        let mut app = App::new(vec![
            pane("%1", "working", 5.0),
            pane("%2", "waiting", 9.0),
            pane("%3", "working", 1.0),
        ]);
        assert_eq!(app.selected.as_deref(), Some("%2"));
        app.step(1);
        assert_eq!(app.selected.as_deref(), Some("%3"));
        // %3 starts waiting: it moves up, the selection with it.
        app.upsert("%3", Some(pane("%3", "waiting", 20.0)));
        assert_eq!(app.selected.as_deref(), Some("%3"));
        assert_eq!(app.selected_index(), Some(1));
        // 5 (working) shows %1 alone; again, every band.
        let working = model::BANDS
            .iter()
            .position(|b| *b == tend_attention::Band::Working)
            .unwrap();
        app.toggle_filter(working);
        assert_eq!(app.rows.len(), 1);
        assert_eq!(app.selected.as_deref(), Some("%1"));
        app.toggle_filter(working);
        assert_eq!(app.rows.len(), 3);
        // A pane that closes leaves the list.
        app.upsert("%1", None);
        assert_eq!(app.rows.len(), 2);
        assert_eq!(app.selected.as_deref(), Some("%2"));
    }
}

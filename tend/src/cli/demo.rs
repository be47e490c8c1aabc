//! `tend demo`: a tmux session whose panes replay small recordings of real
//! agents (bundled into the binary), so a newcomer sees tend work within a
//! minute without any agent installed. `tend play` is the player each pane
//! runs.

use crate::error::ErrorKind;
use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::Args;
use tend_detector::cast::{Cast, EventKind};
use tend_tmux::escape::shell_join;

use super::target::ServerArgs;
use crate::error::{read_file, CliError};

/// The demo's recordings: `(agent, name, cast)`. Trimmed copies of corpus
/// recordings (the first ~40 s of each).
pub const DEMO_CASTS: &[(&str, &str, &str)] = &[
    (
        "claude",
        "approval",
        include_str!("../../demo/claude-approval.cast"),
    ),
    (
        "codex",
        "question",
        include_str!("../../demo/codex-question.cast"),
    ),
    (
        "gemini",
        "question",
        include_str!("../../demo/gemini-question.cast"),
    ),
    (
        "aider",
        "question",
        include_str!("../../demo/aider-question.cast"),
    ),
];

/// Arguments of `tend demo`.
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Name of the session to create.
    #[arg(long, default_value = "tend-demo")]
    pub session: String,
    /// Do not switch or attach to the demo session.
    #[arg(long)]
    pub detached: bool,
}

/// Arguments of `tend play`.
#[derive(Debug, Args)]
pub struct PlayArgs {
    /// A recording file, or `demo:<agent>` for a bundled one.
    pub cast: String,
    /// Play it again and again.
    #[arg(long)]
    pub repeat: bool,
    /// Seconds to hold the last screen (0: forever).
    #[arg(long, default_value_t = 0.0)]
    pub hold: f64,
    /// Stop at this point of the recording (seconds) until a line of input
    /// arrives (Enter), then go on: a replayed agent that answers a prompt.
    /// Repeat for several stops.
    #[arg(long)]
    pub wait_input_at: Vec<f64>,
    /// Append every byte typed into the player to this file (what a test
    /// checks to see exactly which keys an agent would have received).
    #[arg(long)]
    pub input_log: Option<PathBuf>,
}

/// `tend play`: writes a recording's output to stdout on its own clock.
pub fn play(args: &PlayArgs) -> Result<(), CliError> {
    let text = match args.cast.strip_prefix("demo:") {
        Some(agent) => DEMO_CASTS
            .iter()
            .find(|(a, _, _)| *a == agent)
            .map(|(_, _, c)| (*c).to_owned())
            .ok_or_else(|| {
                CliError::new(
                    ErrorKind::UnknownAgent,
                    format!("no demo recording for `{agent}`"),
                )
            })?,
        None => read_file(&PathBuf::from(&args.cast))?,
    };
    let cast = Cast::parse(&text)
        .map_err(|e| CliError::new(ErrorKind::BadRecording, format!("{}: {e}", args.cast)))?;
    let lines = quiet_terminal(args.input_log.clone());
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    loop {
        let mut start = Instant::now();
        let mut stops = args.wait_input_at.clone();
        stops.sort_by(f64::total_cmp);
        let mut stops = stops.into_iter().peekable();
        for ev in &cast.events {
            if let EventKind::Output(b) = &ev.kind {
                let mut due = false;
                while stops.next_if(|at| ev.at.as_secs_f64() >= *at).is_some() {
                    due = true;
                }
                if due {
                    // Hold here until Enter; the rest keeps its pace.
                    let paused = Instant::now();
                    while lines.recv().is_ok_and(|l| !l) {}
                    start += paused.elapsed();
                }
                let due = start + ev.at;
                let now = Instant::now();
                if due > now {
                    std::thread::sleep(due - now);
                }
                if out.write_all(b).and_then(|_| out.flush()).is_err() {
                    return Ok(());
                }
            }
        }
        if !args.repeat {
            break;
        }
        std::thread::sleep(Duration::from_secs(5));
        let _ = out.write_all(b"\x1b[?1049l\x1b[2J\x1b[H");
    }
    if args.hold > 0.0 {
        std::thread::sleep(Duration::from_secs_f64(args.hold));
    } else {
        loop {
            std::thread::sleep(Duration::from_secs(3600));
        }
    }
    Ok(())
}

/// Recorded agents ask the terminal questions (cursor position reports,
/// colour queries); the terminal's answers arrive on our stdin. Turn off
/// echo so they do not print over the replayed screen, and swallow them.
/// Returns a channel that receives `true` for each Enter typed (and
/// `false` for other input).
fn quiet_terminal(log: Option<PathBuf>) -> std::sync::mpsc::Receiver<bool> {
    use nix::sys::termios::{self, LocalFlags, SetArg};
    let stdin = std::io::stdin();
    if let Ok(mut t) = termios::tcgetattr(&stdin) {
        t.local_flags.remove(LocalFlags::ECHO | LocalFlags::ICANON);
        let _ = termios::tcsetattr(&stdin, SetArg::TCSANOW, &t);
    }
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        use std::io::Read;
        let mut log = log.and_then(|p| {
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(p)
                .ok()
        });
        let mut buf = [0u8; 1024];
        let mut input = std::io::stdin();
        while let Ok(n) = input.read(&mut buf) {
            if n == 0 {
                break;
            }
            if let Some(f) = log.as_mut() {
                let _ = f.write_all(&buf[..n]).and_then(|_| f.flush());
            }
            let enter = buf[..n].iter().any(|b| *b == b'\r' || *b == b'\n');
            let _ = tx.send(enter);
        }
    });
    rx
}

/// `tend demo`.
pub fn demo(server: &ServerArgs, args: &DemoArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let srv = server.server();
    let exe = std::env::current_exe().map_err(|e| {
        CliError::new(
            ErrorKind::Exe,
            format!("cannot find the tend executable: {e}"),
        )
    })?;
    let exe = exe.to_string_lossy().into_owned();
    let tmux_err = |e: tend_tmux::TmuxError| CliError::new(ErrorKind::Tmux, e.to_string());
    let cmd = |agent: &str| {
        // TEND_AGENT declares the agent, as a container would.
        format!(
            "env TEND_AGENT={agent} {}",
            shell_join(&[exe.as_str(), "play", &format!("demo:{agent}"), "--repeat"])
        )
    };
    let first = DEMO_CASTS[0].0;
    let mut new_session = vec![
        "new-session",
        "-d",
        "-s",
        &args.session,
        "-x",
        "200",
        "-y",
        "50",
    ];
    let c0 = cmd(first);
    new_session.push(&c0);
    // Starts the tmux server too when none is running.
    srv.run(new_session).map_err(tmux_err)?;
    let target = format!("={}:", args.session);
    for (agent, _, _) in &DEMO_CASTS[1..] {
        let c = cmd(agent);
        srv.run(["new-window", "-d", "-t", &target, &c])
            .map_err(tmux_err)?;
    }
    // Name the windows after the agents (not the player), and keep them so.
    let windows = srv
        .run(["list-windows", "-t", &target, "-F", "#{window_id}"])
        .unwrap_or_default();
    for (w, (agent, _, _)) in windows.lines().zip(DEMO_CASTS) {
        let _ = srv.run(["set-window-option", "-t", w, "automatic-rename", "off"]);
        let _ = srv.run(["rename-window", "-t", w, agent]);
    }
    style(&srv, &target, windows.lines());
    let start = std::process::Command::new(&exe)
        .args(socket_args(server))
        .arg("start")
        .output()
        .map_err(|e| CliError::new(ErrorKind::Spawn, format!("cannot run tend start: {e}")))?;
    let io = |e: std::io::Error| CliError::new(ErrorKind::Io, format!("cannot write output: {e}"));
    out.write_all(&start.stdout).map_err(io)?;
    writeln!(
        out,
        "demo session `{}`: {} windows replaying recordings of real agents. Watch `tend list`, the @tend_* options, \
         and press prefix N to jump to the agent that needs you.",
        args.session,
        DEMO_CASTS.len()
    )
    .map_err(io)?;
    if !args.detached {
        if std::env::var_os("TMUX").is_some() {
            let _ = srv.run(["switch-client", "-t", &target]);
        } else {
            writeln!(
                out,
                "attach with: tmux {} attach -t {}",
                socket_hint(server),
                args.session
            )
            .map_err(io)?;
        }
    }
    Ok(())
}

/// The status line the demo session shows, whatever the user's
/// configuration: the summary on the right, a glyph per window, each pane's
/// agent and state in its border. Options are set on the demo's own
/// session and windows only, so the user's other sessions are untouched.
pub const DEMO_STATUS_RIGHT: &str =
    "#{?@tend_summary,#[reverse] #{@tend_summary} #[noreverse] ,}%H:%M";
/// The demo's window list entry: the window's glyph after its name.
pub const DEMO_WINDOW_FORMAT: &str =
    "#I:#W#{?@tend_window_glyph, #{@tend_window_glyph},}#{?window_flags,#{window_flags}, }";
/// The demo's pane border: the agent, its state and reason.
pub const DEMO_BORDER_FORMAT: &str = " #{?@tend_agent,#{@tend_glyph} #{@tend_agent}: #{@tend_state}#{?@tend_reason,/#{@tend_reason},} ,}";

fn style<'a>(srv: &tend_tmux::Server, session: &str, windows: impl Iterator<Item = &'a str>) {
    let mut commands: Vec<Vec<String>> = vec![
        vec![
            "set-option".into(),
            "-t".into(),
            session.into(),
            "status-right".into(),
            DEMO_STATUS_RIGHT.into(),
        ],
        vec![
            "set-option".into(),
            "-t".into(),
            session.into(),
            "status-right-length".into(),
            "80".into(),
        ],
        // "[tend-demo] " is longer than tmux's default 10.
        vec![
            "set-option".into(),
            "-t".into(),
            session.into(),
            "status-left-length".into(),
            "20".into(),
        ],
    ];
    for w in windows {
        for (name, value) in [
            ("window-status-format", DEMO_WINDOW_FORMAT),
            ("window-status-current-format", DEMO_WINDOW_FORMAT),
            ("pane-border-status", "top"),
            ("pane-border-format", DEMO_BORDER_FORMAT),
        ] {
            commands.push(vec![
                "set-option".into(),
                "-w".into(),
                "-t".into(),
                w.into(),
                name.into(),
                value.into(),
            ]);
        }
    }
    // Cosmetic: a tmux that refuses one of these still runs the demo.
    if let Err(e) = srv.run_many(&commands) {
        tend_config::say!("styling the demo session failed: {e}");
    }
}

fn socket_args(server: &ServerArgs) -> Vec<String> {
    match (&server.socket_name, &server.socket_path) {
        (_, Some(p)) => vec!["-S".into(), p.to_string_lossy().into_owned()],
        (Some(n), None) => vec!["-L".into(), n.clone()],
        _ => Vec::new(),
    }
}

fn socket_hint(server: &ServerArgs) -> String {
    socket_args(server).join(" ")
}

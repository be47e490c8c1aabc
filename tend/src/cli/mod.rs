//! Command-line commands, one module each.

pub mod agents;
pub mod ask;
pub mod capture;
pub mod config_edit;
pub mod demo;
pub mod docs;
pub mod doctor;
pub mod explain;
pub mod hooks;
pub mod internal;
pub mod keyboard;
pub mod lifecycle;
pub mod limits;
pub mod pilot;
pub mod query;
pub mod remote;
pub mod replay;
pub mod restore;
pub mod run;
pub mod target;

use clap::{Parser, Subcommand};

/// tend watches the coding agents in your tmux panes and tells you, in the
/// status line, which ones need you.
#[derive(Debug, Parser)]
#[command(name = "tend", version, about, long_about = None)]
pub struct Cli {
    /// Which tmux server.
    #[command(flatten)]
    pub server: target::ServerArgs,
    /// The command.
    #[command(subcommand)]
    pub command: Command,
}

/// Every command.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Start the daemon for this tmux server (idempotent).
    Start(lifecycle::StartArgs),
    /// Stop the daemon and remove what it installed in tmux.
    Stop(lifecycle::StopArgs),
    /// One line: how many agents need you.
    Status(query::JsonArgs),
    /// Every pane with its agent, state and band.
    List(query::JsonArgs),
    /// The next agent waiting on you (or working, with --working).
    Next(query::NextArgs),
    /// Move the tmux client to the next agent waiting on you.
    Jump(query::NextArgs),
    /// One pane's agent, state, band and more.
    Get(agents::PaneArgs),
    /// Stream events (`pane.agent_status_changed` and friends) as they happen.
    Events(agents::EventsArgs),
    /// Wait until a pane's agent reaches one of some states.
    Wait(agents::WaitArgs),
    /// Send an agent a prompt (refused while it waits for approval or a question).
    Prompt(agents::PromptArgs),
    /// Approve an agent's approval dialog (only while it shows; re-read first).
    Approve(agents::AnswerArgs),
    /// Deny an agent's approval dialog (only while it shows; re-read first).
    Deny(agents::AnswerArgs),
    /// The agents waiting on their plan's usage limit, and until when.
    Limits(limits::LimitsArgs),
    /// Go on after an agent's usage limit: send the resume text (only while
    /// its limit shows; re-read first).
    Resume(limits::ResumeArgs),
    /// Send keys to a pane.
    SendKeys(agents::SendKeysArgs),
    /// A pane's recent text.
    Read(agents::ReadArgs),
    /// Report your own state (run by an agent, its hooks or a wrapper).
    Report(agents::ReportArgs),
    /// End your reports: the screen decides again.
    Release(agents::OwnPaneArgs),
    /// Set a display label for your pane (never affects state).
    ReportMetadata(agents::MetadataArgs),
    /// Put a stop flag on an agent, pending until it acknowledges.
    StopRequest(agents::StopRequestArgs),
    /// Read your flags (run by the agent in its pane).
    Inbox(agents::OwnPaneArgs),
    /// Acknowledge a stop flag (run by the agent in its pane).
    Ack(agents::OwnPaneArgs),
    /// Shelve a pane, with a note and optionally a gate pane.
    Park(agents::ParkArgs),
    /// Lift a park.
    Unpark(agents::PaneArgs),
    /// Defer a pane's demand: 15m, 30m, 6h or unlimited.
    Snooze(agents::SnoozeArgs),
    /// Lift a snooze.
    Unsnooze(agents::PaneArgs),
    /// After a server restart: start each agent that ran when the last
    /// server ended again, in its pane, in its own conversation.
    Restore(restore::RestoreArgs),
    /// Every agent by band in one full-screen view, live, with the actions
    /// you need (what `prefix A` opens in a popup).
    Pilot(pilot::PilotArgs),
    /// Explain a state: every rule's verdict on a pane or a saved screen.
    Explain(explain::ExplainArgs),
    /// Run the detector over an asciicast v2 recording.
    Replay(replay::ReplayArgs),
    /// Run a command (an agent) through a relay that lets it report its own
    /// state (answers its OSC 7501 query): `tend run -- claude`.
    Run(run::RunArgs),
    /// Print shell functions that run the known agents through `tend run`
    /// inside tmux or zellij (bash, zsh, fish).
    ShellInit(run::ShellInitArgs),
    /// Save a pane as a test case (recording, screen, processes, draft labels).
    Capture(capture::CaptureArgs),
    /// Print the effective configuration.
    Config(doctor::ConfigArgs),
    /// Check tmux, the daemon, taps, hooks, config and manifests.
    Doctor(doctor::DoctorArgs),
    /// Wire an agent's own hooks (claude, codex, gemini) to `tend report`.
    Hooks(hooks::HooksArgs),
    /// Other machines whose agents join this status line, over ssh.
    Remote(remote::RemoteArgs),
    /// Open a tmux session replaying real agents, to see tend work.
    Demo(demo::DemoArgs),
    /// Print shell completions (bash, zsh, fish).
    Completions(docs::CompletionsArgs),
    /// Print the manual page (or write every page with --dir).
    Man(docs::ManArgs),
    /// Play a recording's output on its own clock (what demo panes run).
    #[command(hide = true)]
    Play(demo::PlayArgs),
    /// Run the daemon in this process (what `tend start` launches).
    #[command(hide = true)]
    Daemon,
    /// The pipe-pane process (run by tmux).
    #[command(hide = true)]
    Tap(internal::TapArgs),
    /// Hook entry point (run by tmux).
    #[command(hide = true)]
    Poke(internal::PokeArgs),
    /// Key entry point (run by tmux).
    #[command(hide = true)]
    Key(internal::PokeArgs),
    /// Waits for the daemon's end, so that tmux can clean up (run by tmux).
    #[command(hide = true)]
    Guard(internal::GuardArgs),
    /// Leads the session `tend run` starts on its pty (run by `tend run`).
    #[command(hide = true)]
    RunSession(run::RunArgs),
}

/// Whether the user asked for JSON.
pub fn wants_json(cli: &Cli) -> bool {
    match &cli.command {
        Command::Start(a) => a.json,
        Command::Stop(a) => a.json,
        Command::Status(a) | Command::List(a) => a.json,
        Command::Next(a) | Command::Jump(a) => a.json,
        Command::Explain(a) => a.json,
        Command::Get(a) | Command::Unpark(a) | Command::Unsnooze(a) => a.json,
        Command::Events(a) => a.json,
        Command::Wait(a) => a.json,
        Command::Prompt(a) => a.json,
        Command::SendKeys(a) => a.json,
        Command::Approve(a) | Command::Deny(a) => a.json,
        Command::Limits(a) => a.json,
        Command::Resume(a) => a.json,
        Command::Read(a) => a.json,
        Command::Report(a) => a.json,
        Command::Release(a) | Command::Inbox(a) | Command::Ack(a) => a.json,
        Command::ReportMetadata(a) => a.json,
        Command::StopRequest(a) => a.json,
        Command::Park(a) => a.json,
        Command::Snooze(a) => a.json,
        Command::Restore(a) => a.json,
        Command::Replay(a) => a.json,
        Command::Capture(a) => a.json,
        Command::Doctor(a) => a.json,
        Command::Config(a) => a.json,
        Command::Hooks(_) => false,
        Command::Remote(a) => a.json(),
        Command::Demo(_)
        | Command::Pilot(_)
        | Command::Run(_)
        | Command::RunSession(_)
        | Command::ShellInit(_)
        | Command::Completions(_)
        | Command::Man(_)
        | Command::Play(_)
        | Command::Daemon
        | Command::Tap(_)
        | Command::Poke(_)
        | Command::Key(_)
        | Command::Guard(_) => false,
    }
}

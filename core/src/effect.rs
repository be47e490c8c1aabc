//! What comes out of the core: [`Effect`]s for the daemon to perform, in
//! order, from [`crate::Core::poll_effect`].

use std::sync::Arc;

use tend_protocol::reply::Reply;
use tend_protocol::PaneId;

use crate::fact::FactUpdate;
use crate::input::{CapturePurpose, RequestId};
use crate::links::StderrTail;
use crate::remote::{LinkConfig, RemoteConfig};
use crate::session::FollowFile;

/// Something for the daemon to do.
#[derive(Debug)]
pub enum Effect {
    /// Work for the multiplexer's backend thread.
    Mux(MuxJob),
    /// The answer to a control request.
    Reply {
        /// The request.
        id: RequestId,
        /// The answer.
        result: Result<Reply, tend_protocol::Error>,
    },
    /// Write the persistent state file: this text
    /// ([`crate::store::to_text`]). Failing, the daemon says
    /// [`crate::Input::PersistFailed`].
    Persist(String),
    /// Start a remote's link: its reports come back as
    /// [`crate::Input::Remote`] with `generation`.
    StartLink {
        /// The remote.
        name: String,
        /// Its generation.
        generation: u64,
        /// Where and how.
        remote: RemoteConfig,
        /// `[remote_link]`.
        link: LinkConfig,
        /// Where ssh's stderr goes.
        stderr: StderrTail,
    },
    /// Stop a remote's link (ssh ends).
    StopLink {
        /// The remote.
        name: String,
    },
    /// Read the remotes' configuration and hand it in
    /// ([`crate::Input::Remotes`], what went wrong included) to answer
    /// `reply`.
    LoadRemotes {
        /// The `reload` request.
        reply: RequestId,
    },
    /// Follow these files, and no others: read each at once and whenever
    /// the system says it changed, and hand what was read in as
    /// [`crate::Input::SessionFile`]. Each is read only if the user owns
    /// it and its folders and no one else can write them, and never
    /// through a symlink. The whole set, each time it changes.
    FollowFiles(Vec<FollowFile>),
    /// A sentence for the daemon's log (stderr).
    Log(String),
    /// A line for the trace (`TEND_TRACE`), asked for at construction:
    /// `at_us` is Unix microseconds on the core's clock.
    Trace {
        /// When.
        at_us: u128,
        /// What.
        line: String,
    },
}

/// Work for the multiplexer's backend: the adapter's whole interface. A
/// backend answers what it cannot do with a no-op or a clear error.
#[derive(Debug)]
pub enum MuxJob {
    /// List panes and clients ([`crate::Input::Listed`]).
    List,
    /// Capture a pane ([`crate::Input::Captured`]).
    Capture(PaneId, CapturePurpose),
    /// Install the tap on a pane ([`crate::Input::TapInstalled`]).
    InstallTap(PaneId),
    /// The pane's tap pipe closed while the pane lives: clear the mark,
    /// then install a tap unless a pipe (the user's) is open.
    Retap(PaneId),
    /// Publish what changed on the status line (tmux: as `@tend_*`
    /// options), then refresh clients; then list the panes when `list`
    /// (all in one multiplexer call where it can).
    Publish {
        /// The facts that changed.
        updates: Vec<FactUpdate>,
        /// Clients whose status line to redraw (the last listing's).
        clients: Vec<String>,
        /// List panes and clients too, as [`MuxJob::List`].
        list: bool,
    },
    /// Switch a client to a pane.
    Switch {
        /// The client (`None`: the most recent).
        client: Option<String>,
        /// Where to.
        pane: PaneId,
    },
    /// Show a remote pane: open (or reuse) the local window named `window`
    /// attached to the remote's pane over ssh, then switch a client there.
    RemoteAttach {
        /// The client (`None`: the most recent).
        client: Option<String>,
        /// The local window's name (one per remote session).
        window: String,
        /// The remote.
        remote: RemoteConfig,
        /// The remote tmux server's socket, as its feed said.
        tmux_socket: Option<String>,
        /// The pane's window there (`@1`).
        remote_window: String,
        /// The pane there (`%3`).
        pane: String,
    },
    /// Remove what a daemon that died left published, install hooks and
    /// key bindings.
    Setup,
    /// Set `@tend_daemon` to `token` and start a guard with it.
    Guard {
        /// The token.
        token: String,
    },
    /// Read a pane's text (`tend read`) and report it for `reply`
    /// ([`crate::Input::Done`], the answer made with
    /// [`crate::answer::read_reply`]).
    Read {
        /// The pane.
        pane: PaneId,
        /// Lines of history beyond the screen (`None`: the screen).
        lines: Option<u32>,
        /// The request.
        reply: RequestId,
    },
    /// Paste text as a bracketed paste, then press Enter when `enter`.
    Paste {
        /// The pane.
        pane: PaneId,
        /// The text.
        text: String,
        /// Press Enter after it, in the same batch. (An Enter that must
        /// wait is the core's: a later [`MuxJob::SendKeys`].)
        enter: bool,
    },
    /// Send keys (tmux key names).
    SendKeys {
        /// The pane.
        pane: PaneId,
        /// Keys as `send-keys` takes them.
        keys: Vec<String>,
    },
    /// Answer an approval dialog: capture the screen, check with
    /// [`crate::answer::check`] that the manifest's dialog rule still wins
    /// on it, then send the keys (right after the capture), and report the
    /// outcome for `reply` ([`crate::Input::Done`]). The core sends it no
    /// earlier than the dialog's agent allows (`settle_ms`).
    Answer {
        /// The pane.
        pane: PaneId,
        /// The pane's agent.
        manifest: Arc<tend_detector::Manifest>,
        /// Approve or deny.
        action: tend_detector::answer::Action,
        /// False: only report the dialog and the keys (the picker).
        send: bool,
        /// The request.
        reply: RequestId,
    },
    /// The whole status in one piece, for the zellij backend, which shows
    /// it in its plugin (the tmux backend publishes options instead).
    Overview(crate::overview::Overview),
    /// Type a command at a shell's prompt (`tend restore`): in a pane, or
    /// in a new window (and session) made for it. The words are quoted for
    /// the shell by the backend, through the one quoting layer.
    Resume {
        /// Where.
        target: crate::resume::plan::Target,
        /// The command's words.
        command: Vec<String>,
    },
    /// Go on after the agent's usage limit: capture the screen, check with
    /// [`crate::limits::check`] that the manifest's limit rule still wins
    /// on it, then paste `text` and Enter (or press the limit dialog's
    /// keys) right after the capture; say how it went with
    /// [`crate::Input::LimitResumed`] (the core answers `reply`).
    LimitResume {
        /// The pane.
        pane: PaneId,
        /// The pane's agent.
        manifest: Arc<tend_detector::Manifest>,
        /// The resume text.
        text: String,
        /// Who asked.
        by: crate::input::ResumeBy,
        /// The `resume` request, when there is one.
        reply: Option<RequestId>,
    },
}

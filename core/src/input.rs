//! What goes into the core: [`Input`]s, each handled by
//! [`crate::Core::handle`] at the time it is given.

use std::time::Instant;

use tend_protocol::{PaneId, Request};

use crate::links::{LinkEvent, RemotesConfig};
use crate::pane::{ClientInfo, PaneInfo, Screen, TapOutcome};
use crate::session::FileRead;

/// Names a control request whose answer the daemon waits for: it comes
/// back in [`crate::Effect::Reply`], always from the core.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RequestId(pub u64);

/// Something that happened.
#[derive(Debug)]
pub enum Input {
    /// A tap handed over its pane's pipe, which the daemon knows as `conn`.
    TapHello {
        /// The pipe.
        conn: u64,
        /// Its pane.
        pane: PaneId,
    },
    /// Pane output read from a pipe at `at`.
    TapData {
        /// The pipe.
        conn: u64,
        /// What the pane printed.
        bytes: Vec<u8>,
        /// When it was read.
        at: Instant,
    },
    /// The program's OSC 7501 sequences found in output of the pipe `conn`
    /// that had to be dropped, read at `at` (the gap that dropped it is
    /// reported as [`Input::TapGap`] after them).
    TapSalvaged {
        /// The pipe.
        conn: u64,
        /// The sequences, and how many were given up to the bound.
        salvaged: tend_detector::psp::Salvaged,
        /// When they were read.
        at: Instant,
    },
    /// Output of the pipe `conn` was dropped: its pane is seeded again.
    TapGap {
        /// The pipe.
        conn: u64,
    },
    /// A pipe closed (the pane ended, or its pipe was closed).
    TapClosed {
        /// The pipe.
        conn: u64,
    },
    /// The backend listed panes and clients.
    Listed {
        /// Every pane.
        panes: Vec<PaneInfo>,
        /// Every client.
        clients: Vec<ClientInfo>,
    },
    /// The multiplexer is gone: the core stops.
    ServerGone,
    /// Writing the state file failed: it is written again a second later.
    PersistFailed,
    /// A pane's screen was captured.
    Captured {
        /// The pane.
        pane: PaneId,
        /// What it shows.
        screen: Screen,
        /// Why it was asked for.
        purpose: CapturePurpose,
    },
    /// Installing a pane's tap finished.
    TapInstalled {
        /// The pane.
        pane: PaneId,
        /// How it went.
        outcome: TapOutcome,
    },
    /// A control request; its answer leaves as [`crate::Effect::Reply`],
    /// now or later.
    Control {
        /// Names the answer.
        id: RequestId,
        /// The request.
        req: Request,
    },
    /// List the panes now (a multiplexer hook fired).
    Poke,
    /// A `tend run` relay registered on the daemon's socket (connection
    /// `conn`, held open while it relays): its pid as the kernel gave it
    /// for the connection, never what the relay says.
    RelayHello {
        /// The connection.
        conn: u64,
        /// The relay's process.
        pid: u32,
    },
    /// A relay's connection closed (it ended, or the daemon is stopping).
    RelayGone {
        /// The connection.
        conn: u64,
    },
    /// A guard connected with `token`.
    GuardHello {
        /// Its token.
        token: String,
    },
    /// A guard's connection closed while the daemon runs.
    GuardClosed {
        /// Its token.
        token: String,
    },
    /// A remote's link reported.
    Remote {
        /// The remote.
        name: String,
        /// The link's generation (a stopped link's late words are ignored).
        generation: u64,
        /// What it said.
        ev: LinkEvent,
    },
    /// The process source has ended foreground jobs to report
    /// ([`crate::ProcSource::take_ended`]).
    JobsEnded,
    /// The backend's resume after a usage limit
    /// ([`crate::MuxJob::LimitResume`]) finished.
    LimitResumed {
        /// The pane.
        pane: PaneId,
        /// What it did.
        outcome: ResumeOutcome,
    },
    /// The daemon read a file it follows for `pane`
    /// ([`crate::Effect::FollowFiles`]): at once when told to follow it,
    /// then whenever the system says it changed.
    SessionFile {
        /// The pane.
        pane: PaneId,
        /// The file.
        path: String,
        /// What was read.
        read: FileRead,
    },
    /// The remotes as configured now; `reply` answers the `reload` request
    /// that asked for them ([`crate::Effect::LoadRemotes`]).
    Remotes {
        /// The configuration, or what kept it from being read.
        config: Result<RemotesConfig, String>,
        /// The request to answer.
        reply: Option<RequestId>,
    },
    /// The backend did what a request asked of it ([`crate::MuxJob::Read`],
    /// [`crate::MuxJob::Answer`]): the request's answer.
    Done {
        /// The request.
        reply: RequestId,
        /// Its answer.
        result: Result<tend_protocol::reply::Reply, tend_protocol::Error>,
    },
}

/// Who asked for a resume.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResumeBy {
    /// The limit's reset came (`[limits] resume`).
    Reset,
    /// `tend resume`, or the fleet view's key.
    User,
}

impl ResumeBy {
    /// `reset` or `user`, as `pane.resumed` says it.
    pub fn as_str(self) -> &'static str {
        match self {
            ResumeBy::Reset => "reset",
            ResumeBy::User => "user",
        }
    }
}

/// How a resume ended on the backend.
#[derive(Debug)]
pub struct ResumeOutcome {
    /// What went into the pane, or why nothing did.
    pub result: Result<tend_detector::limit::Resume, tend_protocol::Error>,
    /// Who asked.
    pub by: ResumeBy,
    /// The request to answer (`tend resume`).
    pub reply: Option<RequestId>,
}

/// Why a capture was taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CapturePurpose {
    /// First sight of the pane, before its tap.
    Seed,
    /// After a gap in the tap's stream.
    Resync,
    /// Periodic, for a pane whose pipe belongs to someone else.
    Poll,
    /// Output soon after a seed may have been drawn twice: compared with
    /// the emulated screen, which is re-seeded when they differ
    /// (`seed_check.rs`).
    Verify,
}

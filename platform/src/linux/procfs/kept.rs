//! What the reader keeps between sweeps besides its caches of files: what
//! each process runs, and how the children of a process are found.

/// What a process runs: read once per (pid, start time, comm, image).
#[derive(Debug, Clone)]
pub(super) struct Identity {
    pub(super) start: u64,
    pub(super) comm: String,
    /// The image's addresses when it was read (see `Stat::image`).
    pub(super) image: [u64; 3],
    pub(super) exe: String,
    pub(super) argv: Vec<String>,
    pub(super) env_agent: Option<String>,
    pub(super) script_target: Option<String>,
    /// The sweep generation that last used it.
    pub(super) used: u64,
}

/// How children are found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ChildrenMode {
    /// Not known yet (decided on the first walk).
    Unknown,
    /// `/proc/<pid>/task/<tid>/children` exists.
    Files,
    /// It does not: scan `/proc/*/stat` (once per sample).
    Scan,
}

//! Words about a pane besides its agent's state: how its output reaches
//! tend, how its agent was named, where a remote's link stands.

words! {
    /// How a pane's output reaches tend.
    pub enum Tap {
        /// Not yet: the pane is being seeded, or its tap has not handed its
        /// pipe over.
        None = "none",
        /// tend holds the pane's pipe (tmux's `pipe-pane`).
        Pipe = "pipe",
        /// Someone else's `pipe-pane` is on it (tmux), or no client looks
        /// at its tab (zellij): tend reads its screen now and then.
        Polling = "polling",
        /// zellij streams the screen of a tab a client looks at.
        Subscribe = "subscribe",
    }
}

impl Default for Tap {
    /// Nothing reaches tend until a tap is in place.
    fn default() -> Self {
        Tap::None
    }
}

words! {
    /// How a pane's agent was identified.
    pub enum IdentifiedBy {
        /// Its process: the executable, a package path, argv, `comm`.
        Process = "process",
        /// Its live UI on the screen, behind a wrapper whose agent the
        /// process tree cannot show (`ssh`, `docker exec`, …).
        Screen = "screen",
        /// Declared by `TEND_AGENT` in its environment.
        Declared = "declared",
    }
}

words! {
    /// Where a link to a remote stands.
    pub enum LinkState {
        /// ssh runs; no snapshot yet.
        Connecting = "connecting",
        /// Snapshots arrive.
        Up = "up",
        /// ssh ended; waiting to try again.
        Down = "unreachable",
    }
}

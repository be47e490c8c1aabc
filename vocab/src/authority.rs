//! Who decides a pane's status.

words! {
    /// Who decides a pane's status (the choice is the attention policy's,
    /// `tend_attention::report`). A new source of an agent's word is one
    /// line here; the compiler names the places that say it in words.
    pub enum Authority {
        /// The screen detector.
        Screen = "screen",
        /// The pane's own reports (`tend report`).
        Report = "report",
        /// The program's own word through the terminal: OSC 7501, the
        /// Program Status Protocol.
        Psp = "psp",
    }
}

impl Default for Authority {
    /// The screen decides until an agent speaks.
    fn default() -> Self {
        Authority::Screen
    }
}

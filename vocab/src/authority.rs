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
        /// Program Status Protocol, answered by a `tend run` relay. Said
        /// `psp` before the agents' other channels came: a daemon of an
        /// earlier release answers with it, and it is still read.
        Relay = "relay" | "psp",
        /// The agent's own word in the session file it keeps (Claude
        /// Code's `sessions/<pid>.json`).
        File = "file",
        /// The agent's own OSC 7501 reports, printed without being asked
        /// (Codex), while the agent itself holds the pane's terminal.
        Osc = "osc",
    }
}

impl Default for Authority {
    /// The screen decides until an agent speaks.
    fn default() -> Self {
        Authority::Screen
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_word_of_earlier_releases_is_still_read() {
        assert_eq!(Authority::parse("psp"), Some(Authority::Relay));
        assert_eq!(Authority::parse("relay"), Some(Authority::Relay));
        let read: Authority = serde_json::from_str("\"psp\"").expect("read");
        assert_eq!(read, Authority::Relay);
        assert_eq!(
            serde_json::to_string(&Authority::Relay).expect("json"),
            "\"relay\""
        );
        assert_eq!(Authority::parse("file"), Some(Authority::File));
        assert_eq!(Authority::Osc.as_str(), "osc");
    }
}

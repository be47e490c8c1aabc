//! What an identified agent is doing, and why it waits.

words! {
    /// What an identified agent is doing.
    pub enum State {
        /// Up at its prompt, no turn in progress, nothing to review.
        Idle = "idle",
        /// Busy: streaming, running tools, thinking.
        Working = "working",
        /// Waiting on the user; see [`Reason`].
        Waiting = "waiting",
        /// The turn is over and the agent is back at its normal prompt.
        Completed = "completed",
        /// The user is typing into it.
        Directing = "directing",
        /// The agent process ended.
        Exited = "exited",
    }
}

words! {
    /// Why an agent waits, in the order a second of attention buys most.
    ///
    /// A new reason is one line here (its word is its serde name, its
    /// `as_str` and its `parse` at once); the compiler then names every
    /// place that ranks, words or bands the reasons.
    pub enum Reason {
        /// A permission dialog: one keystroke unblocks it.
        Approval = "approval",
        /// Rate limit, overload, auth or network failure shown.
        Error = "error",
        /// The agent asked the user something.
        Question = "question",
        /// At a prompt that is not its normal input box, or silent after
        /// work with no evidence of what it wants.
        Prompt = "prompt",
        /// The plan's usage limit is reached: the agent stopped until a
        /// reset it names (or the user changes plan or model). A wait with
        /// a known end, not an error to fix: no demand until the reset
        /// passes.
        Limit = "limit",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_words_are_the_ones_the_wire_always_had() {
        let states: Vec<&str> = State::ALL.iter().map(State::as_str).collect();
        assert_eq!(
            states,
            [
                "idle",
                "working",
                "waiting",
                "completed",
                "directing",
                "exited"
            ]
        );
        let reasons: Vec<&str> = Reason::ALL.iter().map(Reason::as_str).collect();
        assert_eq!(
            reasons,
            ["approval", "error", "question", "prompt", "limit"]
        );
        assert_eq!(
            serde_json::to_string(&Some(Reason::Approval)).expect("writes"),
            "\"approval\""
        );
    }
}

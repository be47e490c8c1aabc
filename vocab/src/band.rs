//! A pane's attention band: what its state means for the user.

words! {
    /// A pane's band, in rank order (most urgent first). The fold from a
    /// pane's state, silence, seen flag, park and snooze into its band is
    /// the attention policy's (`tend_attention::band`).
    pub enum Band {
        /// Waiting with the error reason: hard-blocked.
        Blocked = "blocked",
        /// Waiting for any other reason.
        Waiting = "waiting",
        /// A live run that has said nothing for `quiet_after`.
        Quiet = "quiet",
        /// Completed and not yet seen.
        ReadyForReview = "ready_for_review",
        /// Waiting for its plan's usage limit to reset: no demand until
        /// the reset passes (then it is `waiting`), shown apart with its
        /// clock.
        Limited = "limited",
        /// Working or directing: hued, no demand.
        Working = "working",
        /// Shelved by the user.
        Parked = "parked",
        /// Deferred by the user.
        Snoozed = "snoozed",
        /// Completed and seen.
        Finished = "finished",
        /// Idle at its prompt.
        Idle = "idle",
        /// The agent process ended.
        Exited = "exited",
    }
}

impl Band {
    /// Blocked, Waiting and Ready for review ask something of the user.
    pub fn is_demand(&self) -> bool {
        matches!(self, Band::Blocked | Band::Waiting | Band::ReadyForReview)
    }

    /// Demands plus Quiet.
    pub fn is_attention(&self) -> bool {
        self.is_demand() || *self == Band::Quiet
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bands_rank_as_declared_and_write_their_words() {
        assert!(Band::Blocked < Band::Waiting && Band::Idle < Band::Exited);
        assert_eq!(Band::ReadyForReview.as_str(), "ready_for_review");
        let demands: Vec<Band> = Band::ALL.iter().copied().filter(Band::is_demand).collect();
        assert_eq!(
            demands,
            [Band::Blocked, Band::Waiting, Band::ReadyForReview]
        );
        assert!(Band::Quiet.is_attention() && !Band::Quiet.is_demand());
    }
}

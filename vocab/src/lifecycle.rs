//! What a reporting agent says of itself (`tend report`).

words! {
    /// A lifecycle state: the ten an agent may post and the three tend
    /// derives.
    pub enum Lifecycle {
        /// Started and read its instructions; ends on its first piece of
        /// work.
        Up = "up",
        /// On one item. Leased.
        Working = "working",
        /// Folding its own branch in. Leased exactly like working.
        Merging = "merging",
        /// Alive with nothing to do. Leased.
        Idle = "idle",
        /// Waiting on the user (or, with reason `work`, polling for work).
        Waiting = "waiting",
        /// One problem it cannot get past; replaced by its next status.
        Stuck = "stuck",
        /// Low on room to work: finishes the item in hand, takes nothing
        /// new.
        Warning = "warning",
        /// Cannot go on; gone without a notification when its lease ends.
        Stopped = "stopped",
        /// Writing its handover for the next agent.
        HandingOver = "handing-over",
        /// Signed off; stays done until it posts again.
        Done = "done",
        /// Derived: stopped posting but alive another way.
        Quiet = "quiet",
        /// Derived: something ran out.
        Gone = "gone",
        /// Derived: alive through the panes it dispatched.
        Dispatching = "dispatching",
    }
}

impl Lifecycle {
    /// Reads what a person typed: any case, spaces around, and
    /// `handing_over` or `handover` for `handing-over`.
    pub fn parse_loose(s: &str) -> Option<Self> {
        let s = s.trim().to_ascii_lowercase();
        if s == "handing_over" || s == "handover" {
            return Some(Lifecycle::HandingOver);
        }
        Lifecycle::parse(&s)
    }

    /// Whether an agent may post this state (`quiet`, `gone` and
    /// `dispatching` are tend's alone).
    pub fn is_posted(&self) -> bool {
        !matches!(
            self,
            Lifecycle::Quiet | Lifecycle::Gone | Lifecycle::Dispatching
        )
    }

    /// The states a dispatcher shows as `dispatching` while its panes live.
    pub fn is_running(&self) -> bool {
        matches!(
            self,
            Lifecycle::Up | Lifecycle::Working | Lifecycle::Merging | Lifecycle::Idle
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_person_may_type_a_lifecycle_loosely() {
        for l in Lifecycle::ALL {
            assert_eq!(Lifecycle::parse_loose(l.as_str()), Some(*l));
        }
        assert_eq!(
            Lifecycle::parse_loose("handing_over"),
            Some(Lifecycle::HandingOver)
        );
        assert_eq!(
            Lifecycle::parse_loose(" Working "),
            Some(Lifecycle::Working)
        );
        assert_eq!(Lifecycle::parse_loose("busy"), None);
        assert_eq!(Lifecycle::ALL.iter().filter(|l| l.is_posted()).count(), 10);
    }
}

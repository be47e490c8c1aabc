//! The words of OSC 7501, the Program Status Protocol: what a program says
//! of itself through the terminal. The detector parses the reports
//! (`tend_detector::psp`); these are the words it reads them into.

use crate::Reason;

words! {
    /// A record's state, as the program reports it.
    pub enum ReportState {
        /// At rest, waiting for work.
        Idle = "idle",
        /// Busy on its own.
        Working = "working",
        /// Waiting on the user (see [`Kind`]).
        Blocked = "blocked",
        /// Finished.
        Done = "done",
        /// Failed.
        Error = "error",
        /// Removes the record (and its subtree), or every record without
        /// `id`.
        Clear = "clear",
    }
}

words! {
    /// What a blocked program waits on.
    pub enum Kind {
        /// A permission to grant.
        Permission = "permission",
        /// A question to answer.
        Question = "question",
        /// A sign-in.
        Auth = "auth",
        /// A kind this revision does not know.
        Other = "other",
    }
}

impl Kind {
    /// tend's reason for it: approval, question, error (a sign-in is a
    /// failure the user must mend), prompt.
    pub fn reason(kind: Option<Kind>) -> Reason {
        match kind {
            Some(Kind::Permission) => Reason::Approval,
            Some(Kind::Question) => Reason::Question,
            Some(Kind::Auth) => Reason::Error,
            Some(Kind::Other) | None => Reason::Prompt,
        }
    }
}

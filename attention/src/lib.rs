//! # tend-attention
//!
//! What tend makes of a pane's state for the person at the keyboard: which
//! panes need them and in what order, what an agent said about itself, what
//! the user decided about a pane, and when and in what words to tell them.
//!
//! `tend-detector` says what an agent is doing; this crate holds the policy
//! on top of that answer. It depends on the detector for its vocabulary
//! ([`State`], [`Reason`]) and the detector knows nothing of it, so
//! detection can be tested, benchmarked and fuzzed without any of this.
//!
//! Like the detector it is pure: no I/O and no clock. Every time, including
//! the wall clock that snoozes and parks run on, is an input, so the daemon
//! and the tests get the same answers from the same values.
//!
//! * the crate root — bands ([`Band`], [`band`]), the demand and quiet
//!   sentences ([`summary`]), the jump order ([`attention_order`],
//!   [`next_after`])
//! * [`report`] — self-reports (`tend report`), their leases, and the one
//!   authority per pane between report and screen
//! * [`park`] — park (shelve with a note, maybe gated on another pane) and
//!   snooze
//! * [`stopflag`] — stop requests an agent must read and acknowledge
//! * [`limit`] — usage limits: each pane's, when it resets, when tend
//!   resumes the agent
//! * [`notify`] — when to notify, grouped, and in what words
//!
//! [`State`]: tend_detector::State
//! [`Reason`]: tend_detector::Reason

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod bands;
pub mod limit;
pub mod notify;
pub mod park;
pub mod report;
pub mod stopflag;

pub use bands::{
    attention_order, band, demand_sentence, gone_sentence, group_sentence, limit_sentence,
    limited_sentence, next_after, park_released_sentence, quiet_sentence, rollup, sentence,
    summary, working_order, Band, Candidate, PaneFacts,
};

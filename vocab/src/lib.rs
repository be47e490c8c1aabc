//! tend's vocabulary: the words its crates and its protocol share, as
//! enums.
//!
//! What an agent is doing ([`State`], [`Reason`]), what that means for the
//! user ([`Band`]), who decided it ([`Authority`]), how a pane's output
//! reaches tend ([`Tap`]), how its agent was named ([`IdentifiedBy`]), what
//! a reporting agent said of itself ([`Lifecycle`]), what a program said
//! through OSC 7501 ([`psp::ReportState`], [`psp::Kind`]) and where a
//! remote's link stands ([`LinkState`]). The detector, the attention
//! policy, the core, the protocol and the CLI all speak these types; a
//! word is text only on the wire, where each type writes and reads its own
//! word (`snake_case`, as the wire always had it).
//!
//! The crate sits at the bottom of the workspace: serde only, no other
//! tend crate. With the `schema` feature each type also describes itself
//! for the protocol's JSON Schema.

#![warn(missing_docs)]

#[macro_use]
mod words;

mod authority;
mod band;
mod lifecycle;
mod listed;
mod pane;
pub mod psp;
mod state;

pub use authority::Authority;
pub use band::Band;
pub use lifecycle::Lifecycle;
pub use listed::{PaneBand, PaneState};
pub use pane::{IdentifiedBy, LinkState, Tap};
pub use state::{Reason, State};

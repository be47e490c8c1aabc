//! tend's control protocol, typed: what a client asks the daemon, what the
//! daemon answers, the events it streams and the codes of its refusals.
//!
//! On the socket the protocol is newline-delimited JSON. A request is
//! `{"id": N, "method": "...", "params": {...}}`; the answer carries the
//! same `id` and either `result` or `error: {code, message}`. Codes are
//! stable; messages are for people and say what to do.
//!
//! Inside tend nothing of that is JSON. The daemon reads a [`Request`] (one
//! variant per [`Method`], with its parameters from [`params`]), answers a
//! [`Reply`] or an [`Error`], and publishes [`BusEvent`]s. The CLI calls
//! with a method's parameters and reads its answer as the type
//! [`Call::Reply`] names: a misspelt field is a compile error, not an empty
//! line. Only [`wire`] turns them into lines and back.
//!
//! Two promises keep old clients working:
//!
//! * **The bytes do not change.** Results and events are written with
//!   their keys sorted, as when they were built as JSON values
//!   ([`wire`]); [`PROTOCOL_VERSION`] is bumped on an incompatible change.
//! * **Parameters are read leniently.** A missing parameter, or one of the
//!   wrong type, is absent, as it always was; only an unknown method is
//!   refused (`unknown_method`).
//!
//! Three parts of `explain`'s answer are structures the detector and the
//! attention crates define; they travel whole ([`explain::Document`]) and
//! are read in part. The words inside (a pane's state, reason, band, tap,
//! authority, …) are `tend-vocab`'s enums, the one tend crate this one
//! depends on: the daemon converts its own types into these, and a client
//! needs nothing else.
//! [`schema()`] generates `docs/protocol.schema.json`.

#![warn(missing_docs)]

mod error;
mod event;
pub mod explain;
pub mod ids;
mod lenient;
mod pane;
pub mod params;
pub mod reply;
mod request;
mod schema;
pub mod wire;

pub use error::{Error, ErrorCode};
pub use event::{BusEvent, ReleaseReason, StatusChanged};
pub use ids::{PaneId, SessionId, WindowId};
pub use pane::{PaneView, TaskView};
pub use reply::Reply;
pub use request::{Call, Method, Request};
pub use schema::schema;
pub use wire::{Envelope, Response};

/// Bumped on incompatible changes; `ping` reports it.
pub const PROTOCOL_VERSION: u32 = 1;

/// How often `tend events --feed` writes a line when nothing else
/// happens: a remote's link that hears nothing for twice as long counts as
/// down.
pub const FEED_HEARTBEAT: std::time::Duration = std::time::Duration::from_secs(15);

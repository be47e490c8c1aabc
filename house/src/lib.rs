//! The house rules tend's sources keep, checked by reading them (run by
//! `cargo test -p tend-house`, part of the default test run):
//!
//! * **no import circle** between the modules of a crate ([`modules`]): a
//!   module that uses another (a `use`, or a path such as `crate::x::Y`
//!   or `super::y` in its code) depends on it, and no module may depend,
//!   through others, on itself. A parent's `pub use child::X` is a facade,
//!   not a use: `crate::X` counts as a use of the child that defines `X`;
//! * **no long function** ([`length`]): none over [`length::LIMIT`] lines
//!   in `core/`, `daemon/` and `tend/src`;
//! * **the command line speaks to the daemon in the protocol** ([`reach`]):
//!   `tend/src` takes from `tend_daemon` only its entry points (the daemon
//!   itself, the tap, the clean-up when no daemon is left), nothing from
//!   `tend_core`, and `tend` does not depend on `tend-core`.
//!
//! It reads source as text: [`lex::code_only`] blanks comments and
//! literals, [`lex::tokens`] splits the rest. That is enough to follow
//! `mod`, `use`, paths and braces; it does not expand macros.

#![warn(missing_docs)]

pub mod length;
pub mod lex;
pub mod modules;
pub mod reach;

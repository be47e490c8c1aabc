//! tend's settings and files, for the daemon and the commands alike:
//!
//! * [`config`]: `config.toml` (detector timings, keys, notifications,
//!   remotes, usage limits), read once when the daemon starts;
//! * [`paths`]: where tend keeps its sockets, logs and state, each folder
//!   trusted only if the user owns it and no one else can write it (its
//!   parents included);
//! * [`manifests`]: the bundled agent manifests and the user's own;
//! * [`keys`]: which keys tend binds and where each setting comes from
//!   (a tmux option over `[keys]` over the default), and whether they are
//!   bound (`tend start`, `tend doctor`, the daemon);
//! * [`limits`]: `[limits]`, what tend does when an agent hits its usage
//!   limit;
//! * [`error`]: the errors every command reports, each with a stable code
//!   and a sentence that says what to do, and [`say!`] for the sentences
//!   that go to stderr.

pub mod config;
pub mod error;
pub mod keys;
pub mod limits;
pub mod manifests;
pub mod paths;

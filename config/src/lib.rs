//! tend's settings and files, for the daemon and the commands alike:
//!
//! * [`config`]: `config.toml` (detector timings, keys, notifications,
//!   remotes, usage limits), read once when the daemon starts;
//! * [`paths`]: where tend keeps its sockets, logs and state, each folder
//!   trusted only if the user owns it and no one else can write it (its
//!   parents included);
//! * [`manifests`]: the bundled agent manifests and the user's own;
//! * [`error`]: the errors every command reports, each with a stable code
//!   and a sentence that says what to do, and [`say!`] for the sentences
//!   that go to stderr.

pub mod config;
pub mod error;
pub mod limits;
pub mod manifests;
pub mod paths;

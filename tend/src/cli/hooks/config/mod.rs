//! Reading and editing an agent's hook configuration while keeping the
//! user's text: formatting, key order, line endings and (where the format
//! has them) comments.
//!
//! The file is held as a concrete syntax tree from `jsonc-parser` (see
//! docs/decisions/0010-hooks-config-editing.md): tend's entries are appended
//! and removed as whole items, so an install followed by the matching
//! uninstall gives back the user's file byte for byte. One piece is our own:
//! the library lays out every container it appends to over several lines, so
//! an item for a container written on one line (`{"a":1,"hooks":{…}}`) is
//! spliced in as compact text instead, in that container's own style.
//!
//! The files: `cst.rs` the small questions asked of the syntax tree (a
//! member, where a node starts, a value as JSON); `read.rs` parsing the file
//! the way the agent does, naming the line of what is wrong; `installed.rs`
//! what of tend's is installed; `edit.rs` taking tend's entries out and
//! putting them in, keeping the user's bytes.

mod cst;
mod edit;
mod installed;
mod read;

#[cfg(test)]
mod tests;

pub(super) use edit::{insert_groups, remove_ours};
pub(super) use installed::{inspect, Overall};
pub(super) use read::{parse_checked, ConfigFile};

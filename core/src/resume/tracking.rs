//! What the pane table keeps for `tend restore` besides the records:
//! where the agents' stores are read, and when each pane was last looked
//! up.

use std::collections::HashMap;
use std::time::Duration;

use tend_protocol::PaneId;

use super::Book;
use crate::source::{ConversationSource, NoConversations};

/// The records, and where and when they are looked up.
#[derive(Debug)]
pub(crate) struct Conversations {
    pub(crate) book: Book,
    pub(crate) source: Box<dyn ConversationSource>,
    /// When each pane's run was first and last looked up (the core's
    /// clock), and its state change count then.
    pub(crate) looked: HashMap<PaneId, (Duration, Duration, u64)>,
}

impl Default for Conversations {
    fn default() -> Self {
        Conversations {
            book: Book::new(),
            source: Box::new(NoConversations),
            looked: HashMap::new(),
        }
    }
}

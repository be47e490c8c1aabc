//! What reaches the event loop: inputs for the core as they are, pane
//! output with the ticket that bounds its pane's backlog, and control
//! requests with where their answers go.

use tend_core::Input;
use tend_protocol::reply::Reply;
use tend_protocol::Request;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// Where the answer to a control request goes.
pub type ReplyTx = tokio::sync::oneshot::Sender<Result<Reply, tend_protocol::Error>>;

/// Something for the event loop.
#[derive(Debug)]
pub enum Event {
    /// An input for the core.
    Core(Input),
    /// Pane output ([`Input::TapData`]), and the ticket that counts its
    /// bytes against the pane's bound until the core has taken it.
    Output(Input, Ticket),
    /// A control request, with where to send the answer.
    Control {
        /// The request.
        req: Request,
        /// Where its answer goes.
        reply: ReplyTx,
    },
}

/// Pane output bytes handed on and not yet consumed, counted against their
/// pane's bound (`pipes::MAX_PENDING`) until the ticket is dropped: after
/// the core has taken the [`Input::TapData`] it came with.
#[derive(Debug)]
pub struct Ticket {
    count: Arc<AtomicUsize>,
    bytes: usize,
}

impl Ticket {
    /// A ticket for `bytes` already added to `count`.
    pub fn new(count: Arc<AtomicUsize>, bytes: usize) -> Ticket {
        Ticket { count, bytes }
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        self.count.fetch_sub(self.bytes, Ordering::Relaxed);
    }
}

//! What reaches the event loop: inputs for the core as they are, pane
//! output with the ticket that bounds its pane's backlog, and control
//! requests with where their answers go.

use tend_core::Input;
use tend_protocol::reply::Reply;
use tend_protocol::Request;

use super::pipes::Ticket;

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

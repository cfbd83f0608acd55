//! Questions and answers: everything a server asks of its client and waits for. A tool
//! asks through [`ask::AskClient`] (typed with [`elicit`]); the question travels inside
//! a task (`in_task`), on a plain call's own stream (`in_call`), or as a client-hosted
//! task (`client_hosted`); `outgoing` matches the client's answers to the requests
//! that asked them, and `reask` asks again after a refused answer.

pub mod ask;
pub(crate) mod client_hosted;
pub mod elicit;
pub(crate) mod in_call;
pub(crate) mod in_task;
pub(crate) mod outgoing;
pub(crate) mod reask;

use mcp_tasks_engine::Engine;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

use crate::sessions::Sessions;
use outgoing::Outgoing;

/// What asking a client and routing its answers needs, and nothing more: the engine
/// (to read tasks and hand it answers), the session table (who waits on which task),
/// the server's own requests in flight, and the two settings of client-hosted tasks.
/// The server holds one; notifications and the call pipeline borrow it.
pub(crate) struct Questions {
    /// The engine the answers go to.
    pub(crate) engine: Engine,
    /// The sessions held by this process.
    pub(crate) sessions: Arc<Sessions>,
    /// Requests the server sent to clients and waits on.
    pub(crate) outgoing: Outgoing,
    /// `ServerConfig::client_hosted_tasks`.
    pub(crate) client_hosted_tasks: bool,
    /// `ServerConfig::client_request_timeout`.
    pub(crate) client_request_timeout: Duration,
    /// Cancelled when the server shuts down (client-hosted polls stop).
    pub(crate) shutdown: CancellationToken,
}

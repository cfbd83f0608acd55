//! Questions a server asks while a task runs (elicitation, sampling, roots), and the
//! handlers a caller registers to answer them.
//!
//! On the 2025-11-25 wire a question is a server-to-client JSON-RPC request; on the
//! extension wire it is an entry of a task's `inputRequests`, answered with
//! `tasks/update`. Either way the handler sees one [`InputRequest`] and returns the
//! result object (`ElicitResult`, `CreateMessageResult`, `ListRootsResult`). Each
//! question reaches its handler once, however often the server repeats it.

use futures::future::BoxFuture;
use mcp_tasks_protocol::{RpcError, TaskId};
use serde_json::{json, Value};
use std::fmt;
use std::sync::Arc;

/// `elicitation/create`.
pub use mcp_tasks_protocol::methods::ELICITATION_CREATE as ELICITATION;
/// `roots/list`.
pub use mcp_tasks_protocol::methods::ROOTS_LIST as ROOTS;
/// `sampling/createMessage`.
pub use mcp_tasks_protocol::methods::SAMPLING_CREATE_MESSAGE as SAMPLING;

/// One question from the server.
#[derive(Debug, Clone, PartialEq)]
pub struct InputRequest {
    /// The method: [`ELICITATION`], [`SAMPLING`] or [`ROOTS`].
    pub method: String,
    /// Its params as sent (for elicitation: `message`, `requestedSchema`, `mode`).
    pub params: Value,
    /// The task the question belongs to, when the server said.
    pub task_id: Option<TaskId>,
    /// What identifies the question: the JSON-RPC id (2025-11-25) or the
    /// `inputRequests` key (extension).
    pub key: String,
}

impl InputRequest {
    /// The elicitation's message, if this is one.
    pub fn message(&self) -> Option<&str> {
        self.params.get("message").and_then(Value::as_str)
    }

    /// The elicitation's `requestedSchema`, if this is a form elicitation.
    pub fn requested_schema(&self) -> Option<&Value> {
        self.params.get("requestedSchema")
    }
}

/// A function answering one kind of question.
pub type Handler =
    Arc<dyn Fn(InputRequest) -> BoxFuture<'static, Result<Value, RpcError>> + Send + Sync>;

/// The handlers a client offers. Which ones are set decides the capabilities the
/// client declares (`elicitation`, `sampling`, `roots`).
#[derive(Clone, Default)]
pub struct Handlers {
    pub(crate) elicitation: Option<Handler>,
    pub(crate) sampling: Option<Handler>,
    pub(crate) roots: Option<Handler>,
    pub(crate) log: Option<crate::log::LogHandler>,
    pub(crate) notification: Option<NotificationHandler>,
}

/// Sees notifications the client does not consume itself (method, params).
pub type NotificationHandler = Arc<dyn Fn(&str, &Value) + Send + Sync>;

impl fmt::Debug for Handlers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Handlers")
            .field("elicitation", &self.elicitation.is_some())
            .field("sampling", &self.sampling.is_some())
            .field("roots", &self.roots.is_some())
            .field("log", &self.log.is_some())
            .field("notification", &self.notification.is_some())
            .finish()
    }
}

impl Handlers {
    /// The handler for `method`, if one is registered.
    pub(crate) fn for_method(&self, method: &str) -> Option<&Handler> {
        match method {
            ELICITATION => self.elicitation.as_ref(),
            SAMPLING => self.sampling.as_ref(),
            ROOTS => self.roots.as_ref(),
            _ => None,
        }
    }

    /// The client capabilities these handlers imply.
    pub(crate) fn capabilities(&self) -> Value {
        let mut caps = json!({});
        if self.elicitation.is_some() {
            caps["elicitation"] = json!({ "form": {} });
        }
        if self.sampling.is_some() {
            caps["sampling"] = json!({});
        }
        if self.roots.is_some() {
            caps["roots"] = json!({ "listChanged": false });
        }
        caps
    }
}

/// An `ElicitResult` accepting `content`.
pub fn accept(content: Value) -> Value {
    json!({ "action": "accept", "content": content })
}

/// An `ElicitResult` declining the question.
pub fn decline() -> Value {
    json!({ "action": "decline" })
}

/// An `ElicitResult` cancelling the question (the user dismissed it).
pub fn cancel() -> Value {
    json!({ "action": "cancel" })
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures::FutureExt;

    #[test]
    fn capabilities_follow_the_registered_handlers() {
        let mut h = Handlers::default();
        assert_eq!(h.capabilities(), json!({}));
        h.elicitation = Some(Arc::new(|_| async { Ok(decline()) }.boxed()));
        assert_eq!(h.capabilities()["elicitation"], json!({"form": {}}));
        assert!(h.for_method(ELICITATION).is_some());
        assert!(h.for_method(SAMPLING).is_none());
    }
}

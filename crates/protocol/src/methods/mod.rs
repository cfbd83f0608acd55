//! Method names and the params of the methods mcp-tasks serves.
//!
//! Params types accept unknown fields (MCP adds fields over time) and are parsed with
//! [`parse_params`], which turns a serde error into a `-32602` that names the method.

mod params;

pub use params::*;

/// `initialize`: version and capability negotiation.
pub const INITIALIZE: &str = "initialize";
/// `ping`: liveness check, answered with `{}`.
pub const PING: &str = "ping";
/// `tools/list`.
pub const TOOLS_LIST: &str = "tools/list";
/// `tools/call`.
pub const TOOLS_CALL: &str = "tools/call";
/// `tasks/get`.
pub const TASKS_GET: &str = "tasks/get";
/// `tasks/result`: waits for a terminal task and returns what the request returned.
pub const TASKS_RESULT: &str = "tasks/result";
/// `tasks/list`.
pub const TASKS_LIST: &str = "tasks/list";
/// `tasks/cancel`.
pub const TASKS_CANCEL: &str = "tasks/cancel";
/// `tasks/update` (extension): answers to a task's input requests.
pub const TASKS_UPDATE: &str = "tasks/update";
/// `subscriptions/listen` (2026-07-28): opens a stream of notifications instead of
/// answering once.
pub const SUBSCRIPTIONS_LISTEN: &str = "subscriptions/listen";
/// `server/discover` (2026-07-28): capabilities without a session.
pub const SERVER_DISCOVER: &str = "server/discover";
/// Server-to-client: ask the user to fill in a form or open a URL.
pub const ELICITATION_CREATE: &str = "elicitation/create";
/// Server-to-client: ask the client's model for a completion.
pub const SAMPLING_CREATE_MESSAGE: &str = "sampling/createMessage";
/// Server-to-client: ask for the client's roots.
pub const ROOTS_LIST: &str = "roots/list";
/// Client notification ending `initialize`.
pub const NOTIF_INITIALIZED: &str = "notifications/initialized";
/// Cancels an in-flight request (not a task: tasks use `tasks/cancel`).
pub const NOTIF_CANCELLED: &str = "notifications/cancelled";
/// `notifications/tools/list_changed`: the server's tool list changed; list again.
pub const NOTIF_TOOLS_LIST_CHANGED: &str = "notifications/tools/list_changed";
/// Progress of a request carrying `_meta.progressToken`.
pub const NOTIF_PROGRESS: &str = "notifications/progress";
/// Sets the least severe log level the client wants sent.
pub const LOGGING_SET_LEVEL: &str = "logging/setLevel";
/// A log message from the server.
pub const NOTIF_MESSAGE: &str = "notifications/message";
/// 2025-11-25 task status change.
pub const NOTIF_TASK_STATUS: &str = "notifications/tasks/status";

//! The two task wire generations, one folder each. A method has the same file name on
//! both sides (`tools_call.rs`, `tasks_get.rs`, `tasks_cancel.rs`, `tools_list.rs`, ...),
//! as sqlx's backends do, so the difference between the wires for one method is two
//! files side by side. What both share (finding and running a tool, starting a task,
//! mapping engine errors) lives above, in `tools::call` and `error_map`.
//!
//! - `v2025_11_25`: sessions opened by `initialize`; `params.task`; `tasks/get`,
//!   `tasks/result`, `tasks/list`, `tasks/cancel`; input requests as server-to-client
//!   requests; `notifications/tasks/status`.
//! - [`v2026_07_28`]: stateless requests with `_meta`; the `io.modelcontextprotocol/tasks`
//!   extension: `DetailedTask`, `tasks/update`, `inputRequests`, MRTR,
//!   `subscriptions/listen`.

pub(crate) mod v2025_11_25;
pub mod v2026_07_28;

//! Tools: what a server offers and how a call to one runs. The registry of tools and
//! their schemas, typed tool functions, tools whose work runs elsewhere, and the one
//! tool-call path both wires share (finding the tool, running it inline or as a task).

pub(crate) mod budget;
pub(crate) mod call;
pub mod durations;
pub mod external;
pub(crate) mod heartbeat;
pub(crate) mod plain;
pub mod registry;
pub(crate) mod result;
pub mod retry_settings;
pub(crate) mod schema_check;
pub(crate) mod start_call;
pub(crate) mod task_tool_names;
pub mod task_tools;
pub(crate) mod task_tools_mode;
pub mod typed;

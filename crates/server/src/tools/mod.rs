//! Tools as their authors see them: the registry of tools and their schemas, typed tool
//! functions, tools whose work runs elsewhere, retry settings, and who is offered the
//! task tools. How a call of a tool runs (inline, as a task, under the sync budget) is
//! the call pipeline's business, in `crate::calls`.

pub mod external;
pub mod registry;
pub(crate) mod result;
pub mod retry_settings;
pub(crate) mod schema_check;
pub(crate) mod task_tool_names;
pub(crate) mod task_tools_mode;
pub mod typed;

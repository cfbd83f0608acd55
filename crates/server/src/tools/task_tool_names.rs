//! The names of the task tools (see `calls::task_tools`), on their own so that the
//! registry can keep other tools off them without depending on what the tools do.

/// `task_wait`.
pub const TASK_WAIT: &str = "task_wait";
/// `task_status`.
pub const TASK_STATUS: &str = "task_status";
/// `task_answer`.
pub const TASK_ANSWER: &str = "task_answer";
/// `task_cancel`.
pub const TASK_CANCEL: &str = "task_cancel";
/// `task_list`.
pub const TASK_LIST: &str = "task_list";

/// The names of the task tools, which no other tool of a server may take.
pub const NAMES: [&str; 5] = [TASK_WAIT, TASK_STATUS, TASK_ANSWER, TASK_CANCEL, TASK_LIST];

/// Whether `name` is the name of a task tool.
pub fn is_task_tool(name: &str) -> bool {
    NAMES.contains(&name)
}

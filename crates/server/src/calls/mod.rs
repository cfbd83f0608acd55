//! The call pipeline: what a `tools/call` becomes, and the machinery that runs it.
//! `plan` holds the one function that decides (find the tool, validate its arguments,
//! put it behind its approval gate, answer its preflight questions, then choose one
//! [`plan::CallPlan`]); both wires call it and only render its answer.
//!
//! | file | what |
//! |---|---|
//! | `plan` | [`plan::plan`]: the decision, and the predicates it rests on |
//! | `call` | finding a tool, running it inline, starting it as a task (the one creation path) |
//! | `plain` | a plain call that became a task: its link to the call, the handle it answers with |
//! | `budget` | waiting on that task under the sync budget |
//! | `heartbeat` | progress for a plain call that is quiet |
//! | `task_tools` | `task_wait`, `task_status`, `task_answer`, `task_cancel`, `task_list` |

pub(crate) mod budget;
pub(crate) mod call;
pub(crate) mod heartbeat;
pub(crate) mod plain;
pub(crate) mod plan;
pub mod task_tools;

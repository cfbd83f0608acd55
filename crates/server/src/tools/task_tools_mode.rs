//! [`TaskTools`]: who is offered the task tools (`task_wait`, `task_status`, …), a
//! setting of [`crate::ServerConfig`].

/// Who is offered the task tools (see [`crate::ServerConfig::task_tools`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TaskTools {
    /// To clients that declared no task support: on 2025-11-25 a client whose
    /// `initialize` capabilities have no `tasks`, and any older protocol version; on
    /// the 2026-07-28 wire a request that does not declare the Tasks extension. Clients
    /// that speak tasks use `tasks/*` and do not need them.
    #[default]
    Auto,
    /// To every client.
    Always,
    /// To nobody.
    Never,
}

impl TaskTools {
    /// Reads `auto`, `always` or `never`.
    ///
    /// # Errors
    /// A message naming the three values.
    pub fn parse(s: &str) -> Result<Self, String> {
        match s {
            "auto" => Ok(TaskTools::Auto),
            "always" => Ok(TaskTools::Always),
            "never" => Ok(TaskTools::Never),
            other => Err(format!(
                "task tools '{other}' is not one of auto, always, never"
            )),
        }
    }
}

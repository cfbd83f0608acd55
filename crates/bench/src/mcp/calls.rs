//! The requests the figures send on an open session: create, poll, collect, call.

use super::reply::{check_envelope, created, is_terminal};
use super::{Created, McpConn, Status, Wire};
use crate::error::BenchError;

impl McpConn {
    /// `ping`.
    ///
    /// # Errors
    /// Transport failures or a JSON-RPC error.
    pub async fn ping(&mut self) -> Result<(), BenchError> {
        let body = self.request("ping", None, "{}").await?;
        check_envelope("ping", &body).map(|_| ())
    }

    /// Calls `tool` with `arguments` (a JSON object text) as a task; returns the id.
    ///
    /// # Errors
    /// Transport failures, a JSON-RPC error, or a reply that is not a task (the
    /// long-running calls of the create and get figures must become tasks).
    pub async fn create_task(&mut self, tool: &str, arguments: &str) -> Result<String, BenchError> {
        match self.call_as_task(tool, arguments).await? {
            Created::Task(id) => Ok(id),
            Created::Done => Err(BenchError::Rpc {
                method: "tools/call".into(),
                message: "the reply is a plain result, not a task (does the tool support tasks on this wire, and does it keep working?)".into(),
            }),
        }
    }

    /// Calls `tool` with `arguments` as a task. On the extension wire the server decides:
    /// it may answer a quick call with a plain `CallToolResult` (no task), which comes
    /// back as [`Created::Done`].
    ///
    /// # Errors
    /// Transport failures, a JSON-RPC error, a tool error, or (on 2025-11-25) a reply
    /// that is not a task.
    pub async fn call_as_task(
        &mut self,
        tool: &str,
        arguments: &str,
    ) -> Result<Created, BenchError> {
        let params = match self.wire {
            Wire::V2025_11_25 => {
                format!(r#"{{"name":"{tool}","arguments":{arguments},"task":{{}}}}"#)
            }
            Wire::V2026_07_28 => format!(r#"{{"name":"{tool}","arguments":{arguments}}}"#),
        };
        let wire = self.wire;
        let body = self.request("tools/call", Some(tool), &params).await?;
        created(wire, &body)
    }

    /// `tasks/get` until the task is terminal; returns how many requests that took.
    ///
    /// # Errors
    /// Transport failures or a JSON-RPC error.
    pub async fn poll_until_done(&mut self, task_id: &str) -> Result<u32, BenchError> {
        let mut n = 0;
        loop {
            n += 1;
            if self.get_task(task_id).await? == Status::Terminal {
                return Ok(n);
            }
            tokio::task::yield_now().await;
        }
    }

    /// `tasks/get`: the task's status.
    ///
    /// # Errors
    /// Transport failures, a JSON-RPC error, or a reply without a status.
    pub async fn get_task(&mut self, task_id: &str) -> Result<Status, BenchError> {
        let params = format!(r#"{{"taskId":"{task_id}"}}"#);
        let body = self.request("tasks/get", Some(task_id), &params).await?;
        let result = check_envelope("tasks/get", &body)?;
        match result.status.as_deref() {
            Some(s) if is_terminal(s) => Ok(Status::Terminal),
            Some(_) => Ok(Status::Live),
            None => Err(BenchError::Rpc {
                method: "tasks/get".into(),
                message: format!("no status in the reply: {}", String::from_utf8_lossy(&body)),
            }),
        }
    }

    /// Waits for the task's outcome: `tasks/result` on 2025-11-25; on the extension
    /// wire, `tasks/get` until the task is terminal. Returns how many requests it took.
    ///
    /// # Errors
    /// Transport failures or a JSON-RPC error.
    pub async fn task_result(&mut self, task_id: &str) -> Result<u32, BenchError> {
        match self.wire {
            Wire::V2025_11_25 => {
                let params = format!(r#"{{"taskId":"{task_id}"}}"#);
                let body = self.request("tasks/result", Some(task_id), &params).await?;
                check_envelope("tasks/result", &body)?;
                Ok(1)
            }
            Wire::V2026_07_28 => self.poll_until_done(task_id).await,
        }
    }

    /// Any request, its reply envelope parsed whole (`result` or `error`): for the
    /// soak's less frequent requests (`tasks/update`, a `tasks/get` that may find
    /// nothing), where reading every field matters more than parsing speed.
    ///
    /// # Errors
    /// Transport failures, an HTTP error status, or a reply that is not JSON.
    pub async fn request_json(
        &mut self,
        method: &str,
        name: Option<&str>,
        params: &str,
    ) -> Result<serde_json::Value, BenchError> {
        let body = self.request(method, name, params).await?;
        serde_json::from_slice(&body).map_err(|e| BenchError::Rpc {
            method: method.into(),
            message: format!("the reply is not JSON ({e})"),
        })
    }

    /// A plain synchronous `tools/call`.
    ///
    /// # Errors
    /// Transport failures, a JSON-RPC error, or a reply that is a task.
    pub async fn call_sync(&mut self, tool: &str, arguments: &str) -> Result<(), BenchError> {
        let params = format!(r#"{{"name":"{tool}","arguments":{arguments}}}"#);
        let body = self.request("tools/call", Some(tool), &params).await?;
        let result = check_envelope("tools/call", &body)?;
        if result.task_id.is_some() || result.task.is_some() {
            return Err(BenchError::Rpc {
                method: "tools/call".into(),
                message: "a synchronous call came back as a task".into(),
            });
        }
        if result.is_error == Some(true) {
            return Err(BenchError::Rpc {
                method: "tools/call".into(),
                message: format!("tool error: {}", String::from_utf8_lossy(&body)),
            });
        }
        Ok(())
    }
}

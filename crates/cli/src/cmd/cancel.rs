//! `mcp-tasks cancel`: cancel a task and show its state afterwards.

use console::style;
use mcp_tasks_client::{Client, ClientError, TaskId, TaskStatus, TaskView};

use super::args::TaskArgs;
use super::exit::{fail, EXIT_ALREADY_ENDED, EXIT_OK};
use super::output::{out, status_text, task_json, task_line};

/// Runs `cancel`; returns the exit status: 0 when the task is cancelled (now or
/// before), [`EXIT_ALREADY_ENDED`] when it had already completed or failed.
pub async fn run(a: TaskArgs) -> u8 {
    a.run(|client, id, target, connect| async move {
        let t = match client.cancel(&id).await {
            Ok(t) => t,
            // 2025-11-25 refuses to cancel a task that ended (-32602): say how it ended.
            Err(e) => match ended(&client, &id, &e).await {
                Some(t) => t,
                None => return fail(&format!("cancelling task {id}"), &e),
            },
        };
        if let Some(j) = connect.journal(&target) {
            j.update([&t]);
        }
        if connect.json {
            out(task_json(&t));
        } else {
            out(task_line(&t));
        }
        report(&t)
    })
    .await
}

/// The task's state when cancelling it failed because it had already ended.
async fn ended(client: &Client, id: &TaskId, e: &ClientError) -> Option<TaskView> {
    if e.code() != Some(mcp_tasks_protocol::error_code::INVALID_PARAMS) {
        return None;
    }
    client.get(id).await.ok().filter(|t| t.status.is_terminal())
}

/// Says on stderr what became of the task; returns the exit status.
fn report(t: &TaskView) -> u8 {
    match t.status {
        TaskStatus::Cancelled => EXIT_OK,
        TaskStatus::Completed | TaskStatus::Failed => {
            eprintln!(
                "{} task {} had already finished ({}); there was nothing to cancel",
                style("not cancelled:").yellow().bold().for_stderr(),
                t.id,
                status_text(t)
            );
            EXIT_ALREADY_ENDED
        }
        _ => {
            eprintln!(
                "{} the server was asked to cancel task {}; it still reads {}",
                style("note:").yellow().for_stderr(),
                t.id,
                t.status.as_str()
            );
            EXIT_OK
        }
    }
}

//! External jobs: tools whose work runs in another system (a warehouse query, a CI
//! build, a batch API). The tool starts the job and hands the engine a small state
//! (the job id, a cursor); the engine stores it with the task. No process holds the
//! task after that: `tasks/get` and `tasks/result` poll the job (at most once per poll
//! interval, the answer kept in the store), `tasks/cancel` cancels it, and so does the
//! expiry sweeper when the task's ttl runs out before the job ended. Such a task
//! survives restarts and any replica can answer for it.
//!
//! ```
//! use mcp_tasks_server::external::{ExternalJob, JobError, JobPoll};
//! use mcp_tasks_server::{TaskSupport, Tool};
//! use mcp_tasks_engine::TaskContext;
//!
//! /// Runs a query on a (pretend) warehouse.
//! struct Warehouse;
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct Query { sql: String }
//!
//! #[derive(serde::Serialize, serde::Deserialize)]
//! struct Submitted { query_id: String }
//!
//! impl ExternalJob for Warehouse {
//!     type Args = Query;
//!     type State = Submitted;
//!     type Output = String;
//!     async fn start(&self, args: Query, _ctx: TaskContext) -> Result<Submitted, JobError> {
//!         Ok(Submitted { query_id: format!("q-{}", args.sql.len()) }) // submit it for real here
//!     }
//!     async fn poll(&self, state: &Submitted) -> Result<JobPoll<Submitted, String>, JobError> {
//!         Ok(JobPoll::Done(format!("{} finished", state.query_id)))
//!     }
//!     async fn cancel(&self, _state: &Submitted) -> Result<(), JobError> {
//!         Ok(())
//!     }
//! }
//!
//! let tool = Tool::external("run_query", "Runs SQL on the warehouse.", Warehouse)
//!     .task_support(TaskSupport::Required);
//! assert_eq!(tool.definition()["execution"]["taskSupport"], "required");
//! ```

use mcp_tasks_engine::{ExternalPoller, PolledJob};
use mcp_tasks_engine::{Outcome, TaskContext};
use mcp_tasks_protocol::error_code::INTERNAL_ERROR;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{Map, Value};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use crate::tools::registry::Tool;
use crate::tools::result::ToolResult;
use crate::tools::typed::{parse_args, tool_schema, IntoToolResult};

/// An error from the external system, with its reason. Anything implementing
/// `std::error::Error` converts with `?`.
pub type JobError = Box<dyn std::error::Error + Send + Sync>;

/// What a poll of an external job found.
#[derive(Debug, Clone, PartialEq)]
pub enum JobPoll<S, R> {
    /// Still running. `state: Some(new)` replaces the stored state (a new cursor, a
    /// page token); `status_message` becomes the task's status message.
    Running {
        /// The new state to store, if it changed.
        state: Option<S>,
        /// What to show in `tasks/get`, if anything new.
        status_message: Option<String>,
    },
    /// Finished: the tool's result (an `Err` in it becomes a tool error, as for any
    /// tool).
    Done(R),
}

/// A tool whose work runs in another system. Implement it and register the tool with
/// [`Tool::external`].
pub trait ExternalJob: Send + Sync + 'static {
    /// The tool's arguments; their schema is the `inputSchema`.
    type Args: DeserializeOwned + JsonSchema + Send + 'static;
    /// What the engine stores to find the job again: keep it small (an id, a cursor).
    type State: Serialize + DeserializeOwned + Send + Sync + 'static;
    /// The tool's result.
    type Output: IntoToolResult + Send + 'static;

    /// Submits the job and returns its state. Runs inside the task (it may use the
    /// context: status messages, questions to the user). An error ends the task as a
    /// tool error.
    fn start(
        &self,
        args: Self::Args,
        ctx: TaskContext,
    ) -> impl Future<Output = Result<Self::State, JobError>> + Send;

    /// Asks the external system how the job is doing. Called when a client reads the
    /// task, at most once per poll interval. An error means "could not find out this
    /// time": the task stays as it was and the next read tries again.
    fn poll(
        &self,
        state: &Self::State,
    ) -> impl Future<Output = Result<JobPoll<Self::State, Self::Output>, JobError>> + Send;

    /// Asks the external system to stop the job: on `tasks/cancel`, on a synchronous
    /// call the client cancelled, and when the task expires before the job ended (the
    /// sweeper deletes it; nobody could collect the result). On `tasks/cancel` the task
    /// is cancelled even if this fails, with the reason in its status message.
    fn cancel(&self, state: &Self::State) -> impl Future<Output = Result<(), JobError>> + Send;

    /// How often a synchronous call (one not made as a task) polls while it waits.
    fn sync_poll_interval(&self) -> Duration {
        Duration::from_millis(500)
    }
}

pub(crate) use crate::tools::registry::{ExternalSpec, ExternalStart};

/// Adapts a typed [`ExternalJob`] to the engine's JSON-level poller.
struct Adapter<J>(Arc<J>);

#[async_trait::async_trait]
impl<J: ExternalJob> ExternalPoller for Adapter<J> {
    async fn poll(&self, state: &Value) -> Result<PolledJob, String> {
        let state: J::State = match serde_json::from_value(state.clone()) {
            Ok(s) => s,
            Err(e) => return Ok(PolledJob::Finished(unreadable_state(&e))),
        };
        match self.0.poll(&state).await.map_err(|e| e.to_string())? {
            JobPoll::Running {
                state,
                status_message,
            } => Ok(PolledJob::Running {
                state: state.and_then(|s| serde_json::to_value(s).ok()),
                status_message,
            }),
            JobPoll::Done(output) => Ok(PolledJob::Finished(crate::tools::typed::to_outcome(
                output.into_tool_result(),
            ))),
        }
    }

    async fn cancel(&self, state: &Value) -> Result<(), String> {
        let state: J::State = serde_json::from_value(state.clone())
            .map_err(|e| format!("the stored job state is unreadable: {e}"))?;
        self.0.cancel(&state).await.map_err(|e| e.to_string())
    }
}

fn unreadable_state(e: &serde_json::Error) -> Outcome {
    Outcome::Error {
        code: INTERNAL_ERROR,
        message: format!(
            "the stored job state no longer fits this server's tool ({e}); was the tool changed? Call the tool again"
        ),
        data: None,
    }
}

impl Tool {
    /// A tool that runs its work in another system (see [`ExternalJob`]). As a task,
    /// only `start` runs in this process; the engine then polls and cancels the job
    /// through the stored state. As a synchronous call (when task support allows one),
    /// the call starts the job and polls it until it finishes.
    pub fn external<J: ExternalJob>(
        name: impl Into<String>,
        description: impl Into<String>,
        job: J,
    ) -> Tool {
        let name = name.into();
        let job = Arc::new(job);
        let sync_job = Arc::clone(&job);
        let sync_name = name.clone();
        let sync = move |args: Map<String, Value>, ctx: TaskContext| {
            let job = Arc::clone(&sync_job);
            let parsed = parse_args::<J::Args>(&sync_name, args);
            Box::pin(async move { run_to_completion(job, parsed?, ctx).await }) as crate::ToolFuture
        };
        let start_job = Arc::clone(&job);
        let start_name = name.clone();
        let start: ExternalStart = Arc::new(move |args, ctx| {
            let job = Arc::clone(&start_job);
            let parsed = parse_args::<J::Args>(&start_name, args);
            Box::pin(async move {
                let args = parsed.map_err(|e| crate::tools::typed::to_outcome(Err(e)))?;
                match job.start(args, ctx).await {
                    Ok(state) => serde_json::to_value(state).map_err(|e| Outcome::Error {
                        code: INTERNAL_ERROR,
                        message: format!("the job state could not be stored: {e}"),
                        data: None,
                    }),
                    Err(e) => Err(Outcome::Result {
                        value: start_failed(&e),
                    }),
                }
            })
        });
        let mut tool = Tool::build(
            name,
            description.into(),
            tool_schema::<J::Args>(),
            J::Output::output_schema(),
            Arc::new(sync),
        );
        tool.set_external(ExternalSpec {
            start,
            poller: Arc::new(Adapter(job)),
        });
        tool
    }
}

/// The tool error of a job whose `start` failed, on either path.
fn start_failed(e: &JobError) -> Value {
    ToolResult::error(format!("could not start the job: {e}")).into()
}

/// The synchronous path: start, then poll until done; a cancelled call cancels the job.
async fn run_to_completion<J: ExternalJob>(
    job: Arc<J>,
    args: J::Args,
    ctx: TaskContext,
) -> Result<Value, mcp_tasks_protocol::RpcError> {
    let mut state = match job.start(args, ctx.clone()).await {
        Ok(s) => s,
        Err(e) => return Ok(start_failed(&e)),
    };
    loop {
        tokio::select! {
            _ = ctx.cancelled() => {
                let note = match job.cancel(&state).await {
                    Ok(()) => "the job was cancelled".to_string(),
                    Err(e) => format!("the call was cancelled, but cancelling the job failed: {e}"),
                };
                return Ok(ToolResult::error(note).into());
            }
            _ = tokio::time::sleep(job.sync_poll_interval()) => {}
        }
        match job.poll(&state).await {
            Ok(JobPoll::Done(output)) => return output.into_tool_result(),
            Ok(JobPoll::Running {
                state: new_state,
                status_message,
            }) => {
                if let Some(s) = new_state {
                    state = s;
                }
                if let Some(m) = status_message {
                    ctx.set_status_message(m).await;
                }
            }
            Err(e) => tracing::warn!(error = %e, "polling the external job failed; trying again"),
        }
    }
}

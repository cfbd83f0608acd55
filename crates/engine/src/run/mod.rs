//! The engine's components: each owns its own state and reaches the others only
//! through arguments, with [`core::Core`] (the store, the settings, the one place a
//! status changes) below all of them. None imports the facade (`engine`) or the
//! maintenance services; both of those import these.
//!
//! | module | what it owns |
//! |---|---|
//! | `abort` | what stops a job's work (its abort state and handle) and catches its panics |
//! | `core` | the store, settings, clock, runner id and event channel; every status change (`Core::apply`) |
//! | `executor` | the table of work running here (tokens, abort handles, lease generations) and the quota |
//! | `job` | the one job type every task's work runs in, and the hand-over of provisional work |
//! | `ledger` | the writes work makes to its record: its end, its status messages |
//! | `questions` | questions a task asks and their answers; the work waiting for them |
//! | `deadlines` | what time does to an unanswered question: its deadline, its task's end |
//! | `external_jobs` | pollers of external jobs and the rate limit of their polls |
//! | `replicas` | re-reading tasks other processes changed |
//! | `sinks` | the context work runs with, and where its progress and logs go |
//! | `span` | the span of a task's execution |
//! | `quota` | active-task counts per principal, per session and in total |

pub(crate) mod abort;
pub(crate) mod core;
pub(crate) mod deadlines;
pub(crate) mod executor;
pub(crate) mod external_jobs;
pub(crate) mod job;
pub(crate) mod ledger;
pub(crate) mod questions;
pub(crate) mod quota;
pub(crate) mod replicas;
pub(crate) mod rerun;
pub(crate) mod sinks;
pub(crate) mod span;

use mcp_tasks_protocol::TaskId;
use mcp_tasks_store::{InputRequest, ObservedStore};
use serde_json::Value;
use std::sync::{Arc, Weak};
use tokio_util::sync::CancellationToken;

use crate::context::TaskHost;
use crate::hooks::Resumer;
use crate::input::InputError;
use crate::retry::Retry;
use crate::steps::StepError;
use mcp_tasks_store::{RecordStep, StoreError};
use std::sync::OnceLock;

/// The components one engine is made of, shared by its handles, its maintenance
/// services and (weakly) the contexts of its running work.
pub(crate) struct Components {
    pub(crate) core: Arc<core::Core>,
    pub(crate) executor: Arc<executor::Executor>,
    pub(crate) questions: questions::QuestionWaiters,
    pub(crate) external_jobs: Arc<external_jobs::Externals>,
    /// How to re-run a task taken over from a stopped process (given at start).
    pub(crate) resumer: Option<Resumer>,
    /// The store as the engine uses it: timed and traced.
    pub(crate) observed: Arc<ObservedStore>,
    /// This very value, for the work it runs again (set once at start).
    pub(crate) me: OnceLock<Weak<Components>>,
}

impl Components {
    /// What the contexts of work running here call back into.
    pub(crate) fn host(self: &Arc<Self>) -> Weak<dyn TaskHost> {
        let weak: Weak<Components> = Arc::downgrade(self);
        weak
    }

    /// What runs a task's work again (takeover, hand-over, retry).
    pub(crate) fn rerun(self: &Arc<Self>) -> rerun::Rerun<'_> {
        rerun::Rerun {
            core: &self.core,
            executor: &self.executor,
            host: self.host(),
            resumer: self.resumer.as_ref(),
        }
    }
}

#[async_trait::async_trait]
impl TaskHost for Components {
    async fn set_message(&self, id: &TaskId, message: String) {
        ledger::update_message(&self.core, &self.executor, id, message).await;
    }

    async fn ask(
        &self,
        id: &TaskId,
        key: String,
        mut request: InputRequest,
        deadline: Option<(std::time::Duration, mcp_tasks_store::DeadlineOutcome)>,
        cancel: &CancellationToken,
    ) -> Result<Value, InputError> {
        request.deadline = deadline.map(|(after, outcome)| mcp_tasks_store::QuestionDeadline {
            at: crate::clock::after(self.core.now(), after),
            outcome,
        });
        self.questions
            .request(&self.core, &self.executor, id, key, request, cancel)
            .await
    }

    async fn record_step(
        &self,
        id: &TaskId,
        key: String,
        attempt: u32,
        output: Value,
    ) -> Result<(), StepError> {
        let Some(journal) = self.core.store.journal() else {
            return Ok(()); // a store without a journal: steps run again on a re-run
        };
        let step = RecordStep {
            id: id.clone(),
            step: key,
            attempt,
            output,
            lease_generation: self.executor.fence(id),
            now: self.core.now(),
        };
        self.core.activity.count(|a| a.steps_recorded += 1);
        journal
            .record_step(&step)
            .await
            .map(|_| ())
            .map_err(|e| StepError::NotRecorded {
                step: step.step,
                reason: match e {
                    StoreError::LeaseConflict { .. } => {
                        "another server process took the task over; this one stops".into()
                    }
                    StoreError::Conflict { current } => {
                        format!("the task is already {}", current.status)
                    }
                    StoreError::NotFound => "the task expired or was deleted".into(),
                    other => other.to_string(),
                },
            })
    }

    fn progress(
        &self,
        id: &TaskId,
        session: Option<&str>,
        token: Option<&Value>,
        progress: crate::context::Progress,
    ) {
        sinks::progress(&self.core, id, session, token, progress);
    }

    fn log(&self, id: &TaskId, session: Option<&str>, message: crate::context::LogMessage) {
        sinks::log(&self.core, id, session, message);
    }

    async fn retry_later(&self, id: &TaskId, attempt: u32, retry: Retry) -> bool {
        // `host` is only used for the next attempt's context: this very component.
        let Some(me) = self.me.get().and_then(Weak::upgrade) else {
            return false;
        };
        me.rerun().retry_later(id, attempt, retry).await
    }
}

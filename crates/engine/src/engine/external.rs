//! The [`Engine`]'s API for tasks that wait on a job in another system (see
//! [`crate::external`] for the poller side): registering pollers and creating such
//! tasks (through the one creation path, `create`).

use futures::future::BoxFuture;
use mcp_tasks_store::{Failure, Outcome, StoredJob, TaskRecord};
use serde_json::Value;
use std::sync::Arc;

use crate::context::TaskContext;
use crate::engine::{CreateParams, Engine};
use crate::error::EngineError;
use crate::external::ExternalPoller;

impl Engine {
    /// Registers the poller for external jobs of `kind` (the server uses the tool
    /// name). Every replica registers the same kinds; a replica without the kind serves
    /// such tasks as stored (and warns once). Registering a kind again replaces it.
    pub fn register_external(&self, kind: impl Into<String>, poller: Arc<dyn ExternalPoller>) {
        self.inner.external_jobs.register(kind.into(), poller);
    }

    /// Like [`Engine::create`], but the work (`start`) only *starts* an external job and
    /// returns its state (`Ok`), or an outcome that ends the task right away (`Err`,
    /// recorded like any work's outcome; a panic fails the task like any work's).
    ///
    /// On `Ok(state)` the engine stores `{kind, state}` in the record (status stays
    /// `working`, status message [`EXTERNAL_STARTED_MESSAGE`](crate::external::EXTERNAL_STARTED_MESSAGE)) and the work is over:
    /// from then on no process holds the task, reads poll the job. Should the task have
    /// ended meanwhile (cancelled, expired), the job is cancelled at once instead.
    ///
    /// Quota: the task counts toward `max_active_tasks` and `max_tasks_per_principal`
    /// only while `start` runs. Those limits protect this process's resources, and a
    /// started job uses none (and may be polled from any replica, which could not
    /// account for it anyway).
    ///
    /// # Errors
    /// As [`Engine::create`]: quota refusals and store failures; nothing starts then.
    pub async fn create_external<F>(
        &self,
        params: CreateParams,
        kind: impl Into<String>,
        start: F,
    ) -> Result<TaskRecord, EngineError>
    where
        F: FnOnce(TaskContext) -> BoxFuture<'static, Result<Value, Outcome>>,
    {
        let kind = kind.into();
        let inner = Arc::downgrade(&self.inner);
        self.begin(params)?
            .commit_with(move |ctx| {
                let id = ctx.task_id().cloned();
                let started = start(ctx);
                Box::pin(async move {
                    let state = match started.await {
                        Ok(state) => state,
                        Err(outcome) => return Some(outcome),
                    };
                    let job = StoredJob { kind, state };
                    match (inner.upgrade(), id) {
                        (Some(inner), Some(id)) => {
                            inner
                                .external_jobs
                                .attach(&inner.core, &inner.executor, &id, job)
                                .await
                        }
                        // The engine is gone: nothing is left to record anything.
                        (None, _) => None,
                        (Some(_), None) => Some(Outcome::failed(
                            Failure::Internal,
                            "the external job started without a task to attach it to",
                        )),
                    }
                })
            })
            .await
    }
}

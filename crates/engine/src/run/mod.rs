//! The engine's components: each owns its own state and reaches the others only
//! through arguments, with [`core::Core`] (the store, the settings, the one place a
//! status changes) below all of them. None imports the facade (`engine`) or the
//! maintenance services; both of those import these.
//!
//! | module | what it owns |
//! |---|---|
//! | `core` | the store, settings, clock, runner id and event channel; every status change (`Core::apply`) |
//! | `executor` | the table of work running here (tokens, abort handles, lease generations) and the quota |
//! | `job` | the one job type every task's work runs in, and the hand-over of provisional work |
//! | `ledger` | the writes work makes to its record: its end, its status messages |
//! | `questions` | questions a task asks and their answers; the work waiting for them |
//! | `external_jobs` | pollers of external jobs and the rate limit of their polls |
//! | `replicas` | re-reading tasks other processes changed |
//! | `sinks` | the context work runs with, and where its progress and logs go |
//! | `span` | the span of a task's execution |
//! | `quota` | active-task counts per principal, per session and in total |

pub(crate) mod core;
pub(crate) mod executor;
pub(crate) mod external_jobs;
pub(crate) mod job;
pub(crate) mod ledger;
pub(crate) mod questions;
pub(crate) mod quota;
pub(crate) mod replicas;
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
}

impl Components {
    /// What the contexts of work running here call back into.
    pub(crate) fn host(self: &Arc<Self>) -> Weak<dyn TaskHost> {
        let weak: Weak<Components> = Arc::downgrade(self);
        weak
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
        request: InputRequest,
        cancel: &CancellationToken,
    ) -> Result<Value, InputError> {
        self.questions
            .request(&self.core, &self.executor, id, key, request, cancel)
            .await
    }
}

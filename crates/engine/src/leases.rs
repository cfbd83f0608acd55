//! Leases (several replicas on one database): the replica running a task renews its
//! lease every heartbeat; a replica that finds an expired lease takes the task over,
//! re-running it when its tool is resumable and failing it with a message naming the
//! cause otherwise. Every write of the work carries the lease generation it holds (a
//! fencing token), so after a takeover the old runner's writes are refused: never two
//! replicas acting on one task.

use mcp_tasks_store::{
    ClaimExpiredParams, Failure, RenewLeaseParams, StoreError, TaskRecord, TransitionParams,
};
use serde_json::Value;
use std::sync::{Arc, Mutex, Weak};

use crate::context::{TaskContext, TaskHost};
use crate::core::{now_ms, Core};
use crate::executor::{Executor, Work};

/// Most expired leases taken over per heartbeat.
const TAKEOVER_BATCH: usize = 100;

/// Decides whether a task taken over from a dead replica can run again, and builds
/// its work: `None` means the task is failed instead. Registered by the server, which
/// knows the tools.
pub type Resumer =
    Arc<dyn Fn(&TaskRecord) -> Option<Box<dyn FnOnce(TaskContext) -> Work + Send>> + Send + Sync>;

/// Status message of a task whose replica stopped and whose tool cannot be re-run.
pub const LOST_RUNNER_MESSAGE: &str =
    "the server process running this task stopped or restarted (its lease expired) and the tool is not resumable; call the tool again";

/// This process's side of the leases: how to re-run a task taken over (see
/// [`Resumer`]). The leases themselves are columns of the task records.
#[derive(Default)]
pub(crate) struct Leases {
    resumer: Mutex<Option<Resumer>>,
}

impl Leases {
    pub(crate) fn set_resumer(&self, resumer: Resumer) {
        *self.resumer.lock().unwrap_or_else(|p| p.into_inner()) = Some(resumer);
    }

    /// One heartbeat: renew this replica's leases, then take over expired ones; work
    /// re-run here reports to `host`.
    pub(crate) async fn heartbeat(
        &self,
        core: &Arc<Core>,
        executor: &Arc<Executor>,
        host: Weak<dyn TaskHost>,
    ) {
        let Some(ttl) = core.config.lease_ttl else {
            return;
        };
        let until = |now: chrono::DateTime<chrono::Utc>| {
            chrono::Duration::from_std(ttl)
                .ok()
                .and_then(|d| now.checked_add_signed(d))
                .unwrap_or(now)
        };
        for (id, generation) in executor.held_leases() {
            let now = now_ms();
            let renewed = core
                .store
                .renew_lease(&RenewLeaseParams {
                    id: id.clone(),
                    runner: core.runner_id.clone(),
                    generation,
                    until: until(now),
                    now,
                })
                .await;
            match renewed {
                Ok(_) => {}
                Err(StoreError::LeaseConflict { .. }) => {
                    tracing::warn!(task_id = %id, "lease lost to another replica; stopping the work here");
                    core.activity.count(|a| a.lease_losses += 1);
                    executor.abort_now(&id);
                }
                Err(StoreError::NotFound) | Err(StoreError::Conflict { .. }) => {
                    executor.stop_work(&id, core.config.cancel_grace)
                }
                Err(e) => {
                    tracing::warn!(task_id = %id, error = %e, "lease renewal failed; will retry")
                }
            }
        }
        let now = now_ms();
        let claimed = core
            .store
            .claim_expired_leases(&ClaimExpiredParams {
                runner: core.runner_id.clone(),
                until: until(now),
                now,
                limit: TAKEOVER_BATCH,
            })
            .await;
        match claimed {
            Ok(records) => {
                for record in records {
                    self.take_over(core, executor, host.clone(), record).await;
                }
            }
            Err(e) => tracing::warn!(error = %e, "could not look for expired leases"),
        }
    }

    async fn take_over(
        &self,
        core: &Arc<Core>,
        executor: &Arc<Executor>,
        host: Weak<dyn TaskHost>,
        record: TaskRecord,
    ) {
        core.activity.count(|a| a.lease_takeovers += 1);
        let resumer = self
            .resumer
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        if let Some(work) = resumer.and_then(|r| r(&record)) {
            tracing::warn!(task_id = %record.id, "took over a task from a stopped replica; re-running it");
            executor.launch(
                core,
                host,
                &record,
                core.capabilities(Value::Null),
                work,
                None,
            );
            return;
        }
        tracing::warn!(task_id = %record.id, "took over a task from a stopped replica; failing it");
        let change = TransitionParams::fail(
            record.id.clone(),
            Failure::LeaseLost,
            LOST_RUNNER_MESSAGE,
            now_ms(),
        )
        .fenced(record.lease_generation);
        if let Err(e) = core.apply(change).await {
            tracing::debug!(task_id = %record.id, error = %e, "taken-over task changed meanwhile");
        }
    }
}

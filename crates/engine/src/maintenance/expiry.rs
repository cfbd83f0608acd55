//! [`ExpirySweeper`]: deletes expired tasks. Each round first settles the expired
//! tasks still waiting for an answer (failed, "nobody answered", readable for
//! [`SETTLED_READABLE_FOR`](crate::config::SETTLED_READABLE_FOR)): the process running such a task settles it shortly
//! before its expiry, but when no process ran then, the record must not vanish
//! silently. Then it asks the store for expired records in bounded batches (an index lookup: the cost is O(expired), not O(all
//! tasks)) and stops any work still running for them: in-process work here, and
//! external jobs in the system that runs them (nobody can collect their results any
//! more). Its signal: [`Activity::sweeps`](crate::Activity::sweeps).

use std::sync::{Arc, Weak};
use std::time::Duration;

use chrono::{DateTime, Utc};
use mcp_tasks_protocol::TaskId;
use mcp_tasks_store::{Failure, Outcome, SettleExpiredParams};

use crate::config::{EngineConfig, SETTLED_READABLE_FOR, SWEEP_BATCH};
use crate::run::core::Core;
use crate::run::Components;

/// What the client reads of a task that expired, unanswered, while no process ran it.
fn nobody_answered(readable_until: DateTime<Utc>) -> String {
    format!(
        "Nobody answered before the task's time ran out (no server was running to settle it then), so the task failed. It stays readable until {}. Start the call again to ask again, with a longer ttl if it needs one.",
        readable_until.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
    )
}

/// The expiry sweeper's settings.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ExpirySweeper {
    /// Time between rounds (`sweep_interval`).
    pub(crate) interval: Duration,
    /// Expired tasks deleted per store call.
    pub(crate) batch: usize,
}

impl ExpirySweeper {
    pub(crate) fn from_config(config: &EngineConfig) -> Self {
        ExpirySweeper {
            interval: config.sweep_interval,
            batch: SWEEP_BATCH,
        }
    }

    /// Sweeps every `interval` while the engine lives.
    pub(crate) async fn run(self, components: Weak<Components>) {
        super::every(self.interval, components, |c| async move {
            self.sweep(&c).await;
        })
        .await;
    }

    /// One round: settle what expired waiting, then delete until a batch comes back
    /// short.
    async fn sweep(&self, components: &Arc<Components>) -> usize {
        let core = &components.core;
        for id in settle_expired_unanswered(core, self.batch).await {
            components.executor.stop_work(&id, core.config.cancel_grace);
        }
        let mut total = 0;
        loop {
            match core.store.delete_expired(core.now(), self.batch).await {
                Ok(expired) => {
                    total += expired.len();
                    for gone in &expired {
                        crate::audit::expired(&gone.id);
                        components
                            .executor
                            .stop_work(&gone.id, core.config.cancel_grace);
                        components.external_jobs.cancel_expired(core, gone);
                    }
                    if expired.len() < self.batch {
                        break;
                    }
                }
                Err(e) => {
                    tracing::warn!(error = %e, "expiry sweep failed; will retry");
                    break;
                }
            }
        }
        if total > 0 {
            tracing::info!(deleted = total, "expired tasks deleted");
        }
        core.activity.count(|a| a.sweeps += 1);
        total
    }
}

/// Settles, batch by batch, the expired tasks still waiting for an answer (see the
/// module's doc), returning their ids. Run by each sweep, and at start-up before the
/// orphans of an earlier process are failed as interrupted: a question that outlived
/// its task is reported as unanswered, not as a restart.
pub(crate) async fn settle_expired_unanswered(core: &Core, batch: usize) -> Vec<TaskId> {
    let now = core.now();
    let readable_until =
        now + chrono::Duration::from_std(SETTLED_READABLE_FOR).unwrap_or(chrono::Duration::zero());
    let message = nobody_answered(readable_until);
    let params = SettleExpiredParams {
        now,
        status_message: message.clone(),
        error: Outcome::failed(Failure::InputTimedOut, message),
        readable_until,
        limit: batch,
    };
    let mut settled_all = Vec::new();
    loop {
        match core.store.settle_expired_waiting(&params).await {
            Ok(settled) => {
                let full = settled.len() >= batch;
                for id in &settled {
                    crate::audit::deadline_passed(
                        id,
                        "*",
                        "the task expired unanswered while no server ran",
                    );
                    core.activity.count(|a| a.deadlines_passed += 1);
                }
                settled_all.extend(settled);
                if !full {
                    break;
                }
            }
            Err(e) => {
                tracing::warn!(error = %e, "settling expired waiting tasks failed; will retry");
                break;
            }
        }
    }
    if !settled_all.is_empty() {
        tracing::info!(
            settled = settled_all.len(),
            "tasks that expired unanswered failed, kept readable"
        );
    }
    settled_all
}

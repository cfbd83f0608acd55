//! [`LeaseRescuer`]: with leases, takes over the tasks whose runner's lease expired
//! (the process stopped, or stopped renewing), every heartbeat: a task whose tool is
//! resumable is re-run here (the resumer given at start builds its work), any other is
//! failed with a message naming the cause. The claim raises the lease generation, so
//! the old runner's late writes are refused: never two processes acting on one task.
//! Its signal: [`Activity::rescue_rounds`](crate::Activity::rescue_rounds) (and
//! [`Activity::lease_takeovers`](crate::Activity::lease_takeovers)).

use mcp_tasks_store::{ClaimExpiredParams, TaskRecord};
use std::sync::{Arc, Weak};
use std::time::Duration;

use crate::config::EngineConfig;
use crate::run::Components;

/// The lease rescuer's settings.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LeaseRescuer {
    /// Time between rounds (`heartbeat`).
    pub(crate) every: Duration,
    /// How long the lease of a task taken over lasts (`lease_ttl`).
    pub(crate) lease: Duration,
    /// Most expired leases taken over per round.
    pub(crate) batch: usize,
}

/// Most expired leases taken over per round.
const TAKEOVER_BATCH: usize = 100;

impl LeaseRescuer {
    /// The rescuer, when the engine runs tasks under leases.
    pub(crate) fn from_config(config: &EngineConfig) -> Option<Self> {
        config.lease_ttl.map(|lease| LeaseRescuer {
            every: config.heartbeat,
            lease,
            batch: TAKEOVER_BATCH,
        })
    }

    /// Looks for expired leases every `every` while the engine lives.
    pub(crate) async fn run(self, components: Weak<Components>) {
        super::every(self.every, components, |c| async move {
            self.rescue(&c).await;
        })
        .await;
    }

    /// One round: claim expired leases, then re-run or fail each task claimed.
    async fn rescue(&self, components: &Arc<Components>) {
        let core = &components.core;
        let now = core.now();
        let claimed = core
            .store
            .claim_expired_leases(&ClaimExpiredParams {
                runner: core.runner_id.clone(),
                until: super::lease_keeper::lease_until(now, self.lease),
                now,
                limit: self.batch,
            })
            .await;
        match claimed {
            Ok(records) => {
                for record in records {
                    take_over(components, record).await;
                }
            }
            Err(e) => tracing::warn!(error = %e, "could not look for expired leases"),
        }
        core.activity.count(|a| a.rescue_rounds += 1);
    }
}

/// Re-runs a task claimed from a stopped process (its next attempt), or fails it.
async fn take_over(components: &Arc<Components>, record: TaskRecord) {
    components.core.activity.count(|a| a.lease_takeovers += 1);
    tracing::warn!(task_id = %record.id, from = ?record.runner, "took over a task from a stopped replica");
    let from = record.runner.clone();
    components
        .rerun()
        .run_again(record, crate::run::rerun::Why::TakenOver { from })
        .await;
}

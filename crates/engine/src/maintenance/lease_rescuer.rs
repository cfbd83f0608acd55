//! [`LeaseRescuer`]: with leases, takes over the tasks whose runner is no longer alive
//! (the process stopped, or stopped writing its heartbeat: see
//! [`LeaseKeeper`](super::lease_keeper::LeaseKeeper)) or whose lease was handed back,
//! every `rescue_interval`: a task whose tool is resumable is re-run here (the resumer
//! given at start builds its work), any other is failed with a message naming the
//! cause. The claim raises the lease generation, so the old runner's late writes are
//! refused: never two processes acting on one task. A draining engine takes nothing
//! over. Its signal: [`Activity::rescue_rounds`](crate::Activity::rescue_rounds) (and
//! [`Activity::lease_takeovers`](crate::Activity::lease_takeovers)).

use mcp_tasks_store::{ClaimExpiredParams, TaskRecord};
use std::sync::{Arc, Weak};
use std::time::Duration;

use crate::config::EngineConfig;
use crate::run::Components;

/// The lease rescuer's settings.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LeaseRescuer {
    /// Time between rounds (`rescue_interval`).
    pub(crate) every: Duration,
    /// How long the lease of a task taken over lasts before this process's heartbeat
    /// alone keeps it (`lease_ttl`).
    pub(crate) lease: Duration,
    /// Most tasks taken over per round.
    pub(crate) batch: usize,
}

/// Most tasks taken over per round.
const TAKEOVER_BATCH: usize = 100;

/// Most rounds of [`LeaseRescuer::rescue_backlog`]: a bound, not a goal (each round
/// takes up to [`TAKEOVER_BATCH`]; what is left waits for the next periodic round).
const BACKLOG_ROUNDS: usize = 100;

impl LeaseRescuer {
    /// The rescuer, when the engine runs tasks under leases.
    pub(crate) fn from_config(config: &EngineConfig) -> Option<Self> {
        config.lease_ttl.map(|lease| LeaseRescuer {
            every: config.rescue_interval,
            lease,
            batch: TAKEOVER_BATCH,
        })
    }

    /// Looks for tasks to take over every `every` while the engine lives.
    pub(crate) async fn run(self, components: Weak<Components>) {
        super::every(self.every, components, |c| async move {
            self.rescue(&c).await;
        })
        .await;
    }

    /// Rounds until one takes less than a full batch (at most [`BACKLOG_ROUNDS`]): at
    /// start, after the dead processes of this host were reaped, their tasks are
    /// resumed or failed before the first periodic round.
    pub(crate) async fn rescue_backlog(&self, components: &Arc<Components>) {
        for _ in 0..BACKLOG_ROUNDS {
            if self.rescue(components).await < self.batch {
                return;
            }
        }
    }

    /// One round: claim the tasks of runners that are not alive, then re-run or fail
    /// each task claimed. Returns how many were claimed.
    async fn rescue(&self, components: &Arc<Components>) -> usize {
        let core = &components.core;
        if components.executor.is_draining() {
            return 0;
        }
        let now = core.now();
        let claimed = core
            .store
            .claim_expired_leases(&ClaimExpiredParams {
                runner: core.runner_id.clone(),
                until: super::lease_until(now, self.lease),
                now,
                limit: self.batch,
            })
            .await;
        let count = match claimed {
            Ok(records) => {
                let count = records.len();
                for record in records {
                    take_over(components, record).await;
                }
                count
            }
            Err(e) => {
                tracing::warn!(error = %e, "could not look for tasks to take over");
                0
            }
        };
        core.activity.count(|a| a.rescue_rounds += 1);
        count
    }
}

/// Re-runs a task claimed from a stopped process (its next attempt), or fails it.
async fn take_over(components: &Arc<Components>, record: TaskRecord) {
    components.core.activity.count(|a| a.lease_takeovers += 1);
    tracing::warn!(task_id = %record.id, "took over a task from a stopped replica");
    // The claimed record already names this process: the previous runner is the one
    // the journal says ran the last attempt (unknown for the first).
    components
        .rerun()
        .run_again(record, crate::run::rerun::Why::TakenOver { from: None })
        .await;
}

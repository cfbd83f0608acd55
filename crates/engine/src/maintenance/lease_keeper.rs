//! [`LeaseKeeper`]: with leases (several processes on one database), renews the lease
//! of every task whose work runs here, every heartbeat, so that no other process takes
//! live work over. A renewal refused because another process took the task stops the
//! work here at once (its writes would be refused anyway: they carry the old lease
//! generation); one refused because the task ended or expired stops it gently. Its
//! signal: [`Activity::lease_renewal_rounds`](crate::Activity::lease_renewal_rounds).

use mcp_tasks_store::{RenewLeaseParams, StoreError};
use std::sync::{Arc, Weak};
use std::time::Duration;

use crate::config::EngineConfig;
use crate::run::Components;

/// The lease keeper's settings.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LeaseKeeper {
    /// Time between rounds (`heartbeat`, at most a third of the lease).
    pub(crate) every: Duration,
    /// How long a renewed lease lasts (`lease_ttl`).
    pub(crate) lease: Duration,
}

impl LeaseKeeper {
    /// The keeper, when the engine runs tasks under leases.
    pub(crate) fn from_config(config: &EngineConfig) -> Option<Self> {
        config.lease_ttl.map(|lease| LeaseKeeper {
            every: config.heartbeat,
            lease,
        })
    }

    /// Renews every `every` while the engine lives.
    pub(crate) async fn run(self, components: Weak<Components>) {
        super::every(self.every, components, |c| async move {
            self.renew(&c).await;
        })
        .await;
    }

    /// One round: renew each lease held here.
    async fn renew(&self, components: &Arc<Components>) {
        let core = &components.core;
        let executor = &components.executor;
        for (id, generation) in executor.held_leases() {
            let now = core.now();
            let renewed = core
                .store
                .renew_lease(&RenewLeaseParams {
                    id: id.clone(),
                    runner: core.runner_id.clone(),
                    generation,
                    until: lease_until(now, self.lease),
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
        core.activity.count(|a| a.lease_renewal_rounds += 1);
    }
}

/// When a lease taken or renewed at `now` for `lease` runs out.
pub(crate) fn lease_until(
    now: chrono::DateTime<chrono::Utc>,
    lease: Duration,
) -> chrono::DateTime<chrono::Utc> {
    chrono::Duration::from_std(lease)
        .ok()
        .and_then(|d| now.checked_add_signed(d))
        .unwrap_or(now)
}

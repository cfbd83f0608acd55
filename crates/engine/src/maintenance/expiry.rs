//! [`ExpirySweeper`]: deletes expired tasks. Each round asks the store for expired
//! records in bounded batches (an index lookup: the cost is O(expired), not O(all
//! tasks)) and stops any work still running for them: in-process work here, and
//! external jobs in the system that runs them (nobody can collect their results any
//! more). Its signal: [`Activity::sweeps`](crate::Activity::sweeps).

use std::sync::{Arc, Weak};
use std::time::Duration;

use crate::config::{EngineConfig, SWEEP_BATCH};
use crate::run::Components;

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

    /// One round: delete until a batch comes back short.
    async fn sweep(&self, components: &Arc<Components>) -> usize {
        let core = &components.core;
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

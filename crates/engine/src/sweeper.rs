//! Deletes expired tasks. Each round asks the store for expired records in bounded
//! batches (an index lookup: the cost is O(expired), not O(all tasks)) and stops any
//! work still running for them: in-process work here, and external jobs in the system
//! that runs them (nobody can collect their results any more).

use crate::config::SWEEP_BATCH;
use crate::core::now_ms;
use crate::engine::Engine;

impl Engine {
    /// Runs the expiry sweeper until `shutdown` completes. Each round deletes expired
    /// records in bounded batches and stops their work; on stores other processes
    /// share, every heartbeat also re-reads the work running here and renews its
    /// leases.
    pub async fn run_sweeper(&self, shutdown: impl std::future::Future<Output = ()>) {
        run(self, shutdown).await;
    }
}

async fn run(engine: &Engine, shutdown: impl std::future::Future<Output = ()>) {
    tokio::pin!(shutdown);
    let mut tick = tokio::time::interval(engine.config().sweep_interval);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut heartbeat = tokio::time::interval(engine.config().heartbeat);
    heartbeat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let shared = engine.store().supports_notify() || engine.config().lease_ttl.is_some();
    loop {
        tokio::select! {
            _ = &mut shutdown => return,
            _ = tick.tick() => { sweep_once(engine).await; }
            _ = heartbeat.tick(), if shared => { engine.refresh_running().await; }
        }
    }
}

/// One sweep: delete until a batch comes back short.
async fn sweep_once(engine: &Engine) -> usize {
    let mut total = 0;
    loop {
        match engine.store().delete_expired(now_ms(), SWEEP_BATCH).await {
            Ok(expired) => {
                total += expired.len();
                for gone in &expired {
                    crate::audit::expired(&gone.id);
                    engine.stop_work(&gone.id);
                    engine.cancel_expired_job(gone);
                }
                if expired.len() < SWEEP_BATCH {
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
    engine.count_activity(|a| a.sweeps += 1);
    total
}

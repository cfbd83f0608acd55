//! The engine's maintenance: named background services, each with its own settings
//! and its own counter in [`Activity`](crate::Activity) (the signal tests wait on),
//! started by [`Engine::start`](crate::Engine::start) and stopped by
//! [`Engine::shutdown`](crate::Engine::shutdown).
//!
//! | service | what it does | runs when |
//! |---|---|---|
//! | [`expiry::ExpirySweeper`] | deletes expired tasks and stops their work and external jobs | always |
//! | [`lease_keeper::LeaseKeeper`] | the process heartbeat (one write per interval keeps every task running here); stops the work after a lapse | with leases |
//! | [`lease_rescuer::LeaseRescuer`] | takes over tasks whose runner is not alive (or whose lease was released): re-runs or fails them | with leases |
//! | [`change_bridge::ChangeBridge`] | turns the store's change feed, and a periodic re-read, into this engine's events | with a feed, or a store other processes write |
//!
//! Each holds the components weakly: once every handle of the engine is gone, a
//! service ends at its next round even without a shutdown.

pub(crate) mod change_bridge;
pub(crate) mod expiry;
pub(crate) mod identity;
pub(crate) mod lease_keeper;
pub(crate) mod lease_rescuer;

use mcp_tasks_store::ChangeFeed;
use parking_lot::Mutex;
use std::future::Future;
use std::sync::{Arc, Weak};
use std::time::Duration;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::run::Components;

/// The running services of one engine. See the module docs.
#[derive(Default)]
pub(crate) struct Maintenance {
    stop: CancellationToken,
    services: Mutex<Vec<JoinHandle<()>>>,
    /// The heartbeat of this process, with leases (the engine's drain and shutdown
    /// retire its row).
    pub(crate) keeper: Option<Arc<lease_keeper::LeaseKeeper>>,
}

impl Maintenance {
    /// Starts every service the engine's settings and store call for.
    /// `keeper` is the heartbeat the engine wrote its first beat with, if any.
    pub(crate) fn start(
        components: &Arc<Components>,
        feed: Option<ChangeFeed>,
        keeper: Option<Arc<lease_keeper::LeaseKeeper>>,
    ) -> Maintenance {
        let maintenance = Maintenance {
            keeper: keeper.clone(),
            ..Maintenance::default()
        };
        let core = &components.core;
        let config = &core.config;
        let weak = Arc::downgrade(components);
        maintenance.spawn(expiry::ExpirySweeper::from_config(config).run(weak.clone()));
        if let Some(keeper) = keeper {
            maintenance.spawn(keeper.run(weak.clone()));
        }
        if let Some(rescuer) = lease_rescuer::LeaseRescuer::from_config(config) {
            maintenance.spawn(rescuer.run(weak.clone()));
        }
        let bridge = change_bridge::ChangeBridge::from_config(config, &*core.store, feed.is_some());
        if let Some(feed) = feed {
            maintenance.spawn(change_bridge::ChangeBridge::follow(weak.clone(), feed));
        }
        if let Some(reread) = bridge.reread_every {
            maintenance.spawn(change_bridge::ChangeBridge::reread(weak, reread));
        }
        maintenance
    }

    /// Runs `service` until it ends or the maintenance stops.
    fn spawn(&self, service: impl Future<Output = ()> + Send + 'static) {
        let stop = self.stop.clone();
        let handle = tokio::spawn(async move {
            tokio::select! {
                () = stop.cancelled() => {}
                () = service => {}
            }
        });
        self.services.lock().push(handle);
    }

    /// Stops every service and waits until each has stopped (a round under way is
    /// dropped at its next await: every round is safe to cut short, since the store
    /// is the truth and the next process's round does it again).
    pub(crate) async fn shutdown(&self) {
        self.stop.cancel();
        let services = std::mem::take(&mut *self.services.lock());
        for service in services {
            let _ = service.await;
        }
    }
}

/// When a lease taken (or a heartbeat written) at `now` for `lease` runs out.
pub(crate) fn lease_until(
    now: chrono::DateTime<chrono::Utc>,
    lease: Duration,
) -> chrono::DateTime<chrono::Utc> {
    chrono::Duration::from_std(lease)
        .ok()
        .and_then(|d| now.checked_add_signed(d))
        .unwrap_or(now)
}

/// Runs `round` every `every` (the first at once) while the engine lives.
async fn every<F, Fut>(every: Duration, components: Weak<Components>, mut round: F)
where
    F: FnMut(Arc<Components>) -> Fut,
    Fut: Future<Output = ()>,
{
    let mut tick = tokio::time::interval(every.max(Duration::from_millis(1)));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let Some(components) = components.upgrade() else {
            return;
        };
        round(components).await;
    }
}

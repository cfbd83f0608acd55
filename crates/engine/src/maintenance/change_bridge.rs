//! [`ChangeBridge`]: several engines on one database (PostgreSQL replicas, processes
//! sharing an SQLite file) see each other's changes through it. It follows the store's
//! change feed (when the store has one) and turns each change into a re-read of the
//! task, which becomes this engine's own event (see `run::replicas`); a lost change
//! re-reads everything running here. On a store other processes write it also
//! re-reads the work running here every `reread_interval`, to catch what no event announced
//! (SQLite has no feed). Its signals: [`Activity::reread_rounds`](crate::Activity::reread_rounds)
//! and [`Activity::rereads`](crate::Activity::rereads).

use mcp_tasks_store::{Change, ChangeFeed, TaskStore};
use std::sync::Weak;
use std::time::Duration;

use crate::config::EngineConfig;
use crate::run::replicas;
use crate::run::Components;

/// The change bridge's settings.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ChangeBridge {
    /// Time between re-reads of the work running here; `None` when no other process
    /// writes the store (the in-memory store's feed sees every write, and re-reading a
    /// million running tasks every heartbeat cost a core: docs/benchmarks.md).
    pub(crate) reread_every: Option<Duration>,
}

impl ChangeBridge {
    pub(crate) fn from_config(config: &EngineConfig, store: &dyn TaskStore) -> Self {
        ChangeBridge {
            reread_every: store
                .shared_by_processes()
                .then_some(config.reread_interval),
        }
    }

    /// Follows the store's change feed while the engine lives.
    pub(crate) async fn follow(components: Weak<Components>, mut feed: ChangeFeed) {
        while let Some(change) = feed.recv().await {
            let Some(c) = components.upgrade() else {
                return;
            };
            match change {
                Change::Task(id) => {
                    replicas::refresh(&c.core, &c.executor, &c.questions, &id).await
                }
                Change::Missed => {
                    replicas::refresh_running(&c.core, &c.executor, &c.questions).await;
                }
                _ => {}
            }
        }
    }

    /// Re-reads the work running here every `every` while the engine lives.
    pub(crate) async fn reread(components: Weak<Components>, every: Duration) {
        super::every(every, components, |c| async move {
            let reread = replicas::refresh_running(&c.core, &c.executor, &c.questions).await;
            c.core.activity.count(|a| {
                a.rereads += reread as u64;
                a.reread_rounds += 1;
            });
        })
        .await;
    }
}

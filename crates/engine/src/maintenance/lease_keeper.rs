//! [`LeaseKeeper`]: with leases (several processes on one database), the heartbeat of
//! this process: one store write per interval (its runner row's `alive_until`, see
//! `mcp_tasks_store::runner`) keeps every task running here, however many, from being
//! taken over. No task's lease is renewed one by one.
//!
//! A process that could not write its heartbeat for as long as it counts as alive may
//! have lost its tasks to another process: it stops all its work at once (its writes
//! would be refused anyway: they carry the old lease generation) and hands the leases
//! back before it heartbeats again, so a task nobody took is claimable, not held by a
//! runner that no longer runs it. Its signal:
//! [`Activity::lease_renewal_rounds`](crate::Activity::lease_renewal_rounds) (one per
//! heartbeat round).
//!
//! It also does what needs the process's identity ([`ProcessIdentity`]): at start, it
//! reaps the rows of dead processes of the same host (their tasks are taken over at
//! once instead of once their rows lapse); on a clean exit, it retires its row. Every
//! [`FORGET_EVERY`] it deletes the rows of runners dead for over
//! [`DEAD_RUNNER_RETENTION`] (a crashed container's host never restarts to reap them).

use chrono::{DateTime, Utc};
use mcp_tasks_protocol::TaskId;
use mcp_tasks_store::{ReleaseLeasesParams, RunnerRecord, StoreError};
use std::sync::{Arc, Weak};
use std::time::Duration;

use super::identity::ProcessIdentity;
use crate::config::EngineConfig;
use crate::run::Components;

/// The heartbeat of this process. See the module docs.
#[derive(Debug)]
pub(crate) struct LeaseKeeper {
    /// Time between heartbeats (`heartbeat`, at most a third of `alive`).
    pub(crate) every: Duration,
    /// How long the process counts as alive after a heartbeat (`lease_ttl`).
    pub(crate) alive: Duration,
    identity: ProcessIdentity,
    /// When this process wrote its first heartbeat.
    started_at: DateTime<Utc>,
    state: tokio::sync::Mutex<State>,
}

/// What one heartbeat round leaves for the next.
#[derive(Debug, Default)]
struct State {
    /// When the last heartbeat that was written started.
    last_beat: Option<DateTime<Utc>>,
    /// Leases of work stopped after a lapse, not yet handed back.
    unreleased: Vec<(TaskId, u64)>,
    /// When rows of long-dead runners were last deleted.
    last_forget: Option<DateTime<Utc>>,
}

/// How long the row of a dead runner is kept (for whoever looks into the table)
/// before a heartbeat round deletes it: 1 hour.
const DEAD_RUNNER_RETENTION: Duration = Duration::from_secs(60 * 60);

/// How often a process deletes the rows of long-dead runners: 10 minutes (and once
/// at start).
const FORGET_EVERY: Duration = Duration::from_secs(10 * 60);

impl LeaseKeeper {
    /// The keeper, when the engine runs tasks under leases.
    pub(crate) fn from_config(config: &EngineConfig, now: DateTime<Utc>) -> Option<Arc<Self>> {
        config.lease_ttl.map(|alive| {
            Arc::new(LeaseKeeper {
                every: config.heartbeat,
                alive,
                identity: ProcessIdentity::current(),
                started_at: now,
                state: tokio::sync::Mutex::default(),
            })
        })
    }

    /// Heartbeats every `every` while the engine lives.
    pub(crate) async fn run(self: Arc<Self>, components: Weak<Components>) {
        let keeper = Arc::clone(&self);
        super::every(self.every, components, move |c| {
            let keeper = Arc::clone(&keeper);
            async move {
                if let Err(e) = keeper.beat(&c).await {
                    tracing::warn!(error = %e, "could not write this process's heartbeat; will retry");
                }
                c.core.activity.count(|a| a.lease_renewal_rounds += 1);
            }
        })
        .await;
    }

    /// One heartbeat: after a lapse, stop the work here and hand its leases back;
    /// then write the row.
    ///
    /// # Errors
    /// The store's, when the leases or the row could not be written (the next round
    /// tries again).
    pub(crate) async fn beat(&self, components: &Components) -> Result<(), StoreError> {
        let core = &components.core;
        let mut state = self.state.lock().await;
        let now = core.now();
        let lapsed = state
            .last_beat
            .is_some_and(|last| now.signed_duration_since(last) >= chrono_duration(self.alive));
        if lapsed {
            let held = components.executor.held_leases();
            tracing::warn!(
                tasks = held.len(),
                alive_window = ?self.alive,
                "this process could not prove it was alive for its whole alive window; stopping its work here (another process may take it over)"
            );
            for (id, _) in &held {
                core.activity.count(|a| a.lease_losses += 1);
                components.executor.abort_now(id);
            }
            state.unreleased.extend(held);
            state.last_beat = None;
        }
        if !state.unreleased.is_empty() {
            // Until they are handed back, a heartbeat would make them look held.
            core.store
                .release_leases(&ReleaseLeasesParams {
                    runner: core.runner_id.clone(),
                    leases: state.unreleased.clone(),
                    now,
                })
                .await?;
            state.unreleased.clear();
        }
        core.store
            .heartbeat(&self.row(core.runner_id.clone(), now))
            .await?;
        state.last_beat = Some(now);
        let due = state
            .last_forget
            .is_none_or(|last| now.signed_duration_since(last) >= chrono_duration(FORGET_EVERY));
        if due {
            state.last_forget = Some(now);
            let before = now - chrono_duration(DEAD_RUNNER_RETENTION);
            if let Err(e) = core.store.forget_dead_runners(before).await {
                tracing::debug!(error = %e, "could not delete the rows of long-dead processes");
            }
        }
        Ok(())
    }

    /// This process's row as of a heartbeat at `now`.
    fn row(&self, id: String, now: DateTime<Utc>) -> RunnerRecord {
        RunnerRecord {
            id,
            host: self.identity.host.clone(),
            pid: self.identity.pid,
            process_start: self.identity.start.clone(),
            started_at: self.started_at,
            alive_until: super::lease_until(now, self.alive),
        }
    }

    /// Reaps the rows of processes of this host that are gone (pid gone, or reused),
    /// so that their tasks are taken over now. Returns how many leases were cut short.
    pub(crate) async fn reap_dead_neighbours(&self, components: &Components) -> u64 {
        let core = &components.core;
        let rows = match core.store.runners_on_host(&self.identity.host).await {
            Ok(rows) => rows,
            Err(e) => {
                tracing::warn!(error = %e, "could not look for dead processes of this host");
                return 0;
            }
        };
        let mut cut = 0;
        for row in rows.iter().filter(|r| r.id != core.runner_id) {
            if self.identity.is_gone(row.pid, &row.process_start) != Some(true) {
                continue;
            }
            match core.store.reap_runner(&row.id, core.now()).await {
                Ok(n) => {
                    if n > 0 {
                        tracing::warn!(
                            pid = row.pid,
                            tasks = n,
                            "a previous process of this host is gone; taking its tasks over now"
                        );
                    }
                    cut += n;
                }
                Err(e) => {
                    tracing::warn!(pid = row.pid, error = %e, "could not reap a dead process's row")
                }
            }
        }
        cut
    }

    /// Deletes this process's row (a clean exit, with no lease held any more).
    pub(crate) async fn retire(&self, components: &Components) {
        let core = &components.core;
        if let Err(e) = core.store.retire(&core.runner_id).await {
            tracing::warn!(error = %e, "could not retire this process's heartbeat row; it lapses by itself");
        }
    }
}

/// `d` as a chrono duration (saturating).
fn chrono_duration(d: Duration) -> chrono::Duration {
    chrono::Duration::from_std(d).unwrap_or(chrono::Duration::MAX)
}

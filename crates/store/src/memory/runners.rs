//! Runner liveness in memory (see [`crate::runner`]): the rows of the runners, beside
//! the records under the same lock, so a claim judges liveness and takes the lease in
//! one atomic step.

use super::row::Row;
use super::tables::Inner;
use crate::runner::{ReleaseLeasesParams, RunnerRecord};
use chrono::{DateTime, Utc};
use mcp_tasks_protocol::TaskId;

impl Inner {
    /// Whether the runner `id` has a row whose `alive_until` is after `now`.
    fn runner_alive(&self, id: Option<&str>, now: DateTime<Utc>) -> bool {
        id.and_then(|id| self.runners.get(id))
            .is_some_and(|r| r.alive_until > now)
    }

    /// Whether someone holds `record` at `now`: a lease that has not passed, or a
    /// leased record whose runner is alive.
    pub(super) fn lease_is_live(&self, row: &Row, now: DateTime<Utc>) -> bool {
        match row.lease_until {
            None => false,
            Some(until) => until > now || self.runner_alive(row.runner.as_deref(), now),
        }
    }

    /// Inserts a runner's row, or moves its `alive_until` on.
    pub(super) fn heartbeat(&mut self, runner: &RunnerRecord) {
        self.runners
            .entry(runner.id.clone())
            .and_modify(|r| r.alive_until = runner.alive_until)
            .or_insert_with(|| runner.clone());
    }

    /// Deletes a runner's row.
    pub(super) fn retire(&mut self, runner: &str) {
        self.runners.remove(runner);
    }

    /// The rows of one host.
    pub(super) fn runners_on_host(&self, host: &str) -> Vec<RunnerRecord> {
        let mut rows: Vec<RunnerRecord> = self
            .runners
            .values()
            .filter(|r| r.host == host)
            .cloned()
            .collect();
        rows.sort_by(|a, b| a.id.cmp(&b.id));
        rows
    }

    /// Releases the listed leases still held at their generation; returns their ids.
    pub(super) fn release(&mut self, params: &ReleaseLeasesParams) -> Vec<TaskId> {
        let mut released = Vec::new();
        for (id, generation) in &params.leases {
            let Some(row) = self.records.get_mut(id) else {
                continue;
            };
            let held = row.runner.as_deref() == Some(params.runner.as_str())
                && row.lease_generation == *generation
                && !row.status.is_terminal()
                && row.expires_at.is_none_or(|at| at > params.now);
            if held {
                row.lease_until = Some(params.now);
                self.set_runner(id, None);
                released.push(id.clone());
            }
        }
        released
    }

    /// Deletes a dead runner's row and makes its running tasks claimable at `now`.
    pub(super) fn reap(&mut self, runner: &str, now: DateTime<Utc>) -> u64 {
        self.runners.remove(runner);
        let held: Vec<TaskId> = self
            .active
            .iter()
            .filter(|id| {
                self.record(id)
                    .is_some_and(|r| r.runner.as_deref() == Some(runner) && r.lease_until.is_some())
            })
            .cloned()
            .collect();
        for id in &held {
            if let Some(row) = self.records.get_mut(id) {
                row.lease_until = Some(now.min(row.lease_until.unwrap_or(now)));
            }
        }
        held.len() as u64
    }
}

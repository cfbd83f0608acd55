//! [`Engine::drain`]: what a process does with its work before it stops (SIGTERM,
//! Ctrl-C, the end of its stdio input).
//!
//! From the first moment no new task starts here ([`EngineError::Draining`] for
//! creations, nothing taken over from other processes). Tasks whose tool is resumable
//! (the embedder's resumer builds work for them) are stopped at once and their leases
//! handed back ([`mcp_tasks_store::TaskStore::release_leases`]): another replica, or
//! the next start, resumes them within a rescue round. The others get the drain
//! timeout to finish, and are then failed with [`DRAIN_FAILED_MESSAGE`], so a client
//! learns why instead of seeing the task die with the process.
//!
//! A task waiting for an answer (`input_required`) cannot progress while its process
//! stops (its host is gone, or nobody answers within a drain), so the drain never
//! waits for it: its work stops here at once and, on a store several processes share
//! (leases), its record stays `input_required` with its lease handed back, for the
//! next start or another replica to take over (a resumable or gated call waits on; any
//! other is failed then, saying why). On a store that keeps nothing after this
//! process, it is failed at once with [`DRAIN_WAITING_MESSAGE`].
//!
//! [`EngineError::Draining`]: crate::EngineError::Draining

use mcp_tasks_store::{Failure, ReleaseLeasesParams, TransitionParams};
use std::time::Duration;

use super::Engine;

/// Status message of a task failed because its server shut down before it finished
/// and its tool cannot be resumed elsewhere.
pub const DRAIN_FAILED_MESSAGE: &str = "the server shut down (it drained for its drain timeout) before this task finished, and the tool is not resumable; call the tool again";

/// Status message of a task failed because its server shut down while it waited for
/// an answer, on a store that keeps nothing after the process.
pub const DRAIN_WAITING_MESSAGE: &str = "the server shut down while this task waited for an answer, and its task store keeps nothing after that; call the tool again";

/// Most time between two looks at the work still running while a drain waits (an
/// ending task also wakes it at once).
const DRAIN_LOOK: Duration = Duration::from_millis(100);

/// What [`Engine::drain`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DrainReport {
    /// Resumable tasks stopped here and handed to whoever resumes them.
    pub handed_over: usize,
    /// Tasks that ended by themselves within the timeout.
    pub finished: usize,
    /// Tasks failed when the timeout passed, or at once when they waited for an
    /// answer on a store that keeps nothing.
    pub failed: usize,
    /// Tasks waiting for an answer, left in the store as they are (their work stopped
    /// here, their lease handed back) for the next start or another replica.
    pub parked: usize,
}

impl Engine {
    /// Drains the engine before its process stops: refuses new tasks from now on,
    /// hands resumable work over at once (with leases: its leases are released, so
    /// another process, or the next start, resumes it), stops at once the work of
    /// tasks waiting for an answer (kept in the store as they are, or failed when the
    /// store keeps nothing: see the module docs), lets the rest run for up to
    /// `timeout` (usually [`EngineConfig::drain_timeout`](crate::EngineConfig::drain_timeout))
    /// and fails what is still running then with [`DRAIN_FAILED_MESSAGE`].
    ///
    /// Why: a deploy or a laptop lid should not cost a resumable task more than a
    /// moment, nor leave a client waiting on a task whose process is gone. Call
    /// [`Engine::shutdown`] afterwards. Cancelling the returned future (a second
    /// signal) stops waiting at once; what was not failed yet is then left to the
    /// takeover of whoever finds its runner gone.
    pub async fn drain(&self, timeout: Duration) -> DrainReport {
        let inner = &self.inner;
        let core = &inner.core;
        inner.executor.start_draining();
        // Subscribed first: a task that starts waiting for an answer after the look
        // below is seen in the loop.
        let mut events = self.subscribe();
        let mut report = DrainReport {
            handed_over: self.hand_over().await,
            ..DrainReport::default()
        };
        let (parked, failed) = self.park(inner.executor.running_ids()).await;
        report.parked += parked;
        report.failed += failed;
        let waiting = inner.executor.count();
        if waiting > 0 {
            tracing::info!(
                tasks = waiting,
                timeout = ?timeout,
                "draining: waiting for the tasks that cannot be resumed elsewhere"
            );
        }
        // Tasks of `waiting` that started waiting for an answer meanwhile.
        let mut stopped = 0;
        let deadline = tokio::time::Instant::now() + timeout;
        while inner.executor.count() > 0 && tokio::time::Instant::now() < deadline {
            tokio::select! {
                () = tokio::time::sleep_until(deadline) => {}
                event = events.recv() => {
                    // A task that starts waiting for an answer now cannot finish either.
                    if let Ok(crate::TaskEvent::Changed(record)) = &event {
                        if record.status == mcp_tasks_protocol::TaskStatus::InputRequired
                            && inner.executor.runs_here(&record.id)
                        {
                            let (parked, failed) = self.park(vec![record.id.clone()]).await;
                            report.parked += parked;
                            report.failed += failed;
                            stopped += parked + failed;
                        }
                    }
                    if matches!(event, Err(tokio::sync::broadcast::error::RecvError::Closed)) {
                        // No more events to wake on: look every DRAIN_LOOK.
                        tokio::time::sleep(DRAIN_LOOK.min(deadline.saturating_duration_since(tokio::time::Instant::now()))).await;
                    }
                }
                () = tokio::time::sleep(DRAIN_LOOK) => {}
            }
        }
        let left = inner.executor.running_ids();
        report.finished = waiting.saturating_sub(left.len() + stopped);
        for id in left {
            let change = TransitionParams::fail(
                id.clone(),
                Failure::ServerRestarted,
                DRAIN_FAILED_MESSAGE,
                core.now(),
            )
            .fenced(inner.executor.fence(&id));
            match core.apply(change).await {
                Ok(_) => report.failed += 1,
                Err(e) => {
                    tracing::debug!(task_id = %id, error = %e, "a drained task changed meanwhile")
                }
            }
            inner.executor.abort_now(&id);
        }
        tracing::info!(
            handed_over = report.handed_over,
            parked = report.parked,
            finished = report.finished,
            failed = report.failed,
            "drained"
        );
        report
    }

    /// Whether [`Engine::drain`] began (new tasks are refused).
    pub fn is_draining(&self) -> bool {
        self.inner.executor.is_draining()
    }

    /// Stops the work of those of `ids` whose task waits for an answer (see the module
    /// docs): under a lease, leaves the record as it is and hands the lease back;
    /// without, fails the task with [`DRAIN_WAITING_MESSAGE`]. Returns how many were
    /// parked and how many failed.
    async fn park(&self, ids: Vec<mcp_tasks_protocol::TaskId>) -> (usize, usize) {
        let inner = &self.inner;
        let core = &inner.core;
        let mut leases = Vec::new();
        let mut failed = 0;
        for id in ids {
            let waits = matches!(
                core.store.get(&id, core.now()).await,
                Ok(Some(r)) if r.status == mcp_tasks_protocol::TaskStatus::InputRequired
            );
            if !waits {
                continue;
            }
            match inner.executor.fence(&id) {
                Some(generation) => {
                    inner.executor.abort_now(&id);
                    leases.push((id, generation));
                }
                None => {
                    let change = TransitionParams::fail(
                        id.clone(),
                        Failure::ServerRestarted,
                        DRAIN_WAITING_MESSAGE,
                        core.now(),
                    );
                    if core.apply(change).await.is_ok() {
                        failed += 1;
                    }
                    inner.executor.abort_now(&id);
                }
            }
        }
        if leases.is_empty() {
            return (0, failed);
        }
        let parked = leases.len();
        let released = core
            .store
            .release_leases(&ReleaseLeasesParams {
                runner: core.runner_id.clone(),
                leases,
                now: core.now(),
            })
            .await;
        if let Err(e) = released {
            tracing::warn!(tasks = parked, error = %e, "draining: could not hand back the leases of tasks waiting for an answer; they are taken over once this process stops being alive");
        }
        (parked, failed)
    }

    /// Stops the resumable work held here under a lease and releases those leases.
    /// Returns how many were handed over.
    async fn hand_over(&self) -> usize {
        let inner = &self.inner;
        let core = &inner.core;
        let Some(resumer) = inner.resumer.as_ref() else {
            return 0;
        };
        let mut leases = Vec::new();
        for (id, generation) in inner.executor.held_leases() {
            let record = match core.store.get(&id, core.now()).await {
                Ok(Some(record)) if !record.status.is_terminal() => record,
                Ok(_) => continue,
                Err(e) => {
                    tracing::warn!(task_id = %id, error = %e, "draining: could not read a task; letting it finish");
                    continue;
                }
            };
            if resumer(&record).is_some() {
                inner.executor.abort_now(&id);
                leases.push((id, generation));
            }
        }
        if leases.is_empty() {
            return 0;
        }
        let released = core
            .store
            .release_leases(&ReleaseLeasesParams {
                runner: core.runner_id.clone(),
                leases: leases.clone(),
                now: core.now(),
            })
            .await;
        match released {
            Ok(n) => usize::try_from(n).unwrap_or(usize::MAX),
            Err(e) => {
                tracing::warn!(
                    tasks = leases.len(),
                    error = %e,
                    "draining: could not hand resumable tasks over; they are taken over once this process stops being alive"
                );
                0
            }
        }
    }
}

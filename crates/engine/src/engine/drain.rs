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
//! [`EngineError::Draining`]: crate::EngineError::Draining

use mcp_tasks_store::{Failure, ReleaseLeasesParams, TransitionParams};
use std::time::Duration;

use super::Engine;

/// Status message of a task failed because its server shut down before it finished
/// and its tool cannot be resumed elsewhere.
pub const DRAIN_FAILED_MESSAGE: &str = "the server shut down (it drained for its drain timeout) before this task finished, and the tool is not resumable; call the tool again";

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
    /// Tasks failed when the timeout passed.
    pub failed: usize,
}

impl Engine {
    /// Drains the engine before its process stops: refuses new tasks from now on,
    /// hands resumable work over at once (with leases: its leases are released, so
    /// another process, or the next start, resumes it), lets the rest run for up to
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
        let mut report = DrainReport {
            handed_over: self.hand_over().await,
            ..DrainReport::default()
        };
        let waiting = inner.executor.count();
        if waiting > 0 {
            tracing::info!(
                tasks = waiting,
                timeout = ?timeout,
                "draining: waiting for the tasks that cannot be resumed elsewhere"
            );
        }
        let mut events = self.subscribe();
        let deadline = tokio::time::Instant::now() + timeout;
        while inner.executor.count() > 0 && tokio::time::Instant::now() < deadline {
            tokio::select! {
                () = tokio::time::sleep_until(deadline) => {}
                event = events.recv() => {
                    if matches!(event, Err(tokio::sync::broadcast::error::RecvError::Closed)) {
                        // No more events to wake on: look every DRAIN_LOOK.
                        tokio::time::sleep(DRAIN_LOOK.min(deadline.saturating_duration_since(tokio::time::Instant::now()))).await;
                    }
                }
                () = tokio::time::sleep(DRAIN_LOOK) => {}
            }
        }
        let left = inner.executor.running_ids();
        report.finished = waiting.saturating_sub(left.len());
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

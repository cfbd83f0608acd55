//! [`Executor`]: the work running in this process. It owns the table of running tasks
//! (their cancellation tokens, abort handles and the lease generation each holds) and
//! the quota; it registers work, forgets it, and stops it (cooperative cancellation
//! first, an abort after the grace period). Spawning work and recording its end are
//! the job's (`job`) and the ledger's (`ledger`): the executor knows neither, only the
//! job's abort handle ([`WorkAbort`]).

use mcp_tasks_protocol::TaskId;
use mcp_tasks_store::TaskRecord;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::{Arc, Weak};
use tokio_util::sync::CancellationToken;

use crate::run::abort::WorkAbort;
use crate::run::quota::Quota;

/// One task's work running here: an entry of a table that holds every running task,
/// so kept to 40 bytes.
struct Running {
    cancel: CancellationToken,
    /// Stops the work (not the recording of how the task ended).
    abort: WorkAbort,
    /// The lease generation this process holds (fencing token); read only with
    /// leases on (`Executor::leased`).
    generation: u64,
}

/// The work running in this process. See the module docs.
pub(crate) struct Executor {
    running: Mutex<HashMap<TaskId, Running>>,
    pub(crate) quota: Quota,
    /// Whether tasks run under leases (their generation then fences their writes).
    leased: bool,
    /// Itself, for the timers of [`Executor::stop_work`] to look back in.
    me: Weak<Executor>,
    /// Set once the engine drains: no new work starts here.
    draining: std::sync::atomic::AtomicBool,
}

impl Executor {
    pub(crate) fn new(quota: Quota, leased: bool) -> Arc<Self> {
        Arc::new_cyclic(|me| Executor {
            running: Mutex::new(HashMap::new()),
            quota,
            leased,
            me: me.clone(),
            draining: std::sync::atomic::AtomicBool::new(false),
        })
    }

    /// Registers the work of a stored `record` as running here, with the lease
    /// generation the record holds (with leases on).
    pub(crate) fn register(
        &self,
        record: &TaskRecord,
        cancel: CancellationToken,
        abort: WorkAbort,
    ) {
        self.running.lock().insert(
            record.id.clone(),
            Running {
                cancel,
                abort,
                generation: record.lease_generation,
            },
        );
    }

    /// Forgets the work of `id` (it ended, or was handed back before it was adopted).
    pub(crate) fn forget(&self, id: &TaskId) {
        self.running.lock().remove(id);
    }

    /// Asks the work to stop, and aborts it after `grace` if it has not.
    pub(crate) fn stop_work(&self, id: &TaskId, grace: std::time::Duration) {
        let abort = match self.running.lock().get(id) {
            Some(r) => {
                r.cancel.cancel();
                r.abort.clone()
            }
            None => return,
        };
        let executor = self.me.clone();
        let id = id.clone();
        tokio::spawn(async move {
            tokio::time::sleep(grace).await;
            let still_running = executor.upgrade().is_some_and(|e| e.runs_here(&id));
            if still_running && !abort.is_aborted() {
                tracing::warn!(task_id = %id, "work ignored cancellation for the grace period; aborting it");
            }
            // Harmless once the work has ended: only the work is under this handle.
            abort.abort();
        });
    }

    /// Aborts local work at once, without a grace period: another replica owns it now.
    pub(crate) fn abort_now(&self, id: &TaskId) {
        if let Some(r) = self.running.lock().remove(id) {
            r.cancel.cancel();
            r.abort.abort();
        }
    }

    /// The lease generation the work of `id` holds here, to fence its writes.
    pub(crate) fn fence(&self, id: &TaskId) -> Option<u64> {
        if !self.leased {
            return None;
        }
        self.running.lock().get(id).map(|r| r.generation)
    }

    /// The tasks this process runs under a lease, with the generation it holds.
    pub(crate) fn held_leases(&self) -> Vec<(TaskId, u64)> {
        if !self.leased {
            return Vec::new();
        }
        self.running
            .lock()
            .iter()
            .map(|(id, r)| (id.clone(), r.generation))
            .collect()
    }

    /// The ids of the tasks whose work runs in this process.
    pub(crate) fn running_ids(&self) -> Vec<TaskId> {
        self.running.lock().keys().cloned().collect()
    }

    /// Whether the work of task `id` runs in this process.
    pub(crate) fn runs_here(&self, id: &TaskId) -> bool {
        self.running.lock().contains_key(id)
    }

    /// From now on no new work starts here (the engine drains).
    pub(crate) fn start_draining(&self) {
        self.draining
            .store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// Whether the engine drains (new work is refused, nothing is taken over).
    pub(crate) fn is_draining(&self) -> bool {
        self.draining.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// How many tasks run in this process.
    pub(crate) fn count(&self) -> usize {
        self.running.lock().len()
    }
}

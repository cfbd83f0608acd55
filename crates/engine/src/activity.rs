//! [`Activity`]: counters of the engine's background work (sweeps, heartbeats, polls of
//! external jobs, cancels sent to them), published on a `watch` channel.
//!
//! They exist so that code watching the engine (tests first, and a metrics exporter)
//! can wait for "the next lease renewal" or "the sweep after this deletion" as a signal,
//! instead of sleeping for a guessed time and hoping the background work ran.

use tokio::sync::watch;

/// How many times each kind of background work has finished since the engine started.
/// Read it with [`crate::Engine::activity`]; every field only grows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Activity {
    /// Rounds of the expiry sweeper finished (each deletes every expired task it finds).
    pub sweeps: u64,
    /// Rounds of the lease keeper finished (each writes this process's one heartbeat,
    /// which keeps every lease held here; with leases only). The name stays from when
    /// each lease was renewed on its own.
    pub lease_renewal_rounds: u64,
    /// Rounds of the lease rescuer finished (each takes over the tasks whose runner is
    /// no longer alive, or whose lease was released; with leases only).
    pub rescue_rounds: u64,
    /// Rounds of the change bridge's periodic re-read finished (only on stores other
    /// processes write: the in-memory store's feed sees every write).
    pub reread_rounds: u64,
    /// Running tasks re-read by those rounds, to catch changes no event announced:
    /// on a store with a change board (SQLite) only those whose mark moved (another
    /// process may have changed them); on others, every running task each round.
    pub rereads: u64,
    /// Running tasks those rounds found unchanged on the store's change board (SQLite's
    /// `<db>-changes`): looked at in memory, at no store work.
    pub reread_skips: u64,
    /// Change-feed events skipped because they announced a version this engine had
    /// seen already (its own writes, on PostgreSQL): no re-read.
    pub feed_skips: u64,
    /// Tasks re-read because the change feed announced a version this engine had not
    /// seen (another replica's write; on PostgreSQL), or because the feed lost events.
    /// A task named several times in one batch counts once.
    pub feed_rereads: u64,
    /// Batches those re-reads went out in: the events that piled up while the last
    /// batch was read go together (concurrent reads, one statement on PostgreSQL), so
    /// under a busy feed this grows much more slowly than `feed_rereads`.
    pub feed_batches: u64,
    /// Times the change feed lost events because this engine fell behind it; each is
    /// answered by a re-read of every task running here.
    pub feed_missed: u64,
    /// Polls of external jobs answered (or failed) by their system.
    pub polls: u64,
    /// Cancels of external jobs requested, counted when the request is decided (before
    /// it is sent, so that a test can know how many will be sent).
    pub job_cancels_requested: u64,
    /// Cancels of external jobs that finished (answered, failed or timed out).
    pub job_cancels_done: u64,
    /// Tasks refused because a quota was full.
    pub quota_refusals: u64,
    /// Tasks taken over from a process that is no longer alive, or that handed them
    /// back (re-run or failed here).
    pub lease_takeovers: u64,
    /// Tasks this process stopped because it could not write its heartbeat for a whole
    /// alive window (paused, partitioned, overloaded: another process may have taken
    /// them); the work here is stopped and its outcome not recorded.
    pub lease_losses: u64,
    /// Steps of running work recorded in the journal.
    pub steps_recorded: u64,
    /// Times a task's work started again (takeover, hand-over, retry), as its next
    /// attempt.
    pub reruns: u64,
    /// Retries scheduled after work asked for one (see `TaskContext::retry`).
    pub retries_scheduled: u64,
    /// Questions answered from the task's record because an earlier attempt asked
    /// them and they were answered (not asked again).
    pub answers_replayed: u64,
    /// Questions whose deadline passed unanswered (their outcome applied).
    pub deadlines_passed: u64,
}

/// The sending side, kept by the engine's core.
#[derive(Debug)]
pub(crate) struct ActivityCounters {
    tx: watch::Sender<Activity>,
}

impl Default for ActivityCounters {
    fn default() -> Self {
        ActivityCounters {
            tx: watch::Sender::new(Activity::default()),
        }
    }
}

impl ActivityCounters {
    /// A receiver that sees every later change.
    pub(crate) fn subscribe(&self) -> watch::Receiver<Activity> {
        self.tx.subscribe()
    }

    /// Counts one unit of work (`bump` picks the counter).
    pub(crate) fn count(&self, bump: impl FnOnce(&mut Activity)) {
        self.tx.send_modify(bump);
    }
}

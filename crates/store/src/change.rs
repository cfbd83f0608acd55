//! The change feed: a push of "this task changed" from the store, so that a waiter (a
//! held `tasks/result`, a status notification, another replica's `tasks/get`) wakes at
//! once instead of at its next poll.
//!
//! The store stays the source of truth. An event carries only an id; the subscriber
//! re-reads the record. A lost event costs latency, never correctness, and whenever
//! events may have been lost the feed says so with [`Change::Missed`].

use mcp_tasks_protocol::TaskId;
use tokio::sync::broadcast;

/// How many events a subscriber may fall behind before older ones are dropped and it
/// receives [`Change::Missed`] instead.
pub const CHANGE_FEED_CAPACITY: usize = 1024;

/// One event of a [`ChangeFeed`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Change {
    /// This task was created, changed what a client sees (status, status message,
    /// outcome) or was deleted. Lease renewals and takeovers are not reported: no client
    /// can see them.
    Task(TaskId),
    /// As [`Change::Task`], with the version the change committed (PostgreSQL): a
    /// subscriber that already saw this version of the task (it made the change itself,
    /// or read it since) can skip the re-read.
    TaskVersion(TaskId, u64),
    /// Events may have been lost (the database connection was re-established, or this
    /// subscriber fell more than [`CHANGE_FEED_CAPACITY`] events behind): re-read
    /// everything you are waiting on.
    Missed,
}

impl Change {
    /// The task the event is about (`None` for [`Change::Missed`]).
    pub fn task_id(&self) -> Option<&TaskId> {
        match self {
            Change::Task(id) | Change::TaskVersion(id, _) => Some(id),
            Change::Missed => None,
        }
    }
}

/// A subscription to a store's changes, from [`crate::TaskStore::subscribe_changes`].
/// Each subscriber receives every event from the moment it subscribed.
#[derive(Debug)]
pub struct ChangeFeed {
    rx: broadcast::Receiver<Change>,
}

impl ChangeFeed {
    /// Waits for the next event. `None` once the store is gone (all its handles
    /// dropped), after which no more events come.
    pub async fn recv(&mut self) -> Option<Change> {
        match self.rx.recv().await {
            Ok(change) => Some(change),
            Err(broadcast::error::RecvError::Lagged(_)) => Some(Change::Missed),
            Err(broadcast::error::RecvError::Closed) => None,
        }
    }

    /// The next event if one is already waiting, without waiting: `None` when none is
    /// (or the store is gone). A subscriber that drains what has piled up with this
    /// after each [`recv`](Self::recv) can handle the events as one batch (one database
    /// read for many tasks) and so keep up with a busy feed rather than fall behind it.
    pub fn try_recv(&mut self) -> Option<Change> {
        match self.rx.try_recv() {
            Ok(change) => Some(change),
            Err(broadcast::error::TryRecvError::Lagged(_)) => Some(Change::Missed),
            Err(broadcast::error::TryRecvError::Empty | broadcast::error::TryRecvError::Closed) => {
                None
            }
        }
    }
}

/// The sending side shared by a backend: one broadcast channel that every
/// [`ChangeFeed`] subscribes to.
#[derive(Debug, Clone)]
pub(crate) struct ChangeHub {
    tx: broadcast::Sender<Change>,
}

impl Default for ChangeHub {
    fn default() -> Self {
        Self {
            tx: broadcast::channel(CHANGE_FEED_CAPACITY).0,
        }
    }
}

impl ChangeHub {
    /// A new feed that sees every event published from now on.
    pub(crate) fn subscribe(&self) -> ChangeFeed {
        ChangeFeed {
            rx: self.tx.subscribe(),
        }
    }

    /// Tells every current subscriber; nobody listening is not an error.
    pub(crate) fn publish(&self, change: Change) {
        let _ = self.tx.send(change);
    }
}

/// Where a task stands on a store's change board (SQLite's `<db>-changes`, see
/// the `sqlite` module): two counters that every process writing the task moves,
/// read from memory without touching the database. A mark that did not move since
/// the last look means no process committed a change of the task in between; a mark
/// that moved means one may have (tasks share counters), so the task is worth a
/// re-read. See [`crate::TaskStore::change_mark`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChangeMark {
    /// Moves with every write whose tasks are not known up front (a reap of a dead
    /// runner's leases, the failing of orphaned tasks).
    pub epoch: u64,
    /// Moves with every write of a task of the same slot (a hash of its id).
    pub slot: u64,
}

/// Every mark of a store's change board at one moment (see [`ChangeMark`] and
/// [`crate::TaskStore::change_marks`]): a copy, so it can be kept and compared later.
#[derive(Debug, Clone)]
pub struct ChangeMarks {
    epoch: u64,
    slots: Vec<u64>,
}

impl ChangeMarks {
    #[cfg_attr(not(feature = "sqlite"), allow(dead_code))]
    pub(crate) fn new(epoch: u64, slots: Vec<u64>) -> Self {
        Self { epoch, slots }
    }

    /// The task's mark at the moment of the copy.
    pub fn mark(&self, id: &TaskId) -> ChangeMark {
        ChangeMark {
            epoch: self.epoch,
            slot: self
                .slots
                .get(slot_of(id.as_str(), self.slots.len()))
                .copied()
                .unwrap_or(0),
        }
    }
}

/// The slot of a task id among `slots`: FNV-1a over its bytes, so every process (and
/// every version of this crate) agrees on it.
pub(crate) fn slot_of(id: &str, slots: usize) -> usize {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in id.as_bytes() {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    (hash % slots.max(1) as u64) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn try_recv_drains_what_is_waiting_then_says_none() {
        let hub = ChangeHub::default();
        let mut feed = hub.subscribe();
        assert_eq!(feed.try_recv(), None, "nothing published yet");
        let ids: Vec<TaskId> = (0..3).map(|_| TaskId::generate()).collect();
        for (n, id) in ids.iter().enumerate() {
            hub.publish(Change::TaskVersion(id.clone(), n as u64 + 1));
        }
        for (n, id) in ids.iter().enumerate() {
            assert_eq!(
                feed.try_recv(),
                Some(Change::TaskVersion(id.clone(), n as u64 + 1))
            );
        }
        assert_eq!(feed.try_recv(), None, "drained");
    }

    #[test]
    fn try_recv_reports_a_subscriber_that_fell_behind_as_missed() {
        let hub = ChangeHub::default();
        let mut feed = hub.subscribe();
        for _ in 0..CHANGE_FEED_CAPACITY + 5 {
            hub.publish(Change::Task(TaskId::generate()));
        }
        assert_eq!(feed.try_recv(), Some(Change::Missed));
        // After the loss, the events still held come one by one, then none.
        let mut after = 0;
        while let Some(change) = feed.try_recv() {
            assert!(matches!(change, Change::Task(_)));
            after += 1;
        }
        assert_eq!(after, CHANGE_FEED_CAPACITY);
    }

    #[test]
    fn try_recv_says_none_once_the_store_is_gone() {
        let hub = ChangeHub::default();
        let mut feed = hub.subscribe();
        drop(hub);
        assert_eq!(feed.try_recv(), None);
    }
}

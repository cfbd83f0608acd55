//! [`ChangeBridge`]: several engines on one database (PostgreSQL replicas, processes
//! sharing an SQLite file) see each other's changes through it. It follows the store's
//! change feed (when the store has one) and turns each change into a re-read of the
//! task, which becomes this engine's own event (see `run::replicas`); a lost change
//! re-reads everything running here. On a store other processes write and whose feed
//! does not see every write (SQLite has no feed; a PostgreSQL store whose feed could
//! not start) it also looks at the work running here every `reread_interval`, to catch
//! what no event announced: where the store keeps a change board
//! ([`TaskStore::change_marks`], SQLite), a round compares each running task's mark
//! with the one it saw last (or, for a task that started since, with the board as the
//! last round copied it), in memory, and re-reads only the tasks whose mark moved;
//! without a board it re-reads every running task. A PostgreSQL store's LISTEN/NOTIFY feed announces every change
//! (and says `Missed` when it may have lost some), so it needs no round at all. Its
//! signals: [`Activity::reread_rounds`](crate::Activity::reread_rounds),
//! [`Activity::rereads`](crate::Activity::rereads) and
//! [`Activity::reread_skips`](crate::Activity::reread_skips).

use mcp_tasks_protocol::TaskId;
use mcp_tasks_store::{Change, ChangeFeed, ChangeMark, ChangeMarks, TaskStore};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::{Arc, Weak};
use std::time::Duration;

use crate::config::EngineConfig;
use crate::run::replicas;
use crate::run::Components;

/// At most this many feed events make one batch of re-reads in
/// [`ChangeBridge::follow`]; the rest wait for the next batch.
const FOLLOW_BATCH: usize = 1024;

/// The change bridge's settings.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ChangeBridge {
    /// Time between looks at the work running here; `None` when no other process
    /// writes the store (the in-memory store's feed sees every write, and re-reading a
    /// million running tasks every heartbeat cost a core: docs/benchmarks.md) or when
    /// the store's feed sees every process's writes (PostgreSQL's LISTEN/NOTIFY).
    pub(crate) reread_every: Option<Duration>,
}

impl ChangeBridge {
    /// `has_feed`: whether the store's change feed was subscribed.
    pub(crate) fn from_config(
        config: &EngineConfig,
        store: &dyn TaskStore,
        has_feed: bool,
    ) -> Self {
        let announced = has_feed && store.supports_notify();
        ChangeBridge {
            reread_every: (store.shared_by_processes() && !announced)
                .then_some(config.reread_interval),
        }
    }

    /// Follows the store's change feed while the engine lives.
    pub(crate) async fn follow(components: Weak<Components>, mut feed: ChangeFeed) {
        while let Some(first) = feed.recv().await {
            let Some(c) = components.upgrade() else {
                return;
            };
            // What piled up while the last batch was read is handled as one batch: its
            // re-reads go out together (one statement on PostgreSQL), so a busy feed
            // (another replica creating thousands of tasks a second) is drained as
            // fast as it fills instead of one round trip per task, which would fall
            // behind, lose events and re-read everything running here.
            let mut ids = Vec::new();
            let mut missed = false;
            let mut taken = 0;
            let mut next = Some(first);
            while let Some(change) = next {
                match change {
                    Change::Task(id) => ids.push(id),
                    Change::TaskVersion(id, version) if c.core.has_seen(&id, version) => {
                        c.core.activity.count(|a| a.feed_skips += 1);
                    }
                    Change::TaskVersion(id, _) => ids.push(id),
                    Change::Missed => missed = true,
                    _ => {}
                }
                taken += 1;
                next = if taken < FOLLOW_BATCH {
                    feed.try_recv()
                } else {
                    None
                };
            }
            if missed {
                ids.extend(c.executor.running_ids());
            }
            let reread = replicas::refresh_many(&c.core, &c.executor, &c.questions, &ids).await;
            if reread > 0 || missed {
                c.core.activity.count(|a| {
                    a.feed_rereads += reread as u64;
                    a.feed_batches += u64::from(reread > 0);
                    a.feed_missed += u64::from(missed);
                });
            }
        }
    }

    /// Looks at the work running here every `every` while the engine lives: re-reads
    /// the tasks whose change mark moved since the last round, or every running task
    /// on a store without marks.
    pub(crate) async fn reread(components: Weak<Components>, every: Duration) {
        let looked: Arc<Mutex<Looked>> = Arc::default();
        super::every(every, components, |c| {
            let looked = Arc::clone(&looked);
            async move {
                // The copy of the board comes before the list of running work: a task
                // that starts after it is compared with it next round.
                let marks = c.core.store.change_marks();
                let running = c.executor.running_ids();
                let total = running.len();
                let moved = looked.lock().moved(marks, running);
                replicas::refresh_many(&c.core, &c.executor, &c.questions, &moved).await;
                c.core.activity.count(|a| {
                    a.rereads += moved.len() as u64;
                    a.reread_skips += (total - moved.len()) as u64;
                    a.reread_rounds += 1;
                });
            }
        })
        .await;
    }
}

/// What the last round saw: the board's marks (copied before it listed the running
/// work) and the running tasks' marks.
#[derive(Debug, Default)]
struct Looked {
    board: Option<ChangeMarks>,
    running: HashMap<TaskId, ChangeMark>,
}

impl Looked {
    /// Of the tasks `running` here, those another process may have changed since the
    /// last round, given the board's `marks` now (taken before `running` was listed):
    /// a task whose mark moved since the last round saw it; a task that was not
    /// running then, whose mark moved since the last round's copy of the board (it
    /// started after that copy, so any change of it since moved its mark); every task
    /// when the store has no board, or in the first round.
    ///
    /// Each mark is taken before its task is re-read, so a change committed after the
    /// re-read moves it again and the next round sees it.
    fn moved(&mut self, marks: Option<ChangeMarks>, running: Vec<TaskId>) -> Vec<TaskId> {
        let Some(marks) = marks else {
            *self = Looked::default();
            return running;
        };
        let mut now = HashMap::with_capacity(running.len());
        let mut moved = Vec::new();
        for id in running {
            let mark = marks.mark(&id);
            let before = match self.running.get(&id) {
                Some(seen) => Some(*seen),
                None => self.board.as_ref().map(|board| board.mark(&id)),
            };
            if before != Some(mark) {
                moved.push(id.clone());
            }
            now.insert(id, mark);
        }
        self.running = now;
        self.board = Some(marks);
        moved
    }
}

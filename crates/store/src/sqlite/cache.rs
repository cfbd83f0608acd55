//! Reads of a task that skip the database when nothing changed, correct across every
//! process on the file, and the moves of the change board around every write of a
//! task that make them so (see `board.rs`).
//!
//! A cached read takes the task's stamp first. When a record is cached under that same
//! stamp it is served from memory; otherwise the row is read and cached under the
//! stamp taken *before* the read. So a served record is never older than what was
//! committed when the read began: a write that committed after a record was cached
//! moved the stamp before its commit (and a write that had moved it but not yet
//! committed moves it again after). A task that does not exist is never cached (its
//! creation needs no move), and a cached record past its expiry reads as none, as the
//! row would.
//!
//! Each write runs on a task of its own ([`Changes::write`]): a caller that stops
//! waiting does not stop the statement (SQLite finishes it on its worker thread), and
//! the move after the commit must come after it, whenever that is.
//!
//! The records are kept in a [`ShardedCache`] (bounded; a record is cloned out), in the
//! shard of the task's slot.

use super::board::{slot_of, ChangeBoard, Stamp};
use crate::error::StoreError;
use crate::record::TaskRecord;
use crate::sql::cache::ShardedCache;
use crate::sql::Touches;
use chrono::{DateTime, Utc};
use mcp_tasks_protocol::TaskId;
use std::future::Future;
use std::sync::Arc;

/// The board and the records cached under it. Cloned with the store.
#[derive(Debug, Clone, Default)]
pub(crate) struct Changes {
    inner: Option<Arc<Inner>>,
}

#[derive(Debug)]
struct Inner {
    board: ChangeBoard,
    /// Each record with the stamp its task had when it was read.
    reads: ShardedCache<(Stamp, TaskRecord)>,
}

impl Changes {
    /// Reads and writes through `board`; [`Changes::default`] has none (every read
    /// goes to the database, no write moves anything).
    pub(crate) fn new(board: ChangeBoard) -> Self {
        Self {
            inner: Some(Arc::new(Inner {
                board,
                reads: ShardedCache::default(),
            })),
        }
    }

    /// The task's stamp, from memory; `None` without a board.
    pub(crate) fn mark(&self, id: &TaskId) -> Option<Stamp> {
        let inner = self.inner.as_ref()?;
        Some(inner.board.stamp(slot_of(id.as_str())))
    }

    /// Every counter of the board now; `None` without a board.
    pub(crate) fn marks(&self) -> Option<crate::change::ChangeMarks> {
        Some(self.inner.as_ref()?.board.snapshot())
    }

    /// The visible record of `id` at `now`: cached when its stamp did not move,
    /// otherwise read by `read` (and cached).
    pub(crate) async fn get<F>(
        &self,
        id: &TaskId,
        now: DateTime<Utc>,
        read: F,
    ) -> Result<Option<TaskRecord>, StoreError>
    where
        F: Future<Output = Result<Option<TaskRecord>, StoreError>>,
    {
        let Some(inner) = &self.inner else {
            return read.await;
        };
        let slot = slot_of(id.as_str());
        let stamp = inner.board.stamp(slot);
        if let Some((_, record)) = inner.reads.get_if(id, Some(slot), |(at, _)| *at == stamp) {
            return Ok(visible(&record, now).then_some(record));
        }
        let record = read.await?;
        let kept = record.clone().map(|record| (stamp, record));
        inner.reads.keep(id, Some(slot), kept);
        Ok(record)
    }

    /// Runs `write` on a task of its own, between two moves of what it `touches`; the
    /// move after comes when the write ended, even when the caller stopped waiting.
    pub(crate) async fn write<T, Fut>(&self, touches: Touches, write: Fut) -> Result<T, StoreError>
    where
        Fut: Future<Output = Result<T, StoreError>> + Send + 'static,
        T: Send + 'static,
    {
        let Some(inner) = &self.inner else {
            return write.await;
        };
        inner.moves(&touches);
        let inner = Arc::clone(inner);
        tokio::spawn(async move {
            let out = write.await;
            inner.moves(&touches);
            out
        })
        .await
        .map_err(|e| StoreError::Backend(format!("a write to SQLite stopped: {e}").into()))?
    }

    /// Moves the slots of tasks a write changed, after it committed (a deletion of
    /// expired tasks: a cached read already sees them as gone, and the move tells
    /// whoever watches their marks; a takeover of expired leases, before its commit
    /// and after).
    pub(crate) fn moved<'a>(&self, ids: impl IntoIterator<Item = &'a TaskId>) {
        if let Some(inner) = &self.inner {
            for id in ids {
                inner.board.bump(slot_of(id.as_str()));
            }
        }
    }
}

impl Inner {
    fn moves(&self, touches: &Touches) {
        match touches {
            Touches::Tasks(ids) => {
                for id in ids {
                    self.board.bump(slot_of(id.as_str()));
                }
            }
            Touches::Unknown => self.board.bump_epoch(),
        }
    }
}

/// Whether a stored record is visible at `now`, as the row's `expires_at > now` says
/// (both in whole milliseconds, as SQLite stores them).
fn visible(record: &TaskRecord, now: DateTime<Utc>) -> bool {
    record
        .expires_at
        .is_none_or(|at| at.timestamp_millis() > now.timestamp_millis())
}

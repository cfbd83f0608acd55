//! [`ShardedCache`]: the records a SQL backend read last, by id, in shards behind
//! locks of their own and bounded. How a cached record is known to still be the row
//! is the backend's: SQLite compares the stamp of its change board, PostgreSQL asks
//! the row for its version.

use mcp_tasks_protocol::TaskId;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::hash::{BuildHasher, RandomState};
use std::sync::Arc;

/// The most records cached by one store.
pub(crate) const CAPACITY: usize = 1 << 16;

/// Shards of the cache, each behind its own lock.
pub(crate) const SHARDS: usize = 32;

/// Values (a record, and what the backend checks it by) cached by task id; at most
/// [`CAPACITY`], an arbitrary one leaving when its shard is full. Values are cloned
/// out, so a cached read costs a hash lookup and a clone. Cloned with the store.
#[derive(Debug, Clone)]
pub(crate) struct ShardedCache<V> {
    shards: Arc<[Mutex<HashMap<TaskId, V>>]>,
    hasher: RandomState,
}

impl<V> Default for ShardedCache<V> {
    fn default() -> Self {
        Self {
            shards: (0..SHARDS).map(|_| Mutex::default()).collect(),
            hasher: RandomState::new(),
        }
    }
}

impl<V: Clone> ShardedCache<V> {
    /// The shard of `id`: `spread` when the caller has a number that spreads ids
    /// already (SQLite's board slot), otherwise by hash.
    fn shard(&self, id: &TaskId, spread: Option<usize>) -> &Mutex<HashMap<TaskId, V>> {
        let spread = spread.unwrap_or_else(|| self.hasher.hash_one(id) as usize);
        &self.shards[spread % SHARDS]
    }

    /// The value cached for `id` when `fresh` says it still holds; nothing is cloned
    /// otherwise.
    pub(crate) fn get_if(
        &self,
        id: &TaskId,
        spread: Option<usize>,
        fresh: impl FnOnce(&V) -> bool,
    ) -> Option<V> {
        let cached = self.shard(id, spread).lock();
        cached.get(id).filter(|value| fresh(value)).cloned()
    }

    /// Caches `value` for `id` after a read of the row (`None`: the row is not
    /// visible, and nothing is cached for it).
    pub(crate) fn keep(&self, id: &TaskId, spread: Option<usize>, value: Option<V>) {
        let mut cached = self.shard(id, spread).lock();
        match value {
            Some(value) => {
                if cached.len() >= CAPACITY / SHARDS && !cached.contains_key(id) {
                    let evicted = cached.keys().next().cloned();
                    if let Some(evicted) = evicted {
                        cached.remove(&evicted);
                    }
                }
                cached.insert(id.clone(), value);
            }
            None => {
                cached.remove(id);
            }
        }
    }
}

//! [`OrderedSet`]: the memory store's sorted indexes, packed for keys that mostly
//! arrive in order.
//!
//! Why not a `BTreeSet`: the store's index keys (creation or expiry time, then id) are
//! appended nearly always at the end, and a B-tree that grows at its right edge splits
//! every full node in two, leaving each node behind it about half full: a 32-byte key
//! then costs about 60 bytes, in each of the four indexes of every task. Here the keys
//! live in sorted chunks of at most [`CHUNK`] keys, and a key appended at the end goes
//! into the last chunk until it is full, so the chunks behind it stay full (about 33
//! bytes a key). A key inserted elsewhere goes into its chunk (a full one splits in
//! two); a removal shifts at most a chunk, and a chunk that thins out merges with a
//! neighbour or gives back its spare room.

use std::collections::BTreeMap;
use std::ops::Bound;

/// Most keys in one chunk: enough that a chunk's own cost (its entry in the map of
/// chunks) is a byte or two per key, few enough that shifting one is cheap.
const CHUNK: usize = 64;

/// A sorted set of distinct keys, in chunks. See the module docs.
#[derive(Debug, Clone)]
pub(super) struct OrderedSet<K> {
    /// The chunks, each sorted and non-empty, by a lower bound of its keys: every key
    /// of a chunk is at least its bound and below the next chunk's bound.
    chunks: BTreeMap<K, Vec<K>>,
}

impl<K> Default for OrderedSet<K> {
    fn default() -> Self {
        OrderedSet {
            chunks: BTreeMap::new(),
        }
    }
}

impl<K: Ord + Clone> OrderedSet<K> {
    /// Whether the set holds no key.
    pub(super) fn is_empty(&self) -> bool {
        self.chunks.is_empty()
    }

    /// The bound of the chunk where `key` belongs: the last bound at or below it, or
    /// the first chunk's when `key` is below every bound.
    fn chunk_of(&self, key: &K) -> Option<K> {
        self.chunks
            .range(..=key)
            .next_back()
            .or_else(|| self.chunks.iter().next())
            .map(|(bound, _)| bound.clone())
    }

    /// Adds `key`; returns whether it was absent.
    pub(super) fn insert(&mut self, key: K) -> bool {
        let Some(bound) = self.chunk_of(&key) else {
            self.chunks.insert(key.clone(), vec![key]);
            return true;
        };
        let Some(chunk) = self.chunks.get_mut(&bound) else {
            return false; // the bound was just read from the map
        };
        let at = match chunk.binary_search(&key) {
            Ok(_) => return false,
            Err(at) => at,
        };
        if at == chunk.len() && chunk.len() == CHUNK {
            // Appending past a full chunk: a new chunk, and this one stays full. (At
            // the end of the set or not: the key is below the next chunk's bound.)
            self.chunks.insert(key.clone(), vec![key]);
            return true;
        }
        // Below the bound only at the front of the first chunk: a key below every
        // bound, whose chunk's bound then moves down to it.
        let below = at == 0 && key < bound;
        chunk.insert(at, key);
        let upper = (chunk.len() > CHUNK).then(|| chunk.split_off(chunk.len() / 2));
        if let Some(upper) = upper {
            self.chunks.insert(upper[0].clone(), upper);
        }
        if below {
            if let Some(chunk) = self.chunks.remove(&bound) {
                self.chunks.insert(chunk[0].clone(), chunk);
            }
        }
        true
    }

    /// Removes `key`; returns whether it was there.
    pub(super) fn remove(&mut self, key: &K) -> bool {
        let Some(bound) = self
            .chunks
            .range(..=key)
            .next_back()
            .map(|(b, _)| b.clone())
        else {
            return false;
        };
        let Some(chunk) = self.chunks.get_mut(&bound) else {
            return false;
        };
        let Ok(at) = chunk.binary_search(key) else {
            return false;
        };
        chunk.remove(at);
        if chunk.is_empty() {
            self.chunks.remove(&bound);
        } else if chunk.len() < CHUNK / 4 {
            self.thin_out(bound);
        }
        true
    }

    /// A chunk (`bound`) that thinned out after removals: merged into its neighbour
    /// when both fit in three quarters of a chunk, otherwise shrunk to what it holds
    /// (its room once it was full would stay).
    fn thin_out(&mut self, bound: K) {
        let len = self.chunks.get(&bound).map_or(0, Vec::len);
        let next = self
            .chunks
            .range((Bound::Excluded(&bound), Bound::Unbounded))
            .next()
            .map(|(b, c)| (b.clone(), c.len()));
        if let Some((next, next_len)) = next {
            if len + next_len <= CHUNK * 3 / 4 {
                if let Some(mut moved) = self.chunks.remove(&next) {
                    if let Some(chunk) = self.chunks.get_mut(&bound) {
                        chunk.append(&mut moved);
                    }
                }
                return;
            }
        }
        let prev = self
            .chunks
            .range(..&bound)
            .next_back()
            .map(|(b, c)| (b.clone(), c.len()));
        if let Some((prev, prev_len)) = prev {
            if len + prev_len <= CHUNK * 3 / 4 {
                if let Some(mut moved) = self.chunks.remove(&bound) {
                    if let Some(chunk) = self.chunks.get_mut(&prev) {
                        chunk.append(&mut moved);
                    }
                }
                return;
            }
        }
        if let Some(chunk) = self.chunks.get_mut(&bound) {
            if chunk.capacity() > 2 * chunk.len() {
                chunk.shrink_to(chunk.len() * 2);
            }
        }
    }

    /// Every key, in order.
    pub(super) fn iter(&self) -> impl DoubleEndedIterator<Item = &K> {
        self.chunks.values().flatten()
    }

    /// The keys between `lower` and `upper`, in order (either way).
    pub(super) fn range<'a>(
        &'a self,
        lower: Bound<&'a K>,
        upper: Bound<&'a K>,
    ) -> impl DoubleEndedIterator<Item = &'a K> + 'a {
        let empty = match (lower, upper) {
            (Bound::Included(l), Bound::Included(u)) => l > u,
            (Bound::Included(l) | Bound::Excluded(l), Bound::Excluded(u))
            | (Bound::Excluded(l), Bound::Included(u)) => l >= u,
            _ => false,
        };
        // The chunks that may hold such keys: from the one where `lower` belongs to
        // the last whose bound is within `upper`.
        let first = match lower {
            Bound::Included(l) | Bound::Excluded(l) => {
                self.chunks.range(..=l).next_back().map(|(bound, _)| bound)
            }
            Bound::Unbounded => None,
        };
        let from = first.map_or(Bound::Unbounded, Bound::Included);
        let chunks = match (empty, from, upper) {
            (true, _, _) => None,
            // The first chunk's bound is at or below `lower`, so the map's own rule
            // (no range that starts after it ends) holds unless `upper` is below it.
            (false, Bound::Included(f), Bound::Included(u)) if f > u => None,
            (false, Bound::Included(f), Bound::Excluded(u)) if f >= u => None,
            (false, from, upper) => Some(self.chunks.range((from, upper))),
        };
        chunks
            .into_iter()
            .flatten()
            .flat_map(move |(_, chunk)| within(chunk, lower, upper).iter())
    }
}

/// The part of a sorted `chunk` between `lower` and `upper`.
fn within<'a, K: Ord>(chunk: &'a [K], lower: Bound<&K>, upper: Bound<&K>) -> &'a [K] {
    let start = match lower {
        Bound::Included(l) => chunk.partition_point(|k| k < l),
        Bound::Excluded(l) => chunk.partition_point(|k| k <= l),
        Bound::Unbounded => 0,
    };
    let end = match upper {
        Bound::Included(u) => chunk.partition_point(|k| k <= u),
        Bound::Excluded(u) => chunk.partition_point(|k| k < u),
        Bound::Unbounded => chunk.len(),
    };
    chunk.get(start..end.max(start)).unwrap_or(&[])
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    /// A small deterministic generator (no dependency for a test's keys).
    struct Lcg(u64);

    impl Lcg {
        fn next(&mut self, below: u64) -> u64 {
            self.0 = self
                .0
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (self.0 >> 33) % below
        }
    }

    fn bounds(l: u64, u: u64, kind: u64) -> (Bound<u64>, Bound<u64>) {
        let lower = match kind % 3 {
            0 => Bound::Included(l),
            1 => Bound::Excluded(l),
            _ => Bound::Unbounded,
        };
        let upper = match (kind / 3) % 3 {
            0 => Bound::Included(u),
            1 => Bound::Excluded(u),
            _ => Bound::Unbounded,
        };
        (lower, upper)
    }

    fn as_ref(b: &Bound<u64>) -> Bound<&u64> {
        match b {
            Bound::Included(x) => Bound::Included(x),
            Bound::Excluded(x) => Bound::Excluded(x),
            Bound::Unbounded => Bound::Unbounded,
        }
    }

    /// Checks the set against a `BTreeSet` given the same operations: every range,
    /// both ways, and the chunks' own rules.
    fn same(set: &OrderedSet<u64>, model: &BTreeSet<u64>, rng: &mut Lcg) {
        assert_eq!(
            set.iter().copied().collect::<Vec<_>>(),
            model.iter().copied().collect::<Vec<_>>()
        );
        assert_eq!(set.is_empty(), model.is_empty());
        let mut last: Option<u64> = None;
        for (bound, chunk) in &set.chunks {
            assert!(!chunk.is_empty() && chunk.len() <= CHUNK);
            assert!(chunk.windows(2).all(|w| w[0] < w[1]));
            assert!(chunk[0] >= *bound, "a chunk holds a key below its bound");
            assert!(last.is_none_or(|l| l < *bound), "chunks overlap");
            last = chunk.last().copied();
        }
        for _ in 0..20 {
            let (l, u) = (rng.next(1_200), rng.next(1_200));
            let (lower, upper) = bounds(l, u, rng.next(9));
            let valid = match (lower, upper) {
                (Bound::Included(l), Bound::Included(u)) => l <= u,
                (Bound::Included(l) | Bound::Excluded(l), Bound::Excluded(u))
                | (Bound::Excluded(l), Bound::Included(u)) => l < u,
                _ => true,
            };
            let got: Vec<u64> = set.range(as_ref(&lower), as_ref(&upper)).copied().collect();
            let back: Vec<u64> = set
                .range(as_ref(&lower), as_ref(&upper))
                .rev()
                .copied()
                .collect();
            let want: Vec<u64> = if valid {
                model.range((lower, upper)).copied().collect()
            } else {
                Vec::new()
            };
            assert_eq!(got, want, "range {lower:?}..{upper:?}");
            assert_eq!(back, want.iter().rev().copied().collect::<Vec<_>>());
        }
    }

    #[test]
    fn keeps_the_order_and_ranges_of_a_btree_set_whatever_the_operations() {
        let mut rng = Lcg(7);
        for round in 0..6 {
            let mut set = OrderedSet::default();
            let mut model = BTreeSet::new();
            for step in 0..3_000u64 {
                // Mostly appends, as the store's keys come; some inserts anywhere and
                // removals, more of them in later rounds.
                let key = if rng.next(4) == 0 {
                    rng.next(1_000)
                } else {
                    step / 3 + 1_000
                };
                if rng.next(10) < round + 2 {
                    let victim = if rng.next(2) == 0 {
                        model.iter().next().copied().unwrap_or(key)
                    } else {
                        key
                    };
                    assert_eq!(set.remove(&victim), model.remove(&victim));
                } else {
                    assert_eq!(set.insert(key), model.insert(key));
                }
                if step % 250 == 0 {
                    same(&set, &model, &mut rng);
                }
            }
            same(&set, &model, &mut rng);
            for key in model.clone() {
                assert!(set.remove(&key));
            }
            assert!(set.is_empty());
        }
    }

    /// Keys appended in order leave full chunks behind: a key costs about its own
    /// size, not the two it costs in a B-tree's half-full nodes.
    #[test]
    fn keys_appended_in_order_fill_their_chunks() {
        let mut set = OrderedSet::default();
        for key in 0..10_000u64 {
            set.insert(key);
        }
        let room: usize = set.chunks.values().map(Vec::capacity).sum();
        assert!(room <= 10_000 + CHUNK, "{room} slots for 10,000 keys");
        // Removed from the front (as expiry does), the chunks go whole.
        for key in 0..9_990u64 {
            assert!(set.remove(&key));
        }
        assert_eq!(set.iter().count(), 10);
        assert!(set.chunks.len() <= 2);
    }
}

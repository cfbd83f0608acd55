//! Limits on how many tasks may be active (not yet finished) at once, per principal
//! and in total. A slot is taken before a task is stored and given back when its work
//! stops, so a refused create leaves nothing behind.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Counts of active tasks.
#[derive(Debug, Default)]
struct Counts {
    by_principal: HashMap<String, usize>,
    total: usize,
}

/// The quota keeper. Cheap to clone.
#[derive(Debug, Clone)]
pub(crate) struct Quota {
    per_principal: usize,
    total: usize,
    counts: Arc<Mutex<Counts>>,
}

/// A held slot; dropping it gives the slot back.
#[derive(Debug)]
pub(crate) struct Slot {
    owner: String,
    counts: Arc<Mutex<Counts>>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut c = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        c.total = c.total.saturating_sub(1);
        if let Some(n) = c.by_principal.get_mut(&self.owner) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                c.by_principal.remove(&self.owner);
            }
        }
    }
}

impl Quota {
    pub(crate) fn new(per_principal: usize, total: usize) -> Self {
        Quota {
            per_principal,
            total,
            counts: Arc::default(),
        }
    }

    /// Takes a slot for `owner`, or says which limit is reached.
    pub(crate) fn acquire(&self, owner: &str) -> Result<Slot, String> {
        let mut c = self.counts.lock().unwrap_or_else(|p| p.into_inner());
        if c.total >= self.total {
            return Err(format!(
                "the server runs its maximum of {} active tasks (max_active_tasks); wait for some to finish or cancel some",
                self.total
            ));
        }
        let mine = c.by_principal.get(owner).copied().unwrap_or(0);
        if mine >= self.per_principal {
            return Err(format!(
                "you already have {mine} active tasks, the limit per principal (max_tasks_per_principal is {}); wait for some to finish or cancel some",
                self.per_principal
            ));
        }
        c.total += 1;
        *c.by_principal.entry(owner.to_string()).or_insert(0) += 1;
        Ok(Slot {
            owner: owner.to_string(),
            counts: Arc::clone(&self.counts),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_limited_and_given_back() {
        let q = Quota::new(2, 3);
        let a1 = q.acquire("a").unwrap();
        let _a2 = q.acquire("a").unwrap();
        assert!(q.acquire("a").unwrap_err().contains("limit per principal"));
        let _b1 = q.acquire("b").unwrap();
        assert!(q.acquire("c").unwrap_err().contains("maximum of 3"));
        drop(a1);
        assert!(q.acquire("c").is_ok());
    }
}

//! Limits on how many tasks may be active (not yet finished) at once, per requestor
//! and in total. A slot is taken before a task is stored and given back when its work
//! stops, so a refused create leaves nothing behind.
//!
//! Who a requestor is depends on authentication. With it, the principal (the verified
//! subject): one person's tasks count together whatever session created them. Without
//! it every client of the server shares one anonymous identity, so counting by principal
//! would make the 101st task of all clients together fail; each MCP session (an HTTP
//! session, a stdio process) is then its own requestor. A stateless request without
//! authentication belongs to no session and counts only toward the server-wide cap.

use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;

use crate::caller::Caller;

/// Counts of active tasks.
#[derive(Debug, Default)]
struct Counts {
    /// Keyed by a shared string that each of the requestor's slots holds too: a running
    /// task pays a pointer for its requestor rather than a copy of the name.
    by_requestor: HashMap<Arc<str>, usize>,
    total: usize,
}

/// The quota keeper. Cheap to clone.
#[derive(Debug, Clone)]
pub(crate) struct Quota {
    per_principal: usize,
    per_session: usize,
    total: usize,
    counts: Arc<Mutex<Counts>>,
}

/// A held slot; dropping it gives the slot back.
#[derive(Debug)]
pub(crate) struct Slot {
    requestor: Option<Arc<str>>,
    counts: Arc<Mutex<Counts>>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut c = self.counts.lock();
        c.total = c.total.saturating_sub(1);
        let Some(requestor) = &self.requestor else {
            return;
        };
        if let Some(n) = c.by_requestor.get_mut(&**requestor) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                c.by_requestor.remove(&**requestor);
            }
        }
    }
}

/// Which per-requestor limit applies to a caller, and under which key it counts.
enum Requestor<'a> {
    Principal(&'a str),
    Session(&'a str),
    /// A stateless request without authentication: only the server-wide cap applies.
    Nobody,
}

impl<'a> Requestor<'a> {
    fn of(caller: &'a Caller) -> Self {
        if caller.authenticated {
            Requestor::Principal(&caller.principal)
        } else if let Some(session) = &caller.session {
            Requestor::Session(session)
        } else {
            Requestor::Nobody
        }
    }
}

impl Quota {
    pub(crate) fn new(per_principal: usize, per_session: usize, total: usize) -> Self {
        Quota {
            per_principal,
            per_session,
            total,
            counts: Arc::default(),
        }
    }

    /// Takes a slot for `caller`, or says which limit is reached and the flag (and
    /// config key) that raises it.
    pub(crate) fn acquire(&self, caller: &Caller) -> Result<Slot, String> {
        let mut c = self.counts.lock();
        if c.total >= self.total {
            return Err(format!(
                "the server already runs {} unfinished tasks, its server-wide limit; the operator can raise it with --max-active-tasks (max_active_tasks in the config file); otherwise wait for some to finish or cancel some",
                self.total
            ));
        }
        let (key, limit, which, flag) = match Requestor::of(caller) {
            Requestor::Principal(p) => (
                Some(format!("principal:{p}")),
                self.per_principal,
                "per principal",
                "--max-tasks-per-principal (max_tasks_per_principal in the config file)",
            ),
            Requestor::Session(s) => (
                Some(format!("session:{s}")),
                self.per_session,
                "per session",
                "--max-tasks-per-session (max_tasks_per_session in the config file)",
            ),
            Requestor::Nobody => (None, usize::MAX, "", ""),
        };
        let requestor = match key {
            Some(key) => {
                let (shared, mine) = match c.by_requestor.get_key_value(key.as_str()) {
                    Some((shared, mine)) => (Arc::clone(shared), *mine),
                    None => (Arc::from(key), 0),
                };
                if mine >= limit {
                    return Err(format!(
                        "you already have {mine} unfinished tasks, the limit {which}; the operator can raise it with {flag}; otherwise wait for some to finish or cancel some"
                    ));
                }
                *c.by_requestor.entry(Arc::clone(&shared)).or_insert(0) += 1;
                Some(shared)
            }
            None => None,
        };
        c.total += 1;
        Ok(Slot {
            requestor,
            counts: Arc::clone(&self.counts),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn principals_are_limited_and_slots_given_back() {
        let q = Quota::new(2, 50, 3);
        let alice = Caller::authenticated("alice", Some("s1".into()));
        let alice_elsewhere = Caller::authenticated("alice", Some("s2".into()));
        let a1 = q.acquire(&alice).unwrap();
        let _a2 = q.acquire(&alice_elsewhere).unwrap();
        let refused = q.acquire(&alice).unwrap_err();
        assert!(
            refused.contains("per principal") && refused.contains("--max-tasks-per-principal"),
            "{refused}"
        );
        let _b1 = q.acquire(&Caller::authenticated("bob", None)).unwrap();
        let full = q
            .acquire(&Caller::authenticated("carol", None))
            .unwrap_err();
        assert!(
            full.contains("server-wide") && full.contains("--max-active-tasks"),
            "{full}"
        );
        drop(a1);
        assert!(q.acquire(&Caller::authenticated("carol", None)).is_ok());
    }

    #[test]
    fn without_authentication_each_session_is_a_requestor() {
        let q = Quota::new(50, 1, 10);
        let one = Caller::anonymous("session:one", Some("one".into()));
        let two = Caller::anonymous("session:two", Some("two".into()));
        let _held = q.acquire(&one).unwrap();
        let refused = q.acquire(&one).unwrap_err();
        assert!(
            refused.contains("per session") && refused.contains("--max-tasks-per-session"),
            "{refused}"
        );
        assert!(q.acquire(&two).is_ok());
        // Stateless requests without authentication share no per-requestor count.
        let stateless = Caller::anonymous("stateless", None);
        let _s1 = q.acquire(&stateless).unwrap();
        let _s2 = q.acquire(&stateless).unwrap();
    }
}

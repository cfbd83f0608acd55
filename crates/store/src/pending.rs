//! [`PendingCreate`]: a record on its way into the store whose work already runs, so
//! that work which ends before the creation is committed can be committed with it.
//!
//! An instant task (its tool returns within microseconds) would otherwise cost two
//! commits on a durable store, one for its creation and one for its end, and on SQLite
//! each commit is an fsync. The creator offers the end as an amendment; a store that
//! groups writes (the SQLite writer) applies it in the same transaction as the insert,
//! when it arrives before the store seals the creation for writing. A store that cannot
//! group seals at once and the creator writes the end as an ordinary transition.

use parking_lot::Mutex;

use crate::record::{TaskRecord, TransitionParams};

/// A creation that may still take the task's first transition along.
#[derive(Debug)]
pub struct PendingCreate {
    record: TaskRecord,
    state: Mutex<State>,
}

#[derive(Debug)]
enum State {
    Open,
    Amended(Box<TransitionParams>),
    Sealed,
}

impl PendingCreate {
    /// A creation of `record`, open to one amendment.
    pub fn new(record: TaskRecord) -> Self {
        PendingCreate {
            record,
            state: Mutex::new(State::Open),
        }
    }

    /// The record to insert.
    pub fn record(&self) -> &TaskRecord {
        &self.record
    }

    /// Offers `transition` to be committed together with the creation. `true`: it
    /// will be, and the record the create returns is the one after it. `false`: the
    /// store already began writing (or took an earlier amendment); apply it with
    /// [`crate::TaskStore::transition`] once the create returned.
    pub fn amend(&self, transition: TransitionParams) -> bool {
        let mut state = self.state.lock();
        match *state {
            State::Open => {
                *state = State::Amended(Box::new(transition));
                true
            }
            _ => false,
        }
    }

    /// For stores: refuses amendments from now on and returns the one that came, if
    /// any, to apply in the same atomic step as the insert.
    pub fn seal(&self) -> Option<TransitionParams> {
        let mut state = self.state.lock();
        match std::mem::replace(&mut *state, State::Sealed) {
            State::Amended(t) => Some(*t),
            _ => None,
        }
    }
}

//! Journaled steps: what [`TaskContext::step`](crate::TaskContext::step) keeps while
//! work runs, and the errors a step can end in.
//!
//! A step's key is its name and occurrence (`"charge#0"`, `"charge#1"` for the next
//! step of the same name), so a step inside a loop has one entry per round, and work
//! that runs again meets its steps under the same keys as long as it asks for them in
//! the same order. `StepLog` holds the outputs recorded by earlier attempts (read
//! from the store's journal when work runs again) and counts occurrences.
//!
//! Attempts are journal entries too (`@attempt#N`, written when work starts again
//! after a takeover, a retry or a drain), so that the attempt number survives the
//! process that ran the previous one and costs nothing for work that runs once.

use mcp_tasks_store::JournalEntry;
use parking_lot::Mutex;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::retry::Retry;

/// The prefix of the journal entries that record an attempt's start.
pub(crate) const ATTEMPT_PREFIX: &str = "@attempt#";

/// Why a step could not give its output.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum StepError {
    /// The step ran but its output could not be recorded: the task ended, another
    /// server process took it over (this one must stop), or the store failed. The work
    /// should return; the task's record says what happened.
    #[error("step '{step}' ran but could not be recorded: {reason}")]
    NotRecorded {
        /// The step's key.
        step: String,
        /// Why.
        reason: String,
    },
    /// The output an earlier attempt recorded does not read as the type asked for now
    /// (the tool changed between attempts).
    #[error("step '{step}' was recorded by an earlier attempt, but its output no longer reads as this type: {reason}; change the step's name when its output type changes")]
    Unreadable {
        /// The step's key.
        step: String,
        /// The decoding error.
        reason: String,
    },
    /// The step's output could not be turned into JSON for the journal.
    #[error("step '{step}' returned an output that cannot be journaled as JSON: {reason}")]
    Unserializable {
        /// The step's key.
        step: String,
        /// The encoding error.
        reason: String,
    },
}

/// One attempt's view of its task's journal. See the module docs.
///
/// Every running task holds one, and most work never records a step nor asks for a
/// retry: what they need is made on first use ([`Journaled`]), so that an idle task
/// pays 32 bytes here rather than 200 (two maps and their hashers, inline, and a
/// plain call's id).
#[derive(Debug, Default)]
pub(crate) struct StepLog {
    /// This attempt's number, 1 for the first.
    pub(crate) attempt: u32,
    /// The replayed outputs, occurrences, retry and call id; `None` until first
    /// needed.
    journaled: Mutex<Option<Box<Journaled>>>,
    /// Input requests made so far by this attempt (their keys count up): here
    /// rather than in an allocation of the context's own, since every clone of the
    /// context shares this log.
    input_requests: AtomicU64,
}

/// What a [`StepLog`] holds once its work records steps or asks for a retry.
#[derive(Debug, Default)]
struct Journaled {
    /// Outputs recorded by earlier attempts, by key; taken when replayed.
    recorded: HashMap<String, Value>,
    /// How often each name was asked for so far.
    occurrences: HashMap<String, u32>,
    /// The retry the work asked for, if it did (see `TaskContext::retry`).
    retry: Option<Retry>,
    /// For work that is not a task: an id that makes its step keys unique.
    call_id: Option<Box<str>>,
}

impl StepLog {
    /// The log of a first attempt: nothing recorded.
    pub(crate) fn first() -> Self {
        StepLog {
            attempt: 1,
            ..Default::default()
        }
    }

    /// The log of attempt `attempt`, replaying the steps in `journal`.
    pub(crate) fn replaying(attempt: u32, journal: &[JournalEntry]) -> Self {
        let recorded: HashMap<String, Value> = journal
            .iter()
            .filter(|e| !e.step.starts_with(ATTEMPT_PREFIX))
            .map(|e| (e.step.clone(), e.output.clone()))
            .collect();
        let journaled = (!recorded.is_empty()).then(|| {
            Box::new(Journaled {
                recorded,
                ..Default::default()
            })
        });
        StepLog {
            attempt,
            journaled: Mutex::new(journaled),
            ..Default::default()
        }
    }

    /// Runs `f` on the journaled state, made first if need be.
    fn with<T>(&self, f: impl FnOnce(&mut Journaled) -> T) -> T {
        f(self.journaled.lock().get_or_insert_with(Default::default))
    }

    /// The key of the next step called `name`.
    pub(crate) fn next_key(&self, name: &str) -> String {
        self.with(|j| {
            let n = j.occurrences.entry(name.to_string()).or_insert(0);
            let key = format!("{name}#{n}");
            *n += 1;
            key
        })
    }

    /// The number of this attempt's next input request: 1, 2, ... (shared by every
    /// clone of its context, so that no two requests get one key).
    pub(crate) fn next_input_number(&self) -> u64 {
        self.input_requests.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// Remembers the work's request to be retried (the last one counts).
    pub(crate) fn request_retry(&self, retry: Retry) {
        self.with(|j| j.retry = Some(retry));
    }

    /// The work's request to be retried, taken.
    pub(crate) fn take_retry(&self) -> Option<Retry> {
        self.journaled.lock().as_mut().and_then(|j| j.retry.take())
    }

    /// The stable key of step `key` of work that is not a task: under an id of the
    /// call's own (made on first use), so that its step keys are unique.
    pub(crate) fn call_key(&self, key: &str) -> String {
        self.with(|j| {
            let id = j.call_id.get_or_insert_with(|| {
                format!("call-{}", mcp_tasks_protocol::TaskId::generate()).into_boxed_str()
            });
            format!("{id}/{key}")
        })
    }

    /// The output an earlier attempt recorded for `key`, if any.
    pub(crate) fn replay(&self, key: &str) -> Option<Value> {
        self.journaled
            .lock()
            .as_mut()
            .and_then(|j| j.recorded.remove(key))
    }
}

/// The attempt number a journal's attempt entries give the next attempt.
pub(crate) fn next_attempt(journal: &[JournalEntry]) -> u32 {
    let recorded = journal
        .iter()
        .filter(|e| e.step.starts_with(ATTEMPT_PREFIX))
        .count();
    u32::try_from(recorded)
        .unwrap_or(u32::MAX - 2)
        .saturating_add(2)
}

tokio::task_local! {
    /// The stable key of the step whose body runs on this task (see
    /// [`TaskContext::step_key`](crate::TaskContext::step_key)).
    pub(crate) static CURRENT_STEP: String;
}

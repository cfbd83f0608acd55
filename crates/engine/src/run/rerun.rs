//! Running a task's work again: after a takeover (its process stopped), a hand-over
//! (its process drained), or a retry its work asked for. Each run is an attempt; the
//! journal counts them (`@attempt#N` entries, see `steps`), the tool's
//! [`RetryPolicy`](crate::RetryPolicy) bounds them, and the new attempt replays the
//! steps the earlier ones recorded. A task that cannot run again (no resumer, a tool
//! that is not resumable, no attempt left) is failed with a message saying why.

use mcp_tasks_protocol::{TaskId, TaskStatus};
use mcp_tasks_store::{
    Failure, JournalEntry, RecordStep, StoreError, TaskRecord, TransitionParams,
};
use serde_json::{json, Value};
use std::sync::{Arc, Weak};
use std::time::Duration;

use crate::context::TaskHost;
use crate::hooks::Resumer;
use crate::retry::Retry;
use crate::run::core::Core;
use crate::run::executor::Executor;
use crate::steps::{next_attempt, StepLog, ATTEMPT_PREFIX};

/// Status message of a task whose process stopped and whose tool cannot be re-run.
pub const LOST_RUNNER_MESSAGE: &str =
    "the server process running this task stopped or restarted (its lease expired) and the tool is not resumable; call the tool again";

/// Why a task runs again.
#[derive(Debug, Clone)]
pub(crate) enum Why {
    /// Its process stopped (or handed it over); `from` is that process's runner id,
    /// when known (`None`: read from the journal's last attempt, if any).
    TakenOver { from: Option<String> },
    /// Its work asked for a retry, for `reason`.
    Retried { reason: String },
}

impl Why {
    fn label(&self) -> &'static str {
        match self {
            Why::TakenOver { .. } => "takeover",
            Why::Retried { .. } => "retry",
        }
    }

    /// What the journal's attempt entry says.
    fn entry(&self, to: &str) -> Value {
        match self {
            Why::TakenOver { from } => json!({"reason": "takeover", "from": from, "to": to}),
            Why::Retried { reason } => json!({"reason": "retry", "error": reason, "to": to}),
        }
    }
}

/// What running work again needs: the components it writes through, who answers the
/// work's context, and the resumer that builds the work.
pub(crate) struct Rerun<'a> {
    pub(crate) core: &'a Arc<Core>,
    pub(crate) executor: &'a Arc<Executor>,
    pub(crate) host: Weak<dyn TaskHost>,
    pub(crate) resumer: Option<&'a Resumer>,
}

impl Rerun<'_> {
    /// The fence of writes to `record` before its work is registered here.
    fn fence(&self, record: &TaskRecord) -> Option<u64> {
        self.core
            .store
            .shared_by_processes()
            .then_some(record.lease_generation)
    }

    /// Runs the work of `record` (which this process holds) again as its next
    /// attempt, or fails the task when it cannot run again.
    pub(crate) async fn run_again(&self, record: TaskRecord, why: Why) {
        let core = self.core;
        let Some(resumption) = self.resumer.and_then(|r| r(&record)) else {
            let message = match &why {
                Why::TakenOver { .. } => LOST_RUNNER_MESSAGE.to_string(),
                Why::Retried { reason } => format!("{reason}; the tool cannot be run again"),
            };
            self.fail(&record, message).await;
            return;
        };
        let journal = self.journal(&record.id).await;
        let attempt = next_attempt(&journal);
        let why = match why {
            Why::TakenOver { from: None } => Why::TakenOver {
                from: last_runner(&journal),
            },
            other => other,
        };
        let max = resumption.retry.max_attempts;
        if attempt > max {
            let message = match &why {
                Why::TakenOver { .. } => format!("the server process running this task stopped; gave up after {max} attempts (the tool's retry policy)"),
                Why::Retried { reason } => format!("{reason}; gave up after {max} attempts"),
            };
            self.fail(&record, message).await;
            return;
        }
        if let Some(journal_store) = core.store.journal() {
            let entry = RecordStep {
                id: record.id.clone(),
                step: format!("{ATTEMPT_PREFIX}{attempt}"),
                attempt,
                output: why.entry(&core.runner_id),
                lease_generation: self.fence(&record),
                now: core.now(),
            };
            match journal_store.record_step(&entry).await {
                Ok(_) => {}
                Err(
                    StoreError::LeaseConflict { .. }
                    | StoreError::Conflict { .. }
                    | StoreError::NotFound,
                ) => {
                    tracing::debug!(task_id = %record.id, "task changed before its next attempt; not running it here");
                    return;
                }
                Err(e) => {
                    tracing::warn!(task_id = %record.id, error = %e, "could not journal the attempt; running it anyway")
                }
            }
        }
        tracing::info!(task_id = %record.id, attempt, why = why.label(), "running the task's work again");
        core.activity.count(|a| a.reruns += 1);
        let record = self.say_attempt(record, attempt, max, &why).await;
        crate::run::job::launch(
            core,
            self.executor,
            self.host.clone(),
            &record,
            core.capabilities(Value::Null),
            resumption.work,
            None,
            Arc::new(StepLog::replaying(attempt, &journal)),
        );
    }

    /// The task's journal (empty when the store keeps none or cannot be read: the
    /// work then runs every step again, which is what at-least-once allows).
    async fn journal(&self, id: &TaskId) -> Vec<JournalEntry> {
        let Some(journal) = self.core.store.journal() else {
            return Vec::new();
        };
        match journal.steps(id).await {
            Ok(entries) => entries,
            Err(e) => {
                tracing::warn!(task_id = %id, error = %e, "could not read the task's journal; its steps run again");
                Vec::new()
            }
        }
    }

    /// Says on a working task which attempt runs and why (a task waiting for a person
    /// keeps its message: the question is what matters). Returns the record as it is
    /// then.
    async fn say_attempt(
        &self,
        record: TaskRecord,
        attempt: u32,
        max: u32,
        why: &Why,
    ) -> TaskRecord {
        if record.status != TaskStatus::Working {
            return record;
        }
        let message = match why {
            Why::TakenOver { .. } => format!(
                "attempt {attempt} of {max}: resumed after the server process running it stopped"
            ),
            Why::Retried { reason } => format!("attempt {attempt} of {max} (after: {reason})"),
        };
        let change = TransitionParams::to(record.id.clone(), TaskStatus::Working, self.core.now())
            .expecting(record.version)
            .message(message)
            .fenced(self.fence(&record));
        match self.core.apply(change).await {
            Ok(updated) => updated,
            Err(_) => record,
        }
    }

    async fn fail(&self, record: &TaskRecord, message: String) {
        tracing::warn!(task_id = %record.id, %message, "the task cannot run again; failing it");
        let change = TransitionParams::fail(
            record.id.clone(),
            Failure::LeaseLost,
            message,
            self.core.now(),
        )
        .fenced(self.fence(record));
        if let Err(e) = self.core.apply(change).await {
            tracing::debug!(task_id = %record.id, error = %e, "task changed meanwhile");
        }
    }

    /// Schedules attempt `attempt + 1` of a task whose work asked for `retry`, when
    /// its policy allows: true when it will run again (after the backoff), false when
    /// its end should be recorded as it is. The task stays `working` meanwhile; a
    /// cancel during the wait ends it (the wait re-reads the record), and if this
    /// process stops during the wait, the takeover runs the next attempt.
    pub(crate) async fn retry_later(&self, id: &TaskId, attempt: u32, retry: Retry) -> bool {
        let core = self.core;
        let Some(resumer) = self.resumer else {
            return false;
        };
        let record = match core.store.get(id, core.now()).await {
            Ok(Some(r)) if !r.status.is_terminal() => r,
            _ => return false,
        };
        let Some(resumption) = resumer(&record) else {
            return false;
        };
        let policy = resumption.retry;
        if attempt >= policy.max_attempts {
            return false;
        }
        let wait = retry
            .after
            .unwrap_or_else(|| policy.jittered(policy.backoff(attempt), unit_random()));
        let next = attempt + 1;
        crate::run::ledger::update_message(
            core,
            self.executor,
            id,
            format!(
                "attempt {attempt} of {max} failed: {reason}; attempt {next} in {wait}",
                max = policy.max_attempts,
                reason = retry.reason,
                wait = seconds(wait),
            ),
        )
        .await;
        core.activity.count(|a| a.retries_scheduled += 1);
        let core = Arc::clone(core);
        let executor = Arc::clone(self.executor);
        let host = self.host.clone();
        let resumer = Arc::clone(resumer);
        let id = id.clone();
        let reason = retry.reason;
        let generation = record.lease_generation;
        tokio::spawn(async move {
            tokio::time::sleep(wait).await;
            let record = match core.store.get(&id, core.now()).await {
                Ok(Some(r)) if !r.status.is_terminal() => r,
                _ => return, // cancelled, ended or expired during the wait
            };
            let shared = core.store.shared_by_processes();
            if shared
                && (record.runner.as_deref() != Some(&core.runner_id)
                    || record.lease_generation != generation)
            {
                return; // taken over during the wait: the takeover runs the next attempt
            }
            let rerun = Rerun {
                core: &core,
                executor: &executor,
                host,
                resumer: Some(&resumer),
            };
            rerun.run_again(record, Why::Retried { reason }).await;
        });
        true
    }
}

/// A wait as people read it: "4.2 s".
fn seconds(wait: Duration) -> String {
    format!("{:.1} s", wait.as_secs_f64())
}

/// A number in `[0, 1)` good enough to spread retries (not for secrets).
fn unit_random() -> f64 {
    use std::hash::BuildHasher;
    let bits =
        std::collections::hash_map::RandomState::new().hash_one(std::time::SystemTime::now());
    (bits >> 11) as f64 / (1u64 << 53) as f64
}

/// The runner that ran the last attempt the journal records (after the first).
fn last_runner(journal: &[JournalEntry]) -> Option<String> {
    journal
        .iter()
        .filter(|e| e.step.starts_with(ATTEMPT_PREFIX))
        .max_by_key(|e| e.attempt)
        .and_then(|e| e.output.get("to"))
        .and_then(Value::as_str)
        .map(str::to_string)
}

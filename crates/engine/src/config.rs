//! Engine settings and their defaults. Every default is a named constant here so the
//! CLI's `--help` and the docs can quote the same values.

use std::time::Duration;

/// Default retention of a task when the client asks for none: 1 hour.
pub const DEFAULT_TTL: Duration = Duration::from_secs(60 * 60);
/// Longest retention a client may ask for; longer requests are clamped: 24 hours.
pub const DEFAULT_MAX_TTL: Duration = Duration::from_secs(24 * 60 * 60);
/// Shortest retention granted; shorter requests (a `ttl` of 0 included) are raised to
/// it, so a task is never gone before its client could read it once: 1 second.
pub const DEFAULT_MIN_TTL: Duration = Duration::from_secs(1);
/// Suggested polling interval sent with every task: 1 second.
pub const DEFAULT_POLL_INTERVAL: Duration = Duration::from_secs(1);
/// How long cancelled work may take to stop by itself before it is aborted: 5 seconds.
pub const DEFAULT_CANCEL_GRACE: Duration = Duration::from_secs(5);
/// How often expired tasks are looked for: 1 second.
pub const DEFAULT_SWEEP_INTERVAL: Duration = Duration::from_secs(1);
/// How often a process proves it is alive on a store several processes share: one
/// write per process per interval, whatever the number of tasks it runs: 2 seconds.
pub const DEFAULT_HEARTBEAT: Duration = Duration::from_secs(2);
/// How long a process counts as alive after its last heartbeat on a store several
/// processes share (SQLite file, PostgreSQL), and the lease a claim grants before the
/// first heartbeat counts: 6 seconds (three heartbeats). A process killed with SIGKILL
/// leaves its tasks `working` about this long (plus one [`DEFAULT_RESCUE_INTERVAL`])
/// before another process resumes or fails them; a process that cannot write its
/// heartbeat for this long stops its work (another may take it).
pub const DEFAULT_LEASE_TTL: Duration = Duration::from_secs(6);
/// How often a process looks for tasks whose runner is no longer alive: 1 second.
pub const DEFAULT_RESCUE_INTERVAL: Duration = Duration::from_secs(1);
/// How often a replica re-reads the tasks it runs, to stop work another replica
/// cancelled even when no change event arrived: 5 seconds.
pub const DEFAULT_REREAD_INTERVAL: Duration = Duration::from_secs(5);
/// On shutdown (SIGTERM, Ctrl-C, end of stdio input), how long tasks whose tool cannot
/// be resumed elsewhere may take to finish before they are failed: 30 seconds.
/// Resumable tasks are handed over at once.
pub const DEFAULT_DRAIN_TIMEOUT: Duration = Duration::from_secs(30);
/// Most expired records deleted per store call, so one sweep never holds the store long.
pub const SWEEP_BATCH: usize = 500;
/// How long a plain (non-task) call waits for its client to answer a question before
/// it fails: 10 minutes. A task's question waits as long as the task lives, or until
/// its own deadline.
pub const DEFAULT_INPUT_TIMEOUT: Duration = Duration::from_secs(10 * 60);
/// Longest time before its expiry at which a task still waiting for an answer fails
/// with an outcome its client can read ("nobody decided before the task's time ran
/// out"), instead of vanishing with its record: 1 hour, or a tenth of the task's TTL
/// when that is shorter ([`settle_before_expiry`]). Servers that hold a call for
/// people (approvals) grant its task this much more TTL, so that a question's own
/// deadline still comes first.
pub const MAX_SETTLE_BEFORE_EXPIRY: Duration = Duration::from_secs(60 * 60);

/// How long a task that expired while it still waited for an answer stays readable,
/// failed ("nobody answered"), once the expiry sweeper settled it: an hour, the
/// longest settling time of a task whose process ran. Only tasks that no process ran
/// over their last stretch get there (every server was down).
pub const SETTLED_READABLE_FOR: Duration = MAX_SETTLE_BEFORE_EXPIRY;

/// How long before a task with `ttl` expires an unanswered question fails it: a tenth
/// of the TTL, at most [`MAX_SETTLE_BEFORE_EXPIRY`]. The task stays readable, failed,
/// for that long.
pub fn settle_before_expiry(ttl: Duration) -> Duration {
    (ttl / 10).min(MAX_SETTLE_BEFORE_EXPIRY)
}

/// Most input requests one task may have outstanding at once.
pub const DEFAULT_MAX_INPUT_REQUESTS: usize = 16;
/// Most active (unfinished) tasks one principal may have: 100.
pub const DEFAULT_MAX_TASKS_PER_PRINCIPAL: usize = 100;
/// Most active tasks one session may have when there is no authentication (every
/// client is then the same anonymous principal, so each session counts for itself): 100.
pub const DEFAULT_MAX_TASKS_PER_SESSION: usize = 100;
/// Most active tasks on the whole server: 10,000.
pub const DEFAULT_MAX_ACTIVE_TASKS: usize = 10_000;
/// Largest result stored for a task (serialized JSON): 16 MiB. Larger results are
/// replaced by an error saying so.
pub const DEFAULT_MAX_RESULT_BYTES: usize = 16 * 1024 * 1024;
/// Default and largest `tasks/list` page.
pub const DEFAULT_LIST_PAGE_SIZE: usize = 50;

/// How the engine treats tasks.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    /// Retention when the client asks for none.
    pub default_ttl: Duration,
    /// Upper bound on retention; requests above it are clamped (and the clamped value is
    /// what the client sees).
    pub max_ttl: Duration,
    /// Lower bound on retention; requests below it are raised (and the raised value is
    /// what the client sees).
    pub min_ttl: Duration,
    /// Suggested polling interval.
    pub poll_interval: Duration,
    /// Grace period between cooperative cancellation and abort.
    pub cancel_grace: Duration,
    /// Period of the expiry sweeper.
    pub sweep_interval: Duration,
    /// `tasks/list` page size.
    pub list_page_size: usize,
    /// Time limit for a plain call's unanswered question (the server's calls without a
    /// task hold a connection); a task's questions wait their task's TTL or their own
    /// deadline instead.
    pub input_timeout: Duration,
    /// Cap on outstanding input requests per task.
    pub max_input_requests: usize,
    /// Cap on active tasks per principal (with authentication).
    pub max_tasks_per_principal: usize,
    /// Cap on active tasks per session (without authentication; stateless requests
    /// without authentication have no session and count only toward `max_active_tasks`).
    pub max_tasks_per_session: usize,
    /// Cap on active tasks in total.
    pub max_active_tasks: usize,
    /// Cap on the stored size of a result.
    pub max_result_bytes: usize,
    /// Whether audit events include tool arguments (off: they may hold secrets).
    pub audit_arguments: bool,
    /// Period of the process heartbeat with leases: one store write per interval
    /// proves every task running here alive (at most a third of `lease_ttl`).
    pub heartbeat: Duration,
    /// Leases for running tasks (several processes on one database): the alive window
    /// of a process (it counts as alive this long after its last heartbeat) and the
    /// lease a claim grants. A process that finds a task whose runner is not alive
    /// takes it over (re-runs it when its tool is resumable, else fails it). `None`:
    /// chosen from the store, [`DEFAULT_LEASE_TTL`] when other processes may share it
    /// (a database file or server, see `TaskStore::shared_by_processes`), no leases
    /// otherwise.
    pub lease_ttl: Option<Duration>,
    /// Period of the look for tasks whose runner is no longer alive (with leases).
    pub rescue_interval: Duration,
    /// Period of the re-read of running tasks on stores shared by several processes
    /// (stops work another replica cancelled when no change event arrived).
    pub reread_interval: Duration,
    /// How long [`Engine::drain`](crate::Engine::drain) lets tasks that cannot be
    /// resumed elsewhere finish before it fails them.
    pub drain_timeout: Duration,
    /// Longest wait for an external job's `poll` or `cancel` (see
    /// the `external` module): a read of the task must not hang on a system that stopped
    /// answering. A poll that times out counts as "could not find out this time" (the
    /// stored record is returned); a cancel that times out is reported in the
    /// cancelled task's status message.
    pub external_call_timeout: Duration,
    /// Whether people answer questions here (a task board takes them): a task may then
    /// ask a question its client did not declare it can answer, when the wire reader
    /// says a person could answer it ([`crate::ResultReading::people_may_answer`]). Plain
    /// (non-task) calls still ask only what their client declared.
    pub people_answer_questions: bool,
}

/// Default longest wait for an external job's poll or cancel: 10 s.
pub const DEFAULT_EXTERNAL_CALL_TIMEOUT: Duration = Duration::from_secs(10);

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            default_ttl: DEFAULT_TTL,
            max_ttl: DEFAULT_MAX_TTL,
            min_ttl: DEFAULT_MIN_TTL,
            poll_interval: DEFAULT_POLL_INTERVAL,
            cancel_grace: DEFAULT_CANCEL_GRACE,
            sweep_interval: DEFAULT_SWEEP_INTERVAL,
            list_page_size: DEFAULT_LIST_PAGE_SIZE,
            input_timeout: DEFAULT_INPUT_TIMEOUT,
            max_input_requests: DEFAULT_MAX_INPUT_REQUESTS,
            max_tasks_per_principal: DEFAULT_MAX_TASKS_PER_PRINCIPAL,
            max_tasks_per_session: DEFAULT_MAX_TASKS_PER_SESSION,
            max_active_tasks: DEFAULT_MAX_ACTIVE_TASKS,
            max_result_bytes: DEFAULT_MAX_RESULT_BYTES,
            audit_arguments: false,
            heartbeat: DEFAULT_HEARTBEAT,
            lease_ttl: None,
            rescue_interval: DEFAULT_RESCUE_INTERVAL,
            reread_interval: DEFAULT_REREAD_INTERVAL,
            drain_timeout: DEFAULT_DRAIN_TIMEOUT,
            external_call_timeout: DEFAULT_EXTERNAL_CALL_TIMEOUT,
            people_answer_questions: false,
        }
    }
}

impl EngineConfig {
    /// The retention granted for a requested ttl: the default when none was asked,
    /// never more than `max_ttl` nor less than `min_ttl` (when the two disagree, the
    /// maximum wins: an operator's cap is the harder promise).
    pub fn effective_ttl(&self, requested: Option<Duration>) -> Duration {
        requested
            .unwrap_or(self.default_ttl)
            .max(self.min_ttl)
            .min(self.max_ttl)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ttl_is_defaulted_and_clamped() {
        let c = EngineConfig::default();
        assert_eq!(c.effective_ttl(None), DEFAULT_TTL);
        assert_eq!(
            c.effective_ttl(Some(Duration::from_secs(5))),
            Duration::from_secs(5)
        );
        assert_eq!(
            c.effective_ttl(Some(Duration::from_secs(10 * 86400))),
            DEFAULT_MAX_TTL
        );
    }

    #[test]
    fn ttl_below_the_minimum_is_raised() {
        let c = EngineConfig::default();
        assert_eq!(c.effective_ttl(Some(Duration::ZERO)), DEFAULT_MIN_TTL);
        assert_eq!(
            c.effective_ttl(Some(Duration::from_millis(999))),
            DEFAULT_MIN_TTL
        );
        let c = EngineConfig {
            min_ttl: Duration::from_secs(30),
            ..EngineConfig::default()
        };
        assert_eq!(
            c.effective_ttl(Some(Duration::from_secs(5))),
            Duration::from_secs(30)
        );
    }
}

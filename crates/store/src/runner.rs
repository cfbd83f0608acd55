//! Runner liveness: one row per server process working on a shared store, kept alive by
//! one heartbeat write per interval ([`crate::TaskStore::heartbeat`]).
//!
//! Why: a lease renewed task by task costs one write per running task per heartbeat; a
//! million running tasks would cost a million renewals. Instead a task names its runner
//! (`TaskRecord::runner`) and is up for takeover when that runner is not alive: it has no
//! row, or its row's `alive_until` has passed (and the lease the claim granted, its
//! `lease_until`, has passed too). The fencing is unchanged: every claim raises
//! `lease_generation`, and a runner's late writes carry the old one.
//!
//! A row also says where the process runs ([`RunnerRecord::host`], [`RunnerRecord::pid`],
//! [`RunnerRecord::process_start`]), so that a process starting on the same host can tell
//! at once that a predecessor is gone (its pid is gone, or belongs to another process)
//! and hand its tasks over without waiting for `alive_until`
//! ([`crate::TaskStore::runners_on_host`], [`crate::TaskStore::reap_runner`]).

use chrono::{DateTime, Utc};
use mcp_tasks_protocol::TaskId;

/// One server process as the store knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunnerRecord {
    /// The runner id the process writes into `TaskRecord::runner`.
    pub id: String,
    /// Where the process runs: the host name, and on Linux its pid namespace, so that
    /// two containers sharing a host name never judge each other's process ids.
    pub host: String,
    /// The process id on that host.
    pub pid: u32,
    /// When that process started, in the host's own terms (on Linux the boot id and
    /// the start time in clock ticks from `/proc/self/stat`), so that a pid reused by
    /// another process is told apart. Empty when unknown.
    pub process_start: String,
    /// When the runner first wrote its row.
    pub started_at: DateTime<Utc>,
    /// Until when the runner counts as alive without another heartbeat.
    pub alive_until: DateTime<Utc>,
}

/// Hands leases back, so that another runner may claim the tasks at once; see
/// [`crate::TaskStore::release_leases`].
#[derive(Debug, Clone, PartialEq)]
pub struct ReleaseLeasesParams {
    /// The runner that holds them.
    pub runner: String,
    /// Each task with the lease generation the runner holds (the fence: a lease
    /// another runner took meanwhile is left alone).
    pub leases: Vec<(TaskId, u64)>,
    /// The current time.
    pub now: DateTime<Utc>,
}

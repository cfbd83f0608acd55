//! [`TaskStore`]: the storage seam under the engine, with what every backend must do
//! and the defaults that describe a single process.

use crate::change::{self, ChangeFeed};
use crate::delivery::DeliveryOutbox;
use crate::error::StoreError;
use crate::journal::StepJournal;
use crate::observed::StoreObserver;
use crate::pending::PendingCreate;
use crate::record::{
    ClaimExpiredParams, ClaimLeaseParams, ExpiredTask, ListPage, ListParams, Outcome,
    RenewLeaseParams, SettleExpiredParams, TaskQuery, TaskRecord, TimelineEntry, TransitionParams,
};
use crate::runner::{ReleaseLeasesParams, RunnerRecord};
use crate::session::SessionStore;
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use mcp_tasks_protocol::{TaskId, TaskStatus};
use std::sync::Arc;

/// The storage seam under the engine. Object safe, so a server holds an
/// `Arc<dyn TaskStore>` chosen at start-up (by URL or passed in by an embedder).
///
/// Implementations must make each method atomic on its own: the engine never does a
/// read-modify-write across two calls.
#[async_trait]
pub trait TaskStore: Send + Sync + std::fmt::Debug {
    /// Inserts a new record. Returns only once the record is durable for durable
    /// backends, because a client may be told about the task right after. Appends the
    /// first [`TimelineEntry`] (the record's version, `created_at`, status and message)
    /// in the same atomic step.
    ///
    /// # Errors
    /// [`StoreError::Duplicate`] if the id exists; [`StoreError::Backend`] on I/O failure.
    async fn create(&self, record: &TaskRecord) -> Result<(), StoreError>;

    /// [`TaskStore::create`] of a record whose work already runs: when the work's end
    /// was offered ([`PendingCreate::amend`]) before the store sealed the creation, the
    /// insert and that transition are committed in one atomic step (one fsync), and the
    /// record returned is the one after the transition; otherwise the record as created.
    /// The default seals at once and inserts, so the creator writes the end as an
    /// ordinary transition; stores that group their writes do better.
    ///
    /// A creator that offered an end and gets back a record that is not terminal
    /// writes the end itself (the store could not apply it with the insert).
    ///
    /// # Errors
    /// As [`TaskStore::create`].
    async fn create_pending(
        &self,
        pending: std::sync::Arc<PendingCreate>,
    ) -> Result<TaskRecord, StoreError> {
        let amendment = pending.seal();
        self.create(pending.record()).await?;
        match amendment {
            Some(t) => Ok(self
                .transition(&t)
                .await
                .unwrap_or_else(|_| pending.record().clone())),
            None => Ok(pending.record().clone()),
        }
    }

    /// Reads a record by id. Expired records (`expires_at <= now`) are reported as
    /// absent even before the sweeper deletes them.
    ///
    /// # Errors
    /// [`StoreError::Backend`] on I/O failure.
    async fn get(&self, id: &TaskId, now: DateTime<Utc>) -> Result<Option<TaskRecord>, StoreError>;

    /// Lists records of one owner (and optionally one session), oldest first, by keyset
    /// pagination on `(created_at, id)`, skipping expired ones.
    ///
    /// # Errors
    /// [`StoreError::Backend`] on I/O failure.
    async fn list(&self, params: &ListParams) -> Result<ListPage, StoreError>;

    /// Applies one change to a non-terminal record atomically: new status, status
    /// message, outcome. Fails with [`StoreError::Conflict`] (carrying the current
    /// record) when the record is already terminal or its version differs from
    /// `expected_version` (when given). Returns the updated record, version bumped.
    ///
    /// When the status changes, a [`TimelineEntry`] (new version, `now`, new status and
    /// message) is appended in the same atomic step; an update that keeps the status (a
    /// progress message) appends none.
    ///
    /// With `expected_lease_generation` the write is fenced: it applies only while the
    /// lease generation is still that one, in the same atomic step, and otherwise fails
    /// with [`StoreError::LeaseConflict`] (checked before the other conditions, since a
    /// runner that lost its lease must stop whatever the status). Lease fields are
    /// never changed by a transition.
    ///
    /// # Errors
    /// [`StoreError::NotFound`], [`StoreError::Conflict`], [`StoreError::LeaseConflict`],
    /// [`StoreError::Backend`].
    async fn transition(&self, params: &TransitionParams) -> Result<TaskRecord, StoreError>;

    /// Deletes up to `limit` records whose `expires_at <= now` (with their timelines),
    /// returning each one's id, status and external job (the engine stops what an expired task left running,
    /// in this process or in an external system). Costs O(expired) thanks to an index
    /// on `expires_at`, never a scan of all tasks.
    ///
    /// # Errors
    /// [`StoreError::Backend`] on I/O failure.
    async fn delete_expired(
        &self,
        now: DateTime<Utc>,
        limit: usize,
    ) -> Result<Vec<ExpiredTask>, StoreError>;

    /// Settles records that expired while they waited for an answer: up to
    /// `params.limit` records still `input_required` whose `expires_at <= now` become
    /// `failed` with the given status message and outcome (their questions dropped, a
    /// [`TimelineEntry`] written as for any status change) and expire at
    /// `readable_until` instead, returning their ids.
    ///
    /// Why: a question is normally settled by the process that runs its task shortly
    /// before the task expires, with an outcome the client can read. When no process
    /// ran then (every server down over the task's last stretch), the expiry sweeper
    /// calls this before [`delete_expired`](TaskStore::delete_expired), so that an
    /// approval nobody decided still ends as "nobody decided", never as a silently
    /// deleted record.
    ///
    /// The default settles nothing: a store without it deletes such records at their
    /// expiry, as stores did before it existed. The parity suite
    /// (`expired_waiting_records_are_settled_not_deleted`) expects it implemented.
    ///
    /// # Errors
    /// [`StoreError::Backend`] on I/O failure.
    async fn settle_expired_waiting(
        &self,
        params: &SettleExpiredParams,
    ) -> Result<Vec<TaskId>, StoreError> {
        let _ = params;
        Ok(Vec::new())
    }

    /// Moves every non-terminal record whose `runner` is not `current_runner` to
    /// `failed` with `status_message` and `error`, returning how many. Called at start-up
    /// so that no task is left `working` after the process that ran it died. Each one
    /// gets a [`TimelineEntry`] for `failed` at `now`, as a transition would.
    ///
    /// Records under a live lease are skipped: one whose `lease_until > now`, or
    /// whose runner is alive (see [`runner`](crate::runner)): another replica is running them; once
    /// that runner is gone they are orphans like any other (or taken over by
    /// [`TaskStore::claim_expired_leases`]).
    ///
    /// Records with a [`StoredJob`](crate::StoredJob) are skipped too: no process runs them (the job
    /// runs in another system and any process polls it), so a dead runner orphans
    /// nothing.
    ///
    /// # Errors
    /// [`StoreError::Backend`] on I/O failure.
    async fn fail_orphaned(
        &self,
        current_runner: &str,
        status_message: &str,
        error: &Outcome,
        now: DateTime<Utc>,
    ) -> Result<u64, StoreError>;

    /// The statuses task `id` went through, oldest first (by version): one entry for its
    /// creation and one per status change, each written atomically with the change.
    /// Empty for an unknown (or deleted) task. Like the record, the history goes when
    /// the task is deleted; it takes no `now`, so call [`get`](TaskStore::get) first
    /// when an expired task must look absent.
    ///
    /// Why: a board shows how a task got where it is (how long it waited for input,
    /// when it failed), which the record alone, holding only the present, cannot.
    ///
    /// # Errors
    /// [`StoreError::Backend`] on I/O failure or a stored entry that does not decode.
    async fn timeline(&self, id: &TaskId) -> Result<Vec<TimelineEntry>, StoreError>;

    /// Lists tasks of every owner (or of one), newest first by `(created_at, id)`,
    /// narrowed by the filters of `query` and paged by keyset on the same pair,
    /// skipping expired ones.
    ///
    /// Why: [`list`](TaskStore::list) serves a client its own tasks, oldest first; an
    /// operator's board wants the latest work of everyone, and to find one task by a
    /// prefix of its id, its status or its tool.
    ///
    /// # Errors
    /// [`StoreError::Backend`] on I/O failure.
    async fn query_tasks(&self, query: &TaskQuery) -> Result<ListPage, StoreError>;

    /// How many tasks [`query_tasks`](TaskStore::query_tasks) would show for `query`
    /// over all its pages, counting at most `query.limit` of them (`before` is
    /// ignored): a count that stops, never a scan of every task.
    ///
    /// Why: the board shows how many tasks are in each state next to its tabs, and a
    /// person cancelling "all N shown" must see N; a cap keeps both as cheap as a
    /// page, so a store of millions of tasks answers as fast as one of ten (the board
    /// says "1000+" past the cap).
    ///
    /// The default reads one page of `query.limit` records and counts them; the SQL
    /// backends count matching index rows without reading the records.
    ///
    /// # Errors
    /// [`StoreError::Backend`] on I/O failure.
    async fn count_tasks(&self, query: &TaskQuery) -> Result<u64, StoreError> {
        let page = self
            .query_tasks(&TaskQuery {
                before: None,
                ..query.clone()
            })
            .await?;
        Ok(page.records.len() as u64)
    }

    /// Takes the lease of one non-terminal task for `runner` until `until`, if nobody
    /// holds a live one (`lease_until` is unset, or `<= now` with a runner that is not
    /// alive: see [`runner`](crate::runner)). Sets `runner`, the expiry,
    /// and bumps `lease_generation`; returns the record with the generation the caller
    /// must present from now on. Of several runners claiming at once exactly one wins.
    ///
    /// Why: with several replicas, the replica that runs a task must be the only one;
    /// the generation is the fencing token that turns a paused runner's late writes
    /// into errors instead of overwrites.
    ///
    /// The default (single process): the process holds every lease, so this returns
    /// the record unchanged.
    ///
    /// # Errors
    /// [`StoreError::NotFound`] (absent or expired); [`StoreError::LeaseConflict`] when
    /// another live lease holds it; [`StoreError::Conflict`] when it is terminal;
    /// [`StoreError::Backend`].
    async fn claim_lease(&self, params: &ClaimLeaseParams) -> Result<TaskRecord, StoreError> {
        self.get(&params.id, params.now)
            .await?
            .ok_or(StoreError::NotFound)
    }

    /// Extends the lease `runner` holds at `generation` to `until` (a heartbeat),
    /// atomically checking that nobody claimed the task since. Leaves `version` and
    /// `last_updated_at` alone: a heartbeat is not a change a client sees.
    ///
    /// Why: a runner keeps its task only as long as it keeps proving it is alive; when
    /// this fails, it must stop acting on the task.
    ///
    /// The default (single process): the process holds every lease forever, so this
    /// returns the record unchanged.
    ///
    /// # Errors
    /// [`StoreError::NotFound`]; [`StoreError::LeaseConflict`] when the generation or
    /// runner differ (the lease was taken over); [`StoreError::Conflict`] when the task
    /// is terminal; [`StoreError::Backend`].
    async fn renew_lease(&self, params: &RenewLeaseParams) -> Result<TaskRecord, StoreError> {
        self.get(&params.id, params.now)
            .await?
            .ok_or(StoreError::NotFound)
    }

    /// Takes over up to `limit` non-terminal, unexpired tasks whose lease expired
    /// (`lease_until <= now`) and whose runner is not alive (it has no row, or its row's
    /// `alive_until <= now`, see [`runner`](crate::runner); a task whose lease was released has no
    /// runner), oldest lease first: each gets `runner`, `until` and
    /// `lease_generation + 1`, and is returned. Several replicas calling at once never
    /// receive the same task (PostgreSQL skips rows another claimer has locked).
    /// Tasks that never had a lease (`lease_until` unset) are not touched, nor tasks
    /// with a [`StoredJob`](crate::StoredJob): their lease lapses once the job started (no process
    /// holds them any more), and a takeover would re-run or fail a job that is fine.
    ///
    /// Why: a replica that died leaves its tasks leased until it stops being alive;
    /// the survivors rescue them (re-run or fail them through fenced transitions).
    /// A live runner keeps all its tasks with one [`heartbeat`](TaskStore::heartbeat)
    /// per interval, none of them renewed one by one.
    ///
    /// The default (single process): no other process can hold a lease, so nothing
    /// ever needs rescuing; orphans of a previous run are
    /// [`fail_orphaned`](TaskStore::fail_orphaned)'s job.
    ///
    /// # Errors
    /// [`StoreError::Backend`] on I/O failure.
    async fn claim_expired_leases(
        &self,
        params: &ClaimExpiredParams,
    ) -> Result<Vec<TaskRecord>, StoreError> {
        let _ = params;
        Ok(Vec::new())
    }

    /// Writes one heartbeat of a runner: inserts its row, or moves its `alive_until`
    /// on. One write per process per interval keeps every task it runs: a task is up
    /// for takeover only once its runner is not alive (see [`runner`](crate::runner) and
    /// [`claim_expired_leases`](TaskStore::claim_expired_leases)).
    ///
    /// Why: renewing the lease of each running task costs a write per task per
    /// interval; a row per process costs one.
    ///
    /// The default (single process): nobody else looks, so nothing is written.
    ///
    /// # Errors
    /// [`StoreError::Backend`] or [`StoreError::Unavailable`] on I/O failure.
    async fn heartbeat(&self, runner: &RunnerRecord) -> Result<(), StoreError> {
        let _ = runner;
        Ok(())
    }

    /// Deletes a runner's row on a clean exit (after its leases were released or its
    /// tasks ended): it is gone, and says so instead of letting `alive_until` pass.
    ///
    /// The default does nothing.
    ///
    /// # Errors
    /// [`StoreError::Backend`] on I/O failure.
    async fn retire(&self, runner: &str) -> Result<(), StoreError> {
        let _ = runner;
        Ok(())
    }

    /// Hands leases back: each listed task still held by `runner` at the listed
    /// generation loses its runner and becomes claimable by any runner at once (the
    /// next claim raises the generation, as always). Returns how many were released;
    /// a task another runner took meanwhile, or that ended, is left alone.
    ///
    /// Why: a draining process stops its resumable work and lets another replica (or
    /// the next start) resume it now, not once the process's heartbeat lapses.
    ///
    /// The default (single process): there is nobody to hand to; nothing changes.
    ///
    /// # Errors
    /// [`StoreError::Backend`] on I/O failure.
    async fn release_leases(&self, params: &ReleaseLeasesParams) -> Result<u64, StoreError> {
        let _ = params;
        Ok(0)
    }

    /// The runner rows of one host ([`RunnerRecord::host`]), alive or not, for a
    /// starting process to find its dead predecessors (pid gone, or reused).
    ///
    /// The default: none.
    ///
    /// # Errors
    /// [`StoreError::Backend`] on I/O failure.
    async fn runners_on_host(&self, host: &str) -> Result<Vec<RunnerRecord>, StoreError> {
        let _ = host;
        Ok(Vec::new())
    }

    /// Removes the row of a runner known to be dead, and makes its tasks claimable at
    /// once (their `lease_until` becomes `now`), returning how many tasks it held.
    ///
    /// Why: a process restarted on the same host knows its predecessor is gone the
    /// moment it starts; its tasks should be resumed or failed then, not once the
    /// dead runner's `alive_until` and lease pass.
    ///
    /// The default does nothing.
    ///
    /// # Errors
    /// [`StoreError::Backend`] on I/O failure.
    async fn reap_runner(&self, runner: &str, now: DateTime<Utc>) -> Result<u64, StoreError> {
        let _ = (runner, now);
        Ok(0)
    }

    /// Deletes the rows of runners not alive since `before` (their `alive_until <=
    /// before`), returning how many. Always safe: a runner without a row counts as
    /// dead, exactly as one whose row lapsed, and a live runner writes its row again at
    /// its next heartbeat.
    ///
    /// Why: a process that crashed on another host (a replaced container) is never
    /// reaped by a restart on its own host, and its row would stay forever.
    ///
    /// The default does nothing.
    ///
    /// # Errors
    /// [`StoreError::Backend`] on I/O failure.
    async fn forget_dead_runners(&self, before: DateTime<Utc>) -> Result<u64, StoreError> {
        let _ = before;
        Ok(0)
    }

    /// Subscribes to the ids of tasks that change (see [`change`]): created, a status,
    /// message or outcome written, or deleted. Returns `None` when the backend has no
    /// feed; then [`supports_notify`](TaskStore::supports_notify) is false and callers
    /// poll. Events start from the moment this returns.
    ///
    /// Why: with several replicas, the one holding a client's `tasks/result` open is
    /// often not the one that finishes the task.
    ///
    /// # Errors
    /// [`StoreError::Unavailable`] or [`StoreError::Backend`] when the listening
    /// connection cannot be set up.
    async fn subscribe_changes(&self) -> Result<Option<ChangeFeed>, StoreError> {
        Ok(None)
    }

    /// Whether other processes may open the same data and run tasks in it: a database
    /// file or server, as opposed to memory private to this process. When true the
    /// engine holds a lease on every task it runs (see
    /// [`claim_expired_leases`](TaskStore::claim_expired_leases)), so a process that
    /// starts on the same data fails or takes over only tasks whose runner stopped
    /// renewing, never the live work of a process beside it.
    ///
    /// Why: desktop hosts start the same stdio server more than once, and every
    /// default points at one `./mcp-tasks.db`; the default is false, for stores only
    /// this process can reach.
    fn shared_by_processes(&self) -> bool {
        false
    }

    /// Whether [`subscribe_changes`](TaskStore::subscribe_changes) yields a feed that
    /// sees every write, whichever process made it (PostgreSQL LISTEN/NOTIFY, or the
    /// in-memory store, which only one process can write). When false the engine relies
    /// on its own in-process events and on polling.
    fn supports_notify(&self) -> bool {
        false
    }

    /// The task's [`change::ChangeMark`], read from memory without
    /// touching the database, when the store keeps a change board that every process
    /// writing it moves (SQLite's `<db>-changes`). An engine compares a task's mark
    /// with the one it saw last to learn whether another process may have changed the
    /// task, instead of re-reading it. `None` (the default) when the store keeps no
    /// board: a store only this process writes, PostgreSQL (its replicas may be on other
    /// hosts; its change feed announces what changed), or a board that could not be
    /// mapped.
    fn change_mark(&self, id: &TaskId) -> Option<change::ChangeMark> {
        let _ = id;
        None
    }

    /// Every mark of the store's change board at once (see
    /// [`change_mark`](TaskStore::change_mark)), copied so that it can be compared
    /// with later: an engine learns from the copy of its previous look whether a task
    /// it sees running for the first time was changed since, without reading it.
    /// `None` (the default) when the store keeps no board.
    fn change_marks(&self) -> Option<change::ChangeMarks> {
        None
    }

    /// The store's shared 2025-11-25 sessions, if it keeps them (see [`session`](crate::session)).
    /// `None` (the default) for a store only this process uses: sessions then live in
    /// the server's memory, and the engine treats saving, keeping and deleting one as
    /// done and loading one as finding none.
    ///
    /// Why an accessor rather than methods with defaults: a store for tasks should not
    /// have to know sessions exist; a store that several replicas share implements
    /// [`SessionStore`] and returns itself.
    fn sessions(&self) -> Option<&dyn SessionStore> {
        None
    }

    /// The store's outbox of webhook deliveries, if it keeps one (see [`delivery`](crate::delivery)).
    /// `None` (the default) means webhooks cannot be sent from this store: the board's
    /// notifier refuses to start with sinks configured, and nothing else changes.
    ///
    /// Why an accessor: only webhooks need an outbox; a store for tasks implements
    /// [`DeliveryOutbox`] (and returns itself here) only if it should carry them.
    fn outbox(&self) -> Option<&dyn DeliveryOutbox> {
        None
    }

    /// The store's journal of finished steps (see [`journal`](crate::journal)), if it keeps one.
    /// `None` (the default) means work that runs again re-runs every step.
    ///
    /// Why an accessor: only durable execution needs a journal; every backend of this
    /// crate keeps one, and a wrapper forwards it.
    fn journal(&self) -> Option<&dyn StepJournal> {
        None
    }

    // Operations (issue #20): methods below serve metrics and traces. Kept at the end of
    // the trait, each on its own, so that other additions merge beside them.

    /// A short, fixed name of the backend (`memory`, `sqlite`, `postgresql`), used as
    /// the `backend` label of store metrics and the `db.system.name` of store spans.
    ///
    /// Why: an operator comparing latencies must know which backend produced them, and
    /// a label must stay one of a few values. The default, for backends outside this
    /// crate, is `custom`.
    fn backend_name(&self) -> &'static str {
        "custom"
    }

    /// How many visible (unexpired) tasks there are in each status, for the
    /// `mcp_tasks_tasks` gauge. Statuses with no task may be left out. Returns `None`
    /// when the backend cannot count (the default), and the gauge is then not shown.
    ///
    /// Why: "how many tasks wait for a person right now" is the first question of
    /// whoever runs the service, and only the store knows it across replicas. The SQL
    /// backends answer from an index on `(status, expires_at)`; callers still cache the
    /// answer for a few seconds, since it is read on every scrape.
    ///
    /// # Errors
    /// [`StoreError::Backend`] on I/O failure.
    async fn count_by_status(
        &self,
        now: DateTime<Utc>,
    ) -> Result<Option<Vec<(TaskStatus, u64)>>, StoreError> {
        let _ = now;
        Ok(None)
    }

    /// Hands the backend the observer of what only it can see: SQLite reports the size
    /// of each group commit ([`StoreObserver::observe_batch`]). Replaces an earlier one.
    /// The default ignores it.
    ///
    /// Why: batch sizes tell an operator whether the disk's `fsync` rate or the load
    /// limits creates, and they exist only inside the backend's writer.
    fn set_store_observer(&self, observer: Arc<dyn StoreObserver>) {
        let _ = observer;
    }
}

//! Runner liveness ([`crate::runner`]) on both SQL backends: one heartbeat row per
//! process in the `runners` table (`migrations/*_runners.sql`), the release of leases
//! a draining process hands back, and the reaping of a dead predecessor's row. Each
//! call is one statement (the reap two, each safe to repeat), so each is atomic.

use super::rows::Columns;
use super::values::{corrupt, counter_to_db};
use super::{Backend, Call};
use crate::error::StoreError;
use crate::runner::{ReleaseLeasesParams, RunnerRecord};
use chrono::{DateTime, Utc};

/// Inserts a runner's row, or moves its `alive_until` on. ?1 id, ?2 host, ?3 pid,
/// ?4 process start, ?5 started at, ?6 alive until.
const HEARTBEAT: &str = "INSERT INTO runners \
     (id, host, pid, process_start, started_at, alive_until) \
     VALUES (?1, ?2, ?3, ?4, ?5, ?6) \
     ON CONFLICT (id) DO UPDATE SET alive_until = excluded.alive_until";

/// Deletes a runner's row. ?1 id.
const RETIRE: &str = "DELETE FROM runners WHERE id = ?1";

/// Releases one lease still held by ?2 (runner) at ?3 (generation): no runner, the
/// lease passed at ?4 (now). ?1 id.
const RELEASE: &str = "UPDATE tasks SET runner = NULL, lease_until = ?4 \
     WHERE id = ?1 AND runner = ?2 AND lease_generation = ?3 \
     AND status IN ('working', 'input_required') \
     AND (expires_at IS NULL OR expires_at > ?4)";

/// The rows of one host (sorted by id afterwards: a host has few). ?1 host.
const ON_HOST: &str = "SELECT id, host, pid, process_start, started_at, alive_until \
     FROM runners WHERE host = ?1";

/// Cuts short the leases of a dead runner's running tasks. ?1 runner, ?2 now.
const REAP_TASKS: &str = "UPDATE tasks SET lease_until = ?2 \
     WHERE runner = ?1 AND status IN ('working', 'input_required') \
     AND lease_until IS NOT NULL AND lease_until > ?2";

/// Deletes the rows of runners not alive since ?1.
const FORGET_DEAD: &str = "DELETE FROM runners WHERE alive_until <= ?1";

/// The statements of runner liveness, in one backend's parameter syntax.
#[derive(Debug)]
pub(crate) struct RunnerStatements {
    pub(crate) heartbeat: String,
    pub(crate) retire: String,
    pub(crate) release: String,
    pub(crate) on_host: String,
    pub(crate) reap_tasks: String,
    pub(crate) forget_dead: String,
}

impl RunnerStatements {
    /// Every statement, through the backend's `numbered`.
    pub(crate) fn new(numbered: impl Fn(&str) -> String) -> Self {
        Self {
            heartbeat: numbered(HEARTBEAT),
            retire: numbered(RETIRE),
            release: numbered(RELEASE),
            on_host: numbered(ON_HOST),
            reap_tasks: numbered(REAP_TASKS),
            forget_dead: numbered(FORGET_DEAD),
        }
    }
}

fn statements<B: Backend>(db: &B) -> &'static RunnerStatements {
    &db.statements().runners
}

pub(crate) async fn heartbeat<B: Backend>(db: &B, runner: &RunnerRecord) -> Result<(), StoreError> {
    let call = Call::new(&statements(db).heartbeat)
        .bind(runner.id.as_str())
        .bind(runner.host.as_str())
        .bind(i64::from(runner.pid))
        .bind(runner.process_start.as_str())
        .bind(runner.started_at)
        .bind(runner.alive_until);
    db.execute(call).await.map(|_| ())
}

pub(crate) async fn retire<B: Backend>(db: &B, runner: &str) -> Result<(), StoreError> {
    db.execute(Call::new(&statements(db).retire).bind(runner))
        .await
        .map(|_| ())
}

pub(crate) async fn release<B: Backend>(
    db: &B,
    params: &ReleaseLeasesParams,
) -> Result<u64, StoreError> {
    let mut released = 0;
    for (id, generation) in &params.leases {
        let call = Call::new(&statements(db).release)
            .bind(id.as_str())
            .bind(params.runner.as_str())
            .bind(counter_to_db("lease generation", *generation)?)
            .bind(params.now);
        released += db.execute(call).await?;
    }
    Ok(released)
}

pub(crate) async fn on_host<B: Backend>(
    db: &B,
    host: &str,
) -> Result<Vec<RunnerRecord>, StoreError> {
    let rows = db
        .fetch_all(Call::new(&statements(db).on_host).bind(host))
        .await?;
    let mut runners = rows
        .iter()
        .map(row_to_runner)
        .collect::<Result<Vec<_>, _>>()?;
    runners.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(runners)
}

pub(crate) async fn reap<B: Backend>(
    db: &B,
    runner: &str,
    now: DateTime<Utc>,
) -> Result<u64, StoreError> {
    // Tasks first: a crash between the two leaves the row, and the next start reaps
    // it again.
    let cut = db
        .execute(Call::new(&statements(db).reap_tasks).bind(runner).bind(now))
        .await?;
    retire(db, runner).await?;
    Ok(cut)
}

pub(crate) async fn forget_dead<B: Backend>(
    db: &B,
    before: DateTime<Utc>,
) -> Result<u64, StoreError> {
    db.execute(Call::new(&statements(db).forget_dead).bind(before))
        .await
}

/// Reads a row of [`ON_HOST`].
pub(crate) fn row_to_runner(row: &impl Columns) -> Result<RunnerRecord, StoreError> {
    let pid = row.int("pid")?;
    Ok(RunnerRecord {
        id: row.text("id")?,
        host: row.text("host")?,
        pid: u32::try_from(pid).map_err(|_| corrupt("runner pid", pid))?,
        process_start: row.text("process_start")?,
        started_at: row.at("started_at")?,
        alive_until: row.at("alive_until")?,
    })
}

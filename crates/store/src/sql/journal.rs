//! The journal of finished steps ([`crate::journal`]) on both SQL backends: one fenced
//! insert per step (SQLite runs it in its writer's group commit), one select per read.

use super::rows::Columns;
use super::values::{corrupt, counter_to_db, from_json, row_to_record, to_json};
use super::{Backend, Call, Dialect};
use crate::error::StoreError;
use crate::journal::{JournalEntry, RecordStep, Recorded};
use mcp_tasks_protocol::TaskId;

/// The journal's statements, in a backend's dialect.
#[derive(Debug)]
pub(crate) struct JournalStatements {
    /// Records step ?2 of task ?1 (attempt ?3, output ?4 JSON, at ?5) while the task
    /// is running, unexpired at ?5 and, when ?6 is set, at lease generation ?6; a step
    /// already recorded is left as it is (no row changed).
    pub(crate) record_step: String,
    /// The steps of task ?1, oldest first.
    pub(crate) steps: String,
}

const RECORD_STEP: &str = concat!(
    "INSERT INTO task_journal (task_id, step, attempt, output, recorded_at)",
    " SELECT id, ?2, ?3, ?4, ?5 FROM tasks WHERE id = ?1",
    " AND status IN ('working', 'input_required')",
    " AND (expires_at IS NULL OR expires_at > ?5)",
    " AND (CAST(?6 AS BIGINT) IS NULL OR lease_generation = ?6)",
    " ON CONFLICT (task_id, step) DO NOTHING"
);

const STEPS: &str = "SELECT step, attempt, output, recorded_at FROM task_journal \
     WHERE task_id = ?1 ORDER BY recorded_at, step";

impl JournalStatements {
    pub(crate) fn new(dialect: &Dialect) -> Self {
        Self {
            record_step: dialect.numbered(RECORD_STEP),
            steps: dialect.numbered(STEPS),
        }
    }
}

/// The insert of one step, its values bound.
pub(crate) fn record_call<'a>(
    statements: &'static JournalStatements,
    step: &'a RecordStep,
) -> Result<Call<'a>, StoreError> {
    let fence = step
        .lease_generation
        .map(|g| counter_to_db("lease generation", g))
        .transpose()?;
    Ok(Call::new(&statements.record_step)
        .bind(step.id.as_str())
        .bind(step.step.as_str())
        .bind(i64::from(step.attempt))
        .bind(to_json(&step.output)?)
        .bind(step.now)
        .bind(fence))
}

/// Records a step with one statement (PostgreSQL; SQLite runs the insert in its
/// writer's group commit).
#[cfg(feature = "postgres")]
pub(crate) async fn record_step<B: Backend>(
    db: &B,
    step: &RecordStep,
) -> Result<Recorded, StoreError> {
    let call = record_call(&db.statements().journal, step)?;
    if db.execute(call).await? > 0 {
        return Ok(Recorded::New);
    }
    why_not_recorded(db, step).await
}

/// Why the insert of `step` changed no row: the task is gone, ended, held by another
/// lease generation, or the step was recorded already.
pub(crate) async fn why_not_recorded<B: Backend>(
    db: &B,
    step: &RecordStep,
) -> Result<Recorded, StoreError> {
    let get = Call::new(&db.statements().get)
        .bind(step.id.as_str())
        .bind(step.now);
    let Some(row) = db.fetch_optional(get).await? else {
        return Err(StoreError::NotFound);
    };
    let current = row_to_record(&row)?;
    if current.status.is_terminal() {
        return Err(StoreError::Conflict {
            current: Box::new(current),
        });
    }
    if step
        .lease_generation
        .is_some_and(|held| held != current.lease_generation)
    {
        return Err(StoreError::LeaseConflict {
            current: Box::new(current),
        });
    }
    Ok(Recorded::AlreadyThere)
}

/// The task's steps, oldest first.
pub(crate) async fn steps<B: Backend>(
    db: &B,
    id: &TaskId,
) -> Result<Vec<JournalEntry>, StoreError> {
    let call = Call::new(&db.statements().journal.steps).bind(id.as_str());
    let rows = db.fetch_all(call).await?;
    rows.iter().map(row_to_journal_entry).collect()
}

/// Reads one row of [`JournalStatements::steps`].
pub(crate) fn row_to_journal_entry(row: &impl Columns) -> Result<JournalEntry, StoreError> {
    let attempt = row.int("attempt")?;
    Ok(JournalEntry {
        step: row.text("step")?,
        attempt: u32::try_from(attempt).map_err(|_| corrupt("journal attempt", attempt))?,
        output: from_json("journal output", &row.text("output")?)?,
        recorded_at: row.at("recorded_at")?,
    })
}

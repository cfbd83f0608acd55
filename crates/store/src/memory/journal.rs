//! The memory store's journal of finished steps ([`StepJournal`]): a list per task
//! beside the records, under the same lock, removed with its record.

use super::tables::{is_expired, lease_conflict};
use super::MemoryStore;
use crate::error::StoreError;
use crate::journal::{JournalEntry, RecordStep, Recorded, StepJournal};
use async_trait::async_trait;
use mcp_tasks_protocol::TaskId;

#[async_trait]
impl StepJournal for MemoryStore {
    async fn steps(&self, id: &TaskId) -> Result<Vec<JournalEntry>, StoreError> {
        Ok(self
            .inner
            .lock()
            .journals
            .get(id)
            .cloned()
            .unwrap_or_default())
    }

    async fn record_step(&self, step: &RecordStep) -> Result<Recorded, StoreError> {
        let mut inner = self.inner.lock();
        let record = inner
            .record(&step.id)
            .filter(|r| !is_expired(r, step.now))
            .ok_or(StoreError::NotFound)?;
        if record.status.is_terminal() {
            return Err(StoreError::Conflict {
                current: Box::new(record.to_record()),
            });
        }
        if step
            .lease_generation
            .is_some_and(|held| held != record.lease_generation)
        {
            return Err(lease_conflict(record));
        }
        let journal = inner.journals.entry(step.id.clone()).or_default();
        if journal.iter().any(|e| e.step == step.step) {
            return Ok(Recorded::AlreadyThere);
        }
        journal.push(JournalEntry {
            step: step.step.clone(),
            attempt: step.attempt,
            output: step.output.clone(),
            recorded_at: step.now,
        });
        Ok(Recorded::New)
    }
}

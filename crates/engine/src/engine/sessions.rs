//! 2025-11-25 sessions in the shared store, so that any replica can serve a session
//! another opened: thin pass-throughs that keep the server from reaching the store.

use chrono::DateTime;
use mcp_tasks_store::SessionRecord;

use crate::engine::Engine;
use crate::error::EngineError;

impl Engine {
    /// Stores a 2025-11-25 session in the shared store (no-op on single-process stores).
    ///
    /// # Errors
    /// Store failures.
    pub async fn save_session(&self, session: &SessionRecord) -> Result<(), EngineError> {
        match self.store().sessions() {
            Some(sessions) => Ok(sessions.save_session(session).await?),
            None => Ok(()),
        }
    }

    /// Reads a session another replica opened.
    ///
    /// # Errors
    /// Store failures.
    pub async fn load_session(&self, id: &str) -> Result<Option<SessionRecord>, EngineError> {
        match self.store().sessions() {
            Some(sessions) => Ok(sessions.load_session(id).await?),
            None => Ok(None),
        }
    }

    /// Forgets a session in the shared store.
    ///
    /// # Errors
    /// Store failures.
    pub async fn delete_session(&self, id: &str) -> Result<(), EngineError> {
        match self.store().sessions() {
            Some(sessions) => Ok(sessions.delete_session(id).await?),
            None => Ok(()),
        }
    }

    /// Sweeps the shared store's sessions: marks `alive` (held by this process and not
    /// idle) as in use now, then deletes those no replica marked or stored within
    /// `idle_timeout`. Returns how many were deleted.
    ///
    /// # Errors
    /// Store failures.
    pub async fn sweep_sessions(
        &self,
        alive: &[String],
        idle_timeout: std::time::Duration,
    ) -> Result<u64, EngineError> {
        let Some(sessions) = self.store().sessions() else {
            return Ok(0);
        };
        let now = self.inner.core.now();
        sessions.keep_sessions(alive, now).await?;
        let idle = chrono::Duration::from_std(idle_timeout).unwrap_or(chrono::Duration::MAX);
        // Never before 1970: PostgreSQL refuses timestamps chrono can still represent.
        let cutoff = now
            .checked_sub_signed(idle)
            .unwrap_or(DateTime::UNIX_EPOCH)
            .max(DateTime::UNIX_EPOCH);
        Ok(sessions.delete_idle_sessions(cutoff).await?)
    }
}

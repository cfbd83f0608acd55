//! 2025-11-25 sessions in the shared database (`sessions` table), so that any replica
//! serves a session another opened: PostgreSQL's [`SessionStore`].

use super::queries;
use super::row::classify;
use super::PgStore;
use crate::error::StoreError;
use crate::session::{SessionRecord, SessionStore};
use crate::sql::rows::decode_error;
use crate::sql::values::to_json;
use async_trait::async_trait;
use chrono::{DateTime, Utc};
use sqlx::Row;

#[async_trait]
impl SessionStore for PgStore {
    async fn save_session(&self, session: &SessionRecord) -> Result<(), StoreError> {
        sqlx::query(queries::SAVE_SESSION)
            .bind(&session.id)
            .bind(&session.principal)
            .bind(session.authenticated)
            .bind(&session.protocol_version)
            .bind(to_json(&session.client_capabilities)?)
            .bind(session.created_at)
            .execute(&self.pool)
            .await
            .map_err(classify)?;
        Ok(())
    }

    async fn load_session(&self, id: &str) -> Result<Option<SessionRecord>, StoreError> {
        let row = sqlx::query(queries::LOAD_SESSION)
            .bind(id)
            .fetch_optional(&self.pool)
            .await
            .map_err(classify)?;
        let Some(row) = row else { return Ok(None) };
        let caps: String = row.try_get("client_capabilities").map_err(decode_error)?;
        Ok(Some(SessionRecord {
            id: row.try_get("id").map_err(decode_error)?,
            principal: row.try_get("principal").map_err(decode_error)?,
            authenticated: row.try_get("authenticated").map_err(decode_error)?,
            protocol_version: row.try_get("protocol_version").map_err(decode_error)?,
            client_capabilities: serde_json::from_str(&caps).map_err(|e| {
                StoreError::Backend(format!("stored session capabilities are invalid: {e}").into())
            })?,
            created_at: row.try_get("created_at").map_err(decode_error)?,
        }))
    }

    async fn delete_session(&self, id: &str) -> Result<(), StoreError> {
        sqlx::query(queries::DELETE_SESSION)
            .bind(id)
            .execute(&self.pool)
            .await
            .map_err(classify)?;
        Ok(())
    }

    async fn keep_sessions(&self, ids: &[String], now: DateTime<Utc>) -> Result<(), StoreError> {
        if ids.is_empty() {
            return Ok(());
        }
        sqlx::query(queries::KEEP_SESSIONS)
            .bind(ids)
            .bind(now)
            .execute(&self.pool)
            .await
            .map_err(classify)?;
        Ok(())
    }

    async fn delete_idle_sessions(&self, cutoff: DateTime<Utc>) -> Result<u64, StoreError> {
        let done = sqlx::query(queries::DELETE_IDLE_SESSIONS)
            .bind(cutoff)
            .execute(&self.pool)
            .await
            .map_err(classify)?;
        Ok(done.rows_affected())
    }
}

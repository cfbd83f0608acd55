//! The first steps of every task creation, shared by [`Engine::create`] and the
//! deferred start of `deferred`: the quota slot, and the new record with the settings in
//! force.

use mcp_tasks_protocol::{TaskId, TaskStatus};
use mcp_tasks_store::{RequestJson, TaskRecord};
use serde_json::Value;

use crate::caller::Caller;
use crate::core::now_ms;
use crate::engine::{CreateParams, Engine};
use crate::error::EngineError;

impl Engine {
    /// Takes a quota slot for `caller`, or says which limit refuses it.
    pub(crate) fn take_slot(&self, caller: &Caller) -> Result<crate::quota::Slot, EngineError> {
        let inner = &self.inner;
        inner.executor.quota.acquire(caller).map_err(|reason| {
            crate::audit::refused(&caller.principal, &reason);
            inner.core.activity.count(|a| a.quota_refusals += 1);
            EngineError::QuotaExceeded(reason)
        })
    }

    /// The record of a new task (`working`, owned by the caller, with the settings in
    /// force), not yet stored; and the capabilities its client declared.
    pub(crate) fn new_record(&self, params: CreateParams) -> (TaskRecord, Value) {
        let inner = &self.inner;
        let config = &inner.core.config;
        let now = now_ms();
        let ttl = config.effective_ttl(params.requested_ttl);
        let record = TaskRecord {
            id: TaskId::generate(),
            owner: params.caller.principal.clone(),
            session: params.caller.session.clone(),
            status: TaskStatus::Working,
            status_message: None,
            created_at: now,
            last_updated_at: now,
            ttl: Some(ttl),
            expires_at: chrono::Duration::from_std(ttl)
                .ok()
                .and_then(|d| now.checked_add_signed(d)),
            poll_interval: Some(config.poll_interval),
            method: params.method,
            request: RequestJson::from_value(&params.request),
            outcome: None,
            runner: Some(inner.core.runner_id.clone()),
            version: 0,
            input_requests: Default::default(),
            lease_until: config
                .lease_ttl
                .and_then(|l| chrono::Duration::from_std(l).ok())
                .and_then(|l| now.checked_add_signed(l)),
            lease_generation: u64::from(config.lease_ttl.is_some()),
            external: None,
        };
        (record, params.client_capabilities)
    }
}

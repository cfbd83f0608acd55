//! [`Sessions`]: the table of the sessions this process holds, and the tasks that plain
//! calls wait on. Its rules (the size limit and which session to forget, the idle sweep,
//! a session another replica opened) live here, so that what routes messages to
//! sessions (notifications, questions) takes this table and nothing larger.

use mcp_tasks_engine::Engine;
use mcp_tasks_protocol::TaskId;
use parking_lot::Mutex;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;

use crate::session::{least_needed, Session};

/// The sessions held by this process, by id, and the plain calls waiting on tasks.
pub(crate) struct Sessions {
    /// Most sessions held at once (see `ServerConfig::max_sessions`).
    max_sessions: usize,
    table: Mutex<HashMap<String, Arc<Session>>>,
    /// Tasks that plain calls became, while their call (or a `task_wait`) waits on
    /// them, and the session of that call (see [`Sessions::attach_plain_wait`]).
    plain_waits: Mutex<HashMap<TaskId, String>>,
}

impl Sessions {
    /// An empty table holding at most `max_sessions` (at least one).
    pub(crate) fn new(max_sessions: usize) -> Self {
        Sessions {
            max_sessions,
            table: Mutex::default(),
            plain_waits: Mutex::default(),
        }
    }

    /// Opens a session owned by `principal` (`None`: the session itself is the
    /// principal).
    pub(crate) fn open(&self, principal: Option<String>) -> Arc<Session> {
        let id = TaskId::generate().to_string();
        let principal = principal.unwrap_or_else(|| format!("session:{id}"));
        self.hold(Arc::new(Session::new(id, principal, false)))
    }

    /// Opens a session for an authenticated subject: its tasks are bound to the subject,
    /// visible from any of the subject's sessions and to nobody else.
    pub(crate) fn open_subject(&self, subject: String) -> Arc<Session> {
        let id = TaskId::generate().to_string();
        self.hold(Arc::new(Session::new(id, subject, true)))
    }

    /// Adds `session` to the table, first making room at the size limit (the session
    /// unused the longest goes, see [`least_needed`]); returns the session held under
    /// its id (an existing one when another request added it first).
    pub(crate) fn hold(&self, session: Arc<Session>) -> Arc<Session> {
        let evicted = {
            let mut sessions = self.table.lock();
            if let Some(held) = sessions.get(session.id()) {
                return Arc::clone(held);
            }
            let evicted = if sessions.len() >= self.max_sessions.max(1) {
                least_needed(sessions.values())
                    .map(|s| s.id().to_string())
                    .and_then(|id| sessions.remove(&id))
            } else {
                None
            };
            sessions.insert(session.id().to_string(), Arc::clone(&session));
            evicted
        };
        if let Some(old) = evicted {
            tracing::info!(
                max_sessions = self.max_sessions,
                "session limit reached: forgot the session unused the longest"
            );
            old.detach_outbound();
            old.cancel_all_requests();
        }
        session
    }

    /// Looks a session up by id.
    pub(crate) fn get(&self, id: &str) -> Option<Arc<Session>> {
        self.table.lock().get(id).cloned()
    }

    /// How many sessions this process holds.
    pub(crate) fn count(&self) -> usize {
        self.table.lock().len()
    }

    /// Every session held now (to send them all one notification).
    pub(crate) fn all(&self) -> Vec<Arc<Session>> {
        self.table.lock().values().cloned().collect()
    }

    /// Finds a session for a client request (and marks it used): one opened here, or
    /// one another replica opened and stored in `engine`'s shared database (it is then
    /// served here too; its streams stay where they are).
    pub(crate) async fn find(&self, engine: &Engine, id: &str) -> Option<Arc<Session>> {
        let known = self.table.lock().get(id).map(|s| {
            // Touched under the table's lock, so the idle sweep cannot drop it between
            // the lookup and the touch.
            s.touch();
            Arc::clone(s)
        });
        if known.is_some() {
            return known;
        }
        let stored = match engine.load_session(id).await {
            Ok(Some(r)) => r,
            Ok(None) => return None,
            Err(e) => {
                tracing::warn!(error = %e, "could not read a shared session");
                return None;
            }
        };
        let session = Arc::new(Session::new(
            stored.id.clone(),
            stored.principal,
            stored.authenticated,
        ));
        session.set_negotiated(&stored.protocol_version, stored.client_capabilities);
        session.mark_initialized();
        Some(self.hold(session))
    }

    /// Stores an initialized session in `engine`'s database so that other replicas can
    /// serve it.
    pub(crate) async fn share(engine: &Engine, session: &Session) {
        let Some(version) = session.protocol_version() else {
            return;
        };
        let record = mcp_tasks_engine::SessionRecord {
            id: session.id().to_string(),
            principal: session.caller().principal,
            authenticated: session.subject().is_some(),
            protocol_version: version,
            client_capabilities: session.client_capabilities(),
            created_at: engine.now(),
        };
        if let Err(e) = engine.save_session(&record).await {
            tracing::warn!(error = %e, "could not share the session with other replicas");
        }
    }

    /// Ends a session: its synchronous calls are cancelled, its tasks go on.
    pub(crate) fn close(&self, id: &str) -> bool {
        let removed = self.table.lock().remove(id);
        if let Some(s) = &removed {
            s.cancel_all_requests();
        }
        removed.is_some()
    }

    /// Forgets the sessions [`Session::is_idle`] for `timeout` at `now`; returns how
    /// many went and the ids of those still held.
    pub(crate) fn forget_idle(
        &self,
        now: tokio::time::Instant,
        timeout: std::time::Duration,
    ) -> (usize, Vec<String>) {
        let mut sessions = self.table.lock();
        let before = sessions.len();
        sessions.retain(|_, s| !s.is_idle(now, timeout));
        let alive: Vec<String> = sessions.keys().cloned().collect();
        (before - sessions.len(), alive)
    }

    /// Makes `tx` (a plain call's stream on `session`) task `task`'s while the call
    /// waits on it: the task's questions and log messages go there, without
    /// related-task `_meta` (the client asked for no task, and may never learn of
    /// one), and only `session` may answer its questions meanwhile.
    pub(crate) fn attach_plain_wait(
        &self,
        session: &Session,
        task: &TaskId,
        tx: tokio::sync::mpsc::Sender<Value>,
    ) {
        self.plain_waits
            .lock()
            .insert(task.clone(), session.id().to_string());
        session.open_result_stream(task, tx);
    }

    /// Undoes [`Sessions::attach_plain_wait`].
    pub(crate) fn detach_plain_wait(&self, session: &Session, task: &TaskId) {
        let mut waits = self.plain_waits.lock();
        if waits.get(task).is_some_and(|s| s == session.id()) {
            waits.remove(task);
        }
        drop(waits);
        session.close_result_stream(task);
    }

    /// The session whose plain call waits on `task` now, if one does.
    pub(crate) fn plain_wait_session(&self, task: &TaskId) -> Option<String> {
        self.plain_waits.lock().get(task).cloned()
    }

    /// Whether messages about `task` carry its related-task `_meta`: not while a
    /// plain call waits on it.
    pub(crate) fn relates_to_task(&self, task: &TaskId) -> bool {
        self.plain_wait_session(task).is_none()
    }
}

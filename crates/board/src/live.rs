//! Changes of tasks, fanned out to open board pages over SSE.
//!
//! One listener per board reads the engine's events (which, on PostgreSQL, include
//! changes made by other replicas) and keeps the latest progress of each running task,
//! which the store does not hold; each open page filters the stream by what its viewer
//! may see. A page that falls behind is told to re-read (`resync`), never left stale.

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use mcp_tasks_engine::{Caller, Progress, TaskEvent, TaskRecord};
use mcp_tasks_protocol::TaskId;
use mcp_tasks_server::Server;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::broadcast;
use tokio_stream::wrappers::errors::BroadcastStreamRecvError;
use tokio_stream::wrappers::BroadcastStream;

use crate::view;
use crate::Board;

/// Most tasks whose progress is remembered; the oldest reports go first.
const PROGRESS_CAPACITY: usize = 10_000;

/// One change a page may be told of.
#[derive(Debug, Clone)]
pub(crate) enum BoardEvent {
    /// The task's record changed.
    Task(Arc<TaskRecord>),
    /// A running task reported progress.
    Progress {
        task: TaskId,
        owner: String,
        progress: Progress,
    },
}

/// The fan-out and the progress cache.
#[derive(Debug)]
pub(crate) struct Live {
    events: broadcast::Sender<BoardEvent>,
    latest: Arc<Mutex<Latest>>,
}

/// The latest progress and the owner of tasks seen running.
#[derive(Debug, Default)]
struct Latest {
    progress: HashMap<TaskId, Progress>,
    owners: HashMap<TaskId, String>,
}

impl Live {
    /// Starts listening to `server`'s engine.
    pub(crate) fn start(server: &Server) -> Self {
        let (events, _) = broadcast::channel(1024);
        let latest = Arc::new(Mutex::new(Latest::default()));
        let mut engine_events = server.engine().subscribe();
        let engine = server.engine().clone();
        let out = events.clone();
        let cache = Arc::clone(&latest);
        let stop = server.shutdown_token();
        tokio::spawn(async move {
            loop {
                let event = tokio::select! {
                    _ = stop.cancelled() => return,
                    event = engine_events.recv() => event,
                };
                match event {
                    Ok(TaskEvent::Changed(record)) => {
                        forget_finished(&cache, &record);
                        let _ = out.send(BoardEvent::Task(record));
                    }
                    Ok(TaskEvent::Progress { task, progress, .. }) => {
                        let owner = match known_owner(&cache, &task) {
                            Some(owner) => owner,
                            None => {
                                let operator = Caller::anonymous("board", None).as_operator();
                                match engine.get(&task, &operator).await {
                                    Ok(record) => {
                                        remember_owner(&cache, &record);
                                        record.owner
                                    }
                                    Err(_) => continue,
                                }
                            }
                        };
                        remember_progress(&cache, &task, &progress);
                        let _ = out.send(BoardEvent::Progress {
                            task,
                            owner,
                            progress,
                        });
                    }
                    Err(broadcast::error::RecvError::Lagged(_)) => continue,
                    Err(broadcast::error::RecvError::Closed) => return,
                }
            }
        });
        Live { events, latest }
    }

    /// The latest progress of `task`, if it reported any while running here or on a
    /// replica whose events reach this one.
    pub(crate) fn progress(&self, task: &TaskId) -> Option<Progress> {
        self.latest.lock().progress.get(task).cloned()
    }
}

fn known_owner(cache: &Mutex<Latest>, task: &TaskId) -> Option<String> {
    cache.lock().owners.get(task).cloned()
}

/// Forgets a finished task: it reports no more progress, and its last report stays
/// visible only through its record. Running tasks are not remembered here: only
/// those that report progress are (their owner is read at their first report), so a
/// task that never reports costs the board nothing.
fn forget_finished(cache: &Mutex<Latest>, record: &TaskRecord) {
    if record.status.is_terminal() {
        let mut latest = cache.lock();
        latest.owners.remove(&record.id);
        latest.progress.remove(&record.id);
    }
}

fn remember_owner(cache: &Mutex<Latest>, record: &TaskRecord) {
    let mut latest = cache.lock();
    if record.status.is_terminal() {
        latest.owners.remove(&record.id);
        latest.progress.remove(&record.id);
        return;
    }
    if latest.owners.len() >= PROGRESS_CAPACITY {
        latest.owners.clear();
    }
    latest
        .owners
        .insert(record.id.clone(), record.owner.clone());
}

fn remember_progress(cache: &Mutex<Latest>, task: &TaskId, progress: &Progress) {
    let mut latest = cache.lock();
    if latest.progress.len() >= PROGRESS_CAPACITY {
        latest.progress.clear();
    }
    latest.progress.insert(task.clone(), progress.clone());
}

/// `GET /board/api/events`: the changes this viewer may see, as server-sent events
/// (`task` with a list row, `progress` with a task id and its report, `resync` when
/// the page must re-read the list).
pub(crate) async fn events(State(board): State<Board>, headers: HeaderMap) -> Response {
    let viewer = match board.viewer(&headers) {
        Ok(viewer) => viewer,
        Err(refused) => return refused.into_response(),
    };
    let caller = viewer.caller;
    let signed_in = board.needs_login();
    // Open pages end with the server, so that a graceful shutdown is not held open; a
    // signed-in viewer's stream ends when their session does or is due for renewal
    // (the page then asks again and is renewed or sent to sign in), so that a person
    // removed from a group stops seeing what it showed them.
    let shutdown = board.server().shutdown_token().cancelled_owned();
    let left = viewer.valid_until.map(|until| {
        let secs = until.saturating_sub(chrono::Utc::now().timestamp()).max(0);
        Duration::from_secs(u64::try_from(secs).unwrap_or(0))
    });
    let stop = async move {
        match left {
            Some(left) => {
                tokio::select! {
                    () = shutdown => {}
                    () = tokio::time::sleep(left) => {}
                }
            }
            None => shutdown.await,
        }
    };
    let stream = BroadcastStream::new(board.inner.live.events.subscribe())
        .filter_map(move |item| {
            let event = match item {
                // Approvers (and other assignees) follow the tasks that ask them.
                Ok(BoardEvent::Task(record))
                    if caller.may_access(&record.owner)
                        || crate::people::asks(&record, &caller) =>
                {
                    let progress = board.inner.live.progress(&record.id);
                    let mut row =
                        view::summary(&record, progress.as_ref(), caller.operator && signed_in);
                    // Whether the row belongs in the viewer's list (their own tasks,
                    // or everyone's for an operator), as the list and its counts read
                    // it; an approver follows a task that asks them without it joining
                    // their list.
                    row["listed"] =
                        serde_json::json!(caller.operator || caller.principal == record.owner);
                    Some(Event::default().event("task").data(row.to_string()))
                }
                Ok(BoardEvent::Progress {
                    task,
                    owner,
                    progress,
                }) if caller.may_access(&owner) => {
                    let data = serde_json::json!({
                        "id": task.as_str(),
                        "progress": view::progress_json(&progress),
                    });
                    Some(Event::default().event("progress").data(data.to_string()))
                }
                Ok(_) => None,
                Err(BroadcastStreamRecvError::Lagged(_)) => {
                    Some(Event::default().event("resync").data("{}"))
                }
            };
            std::future::ready(event.map(Ok::<_, Infallible>))
        })
        .take_until(stop);
    Sse::new(stream)
        .keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
        .into_response()
}

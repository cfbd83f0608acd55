//! Posting: a question that starts waiting becomes a message in the channel, and a
//! message whose question stops waiting for another reason than a click in Slack
//! (answered on the board or by the agent's client, the task ended) loses its buttons.
//!
//! The changes come from the engine's transition observers, the same source the
//! webhooks' outbox is fed from: the process that made a change (exactly one) hears
//! of it, so one message is posted per question however many replicas run. What was
//! posted is kept in this process's memory only ([`Messages`]): after a restart a
//! question asked again (its task resumed) is posted again, and older messages keep
//! working (their buttons name the task and question), but are no longer marked when
//! their question is answered elsewhere.

use mcp_tasks_engine::{InputRequest, TaskRecord, TransitionObserver};
use mcp_tasks_protocol::TaskStatus;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::Arc;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::blocks::{question_message, settled_message};
use super::web::MessageRef;
use super::Slack;
use crate::links::fingerprint;

/// At most this many messages are remembered; past it new ones are posted but not
/// marked when answered elsewhere (their buttons still work).
const MAX_REMEMBERED: usize = 10_000;

/// A message posted for a question.
#[derive(Debug, Clone)]
pub(crate) struct Posted {
    /// Where it is.
    pub(crate) at: MessageRef,
    /// The question as it was asked (for the message once it is settled).
    pub(crate) request: InputRequest,
}

/// The messages this process posted, by task and question key.
#[derive(Debug, Default)]
pub(crate) struct Messages {
    posted: Mutex<HashMap<(String, String), Posted>>,
}

impl Messages {
    /// Takes the message of `task`'s question `key` out (an interaction answers it:
    /// the answer's own change must not mark it "answered elsewhere").
    pub(crate) fn take(&self, task: &str, key: &str) -> Option<Posted> {
        self.posted
            .lock()
            .remove(&(task.to_string(), key.to_string()))
    }

    /// Puts a message (back) in.
    pub(crate) fn put(&self, task: &str, key: &str, posted: Posted) {
        let mut map = self.posted.lock();
        if map.len() < MAX_REMEMBERED {
            map.insert((task.to_string(), key.to_string()), posted);
        }
    }

    fn get(&self, task: &str, key: &str) -> Option<Posted> {
        self.posted
            .lock()
            .get(&(task.to_string(), key.to_string()))
            .cloned()
    }

    fn has(&self, task: &str, key: &str) -> bool {
        self.posted
            .lock()
            .contains_key(&(task.to_string(), key.to_string()))
    }

    fn has_task(&self, task: &str) -> bool {
        self.posted.lock().keys().any(|(t, _)| t == task)
    }

    fn keys_of(&self, task: &str) -> Vec<String> {
        self.posted
            .lock()
            .keys()
            .filter(|(t, _)| t == task)
            .map(|(_, k)| k.clone())
            .collect()
    }
}

/// The observer that queues the changes the poster acts on: tasks that wait, and tasks
/// with a message posted here.
pub(crate) fn observer(
    messages: Arc<Messages>,
    queue: mpsc::UnboundedSender<TaskRecord>,
) -> TransitionObserver {
    Arc::new(move |record: &TaskRecord| {
        if record.status == TaskStatus::InputRequired || messages.has_task(record.id.as_str()) {
            let _ = queue.send(record.clone());
        }
    })
}

/// Acts on each queued change until the server stops.
pub(crate) async fn run(
    slack: Slack,
    mut changes: mpsc::UnboundedReceiver<TaskRecord>,
    stop: CancellationToken,
) {
    loop {
        let record = tokio::select! {
            _ = stop.cancelled() => return,
            record = changes.recv() => match record {
                Some(record) => record,
                None => return,
            },
        };
        settle(&slack, &record).await;
        if record.status == TaskStatus::InputRequired {
            post(&slack, &record).await;
        }
    }
}

/// Posts each outstanding question of `record` not posted yet.
async fn post(slack: &Slack, record: &TaskRecord) {
    let task = record.id.as_str();
    let config = slack.config();
    for (key, request) in &record.input_requests {
        if !request.is_outstanding() || slack.messages().has(task, key) {
            continue;
        }
        let (text, blocks) = question_message(record, key, request, config.public_url.as_deref());
        match slack
            .web()
            .post_message(&config.channel, &text, blocks)
            .await
        {
            Ok(at) => {
                tracing::debug!(task_id = %task, key, channel = %at.channel, ts = %at.ts, "slack: question posted");
                slack.messages().put(
                    task,
                    key,
                    Posted {
                        at,
                        request: request.clone(),
                    },
                );
            }
            Err(e) => {
                tracing::warn!(task_id = %task, key, error = %e, "slack: posting the question failed; it is answered on the board");
            }
        }
    }
}

/// Marks the messages of `record`'s questions that no longer wait (or were asked
/// again differently) and forgets them.
async fn settle(slack: &Slack, record: &TaskRecord) {
    let task = record.id.as_str();
    for key in slack.messages().keys_of(task) {
        let Some(posted) = slack.messages().get(task, &key) else {
            continue;
        };
        let waiting = !record.status.is_terminal()
            && record.input_requests.get(&key).is_some_and(|r| {
                r.is_outstanding() && fingerprint(r) == fingerprint(&posted.request)
            });
        // Taken here, or meanwhile by an interaction that answers it and says so.
        if waiting || slack.messages().take(task, &key).is_none() {
            continue;
        }
        let public_url = slack.config().public_url.as_deref();
        let (text, blocks) = settled_message(record, &posted.request, public_url);
        if let Err(e) = slack.web().update(&posted.at, &text, blocks).await {
            tracing::warn!(task_id = %task, key, error = %e, "slack: marking an answered question's message failed");
        }
    }
}

//! The outbox loop: deliveries written when a task changes, then claimed, posted and
//! retried by every process sharing the store.

use chrono::Utc;
use mcp_tasks_engine::{TaskRecord, TransitionObserver};
use mcp_tasks_protocol::TaskStatus;
use mcp_tasks_server::Server;
use mcp_tasks_store::{
    ClaimDeliveriesParams, Delivery, DeliveryResult, NewDelivery, TaskQuery, TaskStore,
};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, Notify};
use tokio_util::sync::CancellationToken;

use super::{payload, sign, NotifyConfig, NotifyOn};

/// Deliveries claimed per round.
const CLAIM_BATCH: usize = 16;
/// How long an idle sender waits before looking for deliveries another process left
/// (its claim expired) when nothing woke it.
const IDLE_RECHECK: Duration = Duration::from_secs(15);

/// How far back the start-up catch-up looks for ended tasks whose event may have been
/// lost to a crash (see [`catch_up`]): a restart comes soon after a crash, and older
/// endings are not news.
const CATCH_UP_ENDED: chrono::Duration = chrono::Duration::minutes(15);
/// At most this many tasks per status are looked at by the catch-up.
const CATCH_UP_LIMIT: usize = 10_000;

/// Sends webhook events; stops with the server.
#[derive(Debug, Clone)]
pub struct Notifier {
    wake: Arc<Notify>,
}

/// A notifier configured but not started: its transition observer is given to the
/// server when it starts ([`PreparedNotifier::observer`], so the engine knows every
/// party it tells from its first task), then it starts on that server
/// ([`PreparedNotifier::start`]).
pub struct PreparedNotifier {
    /// The sinks; `None` when there are none (nothing to start).
    config: Option<Arc<NotifyConfig>>,
    http: reqwest::Client,
    #[cfg(feature = "email")]
    mailer: Option<crate::email::Mailer>,
    queue: mpsc::UnboundedSender<TaskRecord>,
    changes: mpsc::UnboundedReceiver<TaskRecord>,
    wake: Arc<Notify>,
}

impl std::fmt::Debug for PreparedNotifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PreparedNotifier")
            .field("sinks", &self.config.as_ref().map_or(0, |c| c.sinks.len()))
            .finish()
    }
}

impl Notifier {
    /// Prepares telling `config`'s sinks of a server's tasks: checks the configuration
    /// and builds the HTTP client.
    ///
    /// # Errors
    /// When the configuration is invalid ([`NotifyConfig::check`]) or the HTTP client
    /// cannot be built.
    pub fn prepare(config: NotifyConfig) -> Result<PreparedNotifier, String> {
        config.check()?;
        let http = reqwest::Client::builder()
            .timeout(config.request_timeout)
            .user_agent(concat!("mcp-tasks/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| format!("building the webhook HTTP client: {e}"))?;
        let (queue, changes) = mpsc::unbounded_channel::<TaskRecord>();
        #[cfg(feature = "email")]
        let mailer = config
            .email
            .as_ref()
            .map(|e| {
                crate::email::Mailer::new(e, config.request_timeout.max(Duration::from_secs(30)))
            })
            .transpose()?;
        Ok(PreparedNotifier {
            config: (!config.sinks.is_empty() || config.mails()).then(|| Arc::new(config)),
            http,
            #[cfg(feature = "email")]
            mailer,
            queue,
            changes,
            wake: Arc::new(Notify::new()),
        })
    }

    /// Makes the sender look for due deliveries now (tests, and after a receiver is
    /// known to be back).
    pub fn wake(&self) {
        self.wake.notify_one();
    }
}

impl PreparedNotifier {
    /// The transition observer to give the server at start (it only queues the changes
    /// some sink wants); `None` without sinks.
    pub fn observer(&self) -> Option<TransitionObserver> {
        let wanted = Arc::clone(self.config.as_ref()?);
        let queue = self.queue.clone();
        Some(Arc::new(move |record: &TaskRecord| {
            let wants = NotifyOn::of_record(record).is_some_and(|on| wanted.wants(on));
            if wants {
                let _ = queue.send(record.clone());
            }
        }))
    }

    /// Starts telling the sinks of `server`'s tasks (whose engine was given
    /// [`PreparedNotifier::observer`]): spawns the enqueue and send loops, and a
    /// catch-up of endings a crash may have kept from the outbox.
    ///
    /// # Errors
    /// When sinks are configured on a store that keeps no webhook outbox
    /// ([`TaskStore::outbox`] is `None`: a custom store for tasks alone).
    pub fn start(self, server: &Server) -> Result<Notifier, String> {
        let PreparedNotifier {
            config,
            http,
            #[cfg(feature = "email")]
            mailer,
            queue,
            changes,
            wake,
        } = self;
        let notifier = Notifier {
            wake: Arc::clone(&wake),
        };
        let Some(config) = config else {
            return Ok(notifier);
        };
        let store = Arc::clone(server.engine().store());
        if store.outbox().is_none() {
            return Err(format!(
                "webhooks need a store with a delivery outbox, and the {} store keeps none",
                store.backend_name()
            ));
        }
        let stop = server.shutdown_token();
        tokio::spawn(catch_up(Arc::clone(&store), Arc::clone(&config), queue));
        // The people a question's assignees stand for ([groups] expanded).
        let people = server.clone();
        let expand: Expand =
            Arc::new(move |names: &[String]| people.config().approvals.people(names));
        tokio::spawn(enqueue_loop(
            Arc::clone(&store),
            Arc::clone(&config),
            changes,
            Arc::clone(&wake),
            expand,
        ));
        let runner = format!("notifier-{}", mcp_tasks_protocol::TaskId::generate());
        let counted = server.clone();
        let count: AttemptCounter = Arc::new(move |sink: &str, result: &'static str| {
            counted.count_webhook_attempt(sink, result)
        });
        let senders = Senders {
            http,
            #[cfg(feature = "email")]
            mailer,
        };
        tokio::spawn(send_loop(store, config, senders, wake, runner, stop, count));
        Ok(notifier)
    }
}

/// Writes one delivery per interested sink for each change that entered a status
/// (not for a message-only update in the same status: the store's timeline tells).
async fn enqueue_loop(
    store: Arc<dyn TaskStore>,
    config: Arc<NotifyConfig>,
    mut changes: mpsc::UnboundedReceiver<TaskRecord>,
    wake: Arc<Notify>,
    expand: Expand,
) {
    // `PreparedNotifier::start` checked that there is one.
    let Some(outbox) = store.outbox() else {
        return;
    };
    while let Some(record) = changes.recv().await {
        // Mail is keyed by question and person, not by the task's version: a question
        // handed to other people (an escalation) is news although the status stays.
        #[cfg(feature = "email")]
        enqueue_mails(outbox, &config, &record, &expand).await;
        #[cfg(not(feature = "email"))]
        let _ = &expand;
        let entered = match store.timeline(&record.id).await {
            Ok(timeline) => timeline
                .iter()
                .any(|e| e.version == record.version && e.status == record.status),
            Err(e) => {
                tracing::warn!(task_id = %record.id, error = %e, "webhook: reading the task's timeline failed; event not queued");
                continue;
            }
        };
        if !entered {
            continue;
        }
        let Some(on) = NotifyOn::of_record(&record) else {
            continue;
        };
        for sink in config.sinks.iter().filter(|s| s.on.contains(&on)) {
            let body = payload::body(&record, sink, &config, Utc::now());
            let delivery = NewDelivery {
                key: format!("{}:{}:{}", record.id, record.version, sink.name),
                sink: sink.name.clone(),
                payload: body.to_string(),
                created_at: Utc::now(),
            };
            match outbox.enqueue_delivery(&delivery).await {
                Ok(_) => {}
                Err(e) => tracing::warn!(
                    task_id = %record.id, sink = %sink.name, error = %e,
                    "webhook: storing the delivery failed; event not sent"
                ),
            }
        }
        wake.notify_one();
    }
}

/// The people a list of principals and groups stands for.
type Expand = Arc<dyn Fn(&[String]) -> Vec<String> + Send + Sync>;

/// Writes the mails `record` makes into the outbox (each once, by its key).
#[cfg(feature = "email")]
async fn enqueue_mails(
    outbox: &dyn mcp_tasks_store::DeliveryOutbox,
    config: &NotifyConfig,
    record: &TaskRecord,
    expand: &Expand,
) {
    let Some(email) = &config.email else { return };
    let places = crate::email::compose::Places {
        public_url: config.public_url.as_deref(),
        links: config.answer_links.as_ref(),
    };
    for mail in crate::email::mails(record, email, places, expand.as_ref(), Utc::now()) {
        let delivery = NewDelivery {
            key: mail.key,
            sink: crate::email::EMAIL_SINK.to_string(),
            payload: mail.payload.to_string(),
            created_at: Utc::now(),
        };
        if let Err(e) = outbox.enqueue_delivery(&delivery).await {
            tracing::warn!(task_id = %record.id, error = %e, "email: storing the mail failed; not sent");
        }
    }
}

/// Queues again, once at start, the event of every task that waits for a person and
/// of every task that ended in the last [`CATCH_UP_ENDED`]: a process that crashed
/// between a task's change and the writing of its delivery left the event unwritten,
/// and nothing else would write it. Enqueueing is idempotent (a delivery's key names
/// the task's version and the sink), so events already written are not sent twice.
async fn catch_up(
    store: Arc<dyn TaskStore>,
    config: Arc<NotifyConfig>,
    queue: mpsc::UnboundedSender<TaskRecord>,
) {
    let now = Utc::now();
    // A tool error is a `failed` event of a `completed` task: sinks for failures need
    // the completed tasks looked at too (the queue routes each record by its event).
    let mail = config.mails().then_some(
        [
            NotifyOn::InputRequired,
            NotifyOn::Failed,
            NotifyOn::Completed,
            NotifyOn::Cancelled,
        ]
        .into_iter(),
    );
    let mut wanted: Vec<TaskStatus> = config
        .sinks
        .iter()
        .flat_map(|s| s.on.iter().copied())
        .chain(mail.into_iter().flatten())
        .flat_map(|on| match on {
            NotifyOn::Failed => vec![TaskStatus::Failed, TaskStatus::Completed],
            on => vec![on.status()],
        })
        .collect();
    wanted.sort_by_key(|status| status.as_str());
    wanted.dedup();
    for status in wanted {
        let mut before = None;
        let mut seen = 0;
        loop {
            let page = store
                .query_tasks(&TaskQuery {
                    owner: None,
                    status: Some(status),
                    request_name: None,
                    id_prefix: None,
                    before: before.take(),
                    limit: 200,
                    now,
                })
                .await;
            let page = match page {
                Ok(page) => page,
                Err(e) => {
                    tracing::warn!(error = %e, %status, "webhook: looking for events lost to a crash failed");
                    break;
                }
            };
            seen += page.records.len();
            before = page.records.last().map(|r| (r.created_at, r.id.clone()));
            for record in page.records {
                let recent = status == TaskStatus::InputRequired
                    || record.last_updated_at >= now - CATCH_UP_ENDED;
                if recent && queue.send(record).is_err() {
                    return;
                }
            }
            if !page.has_more || seen >= CATCH_UP_LIMIT {
                break;
            }
        }
    }
}

/// Counts an attempt in the server's metrics: the sink's name and the result.
type AttemptCounter = Arc<dyn Fn(&str, &'static str) + Send + Sync>;

/// Claims due deliveries, posts them, records the result; sleeps until woken, a retry
/// falls due, or the idle recheck.
/// What deliveries are sent with: HTTP for webhooks, SMTP for mail.
struct Senders {
    http: reqwest::Client,
    #[cfg(feature = "email")]
    mailer: Option<crate::email::Mailer>,
}

async fn send_loop(
    store: Arc<dyn TaskStore>,
    config: Arc<NotifyConfig>,
    senders: Senders,
    wake: Arc<Notify>,
    runner: String,
    stop: CancellationToken,
    count: AttemptCounter,
) {
    // `PreparedNotifier::start` checked that there is one.
    let Some(outbox) = store.outbox() else {
        return;
    };
    // A claim outlives one POST by a margin; a process that dies while posting holds
    // its deliveries no longer than that.
    let claim_for = chrono::Duration::from_std(config.request_timeout + Duration::from_secs(2))
        .unwrap_or(chrono::Duration::seconds(30));
    loop {
        let now = Utc::now();
        let claimed = outbox
            .claim_deliveries(&ClaimDeliveriesParams {
                runner: runner.clone(),
                now,
                until: now + claim_for,
                limit: CLAIM_BATCH,
            })
            .await;
        let claimed = match claimed {
            Ok(claimed) => claimed,
            Err(e) => {
                tracing::warn!(error = %e, "webhook: claiming deliveries failed");
                Vec::new()
            }
        };
        let busy = claimed.len() == CLAIM_BATCH;
        // All at once: each claim covers one POST's time, not a queue of them.
        let attempts = claimed.iter().map(|delivery| async {
            let result = deliver(&senders, &config, delivery).await;
            let name = match &result {
                DeliveryResult::Delivered { .. } => "delivered",
                DeliveryResult::Retry { .. } => "retry",
                DeliveryResult::GaveUp { .. } => "gave_up",
            };
            count(&delivery.sink, name);
            if let Err(e) = outbox.finish_delivery(&delivery.key, &runner, &result).await {
                tracing::warn!(key = %delivery.key, error = %e, "webhook: recording the delivery's result failed");
            }
        });
        futures::future::join_all(attempts).await;
        if busy {
            continue;
        }
        // Retries fall due on their own schedule: while any delivery is pending, look
        // again after the shortest retry wait.
        let pending = outbox.pending_deliveries().await.unwrap_or(1);
        let wait = if pending > 0 {
            config
                .retry_initial
                .clamp(Duration::from_millis(50), IDLE_RECHECK)
        } else {
            IDLE_RECHECK
        };
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = wake.notified() => {}
            _ = tokio::time::sleep(wait) => {}
        }
    }
}

/// Sends one delivery (a mail, or a webhook's POST) and says what happens next.
async fn deliver(senders: &Senders, config: &NotifyConfig, delivery: &Delivery) -> DeliveryResult {
    #[cfg(feature = "email")]
    if delivery.sink == crate::email::EMAIL_SINK {
        if let Some(mailer) = &senders.mailer {
            return mail(mailer, config, delivery).await;
        }
    }
    post(&senders.http, config, delivery).await
}

/// Sends one mail and says what happens next: retried like a webhook, given up at once
/// when the mail server refuses it for good.
#[cfg(feature = "email")]
async fn mail(
    mailer: &crate::email::Mailer,
    config: &NotifyConfig,
    delivery: &Delivery,
) -> DeliveryResult {
    use crate::email::SendError;
    let now = Utc::now();
    let error = match mailer.send(&delivery.payload).await {
        Ok(()) => {
            tracing::debug!(key = %delivery.key, "email sent");
            return DeliveryResult::Delivered { at: now };
        }
        Err(SendError::GiveUp(error)) => {
            tracing::warn!(key = %delivery.key, %error, "email given up");
            return DeliveryResult::GaveUp { at: now, error };
        }
        Err(SendError::Retry(error)) => error,
    };
    let age = (now - delivery.created_at).to_std().unwrap_or_default();
    if age >= config.give_up_after {
        tracing::warn!(key = %delivery.key, %error, attempts = delivery.attempts, "email given up");
        return DeliveryResult::GaveUp { at: now, error };
    }
    let backoff = backoff(config, delivery.attempts);
    tracing::info!(key = %delivery.key, %error, attempts = delivery.attempts, retry_in = ?backoff, "email failed; will retry");
    DeliveryResult::Retry {
        next_attempt_at: now
            + chrono::Duration::from_std(backoff).unwrap_or(chrono::Duration::seconds(60)),
        error,
    }
}

/// Posts one delivery and says what happens next.
async fn post(
    http: &reqwest::Client,
    config: &NotifyConfig,
    delivery: &Delivery,
) -> DeliveryResult {
    let now = Utc::now();
    let Some(sink) = config.sinks.iter().find(|s| s.name == delivery.sink) else {
        return DeliveryResult::GaveUp {
            at: now,
            error: format!("no [[notify]] entry is named '{}' any more", delivery.sink),
        };
    };
    // Standard Webhooks: the id stays the same on every retry of this event, the
    // timestamp is this attempt's, and the signature covers both and the body as sent.
    let id = sign::message_id(&delivery.key);
    let timestamp = now.timestamp();
    let mut request = http
        .post(sink.url.expose())
        .header("content-type", "application/json")
        .header("x-mcp-tasks-delivery", delivery.key.as_str())
        .header("webhook-id", id.as_str())
        .header("webhook-timestamp", timestamp.to_string());
    if let Some(signature) =
        sign::signature_header(&sink.secrets, &id, timestamp, &delivery.payload)
    {
        request = request.header("webhook-signature", signature);
    }
    let mut request = request.body(delivery.payload.clone());
    for (name, value) in &sink.headers {
        request = request.header(name.as_str(), value.expose().as_str());
    }
    let error = match request.send().await {
        Ok(response) if response.status().is_success() => {
            tracing::debug!(key = %delivery.key, sink = %sink.name, "webhook delivered");
            return DeliveryResult::Delivered { at: now };
        }
        Ok(response) => format!("the receiver answered {}", response.status()),
        // Without the URL: it may be the receiver's credential (Slack's webhooks).
        Err(e) => format!("posting failed: {}", e.without_url()),
    };
    let age = (now - delivery.created_at).to_std().unwrap_or_default();
    if age >= config.give_up_after {
        tracing::warn!(key = %delivery.key, sink = %sink.name, %error, attempts = delivery.attempts, "webhook given up");
        return DeliveryResult::GaveUp { at: now, error };
    }
    let backoff = backoff(config, delivery.attempts);
    tracing::info!(key = %delivery.key, sink = %sink.name, %error, attempts = delivery.attempts, retry_in = ?backoff, "webhook failed; will retry");
    DeliveryResult::Retry {
        next_attempt_at: now
            + chrono::Duration::from_std(backoff).unwrap_or(chrono::Duration::seconds(60)),
        error,
    }
}

/// The wait after the `attempts`-th failed attempt: doubling from the initial wait, at
/// most the configured maximum.
fn backoff(config: &NotifyConfig, attempts: u32) -> Duration {
    let doublings = attempts.saturating_sub(1).min(20);
    config
        .retry_initial
        .saturating_mul(1u32 << doublings)
        .min(config.retry_max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_the_maximum() {
        let config = NotifyConfig {
            retry_initial: Duration::from_secs(1),
            retry_max: Duration::from_secs(10),
            ..NotifyConfig::default()
        };
        let waits: Vec<u64> = (1..=6).map(|a| backoff(&config, a).as_secs()).collect();
        assert_eq!(waits, vec![1, 2, 4, 8, 10, 10]);
    }
}

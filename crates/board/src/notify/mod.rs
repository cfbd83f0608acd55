//! Webhooks: telling people when a task needs them.
//!
//! Each `[[notify]]` entry is a [`NotifySink`]: a URL, the events it wants (a task
//! waits for input, failed, completed, was cancelled) and a body format (our JSON
//! event, or Slack's incoming-webhook shape). When a task enters one of those states
//! the process that made the change (exactly one, the store's compare-and-set winner)
//! writes one delivery per sink into the store's outbox, keyed by task, version and
//! sink so that it exists once whoever writes it. A sender in every process claims due
//! deliveries, posts them and retries failures with exponential backoff; deliveries
//! live in the store, so a receiver that is down gets its events when it is back, also
//! after a restart, and the task itself never waits for any of it.
//!
//! | module | what it owns |
//! |---|---|
//! | `payload` | the bodies: our JSON event and Slack's `text` |
//! | `sender` | the outbox loop: enqueue on transitions, claim, post, retry |

mod payload;
mod sender;

use mcp_tasks_protocol::{Secret, TaskStatus};
use std::time::Duration;

pub use sender::Notifier;

/// A state of a task someone can be told about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotifyOn {
    /// The task asks a question (`input_required`).
    InputRequired,
    /// The task failed.
    Failed,
    /// The task completed.
    Completed,
    /// The task was cancelled.
    Cancelled,
}

impl NotifyOn {
    /// The status this event is about.
    pub fn status(self) -> TaskStatus {
        match self {
            NotifyOn::InputRequired => TaskStatus::InputRequired,
            NotifyOn::Failed => TaskStatus::Failed,
            NotifyOn::Completed => TaskStatus::Completed,
            NotifyOn::Cancelled => TaskStatus::Cancelled,
        }
    }

    /// The event for `status`, if someone can be told of it.
    pub fn of(status: TaskStatus) -> Option<Self> {
        match status {
            TaskStatus::InputRequired => Some(NotifyOn::InputRequired),
            TaskStatus::Failed => Some(NotifyOn::Failed),
            TaskStatus::Completed => Some(NotifyOn::Completed),
            TaskStatus::Cancelled => Some(NotifyOn::Cancelled),
            TaskStatus::Working => None,
        }
    }
}

impl NotifyOn {
    /// The event a task's change is, as people are told of it: a task that completed
    /// with a tool error (a result flagged `isError`) is a failure here, as it is on
    /// the 2025-11-25 wire, in the CLI and on the board ("tool error"), so sinks that
    /// listen for `failed` hear of it and those for `completed` do not.
    pub(crate) fn of_record(record: &mcp_tasks_engine::TaskRecord) -> Option<Self> {
        match NotifyOn::of(record.status)? {
            NotifyOn::Completed if crate::view::tool_error_text(record).is_some() => {
                Some(NotifyOn::Failed)
            }
            on => Some(on),
        }
    }
}

impl std::str::FromStr for NotifyOn {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "input_required" => Ok(NotifyOn::InputRequired),
            "failed" => Ok(NotifyOn::Failed),
            "completed" => Ok(NotifyOn::Completed),
            "cancelled" => Ok(NotifyOn::Cancelled),
            other => Err(format!(
                "unknown notification event '{other}': use input_required, failed, completed or cancelled"
            )),
        }
    }
}

/// The body a webhook receives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NotifyFormat {
    /// Our JSON event (see the README's "The task board").
    #[default]
    Json,
    /// Slack's incoming-webhook shape: `{"text": ...}` with a link to the board.
    Slack,
}

impl std::str::FromStr for NotifyFormat {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "json" => Ok(NotifyFormat::Json),
            "slack" => Ok(NotifyFormat::Slack),
            other => Err(format!(
                "unknown notification format '{other}': use json or slack"
            )),
        }
    }
}

/// One webhook.
#[derive(Debug, Clone)]
pub struct NotifySink {
    /// A stable name: it is part of each delivery's key, so renaming a sink while
    /// deliveries are pending sends those once more under the new name.
    pub name: String,
    /// Where events are posted (`http://` or `https://`). A secret: some receivers
    /// (Slack's incoming webhooks) take the URL itself as the credential.
    pub url: Secret<String>,
    /// Which events this sink wants.
    pub on: Vec<NotifyOn>,
    /// The body's shape.
    pub format: NotifyFormat,
    /// Extra request headers (an `Authorization` the receiver expects, say). Their
    /// values are secrets: `Debug` of the sink prints `***` for them.
    pub headers: Vec<(String, Secret<String>)>,
}

/// Every webhook and how deliveries are retried.
#[derive(Debug, Clone)]
pub struct NotifyConfig {
    /// The webhooks.
    pub sinks: Vec<NotifySink>,
    /// The address people reach the board at, for the link in each event.
    pub public_url: Option<String>,
    /// The wait before the first retry; each further one doubles it.
    pub retry_initial: Duration,
    /// The longest wait between retries.
    pub retry_max: Duration,
    /// After this long an event that could not be delivered is given up (logged).
    pub give_up_after: Duration,
    /// The time one POST may take.
    pub request_timeout: Duration,
}

impl Default for NotifyConfig {
    fn default() -> Self {
        NotifyConfig {
            sinks: Vec::new(),
            public_url: None,
            retry_initial: Duration::from_secs(1),
            retry_max: Duration::from_secs(300),
            give_up_after: Duration::from_secs(24 * 3600),
            request_timeout: Duration::from_secs(10),
        }
    }
}

impl NotifyConfig {
    /// Checks every sink: a usable URL, at least one event, unique names.
    ///
    /// # Errors
    /// A message naming the sink and what to change.
    pub fn check(&self) -> Result<(), String> {
        let mut names = std::collections::HashSet::new();
        for sink in &self.sinks {
            let url = sink.url.expose();
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(format!(
                    "notify '{}': url '{}' must start with http:// or https://",
                    sink.name,
                    mcp_tasks_protocol::secret::redact_url(url)
                ));
            }
            if sink.on.is_empty() {
                return Err(format!(
                    "notify '{}': 'on' names no event: list some of input_required, failed, completed, cancelled",
                    sink.name
                ));
            }
            if !names.insert(sink.name.as_str()) {
                return Err(format!(
                    "two [[notify]] entries are named '{}': give each its own name",
                    sink.name
                ));
            }
        }
        Ok(())
    }
}

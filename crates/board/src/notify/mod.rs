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
//! | `sign` | Standard Webhooks headers: `webhook-id`, `webhook-timestamp`, `webhook-signature` |
//! | `teams` | the Adaptive Card a Teams Workflows webhook posts |

mod payload;
mod sender;
mod sign;
mod teams;

use mcp_tasks_protocol::{Secret, TaskStatus};
use std::time::Duration;

pub use sender::{Notifier, PreparedNotifier};
pub use sign::WebhookSecret;
pub use teams::CARD_VERSION as TEAMS_CARD_VERSION;

/// The request headers of Standard Webhooks, which every delivery carries (a
/// sink's own `headers` may not set them).
pub const STANDARD_WEBHOOKS_HEADERS: [&str; 3] =
    ["webhook-id", "webhook-timestamp", "webhook-signature"];

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
    /// A Microsoft Teams Workflows webhook: a message with an Adaptive Card (version
    /// 1.5), its buttons opening the answer links and the board.
    Teams,
}

impl std::str::FromStr for NotifyFormat {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "json" => Ok(NotifyFormat::Json),
            "slack" => Ok(NotifyFormat::Slack),
            "teams" => Ok(NotifyFormat::Teams),
            other => Err(format!(
                "unknown notification format '{other}': use json, slack or teams"
            )),
        }
    }
}

/// The name a webhook gets when its entry gives none: the URL's scheme and host and a
/// short fingerprint of the whole URL (`https://hooks.slack.com/…#5f0e2a91`). Never
/// the path or the query: Slack's incoming webhooks (and many others) carry their
/// credential there, and the name shows in logs, metric labels and delivery keys. The
/// fingerprint (FNV-1a, 32 bits) keeps two sinks on one host apart and stays the same
/// across restarts and Rust versions, as a delivery key needs.
pub fn default_sink_name(url: &str) -> String {
    let mut hash: u32 = 0x811c_9dc5;
    for byte in url.as_bytes() {
        hash ^= u32::from(*byte);
        hash = hash.wrapping_mul(0x0100_0193);
    }
    let origin = match url.split_once("://") {
        Some((scheme, rest)) => {
            let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
            // Credentials before '@' are dropped too.
            let host = authority.rsplit('@').next().unwrap_or("");
            format!("{scheme}://{host}/…")
        }
        None => "webhook".to_string(),
    };
    format!("{origin}#{hash:08x}")
}

/// One webhook.
#[derive(Debug, Clone)]
pub struct NotifySink {
    /// A stable name: it is part of each delivery's key, so renaming a sink while
    /// deliveries are pending sends those once more under the new name. Without one in
    /// the config, [`default_sink_name`].
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
    /// The Standard Webhooks secrets that sign each delivery (`webhook-signature`, one
    /// `v1,` signature per secret: the current one first, older ones while receivers
    /// rotate). Empty: deliveries carry `webhook-id` and `webhook-timestamp` but no
    /// signature.
    pub secrets: Vec<WebhookSecret>,
    /// Whether events for a waiting task carry signed one-time approve / reject links
    /// for its yes/no questions (`answers` in the JSON, links in Slack's text). For
    /// channels without a login: whoever holds a link answers with it, once.
    pub answer_links: bool,
    /// The principal those links answer as (checked against a board login, recorded
    /// in the audit log); `None`: nobody in particular.
    pub assignee: Option<String>,
    /// How long a link lives when its question has no deadline; `None`:
    /// [`AnswerLinks::default_ttl`](crate::AnswerLinks::default_ttl).
    pub answer_link_ttl: Option<Duration>,
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
    /// The key of answer links (the same value as the board's
    /// [`BoardConfig::answer_links`](crate::BoardConfig::answer_links)); sinks with
    /// `answer_links` need it and a `public_url`.
    pub answer_links: Option<crate::AnswerLinks>,
    /// Mail to the people questions and approvals are assigned to (`[email]`); its
    /// deliveries share the outbox and its retries.
    #[cfg(feature = "email")]
    pub email: Option<crate::email::EmailConfig>,
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
            answer_links: None,
            #[cfg(feature = "email")]
            email: None,
        }
    }
}

impl NotifyConfig {
    /// Whether mail is configured (`[email]`).
    pub fn mails(&self) -> bool {
        #[cfg(feature = "email")]
        return self.email.is_some();
        #[cfg(not(feature = "email"))]
        false
    }

    /// Whether some sink, or mail, wants to hear of `on`: mail is sent while a
    /// question waits and when a task ends.
    pub(crate) fn wants(&self, on: NotifyOn) -> bool {
        self.mails() || self.sinks.iter().any(|s| s.on.contains(&on))
    }

    /// Checks every sink: a usable URL, at least one event, unique names.
    ///
    /// # Errors
    /// A message naming the sink and what to change.
    pub fn check(&self) -> Result<(), String> {
        #[cfg(feature = "email")]
        if let Some(email) = &self.email {
            email.check()?;
        }
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
            if let Some((name, _)) = sink.headers.iter().find(|(name, _)| {
                STANDARD_WEBHOOKS_HEADERS
                    .iter()
                    .any(|h| name.eq_ignore_ascii_case(h))
            }) {
                return Err(format!(
                    "notify '{}': header '{name}' is set by the server on every delivery (Standard Webhooks); remove it from 'headers' and give the sink a secret to sign with",
                    sink.name
                ));
            }
            if sink.answer_links && (self.public_url.is_none() || self.answer_links.is_none()) {
                return Err(format!(
                    "notify '{}': answer_links needs the board's public address (--public-url or public_url under [board]) for the links to point at",
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

#[cfg(test)]
mod tests {
    use super::default_sink_name;

    #[test]
    fn a_default_sink_name_shows_no_path_query_or_credentials() {
        let slack = "https://hooks.slack.com/services/T000/B000/XXXXSECRETXXXX";
        let name = default_sink_name(slack);
        assert!(name.starts_with("https://hooks.slack.com/…#"), "{name}");
        assert!(!name.contains("SECRET") && !name.contains("T000"), "{name}");
        assert_eq!(name, default_sink_name(slack), "stable");
        assert_ne!(
            name,
            default_sink_name("https://hooks.slack.com/services/T000/B001/Y")
        );
        let with_user = default_sink_name("https://bob:hunter2@example.com:8443/hook?token=abc");
        assert!(
            with_user.starts_with("https://example.com:8443/…#"),
            "{with_user}"
        );
        assert!(
            !with_user.contains("hunter2") && !with_user.contains("abc"),
            "{with_user}"
        );
    }
}

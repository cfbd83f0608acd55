//! Slack app mode: a waiting question becomes a Block Kit message in a channel, with
//! buttons that answer it (Approve / Reject, or a modal for a form or for a reject
//! reason), and the clicks come back to `POST /board/slack/interactions`.
//!
//! A click is taken only when Slack's v0 signature over it checks out (a timestamp
//! within 5 minutes), from a Slack user mapped to a principal (`users`), who may answer
//! that task (the engine decides, as for every answer). It answers through the engine
//! as that principal, is an audit event, and the message then says who answered and
//! when, its buttons gone. A refused click changes nothing: the question stays open
//! and the message as it was.
//!
//! | module | what it owns |
//! |---|---|
//! | `signature` | Slack's v0 request signature |
//! | `web` | the Web API calls (`chat.postMessage`, `chat.update`, `views.open`, …) |
//! | `blocks` | the messages: a waiting question, an answered one |
//! | `modal` | a form's modal and the reject-reason modal, and reading them back |
//! | `poster` | questions posted as they start waiting; what was posted, in memory |
//! | `interactions` | the endpoint: verify, map the user, answer, update the message |

mod blocks;
pub(crate) mod interactions;
mod modal;
mod poster;
mod signature;
mod web;

use mcp_tasks_engine::{TaskRecord, TransitionObserver};
use mcp_tasks_protocol::Secret;
use mcp_tasks_server::Server;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

/// The path Slack posts interactions to (the app's "Interactivity Request URL" is the
/// board's public address followed by it).
pub const INTERACTIONS_PATH: &str = "/board/slack/interactions";

/// Slack's Web API.
pub const DEFAULT_API_BASE_URL: &str = "https://slack.com/api";

/// How the Slack app is run (`[slack]` in the config).
#[derive(Debug, Clone)]
pub struct SlackConfig {
    /// The app's Signing Secret (from the app's "Basic Information"): every
    /// interaction must be signed with it.
    pub signing_secret: Secret<Vec<u8>>,
    /// The bot's OAuth token (`xoxb-…`, scope `chat:write`).
    pub bot_token: Secret<String>,
    /// Where questions are posted: a channel id (`C…`) or name the bot is in.
    pub channel: String,
    /// Slack user ids (`U…`) and the principal each answers as. A click by anyone
    /// else is refused.
    pub users: BTreeMap<String, String>,
    /// The Web API's address: [`DEFAULT_API_BASE_URL`], or a stand-in in tests.
    pub api_base_url: String,
    /// The board's public address, for the link in each message; `None`: no link.
    pub public_url: Option<String>,
    /// The time one Web API call may take.
    pub request_timeout: Duration,
}

impl SlackConfig {
    /// Checks what can be checked before the first message: a secret, a token, a
    /// channel, an `http(s)` API address, and principals for the users.
    ///
    /// # Errors
    /// A message naming the setting and what to change.
    pub fn check(&self) -> Result<(), String> {
        if self.signing_secret.expose().is_empty() {
            return Err("[slack]: the signing secret is empty: put the app's Signing Secret (Basic Information → App Credentials) in signing_secret_file".into());
        }
        if self.bot_token.expose().trim().is_empty() {
            return Err("[slack]: the bot token is empty: put the bot's OAuth token (xoxb-…, OAuth & Permissions) in bot_token_file".into());
        }
        if self.channel.trim().is_empty() {
            return Err("[slack]: 'channel' is empty: name the channel questions go to (an id like C0123456789, or #name), and invite the bot there".into());
        }
        let base = &self.api_base_url;
        if !(base.starts_with("https://") || base.starts_with("http://")) {
            return Err(format!(
                "[slack]: api_base_url '{base}' must start with https:// (default {DEFAULT_API_BASE_URL})"
            ));
        }
        if let Some((user, _)) = self.users.iter().find(|(_, p)| p.trim().is_empty()) {
            return Err(format!(
                "[slack]: users: '{user}' maps to an empty principal: name the principal that Slack user answers as"
            ));
        }
        if self.users.is_empty() {
            tracing::warn!(
                "[slack]: 'users' maps no Slack user to a principal: every click will be refused"
            );
        }
        Ok(())
    }
}

/// The running Slack app: cheap to clone, one per server. Give it to the board
/// ([`crate::BoardConfig::slack`]) to serve its interaction endpoint.
#[derive(Clone)]
pub struct Slack {
    inner: Arc<Inner>,
}

struct Inner {
    config: SlackConfig,
    web: web::Web,
    messages: Arc<poster::Messages>,
}

impl std::fmt::Debug for Slack {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Slack")
            .field("channel", &self.inner.config.channel)
            .field("api_base_url", &self.inner.config.api_base_url)
            .finish_non_exhaustive()
    }
}

/// A Slack app configured but not started: its transition observer goes to the server
/// at start ([`PreparedSlack::observer`]), then it starts posting on that server
/// ([`PreparedSlack::start`]).
pub struct PreparedSlack {
    slack: Slack,
    queue: mpsc::UnboundedSender<TaskRecord>,
    changes: mpsc::UnboundedReceiver<TaskRecord>,
}

impl std::fmt::Debug for PreparedSlack {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PreparedSlack")
            .field("slack", &self.slack)
            .finish_non_exhaustive()
    }
}

impl Slack {
    /// Prepares the app: checks the configuration and builds the HTTP client.
    ///
    /// # Errors
    /// When the configuration is invalid ([`SlackConfig::check`]) or the HTTP client
    /// cannot be built.
    pub fn prepare(config: SlackConfig) -> Result<PreparedSlack, String> {
        config.check()?;
        let web = web::Web::new(
            &config.api_base_url,
            config.bot_token.clone(),
            config.request_timeout,
        )?;
        let (queue, changes) = mpsc::unbounded_channel();
        Ok(PreparedSlack {
            slack: Slack {
                inner: Arc::new(Inner {
                    config,
                    web,
                    messages: Arc::default(),
                }),
            },
            queue,
            changes,
        })
    }

    pub(crate) fn config(&self) -> &SlackConfig {
        &self.inner.config
    }

    pub(crate) fn web(&self) -> &web::Web {
        &self.inner.web
    }

    pub(crate) fn messages(&self) -> &poster::Messages {
        &self.inner.messages
    }
}

impl PreparedSlack {
    /// The transition observer to give the server at start: it queues the changes of
    /// waiting tasks (and of tasks with a message posted) for the poster.
    pub fn observer(&self) -> TransitionObserver {
        poster::observer(Arc::clone(&self.slack.inner.messages), self.queue.clone())
    }

    /// Starts posting the questions of `server`'s tasks (whose engine was given
    /// [`PreparedSlack::observer`]); stops with the server.
    pub fn start(self, server: &Server) -> Slack {
        let PreparedSlack { slack, changes, .. } = self;
        tokio::spawn(poster::run(slack.clone(), changes, server.shutdown_token()));
        slack
    }
}

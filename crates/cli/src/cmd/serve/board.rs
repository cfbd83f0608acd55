//! The task board, webhooks and Slack app of `serve` (feature `board`): its flags
//! ([`BoardArgs`]), the `[board]` section, `[[notify]]` entries and `[slack]` turned
//! into the board crate's configurations, and their part of the start
//! ([`prepare`], [`Prepared::start`], [`Started::routes`]).

use anyhow::{Context, Result};
use mcp_tasks_board::{
    default_sink_name, AnswerLinks, BoardConfig, NotifyConfig, NotifyFormat, NotifyOn, NotifySink,
    SlackConfig, WebhookSecret,
};
use mcp_tasks_protocol::secret::Secret;
use std::time::Duration;

use super::board_args::BoardArgs;
use super::ServeArgs;
use crate::config::{ConfigFile, NotifyEntry};
use mcp_tasks_engine::TransitionObserver;
use mcp_tasks_server::Server;

impl BoardArgs {
    /// Whether the board is wanted at all.
    pub fn enabled(&self, file: &ConfigFile) -> bool {
        !self.no_board && !file.board.disabled
    }

    /// Whether people answer tasks' questions on the board (`--board-takes-questions`
    /// or `takes_questions` in `[board]`).
    pub fn takes_questions(&self, file: &ConfigFile) -> bool {
        self.board_takes_questions || file.board.takes_questions
    }

    /// The public URL, flag before file.
    pub fn public_url(&self, file: &ConfigFile) -> Option<String> {
        self.public_url
            .clone()
            .or_else(|| file.board.public_url.clone())
            .map(|u| u.trim_end_matches('/').to_string())
    }

    /// The board's configuration.
    pub fn board_config(&self, file: &ConfigFile) -> Result<BoardConfig> {
        let mut operators = self.operators.clone();
        operators.extend(file.board.operators.iter().cloned());
        operators.retain(|o| !o.trim().is_empty());
        Ok(BoardConfig {
            operators,
            public_url: self.public_url(file),
            secret: self.board_secret(file)?,
            ..BoardConfig::default()
        })
    }

    /// The key of signed answer links, made once per process and given to both the
    /// notifier and the board: from the board secret, or random (links then stop
    /// working when the process ends, which is logged when a webhook sends them).
    pub fn answer_links(&self, file: &ConfigFile) -> Result<AnswerLinks> {
        let secret = self.board_secret(file)?;
        Ok(AnswerLinks::new(
            secret.as_ref().map(|s| s.expose().as_slice()),
        ))
    }

    /// The webhooks: `--notify-webhook` URLs and `[[notify]]` entries; `links` signs
    /// the answer links of the sinks that send them.
    pub fn notify_config(&self, file: &ConfigFile, links: &AnswerLinks) -> Result<NotifyConfig> {
        let mut sinks = Vec::new();
        for url in &self.notify_webhooks {
            sinks.push(NotifySink {
                // The URL (a credential, for Slack) stays out of logs and metrics labels.
                name: default_sink_name(url),
                url: Secret::new(url.clone()),
                on: vec![NotifyOn::InputRequired, NotifyOn::Failed],
                format: NotifyFormat::Json,
                headers: Vec::new(),
                secrets: Vec::new(),
                answer_links: false,
                assignee: None,
                answer_link_ttl: None,
            });
        }
        for entry in &file.notify {
            let name = entry
                .name
                .clone()
                .unwrap_or_else(|| default_sink_name(entry.url.expose()));
            let on = if entry.on.is_empty() {
                vec![NotifyOn::InputRequired, NotifyOn::Failed]
            } else {
                entry
                    .on
                    .iter()
                    .map(|e| e.parse())
                    .collect::<Result<Vec<NotifyOn>, String>>()
                    .map_err(|e| anyhow::anyhow!("[[notify]] '{name}': {e}"))?
            };
            let format = entry
                .format
                .as_deref()
                .map(str::parse)
                .transpose()
                .map_err(|e: String| anyhow::anyhow!("[[notify]] '{name}': {e}"))?
                .unwrap_or_default();
            let secrets = notify_secrets(entry, &name)?;
            sinks.push(NotifySink {
                name,
                url: entry.url.clone(),
                on,
                format,
                headers: entry
                    .headers
                    .iter()
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect(),
                secrets,
                answer_links: entry.answer_links,
                assignee: entry.assignee.clone().filter(|a| !a.trim().is_empty()),
                answer_link_ttl: entry.answer_link_ttl,
            });
        }
        // Mail carries answer links too.
        let wants_links = sinks.iter().any(|s| s.answer_links) || file.email.is_some();
        if wants_links && links.ephemeral {
            tracing::warn!(
                "answer links in webhook events are signed with a key made at start: they stop working when this process ends, and other replicas refuse them; set --board-secret-file (the same file on every replica) to keep them"
            );
        }
        let mut config = NotifyConfig {
            sinks,
            public_url: self.public_url(file),
            answer_links: wants_links.then(|| links.clone()),
            ..NotifyConfig::default()
        };
        #[cfg(feature = "email")]
        if let Some(section) = &file.email {
            if config.public_url.is_none() {
                anyhow::bail!("[email] needs the board's public address (public_url under [board], or --public-url): every mail links to the task and carries its Approve / Reject links");
            }
            config.email = Some(email_config(section, file)?);
        }
        if let Some(retry) = self.notify_retry {
            config.retry_initial = retry;
        }
        if let Some(timeout) = self.notify_timeout {
            config.request_timeout = timeout;
        }
        config.check().map_err(|e| anyhow::anyhow!(e))?;
        Ok(config)
    }
}

/// The board, notifier and Slack app prepared before the engine starts (their
/// observers go to it), from the flags, the file and the bound address (`None` over
/// stdio, where webhooks still run but no board is served).
pub struct Prepared {
    /// Where people reach the board's pages (`…/board` hangs from it), when it is served.
    root: Option<String>,
    takes_questions: bool,
    links: AnswerLinks,
    notifier: mcp_tasks_board::PreparedNotifier,
    slack: Option<mcp_tasks_board::PreparedSlack>,
    /// Whether webhooks send signed answer links.
    links_sent: bool,
    /// Whether people are mailed their questions.
    mails: bool,
}

/// Prepares the board's part of `serve`.
///
/// # Errors
/// A bad board secret, webhook or `[slack]` section, each named.
pub fn prepare(
    args: &ServeArgs,
    file: &ConfigFile,
    addr: Option<std::net::SocketAddr>,
    authenticated: bool,
) -> Result<Prepared> {
    let served = addr.is_some_and(|addr| board_served(args, file, addr, authenticated));
    let root = match (served, addr) {
        (true, Some(addr)) => Some(board_root(args, file, addr)?),
        _ => None,
    };
    // One key for the answer links the notifier signs and the board checks.
    let links = args.board.answer_links(file)?;
    let notify = args.board.notify_config(file, &links)?;
    let links_sent = notify.sinks.iter().any(|s| s.answer_links);
    let mails = notify.mails();
    if !notify.sinks.is_empty() || mails {
        tracing::info!(
            webhooks = notify.sinks.len(),
            email = mails,
            "notifications on"
        );
    }
    let notifier = mcp_tasks_board::Notifier::prepare(notify).map_err(|e| anyhow::anyhow!(e))?;
    let slack = slack_app(file, root.clone())?;
    Ok(Prepared {
        takes_questions: served && args.board.takes_questions(file),
        root,
        links,
        notifier,
        slack,
        links_sent,
        mails,
    })
}

impl Prepared {
    /// Whether people answer tasks' questions (on the board, so only when it is served).
    pub fn people_answer_questions(&self) -> bool {
        self.takes_questions
    }

    /// Where people answer questions assigned to them (approvals), as a model is told:
    /// the board, and Slack and signed links, whose answers the board's routes take
    /// (so none of them without a served board: none over stdio).
    pub fn people_channels(&self) -> Vec<String> {
        if self.root.is_none() {
            return Vec::new();
        }
        let mut channels = vec!["on the task board".to_string()];
        if self.slack.is_some() {
            channels.push("in Slack".to_string());
        }
        if self.links_sent {
            channels.push("through the signed link in their notification".to_string());
        }
        if self.mails {
            channels.push("by email".to_string());
        }
        channels
    }

    /// The board's address, for the handles of calls that became tasks.
    pub fn board_url(&self) -> Option<String> {
        self.root.as_ref().map(|root| format!("{root}/board"))
    }

    /// The engine's observers of task transitions: the notifier's and Slack's.
    pub fn observers(&self) -> Vec<TransitionObserver> {
        let mut observers: Vec<_> = self.notifier.observer().into_iter().collect();
        observers.extend(self.slack.as_ref().map(|s| s.observer()));
        observers
    }

    /// Starts the notifier and the Slack app on the started server.
    ///
    /// # Errors
    /// When the notifier cannot start.
    pub fn start(self, server: &Server) -> Result<Started> {
        self.notifier
            .start(server)
            .map_err(|e| anyhow::anyhow!(e))?;
        Ok(Started {
            root: self.root,
            links: self.links,
            slack: self.slack.map(|s| s.start(server)),
        })
    }
}

/// The board's part once the server runs: its routes are left to serve.
pub struct Started {
    root: Option<String>,
    links: AnswerLinks,
    slack: Option<mcp_tasks_board::Slack>,
}

impl Started {
    /// The task board's routes (none when it is not served), its address announced.
    ///
    /// # Errors
    /// A bad board secret.
    pub fn routes(
        self,
        args: &ServeArgs,
        file: &ConfigFile,
        server: &Server,
    ) -> Result<axum::Router> {
        let Some(root) = self.root else {
            return Ok(axum::Router::new());
        };
        let mut config = args.board.board_config(file)?;
        config.answer_links = Some(self.links);
        config.slack = self.slack;
        let (oidc, token_login) = super::identity::board_oidc(file, &root)?;
        config.oidc = oidc;
        config.token_login = token_login;
        if let Some(ttl) = file.board.session_ttl {
            config.session_ttl = ttl;
        }
        super::logging::announce(args.log_format, "task board at", &format!("{root}/board"));
        Ok(mcp_tasks_board::Board::new(server.clone(), config).router())
    }
}

/// Whether the task board is served: when it is wanted, with authentication (behind a
/// login), or without it on a loopback address only.
fn board_served(
    args: &ServeArgs,
    file: &ConfigFile,
    addr: std::net::SocketAddr,
    authenticated: bool,
) -> bool {
    if !args.board.enabled(file) {
        return false;
    }
    if !authenticated && !addr.ip().is_loopback() {
        tracing::warn!(
            "the task board is off: without authentication it is served on loopback addresses only (configure --auth-tokens or --jwt-jwks)"
        );
        return false;
    }
    true
}

/// The Slack app of `[slack]`, prepared (its observer goes to the engine at start). It
/// needs the board (served from `root`): Slack's clicks come to the board's
/// interaction endpoint.
fn slack_app(
    file: &ConfigFile,
    root: Option<String>,
) -> Result<Option<mcp_tasks_board::PreparedSlack>> {
    if file.slack.is_none() {
        return Ok(None);
    }
    let Some(public_url) = root else {
        anyhow::bail!(
            "[slack] needs the task board, which takes Slack's clicks at {}: serve HTTP with the board on (not --stdio or --no-board; a non-loopback address needs authentication)",
            mcp_tasks_board::slack::INTERACTIONS_PATH
        );
    };
    let Some(config) = slack_config(file, Some(public_url))? else {
        return Ok(None);
    };
    tracing::info!(channel = %config.channel, users = config.users.len(), "slack app on");
    mcp_tasks_board::Slack::prepare(config)
        .map(Some)
        .map_err(|e| anyhow::anyhow!(e))
}

/// Where people reach this server (the board's `--public-url`, else the bound
/// address): the root the board's `/board` pages hang from.
fn board_root(args: &ServeArgs, file: &ConfigFile, addr: std::net::SocketAddr) -> Result<String> {
    Ok(args
        .board
        .board_config(file)?
        .public_url
        .map(|u| u.trim_end_matches('/').to_string())
        .unwrap_or_else(|| format!("http://{addr}")))
}

/// The Slack app of `[slack]`, if there is one, linking its messages to the board at
/// `public_url`. Its secret and token files are read now, so a missing or empty one
/// stops the start with a message naming it.
pub fn slack_config(file: &ConfigFile, public_url: Option<String>) -> Result<Option<SlackConfig>> {
    let Some(section) = &file.slack else {
        return Ok(None);
    };
    let read = |path: &std::path::Path, what: &str| -> Result<String> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("[slack]: reading the {what} file {}", path.display()))?;
        let text = text.trim().to_string();
        if text.is_empty() {
            anyhow::bail!("[slack]: the {what} file {} is empty", path.display());
        }
        Ok(text)
    };
    let secret = read(
        &section.signing_secret_file,
        "signing secret (signing_secret_file)",
    )?;
    let token = read(&section.bot_token_file, "bot token (bot_token_file)")?;
    let config = SlackConfig {
        signing_secret: Secret::new(secret.into_bytes()),
        bot_token: Secret::new(token),
        channel: section.channel.trim().to_string(),
        users: section.users.clone(),
        api_base_url: section
            .api_base_url
            .clone()
            .unwrap_or_else(|| mcp_tasks_board::slack::DEFAULT_API_BASE_URL.to_string()),
        public_url,
        request_timeout: Duration::from_secs(10),
    };
    config.check().map_err(|e| anyhow::anyhow!(e))?;
    Ok(Some(config))
}

/// `[email]` and `[people]` as the notifier takes them; the password read from its
/// file or variable.
#[cfg(feature = "email")]
fn email_config(
    section: &crate::config::EmailSection,
    file: &ConfigFile,
) -> Result<mcp_tasks_board::email::EmailConfig> {
    use mcp_tasks_board::email::{EmailConfig, EmailTls, PeopleTable};
    let tls: EmailTls = section
        .tls
        .as_deref()
        .map(str::parse)
        .transpose()
        .map_err(|e: String| anyhow::anyhow!("[email]: {e}"))?
        .unwrap_or_default();
    let port = section.port.unwrap_or(match tls {
        EmailTls::Implicit => 465,
        EmailTls::Starttls => 587,
        EmailTls::None => 25,
    });
    let password = match (&section.password_file, &section.password_env) {
        (Some(_), Some(_)) => {
            anyhow::bail!("[email]: give the password once: password_file or password_env")
        }
        (Some(path), None) => {
            let text = std::fs::read_to_string(path).with_context(|| {
                format!("[email]: reading the password file {}", path.display())
            })?;
            Some(Secret::new(text.trim_end_matches(['\r', '\n']).to_string()))
        }
        (None, Some(var)) => Some(Secret::new(std::env::var(var).with_context(|| {
            format!("[email]: password_env names {var}, which is not set")
        })?)),
        (None, None) => None,
    };
    if file.people.is_empty() {
        tracing::warn!(
            "[email] is configured but [people] lists nobody's address: nobody is mailed"
        );
    }
    let config = EmailConfig {
        host: section.host.trim().to_string(),
        port,
        tls,
        user: section.user.clone(),
        password,
        from: section.from.clone(),
        people: std::sync::Arc::new(PeopleTable(file.people.clone())),
    };
    config.check().map_err(|e| anyhow::anyhow!(e))?;
    Ok(config)
}

/// The Standard Webhooks secrets of a `[[notify]]` entry: those written in `secrets`,
/// then those of `secret_file` (one per line). Errors name the sink and the file, never
/// a secret.
fn notify_secrets(entry: &NotifyEntry, name: &str) -> Result<Vec<WebhookSecret>> {
    let mut secrets = Vec::new();
    for (i, text) in entry.secrets.iter().enumerate() {
        let secret = WebhookSecret::parse(text.expose())
            .map_err(|e| anyhow::anyhow!("[[notify]] '{name}': secrets[{i}]: {e}"))?;
        secrets.push(secret);
    }
    if let Some(path) = &entry.secret_file {
        let text = std::fs::read_to_string(path).with_context(|| {
            format!(
                "[[notify]] '{name}': reading the secret file {}",
                path.display()
            )
        })?;
        let more = WebhookSecret::parse_lines(&text).map_err(|e| {
            anyhow::anyhow!(
                "[[notify]] '{name}': the secret file {}: {e}",
                path.display()
            )
        })?;
        secrets.extend(more);
    }
    Ok(secrets)
}

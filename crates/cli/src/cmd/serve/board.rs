//! The task board and webhook settings of `serve`: flags, the `[board]` section and
//! `[[notify]]` entries, turned into the board crate's configurations.

use anyhow::{Context, Result};
use mcp_tasks_board::{
    default_sink_name, AnswerLinks, BoardConfig, NotifyConfig, NotifyFormat, NotifyOn, NotifySink,
    SlackConfig, WebhookSecret,
};
use mcp_tasks_protocol::secret::Secret;
use std::path::PathBuf;
use std::time::Duration;

use crate::config::{parse_duration, ConfigFile, NotifyEntry};

/// Flags of the task board and of notifications.
#[derive(Debug, Clone, clap::Args)]
pub struct BoardArgs {
    /// Do not serve the task board at /board. It is served by default wherever HTTP
    /// is: behind a login when authentication is configured, else only on a loopback
    /// address.
    #[arg(long)]
    no_board: bool,

    /// Principals who see and act on everyone's tasks on the board (comma-separated);
    /// every action of theirs is an audit event naming them. Others see their own.
    #[arg(long, value_delimiter = ',', value_name = "PRINCIPALS")]
    operators: Vec<String>,

    /// The address people reach this server at (https://tasks.example.com), for the
    /// board links in notifications; board cookies are `Secure` when it is https.
    #[arg(long, env = "MCP_TASKS_PUBLIC_URL", value_name = "URL")]
    public_url: Option<String>,

    /// A file holding the key that signs board logins. Replicas behind one address
    /// must share it; without it each process picks a random key and logins end with
    /// the process.
    #[arg(long, env = "MCP_TASKS_BOARD_SECRET_FILE", value_name = "FILE")]
    board_secret_file: Option<PathBuf>,

    /// Let a task ask questions (elicitation, sampling) that its client did not
    /// declare it can answer: they wait on the board for a person (and go to the
    /// webhooks) instead of failing the tool at once. For agents whose client has no
    /// elicitation support, with people answering on the board.
    #[arg(long)]
    board_takes_questions: bool,

    /// POST a JSON event to this URL when a task waits for input or fails (repeat for
    /// several; [[notify]] in the config chooses events and the Slack format).
    /// Deliveries are stored, retried with backoff, and survive restarts.
    #[arg(long = "notify-webhook", value_name = "URL")]
    notify_webhooks: Vec<String>,

    /// Wait before the first retry of a failed webhook; each further retry doubles it,
    /// up to 5 minutes. [default: 1s]
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    notify_retry: Option<Duration>,

    /// Time one webhook POST may take before it counts as failed (and is retried).
    /// A delivery is claimed for a little longer than this, so a process that dies
    /// while sending holds it no longer. [default: 10s]
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    notify_timeout: Option<Duration>,
}

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

    /// The board secret (`--board-secret-file`, or `secret_file` under `[board]`).
    pub fn board_secret(&self, file: &ConfigFile) -> Result<Option<Secret<Vec<u8>>>> {
        let Some(path) = self
            .board_secret_file
            .as_ref()
            .or(file.board.secret_file.as_ref())
        else {
            return Ok(None);
        };
        let bytes = std::fs::read(path)
            .with_context(|| format!("reading the board secret {}", path.display()))?;
        let secret = String::from_utf8_lossy(&bytes).trim().as_bytes().to_vec();
        if secret.len() < 16 {
            anyhow::bail!(
                "the board secret in {} is {} bytes; use at least 16 random bytes (e.g. `openssl rand -hex 32`)",
                path.display(),
                secret.len()
            );
        }
        Ok(Some(Secret::new(secret)))
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
        let wants_links = sinks.iter().any(|s| s.answer_links);
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

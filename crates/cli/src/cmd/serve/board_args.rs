//! The flags of the task board and of notifications, in every build: without the
//! `board` feature they are refused when given (see `board_off.rs`), naming it.

use anyhow::{Context, Result};
use mcp_tasks_protocol::secret::Secret;
use std::path::PathBuf;
use std::time::Duration;

use crate::config::{parse_duration, ConfigFile};

/// Flags of the task board and of notifications.
#[derive(Debug, Clone, clap::Args)]
pub struct BoardArgs {
    /// Do not serve the task board at /board. It is served by default wherever HTTP
    /// is: behind a login when authentication is configured, else only on a loopback
    /// address.
    #[arg(long)]
    // A build without the board has none to turn off.
    #[cfg_attr(not(feature = "board"), allow(dead_code))]
    pub(super) no_board: bool,

    /// Principals who see and act on everyone's tasks on the board (comma-separated);
    /// every action of theirs is an audit event naming them. Others see their own.
    #[arg(long, value_delimiter = ',', value_name = "PRINCIPALS")]
    pub(super) operators: Vec<String>,

    /// The address people reach this server at (https://tasks.example.com), for the
    /// board links in notifications; board cookies are `Secure` when it is https.
    #[arg(long, env = "MCP_TASKS_PUBLIC_URL", value_name = "URL")]
    pub(super) public_url: Option<String>,

    /// A file holding the key that signs board logins. Replicas behind one address
    /// must share it; without it each process picks a random key and logins end with
    /// the process.
    #[arg(long, env = "MCP_TASKS_BOARD_SECRET_FILE", value_name = "FILE")]
    pub(super) board_secret_file: Option<PathBuf>,

    /// Let a task ask questions (elicitation, sampling) that its client did not
    /// declare it can answer: they wait on the board for a person (and go to the
    /// webhooks) instead of failing the tool at once. For agents whose client has no
    /// elicitation support, with people answering on the board.
    #[arg(long)]
    pub(super) board_takes_questions: bool,

    /// POST a JSON event to this URL when a task waits for input or fails (repeat for
    /// several; [[notify]] in the config chooses events and the Slack format).
    /// Deliveries are stored, retried with backoff, and survive restarts.
    #[arg(long = "notify-webhook", value_name = "URL")]
    pub(super) notify_webhooks: Vec<String>,

    /// Wait before the first retry of a failed webhook; each further retry doubles it,
    /// up to 5 minutes. [default: 1s]
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    pub(super) notify_retry: Option<Duration>,

    /// Time one webhook POST may take before it counts as failed (and is retried).
    /// A delivery is claimed for a little longer than this, so a process that dies
    /// while sending holds it no longer. [default: 10s]
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    pub(super) notify_timeout: Option<Duration>,
}

impl BoardArgs {
    /// The board secret (`--board-secret-file`, or `secret_file` under `[board]`), in
    /// every build: a plain call's `requestState` key is derived from it too.
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
}

//! The flags of the task board and of notifications, in every build: without the
//! `board` feature they are refused when given (see `board_off.rs`), naming it.

use std::path::PathBuf;
use std::time::Duration;

use crate::config::parse_duration;

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

//! The board's part of `serve` in a build without the `board` feature: no board, no
//! webhooks, no Slack app. The config file's `[board]`, `[[notify]]` and `[slack]` were
//! refused when it was read; a board or notification flag is refused here, naming the
//! feature.

use anyhow::Result;
use mcp_tasks_engine::TransitionObserver;
use mcp_tasks_server::Server;

use super::ServeArgs;
use crate::config::ConfigFile;

/// Nothing prepared: there is no board.
#[derive(Debug)]
pub struct Prepared;

/// Refuses the first board or notification flag given (`--no-board` asks for nothing).
///
/// # Errors
/// [`crate::features::missing`]'s message for that flag.
pub fn prepare(
    args: &ServeArgs,
    _file: &ConfigFile,
    _addr: Option<std::net::SocketAddr>,
    _authenticated: bool,
) -> Result<Prepared> {
    let b = &args.board;
    let given = [
        (!b.operators.is_empty(), "--operators"),
        (b.public_url.is_some(), "--public-url"),
        (b.board_secret_file.is_some(), "--board-secret-file"),
        (b.board_takes_questions, "--board-takes-questions"),
        (!b.notify_webhooks.is_empty(), "--notify-webhook"),
        (b.notify_retry.is_some(), "--notify-retry"),
        (b.notify_timeout.is_some(), "--notify-timeout"),
    ]
    .into_iter()
    .find_map(|(given, flag)| given.then_some(flag));
    match given {
        Some(flag) => Err(crate::features::missing(flag, "board")),
        None => Ok(Prepared),
    }
}

impl Prepared {
    /// No: nobody answers on a board that is not there.
    pub fn people_answer_questions(&self) -> bool {
        false
    }

    /// None: no board, so no channel people answer through.
    pub fn people_channels(&self) -> Vec<String> {
        Vec::new()
    }

    /// None: no board.
    pub fn board_url(&self) -> Option<String> {
        None
    }

    /// None: no notifier.
    pub fn observers(&self) -> Vec<TransitionObserver> {
        Vec::new()
    }

    /// Nothing to start.
    ///
    /// # Errors
    /// Never.
    pub fn start(self, _server: &Server) -> Result<Started> {
        Ok(Started)
    }
}

/// Nothing running.
#[derive(Debug)]
pub struct Started;

impl Started {
    /// No routes besides the server's own.
    ///
    /// # Errors
    /// Never.
    pub fn routes(
        self,
        _args: &ServeArgs,
        _file: &ConfigFile,
        _server: &Server,
    ) -> Result<axum::Router> {
        Ok(axum::Router::new())
    }
}

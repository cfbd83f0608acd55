//! How a client subcommand ends: its exit codes, the [`Exit`] error that carries a
//! non-zero one to `main`, and the helpers that print an error (with a hint when
//! there is something to do about it) and return the code it maps to.

use mcp_tasks_client::{ClientError, Target, TaskStatus, TaskView};
use std::fmt;
use std::process::ExitCode;

/// Exit status: the task completed.
pub const EXIT_OK: u8 = 0;
/// Exit status: the task failed, the tool reported an error, or the server refused.
pub const EXIT_FAILED: u8 = 1;
/// Exit status: the command line was wrong.
pub const EXIT_USAGE: u8 = 2;
/// Exit status: the task was cancelled.
pub const EXIT_CANCELLED: u8 = 3;
/// Exit status: the server could not be reached, the connection broke, or the server
/// refused the request for want of a valid token (HTTP 401 or 403).
pub const EXIT_CONNECTION: u8 = 4;
/// Exit status of `cancel`: the task had already completed or failed.
pub const EXIT_ALREADY_ENDED: u8 = 5;
/// Exit status: interrupted (Ctrl-C without a terminal to ask what to do, or twice);
/// the task goes on.
pub const EXIT_INTERRUPTED: u8 = 130;

/// A non-zero exit status chosen by a client subcommand, after it printed why.
#[derive(Debug, Clone, Copy)]
pub struct Exit(pub u8);

impl Exit {
    /// The process exit code.
    pub fn code(self) -> ExitCode {
        ExitCode::from(self.0)
    }
}

impl fmt::Display for Exit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "exit status {}", self.0)
    }
}

impl std::error::Error for Exit {}

/// The exit status that says how a task stands: [`EXIT_OK`] completed (or still
/// running: working, waiting for input), [`EXIT_FAILED`] failed, a tool error
/// included (a tool that reported an error failed, whatever the wire calls it),
/// [`EXIT_CANCELLED`] cancelled.
pub fn exit_for_task(t: &TaskView) -> u8 {
    match t.status {
        TaskStatus::Failed => EXIT_FAILED,
        TaskStatus::Completed if t.tool_error => EXIT_FAILED,
        TaskStatus::Cancelled => EXIT_CANCELLED,
        _ => EXIT_OK,
    }
}

/// The exit status for a client error.
pub fn exit_for(e: &ClientError) -> u8 {
    if e.is_connection() {
        EXIT_CONNECTION
    } else {
        EXIT_FAILED
    }
}

/// Prints a usage error and returns its exit status.
pub fn usage(message: &str) -> u8 {
    eprintln!(
        "{} {message}",
        console::style("usage:").red().bold().for_stderr()
    );
    EXIT_USAGE
}

/// Prints an error, and what to do about it when there is something to do, and
/// returns the exit status it maps to.
pub fn fail(context: &str, e: &ClientError) -> u8 {
    report(context, e, hint(None, e))
}

/// [`fail`] for a connection to `target` that could not be made: an HTTP server that
/// does not answer gets the hint to start one.
pub fn fail_to_connect(target: &Target, e: &ClientError) -> u8 {
    report("connecting", e, hint(Some(target), e))
}

fn report(context: &str, e: &ClientError, hint: Option<String>) -> u8 {
    eprintln!(
        "{} {context}: {e}",
        console::style("error:").red().bold().for_stderr()
    );
    if let Some(hint) = hint {
        eprintln!(
            "{} {hint}",
            console::style("hint:").yellow().bold().for_stderr()
        );
    }
    exit_for(e)
}

/// What a person can do about `e`: start a server (or fix the URL) when none answers
/// at an HTTP target, add `/mcp` to a URL without it where nothing speaks MCP, pass a
/// token when the server asks for one.
pub fn hint(target: Option<&Target>, e: &ClientError) -> Option<String> {
    if let (Some(Target::Http(url)), Some(404 | 405)) = (target, e.http_status()) {
        if let Some(with_mcp) = with_mcp_path(url) {
            return Some(format!(
                "nothing speaks MCP at {url}; mcp-tasks serve answers at the path /mcp: \
                 try {with_mcp}"
            ));
        }
        return Some(format!(
            "nothing speaks MCP at {url}: check the URL (mcp-tasks serve answers at \
             http://HOST:PORT/mcp)"
        ));
    }
    match (e, target) {
        (_, _) if e.http_status() == Some(401) => Some(
            "the server wants a valid bearer token: pass --token TOKEN (or set MCP_TASKS_TOKEN)"
                .into(),
        ),
        (_, _) if e.http_status() == Some(403) => Some(
            "the server refused the request with this token: check --token (or MCP_TASKS_TOKEN)"
                .into(),
        ),
        (ClientError::Connect(_), Some(Target::Http(url))) => Some(format!(
            "no server answers at {url}: start one with `mcp-tasks serve` \
             (`mcp-tasks serve --demo` for the demo tools), or check the URL"
        )),
        _ => None,
    }
}

/// `url` with the path `/mcp` (its query and fragment dropped), when its path does
/// not end in `/mcp` already: `http://127.0.0.1:8080` gives `http://127.0.0.1:8080/mcp`.
fn with_mcp_path(url: &str) -> Option<String> {
    let base = url.split(['?', '#']).next().unwrap_or(url);
    let trimmed = base.trim_end_matches('/');
    if trimmed.ends_with("/mcp") {
        return None;
    }
    let after_scheme = trimmed.split_once("://").map_or(trimmed, |(_, rest)| rest);
    if after_scheme.contains('/') {
        // A path of its own (`/api`): the server's root with /mcp is the likely one.
        let (scheme, rest) = trimmed.split_once("://")?;
        let host = rest.split('/').next()?;
        return Some(format!("{scheme}://{host}/mcp"));
    }
    Some(format!("{trimmed}/mcp"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_without_mcp_gets_it() {
        assert_eq!(
            with_mcp_path("http://127.0.0.1:8080").as_deref(),
            Some("http://127.0.0.1:8080/mcp")
        );
        assert_eq!(
            with_mcp_path("http://127.0.0.1:8080/").as_deref(),
            Some("http://127.0.0.1:8080/mcp")
        );
        assert_eq!(
            with_mcp_path("https://h/board").as_deref(),
            Some("https://h/mcp")
        );
        assert_eq!(with_mcp_path("http://h/mcp"), None);
        assert_eq!(with_mcp_path("http://h/mcp/"), None);
    }
}

//! What the client subcommands share: the subcommand enum, how a target is named
//! (a URL, or `-- command args…` for stdio), connection flags, and exit codes.

use anyhow::Result;
use clap::{Args, Subcommand, ValueEnum};
use mcp_tasks_client::{
    Client, ClientBuilder, ClientError, LoggingLevel, Target, TaskId, WirePreference,
};
use std::fmt;
use std::future::Future;
use std::process::ExitCode;

use super::{call, cancel, get, list, tools, watch};

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

/// The client subcommands (flattened into the top-level command list).
#[derive(Debug, Subcommand)]
pub enum ClientCommand {
    /// Call a tool (as a task when it allows one), show progress, answer its
    /// questions at the terminal, print the result.
    Call(call::CallArgs),
    /// Follow a task created earlier (e.g. with `call --detach`) to its end.
    Watch(TaskArgs),
    /// Show a task's current state.
    Get(TaskArgs),
    /// List the tasks started from this machine with `call` (kept in a journal per
    /// server under $MCP_TASKS_STATE_DIR, else $XDG_STATE_HOME/mcp-tasks, else
    /// ~/.local/state/mcp-tasks, for 7 days), each refreshed from the server, and
    /// those the server lists for this session (2025-11-25).
    List(ServerArgs),
    /// Cancel a task (exit status 5 when it had already completed or failed).
    Cancel(TaskArgs),
    /// List the server's tools and whether each runs as a task.
    Tools(ServerArgs),
}

impl ClientCommand {
    /// Runs the subcommand. A non-zero exit is an [`Exit`] error whose message was
    /// already printed.
    pub async fn run(self) -> Result<()> {
        let code = match self {
            ClientCommand::Call(a) => call::run(a).await,
            ClientCommand::Watch(a) => watch::run(a).await,
            ClientCommand::Get(a) => get::run(a).await,
            ClientCommand::List(a) => list::run(a).await,
            ClientCommand::Cancel(a) => cancel::run(a).await,
            ClientCommand::Tools(a) => tools::run(a).await,
        };
        match code {
            EXIT_OK => Ok(()),
            c => Err(Exit(c).into()),
        }
    }
}

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

/// Which wire to speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum WireArg {
    /// Ask the server (server/discover over HTTP), fall back to 2025-11-25.
    Auto,
    /// initialize with 2025-11-25.
    #[value(name = "2025-11-25")]
    V2025,
    /// 2026-07-28 with the Tasks extension (HTTP only); `extension` is accepted too.
    #[value(name = "2026-07-28", alias = "extension")]
    V2026,
}

/// Connection flags every client subcommand takes.
#[derive(Debug, Clone, Args)]
pub struct ConnectArgs {
    /// Bearer token sent with every HTTP request.
    #[arg(
        long,
        env = "MCP_TASKS_TOKEN",
        value_name = "TOKEN",
        hide_env_values = true
    )]
    pub token: Option<mcp_tasks_protocol::Secret<String>>,

    /// Task wire to speak.
    #[arg(long, value_enum, default_value_t = WireArg::Auto)]
    pub wire: WireArg,

    /// Rejoin this HTTP session (printed by `call --detach`) instead of opening a new
    /// one: servers that bind tasks to sessions only show a task to its session.
    #[arg(
        long,
        env = "MCP_TASKS_SESSION",
        value_name = "ID",
        allow_hyphen_values = true
    )]
    pub session: Option<String>,

    /// Machine-readable JSON on stdout instead of human output.
    #[arg(long)]
    pub json: bool,

    /// Ask the server for its log messages of this level and above (debug, info,
    /// notice, warning, error, critical, alert, emergency); `call` and `watch` show
    /// them on stderr. Without it the server chooses (ours: info and above). Log
    /// messages travel on the 2025-11-25 wire (`--wire 2025-11-25` with our server,
    /// which otherwise speaks the extension).
    #[arg(long, value_name = "LEVEL", value_parser = parse_log_level)]
    pub log_level: Option<LoggingLevel>,

    /// The address of the server's task board (the server's --public-url, e.g.
    /// https://tasks.example.com): when a task waits for input, `call` and `watch`
    /// also print the link where a person can answer it in the browser.
    #[arg(long, env = "MCP_TASKS_PUBLIC_URL", value_name = "URL")]
    pub public_url: Option<String>,
}

fn parse_log_level(s: &str) -> Result<LoggingLevel, String> {
    s.parse()
}

impl ConnectArgs {
    /// A client builder with these settings.
    pub fn builder(&self) -> ClientBuilder {
        let mut b = ClientBuilder::new()
            .client_info("mcp-tasks-cli", env!("CARGO_PKG_VERSION"))
            .wire(match self.wire {
                WireArg::Auto => WirePreference::Auto,
                WireArg::V2025 => WirePreference::V2025_11_25,
                WireArg::V2026 => WirePreference::V2026_07_28,
            });
        if let Some(t) = &self.token {
            b = b.bearer_token(t.expose().clone());
        }
        if let Some(s) = &self.session {
            b = b.resume_session(s.clone());
        }
        b
    }
}

/// The command line of a subcommand that names only a server (`list`, `tools`).
#[derive(Debug, Args)]
pub struct ServerArgs {
    /// The server URL (omit it when the server command follows `--`).
    #[arg(value_name = "TARGET", num_args = 0..=1)]
    positionals: Vec<String>,

    /// The stdio server to spawn, after `--`.
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<String>,

    #[command(flatten)]
    connect: ConnectArgs,
}

impl ServerArgs {
    /// Runs subcommand `name` (the word its usage error names): connects, lets `body`
    /// work with the client, the target and the `--json` flag, and ends the
    /// connection as [`finish`] does. Returns the exit status.
    pub async fn run<F, Fut>(self, name: &str, body: F) -> u8
    where
        F: FnOnce(Client, Target, bool) -> Fut,
        Fut: Future<Output = u8>,
    {
        let (target, rest) = match target(&self.positionals, &self.command) {
            Ok(t) => t,
            Err(e) => return usage(&e),
        };
        if !rest.is_empty() {
            return usage(&format!("{name} takes only a target"));
        }
        let json = self.connect.json;
        let t = target.clone();
        once(&target, &self.connect, |client| body(client, t, json)).await
    }
}

/// The command line of a subcommand about one task (`get`, `cancel`, `watch`).
#[derive(Debug, Args)]
pub struct TaskArgs {
    /// The server's URL, or the task id when the server command follows `--`.
    /// Hyphen values are allowed: some servers mint ids that begin with `-`.
    #[arg(value_name = "URL", allow_hyphen_values = true)]
    first: String,

    /// The task id (it may begin with `-`, as some servers' ids do).
    #[arg(value_name = "TASK-ID", allow_hyphen_values = true)]
    task_id: Option<String>,

    /// The stdio server to spawn, after `--`.
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<String>,

    /// The connection flags.
    #[command(flatten)]
    pub connect: ConnectArgs,
}

impl TaskArgs {
    /// The target and the task id. When the command line does not fit, the usage error
    /// is printed and its exit status is the `Err`.
    pub fn read(&self) -> Result<(Target, TaskId), u8> {
        let positionals: Vec<String> = std::iter::once(self.first.clone())
            .chain(self.task_id.clone())
            .collect();
        let (target, id) = target_and_one(&positionals, &self.command, "task id")?;
        Ok((target, TaskId::from_string(id)))
    }

    /// Runs a subcommand that asks one thing about the task: connects, lets `body` work
    /// with the client, the task id, the target and the `--json` flag, and ends the
    /// connection as [`finish`] does. Returns the exit status.
    pub async fn run<F, Fut>(self, body: F) -> u8
    where
        F: FnOnce(Client, TaskId, Target, bool) -> Fut,
        Fut: Future<Output = u8>,
    {
        let (target, id) = match self.read() {
            Ok(t) => t,
            Err(code) => return code,
        };
        let json = self.connect.json;
        let t = target.clone();
        once(&target, &self.connect, |client| body(client, id, t, json)).await
    }
}

/// Connects to `target`, lets `body` work with the client and ends the connection as
/// [`finish`] does. Returns `body`'s exit status, or the failed connection's.
async fn once<F, Fut>(target: &Target, connect: &ConnectArgs, body: F) -> u8
where
    F: FnOnce(Client) -> Fut,
    Fut: Future<Output = u8>,
{
    let client = match connect.builder().connect(target).await {
        Ok(c) => c,
        Err(e) => return fail_to_connect(target, &e),
    };
    let code = body(client.clone()).await;
    finish(client, connect).await;
    code
}

/// Ends a command's connection: a rejoined session (`--session`) is left open for the
/// next command, a fresh one is closed.
async fn finish(client: Client, connect: &ConnectArgs) {
    if connect.session.is_some() {
        client.detach().await;
    } else {
        client.close().await;
    }
}

/// Splits `[URL] NAME… [-- COMMAND ARGS…]` into a target and the remaining
/// positionals. With a command after `--`, every positional is kept; without, the
/// first positional must be an http(s) URL.
pub fn target(positionals: &[String], command: &[String]) -> Result<(Target, Vec<String>), String> {
    if let Some((program, args)) = command.split_first() {
        return Ok((
            Target::Stdio {
                program: program.clone(),
                args: args.to_vec(),
            },
            positionals.to_vec(),
        ));
    }
    match positionals.split_first() {
        Some((url, rest)) if url.starts_with("http://") || url.starts_with("https://") => {
            Ok((Target::Http(url.clone()), rest.to_vec()))
        }
        Some((other, _)) => Err(format!(
            "'{other}' is not a target: give an http:// URL first, or the server command after '--'"
        )),
        None => Err("missing target: give an http:// URL, or the server command after '--'".into()),
    }
}

/// Splits off the target (see [`target`]) and the one name after it; `what` says in
/// the usage error what that name is. When the command line does not fit, the usage
/// error is printed and its exit status is the `Err`.
pub fn target_and_one(
    positionals: &[String],
    command: &[String],
    what: &str,
) -> Result<(Target, String), u8> {
    let (target, rest) = target(positionals, command).map_err(|e| usage(&e))?;
    match <[String; 1]>::try_from(rest) {
        Ok([name]) => Ok((target, name)),
        Err(_) => Err(usage(&format!("give exactly one {what} after the target"))),
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
/// at an HTTP target, pass a token when the server asks for one.
pub fn hint(target: Option<&Target>, e: &ClientError) -> Option<String> {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn targets_are_a_url_first_or_a_command_last() {
        let (t, rest) = target(&s(&["http://h/mcp", "greet"]), &[]).unwrap();
        assert_eq!(t, Target::Http("http://h/mcp".into()));
        assert_eq!(rest, s(&["greet"]));
        let (t, rest) = target(&s(&["greet"]), &s(&["srv", "--stdio"])).unwrap();
        assert!(
            matches!(t, Target::Stdio { program, args } if program == "srv" && args == s(&["--stdio"]))
        );
        assert_eq!(rest, s(&["greet"]));
        assert!(target(&s(&["greet"]), &[]).is_err());
        assert!(target(&[], &[]).is_err());
    }
}

//! The command-line pieces the client subcommands share: how a target is named (a
//! URL, or `-- command args…` for stdio), the connection flags, the argument sets of
//! the subcommands about a server or one task, and the connect-run-close helper
//! they use.

use clap::{Args, ValueEnum};
use mcp_tasks_client::{Client, ClientBuilder, LoggingLevel, Target, TaskId, WirePreference};
use std::future::Future;

use super::exit::{fail_to_connect, usage};
use crate::journal::Journal;

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

    /// Which version of MCP tasks to speak: `auto` asks the server and takes the
    /// newest it offers.
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
}

/// The flags of the subcommands that follow a task at the terminal (`call`, `watch`):
/// what else to show while it runs. `get`, `list`, `cancel` and `tools` show nothing
/// while a task runs, so they do not take these.
#[derive(Debug, Clone, Args)]
pub struct FollowArgs {
    /// Ask the server for its log messages of this level and above (debug, info,
    /// notice, warning, error, critical, alert, emergency), shown on stderr while the
    /// task runs. Without it the server chooses (ours: info and above). Log messages
    /// travel on the 2025-11-25 wire (`--wire 2025-11-25` with our server, which
    /// otherwise speaks the extension).
    #[arg(long, value_name = "LEVEL", value_parser = parse_log_level)]
    pub log_level: Option<LoggingLevel>,

    /// The address people open the server's task board at (the server's --public-url,
    /// e.g. https://tasks.example.com), when it differs from the MCP URL's: when the task
    /// waits for a person, the link to its page there is printed. Without it the board
    /// next to the MCP URL is used when the server has one.
    #[arg(long, env = "MCP_TASKS_PUBLIC_URL", value_name = "URL")]
    pub public_url: Option<String>,
}

fn parse_log_level(s: &str) -> Result<LoggingLevel, String> {
    s.parse()
}

impl ConnectArgs {
    /// The journal of the tasks started at `target` with these credentials: one per
    /// server and bearer token, so that another principal's command never reads (or
    /// forgets) them.
    pub fn journal(&self, target: &Target) -> Option<Journal> {
        Journal::for_target(target, self.token.as_ref().map(|t| t.expose().as_str()))
    }

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

/// Environment variable naming the server the client commands talk to when the
/// command line names none.
pub const URL_ENV: &str = "MCP_TASKS_URL";
/// The server the client commands talk to when neither the command line nor
/// [`URL_ENV`] names one: `mcp-tasks serve`'s own default address.
pub const DEFAULT_URL: &str = "http://127.0.0.1:8080/mcp";

/// The server's URL a command line without one talks to: [`URL_ENV`] when set (and
/// not empty), else [`DEFAULT_URL`].
pub fn default_url() -> String {
    std::env::var(URL_ENV)
        .ok()
        .filter(|u| !u.trim().is_empty())
        .unwrap_or_else(|| DEFAULT_URL.to_string())
}

/// The command line of a subcommand that names only a server (`list`, `tools`).
#[derive(Debug, Args)]
pub struct ServerArgs {
    /// The server's MCP URL. Default: $MCP_TASKS_URL, else http://127.0.0.1:8080/mcp
    /// (`mcp-tasks serve`'s own address). Omit it when the server command follows `--`.
    #[arg(value_name = "URL")]
    url: Option<String>,

    /// A stdio server to start for this command, after `--` (e.g. `-- mcp-tasks serve
    /// --stdio --demo`).
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
        F: FnOnce(Client, Target, ConnectArgs) -> Fut,
        Fut: Future<Output = u8>,
    {
        let positionals: Vec<String> = self.url.iter().cloned().collect();
        let (target, rest) = match target(&positionals, &self.command, 0) {
            Ok(t) => t,
            Err(e) => return usage(&e),
        };
        if !rest.is_empty() {
            return usage(&format!("{name} takes only a server URL"));
        }
        let connect = self.connect.clone();
        let t = target.clone();
        once(&target, &self.connect, |client| body(client, t, connect)).await
    }
}

/// The command line of a subcommand about one task (`get`, `cancel`, `watch`).
#[derive(Debug, Args)]
pub struct TaskArgs {
    /// The server's MCP URL (default: $MCP_TASKS_URL, else http://127.0.0.1:8080/mcp),
    /// or the task id when the URL is left out.
    #[arg(value_name = "URL|TASK-ID", allow_hyphen_values = true)]
    first: String,

    /// The task id, as `call` printed it (it may begin with `-`, as some servers' ids
    /// do).
    #[arg(value_name = "TASK-ID", allow_hyphen_values = true)]
    task_id: Option<String>,

    /// A stdio server to start for this command, after `--`.
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
    /// with the client, the task id, the target and the connection flags, and ends
    /// the connection as [`finish`] does. Returns the exit status.
    pub async fn run<F, Fut>(self, body: F) -> u8
    where
        F: FnOnce(Client, TaskId, Target, ConnectArgs) -> Fut,
        Fut: Future<Output = u8>,
    {
        let (target, id) = match self.read() {
            Ok(t) => t,
            Err(code) => return code,
        };
        let connect = self.connect.clone();
        let t = target.clone();
        once(&target, &self.connect, |client| {
            body(client, id, t, connect)
        })
        .await
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

/// Whether `word` is meant as a server's address: an http(s) URL.
fn is_url(word: &str) -> bool {
    word.starts_with("http://") || word.starts_with("https://")
}

/// Whether `word` looks like a tool argument (`key=value`) rather than a name or a URL.
fn looks_like_arg(word: &str) -> bool {
    word.split_once('=')
        .is_some_and(|(key, _)| !key.is_empty() && !key.contains('/') && !key.contains(':'))
}

/// Splits `[URL] NAME… [-- COMMAND ARGS…]` into a target and the remaining
/// positionals, `names` of which the command expects after the target. With a command
/// after `--`, every positional is kept; else an http(s) URL first is the target, and
/// without one the [`default_url`] is. A word first that looks like an address but is
/// not an http URL (`localhost:8080/mcp`), given with all the names, is refused with
/// what to write instead.
pub fn target(
    positionals: &[String],
    command: &[String],
    names: usize,
) -> Result<(Target, Vec<String>), String> {
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
        Some((url, rest)) if is_url(url) => Ok((Target::Http(url.clone()), rest.to_vec())),
        // `call greet name=Ada`: an argument written as a positional word, not a URL and
        // a tool; say how arguments are given rather than that `greet` is no URL.
        Some((tool, rest)) if names > 0 && rest.first().is_some_and(|w| looks_like_arg(w)) => {
            let args: Vec<String> = rest.iter().map(|w| format!("--arg {w}")).collect();
            Err(format!(
                "'{}' looks like an argument of the tool: give each as --arg KEY=VALUE, \
                 e.g. mcp-tasks call {tool} {}",
                rest[0],
                args.join(" ")
            ))
        }
        Some((other, rest)) if names == 0 || (rest.len() >= names && !rest.is_empty()) => {
            Err(format!(
                "'{other}' is not a server URL: give an http:// or https:// URL (e.g. \
                 http://{}), or leave it out to use $MCP_TASKS_URL or {DEFAULT_URL}",
                other.trim_start_matches("//")
            ))
        }
        _ => Ok((Target::Http(default_url()), positionals.to_vec())),
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
    let (target, rest) = target(positionals, command, 1).map_err(|e| usage(&e))?;
    match <[String; 1]>::try_from(rest) {
        Ok([name]) => Ok((target, name)),
        Err(_) => Err(usage(&format!(
            "give exactly one {what} after the server URL"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn targets_are_a_url_first_a_command_last_or_the_default() {
        let (t, rest) = target(&s(&["http://h/mcp", "greet"]), &[], 1).unwrap();
        assert_eq!(t, Target::Http("http://h/mcp".into()));
        assert_eq!(rest, s(&["greet"]));
        let (t, rest) = target(&s(&["greet"]), &s(&["srv", "--stdio"]), 1).unwrap();
        assert!(
            matches!(t, Target::Stdio { program, args } if program == "srv" && args == s(&["--stdio"]))
        );
        assert_eq!(rest, s(&["greet"]));
        // No URL: the default server (the environment's, else serve's own address).
        let (t, rest) = target(&s(&["greet"]), &[], 1).unwrap();
        assert_eq!(t, Target::Http(default_url()));
        assert_eq!(rest, s(&["greet"]));
        let (t, rest) = target(&[], &[], 0).unwrap();
        assert_eq!(t, Target::Http(default_url()));
        assert!(rest.is_empty());
        // An address without its scheme is named, with what to write instead.
        let e = target(&s(&["localhost:8080/mcp", "greet"]), &[], 1).unwrap_err();
        assert!(e.contains("http://localhost:8080/mcp"), "{e}");
        assert!(target(&s(&["localhost:8080/mcp"]), &[], 0).is_err());
        // An argument written as a word after the tool: how to give it, not "no URL".
        let e = target(&s(&["slow_compute", "seconds=1"]), &[], 1).unwrap_err();
        assert!(
            e.contains("--arg KEY=VALUE") && e.contains("call slow_compute --arg seconds=1"),
            "{e}"
        );
        assert!(!e.contains("not a server URL"), "{e}");
    }
}

//! `mcp-tasks wrap [serve flags] -- COMMAND ARGS...`: durable tasks in front of one
//! stdio MCP server, served over stdio (for desktop hosts) unless `--listen` is given.

use anyhow::{Context, Result};
use clap::Args;
use std::path::Path;

use super::ServeArgs;

/// Options of `wrap`: every `serve` option, and the server to wrap after `--`. The
/// options whose default differs from `serve`'s say `wrap`'s own in its help (`--stdio`,
/// on by default here, is hidden).
#[derive(Debug, Args)]
#[command(
    mut_arg("listen", |a| a.help(WRAP_LISTEN_HELP).long_help(None)),
    mut_arg("database", |a| a.help(WRAP_DATABASE_HELP).long_help(None)),
    mut_arg("stdio", |a| a.hide(true)),
)]
pub struct WrapArgs {
    #[command(flatten)]
    serve: ServeArgs,

    /// Put before every tool name of the wrapped server (default: none).
    #[arg(long, value_name = "TEXT")]
    prefix: Option<String>,

    /// Run a call again when mcp-tasks restarts while it was in flight (only for tools
    /// that are safe to repeat); otherwise such a task fails with a message saying so.
    #[arg(long)]
    resumable: bool,

    /// Most processes of the wrapped server at once: one per running call, so that
    /// its questions and progress belong to exactly one task.
    #[arg(long, value_name = "N", default_value_t = super::gateway::DEFAULT_MAX_CONNECTIONS)]
    max_upstream_connections: usize,

    /// The MCP server to wrap (a stdio server), after `--`: e.g.
    /// `-- npx -y @modelcontextprotocol/server-everything`.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    command: Vec<String>,
}

/// `--listen` as `wrap` reads it: stdio unless it is given.
const WRAP_LISTEN_HELP: &str = "Serve Streamable HTTP at this address (endpoint /mcp) \
instead of stdio. Port 0 picks a free port; the chosen address is printed on stderr. \
[default: none: one session over stdin/stdout]";

/// `--database` as `wrap` reads it: a file in the user's state folder.
const WRAP_DATABASE_HELP: &str = "Task store: sqlite://PATH (durable; created if missing) \
or memory: (lost on exit). [default: sqlite://STATE/wrap.db, STATE being \
$MCP_TASKS_STATE_DIR, else $XDG_STATE_HOME/mcp-tasks, else ~/.local/state/mcp-tasks]";

/// Runs `wrap`.
///
/// # Errors
/// As `serve`.
pub async fn run(args: WrapArgs) -> Result<()> {
    let WrapArgs {
        mut serve,
        prefix,
        resumable,
        max_upstream_connections,
        command,
    } = args;
    let upstream = super::gateway::stdio_upstream(
        upstream_name(&command),
        command,
        prefix,
        resumable,
        max_upstream_connections,
    )?;
    if serve.listen.is_none() {
        serve.stdio = true;
    }
    if serve.database.is_none() {
        serve.database = Some(default_database()?.into());
    }
    super::run_with_upstreams(serve, vec![upstream]).await
}

/// A name for messages: the program's file name, or for launchers (`npx`, `node`,
/// `python`, `uvx`, ...) the first argument that is not an option.
fn upstream_name(command: &[String]) -> String {
    let base = |s: &str| {
        Path::new(s)
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_else(|| s.to_string())
    };
    let Some(program) = command.first() else {
        return "upstream".into();
    };
    let program = base(program);
    let launcher = matches!(
        program.as_str(),
        "npx" | "node" | "bunx" | "bun" | "deno" | "uvx" | "uv" | "pipx" | "docker"
    ) || program.starts_with("python");
    if launcher {
        if let Some(arg) = command[1..].iter().find(|a| !a.starts_with('-')) {
            return base(arg);
        }
    }
    program
}

/// `wrap`'s task store: a file in the user's state folder, since a desktop host may
/// start the server in a folder it cannot write (`/`). Several hosts wrapping servers
/// at once share it safely (leases, as replicas do).
fn default_database() -> Result<String> {
    let dir = crate::journal::user_state_dir().context(
        "no folder for the task store: set HOME, MCP_TASKS_STATE_DIR, or pass --database",
    )?;
    std::fs::create_dir_all(&dir)
        .with_context(|| format!("creating the state folder {}", dir.display()))?;
    Ok(format!("sqlite://{}", dir.join("wrap.db").display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(parts: &[&str]) -> String {
        upstream_name(&parts.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn the_upstream_is_named_after_what_it_runs() {
        assert_eq!(name(&["/usr/bin/my-server", "--port", "1"]), "my-server");
        assert_eq!(
            name(&["npx", "-y", "@modelcontextprotocol/server-everything"]),
            "server-everything"
        );
        assert_eq!(name(&["python3", "-m", "srv"]), "srv");
        assert_eq!(name(&["node", "dist/index.js", "stdio"]), "index.js");
    }
}

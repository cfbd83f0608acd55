//! `mcp-tasks`: serve task-capable MCP tools (shell commands from a config file, or the
//! built-in demo set) over stdio or Streamable HTTP, with a durable task store; and a
//! client for any task server (`call`, `get`, `list`, `watch`, `cancel`, `tools`).
//!
//! | module | what it owns |
//! |---|---|
//! | `cmd` | one file per subcommand: `serve/` (flags, config, stores), and the client commands |
//! | `config` | the TOML config file: settings and `[[tool]]` entries |
//! | `command_tool` | a `[[tool]]` that runs a command: arguments in, stdout as status, exit status as result (feature `command-tools`) |
//! | `features` | what this build leaves out (its Cargo features), and the message that says so |
//! | `demo` | `--demo`: the built-in tools for trying tasks out |
//! | `demo_input` | demo tools that ask for input mid-task (elicitation, sampling) |
//! | `fixtures`, `fixtures_2025`, `fixtures_mrtr` | `--conformance-fixtures`: the tools the official conformance scenarios call |
//! | `journal` | the client's record of the tasks this user started, per server and bearer token, in a folder of its own |
//! | `suggest` | "did you mean …?" for a misspelt config key or tool name |

// `bench` is its own crate; without the feature a stub that says so.
#[cfg(not(feature = "bench"))]
#[path = "bench_off.rs"]
mod bench;
mod cmd;
#[cfg(feature = "command-tools")]
mod command_template;
#[cfg(feature = "command-tools")]
mod command_tool;
mod config;
mod config_identity;
mod config_people;
mod demo;
mod demo_form;
mod demo_input;
mod demo_people;
mod demo_pipeline;
#[cfg(test)]
mod docs_check;
mod features;
mod fixtures;
mod fixtures_2025;
mod fixtures_mrtr;
mod journal;
mod suggest;

/// The allocator (see the `mimalloc` feature in Cargo.toml for why).
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[cfg(feature = "bench")]
use mcp_tasks_bench as bench;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// MCP Tasks server: long-running tool calls as durable tasks a client can poll,
/// cancel and collect later (MCP 2025-11-25 tasks and the 2026-07-28 Tasks extension).
#[derive(Debug, Parser)]
#[command(name = "mcp-tasks", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

// Parsed once per process: the size difference between variants costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
enum Command {
    /// Serve tools over Streamable HTTP (default 127.0.0.1:8080, path /mcp) or stdio.
    Serve(cmd::serve::ServeArgs),
    /// Put durable tasks in front of a stdio MCP server: `mcp-tasks wrap -- COMMAND ARGS`.
    /// Its tools are offered with task support on both task wires; serves stdio
    /// unless --listen is given.
    Wrap(cmd::serve::wrap::WrapArgs),
    /// Measure an MCP task server (ours or any other) on loopback HTTP.
    Bench(bench::BenchArgs),
    #[command(flatten)]
    Client(cmd::ClientCommand),
    /// Cedar policies: `mcp-tasks policy check --policies DIR --principal alice
    /// --tool deploy --args '{...}'` says what a call would meet.
    #[command(subcommand)]
    Policy(cmd::policy::PolicyCommand),
    /// Print a shell completion script: `mcp-tasks completions bash >
    /// /etc/bash_completion.d/mcp-tasks` (zsh: into a folder on $fpath as _mcp-tasks;
    /// fish: ~/.config/fish/completions/mcp-tasks.fish).
    Completions {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff): `mcp-tasks man > mcp-tasks.1; man ./mcp-tasks.1`;
    /// with --dir, write one page per command there (mcp-tasks.1, mcp-tasks-serve.1,
    /// mcp-tasks-call.1, ...), for a package's man1 folder.
    Man {
        /// Write every command's page into this folder (created if missing) instead of
        /// printing the top-level page.
        #[arg(long, value_name = "DIR")]
        dir: Option<std::path::PathBuf>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Completions { shell } => {
            use clap::CommandFactory;
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "mcp-tasks", &mut script);
            return print_all(&script, "the completion script");
        }
        Command::Man { dir: Some(dir) } => return write_man_pages(&dir),
        Command::Man { dir: None } => {
            use clap::CommandFactory;
            let mut page = Vec::new();
            if let Err(e) = clap_mangen::Man::new(Cli::command()).render(&mut page) {
                eprintln!("mcp-tasks: cannot render the manual page: {e}");
                return ExitCode::from(1);
            }
            return print_all(&page, "the manual page");
        }
        _ => {}
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("mcp-tasks: cannot start the async runtime: {e}");
            return ExitCode::from(1);
        }
    };
    let result = runtime.block_on(async {
        match cli.command {
            Command::Serve(args) => cmd::serve::run(args).await,
            Command::Wrap(args) => cmd::serve::wrap::run(args).await,
            Command::Bench(args) => bench::run(args).await.map_err(Into::into),
            Command::Client(c) => c.run().await,
            Command::Policy(p) => p.run(),
            Command::Completions { .. } | Command::Man { .. } => Ok(()),
        }
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            if let Some(exit) = e.downcast_ref::<cmd::exit::Exit>() {
                return exit.code();
            }
            eprintln!("mcp-tasks: error: {}", error_chain(&e));
            ExitCode::from(1)
        }
    }
}

/// An error and its causes, `: `-separated, each said once: a cause whose text an
/// earlier message already includes (libraries often repeat their source in their own
/// message) is left out.
fn error_chain(e: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if text.is_empty() || out.contains(&text) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
    }
    out
}

/// `man --dir DIR`: one page per command (the top-level page lists the others as
/// `mcp-tasks-serve(1)`, ...), each file's path printed.
fn write_man_pages(dir: &std::path::Path) -> ExitCode {
    use clap::CommandFactory;
    let written = std::fs::create_dir_all(dir)
        .and_then(|()| clap_mangen::generate_to(Cli::command(), dir))
        .and_then(|()| std::fs::read_dir(dir)?.collect::<Result<Vec<_>, _>>());
    match written {
        Ok(entries) => {
            let mut names: Vec<String> = entries
                .iter()
                .map(|e| e.path().display().to_string())
                .filter(|p| p.ends_with(".1"))
                .collect();
            names.sort();
            print_all(
                format!("{}\n", names.join("\n")).as_bytes(),
                "the page list",
            )
        }
        Err(e) => {
            eprintln!(
                "mcp-tasks: cannot write the manual pages into {}: {e}",
                dir.display()
            );
            ExitCode::from(1)
        }
    }
}

/// Writes `bytes` to stdout; a reader that stopped early (`| head`) is not an error.
fn print_all(bytes: &[u8], what: &str) -> ExitCode {
    use std::io::Write;
    match std::io::stdout().write_all(bytes) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("mcp-tasks: cannot write {what}: {e}");
            ExitCode::from(1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Inner;
    impl std::fmt::Display for Inner {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("(code: 14) unable to open database file")
        }
    }
    impl std::error::Error for Inner {}

    #[derive(Debug)]
    struct Outer(Inner);
    impl std::fmt::Display for Outer {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "store backend error: {}", self.0)
        }
    }
    impl std::error::Error for Outer {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.0)
        }
    }

    #[test]
    fn each_cause_is_said_once() {
        let e = anyhow::Error::new(Outer(Inner)).context("opening task store sqlite://x.db");
        assert_eq!(
            error_chain(&e),
            "opening task store sqlite://x.db: store backend error: (code: 14) unable to open database file"
        );
    }
}

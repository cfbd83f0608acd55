//! A command-line program run the way a person runs it: started with arguments and a
//! task journal folder of the test's own, run to its end with stdin closed, its output
//! read as text or JSON.
//!
//! The binary is a parameter: `env!("CARGO_BIN_EXE_mcp-tasks")` exists only in the
//! tests of the crate that builds it, so that crate's `tests/common` wraps these with
//! its binary.

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

/// The environment variable naming the folder of the client commands' task journal.
pub const STATE_DIR_VAR: &str = "MCP_TASKS_STATE_DIR";

/// `bin` with `args`, keeping its task journal in `state` (never the real home).
pub fn command(bin: &str, state: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(bin);
    c.args(args).env(STATE_DIR_VAR, state);
    c
}

/// Runs `command` to its end with stdin closed and returns what it wrote.
pub fn run(mut command: Command) -> Output {
    command
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("run {:?}: {e}", command.get_program()))
}

/// A task journal folder shared by the tests of one test binary, for tests that never
/// read each other's journal. It stays in the system's temporary folder after the run
/// (a static is never dropped); it holds a few small files.
pub fn state_dir() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| tempfile::tempdir().expect("a temporary folder"))
        .path()
}

/// What the process wrote on stdout, as text.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// What the process wrote on stderr, as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The process's stdout parsed as JSON; panics with both outputs when it is not.
pub fn json_out(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {}\nstderr: {}",
            stdout(o),
            stderr(o)
        )
    })
}

//! What this crate's test files share: the `mcp-tasks` binary serving the demo tools
//! (or the conformance fixtures) over HTTP on a free loopback port.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

/// The binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_mcp-tasks");

/// A running `mcp-tasks serve`, killed when dropped.
pub struct Server {
    /// The server process.
    pub child: Child,
    /// Its MCP endpoint, as it printed it.
    pub url: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `mcp-tasks serve --demo --listen 127.0.0.1:0 --log warn` with `extra`
/// arguments (at least `--database`) and waits for the address it prints.
#[allow(dead_code)] // each test file compiles this module; not all of them serve the demo
pub fn serve(extra: &[&str]) -> Server {
    serve_tools("--demo", extra)
}

/// As [`serve`], with another set of built-in tools than `--demo` (e.g.
/// `--conformance-fixtures`).
pub fn serve_tools(tools: &str, extra: &[&str]) -> Server {
    let mut child = Command::new(BIN)
        .args(["serve", tools, "--log", "warn"])
        .args(["--listen", "127.0.0.1:0"])
        .args(extra)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start mcp-tasks");
    let stderr = child.stderr.take().expect("stderr");
    let mut lines = BufReader::new(stderr).lines();
    let url = loop {
        let line = lines
            .next()
            .expect("server printed its address")
            .expect("read stderr");
        if let Some(rest) = line.split("listening on ").nth(1) {
            break rest.trim().to_string();
        }
    };
    std::thread::spawn(move || for _ in lines {});
    Server { child, url }
}

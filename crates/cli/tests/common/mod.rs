//! What this crate's test files share: the `mcp-tasks` binary serving the demo tools
//! (or the conformance fixtures) over HTTP on a free loopback port, and the binary run
//! as a person runs it ([`command`], [`run`]: the test kit's `cli` helpers bound to this
//! crate's binary, whose path only this crate's tests know). Waiting (`eventually`)
//! and the interop peers are in the test kit, `mcp_tasks_testkit`.
#![allow(dead_code, unused_imports)] // each test file compiles this module; not all of them use all of it

pub mod rpc;

pub mod pg;
pub mod proc;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};

/// The binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_mcp-tasks");

pub use mcp_tasks_testkit::cli::{json_out, state_dir, stderr, stdout};

/// The binary with `args`, keeping its task journal in `state`.
pub fn command(state: &Path, args: &[&str]) -> Command {
    mcp_tasks_testkit::cli::command(BIN, state, args)
}

/// The binary with `args` run to its end with stdin closed, its journal in `state`.
pub fn run(state: &Path, args: &[&str]) -> Output {
    mcp_tasks_testkit::cli::run(command(state, args))
}

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
    let mut args = vec!["serve", tools, "--log", "warn", "--listen", "127.0.0.1:0"];
    args.extend_from_slice(extra);
    spawn_listening(&args)
}

/// Starts the binary with `args` (which must make it listen on HTTP, e.g. `serve ...
/// --listen 127.0.0.1:0` or `wrap ... --listen 127.0.0.1:0 -- ...`) and waits for the
/// address it prints.
pub fn spawn_listening(args: &[&str]) -> Server {
    spawn_listening_with_env(args, &[])
}

/// [`spawn_listening`] that hands every later line of the server's stderr (its log)
/// to the returned channel.
#[allow(dead_code)] // each test file compiles this module; few read the log
pub fn spawn_listening_logged(args: &[&str]) -> (Server, std::sync::mpsc::Receiver<String>) {
    let (server, lines) = start_and_read_url(args, &[]);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in lines.map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    (server, rx)
}

/// [`spawn_listening`] with extra environment variables for the server.
pub fn spawn_listening_with_env(args: &[&str], env: &[(&str, &str)]) -> Server {
    let (server, lines) = start_and_read_url(args, env);
    std::thread::spawn(move || for _ in lines {});
    server
}

/// Starts the binary and reads its stderr up to the address it prints; the rest of
/// its stderr is the caller's to read (or drain).
fn start_and_read_url(
    args: &[&str],
    env: &[(&str, &str)],
) -> (Server, std::io::Lines<BufReader<std::process::ChildStderr>>) {
    let mut child = Command::new(BIN)
        .args(args)
        .envs(env.iter().copied())
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
        if let Some(url) = listening_url(&line) {
            break url;
        }
    };
    (Server { child, url }, lines)
}

/// The URL of `serve`'s "listening on URL" line, in either log format (in JSON the
/// line is a record whose message ends with the URL).
pub fn listening_url(line: &str) -> Option<String> {
    let rest = line.split("listening on ").nth(1)?;
    rest.split(['"', ' ']).next().map(|u| u.trim().to_string())
}

/// A loopback port that refuses connections for as long as the returned socket lives:
/// the socket is bound but never listens. A port taken from a listener that is then
/// dropped is only closed until some other process binds it (and a test that binds such
/// a port later fails with `AddrInUse`); a bound socket keeps it for the test.
pub fn refused_port() -> (tokio::net::TcpSocket, u16) {
    let socket = tokio::net::TcpSocket::new_v4().expect("socket");
    socket
        .bind(([127, 0, 0, 1], 0).into())
        .expect("bind a loopback port");
    let port = socket.local_addr().expect("addr").port();
    (socket, port)
}

//! What this crate's test files share: the `mcp-tasks` binary serving the demo tools
//! (or the conformance fixtures) over HTTP on a free loopback port, and
//! [`eventually`], the one way a test waits for something to happen.
#![allow(dead_code)] // each test file compiles this module; not all of them use all of it

pub mod pg;
pub mod proc;

use std::future::Future;
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

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

/// [`spawn_listening`] with extra environment variables for the server.
pub fn spawn_listening_with_env(args: &[&str], env: &[(&str, &str)]) -> Server {
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
    std::thread::spawn(move || for _ in lines {});
    Server { child, url }
}

/// The URL of `serve`'s "listening on URL" line, in either log format (in JSON the
/// line is a record whose message ends with the URL).
pub fn listening_url(line: &str) -> Option<String> {
    let rest = line.split("listening on ").nth(1)?;
    rest.split(['"', ' ']).next().map(|u| u.trim().to_string())
}

/// A bound for [`eventually`] that only a failing test reaches.
pub const WAIT: Duration = Duration::from_secs(10);

/// How long [`eventually`] lets pass between two checks.
const STEP: Duration = Duration::from_millis(20);

/// What a condition of [`eventually`] returns: a `bool`, or an `Option` holding what was
/// found once the condition is met.
pub trait Met {
    /// What [`eventually`] returns.
    type Value;
    /// `Some` once the condition is met.
    fn met(self) -> Option<Self::Value>;
}

impl Met for bool {
    type Value = ();
    fn met(self) -> Option<()> {
        self.then_some(())
    }
}

impl<T> Met for Option<T> {
    type Value = T;
    fn met(self) -> Option<T> {
        self
    }
}

/// Checks `condition` until it is met and returns what it found; panics, naming the
/// line of the call, when `timeout` (tokio time) passes first. The timeout only bounds
/// a failure, so it can be generous.
#[track_caller]
pub fn eventually<M, F, Fut>(timeout: Duration, mut condition: F) -> impl Future<Output = M::Value>
where
    M: Met,
    F: FnMut() -> Fut,
    Fut: Future<Output = M>,
{
    let caller = std::panic::Location::caller();
    async move {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            if let Some(value) = condition().await.met() {
                return value;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "the condition awaited at {caller} was not met within {timeout:?}"
            );
            // The interval between two checks of a condition nothing signals.
            tokio::time::sleep(STEP).await;
        }
    }
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

//! Servers nobody here wrote, started for the peer scenarios
//! ([`peer_suite`](mod@crate::peer_suite)) that the client crate's and the CLI's
//! `tests/peers.rs` run.
//!
//! `tests/interop/run.sh` installs the peers and points at them with environment
//! variables; without the variable a test prints a notice and passes (the plain
//! `cargo test --workspace` runs before anything is installed). With the variable set,
//! a missing or broken peer fails the test, in CI or not.
//!
//! - `MCP_TASKS_INTEROP_FASTMCP_PYTHON`: the Python of the venv holding `fastmcp-tasks`
//!   4.1.4; it runs `tests/interop/fastmcp_tasks_server.py` (FastMCP with the Tasks
//!   extension on a Docket `memory://` queue).
//! - `MCP_TASKS_INTEROP_EVERYTHING`: `dist/index.js` of
//!   `@modelcontextprotocol/server-everything` 2026.8.31, run with `node`.
//! - `MCP_TASKS_INTEROP_RMCP_SERVER`, `MCP_TASKS_INTEROP_TOWER_MCP_SERVER`: the servers
//!   built from `tests/interop/{rmcp,tower-mcp}-server` ([`RustPeer`]).
//! - `MCP_TASKS_INTEROP_TURUL_SERVER`: the server built from `bench/turul-task-server`
//!   (turul-mcp-server 0.4.5 with turul-mcp-ext-tasks 0.1.5), started on its memory or
//!   SQLite store ([`turul`]).
//! - `MCP_TASKS_INTEROP_NODE`: the folder where run.sh installs
//!   `@modelcontextprotocol/sdk` 1.32.2, whose example servers `simpleStreamableHttp.js`
//!   and `simpleTaskInteractive.js` are peers too ([`ts_example`]). Their rule is the
//!   one their tests had before they joined the peer table: set, but the SDK (or `node`)
//!   missing, a test prints a notice and passes, except under `CI`, where it fails.
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// The pinned version of fastmcp-tasks the tests expect.
pub const FASTMCP_TASKS_VERSION: &str = "4.1.4";
/// The pinned version of the everything server the tests expect.
pub const EVERYTHING_VERSION: &str = "2026.8.31";

/// Variable naming the Python with fastmcp-tasks.
pub const FASTMCP_VAR: &str = "MCP_TASKS_INTEROP_FASTMCP_PYTHON";
/// Variable naming the everything server's `dist/index.js`.
pub const EVERYTHING_VAR: &str = "MCP_TASKS_INTEROP_EVERYTHING";

/// The pinned version of the TypeScript SDK whose example servers the tests start.
pub const TS_SDK_VERSION: &str = "1.32.2";
/// Variable naming the folder holding the TypeScript SDK (`node_modules/...`).
pub const NODE_VAR: &str = "MCP_TASKS_INTEROP_NODE";

/// The repository root (this crate is `crates/testkit`), where `tests/interop` holds
/// the peers' scripts.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The path in `var`, or `None` with a notice when it is unset.
fn configured(var: &str, what: &str) -> Option<PathBuf> {
    match std::env::var_os(var) {
        Some(p) if !p.is_empty() => Some(PathBuf::from(p)),
        _ => {
            eprintln!(
                "skipping {what} interop test: {var} is not set (tests/interop/run.sh installs \
                 the peer and sets it)"
            );
            None
        }
    }
}

/// A running peer server, killed when dropped (then its temporary directory, if any,
/// is removed).
#[derive(Debug)]
pub struct PeerServer {
    child: Child,
    /// Its MCP endpoint.
    pub url: String,
    /// Where its files live (turul's SQLite store), removed after it is killed.
    _dir: Option<tempfile::TempDir>,
}

impl Drop for PeerServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Reads lines of `from` until one holds `marker`; returns what follows it and keeps
/// draining the stream in the background so the peer never blocks on a full pipe.
fn wait_for_line(from: impl Read + Send + 'static, marker: &str, what: &str) -> String {
    let mut lines = BufReader::new(from).lines();
    let mut seen = Vec::new();
    let rest = loop {
        match lines.next() {
            Some(Ok(line)) => {
                if let Some((_, rest)) = line.split_once(marker) {
                    break rest.trim().to_string();
                }
                seen.push(line);
            }
            Some(Err(e)) => panic!("{what}: reading its output: {e}"),
            None => panic!(
                "{what} exited before listening; its output:\n{}",
                seen.join("\n")
            ),
        }
    };
    std::thread::spawn(move || for _ in lines {});
    rest
}

/// The Python with fastmcp-tasks 4.1.4, or `None` (with a notice) when not configured.
/// Panics when configured but not that version.
pub fn fastmcp_python() -> Option<PathBuf> {
    let python = configured(FASTMCP_VAR, "fastmcp-tasks")?;
    let out = Command::new(&python)
        .args([
            "-c",
            "import importlib.metadata as m; print(m.version('fastmcp-tasks'))",
        ])
        .output()
        .unwrap_or_else(|e| panic!("{FASTMCP_VAR}={}: cannot run it: {e}", python.display()));
    let version = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert_eq!(
        version,
        FASTMCP_TASKS_VERSION,
        "{FASTMCP_VAR}={} has fastmcp-tasks '{version}', {FASTMCP_TASKS_VERSION} expected; \
         stderr: {}",
        python.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    Some(python)
}

/// Starts `tests/interop/fastmcp_tasks_server.py` on a free loopback port; `None`
/// (with a notice) when not configured.
pub fn fastmcp_tasks() -> Option<PeerServer> {
    let python = fastmcp_python()?;
    let mut child = Command::new(python)
        .arg(root().join("tests/interop/fastmcp_tasks_server.py"))
        .arg("0")
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start the fastmcp-tasks server");
    let stdout = child.stdout.take().expect("piped stdout");
    let url = wait_for_line(stdout, "listening on ", "the fastmcp-tasks server");
    Some(PeerServer {
        child,
        url,
        _dir: None,
    })
}

/// The everything server's `dist/index.js`, or `None` (with a notice) when not
/// configured. Panics when configured but not the pinned version or `node` is missing.
pub fn everything() -> Option<PathBuf> {
    let index = configured(EVERYTHING_VAR, "server-everything")?;
    let package = index
        .parent()
        .and_then(Path::parent)
        .map(|p| p.join("package.json"))
        .unwrap_or_else(|| panic!("{EVERYTHING_VAR}={}: not dist/index.js", index.display()));
    let version = std::fs::read_to_string(&package)
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .and_then(|v| v["version"].as_str().map(str::to_string));
    assert_eq!(
        version.as_deref(),
        Some(EVERYTHING_VERSION),
        "{EVERYTHING_VAR}={}: no server-everything {EVERYTHING_VERSION} at {}",
        index.display(),
        package.display()
    );
    let node = Command::new("node")
        .arg("--version")
        .stdout(Stdio::null())
        .status();
    assert!(
        node.is_ok_and(|s| s.success()),
        "{EVERYTHING_VAR} is set but node is not on PATH"
    );
    Some(index)
}

/// Starts the everything server over Streamable HTTP on a free loopback port
/// (`tests/interop/loopback.cjs` binds it to 127.0.0.1 and prints the port, since with
/// `PORT=0` it only says "port 0"); `None` (with a notice) when not configured.
pub fn everything_http() -> Option<PeerServer> {
    let index = everything()?;
    let mut child = Command::new("node")
        .arg("-r")
        .arg(root().join("tests/interop/loopback.cjs"))
        .arg(index)
        .arg("streamableHttp")
        .env("PORT", "0")
        .stdin(Stdio::null())
        // It logs every request on stdout.
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the everything server");
    let stderr = child.stderr.take().expect("piped stderr");
    let base = wait_for_line(stderr, "loopback: listening on ", "the everything server");
    Some(PeerServer {
        child,
        url: format!("{base}/mcp"),
        _dir: None,
    })
}

/// The command line that runs the everything server over stdio: `node`, then its
/// arguments; `None` (with a notice) when not configured.
pub fn everything_stdio() -> Option<(String, Vec<String>)> {
    let index = everything()?;
    Some((
        "node".to_string(),
        vec![index.display().to_string(), "stdio".to_string()],
    ))
}

/// A task server written with another Rust MCP library, built by run.sh from
/// `tests/interop/*-server`. Each serves the same three tools (`slow_steps`,
/// `ask_name`, `until_cancelled`), so the client's and the CLI's tests run the same
/// scenarios against each one; this is their one list of such peers.
#[derive(Debug, Clone, Copy)]
pub struct RustPeer {
    /// How the tests name it in notices and failures (library and version).
    pub name: &'static str,
    /// The environment variable naming its binary.
    pub var: &'static str,
}

/// rmcp 3.11 (`tests/interop/rmcp-server`): the Tasks extension wire only.
pub const RMCP: RustPeer = RustPeer {
    name: "rmcp 3.11.0",
    var: "MCP_TASKS_INTEROP_RMCP_SERVER",
};

/// tower-mcp 0.25 (`tests/interop/tower-mcp-server`): both wires at one URL.
pub const TOWER_MCP: RustPeer = RustPeer {
    name: "tower-mcp 0.25.0",
    var: "MCP_TASKS_INTEROP_TOWER_MCP_SERVER",
};

impl RustPeer {
    /// Starts its server on a free loopback port, or `None` (with a notice) when run.sh
    /// did not point at a built one.
    pub fn start(self) -> Option<PeerServer> {
        rust_peer(self.var, self.name)
    }
}

/// A server built by run.sh from `tests/interop/{rmcp,tower-mcp}-server` (its binary
/// named by `var`), started on a free loopback port; `None` (with a notice) when `var`
/// is unset.
pub fn rust_peer(var: &str, name: &str) -> Option<PeerServer> {
    let bin = configured(var, name)?;
    let mut child = Command::new(&bin)
        .args(["--listen", "127.0.0.1:0"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("start {}: {e}", bin.display()));
    let stderr = child.stderr.take().expect("stderr is piped");
    let url = wait_for_line(stderr, "listening on ", name);
    Some(PeerServer {
        child,
        url,
        _dir: None,
    })
}

/// Variable naming the server built from `bench/turul-task-server`.
pub const TURUL_VAR: &str = "MCP_TASKS_INTEROP_TURUL_SERVER";

/// The task store a turul peer runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TurulStore {
    /// turul-mcp-ext-tasks' `InMemoryTaskStore`.
    Memory,
    /// Its `SqliteTaskStore`, on a new file in a temporary directory.
    Sqlite,
}

/// turul-mcp-server 0.4.5 with turul-mcp-ext-tasks 0.1.5 (`bench/turul-task-server`,
/// built by run.sh) on `store`, listening on a free loopback port; `None` (with a
/// notice) when [`TURUL_VAR`] is unset. It binds a port it found free rather than a
/// listener (turul takes no listener), so a start that loses the port is retried, a
/// bounded number of times.
pub fn turul(store: TurulStore) -> Option<PeerServer> {
    let bin = configured(TURUL_VAR, "turul-mcp-server")?;
    let mut last = String::new();
    for _attempt in 0..3 {
        let (dir, store_arg) = match store {
            TurulStore::Memory => (None, "memory".to_string()),
            TurulStore::Sqlite => {
                let dir = tempfile::Builder::new()
                    .prefix("turul-peer")
                    .tempdir()
                    .expect("a temporary directory for turul's SQLite store");
                let arg = format!("sqlite:{}", dir.path().join("tasks.db").display());
                (Some(dir), arg)
            }
        };
        let mut child = Command::new(&bin)
            .args(["--listen", "127.0.0.1:0", "--store", &store_arg])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("start {}: {e}", bin.display()));
        let stderr = child.stderr.take().expect("stderr is piped");
        match try_wait_for_line(stderr, "listening on ") {
            Ok(url) => {
                return Some(PeerServer {
                    child,
                    url,
                    _dir: dir,
                })
            }
            Err(output) => {
                let _ = child.kill();
                let _ = child.wait();
                last = output;
            }
        }
    }
    panic!("turul-task-server did not start in 3 attempts; its last output:\n{last}");
}

/// Like [`wait_for_line`], but a stream that ends first is an `Err` with what it said.
fn try_wait_for_line(from: impl Read + Send + 'static, marker: &str) -> Result<String, String> {
    let mut lines = BufReader::new(from).lines();
    let mut seen = Vec::new();
    let rest = loop {
        match lines.next() {
            Some(Ok(line)) => {
                if let Some((_, rest)) = line.split_once(marker) {
                    break rest.trim().to_string();
                }
                seen.push(line);
            }
            Some(Err(e)) => return Err(format!("reading its output: {e}")),
            None => return Err(seen.join("\n")),
        }
    };
    std::thread::spawn(move || for _ in lines {});
    Ok(rest)
}

/// The TypeScript SDK's example server folder, or `None` (with a notice) when
/// [`NODE_VAR`] is unset or, outside `CI`, when the SDK it names is not the pinned one
/// or `node` is missing (under `CI` those fail: run.sh installs them).
fn ts_examples_dir() -> Option<PathBuf> {
    let node = configured(NODE_VAR, "TypeScript SDK example server")?;
    let sdk = node.join("node_modules/@modelcontextprotocol/sdk");
    let version = std::fs::read_to_string(sdk.join("package.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .and_then(|v| v["version"].as_str().map(str::to_string));
    let node_ok = Command::new("node")
        .arg("--version")
        .stdout(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    let problem = match (version.as_deref(), node_ok) {
        (_, false) => Some("node is not on PATH".to_string()),
        (None, _) => Some(format!("no TypeScript SDK under {}", node.display())),
        (Some(v), _) if v != TS_SDK_VERSION => Some(format!(
            "TypeScript SDK {v} installed, {TS_SDK_VERSION} expected"
        )),
        _ => None,
    };
    match problem {
        None => Some(sdk.join("dist/esm/examples/server")),
        Some(p) if std::env::var_os("CI").is_some() => {
            panic!("{p}: run tests/interop/run.sh, which installs it")
        }
        Some(p) => {
            eprintln!(
                "skipping TypeScript example server test: {p} (tests/interop/run.sh installs it)"
            );
            None
        }
    }
}

/// Starts the TypeScript SDK example server `script` (HTTP only) with its port variable
/// `port_var` set to 0, bound to 127.0.0.1 by `tests/interop/loopback.cjs`; `None`
/// (with a notice) when the SDK is not there (the rule above). Each test starts its
/// own: `simpleStreamableHttp.js` dies some seconds after one of its tasks is
/// cancelled, and both keep tasks per session.
pub fn ts_example(script: &str, port_var: &str) -> Option<PeerServer> {
    let dir = ts_examples_dir()?;
    let mut child = Command::new("node")
        .arg("-r")
        .arg(root().join("tests/interop/loopback.cjs"))
        .arg(dir.join(script))
        .env(port_var, "0")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("start node {script}: {e}"));
    let stderr = child.stderr.take().expect("piped stderr");
    let base = wait_for_line(stderr, "loopback: listening on ", script);
    Some(PeerServer {
        child,
        url: format!("{base}/mcp"),
        _dir: None,
    })
}

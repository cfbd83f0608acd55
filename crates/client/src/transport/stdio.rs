//! stdio: spawn the server as a child process, one JSON-RPC message per line on its
//! stdin and stdout. Its stderr is read line by line: logged at `debug`, and the last
//! lines are kept so a server that dies at start-up can say why.

use mcp_tasks_protocol::Secret;
use parking_lot::Mutex;
use serde_json::Value;
use std::collections::VecDeque;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::error::ClientError;
use crate::peer::Peer;

/// How many lines of the server's stderr are kept for error messages.
const STDERR_TAIL: usize = 20;
/// How long a closing server gets to exit after its stdin closes.
const EXIT_GRACE: Duration = Duration::from_secs(2);

/// How a stdio server is started besides its command line.
#[derive(Debug, Clone, Default)]
pub(crate) struct StdioOptions {
    /// Variables added to the inherited environment (values may be API keys).
    pub(crate) env: Vec<(String, Secret<String>)>,
    /// The working directory, when not ours.
    pub(crate) cwd: Option<std::path::PathBuf>,
}

/// A running child process speaking MCP on stdio.
#[derive(Debug)]
pub(crate) struct StdioTransport {
    outgoing: Mutex<Option<mpsc::UnboundedSender<String>>>,
    child: Arc<tokio::sync::Mutex<Child>>,
    stderr_tail: Arc<Mutex<VecDeque<String>>>,
    tasks: Vec<JoinHandle<()>>,
}

impl StdioTransport {
    /// Starts `program args…` and wires its stdio to `peer`.
    pub(crate) fn spawn(
        program: &str,
        args: &[String],
        options: &StdioOptions,
        peer: Arc<Peer>,
    ) -> Result<Self, ClientError> {
        let mut command = Command::new(program);
        command.envs(options.env.iter().map(|(k, v)| (k, v.expose())));
        if let Some(dir) = &options.cwd {
            command.current_dir(dir);
        }
        let mut child = command
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| ClientError::Connect(format!("cannot start '{program}': {e}")))?;
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(ClientError::Connect(format!(
                "'{program}' started without piped stdio"
            )));
        };
        let (tx, mut rx) = mpsc::unbounded_channel::<String>();
        let writer = tokio::spawn(async move {
            let mut stdin = stdin;
            while let Some(mut line) = rx.recv().await {
                line.push('\n');
                if stdin.write_all(line.as_bytes()).await.is_err() || stdin.flush().await.is_err() {
                    break;
                }
            }
        });
        let reader_peer = Arc::clone(&peer);
        let reader = tokio::spawn(async move {
            let mut lines = BufReader::new(stdout).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                if !line.trim().is_empty() {
                    reader_peer.route_text(&line);
                }
            }
            reader_peer.close();
        });
        let stderr_tail = Arc::new(Mutex::new(VecDeque::new()));
        let tail = Arc::clone(&stderr_tail);
        let errors = tokio::spawn(async move {
            let mut lines = BufReader::new(stderr).lines();
            while let Ok(Some(line)) = lines.next_line().await {
                tracing::debug!(target: "mcp_tasks_client::server_stderr", "{line}");
                let mut t = tail.lock();
                if t.len() == STDERR_TAIL {
                    t.pop_front();
                }
                t.push_back(line);
            }
        });
        Ok(StdioTransport {
            outgoing: Mutex::new(Some(tx)),
            child: Arc::new(tokio::sync::Mutex::new(child)),
            stderr_tail,
            tasks: vec![writer, reader, errors],
        })
    }

    /// Writes one message.
    pub(crate) fn send(&self, message: &Value) -> Result<(), ClientError> {
        let tx = self.outgoing.lock().clone();
        match tx {
            Some(tx) => tx
                .send(message.to_string())
                .map_err(|_| ClientError::Closed),
            None => Err(ClientError::Closed),
        }
    }

    /// How the process ended, if it has: "exited with status N" or "was killed by
    /// signal N".
    pub(crate) async fn exit_status(&self, wait: std::time::Duration) -> Option<String> {
        let mut child = tokio::time::timeout(wait, self.child.lock()).await.ok()?;
        let status = tokio::time::timeout(wait, child.wait()).await.ok()?.ok()?;
        Some(describe_exit(status))
    }

    /// The last lines the server wrote on stderr, for error messages.
    pub(crate) fn stderr_tail(&self) -> String {
        let t = self.stderr_tail.lock();
        t.iter().cloned().collect::<Vec<_>>().join("\n")
    }

    /// Closes the server's stdin, waits a moment for it to exit, then kills it.
    pub(crate) async fn close(&self) {
        self.outgoing.lock().take();
        let mut child = self.child.lock().await;
        if tokio::time::timeout(EXIT_GRACE, child.wait())
            .await
            .is_err()
        {
            let _ = child.kill().await;
        }
    }
}

impl Drop for StdioTransport {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
    }
}

/// "exited with status N" / "was killed by signal N".
fn describe_exit(status: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exited with status {code}"),
        (None, Some(signal)) => format!("was killed by signal {signal}"),
        (None, None) => "ended".to_string(),
    }
}

//! The real binary run to its end with every byte it writes kept: started with tokio,
//! its stderr (and stdout) read line by line as it comes, stopped with SIGTERM.

use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};
use tokio::process::{Child, Command};
use tokio::sync::mpsc;

/// Bounds every wait on the process (only a failing test reaches it).
pub const LIMIT: Duration = Duration::from_secs(60);

/// A running `mcp-tasks` whose output lines arrive on a channel.
pub struct Run {
    child: Child,
    lines: mpsc::UnboundedReceiver<String>,
    /// Every line read so far (stderr and stdout, in arrival order).
    pub seen: Vec<String>,
}

fn read_lines(from: impl AsyncRead + Unpin + Send + 'static, to: mpsc::UnboundedSender<String>) {
    tokio::spawn(async move {
        let mut lines = BufReader::new(from).lines();
        while let Ok(Some(line)) = lines.next_line().await {
            if to.send(line).is_err() {
                break;
            }
        }
    });
}

impl Run {
    /// Starts the binary with `args` and `env`.
    pub fn start(args: &[&str], env: &[(&str, &str)]) -> Run {
        let mut child = Command::new(super::BIN)
            .args(args)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("start mcp-tasks");
        let (tx, lines) = mpsc::unbounded_channel();
        read_lines(child.stderr.take().expect("stderr"), tx.clone());
        read_lines(child.stdout.take().expect("stdout"), tx);
        Run {
            child,
            lines,
            seen: Vec::new(),
        }
    }

    /// Reads lines until one gives the address `serve` listens on.
    pub async fn listening(&mut self) -> String {
        let deadline = tokio::time::Instant::now() + LIMIT;
        loop {
            let line = tokio::time::timeout_at(deadline, self.lines.recv())
                .await
                .unwrap_or_else(|_| panic!("no address within {LIMIT:?}: {:#?}", self.seen))
                .unwrap_or_else(|| panic!("the process ended before listening: {:#?}", self.seen));
            let url = super::listening_url(&line);
            self.seen.push(line);
            if let Some(url) = url {
                return url;
            }
        }
    }

    /// Sends SIGTERM (the orchestrator's stop), then waits for the exit and the last
    /// line; returns whether it exited successfully.
    pub async fn stop(&mut self) -> bool {
        if let Some(pid) = self.child.id() {
            let pid = nix::unistd::Pid::from_raw(i32::try_from(pid).expect("pid"));
            let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
        }
        self.finish().await
    }

    /// Waits for the process to exit by itself and reads every line it wrote; returns
    /// whether it exited successfully.
    pub async fn finish(&mut self) -> bool {
        let status = tokio::time::timeout(LIMIT, self.child.wait())
            .await
            .unwrap_or_else(|_| panic!("still running after {LIMIT:?}: {:#?}", self.seen))
            .expect("wait");
        let deadline = tokio::time::Instant::now() + LIMIT;
        while let Some(line) = tokio::time::timeout_at(deadline, self.lines.recv())
            .await
            .expect("the output ends with the process")
        {
            self.seen.push(line);
        }
        status.success()
    }

    /// Everything written, one line each.
    pub fn output(&self) -> String {
        self.seen.join("\n")
    }
}

//! A server under measurement: ours (started fresh on a database), rmcp, turul (on one
//! of its stores), or one already running at --url.

use crate::error::BenchError;
use crate::http::Endpoint;
use crate::plan::{Database, Launch, Target};
use crate::process::{usage, Spawned};

/// A server being measured: ours, rmcp or turul (owned), or an external one.
pub(crate) struct Server {
    /// Where it listens.
    pub(crate) endpoint: Endpoint,
    /// Its pid, when local.
    pub(crate) pid: Option<u32>,
    owned: Option<Spawned>,
}

/// The arguments of `turul-task-server` on `store`, and the temporary directory
/// holding its SQLite file (removed when the server stops).
fn turul_args(store: &Database) -> Result<(Vec<String>, Option<tempfile::TempDir>), BenchError> {
    let mut args = vec!["--listen".to_string(), "127.0.0.1:0".to_string()];
    let mut dir = None;
    match store {
        Database::Memory => args.extend(["--store".into(), "memory".into()]),
        Database::TempSqlite => {
            let d = tempfile::Builder::new()
                .prefix("turul-bench")
                .tempdir()
                .map_err(|e| BenchError::Io("creating a temporary directory".into(), e))?;
            args.extend([
                "--store".into(),
                format!("sqlite:{}", d.path().join("bench.db").display()),
            ]);
            dir = Some(d);
        }
        // Its table outlives the process: empty it so every run starts like ours.
        Database::Url(url) => args.extend(["--store".into(), url.clone(), "--fresh".into()]),
    }
    Ok((args, dir))
}

impl Server {
    /// Starts the target's server (ours with `extra` arguments), or names the running
    /// one.
    pub(crate) async fn start(target: &Target, extra: &[String]) -> Result<Self, BenchError> {
        match &target.launch {
            Launch::External { endpoint, pid } => Ok(Server {
                endpoint: endpoint.clone(),
                pid: *pid,
                owned: None,
            }),
            Launch::Ours { program, database } => {
                let (url, dir) = match database {
                    Database::Memory => ("memory:".to_string(), None),
                    Database::TempSqlite => {
                        let dir = tempfile::Builder::new()
                            .prefix("mcp-tasks-bench")
                            .tempdir()
                            .map_err(|e| {
                                BenchError::Io("creating a temporary directory".into(), e)
                            })?;
                        let url = format!("sqlite://{}/bench.db", dir.path().display());
                        (url, Some(dir))
                    }
                    Database::Url(u) => (u.clone(), None),
                };
                let mut args: Vec<String> = [
                    "serve",
                    "--demo",
                    "--listen",
                    "127.0.0.1:0",
                    "--database",
                    &url,
                    "--log",
                    "warn",
                    // The bench holds up to a million tasks open at once: lift the
                    // per-principal, per-session and total quotas that protect a
                    // normal server.
                    "--max-tasks-per-principal",
                    "100000000",
                    "--max-tasks-per-session",
                    "100000000",
                    "--max-active-tasks",
                    "100000000",
                ]
                .iter()
                .map(|s| s.to_string())
                .collect();
                args.extend(extra.iter().cloned());
                Self::spawned(Spawned::start(program, &args, dir).await?)
            }
            Launch::Rmcp { program } => {
                let args = vec!["--listen".to_string(), "127.0.0.1:0".to_string()];
                Self::spawned(Spawned::start(program, &args, None).await?)
            }
            Launch::Turul { program, store } => {
                let (args, dir) = turul_args(store)?;
                Self::spawned(Spawned::start(program, &args, dir).await?)
            }
        }
    }

    fn spawned(s: Spawned) -> Result<Self, BenchError> {
        Ok(Server {
            endpoint: s.endpoint.clone(),
            pid: Some(s.pid),
            owned: Some(s),
        })
    }

    /// Its resident memory, when local.
    pub(crate) fn rss(&self) -> Option<u64> {
        self.pid.and_then(usage).map(|u| u.rss_bytes)
    }

    /// Turns an error into one that carries the server's last words when it died.
    pub(crate) fn explain(&mut self, e: BenchError) -> BenchError {
        match &mut self.owned {
            Some(s) if s.has_exited() => {
                let tail = s.stderr_tail();
                BenchError::Server(format!(
                    "the server exited during the run ({e}); its last output:\n{tail}"
                ))
            }
            _ => e,
        }
    }

    /// Stops it when the bench started it.
    pub(crate) async fn stop(self) {
        if let Some(s) = self.owned {
            s.stop().await;
        }
    }
}

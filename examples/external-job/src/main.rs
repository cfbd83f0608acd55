//! An external-job tool. The "other system" here is a spool directory a batch worker
//! watches: starting an export writes `<job>.request`; the worker writes
//! `<job>.status` while it works and `<job>.done` (or `<job>.failed`) at the end; a
//! `<job>.cancel` file asks it to stop. The MCP task holds only `{ "job": "<id>" }`, so
//! it survives a crash of this server and any replica could answer for it.
//!
//! Usage: `example-external-job SPOOL_DIR [STORE_URL]` (default
//! `sqlite://./external-jobs.db`); serves stdio.

use mcp_tasks::prelude::*;
use std::path::PathBuf;

#[derive(Deserialize, JsonSchema)]
struct Export {
    /// The table to export.
    #[schemars(length(min = 1, max = 64), regex(pattern = r"^[A-Za-z0-9_]+$"))]
    table: String,
}

/// What the engine stores for each task.
#[derive(Serialize, Deserialize)]
struct Submitted {
    job: String,
}

/// The batch system, reached through its spool directory.
struct Spool {
    dir: PathBuf,
}

impl Spool {
    fn path(&self, job: &str, ext: &str) -> PathBuf {
        self.dir.join(format!("{job}.{ext}"))
    }
}

impl ExternalJob for Spool {
    type Args = Export;
    type State = Submitted;
    type Output = Result<String, String>;

    async fn start(&self, args: Export, ctx: TaskContext) -> Result<Submitted, JobError> {
        let job = format!("export-{}-{}", args.table, std::process::id());
        let job = match ctx.task_id() {
            Some(id) => format!("export-{}-{id}", args.table),
            None => job,
        };
        let request = serde_json::json!({ "table": args.table });
        tokio::fs::write(self.path(&job, "request"), request.to_string()).await?;
        Ok(Submitted { job })
    }

    async fn poll(&self, s: &Submitted) -> Result<JobPoll<Submitted, Self::Output>, JobError> {
        if let Ok(result) = tokio::fs::read_to_string(self.path(&s.job, "done")).await {
            return Ok(JobPoll::Done(Ok(result.trim().to_string())));
        }
        if let Ok(reason) = tokio::fs::read_to_string(self.path(&s.job, "failed")).await {
            return Ok(JobPoll::Done(Err(reason.trim().to_string())));
        }
        let status = tokio::fs::read_to_string(self.path(&s.job, "status")).await;
        Ok(JobPoll::Running {
            state: None,
            status_message: Some(status.map_or_else(|_| "queued".into(), |s| s.trim().into())),
        })
    }

    async fn cancel(&self, s: &Submitted) -> Result<(), JobError> {
        tokio::fs::write(self.path(&s.job, "cancel"), b"").await?;
        Ok(())
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let dir = PathBuf::from(
        args.next()
            .ok_or("usage: example-external-job SPOOL_DIR [STORE_URL]")?,
    );
    let store = args
        .next()
        .unwrap_or_else(|| "sqlite://./external-jobs.db".into());
    let tool = Tool::external(
        "export_table",
        "Exports a table through the batch system.",
        Spool { dir },
    )
    .task_support(TaskSupport::Required);
    let server = Server::builder()
        .name("export-example")
        .store_url(store)
        .tool(tool)
        .build()
        .await?;
    server.serve_stdio().await?;
    Ok(())
}

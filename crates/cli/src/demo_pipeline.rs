//! `pipeline`, the demo tool of durable execution: a resumable task of journaled steps
//! with an optional approval question in the middle. Killing the server while it runs
//! shows what a journal buys: another replica (or the next start) takes the task over,
//! skips the steps already recorded, does not ask an answered question again, and
//! finishes. The chaos suite (`tests/chaos/`) drives it; with
//! `MCP_TASKS_DEMO_LEDGER` set, every step body appends one line to a file, so a test
//! outside the process can count how often each body really ran.

use std::io::Write;
use std::time::Duration;

use mcp_tasks_engine::TaskContext;
use mcp_tasks_server::{ElicitAs, Elicited, Structured, TaskSupport, Tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The environment variable naming the ledger file step bodies append to.
pub(crate) const LEDGER_ENV: &str = "MCP_TASKS_DEMO_LEDGER";

/// Arguments of `pipeline`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct PipelineArgs {
    /// How many steps to run (default 5).
    #[serde(default = "default_steps")]
    #[schemars(range(min = 1, max = 10000))]
    steps: u32,
    /// How long each step works, in seconds (default 1; 0 makes every step instant).
    #[serde(default = "default_step_seconds")]
    #[schemars(range(min = 0, max = 86400))]
    step_seconds: f64,
    /// Ask for approval after this step (no question when absent).
    ask_after: Option<u32>,
}

fn default_steps() -> u32 {
    5
}

fn default_step_seconds() -> f64 {
    1.0
}

/// The approval form: one boolean.
#[derive(Debug, Deserialize, JsonSchema)]
struct Approval {
    /// Go on with the pipeline?
    #[schemars(title = "Approve?")]
    approve: bool,
}

/// What `pipeline` returns as structured content.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct PipelineResult {
    /// Steps done (all of them: a pipeline that stops early fails or is cancelled).
    completed_steps: u32,
    /// Which run of the task finished it: 1 when no takeover or retry was needed.
    attempts: u32,
    /// The approval: `true` or `false` as answered (a declined or cancelled question is
    /// `false`); `null` when the pipeline asked nothing.
    approved: Option<bool>,
}

/// The `pipeline` tool: task required (its point is the journal, which only tasks
/// have), resumable (a takeover runs it again from its journal).
pub(crate) fn pipeline() -> Tool {
    Tool::from_fn(
        "pipeline",
        "Runs `steps` journaled steps of `step_seconds` each (status `step K/N`), asking for approval after step `ask_after` when given. Resumable: after a crash or takeover, recorded steps and an answered question are not run or asked again.",
        run_pipeline,
    )
    .title("Durable pipeline")
    .task_support(TaskSupport::Required)
    .resumable()
}

/// Appends `TASK_ID STEP ATTEMPT` to the ledger file, if one is configured: one
/// `write` of one line to a file opened for appending, so lines of concurrent tasks and
/// processes never interleave.
fn append_ledger(ctx: &TaskContext, step: u32) -> Result<(), String> {
    let Some(path) = std::env::var_os(LEDGER_ENV) else {
        return Ok(());
    };
    let task = ctx
        .task_id()
        .map_or_else(|| "-".to_string(), |id| id.to_string());
    let line = format!("{task} {step} {}\n", ctx.attempt());
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut f| f.write_all(line.as_bytes()))
        .map_err(|e| {
            format!(
                "pipeline: cannot append to the ledger {} ({LEDGER_ENV}): {e}; fix the path or unset it",
                path.to_string_lossy()
            )
        })
}

/// One step's body: the ledger line, the status message, then the work.
async fn step_body(ctx: &TaskContext, k: u32, n: u32, work: Duration) -> Result<u32, String> {
    append_ledger(ctx, k)?;
    ctx.set_status_message(format!("step {k}/{n}")).await;
    // An instant step does not sleep at all: tokio's timer rounds every deadline up to
    // its next millisecond tick, so even a zero sleep would cost about a millisecond
    // and hide what the journal write costs (the bench's journal figure).
    if !work.is_zero() {
        tokio::time::sleep(work).await;
    }
    Ok(k)
}

async fn run_pipeline(
    args: PipelineArgs,
    ctx: TaskContext,
) -> Result<Structured<PipelineResult>, String> {
    let n = args.steps.max(1);
    let work = Duration::from_secs_f64(args.step_seconds.clamp(0.0, 86400.0));
    let mut approved = None;
    for k in 1..=n {
        // Cancellation drops the step's future: a step cut short records nothing.
        let recorded = tokio::select! {
            _ = ctx.cancelled() => return Err(format!("pipeline cancelled during step {k}/{n}")),
            r = ctx.step("step", step_body(&ctx, k, n, work)) => r,
        };
        recorded.map_err(|e| format!("pipeline: step {k}/{n} could not be journaled: {e}"))??;
        if args.ask_after == Some(k) {
            ctx.set_status_message(format!("waiting for approval after step {k}/{n}"))
                .await;
            let answer = ctx
                .elicit_as::<Approval>(&format!("Approve the pipeline after step {k}/{n}?"))
                .await
                .map_err(|e| format!("pipeline: the approval after step {k}/{n}: {e}"))?;
            approved = Some(matches!(
                answer,
                Elicited::Accepted(Approval { approve: true })
            ));
        }
    }
    let attempts = ctx.attempt();
    let verdict = match approved {
        Some(true) => ", approved",
        Some(false) => ", not approved",
        None => "",
    };
    Ok(Structured::new(
        format!("pipeline finished {n} steps in attempt {attempts}{verdict}"),
        PipelineResult {
            completed_steps: n,
            attempts,
            approved,
        },
    ))
}

//! The `--demo` tools: small, predictable tools for trying the server and for the
//! interoperability tests. Written with the public typed-tool API ([`Tool::from_fn`]),
//! exactly as a user of the library would write them.

use anyhow::Result;
use mcp_tasks_engine::TaskContext;
use mcp_tasks_server::{NoArgs, Structured, TaskSupport, Tool, ToolRegistry};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// Registers `slow_compute`, `greet`, `failing_job`, and the human-in-the-loop tools
/// `confirm_delete`, `multi_input`, `summarize_with_model` and `book_meeting`, and the
/// durable `pipeline` (journaled steps, resumable), and for people `ask_a_person` and
/// `deploy` (a stand-in for a tool behind an approval rule).
pub fn register(registry: &mut ToolRegistry) -> Result<()> {
    registry.register(slow_compute())?;
    registry.register(greet())?;
    registry.register(failing_job())?;
    for tool in crate::demo_input::tools() {
        registry.register(tool)?;
    }
    registry.register(crate::demo_pipeline::pipeline())?;
    for tool in crate::demo_people::tools() {
        registry.register(tool)?;
    }
    Ok(())
}

/// Most progress steps of one `slow_compute` run.
const MAX_STEPS: u64 = 100;

/// Arguments of `slow_compute`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SlowComputeArgs {
    /// How long to work (fractions allowed; 0 returns at once)
    #[schemars(range(min = 0, max = 86400))]
    seconds: f64,
    /// A label echoed in the result
    label: Option<String>,
}

/// What `slow_compute` returns as structured content.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct SlowComputeResult {
    /// The label it was given (`job` by default).
    label: String,
    /// How long it worked, in seconds.
    seconds: f64,
}

pub(crate) fn slow_compute() -> Tool {
    Tool::from_fn(
        "slow_compute",
        "Works for `seconds` seconds, reporting progress and status, then returns a summary. Honours cancellation.",
        run_slow_compute,
    )
    .title("Slow computation")
    .task_support(TaskSupport::Optional)
}

async fn run_slow_compute(
    args: SlowComputeArgs,
    ctx: TaskContext,
) -> Result<Structured<SlowComputeResult>, String> {
    let seconds = args.seconds.clamp(0.0, 86400.0);
    let label = args.label.unwrap_or_else(|| "job".into());
    let total = Duration::from_secs_f64(seconds);
    // A step every 250 ms, but never more than MAX_STEPS: a long run must not wake up
    // (and write a status message) several times a second for hours, which would make
    // every idle task cost CPU and store writes.
    let steps = ((seconds * 4.0).ceil().max(0.0) as u64).min(MAX_STEPS);
    if steps > 0 {
        let step = total / steps as u32;
        for i in 1..=steps {
            tokio::select! {
                _ = ctx.cancelled() => return Err(format!("slow_compute '{label}' was cancelled")),
                _ = tokio::time::sleep(step) => {}
            }
            let pct = i * 100 / steps;
            ctx.report_progress(
                i as f64,
                Some(steps as f64),
                Some(format!("{label}: {pct}%")),
            );
            if i % 4 == 0 || i == steps {
                // Boxed: this future lives for a moment every fourth step, and inline
                // it would make every running task's future larger for all of its life.
                Box::pin(ctx.set_status_message(format!("{label}: {pct}% done"))).await;
            }
        }
    }
    Ok(Structured::new(
        format!("slow_compute '{label}' finished after {} s", args.seconds),
        SlowComputeResult {
            label,
            seconds: args.seconds,
        },
    ))
}

/// Arguments of `greet`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct GreetArgs {
    /// Who to greet.
    #[schemars(length(min = 1))]
    name: String,
}

pub(crate) fn greet() -> Tool {
    Tool::from_fn(
        "greet",
        "Says hello. Synchronous only.",
        |args: GreetArgs| async move { format!("Hello, {}!", args.name) },
    )
    .task_support(TaskSupport::Forbidden)
}

pub(crate) fn failing_job() -> Tool {
    Tool::from_fn(
        "failing_job",
        "Runs for about a second, then reports a tool error. Task required.",
        |_: NoArgs, ctx: TaskContext| async move {
            ctx.set_status_message("about to fail").await;
            tokio::select! {
                _ = ctx.cancelled() => return Err::<String, _>("failing_job was cancelled"),
                _ = tokio::time::sleep(Duration::from_secs(1)) => {}
            }
            Err("failing_job failed on purpose after 1 s")
        },
    )
    .task_support(TaskSupport::Required)
}

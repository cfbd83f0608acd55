//! A tool that asks the user for confirmation in the middle of its work: it plans a
//! cleanup, asks "remove these N files?" with a typed form (the task shows
//! `input_required` meanwhile), then acts on the answer. Serves stdio.

use mcp_tasks::prelude::*;

#[derive(Deserialize, JsonSchema)]
struct Cleanup {
    /// Only files whose name ends with this are removed (e.g. ".tmp").
    suffix: String,
}

/// The form the user fills in.
#[derive(Deserialize, JsonSchema)]
struct Confirm {
    /// Remove them?
    confirm: bool,
    /// Keep the newest file anyway.
    #[serde(default)]
    keep_newest: bool,
}

#[derive(Serialize, JsonSchema)]
struct Report {
    /// The files removed.
    removed: Vec<String>,
}

async fn cleanup(args: Cleanup, ctx: TaskContext) -> Result<Structured<Report>, String> {
    ctx.set_status_message("looking for files").await;
    // A real tool would scan a directory; the example plans on a fixed list.
    let mut planned: Vec<String> = ["a", "b", "c"]
        .iter()
        .map(|n| format!("{n}{}", args.suffix))
        .collect();
    let question = format!(
        "Remove {} files ending in '{}'?",
        planned.len(),
        args.suffix
    );
    let answer = ctx
        .elicit_as::<Confirm>(&question)
        .await
        .map_err(|e| format!("could not ask for confirmation: {e}"))?;
    match answer {
        Elicited::Accepted(Confirm {
            confirm: true,
            keep_newest,
        }) => {
            if keep_newest {
                planned.pop();
            }
            ctx.set_status_message(format!("removing {} files", planned.len()))
                .await;
            let text = format!("removed {} files", planned.len());
            Ok(Structured::new(text, Report { removed: planned }))
        }
        _ => Ok(Structured::new(
            "nothing removed",
            Report { removed: vec![] },
        )),
    }
}

#[tokio::main]
async fn main() -> Result<(), BuildError> {
    Server::builder()
        .name("cleanup-example")
        .tool(
            Tool::from_fn("cleanup", "Removes files after asking.", cleanup)
                .task_support(TaskSupport::Required),
        )
        .build()
        .await?
        .serve_stdio()
        .await
}

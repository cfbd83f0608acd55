//! Demo tools that ask the client for input in the middle of a task: elicitation
//! (one question, two at once) and sampling. Typed forms through [`ElicitAs`].

use futures::future::try_join;
use mcp_tasks_engine::{InputError, TaskContext};
use mcp_tasks_server::{AskClient, ElicitAs, Elicited, NoArgs, Structured, TaskSupport, Tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// The human-in-the-loop tools: these three and `book_meeting` (a form of every field
/// type, in `demo_form`).
pub fn tools() -> Vec<Tool> {
    vec![
        confirm_delete(),
        multi_input(),
        summarize_with_model(),
        crate::demo_form::book_meeting(),
    ]
}

/// A failed input request becomes a tool error the model can read.
fn input_failed(tool: &str, e: &InputError) -> String {
    format!("{tool}: {e}")
}

/// Arguments of `confirm_delete`.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct ConfirmDeleteArgs {
    /// The file to (pretend to) delete.
    #[schemars(length(min = 1))]
    filename: String,
}

/// The confirmation form.
#[derive(Debug, Deserialize, JsonSchema)]
struct Confirm {
    /// Delete the file?
    #[schemars(title = "Delete?")]
    confirm: bool,
}

/// What `confirm_delete` returns.
#[derive(Debug, Serialize, JsonSchema)]
struct DeleteDecision {
    /// The file.
    filename: String,
    /// Whether the user confirmed (nothing is really deleted).
    deleted: bool,
}

pub(crate) fn confirm_delete() -> Tool {
    Tool::from_fn(
        "confirm_delete",
        "Asks the user to confirm deleting a file (one elicitation), then reports the decision. Deletes nothing.",
        run_confirm_delete,
    )
    .task_support(TaskSupport::Optional)
}

async fn run_confirm_delete(
    args: ConfirmDeleteArgs,
    ctx: TaskContext,
) -> Result<Structured<DeleteDecision>, String> {
    let filename = args.filename;
    ctx.set_status_message(format!("waiting for confirmation to delete {filename}"))
        .await;
    let answer = ctx
        .elicit_as::<Confirm>(&format!("Delete the file '{filename}'?"))
        .await
        .map_err(|e| input_failed("confirm_delete", &e))?;
    let (deleted, action) = match answer {
        Elicited::Accepted(Confirm { confirm }) => (confirm, "accept"),
        Elicited::Declined => (false, "decline"),
        Elicited::Cancelled => (false, "cancel"),
    };
    let text = if deleted {
        format!("Deleted {filename} (demo: nothing was really deleted)")
    } else {
        format!("kept {filename}: deletion was not confirmed ({action})")
    };
    Ok(Structured::new(text, DeleteDecision { filename, deleted }))
}

/// First question of `multi_input`.
#[derive(Debug, Deserialize, JsonSchema)]
struct NameForm {
    #[schemars(title = "Name")]
    name: String,
}

/// A colour to choose from.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[schemars(inline)]
enum Colour {
    Red,
    Green,
    Blue,
}

/// Second question of `multi_input`.
#[derive(Debug, Deserialize, JsonSchema)]
struct ColourForm {
    #[schemars(title = "Colour")]
    colour: Colour,
}

/// What `multi_input` returns.
#[derive(Debug, Serialize, JsonSchema)]
struct NameAndColour {
    /// The name given.
    name: String,
    /// The colour chosen.
    colour: String,
}

pub(crate) fn multi_input() -> Tool {
    Tool::from_fn(
        "multi_input",
        "Asks two questions at once (two elicitations outstanding together) and combines the answers.",
        |_: NoArgs, ctx: TaskContext| async move {
            let name = ctx.elicit_as::<NameForm>("What is your name?");
            let colour = ctx.elicit_as::<ColourForm>("What is your favourite colour?");
            let (name, colour) = try_join(name, colour)
                .await
                .map_err(|e| input_failed("multi_input", &e))?;
            let name = name
                .accepted()
                .map_or_else(|| "(no answer)".to_string(), |f| f.name);
            let colour = colour
                .accepted()
                .map_or("(no answer)", |f| match f.colour {
                    Colour::Red => "red",
                    Colour::Green => "green",
                    Colour::Blue => "blue",
                })
                .to_string();
            Ok::<_, String>(Structured::new(
                format!("{name} likes {colour}"),
                NameAndColour { name, colour },
            ))
        },
    )
    .task_support(TaskSupport::Optional)
}

/// Arguments of `summarize_with_model`.
#[derive(Debug, Deserialize, JsonSchema)]
struct SummarizeArgs {
    /// The text to summarize.
    #[schemars(length(min = 1))]
    text: String,
    /// How long the client's model may take to answer before the task fails (seconds);
    /// without it, the question waits as long as the task lives.
    #[serde(default)]
    #[schemars(range(min = 0.1, max = 86400.0))]
    deadline_seconds: Option<f64>,
}

/// What `summarize_with_model` returns.
#[derive(Debug, Serialize, JsonSchema)]
struct Summary {
    /// The model's one-sentence summary.
    summary: String,
    /// The model the client used.
    model: String,
}

fn summarize_with_model() -> Tool {
    Tool::from_fn(
        "summarize_with_model",
        "Asks the client's model to summarize `text` (one sampling request) and returns the summary. With `deadline_seconds`, the task fails when the model has not answered by then.",
        |args: SummarizeArgs, ctx: TaskContext| async move {
            let params = json!({
                "messages": [{ "role": "user", "content": { "type": "text", "text": format!("Summarize in one sentence:\n\n{}", args.text) } }],
                "systemPrompt": "You write one-sentence summaries.",
                "maxTokens": 200
            });
            let reply = match args.deadline_seconds {
                Some(seconds) => {
                    let after = std::time::Duration::from_secs_f64(seconds.clamp(0.1, 86400.0));
                    ctx.request_input_until(
                        "sampling/createMessage",
                        params,
                        after,
                        mcp_tasks_engine::DeadlineOutcome::Fail,
                    )
                    .await
                }
                None => ctx.create_message(params).await,
            }
            .map_err(|e| input_failed("summarize_with_model", &e))?;
            let summary = reply
                .get("content")
                .and_then(|c| c.get("text"))
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            let model = reply
                .get("model")
                .and_then(Value::as_str)
                .unwrap_or("unknown")
                .to_string();
            Ok::<_, String>(Structured::new(
                format!("Summary: {summary}"),
                Summary { summary, model },
            ))
        },
    )
    .task_support(TaskSupport::Optional)
}

//! `book_meeting`, the demo tool whose question is a form with every field type an
//! elicitation may ask for: strings (plain, email, uri, date, date-time), bounded
//! integers and numbers, a boolean, a single choice and a multiple choice with titles,
//! defaults and required fields. The task board renders it, and its tests answer it.

use mcp_tasks_engine::TaskContext;
use mcp_tasks_server::{AskClient, ElicitAction, Structured, TaskSupport, Tool};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

/// Arguments of `book_meeting`.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct BookMeetingArgs {
    /// What the meeting is about.
    #[schemars(length(min = 1))]
    subject: String,
}

/// What `book_meeting` returns.
#[derive(Debug, Serialize, JsonSchema)]
struct Booking {
    /// The subject.
    subject: String,
    /// `accept`, `decline` or `cancel`.
    action: String,
    /// The form's values when accepted.
    answer: Option<Map<String, Value>>,
}

/// The form: one field of each kind.
fn form() -> Value {
    json!({
        "type": "object",
        "properties": {
            "organizer": { "type": "string", "title": "Organizer", "minLength": 2, "maxLength": 60 },
            "email": { "type": "string", "format": "email", "title": "Organizer email" },
            "agenda": { "type": "string", "format": "uri", "title": "Agenda link", "description": "A page with the agenda" },
            "day": { "type": "string", "format": "date", "title": "Day", "default": "2026-12-01" },
            "starts": { "type": "string", "format": "date-time", "title": "Starts at" },
            "attendees": { "type": "integer", "title": "Attendees", "minimum": 2, "maximum": 20, "default": 4 },
            "budget": { "type": "number", "title": "Budget (EUR)", "minimum": 0, "maximum": 500 },
            "remote": { "type": "boolean", "title": "Remote attendance", "default": true },
            "room": {
                "type": "string", "title": "Room",
                "oneOf": [
                    { "const": "north", "title": "North room (8 seats)" },
                    { "const": "south", "title": "South room (20 seats)" }
                ],
                "default": "north"
            },
            "catering": {
                "type": "array", "title": "Catering", "minItems": 1,
                "items": { "anyOf": [
                    { "const": "coffee", "title": "Coffee" },
                    { "const": "lunch", "title": "Lunch" },
                    { "const": "cake", "title": "Cake" }
                ] },
                "default": ["coffee"]
            }
        },
        "required": ["organizer", "email", "day", "attendees", "room", "catering"]
    })
}

pub(crate) fn book_meeting() -> Tool {
    Tool::from_fn(
        "book_meeting",
        "Asks for the details of a meeting in one form (every kind of field an elicitation can ask) and returns the answer. Books nothing.",
        run_book_meeting,
    )
    .task_support(TaskSupport::Optional)
}

async fn run_book_meeting(
    args: BookMeetingArgs,
    ctx: TaskContext,
) -> Result<Structured<Booking>, String> {
    ctx.set_status_message(format!("waiting for the details of '{}'", args.subject))
        .await;
    let answer = ctx
        .elicit(
            &format!("Details for the meeting '{}'?", args.subject),
            form(),
        )
        .await
        .map_err(|e| format!("book_meeting: {e}"))?;
    let action = match answer.action {
        ElicitAction::Accept => "accept",
        ElicitAction::Decline => "decline",
        ElicitAction::Cancel => "cancel",
    };
    let text = match (&answer.content, action) {
        (Some(content), "accept") => format!(
            "Booked '{}' (demo: nothing was booked) with {}",
            args.subject,
            Value::Object(content.clone())
        ),
        _ => format!("'{}' was not booked ({action})", args.subject),
    };
    Ok(Structured::new(
        text,
        Booking {
            subject: args.subject,
            action: action.to_string(),
            answer: answer.content,
        },
    ))
}

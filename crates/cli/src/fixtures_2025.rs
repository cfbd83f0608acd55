//! The tools the official conformance suite's 2025-11-25 server scenarios call
//! (`tools-call-*`, `elicitation-sep1034-defaults`, `elicitation-sep1330-enums`,
//! `json-schema-2020-12`), with the names, arguments and results those scenarios
//! check. Served by `--conformance-fixtures` beside the Tasks-extension fixtures;
//! written with the public typed-tool API, except `json_schema_2020_12_tool`, whose
//! hand-written input schema is the point of its scenario.
//!
//! The suite's completion scenario (`completion-complete`) has no fixture: the server
//! offers no completions (it has no prompts or resource templates to complete).

use anyhow::Result;
use mcp_tasks_engine::{InputError, TaskContext};
use mcp_tasks_protocol::LoggingLevel;
use mcp_tasks_server::{AskClient, ElicitAction};
use mcp_tasks_server::{NoArgs, TaskSupport, Tool, ToolRegistry, ToolResult};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Map, Value};
use std::time::Duration;

/// Registers the 2025-11-25 scenario fixtures.
pub fn register(registry: &mut ToolRegistry) -> Result<()> {
    let tools = [
        test_simple_text(),
        test_image_content(),
        test_audio_content(),
        test_embedded_resource(),
        test_multiple_content_types(),
        test_error_handling(),
        test_tool_with_progress(),
        test_tool_with_logging(),
        test_sampling(),
        test_elicitation(),
        test_elicitation_sep1034_defaults(),
        test_elicitation_sep1330_enums(),
        json_schema_2020_12_tool()?,
    ];
    for tool in tools {
        registry.register(tool)?;
    }
    Ok(())
}

/// A 1x1 red pixel, as PNG (69 bytes), base64.
const RED_PIXEL_PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC";

/// One millisecond of silence: a PCM WAV file, 8 kHz, mono, 8-bit, 8 samples
/// (52 bytes), base64.
const SILENT_WAV: &str = "UklGRiwAAABXQVZFZm10IBAAAAABAAEAQB8AAEAfAAABAAgAZGF0YQgAAACAgICAgICAgA==";

/// The text `test_simple_text` returns, word for word as the scenario specifies.
const SIMPLE_TEXT: &str = "This is a simple text response for testing.";

/// The message of `test_error_handling`'s tool error.
const ERROR_TEXT: &str = "This tool intentionally returns an error for testing";

/// A successful result made of `content` blocks.
fn content(blocks: Value) -> Value {
    json!({ "content": blocks, "isError": false })
}

/// `tools-call-simple-text`: one text block.
fn test_simple_text() -> Tool {
    Tool::from_fn(
        "test_simple_text",
        "Returns one text block (conformance: tools-call-simple-text).",
        |_: NoArgs| async { SIMPLE_TEXT },
    )
}

/// `tools-call-image`: one image block, a 1x1 red PNG.
fn test_image_content() -> Tool {
    Tool::from_fn(
        "test_image_content",
        "Returns one image block, a 1x1 red PNG (conformance: tools-call-image).",
        |_: NoArgs| async {
            content(json!([{ "type": "image", "data": RED_PIXEL_PNG, "mimeType": "image/png" }]))
        },
    )
}

/// `tools-call-audio`: one audio block, a tiny silent WAV (`audio/wav`, as checked).
fn test_audio_content() -> Tool {
    Tool::from_fn(
        "test_audio_content",
        "Returns one audio block, a millisecond of silence as WAV (conformance: tools-call-audio).",
        |_: NoArgs| async {
            content(json!([{ "type": "audio", "data": SILENT_WAV, "mimeType": "audio/wav" }]))
        },
    )
}

/// `tools-call-embedded-resource`: one embedded text resource.
fn test_embedded_resource() -> Tool {
    Tool::from_fn(
        "test_embedded_resource",
        "Returns one embedded text resource (conformance: tools-call-embedded-resource).",
        |_: NoArgs| async {
            content(json!([{
                "type": "resource",
                "resource": {
                    "uri": "test://embedded-resource",
                    "mimeType": "text/plain",
                    "text": "This is an embedded resource content."
                }
            }]))
        },
    )
}

/// `tools-call-mixed-content`: a text, an image and an embedded resource together.
fn test_multiple_content_types() -> Tool {
    Tool::from_fn(
        "test_multiple_content_types",
        "Returns a text, an image and an embedded resource (conformance: tools-call-mixed-content).",
        |_: NoArgs| async {
            content(json!([
                { "type": "text", "text": "Multiple content types test:" },
                { "type": "image", "data": RED_PIXEL_PNG, "mimeType": "image/png" },
                {
                    "type": "resource",
                    "resource": {
                        "uri": "test://mixed-content-resource",
                        "mimeType": "application/json",
                        "text": json!({ "test": "data", "value": 123 }).to_string()
                    }
                }
            ]))
        },
    )
}

/// `tools-call-error`: always fails with a tool error (`isError: true`), not a
/// JSON-RPC error.
fn test_error_handling() -> Tool {
    Tool::from_fn(
        "test_error_handling",
        "Always fails with a tool error (conformance: tools-call-error).",
        |_: NoArgs| async { Err::<String, _>(ERROR_TEXT) },
    )
}

/// `tools-call-with-progress`: reports 0/100, 50/100 and 100/100 about 50 ms apart
/// (sent as `notifications/progress` when the call carried a progress token).
fn test_tool_with_progress() -> Tool {
    Tool::from_fn(
        "test_tool_with_progress",
        "Reports progress 0, 50 and 100 of 100, 50 ms apart (conformance: tools-call-with-progress).",
        |_: NoArgs, ctx: TaskContext| async move {
            for (i, progress) in [0.0, 50.0, 100.0].into_iter().enumerate() {
                if i > 0 {
                    tokio::select! {
                        _ = ctx.cancelled() => return Err("test_tool_with_progress was cancelled"),
                        _ = tokio::time::sleep(Duration::from_millis(50)) => {}
                    }
                }
                ctx.report_progress(progress, Some(100.0), None);
            }
            Ok("Progress test completed: reported 0, 50 and 100 of 100")
        },
    )
    .task_support(TaskSupport::Optional)
}

/// `tools-call-with-logging`: logs "Tool execution started", "Tool processing data" and
/// "Tool execution completed" at info level, about 50 ms apart.
fn test_tool_with_logging() -> Tool {
    Tool::from_fn(
        "test_tool_with_logging",
        "Logs three info messages, 50 ms apart (conformance: tools-call-with-logging).",
        |_: NoArgs, ctx: TaskContext| async move {
            let steps = [
                "Tool execution started",
                "Tool processing data",
                "Tool execution completed",
            ];
            for (i, step) in steps.into_iter().enumerate() {
                if i > 0 {
                    tokio::select! {
                        _ = ctx.cancelled() => return Err("test_tool_with_logging was cancelled"),
                        _ = tokio::time::sleep(Duration::from_millis(50)) => {}
                    }
                }
                ctx.log(LoggingLevel::Info, step);
            }
            Ok("Logging test completed: sent three info messages")
        },
    )
    .task_support(TaskSupport::Optional)
}

/// A failed request to the client becomes a tool error the model can read (e.g. a
/// client without the `sampling` or `elicitation` capability).
fn input_failed(tool: &str, e: &InputError) -> String {
    format!("{tool}: {e}")
}

/// Arguments of `test_sampling`.
#[derive(Debug, Deserialize, JsonSchema)]
struct SamplingArgs {
    /// The prompt to send to the client's model.
    prompt: String,
}

/// `tools-call-sampling`: sends `prompt` to the client's model
/// (`sampling/createMessage`) and returns its answer.
fn test_sampling() -> Tool {
    Tool::from_fn(
        "test_sampling",
        "Asks the client's model to answer `prompt` (conformance: tools-call-sampling).",
        |args: SamplingArgs, ctx: TaskContext| async move {
            let params = json!({
                "messages": [{ "role": "user", "content": { "type": "text", "text": args.prompt } }],
                "maxTokens": 100
            });
            let reply = ctx
                .create_message(params)
                .await
                .map_err(|e| input_failed("test_sampling", &e))?;
            let text = reply
                .pointer("/content/text")
                .and_then(Value::as_str)
                .unwrap_or_default();
            Ok::<_, String>(format!("LLM response: {text}"))
        },
    )
    .task_support(TaskSupport::Optional)
}

/// `accept`, `decline` or `cancel`, as on the wire.
fn action_name(action: ElicitAction) -> &'static str {
    match action {
        ElicitAction::Accept => "accept",
        ElicitAction::Decline => "decline",
        ElicitAction::Cancel => "cancel",
    }
}

/// Asks `message` with the form `schema` and describes the answer as
/// `{prefix}: action=..., content={...}`.
async fn elicit_and_describe(
    ctx: &TaskContext,
    tool: &str,
    prefix: &str,
    message: &str,
    schema: Value,
) -> Result<String, String> {
    let answer = ctx
        .elicit(message, schema)
        .await
        .map_err(|e| input_failed(tool, &e))?;
    let content = Value::Object(answer.content.unwrap_or_else(Map::new));
    Ok(format!(
        "{prefix}: action={}, content={content}",
        action_name(answer.action)
    ))
}

/// Arguments of `test_elicitation`.
#[derive(Debug, Deserialize, JsonSchema)]
struct ElicitationArgs {
    /// The message to show the user.
    message: String,
}

/// `tools-call-elicitation`: asks the user for a username and an email
/// (`elicitation/create`) and returns what they did.
fn test_elicitation() -> Tool {
    Tool::from_fn(
        "test_elicitation",
        "Asks the user for a username and an email with `message` (conformance: tools-call-elicitation).",
        |args: ElicitationArgs, ctx: TaskContext| async move {
            let schema = json!({
                "type": "object",
                "properties": {
                    "username": { "type": "string", "description": "User's response" },
                    "email": { "type": "string", "description": "User's email address" }
                },
                "required": ["username", "email"]
            });
            elicit_and_describe(&ctx, "test_elicitation", "User response", &args.message, schema)
                .await
        },
    )
    .task_support(TaskSupport::Optional)
}

/// `elicitation-sep1034-defaults`: a form with a default for every primitive type
/// (SEP-1034).
fn test_elicitation_sep1034_defaults() -> Tool {
    Tool::from_fn(
        "test_elicitation_sep1034_defaults",
        "Asks the user a form whose fields all have defaults (conformance: elicitation-sep1034-defaults).",
        |_: NoArgs, ctx: TaskContext| async move {
            let schema = json!({
                "type": "object",
                "properties": {
                    "name": { "type": "string", "title": "Name", "default": "John Doe" },
                    "age": { "type": "integer", "title": "Age", "default": 30 },
                    "score": { "type": "number", "title": "Score", "default": 95.5 },
                    "status": {
                        "type": "string",
                        "title": "Status",
                        "enum": ["active", "inactive", "pending"],
                        "default": "active"
                    },
                    "verified": { "type": "boolean", "title": "Verified", "default": true }
                }
            });
            elicit_and_describe(
                &ctx,
                "test_elicitation_sep1034_defaults",
                "Elicitation completed",
                "Please review and update the form fields with defaults",
                schema,
            )
            .await
        },
    )
    .task_support(TaskSupport::Optional)
}

/// `elicitation-sep1330-enums`: a form with the five enum shapes of SEP-1330
/// (untitled and titled single-select, the deprecated `enumNames`, untitled and
/// titled multi-select).
fn test_elicitation_sep1330_enums() -> Tool {
    Tool::from_fn(
        "test_elicitation_sep1330_enums",
        "Asks the user a form with every enum shape of SEP-1330 (conformance: elicitation-sep1330-enums).",
        |_: NoArgs, ctx: TaskContext| async move {
            let schema = json!({
                "type": "object",
                "properties": {
                    "untitledSingle": {
                        "type": "string",
                        "title": "Untitled single-select",
                        "enum": ["option1", "option2", "option3"]
                    },
                    "titledSingle": {
                        "type": "string",
                        "title": "Titled single-select",
                        "oneOf": [
                            { "const": "value1", "title": "First Option" },
                            { "const": "value2", "title": "Second Option" },
                            { "const": "value3", "title": "Third Option" }
                        ]
                    },
                    "legacyEnum": {
                        "type": "string",
                        "title": "Legacy titled enum",
                        "enum": ["opt1", "opt2", "opt3"],
                        "enumNames": ["Option One", "Option Two", "Option Three"]
                    },
                    "untitledMulti": {
                        "type": "array",
                        "title": "Untitled multi-select",
                        "items": { "type": "string", "enum": ["option1", "option2", "option3"] }
                    },
                    "titledMulti": {
                        "type": "array",
                        "title": "Titled multi-select",
                        "items": {
                            "anyOf": [
                                { "const": "value1", "title": "First Choice" },
                                { "const": "value2", "title": "Second Choice" },
                                { "const": "value3", "title": "Third Choice" }
                            ]
                        }
                    }
                }
            });
            elicit_and_describe(
                &ctx,
                "test_elicitation_sep1330_enums",
                "Elicitation completed",
                "Please choose from each kind of list",
                schema,
            )
            .await
        },
    )
    .task_support(TaskSupport::Optional)
}

/// The input schema `json-schema-2020-12` expects to find unchanged in `tools/list`:
/// `$schema`, `$defs` with an `$anchor`, `allOf`/`anyOf`, `if`/`then`/`else` and
/// `additionalProperties: false`.
fn json_schema_2020_12_input() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "$anchor": "addressDef",
                "type": "object",
                "properties": { "street": { "type": "string" }, "city": { "type": "string" } }
            }
        },
        "properties": {
            "name": { "type": "string" },
            "address": { "$ref": "#/$defs/address" },
            "contactMethod": { "type": "string", "enum": ["phone", "email"] },
            "phone": { "type": "string" },
            "email": { "type": "string" }
        },
        "allOf": [{ "anyOf": [{ "required": ["phone"] }, { "required": ["email"] }] }],
        "if": { "properties": { "contactMethod": { "const": "phone" } }, "required": ["contactMethod"] },
        "then": { "required": ["phone"] },
        "else": { "required": ["email"] },
        "additionalProperties": false
    })
}

/// `json-schema-2020-12`: a tool whose input schema uses JSON Schema 2020-12 beyond
/// what a Rust type produces, published as written. Echoes the validated arguments.
fn json_schema_2020_12_tool() -> Result<Tool> {
    let tool = Tool::new(
        "json_schema_2020_12_tool",
        "Tool with JSON Schema 2020-12 features (conformance: json-schema-2020-12).",
        json_schema_2020_12_input(),
        |args: Map<String, Value>, _ctx: TaskContext| {
            Box::pin(
                async move { Ok(ToolResult::text(format!("ok: {}", Value::Object(args))).into()) },
            )
        },
    )?;
    Ok(tool)
}

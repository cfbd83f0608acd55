//! The tool behind an approval gate: the task's work first asks the approvers (one
//! question per vote, until `required` distinct people approved), then runs the tool
//! with the arguments as approved (changed, where the rule allows it). A reject ends
//! the task with a tool error that carries the reason for the model.
//!
//! Every round is a question of the task, so the whole approval replays after a restart
//! or a takeover: answered rounds return their stored answers, and the parameters of
//! each round follow from the answers before it.

use mcp_tasks_engine::{Ask, DeadlineOutcome, Outcome, TaskContext};
use serde_json::{json, Map, Value};
use std::sync::Arc;

use super::rules::{CompiledRule, OnTimeout};
use super::APPROVAL_METHOD;
use crate::tools::registry::{ExternalStart, Tool, ToolHandler, ToolResult};

/// `tool` behind `rule`'s gate; the principals `not_by` (who ran the call again) may
/// not approve it.
pub(super) fn gated(tool: Tool, rule: Arc<CompiledRule>, not_by: Arc<Vec<String>>) -> Tool {
    let inner = tool.clone();
    let gate = Arc::clone(&rule);
    let excluded = Arc::clone(&not_by);
    let handler: ToolHandler = Arc::new(move |args, ctx| {
        let inner = inner.clone();
        let rule = Arc::clone(&gate);
        let not_by = Arc::clone(&excluded);
        Box::pin(async move {
            let args = match approve(&rule, &inner, args, &ctx, &not_by).await {
                Ok(args) => args,
                Err(refusal) => return Ok(refusal),
            };
            if !inner.is_resumable() {
                if let Err(refusal) = first_start(&inner, &ctx).await {
                    return Ok(refusal);
                }
            }
            inner.call(args, ctx).await
        })
    });
    let external = tool.external_spec().map(|spec| {
        let start = Arc::clone(&spec.start);
        let inner = tool.clone();
        let gate = Arc::clone(&rule);
        let wrapped: ExternalStart = Arc::new(move |args, ctx| {
            let start = Arc::clone(&start);
            let inner = inner.clone();
            let rule = Arc::clone(&gate);
            let not_by = Arc::clone(&not_by);
            Box::pin(async move {
                match approve(&rule, &inner, args, &ctx, &not_by).await {
                    Ok(args) => start(args, ctx).await,
                    Err(refusal) => Err(Outcome::Result { value: refusal }),
                }
            })
        });
        wrapped
    });
    // The held call's task lives at least as long as its approval may wait.
    let wait = rule.rule.longest_wait().unwrap_or(std::time::Duration::MAX);
    tool.rewired(handler, external).held_for(wait)
}

/// Journals that the approved tool starts now, so that a later attempt of the task
/// (after a restart or a takeover, which runs the gate again to go on waiting for its
/// approval) does not run a tool that is not safe to repeat a second time: `Err` with
/// the tool error saying so when an earlier attempt started it.
async fn first_start(tool: &Tool, ctx: &TaskContext) -> Result<(), Value> {
    let attempt = ctx.attempt();
    match ctx.step("approved-tool-started", async move { attempt }).await {
        Ok(started) if started == attempt => Ok(()),
        Ok(started) => Err(ToolResult::error(format!(
            "The call of {} was approved and started (attempt {started}), then the process running it stopped; it is not run again, because the tool is not safe to repeat. Check what it did before calling it again.",
            tool.name()
        )).into()),
        Err(e) => Err(ToolResult::error(format!(
            "The call of {} was approved, but its start could not be recorded ({e}); it did not run.",
            tool.name()
        )).into()),
    }
}

/// Asks until the call is approved (the arguments to run it with) or not (the tool
/// error the call ends with).
async fn approve(
    rule: &CompiledRule,
    tool: &Tool,
    mut args: Map<String, Value>,
    ctx: &TaskContext,
    not_by: &[String],
) -> Result<Map<String, Value>, Value> {
    let rule = &rule.rule;
    let name = tool.name();
    let mut approvers = rule.approvers.clone();
    let mut approved_by: Vec<String> = Vec::new();
    let mut escalated = false;
    // Who changed the arguments last, and from what: the approvals given before were
    // for other arguments and no longer count.
    let mut changed: Option<Value> = None;
    loop {
        let message = rule
            .message
            .clone()
            .unwrap_or_else(|| format!("Approve the call of {name}?"));
        let mut params = json!({
            "message": message,
            "tool": name,
            "arguments": args,
            "approvers": approvers,
            "required": rule.required,
            "approvedBy": approved_by,
            "allowEdit": rule.allow_edit,
            "inputSchema": tool.input_schema(),
            "escalated": escalated,
        });
        // Only when someone ran the call again: an approval asked before this key
        // existed keeps its params, so a restart finds it under its key.
        if !not_by.is_empty() {
            params["ranAgainBy"] = json!(not_by);
        }
        // Each round is for these exact arguments: a signed link fingerprints the
        // params, so a link sent for other arguments is refused.
        params["argumentsHash"] = json!(arguments_hash(&args));
        if let Some(changed) = &changed {
            params["changed"] = changed.clone();
        }
        let mut ask = Ask::new()
            .assign_to(approvers.clone())
            .only_assignees()
            .except(approved_by.iter().chain(not_by).cloned());
        if let Some(after) = rule.deadline {
            let decision = match (rule.on_timeout, escalated) {
                (OnTimeout::Approve, _) => "approve",
                (OnTimeout::Escalate, false) => "escalate",
                _ => "reject",
            };
            let at_deadline = json!({
                "decision": decision,
                "answeredBy": {"principal": "deadline", "via": "deadline"},
            });
            ask = ask.deadline(after, DeadlineOutcome::Answer { value: at_deadline });
        }
        let new_approval = changed
            .as_ref()
            .and_then(|c| c["by"].as_str())
            .map(|by| format!("arguments changed by {by}, a new approval: "))
            .unwrap_or_default();
        ctx.set_status_message(format!(
            "{new_approval}waiting for approval by {} ({} of {} given)",
            approvers.join(", "),
            approved_by.len(),
            rule.required
        ))
        .await;
        let answer = ctx
            .request_input_with(APPROVAL_METHOD, params, ask)
            .await
            .map_err(|e| {
                ToolResult::error(format!(
                    "The call of {name} needs approval by {}, and it could not wait for it: {e}",
                    approvers.join(", ")
                ))
                .into_value()
            })?;
        let by = answer
            .pointer("/answeredBy/principal")
            .and_then(Value::as_str)
            .unwrap_or("an approver")
            .to_string();
        let at_deadline =
            answer.pointer("/answeredBy/via").and_then(Value::as_str) == Some("deadline");
        match answer.get("decision").and_then(Value::as_str) {
            Some("approve") => {
                if let Some(edited) = answer
                    .get("arguments")
                    .and_then(Value::as_object)
                    .filter(|_| rule.allow_edit)
                {
                    if arguments_hash(edited) != arguments_hash(&args) && !at_deadline {
                        // Other arguments are a new approval: the votes so far were
                        // for the old ones; the person who changed them approves the
                        // new ones.
                        changed = Some(json!({
                            "by": by,
                            "from": args,
                            "fromHash": arguments_hash(&args),
                            "votesDropped": approved_by,
                        }));
                        approved_by.clear();
                    }
                    args = edited.clone();
                }
                if at_deadline {
                    ctx.set_status_message(format!(
                        "nobody decided by the deadline: approved, as the rule says (on_timeout = \"approve\"); running {name}"
                    ))
                    .await;
                    return Ok(args);
                }
                approved_by.push(by);
                if approved_by.len() >= rule.required {
                    ctx.set_status_message(format!(
                        "approved by {}; running {name}",
                        approved_by.join(", ")
                    ))
                    .await;
                    return Ok(args);
                }
            }
            Some("escalate") if !escalated => {
                escalated = true;
                approvers = rule.escalate_to.clone();
            }
            _ if at_deadline => {
                return Err(ToolResult::error(format!(
                    "The call of {name} was not approved: nobody decided by its deadline ({}), so it was rejected and did not run. Tell the user it needs approval by {}.",
                    rule.deadline.map(|d| humantime::format_duration(d).to_string()).unwrap_or_default(),
                    approvers.join(", ")
                )).into());
            }
            _ => {
                let reason = answer
                    .get("reason")
                    .and_then(Value::as_str)
                    .map(str::trim)
                    .filter(|r| !r.is_empty())
                    .map(|r| format!(": \"{r}\""))
                    .unwrap_or_else(|| " (no reason given)".to_string());
                return Err(ToolResult::error(format!(
                    "The call of {name} was rejected by {by}{reason}. It did not run. Do not repeat the same call; change it as the reason says, or ask the user."
                )).into());
            }
        }
    }
}

/// `tool` replaced by one that ends its call with the tool error `message` and runs
/// nothing (a held call whose approval cannot be asked again).
pub(super) fn refused(tool: Tool, message: String) -> Tool {
    let message = Arc::new(message);
    let said = Arc::clone(&message);
    let handler: ToolHandler = Arc::new(move |_args, _ctx| {
        let message = Arc::clone(&said);
        Box::pin(async move { Ok(ToolResult::error(message.as_str()).into_value()) })
    });
    let external = tool.external_spec().map(|_| {
        let wrapped: ExternalStart = Arc::new(move |_args, _ctx| {
            let message = Arc::clone(&message);
            Box::pin(async move {
                Err(Outcome::Result {
                    value: ToolResult::error(message.as_str()).into_value(),
                })
            })
        });
        wrapped
    });
    tool.rewired(handler, external)
}

/// The SHA-256 (hex) of `args` as canonical JSON (object keys sorted at every level, no
/// whitespace): what an approval is bound to.
pub(crate) fn arguments_hash(args: &Map<String, Value>) -> String {
    use sha2::{Digest, Sha256};
    let mut text = String::new();
    canonical(&Value::Object(args.clone()), &mut text);
    hex_of(&Sha256::digest(text.as_bytes()))
}

fn hex_of(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `value` as JSON with the keys of every object sorted.
fn canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                canonical(&map[k], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(v, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hash_is_of_canonical_json() {
        let a = json!({"b": 1, "a": {"y": [1, 2], "x": "s"}});
        let b = json!({"a": {"x": "s", "y": [1, 2]}, "b": 1});
        let (Value::Object(a), Value::Object(b)) = (a, b) else {
            unreachable!()
        };
        assert_eq!(arguments_hash(&a), arguments_hash(&b));
        let mut c = a.clone();
        c.insert("b".into(), json!(2));
        assert_ne!(arguments_hash(&a), arguments_hash(&c));
        let mut text = String::new();
        canonical(&Value::Object(b), &mut text);
        assert_eq!(text, r#"{"a":{"x":"s","y":[1,2]},"b":1}"#);
    }
}

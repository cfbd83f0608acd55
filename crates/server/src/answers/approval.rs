//! An approval's answer: `{"decision": "approve" | "reject", "reason"?, "arguments"?}`
//! (plus `answeredBy`, which the engine adds: who, through which channel, when). It is
//! checked at the engine's one answer entry point, so a malformed vote leaves the
//! question open whatever channel it came through.

use mcp_tasks_engine::Outcome;
use serde_json::Value;

use crate::tools::schema_check::SchemaCheck;

/// Whether `answer` is a usable vote on the approval asked with `params`: a decision,
/// a reason that is text, and edited arguments only where the rule allows editing,
/// fitting the tool's input schema.
///
/// # Errors
/// What is wrong with the vote, in words for the person who cast it.
pub fn check_answer(params: &Value, answer: &Value) -> Result<(), String> {
    let decision = answer.get("decision").and_then(Value::as_str);
    if !matches!(decision, Some("approve" | "reject" | "escalate")) {
        return Err("an approval needs a decision: \"approve\" or \"reject\"".into());
    }
    if let Some(reason) = answer.get("reason") {
        if !reason.is_string() && !reason.is_null() {
            return Err("the reason must be text".into());
        }
    }
    let Some(edited) = answer.get("arguments").filter(|a| !a.is_null()) else {
        return Ok(());
    };
    if decision != Some("approve") {
        return Err("arguments can only be changed when approving".into());
    }
    if params.get("allowEdit") != Some(&Value::Bool(true)) {
        return Err("this approval does not allow changing the arguments; approve or reject the call as it is".into());
    }
    if !edited.is_object() {
        return Err("the changed arguments must be a JSON object".into());
    }
    let schema = params
        .get("inputSchema")
        .cloned()
        .unwrap_or(Value::Bool(true));
    let problems = SchemaCheck::compile(&schema)
        .map_err(|e| format!("the tool's input schema could not be read: {e}"))?
        .problems(edited);
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "the changed arguments do not fit the tool's input schema: {}",
            problems.join("; ")
        ))
    }
}

/// A few words on a vote for the task's timeline: "approved", "approved with changed
/// arguments", "rejected (\"`REASON`\")".
pub fn describe_answer(params: &Value, answer: &Outcome) -> Option<String> {
    let Outcome::Result { value } = answer else {
        return None;
    };
    let reason = value
        .get("reason")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|r| !r.is_empty());
    let round = match (
        params.get("required").and_then(Value::as_u64),
        params
            .get("approvedBy")
            .and_then(Value::as_array)
            .map(Vec::len),
    ) {
        (Some(required), Some(given)) if required > 1 => format!(" ({} of {required})", given + 1),
        _ => String::new(),
    };
    Some(match value.get("decision").and_then(Value::as_str) {
        Some("approve") if value.get("arguments").is_some_and(Value::is_object) => {
            let mut changed = value["arguments"].to_string();
            if changed.len() > 200 {
                let cut = (0..=200)
                    .rev()
                    .find(|i| changed.is_char_boundary(*i))
                    .unwrap_or(0);
                changed.truncate(cut);
                changed.push('…');
            }
            format!("approved with changed arguments {changed}{round}")
        }
        Some("approve") => format!("approved{round}"),
        Some("reject") => match reason {
            Some(r) => format!("rejected (\"{r}\")"),
            None => "rejected".to_string(),
        },
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn params(allow_edit: bool) -> Value {
        json!({
            "tool": "deploy",
            "allowEdit": allow_edit,
            "required": 2,
            "approvedBy": ["alice"],
            "inputSchema": {"type": "object", "properties": {"env": {"type": "string", "enum": ["staging", "prod"]}}, "required": ["env"]}
        })
    }

    #[test]
    fn votes_are_checked() {
        assert!(check_answer(&params(false), &json!({"decision": "approve"})).is_ok());
        assert!(check_answer(
            &params(false),
            &json!({"decision": "reject", "reason": "no"})
        )
        .is_ok());
        assert!(check_answer(&params(false), &json!({"decision": "maybe"}))
            .unwrap_err()
            .contains("needs a decision"));
        assert!(check_answer(
            &params(false),
            &json!({"decision": "approve", "arguments": {"env": "prod"}})
        )
        .unwrap_err()
        .contains("does not allow changing"));
        assert!(check_answer(
            &params(true),
            &json!({"decision": "approve", "arguments": {"env": "prod"}})
        )
        .is_ok());
        assert!(check_answer(
            &params(true),
            &json!({"decision": "approve", "arguments": {"env": "moon"}})
        )
        .unwrap_err()
        .contains("do not fit the tool's input schema"));
        assert!(check_answer(
            &params(true),
            &json!({"decision": "reject", "arguments": {"env": "prod"}})
        )
        .is_err());
    }

    #[test]
    fn votes_read_as_words() {
        let said = |v: Value| describe_answer(&params(true), &Outcome::Result { value: v });
        assert_eq!(
            said(json!({"decision": "approve"})).as_deref(),
            Some("approved (2 of 2)")
        );
        assert_eq!(
            said(json!({"decision": "reject", "reason": "not on a Friday"})).as_deref(),
            Some("rejected (\"not on a Friday\")")
        );
        assert_eq!(
            said(json!({"decision": "approve", "arguments": {"env": "staging"}})).as_deref(),
            Some("approved with changed arguments {\"env\":\"staging\"} (2 of 2)")
        );
    }
}

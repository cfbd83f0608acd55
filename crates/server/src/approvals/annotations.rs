//! The annotations of an `@approval` permit, read as the `[[approval]]` rule they
//! stand for, and checked as such.

use cedar_policy::{Effect, Policy};
use std::collections::BTreeMap;
use std::time::Duration;

use super::rules::{ApprovalRule, CompiledRule, OnTimeout};

/// The annotations a `permit` may carry to hold the call for approval, and the one a
/// `forbid` may carry to explain itself; any other annotation is the author's own and
/// is left alone.
const APPROVAL_KEYS: [&str; 6] = [
    "approvers",
    "quorum",
    "deadline",
    "on_timeout",
    "escalate_to",
    "allow_edit",
];

/// The approval rule an `@approval` permit stands for; `None` for any other policy.
pub(super) fn approval_rule(
    policy: &Policy,
    id: &str,
    groups: Option<&BTreeMap<String, Vec<String>>>,
) -> Result<Option<CompiledRule>, String> {
    let note = |key: &str| policy.annotation(key).map(str::trim);
    let Some(message) = note("approval") else {
        if let Some(key) = APPROVAL_KEYS.iter().find(|k| note(k).is_some()) {
            return Err(format!(
                "@{key} belongs to a permit that asks for approval: add @approval(\"what the approvers read\")"
            ));
        }
        return Ok(None);
    };
    if policy.effect() == Effect::Forbid {
        return Err(
            "@approval is for a permit (a forbid refuses; it cannot be approved)".to_string(),
        );
    }
    let list = |key: &str| -> Vec<String> {
        note(key)
            .unwrap_or_default()
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect()
    };
    let required = match note("quorum") {
        None => 1,
        Some(q) => q.parse::<usize>().map_err(|_| {
            format!("@quorum(\"{q}\") is not a number of people; write e.g. @quorum(\"2\")")
        })?,
    };
    let deadline = note("deadline")
        .map(|d| {
            humantime::parse_duration(d).map_err(|e| {
                format!("@deadline(\"{d}\") is not a duration ({e}); write e.g. @deadline(\"30m\")")
            })
        })
        .transpose()?;
    let on_timeout = match note("on_timeout") {
        None | Some("reject") => OnTimeout::Reject,
        Some("approve") => OnTimeout::Approve,
        Some("escalate") => OnTimeout::Escalate,
        Some(other) => {
            return Err(format!(
                "@on_timeout(\"{other}\") is not one of reject, approve, escalate"
            ))
        }
    };
    let allow_edit = match note("allow_edit") {
        None | Some("false") => false,
        Some("true") => true,
        Some(other) => {
            return Err(format!(
                "@allow_edit(\"{other}\") is not \"true\" or \"false\""
            ))
        }
    };
    let rule = ApprovalRule {
        tool: "*".to_string(),
        when: Vec::new(),
        approvers: list("approvers"),
        required,
        deadline,
        on_timeout,
        escalate_to: list("escalate_to"),
        allow_edit,
        message: Some(message.to_string()).filter(|m| !m.is_empty()),
    };
    rule.compile_with(groups)
        .map(Some)
        .map_err(|e| translate(&e, id))
}

/// A rule's start-time message in the annotations' words.
fn translate(message: &str, id: &str) -> String {
    message
        .replace("[[approval]] for tool '*': ", "")
        .replace("'approvers'", "@approvers")
        .replace("'required'", "@quorum")
        .replace("on_timeout = \"escalate\"", "@on_timeout(\"escalate\")")
        .replace("'escalate_to'", "@escalate_to")
        .replace("'deadline'", "@deadline")
        .replace("on_timeout is not", "@on_timeout is not")
        .replace("[[approval]]", &format!("policy '{id}'"))
}

/// The longest an `@approval` permit lets a call wait, checked against `max_ttl`.
pub(crate) fn check_max_ttl<'a>(
    rules: impl Iterator<Item = (&'a String, &'a std::sync::Arc<CompiledRule>)>,
    max_ttl: Duration,
) -> Result<(), String> {
    for (id, rule) in rules {
        rule.rule.check_max_ttl(max_ttl).map_err(|e| {
            let e = e.replace("[[approval]] for tool '*'", &format!("policy '{id}'"));
            e.replace("deadline = ", "@deadline ")
        })?;
    }
    Ok(())
}

//! Approvals: calls that wait for people before their tool runs.
//!
//! An `[[approval]]` rule ([`ApprovalRule`]) names tools (globs, native and gateway
//! upstream tools alike) and conditions on their arguments. A matching call becomes a
//! task whatever the client asked for (`gate`), and the task's first step is a question
//! of method [`APPROVAL_METHOD`] assigned to the approvers only: the client never sees
//! it and cannot answer it (the engine refuses), the approvers answer on the task
//! board, through Slack or a signed link. Because it is a question of the task, the
//! approval waits as long as the task lives, survives restarts and takeovers (answers
//! are stored and replayed), and the answer reaches the agent whenever it is given.
//!
//! | file | what |
//! |---|---|
//! | `rules` | the configured rules, checked and compiled |
//! | `gate` | the tool behind the gate: rounds of votes, then the tool |
//!
//! What an approval's answer must look like, and how it reads, is with every other
//! question's answer in [`crate::answers`] (re-exported here).

mod gate;
mod rules;

pub use crate::answers::{
    check_approval as check_answer, describe_approval as describe_answer, APPROVAL_METHOD,
};
pub use rules::{ApprovalRule, Condition, OnTimeout};

use rules::CompiledRule;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::sync::Arc;

use crate::tools::registry::Tool;

/// The `_meta` key of a call's request naming who ran it again (the task board's "Run
/// again", [`crate::Server::start_tool_task_again`]): written by the server, read when
/// the call's approval is asked (also after a restart), so that the person who ran a
/// call again never approves it.
pub const RAN_AGAIN_BY_META: &str = "mcp-tasks/ranAgainBy";

/// Who ran the call with `request` (its `tools/call` params) again, as
/// [`RAN_AGAIN_BY_META`] names them: nobody for a client's own call.
pub fn ran_again_by(request: &Value) -> Vec<String> {
    request
        .pointer(&format!("/_meta/{}", RAN_AGAIN_BY_META.replace('/', "~1")))
        .and_then(Value::as_str)
        .map(|by| vec![by.to_string()])
        .unwrap_or_default()
}

/// The configured approval rules and groups, compiled.
#[derive(Debug, Clone, Default)]
pub struct Approvals {
    rules: Vec<Arc<CompiledRule>>,
    groups: BTreeMap<String, Vec<String>>,
}

impl Approvals {
    /// Checks and compiles `rules`; `groups` maps a group name to its members
    /// (principals), for approvers, escalation and question assignees.
    ///
    /// # Errors
    /// The first problem found, naming the rule (an empty approver list, a quorum
    /// larger than the approvers, a bad pattern, escalation without a deadline).
    pub fn new(
        rules: Vec<ApprovalRule>,
        groups: BTreeMap<String, Vec<String>>,
    ) -> Result<Self, String> {
        for (name, members) in &groups {
            if members.is_empty() {
                return Err(format!("[groups]: group '{name}' has no members"));
            }
        }
        let rules = rules
            .iter()
            .map(|r| r.compile(&groups).map(Arc::new))
            .collect::<Result<_, _>>()?;
        Ok(Approvals { rules, groups })
    }

    /// Checks that every rule's approval can wait as long as it says on a server whose
    /// tasks live at most `max_ttl` ([`Server::start`](crate::Server::start) calls
    /// it): a held call's task must not expire before its approval's deadline.
    ///
    /// # Errors
    /// The first rule whose wait exceeds `max_ttl`, naming its deadline and `max_ttl`.
    pub fn check_max_ttl(&self, max_ttl: std::time::Duration) -> Result<(), String> {
        self.rules
            .iter()
            .try_for_each(|r| r.rule.check_max_ttl(max_ttl))
    }

    /// Whether no rule is configured.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// The groups `principal` belongs to.
    pub fn groups_of(&self, principal: &str) -> Vec<String> {
        self.groups
            .iter()
            .filter(|(_, members)| members.iter().any(|m| m == principal))
            .map(|(name, _)| name.clone())
            .collect()
    }

    /// The people a list of principals and groups stands for.
    pub fn people(&self, names: &[String]) -> Vec<String> {
        rules::expand(names, &self.groups)
    }

    /// `tool` as a call with `args` must run: behind the first rule that applies to
    /// it (then it needs a task: [`Tool::needs_task`]), or as it is.
    pub(crate) fn gate(&self, tool: Tool, args: &Map<String, Value>) -> Tool {
        self.gate_except(tool, args, Vec::new())
    }

    /// [`Approvals::gate`], where the principals `not_by` may not approve (the person
    /// who ran the call again: who starts a call does not also decide it).
    pub(crate) fn gate_except(
        &self,
        tool: Tool,
        args: &Map<String, Value>,
        not_by: Vec<String>,
    ) -> Tool {
        if self.rules.is_empty() {
            return tool;
        }
        let args = Value::Object(args.clone());
        match self.rules.iter().find(|r| r.applies(tool.name(), &args)) {
            Some(rule) => gate::gated(tool, Arc::clone(rule), Arc::new(not_by)),
            None => tool,
        }
    }
}

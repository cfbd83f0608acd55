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
//! | `policy` | Cedar policies (`[policy]`, feature `policy`): permit, forbid, permit with approval |
//! | `cedar` | the Cedar request of a call, and Cedar's parse errors with their place |
//! | `annotations` | an `@approval` permit's annotations as the rule they stand for |
//!
//! What an approval's answer must look like, and how it reads, is with every other
//! question's answer in [`crate::answers`] (re-exported here).

#[cfg(feature = "policy")]
mod annotations;
#[cfg(feature = "policy")]
mod cedar;
mod gate;
#[cfg(feature = "policy")]
mod policy;
mod rules;

#[cfg(feature = "policy")]
pub use policy::{Policies, PolicyDecision, Verdict};

pub use crate::answers::{
    check_approval as check_answer, describe_approval as describe_answer, APPROVAL_METHOD,
};
pub use rules::{ApprovalRule, Condition, OnTimeout};

use mcp_tasks_engine::Caller;
use mcp_tasks_protocol::RpcError;
use rules::CompiledRule;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::sync::Arc;

use crate::tools::registry::Tool;

/// The `_meta` key of a held call's request naming the Cedar policy whose approval
/// holds it: written by the server when the call is decided (a client's own value is
/// dropped first), read when the task is taken over after a restart, so that the call
/// waits for the same approval without deciding again (the caller's groups from an
/// identity provider are not at hand then).
pub const APPROVAL_POLICY_META: &str = "mcp-tasks/approvalPolicy";

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
    #[cfg(feature = "policy")]
    policies: Option<Arc<Policies>>,
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
        Ok(Approvals {
            rules,
            groups,
            #[cfg(feature = "policy")]
            policies: None,
        })
    }

    /// The same rules, with every call also authorized by `policies` first (a
    /// `forbid` refuses it, an `@approval` permit holds it; see `docs/approvals.md`).
    #[cfg(feature = "policy")]
    pub fn with_policies(mut self, policies: Policies) -> Self {
        self.policies = Some(Arc::new(policies));
        self
    }

    /// The Cedar policies every call is authorized by, when configured.
    #[cfg(feature = "policy")]
    pub fn policies(&self) -> Option<&Policies> {
        self.policies.as_deref()
    }

    /// The groups `caller` counts as a member of: those it came with (from an identity
    /// provider's claims) and those `[groups]` gives its principal.
    pub fn groups_for(&self, caller: &Caller) -> Vec<String> {
        let mut groups = caller.groups.clone();
        for g in self.groups_of(&caller.principal) {
            if !groups.contains(&g) {
                groups.push(g);
            }
        }
        groups
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
            .try_for_each(|r| r.rule.check_max_ttl(max_ttl))?;
        #[cfg(feature = "policy")]
        if let Some(p) = &self.policies {
            annotations::check_max_ttl(p.approval_rules(), max_ttl)?;
        }
        Ok(())
    }

    /// Whether nothing can hold a call for approval: no rule, and no Cedar policy
    /// with `@approval`.
    pub fn is_empty(&self) -> bool {
        #[cfg(feature = "policy")]
        if self.policies.as_ref().is_some_and(|p| p.holds_calls()) {
            return false;
        }
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

    /// What the call of `tool` with `args` by `caller` (its `tools/call` params
    /// `params`) becomes: refused by a Cedar `forbid` (or for want of a `permit`),
    /// held by an `@approval` permit (whose id is then written into `params`' `_meta`
    /// under [`APPROVAL_POLICY_META`]), else behind the first `[[approval]]` rule that
    /// applies, or as it is. Who ran the call again ([`RAN_AGAIN_BY_META`]) never
    /// approves it.
    ///
    /// # Errors
    /// [`FORBIDDEN_BY_POLICY`](mcp_tasks_protocol::error_code::FORBIDDEN_BY_POLICY)
    /// with the deciding policies' ids and the reason, for a call the policies refuse.
    pub(crate) fn admit(
        &self,
        tool: Tool,
        args: &Map<String, Value>,
        caller: &Caller,
        params: &mut Value,
    ) -> Result<Tool, RpcError> {
        if let Some(meta) = params.get_mut("_meta").and_then(Value::as_object_mut) {
            meta.remove(APPROVAL_POLICY_META);
        }
        let not_by = ran_again_by(params);
        #[cfg(feature = "policy")]
        if let Some(policies) = &self.policies {
            let groups = self.groups_for(caller);
            let decision = policies.decide(&caller.principal, &groups, tool.name(), args);
            match (decision.verdict, decision.rule) {
                (Verdict::Forbid, _) => {
                    tracing::warn!(
                        target: "mcp_tasks::audit",
                        event = "policy_forbid",
                        principal = %caller.principal,
                        tool = tool.name(),
                        policies = %decision.policies.join(","),
                    );
                    return Err(RpcError {
                        code: mcp_tasks_protocol::error_code::FORBIDDEN_BY_POLICY,
                        message: decision.reason.clone(),
                        data: Some(serde_json::json!({
                            "policies": decision.policies,
                            "reason": decision.reason,
                        })),
                    });
                }
                (Verdict::Approval, Some(rule)) => {
                    if let Some(id) = decision.policies.first() {
                        stamp(params, id);
                    }
                    return Ok(gate::gated(tool, rule, Arc::new(not_by)));
                }
                _ => {}
            }
        }
        #[cfg(not(feature = "policy"))]
        let _ = caller;
        Ok(self.gate_except(tool, args, not_by))
    }

    /// [`Approvals::admit`] for a task taken over after a restart, from its stored
    /// request (`tools/call` params): the approval policy named in its `_meta` holds
    /// it again, else the `[[approval]]` rules decide as before. A call the policies
    /// permitted (or forbade: it was never created) is not put to them again.
    pub(crate) fn resumed(&self, tool: Tool, args: &Map<String, Value>, request: &Value) -> Tool {
        let not_by = ran_again_by(request);
        let held_by = request
            .pointer(&format!(
                "/_meta/{}",
                APPROVAL_POLICY_META.replace('/', "~1")
            ))
            .and_then(Value::as_str);
        if let Some(id) = held_by {
            #[cfg(feature = "policy")]
            if let Some(rule) = self.policies.as_ref().and_then(|p| p.approval_of(id)) {
                return gate::gated(tool, rule, Arc::new(not_by));
            }
            // The policy that held it is gone: it never runs unapproved.
            return gate::refused(
                tool,
                format!("The call was held for approval by policy '{id}', which the server no longer has, so it did not run. Call it again to have it decided by the current policies."),
            );
        }
        self.gate_except(tool, args, not_by)
    }

    /// The first `[[approval]]` rule that applies to a call of `tool` with `args`, if
    /// any (what `mcp-tasks policy check` reports after the policies permitted it).
    pub fn rule_for(&self, tool: &str, args: &Map<String, Value>) -> Option<&ApprovalRule> {
        let args = Value::Object(args.clone());
        self.rules
            .iter()
            .find(|r| r.applies(tool, &args))
            .map(|r| &r.rule)
    }

    /// `tool` as a call with `args` must run: behind the first rule that applies to it
    /// (then it needs a task: [`Tool::needs_task`]), or as it is; the principals
    /// `not_by` may not approve (the person who ran the call again: who starts a call
    /// does not also decide it).
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

/// Writes the id of the approval policy holding a call into its request's `_meta`.
#[cfg(feature = "policy")]
fn stamp(params: &mut Value, id: &str) {
    if !params.get("_meta").is_some_and(Value::is_object) {
        if let Some(obj) = params.as_object_mut() {
            obj.insert("_meta".to_string(), Value::Object(Map::new()));
        }
    }
    if let Some(meta) = params.get_mut("_meta").and_then(Value::as_object_mut) {
        meta.insert(
            APPROVAL_POLICY_META.to_string(),
            Value::String(id.to_string()),
        );
    }
}

//! Cedar policies (`[policy]`): every `tools/call` is authorized by the policies of a
//! folder of `*.cedar` files before anything runs.
//!
//! The request Cedar sees: principal `User::"<principal>"` whose parents are
//! `Group::"<group>"` for each of the caller's groups (so `principal in Group::"ops"`
//! holds), action `Action::"call"`, resource `Tool::"<name>"` (the name the agent sees,
//! a gateway's upstream tools with their prefix or new name), and the context
//! `{ arguments: { … } }`, the call's arguments.
//!
//! Cedar decides as it always does: a satisfied `forbid` refuses, else a satisfied
//! `permit` allows, else the call is refused (nothing permits it). A satisfied `permit`
//! annotated with `@approval` holds the call for people exactly as an `[[approval]]`
//! rule does (`@approvers`, `@quorum`, `@deadline`, `@on_timeout`, `@escalate_to`,
//! `@allow_edit` are the rule's keys); `@id` names a policy, `@reason` is what the
//! agent reads when a `forbid` refuses its call.

use cedar_policy::{Authorizer, Decision, Policy, PolicyId, PolicySet};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::str::FromStr;
use std::sync::Arc;

use super::annotations::approval_rule;
use super::cedar::{parse_error, request};
use super::rules::{ApprovalRule, CompiledRule};

/// A folder's Cedar policies, parsed and checked: what [`Policies::decide`] asks.
pub struct Policies {
    set: PolicySet,
    /// The approval rule of each `@approval` permit, by policy id.
    approvals: HashMap<String, Arc<CompiledRule>>,
    /// The policy ids in the order they were read (files by name, then as written).
    order: Vec<String>,
    /// Where each policy was read: `FILE`, for messages.
    files: HashMap<String, String>,
}

impl std::fmt::Debug for Policies {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Policies")
            .field("policies", &self.order)
            .finish_non_exhaustive()
    }
}

/// What the policies make of one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// A `permit` allows it: it runs (an `[[approval]]` rule may still hold it).
    Permit,
    /// A `permit` with `@approval` allows it once people approved.
    Approval,
    /// A `forbid` refuses it, or no `permit` allows it.
    Forbid,
}

/// The policies' decision on one call, with what decided it.
#[derive(Debug, Clone)]
pub struct PolicyDecision {
    /// Permit, approval or forbid.
    pub verdict: Verdict,
    /// The ids of the deciding policies: the satisfied `forbid`s, the approval
    /// `permit`, or the satisfied `permit`s; empty when nothing permitted the call.
    pub policies: Vec<String>,
    /// A sentence for the agent and the log: why, and what to do.
    pub reason: String,
    /// The approval the call waits for ([`Verdict::Approval`]).
    pub approval: Option<ApprovalRule>,
    /// Policies whose conditions failed to evaluate (Cedar then ignores them), in
    /// Cedar's words (naming the policy): a `forbid` that reads a missing argument without `has` is one.
    pub errors: Vec<String>,
    pub(crate) rule: Option<Arc<CompiledRule>>,
}

impl Policies {
    /// Reads every `*.cedar` file in `dir` (by name order). `groups` are the
    /// configured groups, for the approval annotations' quorum check.
    ///
    /// # Errors
    /// A folder that cannot be read or holds no policy file, and the first file with a
    /// problem: Cedar's own parse message with the file, line and column, a duplicate
    /// `@id`, or an approval annotation that cannot work.
    pub fn load_dir(dir: &Path, groups: &BTreeMap<String, Vec<String>>) -> Result<Self, String> {
        Self::load_dir_with(dir, Some(groups))
    }

    /// [`Policies::load_dir`] where the groups may be unknown (`None`: `mcp-tasks
    /// policy check` without a config file); then an approval's quorum is not checked
    /// against its approvers.
    ///
    /// # Errors
    /// As [`Policies::load_dir`].
    pub fn load_dir_with(
        dir: &Path,
        groups: Option<&BTreeMap<String, Vec<String>>>,
    ) -> Result<Self, String> {
        let entries = std::fs::read_dir(dir).map_err(|e| {
            format!(
                "[policy] dir = \"{}\" cannot be read ({e}); name the folder of your *.cedar files",
                dir.display()
            )
        })?;
        let mut files: Vec<_> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "cedar") && p.is_file())
            .collect();
        files.sort();
        if files.is_empty() {
            return Err(format!(
                "[policy] dir = \"{}\" holds no *.cedar file: Cedar refuses every call no policy permits, so an empty folder would refuse them all. Add a policy (docs/approvals.md shows one)",
                dir.display()
            ));
        }
        let mut sources = Vec::new();
        for path in files {
            let text = std::fs::read_to_string(&path)
                .map_err(|e| format!("{}: cannot be read: {e}", path.display()))?;
            sources.push((path.display().to_string(), text));
        }
        Self::from_sources_with(&sources, groups)
    }

    /// Parses policies from `(file name, text)` pairs, as [`Policies::load_dir`] does.
    ///
    /// # Errors
    /// As [`Policies::load_dir`].
    pub fn from_sources(
        sources: &[(String, String)],
        groups: &BTreeMap<String, Vec<String>>,
    ) -> Result<Self, String> {
        Self::from_sources_with(sources, Some(groups))
    }

    /// [`Policies::from_sources`] where the groups may be unknown (see
    /// [`Policies::load_dir_with`]).
    ///
    /// # Errors
    /// As [`Policies::load_dir`].
    pub fn from_sources_with(
        sources: &[(String, String)],
        groups: Option<&BTreeMap<String, Vec<String>>>,
    ) -> Result<Self, String> {
        let mut set = PolicySet::new();
        let mut approvals = HashMap::new();
        let mut order = Vec::new();
        let mut where_read = HashMap::new();
        for (file, text) in sources {
            let parsed = PolicySet::from_str(text).map_err(|e| parse_error(file, text, &e))?;
            // Cedar numbers a file's policies policy0, policy1, … in the order written.
            let mut policies: Vec<Policy> = parsed.policies().cloned().collect();
            policies.sort_by_key(|p| {
                AsRef::<str>::as_ref(p.id())
                    .trim_start_matches("policy")
                    .parse::<usize>()
                    .unwrap_or(usize::MAX)
            });
            if parsed.templates().next().is_some() {
                return Err(format!(
                    "{file}: a policy template (with ?principal or ?resource) is not used here; write the principal or tool in the policy"
                ));
            }
            let short = Path::new(file)
                .file_name()
                .map_or_else(|| file.clone(), |n| n.to_string_lossy().into_owned());
            for (n, policy) in policies.into_iter().enumerate() {
                let id = policy
                    .annotation("id")
                    .map(str::to_string)
                    .unwrap_or_else(|| format!("{short}#{}", n + 1));
                if let Some(first) = where_read.get(&id) {
                    return Err(format!(
                        "{file}: the policy id '{id}' is used twice (also in {first}); give each policy its own @id"
                    ));
                }
                let policy = policy.new_id(PolicyId::new(&id));
                if let Some(rule) = approval_rule(&policy, &id, groups)
                    .map_err(|e| format!("{file}: policy '{id}': {e}"))?
                {
                    approvals.insert(id.clone(), Arc::new(rule));
                }
                set.add(policy)
                    .map_err(|e| format!("{file}: policy '{id}': {e}"))?;
                where_read.insert(id.clone(), file.clone());
                order.push(id);
            }
        }
        Ok(Policies {
            set,
            approvals,
            order,
            files: where_read,
        })
    }

    /// How many policies were read.
    pub fn len(&self) -> usize {
        self.order.len()
    }

    /// Whether no policy was read.
    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// Whether some `permit` holds calls for approval (then someone must be able to
    /// answer: the server needs its board).
    pub fn holds_calls(&self) -> bool {
        !self.approvals.is_empty()
    }

    /// The approval rules of the `@approval` permits, by policy id.
    pub(crate) fn approval_rules(&self) -> impl Iterator<Item = (&String, &Arc<CompiledRule>)> {
        self.approvals.iter()
    }

    /// The approval rule of the `@approval` permit `id` (a held call's, read again
    /// after a restart).
    pub(crate) fn approval_of(&self, id: &str) -> Option<Arc<CompiledRule>> {
        self.approvals.get(id).cloned()
    }

    /// Decides the call of `tool` with `args` by `principal`, a member of `groups`.
    pub fn decide(
        &self,
        principal: &str,
        groups: &[String],
        tool: &str,
        args: &Map<String, Value>,
    ) -> PolicyDecision {
        let denied = |policies: Vec<String>, reason: String, errors: Vec<String>| PolicyDecision {
            verdict: Verdict::Forbid,
            policies,
            reason,
            approval: None,
            errors,
            rule: None,
        };
        let (request, entities) = match request(principal, groups, tool, args) {
            Ok(r) => r,
            Err(e) => {
                return denied(
                    Vec::new(),
                    format!(
                    "the call of {tool} could not be put to the policies ({e}), so it is refused"
                ),
                    Vec::new(),
                )
            }
        };
        let response = Authorizer::new().is_authorized(&request, &self.set, &entities);
        let mut deciding: Vec<String> = response
            .diagnostics()
            .reason()
            .map(|id| id.to_string())
            .collect();
        deciding.sort_by_key(|id| self.order.iter().position(|o| o == id));
        let errors: Vec<String> = response
            .diagnostics()
            .errors()
            .map(ToString::to_string)
            .collect();
        for e in &errors {
            tracing::warn!(tool, principal, error = %e, "a Cedar policy could not be evaluated for this call and was ignored");
        }
        if response.decision() == Decision::Deny {
            if deciding.is_empty() {
                let reason = format!(
                    "No policy permits {principal} to call {tool}, so the call was refused and did not run. Do not retry it; ask the user to have it permitted."
                );
                return denied(Vec::new(), reason, errors);
            }
            let why: Vec<String> = deciding
                .iter()
                .filter_map(|id| {
                    self.set
                        .annotation(&PolicyId::new(id), "reason")
                        .map(str::to_string)
                })
                .collect();
            let why = if why.is_empty() {
                String::new()
            } else {
                format!(": {}", why.join("; "))
            };
            let reason = format!(
                "The call of {tool} is forbidden by policy {}{why}. It did not run. Do not retry it; change the call as the reason says, or ask the user.",
                deciding.join(", ")
            );
            return denied(deciding, reason, errors);
        }
        // Allowed: the first satisfied permit that asks for approval holds the call.
        if let Some(id) = deciding
            .iter()
            .find(|id| self.approvals.contains_key(id.as_str()))
        {
            let rule = self.approvals.get(id.as_str()).cloned();
            let approval = rule.as_ref().map(|r| r.rule.clone());
            return PolicyDecision {
                verdict: Verdict::Approval,
                policies: vec![id.clone()],
                reason: format!("policy {id} permits the call of {tool} once it is approved"),
                approval,
                errors,
                rule,
            };
        }
        PolicyDecision {
            verdict: Verdict::Permit,
            reason: format!("permitted by policy {}", deciding.join(", ")),
            policies: deciding,
            approval: None,
            errors,
            rule: None,
        }
    }

    /// The file policy `id` was read from.
    pub fn file_of(&self, id: &str) -> Option<&str> {
        self.files.get(id).map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::time::Duration;

    fn groups() -> BTreeMap<String, Vec<String>> {
        BTreeMap::from([
            (
                "ops".to_string(),
                vec!["alice".to_string(), "bob".to_string()],
            ),
            ("leads".to_string(), vec!["dave".to_string()]),
        ])
    }

    fn load(text: &str) -> Result<Policies, String> {
        Policies::from_sources(&[("p.cedar".to_string(), text.to_string())], &groups())
    }

    fn args(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    const POLICIES: &str = r#"
permit(principal, action == Action::"call", resource);

@id("no-etc")
@reason("nothing under /etc is written by agents")
forbid(principal, action, resource == Tool::"fs_write")
when { context.arguments has path && context.arguments.path like "/etc/*" };

@id("prod-deploys")
@approval("Deploy to production?")
@approvers("ops")
@quorum("2")
@deadline("30m")
permit(principal, action, resource == Tool::"deploy")
when { context.arguments.env == "prod" };

@id("interns")
forbid(principal in Group::"interns", action, resource == Tool::"deploy");
"#;

    #[test]
    fn forbid_permit_and_approval_are_decided_with_their_policies() {
        let p = load(POLICIES).unwrap();
        let d = p.decide(
            "alice",
            &[],
            "fs_write",
            &args(json!({"path": "/etc/hosts"})),
        );
        assert_eq!(d.verdict, Verdict::Forbid);
        assert_eq!(d.policies, ["no-etc"]);
        assert!(d.reason.contains("nothing under /etc"), "{}", d.reason);
        let d = p.decide("alice", &[], "fs_write", &args(json!({"path": "/tmp/x"})));
        assert_eq!(d.verdict, Verdict::Permit);
        assert_eq!(d.policies, ["p.cedar#1"]);
        let d = p.decide("alice", &[], "deploy", &args(json!({"env": "prod"})));
        assert_eq!(d.verdict, Verdict::Approval);
        let rule = d.approval.unwrap();
        assert_eq!(rule.required, 2);
        assert_eq!(rule.deadline, Some(Duration::from_secs(1800)));
        assert_eq!(rule.message.as_deref(), Some("Deploy to production?"));
        // The group comes with the caller (from [groups] or an identity provider).
        let d = p.decide("eve", &["interns".to_string()], "deploy", &args(json!({})));
        assert_eq!(d.verdict, Verdict::Forbid);
        assert_eq!(d.policies, ["interns"]);
    }

    #[test]
    fn nothing_permitted_is_refused() {
        let p = load("permit(principal == User::\"alice\", action, resource);").unwrap();
        let d = p.decide("bob", &[], "deploy", &Map::new());
        assert_eq!(d.verdict, Verdict::Forbid);
        assert!(d.policies.is_empty());
        assert!(d.reason.contains("No policy permits bob"), "{}", d.reason);
    }

    #[test]
    fn arguments_that_look_like_cedar_json_stay_values() {
        let p = load(
            "permit(principal, action, resource) when { context.arguments.x == \"y\" && context.arguments.n == 3 && context.arguments.f == \"1.5\" };",
        )
        .unwrap();
        let d = p.decide(
            "a",
            &[],
            "t",
            &args(json!({"x": "y", "n": 3, "f": 1.5, "z": null, "__entity": {"type": "User", "id": "root"}})),
        );
        assert_eq!(d.verdict, Verdict::Permit, "{:?}", d.errors);
    }

    #[test]
    fn bad_policies_say_file_line_and_what() {
        let e = load("permit(principal, action, resource);\n\nforbid(principal, action resource);")
            .err()
            .unwrap();
        assert!(e.starts_with("p.cedar:3:"), "{e}");
        let e = load("@approval(\"x\")\n@approvers(\"ops\")\n@quorum(\"3\")\npermit(principal, action, resource);")
            .err()
            .unwrap();
        assert!(
            e.contains("@quorum is 3 but the approvers are only 2"),
            "{e}"
        );
        let e = load("@approvers(\"ops\")\npermit(principal, action, resource);")
            .err()
            .unwrap();
        assert!(e.contains("add @approval"), "{e}");
        let e = load("@id(\"a\")\npermit(principal, action, resource);\n@id(\"a\")\nforbid(principal, action, resource);")
            .err()
            .unwrap();
        assert!(e.contains("used twice"), "{e}");
    }

    #[test]
    fn an_approval_longer_than_max_ttl_is_refused_naming_the_policy() {
        let p = load(
            "@id(\"slow\")\n@approval(\"\")\n@approvers(\"ops\")\n@deadline(\"2d\")\npermit(principal, action, resource);",
        )
        .unwrap();
        let e = super::super::annotations::check_max_ttl(
            p.approval_rules(),
            Duration::from_secs(24 * 3600),
        )
        .unwrap_err();
        assert!(e.contains("policy 'slow'") && e.contains("max_ttl"), "{e}");
        assert!(e.contains("@deadline \"2days\""), "{e}");
    }
}

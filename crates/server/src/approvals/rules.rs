//! Approval rules as configured (`[[approval]]`): which calls need whose approval, how
//! many, until when, and what happens then. Checked once at start
//! ([`ApprovalRule::check`]) so that a typo fails the start, not a call.

use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::time::Duration;

/// One `[[approval]]` entry: calls of `tool` (a name or a glob such as `fs_*`) whose
/// arguments meet every `when` condition wait for `required` distinct `approvers`
/// before the tool runs.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ApprovalRule {
    /// A tool name, or a glob over tool names (`*` any run of characters, `?` one):
    /// native tools and a gateway's upstream tools alike.
    pub tool: String,
    /// Conditions on the call's arguments, all of which must hold (none: every call).
    #[serde(default)]
    pub when: Vec<Condition>,
    /// Who may approve: principals, and group names from `[groups]`.
    pub approvers: Vec<String>,
    /// How many distinct people must approve. Default 1.
    #[serde(default = "one")]
    pub required: usize,
    /// How long the approval may wait; none: as long as the task lives.
    #[serde(default, deserialize_with = "duration")]
    pub deadline: Option<Duration>,
    /// What happens at the deadline. Default `reject`.
    #[serde(default)]
    pub on_timeout: OnTimeout,
    /// Who is asked next when `on_timeout = "escalate"` (principals and groups); their
    /// own deadline (the same length) then rejects.
    #[serde(default)]
    pub escalate_to: Vec<String>,
    /// Whether approvers may change the arguments before approving (checked against
    /// the tool's input schema).
    #[serde(default)]
    pub allow_edit: bool,
    /// What the approvers are asked; default "Approve the call of `TOOL`?".
    #[serde(default)]
    pub message: Option<String>,
}

fn one() -> usize {
    1
}

fn duration<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
    let text: Option<String> = Option::deserialize(d)?;
    text.map(|t| {
        humantime::parse_duration(&t).map_err(|e| {
            serde::de::Error::custom(format!(
                "'{t}' is not a duration ({e}); write e.g. \"30m\" or \"2d\""
            ))
        })
    })
    .transpose()
}

/// What happens when nobody decided an approval by its deadline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OnTimeout {
    /// The call is rejected (the model reads that nobody approved in time).
    #[default]
    Reject,
    /// The call runs as if approved.
    Approve,
    /// `escalate_to` is asked, with a deadline of the same length that then rejects.
    Escalate,
}

/// A condition on a call's arguments: the value at `pointer` (a JSON pointer into the
/// arguments, `""` the whole object) equals a value, matches a regular expression
/// (strings only), or is one of a list. Exactly one of `equals`, `matches`, `in`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Condition {
    /// Where in the arguments (`/path`, `/options/force`).
    pub pointer: String,
    /// The value must be exactly this.
    #[serde(default)]
    pub equals: Option<Value>,
    /// The value must be a string this regular expression finds a match in.
    #[serde(default)]
    pub matches: Option<String>,
    /// The value must be one of these.
    #[serde(default, rename = "in")]
    pub one_of: Option<Vec<Value>>,
}

/// A rule ready to match: its glob and regular expressions compiled.
#[derive(Debug, Clone)]
pub(crate) struct CompiledRule {
    pub(crate) rule: ApprovalRule,
    tool: regex_lite::Regex,
    when: Vec<(String, Test)>,
}

#[derive(Debug, Clone)]
enum Test {
    Equals(Value),
    Matches(regex_lite::Regex),
    In(Vec<Value>),
}

impl ApprovalRule {
    /// Checks the rule and compiles it; `groups` are the configured groups (group name
    /// to members), for the quorum check.
    ///
    /// # Errors
    /// What is wrong, naming the rule by its tool pattern.
    pub(crate) fn compile(
        &self,
        groups: &BTreeMap<String, Vec<String>>,
    ) -> Result<CompiledRule, String> {
        self.compile_with(Some(groups))
    }

    /// [`ApprovalRule::compile`]; with `groups` unknown (`None`: `mcp-tasks policy
    /// check` without a config file) the quorum is not checked against the approvers.
    pub(crate) fn compile_with(
        &self,
        groups: Option<&BTreeMap<String, Vec<String>>>,
    ) -> Result<CompiledRule, String> {
        let name = &self.tool;
        let problem = |p: String| format!("[[approval]] for tool '{name}': {p}");
        if name.trim().is_empty() {
            return Err(
                "[[approval]]: 'tool' is empty; name a tool or a glob such as \"fs_*\"".into(),
            );
        }
        if self.approvers.is_empty() {
            return Err(problem(
                "'approvers' is empty; name principals or groups from [groups]".into(),
            ));
        }
        if self.required == 0 {
            return Err(problem("'required' must be at least 1".into()));
        }
        let people = groups
            .map(|g| expand(&self.approvers, g))
            .unwrap_or_default();
        if groups.is_some() && self.required > people.len() {
            return Err(problem(format!(
                "'required' is {} but the approvers are only {} distinct people ({})",
                self.required,
                people.len(),
                people.join(", ")
            )));
        }
        match (self.on_timeout, self.deadline, self.escalate_to.is_empty()) {
            (OnTimeout::Escalate, None, _) => {
                return Err(problem(
                    "on_timeout = \"escalate\" needs a 'deadline'".into(),
                ))
            }
            (OnTimeout::Escalate, _, true) => {
                return Err(problem(
                    "on_timeout = \"escalate\" needs 'escalate_to' (who is asked next)".into(),
                ))
            }
            (OnTimeout::Reject | OnTimeout::Approve, _, false) => {
                return Err(problem(
                    "'escalate_to' is set but on_timeout is not \"escalate\"".into(),
                ))
            }
            _ => {}
        }
        let tool =
            regex_lite::Regex::new(&glob_to_regex(name)).map_err(|e| problem(e.to_string()))?;
        let mut when = Vec::new();
        for c in &self.when {
            if !(c.pointer.is_empty() || c.pointer.starts_with('/')) {
                return Err(problem(format!(
                    "pointer '{}' is not a JSON pointer: start it with '/' (e.g. \"/path\")",
                    c.pointer
                )));
            }
            let test = match (&c.equals, &c.matches, &c.one_of) {
                (Some(v), None, None) => Test::Equals(v.clone()),
                (None, Some(re), None) => {
                    Test::Matches(regex_lite::Regex::new(re).map_err(|e| {
                        problem(format!(
                            "'matches' for '{}' is not a regular expression: {e}",
                            c.pointer
                        ))
                    })?)
                }
                (None, None, Some(list)) => Test::In(list.clone()),
                _ => {
                    return Err(problem(format!(
                        "the condition on '{}' needs exactly one of equals, matches, in",
                        c.pointer
                    )))
                }
            };
            when.push((c.pointer.clone(), test));
        }
        Ok(CompiledRule {
            rule: self.clone(),
            tool,
            when,
        })
    }
}

impl ApprovalRule {
    /// The longest a call may wait under this rule before it runs or is refused: one
    /// `deadline` per round of votes (`required` rounds, one more when it escalates,
    /// whose round has a deadline of the same length). `None`: no deadline, the
    /// approval waits as long as its task lives.
    pub(crate) fn longest_wait(&self) -> Option<Duration> {
        let deadline = self.deadline?;
        let escalation = usize::from(self.on_timeout == OnTimeout::Escalate);
        let rounds = u32::try_from(self.required.saturating_add(escalation)).unwrap_or(u32::MAX);
        Some(deadline.saturating_mul(rounds))
    }

    /// Checks that a call under this rule can wait as long as the rule says on a server
    /// whose tasks live at most `max_ttl`.
    ///
    /// # Errors
    /// Names the rule, its deadline, how long the approval may wait and the maximum TTL,
    /// and says what to change.
    pub(crate) fn check_max_ttl(&self, max_ttl: Duration) -> Result<(), String> {
        let (Some(deadline), Some(wait)) = (self.deadline, self.longest_wait()) else {
            return Ok(());
        };
        if wait <= max_ttl {
            return Ok(());
        }
        let show = |d: Duration| humantime::format_duration(d).to_string();
        let rounds = match (self.required, self.on_timeout) {
            (1, OnTimeout::Escalate) => " (the deadline, then the escalation's own)".to_string(),
            (1, _) => String::new(),
            (n, OnTimeout::Escalate) => {
                format!(" ({n} votes and an escalation, each with the deadline)")
            }
            (n, _) => format!(" ({n} votes, each with the deadline)"),
        };
        Err(format!(
            "[[approval]] for tool '{}': deadline = \"{}\" lets a call wait up to {}{rounds}, longer than the server's maximum task TTL max_ttl = {}: the held task would expire first. Shorten the deadline or raise max_ttl",
            self.tool,
            show(deadline),
            show(wait),
            show(max_ttl)
        ))
    }
}

impl CompiledRule {
    /// Whether a call of `tool` with `args` needs this rule's approval.
    pub(crate) fn applies(&self, tool: &str, args: &Value) -> bool {
        self.tool.is_match(tool)
            && self.when.iter().all(|(pointer, test)| {
                let Some(value) = args.pointer(pointer) else {
                    return false;
                };
                match test {
                    Test::Equals(v) => value == v,
                    Test::Matches(re) => value.as_str().is_some_and(|s| re.is_match(s)),
                    Test::In(list) => list.contains(value),
                }
            })
    }
}

/// The distinct people `names` stand for: members of the groups named, and the
/// other names as principals.
pub(crate) fn expand(names: &[String], groups: &BTreeMap<String, Vec<String>>) -> Vec<String> {
    let mut people: Vec<String> = Vec::new();
    for n in names {
        let members = groups.get(n).cloned().unwrap_or_else(|| vec![n.clone()]);
        for m in members {
            if !people.contains(&m) {
                people.push(m);
            }
        }
    }
    people
}

/// An anchored regular expression for a glob (`*`, `?`; everything else literal).
fn glob_to_regex(glob: &str) -> String {
    let mut re = String::from("^");
    for c in glob.chars() {
        match c {
            '*' => re.push_str(".*"),
            '?' => re.push('.'),
            c => re.push_str(&regex_lite::escape(&c.to_string())),
        }
    }
    re.push('$');
    re
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rule(toml_text: &str) -> ApprovalRule {
        toml::from_str(toml_text).unwrap()
    }

    fn groups() -> BTreeMap<String, Vec<String>> {
        BTreeMap::from([(
            "ops".to_string(),
            vec!["alice".to_string(), "bob".to_string()],
        )])
    }

    #[test]
    fn globs_and_conditions_select_calls() {
        let r = rule(
            r#"tool = "fs_*"
approvers = ["ops"]
when = [{ pointer = "/path", matches = "^/etc/" }, { pointer = "/mode", in = ["w", "rw"] }]"#,
        )
        .compile(&groups())
        .unwrap();
        assert!(r.applies("fs_write", &json!({"path": "/etc/hosts", "mode": "w"})));
        assert!(!r.applies("fs_write", &json!({"path": "/tmp/x", "mode": "w"})));
        assert!(!r.applies("fs_write", &json!({"path": "/etc/hosts", "mode": "r"})));
        assert!(
            !r.applies("fs_write", &json!({"mode": "w"})),
            "a missing value never matches"
        );
        assert!(!r.applies("net_fetch", &json!({"path": "/etc/hosts", "mode": "w"})));
        let exact = rule("tool = \"deploy\"\napprovers = [\"alice\"]\nwhen = [{ pointer = \"/env\", equals = \"prod\" }]")
            .compile(&groups())
            .unwrap();
        assert!(exact.applies("deploy", &json!({"env": "prod"})));
        assert!(!exact.applies("deploy", &json!({"env": "staging"})));
        assert!(
            !exact.applies("deploy_all", &json!({"env": "prod"})),
            "a name is not a prefix"
        );
    }

    #[test]
    fn wrong_rules_fail_with_a_reason() {
        let check = |text: &str| rule(text).compile(&groups()).unwrap_err();
        assert!(check("tool = \"x\"\napprovers = []").contains("'approvers' is empty"));
        assert!(check("tool = \"x\"\napprovers = [\"ops\"]\nrequired = 3")
            .contains("only 2 distinct people (alice, bob)"));
        assert!(
            check("tool = \"x\"\napprovers = [\"ops\"]\non_timeout = \"escalate\"")
                .contains("needs a 'deadline'")
        );
        assert!(check(
            "tool = \"x\"\napprovers = [\"ops\"]\ndeadline = \"1h\"\non_timeout = \"escalate\""
        )
        .contains("needs 'escalate_to'"));
        assert!(check(
            "tool = \"x\"\napprovers = [\"ops\"]\nwhen = [{ pointer = \"path\", equals = 1 }]"
        )
        .contains("not a JSON pointer"));
        assert!(check(
            "tool = \"x\"\napprovers = [\"ops\"]\nwhen = [{ pointer = \"/p\", matches = \"(\" }]"
        )
        .contains("not a regular expression"));
        assert!(
            check("tool = \"x\"\napprovers = [\"ops\"]\nwhen = [{ pointer = \"/p\" }]")
                .contains("exactly one of")
        );
        let bad: Result<ApprovalRule, _> =
            toml::from_str("tool = \"x\"\napprovers = [\"a\"]\ndeadline = \"soon\"");
        assert!(bad.unwrap_err().to_string().contains("not a duration"));
    }
}

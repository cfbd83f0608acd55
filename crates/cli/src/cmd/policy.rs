//! `mcp-tasks policy check`: what a call would meet under a folder of Cedar policies
//! (and, with `--config`, the file's `[groups]` and `[[approval]]` rules), so that a
//! security team can test its policies in CI before a server loads them.
//!
//! Exit status: 0 the call runs at once, [`EXIT_FORBIDDEN`] a policy refuses it (or
//! none permits it), [`EXIT_APPROVAL`] it waits for approval; 1 when the policies or
//! the config cannot be read, 2 for a wrong command line.

use anyhow::Result;
use clap::{Args, Subcommand};
use std::path::PathBuf;

/// Exit status of `policy check`: the call is refused.
#[cfg_attr(not(feature = "policy"), allow(dead_code))]
pub const EXIT_FORBIDDEN: u8 = 6;
/// Exit status of `policy check`: the call waits for people's approval.
#[cfg_attr(not(feature = "policy"), allow(dead_code))]
pub const EXIT_APPROVAL: u8 = 7;

/// `mcp-tasks policy …`.
#[derive(Debug, Subcommand)]
pub enum PolicyCommand {
    /// What a call would meet: `mcp-tasks policy check --policies DIR --principal
    /// alice --tool deploy --args '{"env":"prod"}'`. Prints the outcome (permit,
    /// approval, forbid) and the deciding policies; exit status 0 permit, 6 forbid,
    /// 7 approval.
    Check(CheckArgs),
}

/// `policy check`'s flags.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The folder of *.cedar files (default: `[policy] dir` of --config).
    #[arg(long, value_name = "DIR")]
    pub policies: Option<PathBuf>,
    /// A server config file: its `[groups]` give the principal's groups, its
    /// `[[approval]]` rules apply after the policies permit, its `[policy] dir` is the
    /// default for --policies.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Who calls (the principal the server would see: the token's subject).
    #[arg(long)]
    pub principal: String,
    /// A group the principal belongs to, as an identity provider would give it
    /// (repeat for several); added to those `[groups]` of --config gives it.
    #[arg(long = "group", value_name = "GROUP")]
    pub groups: Vec<String>,
    /// The tool, by the name the agent sees (a gateway's upstream tool with its prefix
    /// or new name).
    #[arg(long)]
    pub tool: String,
    /// The call's arguments, a JSON object.
    #[arg(long, value_name = "JSON", default_value = "{}")]
    pub args: String,
    /// Print the decision as one JSON object.
    #[arg(long)]
    pub json: bool,
}

impl PolicyCommand {
    /// Runs the subcommand; a refused or held call is an [`super::exit::Exit`] with its
    /// status after the decision was printed.
    pub fn run(self) -> Result<()> {
        match self {
            PolicyCommand::Check(a) => check(a),
        }
    }
}

#[cfg(not(feature = "policy"))]
fn check(_: CheckArgs) -> Result<()> {
    Err(crate::features::missing(
        "`mcp-tasks policy check`",
        "policy",
    ))
}

#[cfg(feature = "policy")]
fn check(a: CheckArgs) -> Result<()> {
    use anyhow::Context;
    use mcp_tasks_server::approvals::{Approvals, Policies, Verdict};
    use serde_json::{json, Value};

    let file = match &a.config {
        Some(p) => crate::config::ConfigFile::load(p)?,
        None => crate::config::ConfigFile::default(),
    };
    let Some(dir) = a
        .policies
        .clone()
        .or_else(|| file.policy.as_ref().map(|p| p.dir.clone()))
    else {
        anyhow::bail!("name the folder of *.cedar files with --policies DIR (or a --config whose [policy] has dir)");
    };
    let args: Value = serde_json::from_str(&a.args).with_context(|| {
        format!(
            "--args '{}' is not JSON; give the arguments as an object, e.g. --args '{{\"env\":\"prod\"}}'",
            a.args
        )
    })?;
    let Value::Object(args) = args else {
        anyhow::bail!("--args must be a JSON object, e.g. --args '{{\"env\":\"prod\"}}'");
    };
    let rules = Approvals::new(file.approval.clone(), file.groups.clone())
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    // Without a config file the groups are unknown: an approval's quorum cannot be
    // checked against its approvers (the server checks it at start).
    let known = a.config.as_ref().map(|_| &file.groups);
    let policies = Policies::load_dir_with(&dir, known).map_err(|e| anyhow::anyhow!("{e}"))?;
    let mut groups = a.groups.clone();
    for g in rules.groups_of(&a.principal) {
        if !groups.contains(&g) {
            groups.push(g);
        }
    }
    let d = policies.decide(&a.principal, &groups, &a.tool, &args);
    // A permitted call still meets the file's [[approval]] rules.
    let toml_rule = (d.verdict == Verdict::Permit)
        .then(|| rules.rule_for(&a.tool, &args).cloned())
        .flatten();
    let (outcome, code) = match (&d.verdict, &toml_rule) {
        (Verdict::Forbid, _) => ("forbid", EXIT_FORBIDDEN),
        (Verdict::Approval, _) | (Verdict::Permit, Some(_)) => ("approval", EXIT_APPROVAL),
        (Verdict::Permit, None) => ("permit", super::exit::EXIT_OK),
    };
    let approval = d.approval.clone().or(toml_rule.clone()).map(|r| {
        json!({
            "by": if toml_rule.is_some() { format!("[[approval]] for tool '{}'", r.tool) } else { format!("policy {}", d.policies.join(", ")) },
            "message": r.message,
            "approvers": r.approvers,
            "quorum": r.required,
            "deadline": r.deadline.map(|d| humantime::format_duration(d).to_string()),
            "onTimeout": format!("{:?}", r.on_timeout).to_lowercase(),
            "escalateTo": r.escalate_to,
            "allowEdit": r.allow_edit,
        })
    });
    if a.json {
        let out = json!({
            "outcome": outcome,
            "policies": d.policies,
            "files": d.policies.iter().map(|id| policies.file_of(id)).collect::<Vec<_>>(),
            "reason": d.reason,
            "approval": approval,
            "principal": a.principal,
            "groups": groups,
            "tool": a.tool,
            "errors": d.errors,
        });
        println!("{out}");
    } else {
        let deciding = if d.policies.is_empty() {
            "(no policy permits it)".to_string()
        } else {
            d.policies
                .iter()
                .map(|id| match policies.file_of(id) {
                    Some(f) => format!("{id} ({f})"),
                    None => id.clone(),
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        println!("{outcome}: {} calling {}", a.principal, a.tool);
        println!("  decided by: {deciding}");
        println!("  {}", d.reason);
        if let Some(ap) = &approval {
            println!(
                "  approval: {} by {} (quorum {}{})",
                ap["by"].as_str().unwrap_or_default(),
                ap["approvers"]
                    .as_array()
                    .map(|a| a
                        .iter()
                        .filter_map(Value::as_str)
                        .collect::<Vec<_>>()
                        .join(", "))
                    .unwrap_or_default(),
                ap["quorum"],
                ap["deadline"]
                    .as_str()
                    .map(|d| format!(", deadline {d}"))
                    .unwrap_or_default()
            );
        }
        for e in &d.errors {
            println!("  not evaluated (ignored): {e}");
        }
    }
    match code {
        super::exit::EXIT_OK => Ok(()),
        c => Err(super::exit::Exit(c).into()),
    }
}

//! `[[upstream]]`: how to reach one MCP server and how its tools are offered.

use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::PathBuf;

use mcp_tasks_protocol::Secret;
use mcp_tasks_server::TaskSupport;

/// Most connections to one upstream by default: calls run one per connection, so
/// that a question or progress from the upstream belongs to exactly one call.
pub const DEFAULT_MAX_CONNECTIONS: usize = 4;

/// One upstream MCP server, as written in the TOML file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UpstreamConfig {
    /// A short name for messages and logs (`everything`); unique.
    pub name: String,
    /// A stdio server: the program and its arguments.
    #[serde(default)]
    pub command: Option<Vec<String>>,
    /// Environment variables for a stdio server (added to ours). Their values are
    /// secrets (API keys are passed this way): `Debug` prints `***` for them.
    #[serde(default)]
    pub env: BTreeMap<String, Secret<String>>,
    /// Working directory of a stdio server.
    #[serde(default)]
    pub cwd: Option<PathBuf>,
    /// A Streamable HTTP server: its MCP endpoint URL.
    #[serde(default)]
    pub url: Option<String>,
    /// Headers sent to an HTTP server with every request (a bearer token, an API
    /// key). Never logged, never shown in errors or task records: their values are
    /// secrets, whose `Debug` prints `***`.
    #[serde(default)]
    pub headers: BTreeMap<String, Secret<String>>,
    /// Prepended to every tool name of this upstream (default: none).
    #[serde(default)]
    pub prefix: Option<String>,
    /// Task support per tool (upstream name), overriding the default `optional`.
    #[serde(default)]
    pub task_support: BTreeMap<String, TaskSupportSetting>,
    /// Whether a call interrupted by a crash of mcp-tasks is run again on restart or
    /// takeover (default false: such a task fails with a message saying so). Only
    /// for tools that are safe to repeat.
    #[serde(default)]
    pub resumable: bool,
    /// Attempts and backoff of this upstream's resumable calls (`[upstream.retry]`):
    /// a takeover counts as an attempt.
    #[serde(default)]
    pub retry: Option<mcp_tasks_server::RetrySettings>,
    /// Most connections (processes, for stdio) kept to this upstream; calls beyond it
    /// wait for a free one.
    #[serde(default = "default_max_connections")]
    pub max_connections: usize,
}

fn default_max_connections() -> usize {
    DEFAULT_MAX_CONNECTIONS
}

/// `task_support` values in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TaskSupportSetting {
    /// Callable with or without a task.
    Optional,
    /// Only as a task.
    Required,
    /// Never as a task.
    Forbidden,
}

impl From<TaskSupportSetting> for TaskSupport {
    fn from(s: TaskSupportSetting) -> Self {
        match s {
            TaskSupportSetting::Optional => TaskSupport::Optional,
            TaskSupportSetting::Required => TaskSupport::Required,
            TaskSupportSetting::Forbidden => TaskSupport::Forbidden,
        }
    }
}

/// How to reach an upstream, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Endpoint {
    /// Spawn `program args…` and speak MCP on its stdio.
    Stdio {
        /// The program.
        program: String,
        /// Its arguments.
        args: Vec<String>,
    },
    /// A Streamable HTTP endpoint.
    Http(String),
}

/// Why an `[[upstream]]` entry cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// Neither or both of `command` and `url`.
    #[error("upstream '{0}': give exactly one of `command = [...]` (a stdio server) or `url = \"http://...\"` (a Streamable HTTP server)")]
    Endpoint(String),
    /// `command = []`.
    #[error("upstream '{0}': `command` is empty; give the program and its arguments")]
    EmptyCommand(String),
    /// Not an http(s) URL.
    #[error("upstream '{name}': url '{url}' is not an http:// or https:// URL")]
    Url {
        /// The upstream.
        name: String,
        /// The URL as given.
        url: String,
    },
    /// An empty or repeated name.
    #[error("upstream names must be unique and non-empty; '{0}' is not")]
    Name(String),
    /// `max_connections = 0`.
    #[error("upstream '{0}': max_connections must be at least 1")]
    MaxConnections(String),
    /// `[upstream.retry]` out of range.
    #[error("upstream '{name}': [upstream.retry]: {problem}")]
    Retry {
        /// The upstream.
        name: String,
        /// What is wrong.
        problem: String,
    },
    /// `[upstream.task_support]` names a tool the upstream does not list (checked when
    /// its tools are listed): a misspelt name would otherwise be silently ignored.
    #[error("upstream '{upstream}': [upstream.task_support] names `{name}`, which is not one of its tools; {hint}")]
    UnknownTool {
        /// The upstream.
        upstream: String,
        /// The name as written.
        name: String,
        /// What to write instead: the nearest tool name, or the tools there are.
        hint: String,
    },
    /// Two upstreams offer the same tool name.
    #[error("tool '{tool}' is offered by upstream '{first}' and by upstream '{second}'; give one of them a `prefix`")]
    Collision {
        /// The tool name as exposed.
        tool: String,
        /// The first upstream.
        first: String,
        /// The second upstream.
        second: String,
    },
    /// An upstream offers a tool named like one of the server's own task tools.
    #[error("upstream '{upstream}' offers a tool named '{tool}', which is the name of mcp-tasks' own task tool '{tool}' (offered to clients that speak no tasks); give the upstream a `prefix`")]
    TaskToolCollision {
        /// The tool name as exposed.
        tool: String,
        /// The upstream.
        upstream: String,
    },
}

impl UpstreamConfig {
    /// A stdio upstream running `command` (the `mcp-tasks wrap -- COMMAND` form).
    pub fn stdio(name: impl Into<String>, command: Vec<String>) -> Self {
        UpstreamConfig {
            name: name.into(),
            command: Some(command),
            env: BTreeMap::new(),
            cwd: None,
            url: None,
            headers: BTreeMap::new(),
            prefix: None,
            task_support: BTreeMap::new(),
            resumable: false,
            retry: None,
            max_connections: DEFAULT_MAX_CONNECTIONS,
        }
    }

    /// Checks the entry and says how to reach the upstream.
    ///
    /// # Errors
    /// A [`ConfigError`] naming the upstream and what to change.
    pub fn endpoint(&self) -> Result<Endpoint, ConfigError> {
        if self.max_connections == 0 {
            return Err(ConfigError::MaxConnections(self.name.clone()));
        }
        if let Some(retry) = &self.retry {
            retry.policy().map_err(|problem| ConfigError::Retry {
                name: self.name.clone(),
                problem,
            })?;
        }
        match (&self.command, &self.url) {
            (Some(command), None) => {
                let (program, args) = command
                    .split_first()
                    .ok_or_else(|| ConfigError::EmptyCommand(self.name.clone()))?;
                Ok(Endpoint::Stdio {
                    program: program.clone(),
                    args: args.to_vec(),
                })
            }
            (None, Some(url)) if url.starts_with("http://") || url.starts_with("https://") => {
                Ok(Endpoint::Http(url.clone()))
            }
            (None, Some(url)) => Err(ConfigError::Url {
                name: self.name.clone(),
                url: url.clone(),
            }),
            _ => Err(ConfigError::Endpoint(self.name.clone())),
        }
    }

    /// The name a tool of this upstream is offered under.
    pub fn exposed_name(&self, upstream_tool: &str) -> String {
        match &self.prefix {
            Some(p) => format!("{p}{upstream_tool}"),
            None => upstream_tool.to_string(),
        }
    }
}

impl UpstreamConfig {
    /// Checks the `task_support` names against the tools the upstream listed: each
    /// must be the upstream's own name of one of them (without the `prefix`).
    ///
    /// # Errors
    /// [`ConfigError::UnknownTool`] for the first name that is not, saying the
    /// nearest tool name (or that the prefix is to be left out).
    pub fn check_task_support<'a>(
        &self,
        tools: impl IntoIterator<Item = &'a str> + Clone,
    ) -> Result<(), ConfigError> {
        for name in self.task_support.keys() {
            if tools.clone().into_iter().any(|t| t == name) {
                continue;
            }
            let unprefixed = self
                .prefix
                .as_deref()
                .filter(|p| !p.is_empty())
                .and_then(|p| name.strip_prefix(p).map(|rest| (p, rest)))
                .filter(|(_, rest)| tools.clone().into_iter().any(|t| t == *rest));
            let hint = if let Some((prefix, rest)) = unprefixed {
                format!("task_support takes the upstream's own names, without the prefix `{prefix}`: write `{rest}`")
            } else if let Some(near) = nearest(name, tools.clone()) {
                format!("did you mean `{near}`?")
            } else {
                let all: Vec<String> = tools
                    .clone()
                    .into_iter()
                    .map(|t| format!("`{t}`"))
                    .collect();
                if all.is_empty() {
                    "the upstream lists no tools".to_string()
                } else {
                    format!("its tools: {}", all.join(", "))
                }
            };
            return Err(ConfigError::UnknownTool {
                upstream: self.name.clone(),
                name: name.clone(),
                hint,
            });
        }
        Ok(())
    }
}

/// The candidate closest to `word` when one is close enough to be what was meant
/// (Jaro-Winkler similarity of at least 0.7, as clap's own suggestions): the "did you
/// mean …?" of a misspelt tool name here, and of a misspelt config key in the binary.
pub fn nearest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    candidates
        .into_iter()
        .map(|c| (strsim::jaro_winkler(word, c), c))
        .filter(|(score, _)| *score >= 0.7)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}

/// Checks a set of upstreams together: each entry, and names unique.
///
/// # Errors
/// The first problem found.
pub fn check_all(upstreams: &[UpstreamConfig]) -> Result<(), ConfigError> {
    let mut seen = std::collections::HashSet::new();
    for u in upstreams {
        if u.name.trim().is_empty() || !seen.insert(u.name.as_str()) {
            return Err(ConfigError::Name(u.name.clone()));
        }
        u.endpoint()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> UpstreamConfig {
        toml::from_str(text).expect("parses")
    }

    #[test]
    fn an_entry_needs_exactly_one_endpoint() {
        let both = parse("name = 'x'\ncommand = ['a']\nurl = 'http://h/mcp'");
        assert_eq!(both.endpoint(), Err(ConfigError::Endpoint("x".into())));
        let neither = parse("name = 'x'");
        assert_eq!(neither.endpoint(), Err(ConfigError::Endpoint("x".into())));
        let empty = parse("name = 'x'\ncommand = []");
        assert_eq!(empty.endpoint(), Err(ConfigError::EmptyCommand("x".into())));
        let ftp = parse("name = 'x'\nurl = 'ftp://h'");
        assert!(matches!(ftp.endpoint(), Err(ConfigError::Url { .. })));
        let ok = parse("name = 'x'\ncommand = ['node', 's.js']\nprefix = 'x_'");
        assert_eq!(
            ok.endpoint(),
            Ok(Endpoint::Stdio {
                program: "node".into(),
                args: vec!["s.js".into()]
            })
        );
        assert_eq!(ok.exposed_name("echo"), "x_echo");
    }

    #[test]
    fn names_are_unique_and_settings_are_checked() {
        let a = parse("name = 'a'\ncommand = ['x']");
        assert_eq!(
            check_all(&[a.clone(), a.clone()]),
            Err(ConfigError::Name("a".into()))
        );
        let zero = parse("name = 'z'\ncommand = ['x']\nmax_connections = 0");
        assert_eq!(
            check_all(&[zero]),
            Err(ConfigError::MaxConnections("z".into()))
        );
        let unknown: Result<UpstreamConfig, _> = toml::from_str("name = 'a'\ncommnd = ['x']");
        assert!(unknown.is_err(), "a misspelt key is refused");
        let ts = parse("name = 'a'\ncommand = ['x']\n[task_support]\necho = 'required'");
        assert_eq!(ts.task_support["echo"], TaskSupportSetting::Required);
    }

    #[test]
    fn task_support_names_a_tool_of_the_upstream() {
        let tools = ["echo", "longRunningOperation", "add"];
        let ok =
            parse("name = 'a'\ncommand = ['x']\nprefix = 'ev_'\n[task_support]\necho = 'required'");
        assert_eq!(ok.check_task_support(tools), Ok(()));
        let said = |text: &str| {
            parse(text)
                .check_task_support(tools)
                .expect_err(text)
                .to_string()
        };
        let typo =
            said("name = 'a'\ncommand = ['x']\n[task_support]\nlongRunningOperaton = 'required'");
        assert!(
            typo.contains("`longRunningOperaton`")
                && typo.contains("did you mean `longRunningOperation`?"),
            "{typo}"
        );
        let prefixed = said(
            "name = 'a'\ncommand = ['x']\nprefix = 'ev_'\n[task_support]\nev_echo = 'forbidden'",
        );
        assert!(
            prefixed.contains("`ev_echo`")
                && prefixed.contains("without the prefix `ev_`: write `echo`"),
            "{prefixed}"
        );
        let far = said("name = 'a'\ncommand = ['x']\n[task_support]\nzzz = 'forbidden'");
        assert!(
            far.contains("its tools: `echo`, `longRunningOperation`, `add`"),
            "{far}"
        );
    }
}

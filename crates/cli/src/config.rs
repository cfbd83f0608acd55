//! The TOML configuration file (`--config tasks.toml`): server settings and command
//! tools. Flags and environment variables override the file; the file overrides the
//! built-in defaults.

use anyhow::{Context, Result};
use mcp_tasks_protocol::Secret;
use mcp_tasks_server::TaskSupport;
use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use crate::config_people::{EmailSection, PolicySection, SlackSection};

/// The whole file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    /// `[server]`.
    #[serde(default)]
    pub server: ServerSection,
    /// `[[tools]]`.
    #[serde(default)]
    pub tools: Vec<CommandToolConfig>,
    /// `[[upstream]]`: MCP servers whose tools are offered with task support (the
    /// gateway).
    #[serde(default)]
    pub upstream: Vec<UpstreamEntry>,
    /// `[board]`: the task board in the browser.
    #[serde(default)]
    pub board: BoardSection,
    /// `[[notify]]`: webhooks told when a task needs someone.
    #[serde(default)]
    pub notify: Vec<NotifyEntry>,
    /// `[[approval]]`: calls that wait for people's approval before their tool runs
    /// (see `docs/approvals.md`).
    #[serde(default)]
    pub approval: Vec<mcp_tasks_server::approvals::ApprovalRule>,
    /// `[groups]`: group name to members (principals), for approvers and assignees.
    #[serde(default)]
    pub groups: std::collections::BTreeMap<String, Vec<String>>,
    /// `[slack]`: questions posted to Slack, answered with its buttons.
    pub slack: Option<SlackSection>,
    /// `[oauth]`: MCP clients bring OAuth access tokens (docs/identity.md).
    pub oauth: Option<crate::config_identity::OAuthSection>,
    /// `[policy]`: Cedar policies every tools/call is authorized by (see
    /// `docs/approvals.md`).
    pub policy: Option<PolicySection>,
    /// `[email]`: mail to the people questions and approvals are assigned to (see
    /// `docs/email.md`).
    pub email: Option<EmailSection>,
    /// `[people]`: principal to email address, for `[email]`.
    #[serde(default)]
    // Read by `[email]` only.
    #[cfg_attr(not(feature = "email"), allow(dead_code))]
    pub people: std::collections::BTreeMap<String, String>,
}

/// One `[[upstream]]` entry: the gateway's configuration; in a build without the
/// `gateway` feature the table as written, kept only to refuse it by name
/// ([`crate::features::refuse_missing`]).
#[cfg(feature = "gateway")]
pub type UpstreamEntry = mcp_tasks_gateway::UpstreamConfig;
/// One `[[upstream]]` entry, as written (this build has no `gateway` feature).
#[cfg(not(feature = "gateway"))]
pub type UpstreamEntry = toml::Table;

/// `[board]`: the same settings as the board's `serve` flags.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BoardSection {
    /// Turn the board off (`--no-board`).
    #[serde(default)]
    // A build without the board has none to turn off.
    #[cfg_attr(not(feature = "board"), allow(dead_code))]
    pub disabled: bool,
    /// Principals who see and act on everyone's tasks.
    #[serde(default)]
    pub operators: Vec<String>,
    /// The address people reach this server at, for links.
    pub public_url: Option<String>,
    /// A file holding the key that signs board logins (shared by replicas).
    pub secret_file: Option<PathBuf>,
    /// Tasks may ask what their client cannot answer; people answer on the board.
    #[serde(default)]
    pub takes_questions: bool,
    /// How long a board login lasts (default 12h); a person removed at the identity
    /// provider keeps access at most this long.
    #[serde(default, with = "opt_duration")]
    // A build without the board has no logins.
    #[cfg_attr(not(feature = "board"), allow(dead_code))]
    pub session_ttl: Option<Duration>,
    /// `[board.oidc]`: people sign in with an OpenID Connect provider.
    pub oidc: Option<crate::config_identity::OidcSection>,
}

/// `[[notify]]`: one webhook.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
// Without the `board` feature it is parsed only to be refused by name.
#[cfg_attr(not(feature = "board"), allow(dead_code))]
pub struct NotifyEntry {
    /// A stable name (default: the URL).
    pub name: Option<String>,
    /// Where events are posted (a secret: for Slack the URL is the credential).
    pub url: Secret<String>,
    /// Events: input_required, failed, completed, cancelled (default: input_required
    /// and failed).
    #[serde(default)]
    pub on: Vec<String>,
    /// `json` (default) or `slack`.
    pub format: Option<String>,
    /// Extra request headers; their values are secrets (an `Authorization`).
    #[serde(default)]
    pub headers: std::collections::BTreeMap<String, Secret<String>>,
    /// A file of Standard Webhooks secrets (`whsec_…`, one per line, the current one
    /// first) that sign every delivery; relative to the config file's folder.
    pub secret_file: Option<PathBuf>,
    /// The same secrets written here instead (secrets: `Debug` prints `***`).
    #[serde(default)]
    pub secrets: Vec<Secret<String>>,
    /// Events of a waiting task carry signed one-time approve / reject links for its
    /// yes/no questions (needs `public_url` under `[board]`).
    #[serde(default)]
    pub answer_links: bool,
    /// The principal the links answer as.
    pub assignee: Option<String>,
    /// How long a link lives when its question has no deadline (default 24h).
    #[serde(default, with = "opt_duration")]
    pub answer_link_ttl: Option<Duration>,
}

/// `[server]`: the same settings as the `serve` flags, under the flag's name with `_`
/// for `-`. Paths are relative to the config file's folder.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerSection {
    /// Address to listen on.
    pub listen: Option<String>,
    /// Database URL; a relative `sqlite://` path is relative to the file's folder. A
    /// secret, as it may hold a password.
    pub database: Option<Secret<String>>,
    /// Default ttl (e.g. "1h").
    #[serde(default, with = "opt_duration")]
    pub default_ttl: Option<Duration>,
    /// Maximum ttl.
    #[serde(default, with = "opt_duration")]
    pub max_ttl: Option<Duration>,
    /// Minimum ttl (shorter requests are raised to it).
    #[serde(default, with = "opt_duration")]
    pub min_ttl: Option<Duration>,
    /// Suggested poll interval.
    #[serde(default, with = "opt_duration")]
    pub poll_interval: Option<Duration>,
    /// Grace period before cancelled work is aborted.
    #[serde(default, with = "opt_duration")]
    pub cancel_grace: Option<Duration>,
    /// Extension wire: how long a call may run before it becomes a task.
    #[serde(default, with = "opt_duration")]
    pub task_after: Option<Duration>,
    /// How long a plain call of an optional task tool holds its connection before
    /// its client gets a handle to the task ("0s": off).
    #[serde(default, with = "opt_duration")]
    pub sync_budget: Option<Duration>,
    /// Who is offered the task tools: "auto", "always" or "never".
    pub task_tools: Option<mcp_tasks_server::TaskTools>,
    /// Longest gap between progress notifications of a plain call with a progressToken.
    #[serde(default, with = "opt_duration")]
    pub progress_interval: Option<Duration>,
    /// Time limit for a plain call's unanswered question (tasks wait their TTL).
    #[serde(default, with = "opt_duration")]
    pub input_timeout: Option<Duration>,
    /// Cap on outstanding input requests per task.
    pub max_input_requests: Option<usize>,
    /// Largest request body in bytes.
    pub max_body_bytes: Option<usize>,
    /// Idle time after which an HTTP session is forgotten ("0s": never).
    #[serde(default, with = "opt_duration")]
    pub session_idle_timeout: Option<Duration>,
    /// Most HTTP sessions held at once.
    pub max_sessions: Option<usize>,
    /// Most HTTP connections open at once.
    pub max_connections: Option<usize>,
    /// Time allowed for a request's headers.
    #[serde(default, with = "opt_duration")]
    pub http_header_timeout: Option<Duration>,
    /// Time allowed for a request's body.
    #[serde(default, with = "opt_duration")]
    pub http_body_timeout: Option<Duration>,
    /// Time an HTTP connection may stay open with no request in progress.
    #[serde(default, with = "opt_duration")]
    pub http_idle_timeout: Option<Duration>,
    /// Interval of SSE keep-alive comments.
    #[serde(default, with = "opt_duration")]
    pub sse_keep_alive: Option<Duration>,
    /// Extra allowed `Origin` values.
    #[serde(default)]
    pub allowed_origins: Vec<String>,
    /// Extra allowed `Host` names.
    #[serde(default)]
    pub allowed_hosts: Vec<String>,
    /// Client-hosted tasks (2025-11-25) for input requests.
    #[serde(default)]
    pub client_tasks: bool,
    /// Alive window of a server on a shared database (SQLite file, PostgreSQL).
    #[serde(default, with = "opt_duration")]
    pub lease_ttl: Option<Duration>,
    /// Interval of the server's heartbeat on a shared database.
    #[serde(default, with = "opt_duration")]
    pub heartbeat: Option<Duration>,
    /// How long a shutdown lets tasks that cannot be resumed elsewhere finish.
    #[serde(default, with = "opt_duration")]
    pub drain_timeout: Option<Duration>,
    /// Time limit of one poll or cancel of an external job.
    #[serde(default, with = "opt_duration")]
    pub external_call_timeout: Option<Duration>,
    /// Quota: unfinished tasks per principal.
    pub max_tasks_per_principal: Option<usize>,
    /// Quota: unfinished tasks per session without authentication.
    pub max_tasks_per_session: Option<usize>,
    /// Quota: unfinished tasks on the server.
    pub max_active_tasks: Option<usize>,
    /// Largest stored result in bytes.
    pub max_result_bytes: Option<usize>,
    /// Tool arguments in audit events.
    #[serde(default)]
    pub audit_arguments: bool,
    /// Bearer tokens file (TOML: token = subject).
    pub auth_tokens: Option<PathBuf>,
    /// JWKS file for JWT bearer tokens.
    pub jwt_jwks: Option<PathBuf>,
    /// Expected JWT issuer.
    pub jwt_issuer: Option<String>,
    /// Expected JWT audience.
    pub jwt_audience: Option<String>,
    /// `required` or `optional`.
    pub auth: Option<AuthRequirement>,
    /// Serve a non-loopback address without authentication.
    #[serde(default)]
    pub allow_unauthenticated_remote: bool,
}

/// Whether requests without a bearer token are refused (`required`) or served as
/// anonymous sessions (`optional`), once tokens are configured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AuthRequirement {
    /// 401 without a valid token.
    Required,
    /// No token: an anonymous session; a bad token is still refused.
    Optional,
}

/// `[[tools]]`: a program run with arguments filled from the call's arguments.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
// Without the `command-tools` feature it is parsed only to be refused by name.
#[cfg_attr(not(feature = "command-tools"), allow(dead_code))]
pub struct CommandToolConfig {
    /// Tool name.
    pub name: String,
    /// What the tool does (shown to the model).
    #[serde(default)]
    pub description: String,
    /// Program and arguments, run without a shell; `{name}` in an element is replaced
    /// by argument `name` (see [`crate::command_template::expand`] for the rules that keep
    /// a value from being read as an option).
    pub command: Vec<String>,
    /// JSON Schema of the arguments (an object schema). Default: no arguments.
    #[serde(default)]
    pub input_schema: Option<toml::Value>,
    /// `forbidden`, `optional` (default) or `required`.
    #[serde(default = "default_support")]
    pub task_support: TaskSupport,
    /// Working directory (relative to the config file).
    #[serde(default)]
    pub cwd: Option<PathBuf>,
    /// Extra environment variables.
    #[serde(default)]
    pub env: std::collections::BTreeMap<String, String>,
    /// Safe to run again from the start if the replica running it dies (with
    /// PostgreSQL replicas); otherwise such a task is failed.
    #[serde(default)]
    pub resumable: bool,
    /// Attempts and backoff of this tool's resumable tasks (`[tools.retry]`); a
    /// takeover counts as an attempt.
    #[serde(default)]
    pub retry: Option<mcp_tasks_server::RetrySettings>,
    /// How long this tool's tasks are kept when the client asks for no TTL (`"3d"`: an
    /// approval that may wait days), within the server's `max_ttl`.
    #[serde(default, with = "opt_duration")]
    pub ttl: Option<Duration>,
}

fn default_support() -> TaskSupport {
    TaskSupport::Optional
}

#[cfg(feature = "command-tools")]
impl CommandToolConfig {
    /// The input schema as JSON.
    pub fn schema_json(&self) -> Result<serde_json::Value> {
        match &self.input_schema {
            None => Ok(serde_json::json!({ "type": "object", "properties": {} })),
            Some(v) => serde_json::to_value(v)
                .with_context(|| format!("tool '{}': input_schema", self.name)),
        }
    }
}

impl ServerSection {
    /// Refuses combinations that the flags' parser refuses too.
    fn check(&self) -> Result<()> {
        if self.auth_tokens.is_some() && self.jwt_jwks.is_some() {
            anyhow::bail!("auth_tokens and jwt_jwks exclude each other: choose one way to check bearer tokens");
        }
        if self.jwt_jwks.is_some() && (self.jwt_issuer.is_none() || self.jwt_audience.is_none()) {
            anyhow::bail!("jwt_jwks needs jwt_issuer and jwt_audience: tokens are only accepted for the expected issuer and audience");
        }
        Ok(())
    }
}

impl ConfigFile {
    /// The optional sections this file uses, for a build to refuse those it lacks.
    /// `[board]` turning the board off (`disabled = true`, alone) asks for nothing.
    pub fn uses(&self) -> crate::features::Uses {
        crate::features::Uses {
            upstream: !self.upstream.is_empty(),
            tools: !self.tools.is_empty(),
            board: !self.board.operators.is_empty()
                || self.board.public_url.is_some()
                || self.board.secret_file.is_some()
                || self.board.takes_questions
                || self.board.session_ttl.is_some(),
            notify: !self.notify.is_empty(),
            slack: self.slack.is_some(),
            oidc: self.board.oidc.is_some(),
            oauth: self.oauth.is_some(),
            policy: self.policy.is_some(),
            email: self.email.is_some(),
        }
    }

    /// Parses the text of a file, nothing resolved or checked beyond its shape. An
    /// unknown key is refused, named with its table and the nearest valid key: a
    /// misspelt setting must not be silently ignored.
    ///
    /// # Errors
    /// Where the text is wrong and how, with the line.
    pub fn parse(text: &str) -> Result<Self, String> {
        toml::from_str(text).map_err(|e| crate::suggest::explain_toml_error(text, &e))
    }

    /// Reads and parses a file; relative paths in it (the `sqlite://` database, token
    /// files, tool `cwd`s) are resolved against its folder, and every tool's command
    /// template is checked against its input schema.
    pub fn load(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("reading config file {}", path.display()))?;
        let mut cfg = ConfigFile::parse(&text)
            .map_err(|e| anyhow::anyhow!("config file {}, {e}", path.display()))?;
        crate::features::refuse_missing(cfg.uses(), crate::features::Built::THIS)
            .with_context(|| format!("config file {}", path.display()))?;
        let base = path.parent().unwrap_or(Path::new("."));
        let server = &mut cfg.server;
        if let Some(db) = &server.database {
            server.database = Some(Secret::new(sqlite_relative_to(db.expose(), base)));
        }
        for file in [&mut server.auth_tokens, &mut server.jwt_jwks]
            .into_iter()
            .flatten()
        {
            if file.is_relative() {
                *file = base.join(&*file);
            }
        }
        server
            .check()
            .with_context(|| format!("[server] in {}", path.display()))?;
        if let Some(secret) = &cfg.board.secret_file {
            if secret.is_relative() {
                cfg.board.secret_file = Some(base.join(secret));
            }
        }
        if let Some(oidc) = &mut cfg.board.oidc {
            oidc.secret.resolve(base);
        }
        if let Some(oauth) = &mut cfg.oauth {
            oauth.secret.resolve(base);
        }
        if let Some(file) = cfg.email.as_mut().and_then(|e| e.password_file.as_mut()) {
            if file.is_relative() {
                *file = base.join(&*file);
            }
        }
        if let Some(policy) = &mut cfg.policy {
            if policy.dir.is_relative() {
                policy.dir = base.join(&policy.dir);
            }
        }
        if let Some(slack) = &mut cfg.slack {
            for file in [&mut slack.signing_secret_file, &mut slack.bot_token_file] {
                if file.is_relative() {
                    *file = base.join(&*file);
                }
            }
        }
        for n in &mut cfg.notify {
            if let Some(file) = &n.secret_file {
                if file.is_relative() {
                    n.secret_file = Some(base.join(file));
                }
            }
        }
        // Without the feature the sections below were refused above.
        #[cfg(feature = "gateway")]
        {
            for u in &mut cfg.upstream {
                if let Some(cwd) = &u.cwd {
                    if cwd.is_relative() {
                        u.cwd = Some(base.join(cwd));
                    }
                }
            }
            mcp_tasks_gateway::check_all(&cfg.upstream)
                .map_err(|e| anyhow::anyhow!("[[upstream]] in {}: {e}", path.display()))?;
        }
        #[cfg(feature = "command-tools")]
        for t in &mut cfg.tools {
            if t.command.is_empty() {
                anyhow::bail!(
                    "tool '{}' in {}: 'command' must name a program",
                    t.name,
                    path.display()
                );
            }
            let schema = t
                .schema_json()
                .with_context(|| format!("in {}", path.display()))?;
            crate::command_template::check(&t.command, &schema)
                .map_err(|e| anyhow::anyhow!("tool '{}' in {}: {e}", t.name, path.display()))?;
            if let Some(cwd) = &t.cwd {
                if cwd.is_relative() {
                    t.cwd = Some(base.join(cwd));
                }
            }
        }
        Ok(cfg)
    }
}

/// A `sqlite:` URL whose path is relative, made relative to `base` (the config file's
/// folder); absolute paths, in-memory databases and other URLs are returned unchanged.
fn sqlite_relative_to(url: &str, base: &Path) -> String {
    let Some(rest) = url
        .strip_prefix("sqlite://")
        .or_else(|| url.strip_prefix("sqlite:"))
    else {
        return url.to_string();
    };
    let (file, query) = match rest.split_once('?') {
        Some((f, q)) => (f, Some(q)),
        None => (rest, None),
    };
    let in_memory = file.is_empty() || file.starts_with(":memory:") || rest.contains("mode=memory");
    if in_memory || Path::new(file).is_absolute() {
        return url.to_string();
    }
    let relative: PathBuf = Path::new(file)
        .components()
        .filter(|c| !matches!(c, std::path::Component::CurDir))
        .collect();
    let joined = if base.as_os_str().is_empty() {
        Path::new(".").join(relative)
    } else {
        base.join(relative)
    };
    match query {
        Some(q) => format!("sqlite://{}?{q}", joined.display()),
        None => format!("sqlite://{}", joined.display()),
    }
}

/// Parses "90s", "10m", "1h 30m", "500ms".
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    humantime::parse_duration(s)
        .map_err(|e| format!("'{s}' is not a duration like 30s, 10m or 1h: {e}"))
}

mod opt_duration {
    use serde::{Deserialize, Deserializer};
    use std::time::Duration;

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        let s: Option<String> = Option::deserialize(d)?;
        s.map(|s| super::parse_duration(&s).map_err(serde::de::Error::custom))
            .transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn example_config_parses() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/tasks.toml");
        let cfg = ConfigFile::load(&path).expect("examples/tasks.toml parses");
        assert!(!cfg.tools.is_empty());
        for t in &cfg.tools {
            t.schema_json().expect("schema converts");
        }
    }

    #[test]
    fn unknown_keys_are_named_with_their_table_and_the_nearest_key() {
        for (text, says) in [
            (
                "[server]\nlisten = 'x'\npol_interval = '1s'\n",
                "line 3: unknown key `pol_interval` in [server]; did you mean `poll_interval`?",
            ),
            (
                "[sever]\nlisten = 'x'\n",
                "line 1: unknown key `sever` at the top level; did you mean `server`?",
            ),
            (
                "[[upstream]]\nname = 'a'\ncomand = ['x']\n",
                "unknown key `comand` in [[upstream]]; did you mean `command`?",
            ),
            (
                "[[tools]]\nname = 't'\ncommand = ['x']\ntask_suport = 'required'\n",
                "unknown key `task_suport` in [[tools]]; did you mean `task_support`?",
            ),
            (
                "[board]\noperator = ['a']\n",
                "unknown key `operator` in [board]; did you mean `operators`?",
            ),
            (
                "[[notify]]\nurl = 'http://h'\nheader = {}\n",
                "unknown key `header` in [[notify]]; did you mean `headers`?",
            ),
            (
                "[server]\nauth = 'requried'\n",
                "unknown variant `requried`; did you mean `required`?",
            ),
            (
                "[server]\nxyzzy = 1\n",
                "unknown key `xyzzy` in [server]; valid keys: `listen`, `database`",
            ),
        ] {
            let err = ConfigFile::parse(text).expect_err(text);
            assert!(err.contains(says), "{text}: {err}");
        }
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("tasks.toml");
        std::fs::write(&path, "[server]\nmax_tll = '1h'\n").expect("write");
        let err = format!("{:#}", ConfigFile::load(&path).expect_err("refused"));
        assert!(
            err.contains("tasks.toml") && err.contains("did you mean `max_ttl`?"),
            "{err}"
        );
    }

    #[test]
    fn a_relative_sqlite_database_is_relative_to_the_file() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("tasks.toml");
        let base = dir.path().display().to_string();
        for (given, expected) in [
            ("sqlite://./x.db", format!("sqlite://{base}/x.db")),
            ("sqlite:data/x.db", format!("sqlite://{base}/data/x.db")),
            (
                "sqlite://x.db?mode=rwc",
                format!("sqlite://{base}/x.db?mode=rwc"),
            ),
            ("sqlite:///abs/x.db", "sqlite:///abs/x.db".to_string()),
            ("sqlite::memory:", "sqlite::memory:".to_string()),
            ("memory:", "memory:".to_string()),
            ("postgres://u@h/db", "postgres://u@h/db".to_string()),
        ] {
            std::fs::write(&path, format!("[server]\ndatabase = \"{given}\"\n")).expect("write");
            let cfg = ConfigFile::load(&path).expect("loads");
            assert_eq!(
                cfg.server.database.as_ref().map(|d| d.expose().as_str()),
                Some(expected.as_str()),
                "{given}"
            );
        }
        // A file named without a folder: relative to the working directory, as before.
        assert_eq!(
            sqlite_relative_to("sqlite://./x.db", Path::new("")),
            "sqlite://./x.db"
        );
    }

    #[test]
    fn an_unknown_placeholder_is_refused_when_the_file_is_loaded() {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("tasks.toml");
        std::fs::write(
            &path,
            "[[tools]]\nname = \"t\"\ncommand = [\"ls\", \"--\", \"{nme}\"]\n\
             input_schema = { type = \"object\", properties = { name = { type = \"string\" } } }\n",
        )
        .expect("write");
        let err = format!("{:#}", ConfigFile::load(&path).expect_err("refused"));
        assert!(
            err.contains("tool 't'") && err.contains("{nme}") && err.contains("name"),
            "{err}"
        );
    }

    #[test]
    fn durations_parse() {
        assert_eq!(parse_duration("10m"), Ok(Duration::from_secs(600)));
        assert!(parse_duration("ten").is_err());
    }
}

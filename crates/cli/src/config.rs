//! The TOML configuration file (`--config tasks.toml`): server settings and command
//! tools. Flags and environment variables override the file; the file overrides the
//! built-in defaults.

use anyhow::{Context, Result};
use mcp_tasks_server::TaskSupport;
use serde::Deserialize;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Duration;

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
}

/// `[server]`: the same settings as the `serve` flags.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerSection {
    /// Address to listen on.
    pub listen: Option<String>,
    /// Database URL.
    pub database: Option<String>,
    /// Default ttl (e.g. "1h").
    #[serde(default, with = "opt_duration")]
    pub default_ttl: Option<Duration>,
    /// Maximum ttl.
    #[serde(default, with = "opt_duration")]
    pub max_ttl: Option<Duration>,
    /// Suggested poll interval.
    #[serde(default, with = "opt_duration")]
    pub poll_interval: Option<Duration>,
    /// Grace period before cancelled work is aborted.
    #[serde(default, with = "opt_duration")]
    pub cancel_grace: Option<Duration>,
    /// Time limit for an unanswered input request.
    #[serde(default, with = "opt_duration")]
    pub input_timeout: Option<Duration>,
    /// Cap on outstanding input requests per task.
    pub max_input_requests: Option<usize>,
    /// Largest request body in bytes.
    pub max_body_bytes: Option<usize>,
    /// Extra allowed `Origin` values.
    #[serde(default)]
    pub allowed_origins: Vec<String>,
}

/// `[[tools]]`: a program run with arguments filled from the call's arguments.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CommandToolConfig {
    /// Tool name.
    pub name: String,
    /// What the tool does (shown to the model).
    #[serde(default)]
    pub description: String,
    /// Program and arguments; `{name}` in an element is replaced by argument `name`.
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
}

fn default_support() -> TaskSupport {
    TaskSupport::Optional
}

impl CommandToolConfig {
    /// The input schema as JSON.
    pub fn schema_json(&self) -> Result<Value> {
        match &self.input_schema {
            None => Ok(serde_json::json!({ "type": "object", "properties": {} })),
            Some(v) => serde_json::to_value(v)
                .with_context(|| format!("tool '{}': input_schema", self.name)),
        }
    }
}

impl ConfigFile {
    /// Reads and parses a file; relative tool `cwd`s are resolved against its folder.
    pub fn load(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("reading config file {}", path.display()))?;
        let mut cfg: ConfigFile = toml::from_str(&text)
            .with_context(|| format!("parsing config file {}", path.display()))?;
        let base = path.parent().unwrap_or(Path::new("."));
        for t in &mut cfg.tools {
            if t.command.is_empty() {
                anyhow::bail!(
                    "tool '{}' in {}: 'command' must name a program",
                    t.name,
                    path.display()
                );
            }
            if let Some(cwd) = &t.cwd {
                if cwd.is_relative() {
                    t.cwd = Some(base.join(cwd));
                }
            }
        }
        Ok(cfg)
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
    fn unknown_keys_are_rejected() {
        let r: Result<ConfigFile, _> = toml::from_str("[server]\nlisten_on = 'x'\n");
        assert!(r.is_err());
    }

    #[test]
    fn durations_parse() {
        assert_eq!(parse_duration("10m"), Ok(Duration::from_secs(600)));
        assert!(parse_duration("ten").is_err());
    }
}

//! [`RetrySettings`]: a tool's retry policy as configuration files write it (the
//! `retry` table of a command tool or an upstream in TOML), with durations as people
//! write them (`"2s"`, `"5m"`).
//!
//! ```toml
//! [tools.retry]
//! max_attempts = 5
//! initial_backoff = "2s"
//! factor = 2.0
//! max_backoff = "1m"
//! jitter = 0.2
//! ```

use mcp_tasks_engine::RetryPolicy;
use serde::{Deserialize, Deserializer};
use std::time::Duration;

/// A retry policy read from a configuration file; every field is optional and falls
/// back to [`RetryPolicy::default`].
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RetrySettings {
    /// Most attempts in all, the first included (takeovers count).
    #[serde(default)]
    pub max_attempts: Option<u32>,
    /// Wait before the second attempt (`"1s"`).
    #[serde(default, deserialize_with = "duration")]
    pub initial_backoff: Option<Duration>,
    /// How much each wait grows over the previous one.
    #[serde(default)]
    pub factor: Option<f64>,
    /// Longest wait (`"5m"`).
    #[serde(default, deserialize_with = "duration")]
    pub max_backoff: Option<Duration>,
    /// Fraction (0 to 1) by which a wait moves at random.
    #[serde(default)]
    pub jitter: Option<f64>,
}

impl RetrySettings {
    /// The policy these settings give, checked.
    ///
    /// # Errors
    /// A message naming the setting that is out of range (see [`RetryPolicy::check`]).
    pub fn policy(&self) -> Result<RetryPolicy, String> {
        let d = RetryPolicy::default();
        let policy = RetryPolicy {
            max_attempts: self.max_attempts.unwrap_or(d.max_attempts),
            initial_backoff: self.initial_backoff.unwrap_or(d.initial_backoff),
            factor: self.factor.unwrap_or(d.factor),
            max_backoff: self.max_backoff.unwrap_or(d.max_backoff),
            jitter: self.jitter.unwrap_or(d.jitter),
        };
        policy.check()?;
        Ok(policy)
    }
}

fn duration<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
    let text: Option<String> = Option::deserialize(d)?;
    text.map(|t| {
        humantime::parse_duration(&t).map_err(|e| {
            serde::de::Error::custom(format!(
                "'{t}' is not a duration ({e}); write it like \"500ms\", \"2s\" or \"5m\""
            ))
        })
    })
    .transpose()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_fill_in_the_defaults_and_are_checked() {
        let s: RetrySettings = serde_json::from_value(serde_json::json!({
            "max_attempts": 4, "initial_backoff": "250ms"
        }))
        .unwrap();
        let p = s.policy().unwrap();
        assert_eq!(p.max_attempts, 4);
        assert_eq!(p.initial_backoff, Duration::from_millis(250));
        assert_eq!(p.max_backoff, RetryPolicy::default().max_backoff);
        let bad: RetrySettings =
            serde_json::from_value(serde_json::json!({"jitter": 3.0})).unwrap();
        assert!(bad.policy().unwrap_err().contains("jitter"));
        let wrong =
            serde_json::from_value::<RetrySettings>(serde_json::json!({"initial_backoff": "soon"}));
        assert!(wrong.unwrap_err().to_string().contains("not a duration"));
    }
}

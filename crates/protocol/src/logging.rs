//! Logging (`logging/setLevel`, `notifications/message`): the eight syslog severities
//! MCP uses, ordered so that "at or above the level the client set" is a comparison.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// A log message's severity, least severe first (RFC 5424 order, reversed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LoggingLevel {
    /// Detailed information for debugging.
    Debug,
    /// Normal operation.
    Info,
    /// Normal but significant.
    Notice,
    /// Something may be wrong.
    Warning,
    /// Something failed.
    Error,
    /// A component failed.
    Critical,
    /// Action must be taken now.
    Alert,
    /// The system is unusable.
    Emergency,
}

impl LoggingLevel {
    /// Every level, least severe first.
    pub const ALL: [LoggingLevel; 8] = [
        LoggingLevel::Debug,
        LoggingLevel::Info,
        LoggingLevel::Notice,
        LoggingLevel::Warning,
        LoggingLevel::Error,
        LoggingLevel::Critical,
        LoggingLevel::Alert,
        LoggingLevel::Emergency,
    ];

    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            LoggingLevel::Debug => "debug",
            LoggingLevel::Info => "info",
            LoggingLevel::Notice => "notice",
            LoggingLevel::Warning => "warning",
            LoggingLevel::Error => "error",
            LoggingLevel::Critical => "critical",
            LoggingLevel::Alert => "alert",
            LoggingLevel::Emergency => "emergency",
        }
    }
}

impl fmt::Display for LoggingLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for LoggingLevel {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        LoggingLevel::ALL
            .into_iter()
            .find(|l| l.as_str() == s)
            .ok_or_else(|| {
                let all: Vec<&str> = LoggingLevel::ALL.iter().map(|l| l.as_str()).collect();
                format!("unknown logging level '{s}'; one of: {}", all.join(", "))
            })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn levels_order_by_severity_and_round_trip() {
        assert!(LoggingLevel::Debug < LoggingLevel::Info);
        assert!(LoggingLevel::Warning < LoggingLevel::Emergency);
        for level in LoggingLevel::ALL {
            assert_eq!(level.as_str().parse::<LoggingLevel>(), Ok(level));
            assert_eq!(serde_json::json!(level), serde_json::json!(level.as_str()));
        }
        let err = "loud".parse::<LoggingLevel>().unwrap_err();
        assert!(err.contains("debug, info"), "{err}");
    }
}

//! The config file's sections about people and the rules for them: `[slack]`,
//! `[email]` (with `[people]`, a plain table in [`crate::config::ConfigFile`]) and
//! `[policy]`. Each is parsed in every build, and refused by name in one without its
//! feature ([`crate::features::refuse_missing`]).

use serde::Deserialize;
use std::path::PathBuf;

/// `[slack]`: the Slack app (see docs/slack.md). File paths are relative to the config
/// file's folder.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
// Without the `board` feature it is parsed only to be refused by name.
#[cfg_attr(not(feature = "board"), allow(dead_code))]
pub struct SlackSection {
    /// A file holding the app's Signing Secret.
    pub signing_secret_file: PathBuf,
    /// A file holding the bot's OAuth token (`xoxb-…`).
    pub bot_token_file: PathBuf,
    /// The channel questions are posted to (an id, or a name the bot is in).
    pub channel: String,
    /// Slack user ids and the principal each answers as.
    #[serde(default)]
    pub users: std::collections::BTreeMap<String, String>,
    /// The Web API's address (default `https://slack.com/api`).
    pub api_base_url: Option<String>,
}

/// `[policy]`: where the Cedar policies are. The path is relative to the config file's
/// folder.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
// Without the `policy` feature it is parsed only to be refused by name.
#[cfg_attr(not(feature = "policy"), allow(dead_code))]
pub struct PolicySection {
    /// A folder of `*.cedar` files, all of which are read.
    pub dir: PathBuf,
}

/// `[email]`: the SMTP server mails go through. The password file's path is relative
/// to the config file's folder.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
// Without the `email` feature it is parsed only to be refused by name.
#[cfg_attr(not(feature = "email"), allow(dead_code))]
pub struct EmailSection {
    /// The SMTP server's host name.
    pub host: String,
    /// Its port; default by `tls`: 465 implicit, 587 starttls, 25 none.
    pub port: Option<u16>,
    /// `implicit` (default), `starttls` or `none`.
    #[serde(default)]
    pub tls: Option<String>,
    /// The user to log in as.
    pub user: Option<String>,
    /// A file holding the password.
    pub password_file: Option<PathBuf>,
    /// An environment variable holding the password.
    pub password_env: Option<String>,
    /// The `From` mailbox: `"mcp-tasks <tasks@example.com>"`.
    pub from: String,
}

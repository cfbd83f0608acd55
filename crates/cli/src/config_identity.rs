//! The identity sections of the config file: `[board.oidc]` (people sign in to the
//! board with an OpenID Connect provider) and `[oauth]` (MCP clients bring OAuth
//! access tokens). Parsed in every build; a build without the `oidc` feature refuses
//! them by name. See docs/identity.md.

use serde::Deserialize;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Durations written as "30s", "10m" (the config file's other durations use the same
/// words; kept here so that this module does not reach back into `config`).
mod opt_duration {
    use serde::{Deserialize, Deserializer};
    use std::time::Duration;

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        let s: Option<String> = Option::deserialize(d)?;
        s.map(|s| {
            humantime::parse_duration(&s).map_err(|e| {
                serde::de::Error::custom(format!(
                    "'{s}' is not a duration like 30s, 10m or 1h: {e}"
                ))
            })
        })
        .transpose()
    }
}

/// A client secret: from a file (relative to the config file) or an environment
/// variable, never written in the config itself.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SecretSource {
    /// A file holding the secret.
    pub client_secret_file: Option<PathBuf>,
    /// An environment variable holding the secret.
    pub client_secret_env: Option<String>,
}

impl SecretSource {
    /// Resolves a relative file against the config file's folder.
    pub fn resolve(&mut self, base: &Path) {
        if let Some(file) = &self.client_secret_file {
            if file.is_relative() {
                self.client_secret_file = Some(base.join(file));
            }
        }
    }

    /// The secret, if one is configured.
    ///
    /// # Errors
    /// The file cannot be read or is empty, the variable is unset or empty; the message
    /// names `section` and the source, never the secret.
    // Read only by the `oidc` feature's code.
    #[cfg_attr(not(feature = "oidc"), allow(dead_code))]
    pub fn read(
        &self,
        section: &str,
    ) -> anyhow::Result<Option<mcp_tasks_protocol::Secret<String>>> {
        let text = match (&self.client_secret_file, &self.client_secret_env) {
            (Some(_), Some(_)) => {
                anyhow::bail!("{section}: give client_secret_file or client_secret_env, not both")
            }
            (Some(file), None) => std::fs::read_to_string(file).map_err(|e| {
                anyhow::anyhow!(
                    "{section}: reading client_secret_file {}: {e}",
                    file.display()
                )
            })?,
            (None, Some(var)) => std::env::var(var).map_err(|_| {
                anyhow::anyhow!(
                    "{section}: the environment variable {var} (client_secret_env) is not set"
                )
            })?,
            (None, None) => return Ok(None),
        };
        let text = text.trim().to_string();
        if text.is_empty() {
            anyhow::bail!("{section}: the client secret is empty");
        }
        Ok(Some(mcp_tasks_protocol::Secret::new(text)))
    }
}

/// `[board.oidc]`: the identity provider people sign in to the board with.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(not(feature = "oidc"), allow(dead_code))]
pub struct OidcSection {
    /// The provider's name on the login page ("Sign in with NAME").
    pub name: Option<String>,
    /// The issuer URL (its `/.well-known/openid-configuration` names the rest).
    pub issuer: String,
    /// The board's client id.
    pub client_id: String,
    /// The client secret's source (none: a public client, PKCE only).
    #[serde(flatten)]
    pub secret: SecretSource,
    /// `client_secret_basic` (default) or `client_secret_post`.
    pub token_endpoint_auth_method: Option<String>,
    /// Scopes asked for (default `openid email profile`; `openid` is always added).
    #[serde(default)]
    pub scopes: Vec<String>,
    /// The claim naming the principal (default `sub`).
    pub principal_claim: Option<String>,
    /// The claim holding groups (default `groups`; a dotted path reaches into objects).
    pub groups_claim: Option<String>,
    /// Whether the login page also takes a pasted token (default true).
    pub token_login: Option<bool>,
    /// Clock skew allowed on the ID token (default 60s).
    #[serde(default, with = "opt_duration")]
    pub leeway: Option<Duration>,
    /// How long a sign-in is trusted before the board asks the provider again,
    /// silently (default 10m; "0s": not before `session_ttl`). The groups are read
    /// again then, and a person the provider no longer signs in is sent to sign in.
    #[serde(default, with = "opt_duration")]
    pub refresh_after: Option<Duration>,
}

/// `[oauth]`: this server as an OAuth protected resource (the MCP authorization spec).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
#[cfg_attr(not(feature = "oidc"), allow(dead_code))]
pub struct OAuthSection {
    /// The MCP endpoint's canonical URI (`https://tasks.example.com/mcp`): the audience
    /// tokens must be minted for.
    pub resource: String,
    /// The authorization servers (issuers) hosts get tokens from.
    pub authorization_servers: Vec<String>,
    /// Scopes published in the metadata.
    #[serde(default)]
    pub scopes_supported: Vec<String>,
    /// Scopes every token must carry (403 `insufficient_scope` otherwise).
    #[serde(default)]
    pub required_scopes: Vec<String>,
    /// A name for consent screens.
    pub resource_name: Option<String>,
    /// The issuer tokens come from (default: the first authorization server).
    pub issuer: Option<String>,
    /// The audience JWTs must carry (default: `resource`).
    pub audience: Option<String>,
    /// The issuer's JWKS (default: from its metadata).
    pub jwks_uri: Option<String>,
    /// The claim naming the principal (default `sub`).
    pub principal_claim: Option<String>,
    /// The claim holding groups (default `groups`).
    pub groups_claim: Option<String>,
    /// Introspection (RFC 7662) for opaque tokens: the endpoint (default: from the
    /// issuer's metadata, when `client_id` is set).
    pub introspection_endpoint: Option<String>,
    /// This server's client id for introspection.
    pub client_id: Option<String>,
    /// Its secret's source.
    #[serde(flatten)]
    pub secret: SecretSource,
    /// How long an introspection answer is reused (default 30s; a revoked token keeps
    /// working at most that long).
    #[serde(default, with = "opt_duration")]
    pub introspection_cache: Option<Duration>,
    /// Clock skew allowed on `exp` / `nbf` (default 30s).
    #[serde(default, with = "opt_duration")]
    pub leeway: Option<Duration>,
}

//! Finding an issuer's endpoints (OpenID Connect Discovery 1.0, and RFC 8414 for
//! authorization servers that publish only OAuth metadata).

use serde::Deserialize;
use std::time::Duration;

/// The endpoints an issuer publishes, as far as mcp-tasks uses them.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct ProviderMetadata {
    /// The issuer identifier; must equal the configured one (mix-up defence).
    pub issuer: String,
    /// Where a browser is sent to sign in.
    #[serde(default)]
    pub authorization_endpoint: Option<String>,
    /// Where codes are exchanged for tokens.
    #[serde(default)]
    pub token_endpoint: Option<String>,
    /// The issuer's signing keys.
    #[serde(default)]
    pub jwks_uri: Option<String>,
    /// Claims of a signed-in user (groups, when the ID token has none).
    #[serde(default)]
    pub userinfo_endpoint: Option<String>,
    /// RP-initiated logout (OpenID Connect RP-Initiated Logout 1.0).
    #[serde(default)]
    pub end_session_endpoint: Option<String>,
    /// Token introspection (RFC 7662).
    #[serde(default)]
    pub introspection_endpoint: Option<String>,
}

/// How long one discovery or key request may take.
pub(crate) const FETCH_TIMEOUT: Duration = Duration::from_secs(10);

/// The metadata of `issuer`: `{issuer}/.well-known/openid-configuration`, else the
/// RFC 8414 address (`/.well-known/oauth-authorization-server` before the issuer's
/// path). The document's `issuer` must be `issuer`.
///
/// # Errors
/// A message naming the issuer and what failed (unreachable, not JSON, another issuer).
pub async fn discover(http: &reqwest::Client, issuer: &str) -> Result<ProviderMetadata, String> {
    let issuer = issuer.trim_end_matches('/');
    let oidc = format!("{issuer}/.well-known/openid-configuration");
    let rfc8414 = {
        let after_scheme = issuer.find("://").map_or(0, |i| i + 3);
        let (origin, path) = match issuer[after_scheme..].find('/') {
            Some(i) => issuer.split_at(after_scheme + i),
            None => (issuer, ""),
        };
        format!("{origin}/.well-known/oauth-authorization-server{path}")
    };
    let mut problems = Vec::new();
    for url in [oidc, rfc8414] {
        match fetch_json::<ProviderMetadata>(http, &url).await {
            Ok(meta) => {
                if meta.issuer.trim_end_matches('/') != issuer {
                    return Err(format!(
                        "the identity provider at {url} names itself '{}', not the configured issuer '{issuer}': set issuer to exactly what it publishes",
                        meta.issuer
                    ));
                }
                return Ok(meta);
            }
            Err(e) => problems.push(e),
        }
    }
    Err(format!(
        "could not read the metadata of the issuer '{issuer}': {}",
        problems.join("; ")
    ))
}

/// GET `url` as JSON of type `T`, within [`FETCH_TIMEOUT`].
pub(crate) async fn fetch_json<T: serde::de::DeserializeOwned>(
    http: &reqwest::Client,
    url: &str,
) -> Result<T, String> {
    let response = http
        .get(url)
        .header("accept", "application/json")
        .timeout(FETCH_TIMEOUT)
        .send()
        .await
        .map_err(|e| format!("{url} is unreachable ({e})"))?;
    if !response.status().is_success() {
        return Err(format!("{url} answered {}", response.status()));
    }
    response
        .json::<T>()
        .await
        .map_err(|e| format!("{url} did not answer the expected JSON ({e})"))
}

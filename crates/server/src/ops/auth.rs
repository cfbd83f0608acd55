//! Who is calling over HTTP: `Authorization: Bearer` tokens checked against a static
//! token table, as JWTs (JWKS file, issuer, audience), or (feature `oauth`) as OAuth
//! access tokens of an authorization server ([`OAuthVerifier`]: JWKS fetched and
//! refreshed, or token introspection), giving an [`Identity`]: a principal with its
//! groups. Tasks are bound to the principal; without authentication the session is the
//! principal.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

#[cfg(feature = "jwt")]
mod jwt;
#[cfg(feature = "jwt")]
pub use jwt::JwtVerifier;
#[cfg(feature = "jwt")]
mod claims;
#[cfg(feature = "jwt")]
pub use claims::ClaimNames;
#[cfg(feature = "oauth")]
mod jwks;
#[cfg(feature = "oauth")]
pub use jwks::RemoteJwks;
#[cfg(feature = "oauth")]
mod discovery;
#[cfg(feature = "oauth")]
pub use discovery::{discover, ProviderMetadata};
#[cfg(feature = "oauth")]
mod oauth;
#[cfg(feature = "oauth")]
pub use oauth::{Introspection, OAuthConfig, OAuthVerifier};
pub(crate) mod resource;
pub use resource::ResourceMetadata;

/// Who a token stands for: the principal tasks are bound to and approvals name, the
/// groups an identity provider says they are in (added to `[groups]`), and, for OAuth
/// access tokens, the scopes granted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Identity {
    /// The principal (the configured claim, `sub` by default).
    pub principal: String,
    /// Groups from the token's groups claim (or the userinfo endpoint); empty when the
    /// token source knows none.
    pub groups: Vec<String>,
    /// The `email` claim, when the token carries one (shown, never used to decide).
    pub email: Option<String>,
    /// The scopes granted (`scope` / `scp`), for OAuth access tokens; `None` where
    /// tokens carry no scopes (static tokens, plain JWTs).
    pub scopes: Option<Vec<String>>,
}

impl Identity {
    /// An identity with only a principal (static tokens, plain JWTs).
    pub fn named(principal: impl Into<String>) -> Self {
        Identity {
            principal: principal.into(),
            ..Identity::default()
        }
    }
}

/// Why a token was refused. The message is safe to show the client.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct AuthError(pub String);

/// Turns a bearer token into a subject ([`Authenticator::authenticate`], for checks that
/// need no I/O) or an [`Identity`] ([`Authenticator::identify`], which the transports
/// call: it may fetch keys or ask an introspection endpoint). Implement either; each
/// defaults to the other.
#[async_trait::async_trait]
pub trait Authenticator: Send + Sync + fmt::Debug {
    /// The subject the token stands for.
    ///
    /// # Errors
    /// [`AuthError`] when the token is unknown, expired or malformed.
    fn authenticate(&self, token: &str) -> Result<String, AuthError> {
        let _ = token;
        Err(AuthError(
            "this authenticator checks tokens asynchronously (call identify)".into(),
        ))
    }

    /// The identity the token stands for. Default: [`Authenticator::authenticate`]'s
    /// subject, without groups.
    ///
    /// # Errors
    /// [`AuthError`] when the token is unknown, expired, for another audience or
    /// malformed; the message says which.
    async fn identify(&self, token: &str) -> Result<Identity, AuthError> {
        self.authenticate(token).map(Identity::named)
    }

    /// The Protected Resource Metadata (RFC 9728) this authenticator publishes, when it
    /// takes OAuth access tokens: the HTTP transport serves it under
    /// `/.well-known/oauth-protected-resource`, names it in its 401 challenges and
    /// refuses tokens without its required scopes (403 `insufficient_scope`).
    fn resource_metadata(&self) -> Option<&ResourceMetadata> {
        None
    }
}

/// A fixed table of tokens and their subjects (`--auth-tokens tokens.toml`).
pub struct StaticTokens {
    subjects: HashMap<String, String>,
}

impl fmt::Debug for StaticTokens {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // never print the tokens themselves
        f.debug_struct("StaticTokens")
            .field("tokens", &self.subjects.len())
            .finish()
    }
}

impl StaticTokens {
    /// A table from token to subject.
    pub fn new(subjects: HashMap<String, String>) -> Self {
        StaticTokens { subjects }
    }

    /// Parses a TOML table whose keys are tokens and values subjects:
    /// `"s3cret-a" = "alice"`.
    ///
    /// # Errors
    /// A message naming the problem (not TOML, a non-string value, an empty table).
    #[cfg(feature = "toml")]
    pub fn from_toml(text: &str) -> Result<Self, String> {
        let table: toml::Table = text.parse().map_err(|e| format!("not a TOML table: {e}"))?;
        let mut subjects = HashMap::new();
        for (token, subject) in table {
            let subject = subject.as_str().ok_or_else(|| {
                "every value must be a subject string, e.g. \"token\" = \"alice\"".to_string()
            })?;
            if token.is_empty() || subject.is_empty() {
                return Err("tokens and subjects must not be empty".into());
            }
            subjects.insert(token, subject.to_string());
        }
        if subjects.is_empty() {
            return Err("the token table is empty".into());
        }
        Ok(StaticTokens { subjects })
    }
}

impl Authenticator for StaticTokens {
    fn authenticate(&self, token: &str) -> Result<String, AuthError> {
        self.subjects
            .get(token)
            .cloned()
            .ok_or_else(|| AuthError("unknown bearer token".into()))
    }
}

/// The principal a refused token claims (`sub`, read without checking anything), for the
/// audit event of the refusal: who tried, as far as the token says. `None` for tokens
/// that are not JWTs.
pub fn claimed_principal(token: &str) -> Option<String> {
    use base64::Engine as _;
    let payload = token.split('.').nth(1)?;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload.trim_end_matches('='))
        .ok()?;
    let claims: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
    let sub = claims.get("sub")?.as_str()?;
    // A short, printable name only: the claim is the sender's word.
    (sub.len() <= 200 && !sub.chars().any(char::is_control)).then(|| format!("{sub} (claimed)"))
}

/// Whether and how HTTP requests are authenticated.
#[derive(Debug, Clone, Default)]
pub enum AuthMode {
    /// No authentication: the session is the principal and task ids are capabilities.
    #[default]
    Off,
    /// Tokens are checked when sent; requests without one are anonymous.
    Optional(Arc<dyn Authenticator>),
    /// Every request needs a valid token (401 otherwise).
    Required(Arc<dyn Authenticator>),
}

impl AuthMode {
    /// Whether any authenticator is configured.
    pub fn is_enabled(&self) -> bool {
        !matches!(self, AuthMode::Off)
    }

    /// The authenticator, when one is configured.
    pub fn authenticator(&self) -> Option<&Arc<dyn Authenticator>> {
        match self {
            AuthMode::Off => None,
            AuthMode::Optional(a) | AuthMode::Required(a) => Some(a),
        }
    }

    /// The Protected Resource Metadata of the configured authenticator, if it takes
    /// OAuth access tokens.
    pub fn resource_metadata(&self) -> Option<&ResourceMetadata> {
        self.authenticator().and_then(|a| a.resource_metadata())
    }
}

#[cfg(all(test, feature = "toml"))]
mod tests {
    use super::*;

    #[test]
    fn static_tokens_map_to_subjects() {
        let t =
            StaticTokens::from_toml("\"s3cret-a\" = \"alice\"\n\"s3cret-b\" = \"bob\"\n").unwrap();
        assert_eq!(t.authenticate("s3cret-a").unwrap(), "alice");
        assert!(t.authenticate("nope").is_err());
        assert!(StaticTokens::from_toml("a = 1").is_err());
        assert!(StaticTokens::from_toml("").is_err());
        assert!(!format!("{t:?}").contains("s3cret"));
    }
}

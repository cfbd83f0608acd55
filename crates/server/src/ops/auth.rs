//! Who is calling over HTTP: `Authorization: Bearer` tokens checked against a static
//! token table or as JWTs (JWKS file, issuer, audience), giving a subject. Tasks are
//! bound to that subject; without authentication the session is the principal.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

#[cfg(feature = "jwt")]
mod jwt;
#[cfg(feature = "jwt")]
pub use jwt::JwtVerifier;

/// Why a token was refused. The message is safe to show the client.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct AuthError(pub String);

/// Turns a bearer token into a subject.
pub trait Authenticator: Send + Sync + fmt::Debug {
    /// The subject the token stands for.
    ///
    /// # Errors
    /// [`AuthError`] when the token is unknown, expired or malformed.
    fn authenticate(&self, token: &str) -> Result<String, AuthError>;
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

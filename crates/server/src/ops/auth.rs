//! Who is calling over HTTP: `Authorization: Bearer` tokens checked against a static
//! token table or as JWTs (JWKS file, issuer, audience), giving a subject. Tasks are
//! bound to that subject; without authentication the session is the principal.

use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{decode, decode_header, DecodingKey, Validation};
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

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

/// JWT validation against a JWKS (keys chosen by `kid`), issuer and audience; the
/// subject is the `sub` claim. Signatures, `exp` and `nbf` are checked.
pub struct JwtVerifier {
    keys: JwkSet,
    issuer: String,
    audience: String,
}

impl fmt::Debug for JwtVerifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JwtVerifier")
            .field("keys", &self.keys.keys.len())
            .field("issuer", &self.issuer)
            .field("audience", &self.audience)
            .finish()
    }
}

#[derive(Debug, serde::Deserialize)]
struct Claims {
    sub: String,
}

impl JwtVerifier {
    /// A verifier from a JWKS document (JSON), the expected issuer and audience.
    ///
    /// # Errors
    /// A message when the JWKS does not parse or holds no key.
    pub fn new(
        jwks_json: &str,
        issuer: impl Into<String>,
        audience: impl Into<String>,
    ) -> Result<Self, String> {
        let keys: JwkSet =
            serde_json::from_str(jwks_json).map_err(|e| format!("not a JWKS document: {e}"))?;
        if keys.keys.is_empty() {
            return Err("the JWKS holds no keys".into());
        }
        Ok(JwtVerifier {
            keys,
            issuer: issuer.into(),
            audience: audience.into(),
        })
    }
}

impl Authenticator for JwtVerifier {
    fn authenticate(&self, token: &str) -> Result<String, AuthError> {
        let header = decode_header(token).map_err(|e| AuthError(format!("malformed JWT: {e}")))?;
        let jwk = match &header.kid {
            Some(kid) => self.keys.find(kid),
            None if self.keys.keys.len() == 1 => self.keys.keys.first(),
            None => None,
        }
        .ok_or_else(|| AuthError("JWT signed with a key this server does not know (kid)".into()))?;
        let key = DecodingKey::from_jwk(jwk)
            .map_err(|e| AuthError(format!("unusable key in JWKS: {e}")))?;
        let mut validation = Validation::new(header.alg);
        validation.set_issuer(&[&self.issuer]);
        validation.set_audience(&[&self.audience]);
        validation.set_required_spec_claims(&["exp", "sub", "iss", "aud"]);
        let data = decode::<Claims>(token, &key, &validation)
            .map_err(|e| AuthError(format!("invalid JWT: {e}")))?;
        Ok(data.claims.sub)
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

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine as _;
    use jsonwebtoken::{encode, EncodingKey, Header};

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

    fn jwks(secret: &[u8]) -> String {
        let k = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(secret);
        serde_json::json!({"keys": [{"kty": "oct", "kid": "k1", "alg": "HS256", "k": k}]})
            .to_string()
    }

    fn token(secret: &[u8], iss: &str, aud: &str, exp_offset: i64) -> String {
        let exp = chrono_now() + exp_offset;
        let mut header = Header::new(jsonwebtoken::Algorithm::HS256);
        header.kid = Some("k1".into());
        let claims = serde_json::json!({"sub": "carol", "iss": iss, "aud": aud, "exp": exp});
        encode(&header, &claims, &EncodingKey::from_secret(secret)).unwrap()
    }

    fn chrono_now() -> i64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs() as i64)
            .unwrap_or(0)
    }

    #[test]
    fn jwt_checks_signature_issuer_audience_and_expiry() {
        let secret = b"a-test-secret-of-sufficient-length";
        let v = JwtVerifier::new(&jwks(secret), "https://issuer.test", "mcp-tasks").unwrap();
        assert_eq!(
            v.authenticate(&token(secret, "https://issuer.test", "mcp-tasks", 300))
                .unwrap(),
            "carol"
        );
        assert!(v
            .authenticate(&token(secret, "https://other.test", "mcp-tasks", 300))
            .is_err());
        assert!(v
            .authenticate(&token(secret, "https://issuer.test", "someone-else", 300))
            .is_err());
        assert!(v
            .authenticate(&token(secret, "https://issuer.test", "mcp-tasks", -3600))
            .is_err());
        assert!(v
            .authenticate(&token(
                b"another-secret-entirely-different",
                "https://issuer.test",
                "mcp-tasks",
                300
            ))
            .is_err());
        assert!(v.authenticate("not.a.jwt").is_err());
    }
}

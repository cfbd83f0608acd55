//! JWT bearer tokens checked against a JWKS (feature `jwt`): the signature, `exp`,
//! `nbf`, issuer and audience; the subject is the `sub` claim.

use super::{AuthError, Authenticator};
use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{decode, decode_header, DecodingKey, Validation};
use std::fmt;

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

#[cfg(test)]
mod tests {
    use super::*;
    use base64::Engine as _;
    use jsonwebtoken::{encode, EncodingKey, Header};

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

//! An issuer's signing keys fetched from its `jwks_uri`, cached, and fetched again when
//! a token names a key the cache does not hold (the issuer rotated its keys) or the
//! cache is old; a token naming an unknown key cannot make the server fetch more than
//! once per [`RemoteJwks::with_refetch_interval`].

use super::discovery::fetch_json;
use super::AuthError;
use jsonwebtoken::jwk::{Jwk, JwkSet};
use parking_lot::Mutex;
use std::fmt;
use std::time::{Duration, Instant};

/// Keys older than this are fetched again on the next use.
const MAX_AGE: Duration = Duration::from_secs(3600);
/// Default least time between two fetches for an unknown key.
const REFETCH_INTERVAL: Duration = Duration::from_secs(10);

/// The signing keys published at a JWKS URL, cached.
pub struct RemoteJwks {
    url: String,
    http: reqwest::Client,
    cache: Mutex<Option<(JwkSet, Instant)>>,
    fetching: tokio::sync::Mutex<()>,
    refetch_interval: Duration,
}

impl fmt::Debug for RemoteJwks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RemoteJwks")
            .field("url", &self.url)
            .finish()
    }
}

impl RemoteJwks {
    /// Keys from `url`, fetched on first use.
    pub fn new(url: impl Into<String>, http: reqwest::Client) -> Self {
        RemoteJwks {
            url: url.into(),
            http,
            cache: Mutex::new(None),
            fetching: tokio::sync::Mutex::new(()),
            refetch_interval: REFETCH_INTERVAL,
        }
    }

    /// Sets the least time between two fetches caused by an unknown key (default 10 s).
    pub fn with_refetch_interval(mut self, interval: Duration) -> Self {
        self.refetch_interval = interval;
        self
    }

    fn cached(&self, kid: Option<&str>) -> (Option<Jwk>, Option<Instant>) {
        let cache = self.cache.lock();
        match &*cache {
            None => (None, None),
            Some((set, at)) => {
                let key = match kid {
                    Some(kid) => set.find(kid).cloned(),
                    None if set.keys.len() == 1 => set.keys.first().cloned(),
                    None => None,
                };
                (key, Some(*at))
            }
        }
    }

    /// The key `kid` names (or the only key, for a token without `kid`).
    ///
    /// # Errors
    /// The keys cannot be fetched, or none has this `kid` even after fetching again.
    pub async fn key(&self, kid: Option<&str>) -> Result<Jwk, AuthError> {
        let (key, fetched_at) = self.cached(kid);
        let fresh = fetched_at.is_some_and(|at| at.elapsed() < MAX_AGE);
        if let (Some(key), true) = (&key, fresh) {
            return Ok(key.clone());
        }
        let _one_fetch = self.fetching.lock().await;
        // Another request may have fetched while this one waited.
        let (again, at_now) = self.cached(kid);
        if at_now != fetched_at {
            if let Some(key) = again {
                return Ok(key);
            }
        }
        let may_fetch = match at_now {
            None => true,
            Some(at) => at.elapsed() >= self.refetch_interval || at.elapsed() >= MAX_AGE,
        };
        if may_fetch {
            match fetch_json::<JwkSet>(&self.http, &self.url).await {
                Ok(set) => *self.cache.lock() = Some((set, Instant::now())),
                Err(e) => {
                    // Old keys still serve while the issuer is unreachable.
                    if let Some(key) = key {
                        tracing::warn!(error = %e, "could not refresh the issuer's signing keys; using the cached ones");
                        return Ok(key);
                    }
                    return Err(AuthError(format!(
                        "the issuer's signing keys could not be fetched: {e}"
                    )));
                }
            }
        }
        self.cached(kid).0.ok_or_else(|| {
            AuthError(format!(
                "the token is signed with a key the issuer does not publish (kid {})",
                kid.unwrap_or("missing")
            ))
        })
    }
}

impl RemoteJwks {
    /// Checks `token` as a JWT signed by one of these keys, issued by `issuer` for
    /// `audience` (one of its `aud`), not expired (`exp` required) and already valid
    /// (`nbf`), with `leeway` for clock skew; gives its claims.
    ///
    /// # Errors
    /// What was wrong, in words a client can act on: malformed, unknown key, bad
    /// signature, expired, another issuer, another audience.
    pub async fn verify(
        &self,
        token: &str,
        issuer: &str,
        audience: &str,
        leeway: Duration,
    ) -> Result<serde_json::Value, AuthError> {
        use jsonwebtoken::errors::ErrorKind;
        use jsonwebtoken::{decode, decode_header, DecodingKey, Validation};
        let header = decode_header(token).map_err(|e| AuthError(format!("malformed JWT: {e}")))?;
        let jwk = self.key(header.kid.as_deref()).await?;
        let key = DecodingKey::from_jwk(&jwk)
            .map_err(|e| AuthError(format!("unusable key in the issuer's JWKS: {e}")))?;
        let mut validation = Validation::new(header.alg);
        validation.set_issuer(&[issuer]);
        validation.set_audience(&[audience]);
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        validation.leeway = leeway.as_secs();
        validation.validate_nbf = true;
        decode::<serde_json::Value>(token, &key, &validation)
            .map(|data| data.claims)
            .map_err(|e| {
                AuthError(match e.kind() {
                    ErrorKind::ExpiredSignature => "the token has expired".to_string(),
                    ErrorKind::ImmatureSignature => {
                        "the token is not valid yet (nbf): check the clocks".to_string()
                    }
                    ErrorKind::InvalidAudience => {
                        format!("the token was issued for another audience, not '{audience}'")
                    }
                    ErrorKind::InvalidIssuer => {
                        format!("the token was issued by another issuer, not '{issuer}'")
                    }
                    ErrorKind::InvalidSignature => "the token's signature is not valid".to_string(),
                    ErrorKind::InvalidAlgorithm => {
                        "the token's algorithm does not match its key".to_string()
                    }
                    ErrorKind::MissingRequiredClaim(c) => {
                        format!("the token has no '{c}' claim")
                    }
                    _ => format!("invalid JWT: {e}"),
                })
            })
    }
}

//! OAuth 2 access tokens of an authorization server (feature `oauth`): the resource
//! server side of the MCP authorization spec. A JWT access token is checked through
//! the issuer's JWKS (fetched, cached, fetched again for an unknown key) with its
//! audience bound to this server's canonical URI (RFC 8707); any other token is asked
//! about at the issuer's introspection endpoint (RFC 7662), whose answer is cached
//! briefly. Claims map to the principal and groups as the board's sign-in maps them.

use super::claims::scopes_in;
use super::discovery::{discover, FETCH_TIMEOUT};
use super::{AuthError, Authenticator, ClaimNames, Identity, RemoteJwks, ResourceMetadata};
use mcp_tasks_protocol::Secret;
use parking_lot::Mutex;
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::fmt;
use std::time::{Duration, Instant};

/// Token introspection (RFC 7662): where to ask and how this server authenticates.
#[derive(Debug, Clone)]
pub struct Introspection {
    /// The endpoint; `None`: the one the issuer's metadata names.
    pub endpoint: Option<String>,
    /// This server's client id at the authorization server.
    pub client_id: String,
    /// Its client secret (HTTP Basic).
    pub client_secret: Secret<String>,
    /// How long an answer is reused (a revoked token keeps working that long).
    pub cache: Duration,
}

/// What an [`OAuthVerifier`] accepts.
#[derive(Debug, Clone)]
pub struct OAuthConfig {
    /// What the server publishes (its canonical URI, the authorization servers, the
    /// scopes).
    pub metadata: ResourceMetadata,
    /// The issuer tokens must come from; `None`: the first authorization server.
    pub issuer: Option<String>,
    /// The audience JWTs must carry; `None`: the canonical URI (`metadata.resource`).
    pub audience: Option<String>,
    /// The issuer's JWKS address; `None`: discovered from its metadata.
    pub jwks_uri: Option<String>,
    /// Opaque tokens are introspected; `None`: only JWTs are accepted.
    pub introspection: Option<Introspection>,
    /// Which claims name the principal and hold the groups.
    pub claims: ClaimNames,
    /// Clock skew allowed on `exp` / `nbf`.
    pub leeway: Duration,
}

/// An introspection answer and until when it is reused, by the token's SHA-256.
type Cached = (Result<Identity, AuthError>, Instant);

/// Checks OAuth access tokens for this server (see the module documentation).
pub struct OAuthVerifier {
    config: OAuthConfig,
    issuer: String,
    audience: String,
    http: reqwest::Client,
    jwks: tokio::sync::OnceCell<RemoteJwks>,
    introspection_endpoint: tokio::sync::OnceCell<String>,
    answers: Mutex<HashMap<[u8; 32], Cached>>,
}

impl fmt::Debug for OAuthVerifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuthVerifier")
            .field("issuer", &self.issuer)
            .field("audience", &self.audience)
            .finish()
    }
}

impl OAuthVerifier {
    /// A verifier for `config`; keys and endpoints are fetched on first use.
    ///
    /// # Errors
    /// No authorization server is named, or the HTTP client cannot be built.
    pub fn new(config: OAuthConfig) -> Result<Self, String> {
        let issuer = config
            .issuer
            .clone()
            .or_else(|| config.metadata.authorization_servers.first().cloned())
            .ok_or("name at least one authorization server (authorization_servers)")?;
        let audience = config
            .audience
            .clone()
            .unwrap_or_else(|| config.metadata.resource.clone());
        let http = reqwest::Client::builder()
            .timeout(FETCH_TIMEOUT)
            .build()
            .map_err(|e| format!("cannot build the HTTP client: {e}"))?;
        Ok(OAuthVerifier {
            config,
            issuer: issuer.trim_end_matches('/').to_string(),
            audience,
            http,
            jwks: tokio::sync::OnceCell::new(),
            introspection_endpoint: tokio::sync::OnceCell::new(),
            answers: Mutex::new(HashMap::new()),
        })
    }

    async fn jwks(&self) -> Result<&RemoteJwks, AuthError> {
        self.jwks
            .get_or_try_init(|| async {
                let url = match &self.config.jwks_uri {
                    Some(url) => url.clone(),
                    None => discover(&self.http, &self.issuer)
                        .await
                        .map_err(AuthError)?
                        .jwks_uri
                        .ok_or_else(|| {
                            AuthError("the issuer publishes no jwks_uri: set jwks_uri".into())
                        })?,
                };
                Ok(RemoteJwks::new(url, self.http.clone()))
            })
            .await
    }

    async fn verify_jwt(&self, token: &str) -> Result<Identity, AuthError> {
        let claims = self
            .jwks()
            .await?
            .verify(token, &self.issuer, &self.audience, self.config.leeway)
            .await?;
        let mut identity = self.identity_of(&claims)?;
        identity.scopes = Some(scopes_in(&claims));
        Ok(identity)
    }

    /// The identity of an access token's claims; a token with no `sub` (a client
    /// credentials grant: a program, not a person) is named `client:{client_id}`, so
    /// it can never pass for a person.
    fn identity_of(&self, claims: &Value) -> Result<Identity, AuthError> {
        match self.config.claims.identity(claims) {
            Ok(identity) => Ok(identity),
            Err(e) => match claims["client_id"].as_str() {
                Some(client)
                    if self.config.claims.principal == "sub" && claims.get("sub").is_none() =>
                {
                    Ok(Identity::named(format!("client:{client}")))
                }
                _ => Err(e),
            },
        }
    }

    async fn introspect(&self, token: &str, how: &Introspection) -> Result<Identity, AuthError> {
        let key: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        if let Some((answer, until)) = self.answers.lock().get(&key) {
            if *until > Instant::now() {
                return answer.clone();
            }
        }
        let endpoint = self
            .introspection_endpoint
            .get_or_try_init(|| async {
                match &how.endpoint {
                    Some(e) => Ok(e.clone()),
                    None => discover(&self.http, &self.issuer)
                        .await
                        .map_err(AuthError)?
                        .introspection_endpoint
                        .ok_or_else(|| AuthError("the issuer publishes no introspection_endpoint: set introspection_endpoint".into())),
                }
            })
            .await?;
        let response = self
            .http
            .post(endpoint)
            .basic_auth(&how.client_id, Some(how.client_secret.expose()))
            .form(&[("token", token), ("token_type_hint", "access_token")])
            .send()
            .await
            .map_err(|e| AuthError(format!("the introspection endpoint is unreachable ({e})")))?;
        if !response.status().is_success() {
            // Not cached: the next request asks again.
            return Err(AuthError(format!(
                "the introspection endpoint answered {} (check the client id and secret of [oauth])",
                response.status()
            )));
        }
        let body: Value = response
            .json()
            .await
            .map_err(|e| AuthError(format!("the introspection endpoint answered no JSON ({e})")))?;
        let answer = self.read_introspection(&body);
        let now = Instant::now();
        let mut until = now + how.cache;
        if let Some(exp) = body["exp"].as_i64() {
            let left = exp - chrono::Utc::now().timestamp();
            until = until.min(now + Duration::from_secs(u64::try_from(left).unwrap_or(0)));
        }
        let mut answers = self.answers.lock();
        answers.retain(|_, (_, until)| *until > now);
        if !how.cache.is_zero() {
            answers.insert(key, (answer.clone(), until));
        }
        answer
    }

    fn read_introspection(&self, body: &Value) -> Result<Identity, AuthError> {
        if body["active"] != Value::Bool(true) {
            return Err(AuthError(
                "the token is not active (the authorization server's introspection says it was revoked, has expired or is unknown)".into(),
            ));
        }
        if let Some(iss) = body["iss"].as_str() {
            if iss.trim_end_matches('/') != self.issuer {
                return Err(AuthError(format!(
                    "the token was issued by another issuer, not '{}'",
                    self.issuer
                )));
            }
        }
        let audiences = match &body["aud"] {
            Value::String(a) => vec![a.as_str()],
            Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        if !audiences.is_empty() && !audiences.contains(&self.audience.as_str()) {
            return Err(AuthError(format!(
                "the token was issued for another audience, not '{}'",
                self.audience
            )));
        }
        let mut identity = self.identity_of(body)?;
        identity.scopes = Some(scopes_in(body));
        Ok(identity)
    }
}

/// Whether `token` has the shape of a JWT (three base64url parts, a JSON header).
fn looks_like_jwt(token: &str) -> bool {
    token.split('.').count() == 3 && jsonwebtoken::decode_header(token).is_ok()
}

#[async_trait::async_trait]
impl Authenticator for OAuthVerifier {
    async fn identify(&self, token: &str) -> Result<Identity, AuthError> {
        if looks_like_jwt(token) {
            return self.verify_jwt(token).await;
        }
        match &self.config.introspection {
            Some(how) => self.introspect(token, how).await,
            None => Err(AuthError(
                "not a JWT access token, and this server has no introspection configured for opaque tokens".into(),
            )),
        }
    }

    fn resource_metadata(&self) -> Option<&ResourceMetadata> {
        Some(&self.config.metadata)
    }
}

//! A tiny OpenID provider and OAuth authorization server for the identity tests
//! (feature `issuer`): it serves discovery (`/.well-known/openid-configuration` and
//! `/.well-known/oauth-authorization-server`), a JWKS the test replaces at will (key
//! rotation), a token endpoint that hands out the ID token the test queued, and an
//! introspection endpoint answering what the test set per token. Keys are Ed25519,
//! made in the test ([`TestKey::generate`]); nothing leaves 127.0.0.1. It counts the
//! JWKS fetches and introspection calls, so a test can tell a cache from a fetch.

use axum::extract::State;
use axum::routing::{get, post};
use axum::{Json, Router};
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use ed25519_dalek::pkcs8::EncodePrivateKey;
use serde_json::{json, Value};
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// An Ed25519 signing key with its key id, made for one test.
#[derive(Clone)]
pub struct TestKey {
    kid: String,
    encoding: jsonwebtoken::EncodingKey,
    public: [u8; 32],
}

impl std::fmt::Debug for TestKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestKey").field("kid", &self.kid).finish()
    }
}

impl TestKey {
    /// A new random key named `kid`.
    ///
    /// # Panics
    /// When the key cannot be encoded (never, for a 32-byte seed).
    pub fn generate(kid: &str) -> Self {
        let seed: [u8; 32] = rand::random();
        let signing = ed25519_dalek::SigningKey::from_bytes(&seed);
        #[allow(clippy::expect_used)]
        let der = signing
            .to_pkcs8_der()
            .expect("an Ed25519 key encodes as PKCS#8");
        TestKey {
            kid: kid.to_string(),
            encoding: jsonwebtoken::EncodingKey::from_ed_der(der.as_bytes()),
            public: signing.verifying_key().to_bytes(),
        }
    }

    /// Its key id.
    pub fn kid(&self) -> &str {
        &self.kid
    }

    /// Its public half as a JWK, as an issuer publishes it.
    pub fn jwk(&self) -> Value {
        json!({"kty": "OKP", "crv": "Ed25519", "alg": "EdDSA", "use": "sig",
               "kid": self.kid, "x": URL_SAFE_NO_PAD.encode(self.public)})
    }

    /// `claims` signed with this key (EdDSA), its `kid` in the header.
    ///
    /// # Panics
    /// When the claims cannot be signed (never, for a JSON object).
    pub fn sign(&self, claims: &Value) -> String {
        self.sign_as(&self.kid, claims)
    }

    /// `claims` signed with this key but naming key `kid` in the header (a forged
    /// token: the signature does not match the key the header names).
    ///
    /// # Panics
    /// When the claims cannot be signed.
    pub fn sign_as(&self, kid: &str, claims: &Value) -> String {
        let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::EdDSA);
        header.kid = Some(kid.to_string());
        #[allow(clippy::expect_used)]
        jsonwebtoken::encode(&header, claims, &self.encoding).expect("claims sign")
    }
}

/// What the issuer serves, changed by the test while it runs.
#[derive(Default)]
struct IssuerState {
    url: String,
    jwks: Mutex<Vec<Value>>,
    id_tokens: Mutex<VecDeque<String>>,
    introspection: Mutex<HashMap<String, Value>>,
    jwks_fetches: AtomicUsize,
    introspections: AtomicUsize,
}

/// The running issuer; stops when dropped.
#[derive(Debug)]
pub struct TestIssuer {
    /// Its issuer identifier (`http://127.0.0.1:PORT`).
    pub url: String,
    state: Arc<IssuerState>,
    task: tokio::task::JoinHandle<()>,
}

impl std::fmt::Debug for IssuerState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IssuerState")
            .field("url", &self.url)
            .finish()
    }
}

impl Drop for TestIssuer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Seconds since the Unix epoch, for `exp` and `iat`.
pub fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

impl TestIssuer {
    /// Starts an issuer on a free 127.0.0.1 port publishing `keys`.
    ///
    /// # Panics
    /// When no port can be bound.
    pub async fn start(keys: &[&TestKey]) -> Self {
        #[allow(clippy::expect_used)]
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a free port on 127.0.0.1");
        #[allow(clippy::expect_used)]
        let url = format!("http://{}", listener.local_addr().expect("bound address"));
        let state = Arc::new(IssuerState {
            url: url.clone(),
            ..IssuerState::default()
        });
        let app = Router::new()
            .route("/.well-known/openid-configuration", get(discovery))
            .route("/.well-known/oauth-authorization-server", get(discovery))
            .route("/jwks", get(jwks))
            .route("/token", post(token))
            .route("/introspect", post(introspect))
            .with_state(Arc::clone(&state));
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        let issuer = TestIssuer { url, state, task };
        issuer.publish(keys);
        issuer
    }

    /// Publishes exactly `keys` from now on (a rotation drops the old ones).
    pub fn publish(&self, keys: &[&TestKey]) {
        *lock(&self.state.jwks) = keys.iter().map(|k| k.jwk()).collect();
    }

    /// The ID token the token endpoint hands out next (one per code exchange).
    pub fn next_id_token(&self, token: String) {
        lock(&self.state.id_tokens).push_back(token);
    }

    /// What the introspection endpoint answers about `token` from now on (unknown
    /// tokens are `{"active": false}`).
    pub fn introspects(&self, token: &str, answer: Value) {
        lock(&self.state.introspection).insert(token.to_string(), answer);
    }

    /// How many times the JWKS was fetched.
    pub fn jwks_fetches(&self) -> usize {
        self.state.jwks_fetches.load(Ordering::SeqCst)
    }

    /// How many introspection requests arrived.
    pub fn introspections(&self) -> usize {
        self.state.introspections.load(Ordering::SeqCst)
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

async fn discovery(State(s): State<Arc<IssuerState>>) -> Json<Value> {
    let u = &s.url;
    Json(json!({
        "issuer": u,
        "authorization_endpoint": format!("{u}/authorize"),
        "token_endpoint": format!("{u}/token"),
        "jwks_uri": format!("{u}/jwks"),
        "introspection_endpoint": format!("{u}/introspect"),
        "end_session_endpoint": format!("{u}/logout"),
        "response_types_supported": ["code"],
        "subject_types_supported": ["public"],
        "id_token_signing_alg_values_supported": ["EdDSA"],
    }))
}

async fn jwks(State(s): State<Arc<IssuerState>>) -> Json<Value> {
    s.jwks_fetches.fetch_add(1, Ordering::SeqCst);
    Json(json!({ "keys": lock(&s.jwks).clone() }))
}

async fn token(State(s): State<Arc<IssuerState>>) -> Json<Value> {
    let id_token = lock(&s.id_tokens).pop_front();
    Json(json!({
        "access_token": "test-access-token",
        "token_type": "Bearer",
        "expires_in": 300,
        "id_token": id_token,
    }))
}

async fn introspect(State(s): State<Arc<IssuerState>>, body: String) -> Json<Value> {
    s.introspections.fetch_add(1, Ordering::SeqCst);
    // The test's tokens are URL-safe: no percent-decoding needed.
    let token = body
        .split('&')
        .find_map(|pair| pair.strip_prefix("token="))
        .unwrap_or_default()
        .to_string();
    let answer = lock(&s.introspection)
        .get(&token)
        .cloned()
        .unwrap_or_else(|| json!({"active": false}));
    Json(answer)
}

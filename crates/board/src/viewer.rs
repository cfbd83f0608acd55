//! Who is looking at the board: signed session cookies, CSRF tokens and operators.
//!
//! A login is a cookie the server signs (HMAC-SHA256) holding the principal, an expiry
//! and a random nonce. Nothing is kept per login on the server, so a login is valid on
//! every replica that shares the signing key and survives a restart; the token the
//! person pasted is checked once and never stored. The CSRF token is derived from the
//! nonce with the same key, so a page of this origin can read it from the HTML it was
//! served and another site cannot forge it. Logging out clears the cookie and
//! remembers its nonce as revoked (in this process) until the cookie would expire.

use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use hmac::{Hmac, Mac};
use mcp_tasks_engine::Caller;
use parking_lot::Mutex;
use rand::RngCore;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use subtle::ConstantTimeEq;

use crate::Board;

/// The session cookie's name.
pub(crate) const COOKIE: &str = "mcp_tasks_board";
/// The cookie keeping the ID token of a sign-in through the provider, sent back to it
/// as `id_token_hint` at sign-out (Okta requires it) and at silent renewal.
pub(crate) const ID_TOKEN_COOKIE: &str = "mcp_tasks_idt";
/// The longest ID token kept: a browser keeps cookies up to about 4 KB; a longer token
/// (hundreds of groups in it) is not kept, and sign-out then goes without the hint.
const ID_TOKEN_COOKIE_MAX: usize = 3800;
/// The header a page sends its CSRF token in on every state-changing request.
pub(crate) const CSRF_HEADER: &str = "x-csrf-token";
/// Who the viewer is when the board is served without authentication (loopback only).
pub(crate) const LOCAL_VIEWER: &str = "local-user";

type HmacSha256 = Hmac<Sha256>;

/// The signing key, and the nonces of logins ended by logging out.
pub(crate) struct Keys {
    key: [u8; 32],
    revoked: Mutex<HashMap<String, i64>>,
}

impl std::fmt::Debug for Keys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Keys { .. }")
    }
}

/// A 32-byte key for one use (`label`, which keeps the uses' keys apart) derived from
/// the board secret, so that every replica sharing the secret derives the same; a
/// random one without a secret (what it signs then dies with the process).
pub(crate) fn derive_key(label: &[u8], secret: Option<&[u8]>) -> [u8; 32] {
    match secret {
        Some(secret) => {
            let mut hash = Sha256::new();
            hash.update(label);
            hash.update(secret);
            hash.finalize().into()
        }
        None => {
            let mut key = [0u8; 32];
            rand::thread_rng().fill_bytes(&mut key);
            key
        }
    }
}

impl Keys {
    /// A key derived from the configured secret, or a random one.
    pub(crate) fn new(secret: Option<&[u8]>) -> Self {
        let key = derive_key(b"mcp-tasks board session key v1\0", secret);
        Keys {
            key,
            revoked: Mutex::new(HashMap::new()),
        }
    }

    fn mac(&self, purpose: &[u8], data: &[u8]) -> HmacSha256 {
        // A key of any length is accepted by HMAC; this cannot fail.
        let mut mac = <HmacSha256 as Mac>::new_from_slice(&self.key)
            .unwrap_or_else(|_| unreachable!("HMAC takes keys of any length"));
        mac.update(purpose);
        mac.update(b"\0");
        mac.update(data);
        mac
    }

    /// `value` as JSON with its signature for `purpose`, in a cookie-safe string.
    // Used by the sign-in through a provider only (feature `oidc`).
    #[cfg_attr(not(feature = "oidc"), allow(dead_code))]
    pub(crate) fn seal(&self, purpose: &[u8], value: &impl Serialize) -> String {
        let body = serde_json::to_vec(value).unwrap_or_default();
        let mac = self.mac(purpose, &body).finalize().into_bytes();
        format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(&body),
            URL_SAFE_NO_PAD.encode(mac)
        )
    }

    /// What [`Keys::seal`] sealed for `purpose`, if the signature holds.
    // Used by the sign-in through a provider only (feature `oidc`).
    #[cfg_attr(not(feature = "oidc"), allow(dead_code))]
    pub(crate) fn open<T: serde::de::DeserializeOwned>(
        &self,
        purpose: &[u8],
        sealed: &str,
    ) -> Option<T> {
        let (body, signature) = sealed.split_once('.')?;
        let body = URL_SAFE_NO_PAD.decode(body).ok()?;
        let signature = URL_SAFE_NO_PAD.decode(signature).ok()?;
        self.mac(purpose, &body).verify_slice(&signature).ok()?;
        serde_json::from_slice(&body).ok()
    }

    fn sign(&self, data: &[u8]) -> Vec<u8> {
        self.mac(b"session", data).finalize().into_bytes().to_vec()
    }

    fn verify(&self, data: &[u8], signature: &[u8]) -> bool {
        self.mac(b"session", data).verify_slice(signature).is_ok()
    }

    /// The CSRF token of the login with `nonce`.
    pub(crate) fn csrf(&self, nonce: &str) -> String {
        hex::encode(&self.mac(b"csrf", nonce.as_bytes()).finalize().into_bytes()[..16])
    }

    fn revoke(&self, nonce: &str, until: i64) {
        let now = chrono::Utc::now().timestamp();
        let mut revoked = self.revoked.lock();
        revoked.retain(|_, expires| *expires > now);
        revoked.insert(nonce.to_string(), until);
    }

    fn is_revoked(&self, nonce: &str) -> bool {
        self.revoked.lock().contains_key(nonce)
    }
}

/// What a session cookie holds.
#[derive(Serialize, Deserialize)]
struct Claims {
    /// The principal.
    p: String,
    /// Expiry, Unix seconds.
    e: i64,
    /// Random per login: the CSRF token is derived from it.
    n: String,
    /// Groups the identity provider named at sign-in (added to `[groups]`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    g: Vec<String>,
    /// Signed in through OpenID Connect (sign-out then goes to the provider too).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    o: bool,
    /// When the sign-in must be renewed at the provider (Unix seconds; 0: never before
    /// the expiry): past it, pages renew silently and the API answers 401.
    #[serde(default, skip_serializing_if = "is_zero")]
    r: i64,
}

fn is_zero(n: &i64) -> bool {
    *n == 0
}

/// The person looking at the board.
#[derive(Debug, Clone)]
pub(crate) struct Viewer {
    /// The engine caller the board acts as for them.
    pub(crate) caller: Caller,
    /// The token their page must send with every state-changing request.
    pub(crate) csrf: String,
    /// Whether they logged in (false: the loopback board without authentication).
    pub(crate) logged_in: bool,
    /// The login's nonce and expiry, to revoke it on logout.
    session: Option<(String, i64)>,
    /// Whether they signed in through the identity provider.
    pub(crate) via_oidc: bool,
    /// Until when (Unix seconds) what this viewer may see holds: the session's expiry,
    /// or its renewal at the provider if that comes first. `None`: no login.
    pub(crate) valid_until: Option<i64>,
}

/// Why a request gets no board: the status and the message a person reads.
#[derive(Debug)]
pub(crate) struct Refused {
    pub(crate) status: StatusCode,
    pub(crate) message: String,
    /// The person is signed in, but the sign-in is due for renewal at the identity
    /// provider: a page goes there silently, the API answers 401 and the page reloads.
    pub(crate) renew: bool,
}

impl Refused {
    pub(crate) fn new(status: StatusCode, message: impl Into<String>) -> Self {
        Refused {
            status,
            message: message.into(),
            renew: false,
        }
    }

    /// The answer to a request whose sign-in is due for renewal.
    pub(crate) fn renew() -> Self {
        Refused {
            status: StatusCode::UNAUTHORIZED,
            message: "your sign-in is due for renewal at the identity provider: reload the page"
                .into(),
            renew: true,
        }
    }

    /// The answer to a request for a task the viewer may not see: the same as for a
    /// task that does not exist, so that ids of other principals' tasks leak nothing.
    pub(crate) fn unknown_task() -> Self {
        Refused::new(
            StatusCode::NOT_FOUND,
            "no such task: it does not exist, has expired, or is not yours",
        )
    }
}

impl IntoResponse for Refused {
    fn into_response(self) -> Response {
        let body = if self.renew {
            serde_json::json!({ "error": self.message, "renew": true })
        } else {
            serde_json::json!({ "error": self.message })
        };
        (self.status, axum::Json(body)).into_response()
    }
}

impl Board {
    /// Whether the board shows `viewer` the owner of tasks: to operators, when people
    /// sign in (without authentication every owner is an anonymous session or
    /// `stateless`, which tells a person nothing).
    pub(crate) fn shows_owner(&self, viewer: &Viewer) -> bool {
        viewer.caller.operator && self.needs_login()
    }

    /// Whether the board asks people to log in (authentication is configured, or
    /// people sign in with an identity provider).
    pub(crate) fn needs_login(&self) -> bool {
        self.server().config().auth.is_enabled() || self.config().oidc.is_some()
    }

    /// The engine caller for a person known by `principal` (logged in, or named by a
    /// signed link or a Slack user mapping): an operator when the board lists them as
    /// one, with the groups of the server's `[groups]` they belong to (for approvals
    /// and questions assigned to a group).
    pub fn person_caller(&self, principal: &str) -> Caller {
        let mut caller = Caller::authenticated(principal, None)
            .with_groups(self.server().config().approvals.groups_of(principal));
        caller.operator = self.is_operator(principal, &caller.groups);
        caller
    }

    /// Whether `principal`, a member of `groups`, is an operator: `operators` may name
    /// principals and groups alike (`[groups]`, or the identity provider's groups).
    fn is_operator(&self, principal: &str, groups: &[String]) -> bool {
        self.config()
            .operators
            .iter()
            .any(|o| o == principal || groups.contains(o))
    }

    /// Who sent `headers`: checks Origin and Host like `/mcp`, then the session
    /// cookie (or, without authentication, the local user).
    pub(crate) fn viewer(&self, headers: &HeaderMap) -> Result<Viewer, Refused> {
        self.check_origin(headers)?;
        if !self.needs_login() {
            return Ok(Viewer {
                caller: Caller::anonymous(LOCAL_VIEWER, None).as_operator(),
                csrf: self.inner.keys.csrf(LOCAL_VIEWER),
                logged_in: false,
                session: None,
                via_oidc: false,
                valid_until: None,
            });
        }
        let claims = cookie(headers, COOKIE)
            .and_then(|value| self.open_cookie(value))
            .ok_or_else(|| {
                Refused::new(
                    StatusCode::UNAUTHORIZED,
                    "not logged in (or the login expired): log in at /board/login",
                )
            })?;
        if claims.r != 0 && claims.r <= chrono::Utc::now().timestamp() {
            return Err(Refused::renew());
        }
        let mut caller = self.person_caller(&claims.p);
        for group in claims.g {
            if !caller.groups.contains(&group) {
                caller.groups.push(group);
            }
        }
        // The provider's groups may make the person an operator.
        caller.operator = self.is_operator(&claims.p, &caller.groups);
        Ok(Viewer {
            caller,
            csrf: self.inner.keys.csrf(&claims.n),
            logged_in: true,
            valid_until: Some(if claims.r != 0 {
                claims.r.min(claims.e)
            } else {
                claims.e
            }),
            session: Some((claims.n, claims.e)),
            via_oidc: claims.o,
        })
    }

    /// The Origin and Host checks of `/mcp`, where the board's own origin (the page
    /// posting back to the address it came from, or `--public-url`) is also accepted.
    pub(crate) fn check_origin(&self, headers: &HeaderMap) -> Result<(), Refused> {
        use mcp_tasks_server::transport::http::{check_browser_host, check_browser_request};
        let refused = |(status, message)| Refused::new(status, message);
        let origin = headers.get(header::ORIGIN).and_then(|o| o.to_str().ok());
        let host = headers.get(header::HOST).and_then(|h| h.to_str().ok());
        // Without authentication only the origins /mcp accepts pass: a page of any
        // name resolving to this loopback server (DNS rebinding) is same-origin with
        // itself. With authentication such a page has no session cookie.
        let same_origin = self.needs_login()
            && match (origin, host) {
                (Some(origin), Some(host)) => origin
                    .split_once("://")
                    .is_some_and(|(_, authority)| authority.eq_ignore_ascii_case(host)),
                _ => false,
            };
        let public = match (origin, self.config().public_url.as_deref()) {
            (Some(origin), Some(public)) => {
                public
                    .trim_end_matches('/')
                    .eq_ignore_ascii_case(origin.trim_end_matches('/'))
                    || public.starts_with(&format!("{origin}/"))
            }
            _ => false,
        };
        if same_origin || public {
            check_browser_host(self.server(), headers).map_err(refused)
        } else {
            check_browser_request(self.server(), headers).map_err(refused)
        }
    }

    /// The principal of the board login `headers` carry, if any (an answer link checks
    /// it is not someone else's).
    pub(crate) fn logged_in_principal(&self, headers: &HeaderMap) -> Option<String> {
        if !self.needs_login() {
            return None;
        }
        cookie(headers, COOKIE)
            .and_then(|value| self.open_cookie(value))
            .map(|claims| claims.p)
    }

    /// [`Board::viewer`] for a state-changing request: the CSRF header must match.
    pub(crate) fn acting_viewer(&self, headers: &HeaderMap) -> Result<Viewer, Refused> {
        let viewer = self.viewer(headers)?;
        let sent = headers
            .get(CSRF_HEADER)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        if bool::from(sent.as_bytes().ct_eq(viewer.csrf.as_bytes())) {
            Ok(viewer)
        } else {
            Err(Refused::new(
                StatusCode::FORBIDDEN,
                format!(
                    "missing or wrong CSRF token: send the {CSRF_HEADER} header with the token of the page (reload the board)"
                ),
            ))
        }
    }

    /// A `Set-Cookie` value logging `principal` in, with the `groups` an identity
    /// provider named (`oidc`: signed in through it).
    pub(crate) fn login_cookie_with(
        &self,
        principal: &str,
        groups: Vec<String>,
        oidc: bool,
    ) -> String {
        let ttl = self.config().session_ttl.as_secs().max(60);
        let mut nonce = [0u8; 16];
        rand::thread_rng().fill_bytes(&mut nonce);
        let now = chrono::Utc::now().timestamp();
        let expires = now + i64::try_from(ttl).unwrap_or(i64::MAX / 2);
        // A sign-in through the provider is asked again after `refresh_after` (the
        // groups read anew), unless the session ends first.
        let refresh = self
            .config()
            .oidc
            .as_ref()
            .filter(|_| oidc)
            .map_or(0, |o| o.refresh_after.as_secs());
        let renew = match i64::try_from(refresh) {
            Ok(secs) if secs > 0 && now + secs < expires => now + secs,
            _ => 0,
        };
        let claims = Claims {
            p: principal.to_string(),
            e: expires,
            n: hex::encode(nonce),
            g: groups,
            o: oidc,
            r: renew,
        };
        let body = serde_json::to_vec(&claims).unwrap_or_default();
        let value = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(&body),
            URL_SAFE_NO_PAD.encode(self.inner.keys.sign(&body))
        );
        format!(
            "{COOKIE}={value}; Max-Age={ttl}{}",
            self.cookie_attributes()
        )
    }

    /// A `Set-Cookie` value ending `viewer`'s login.
    pub(crate) fn logout_cookie(&self, viewer: &Viewer) -> String {
        if let Some((nonce, expires)) = &viewer.session {
            self.inner.keys.revoke(nonce, *expires);
        }
        format!("{COOKIE}=; Max-Age=0{}", self.cookie_attributes())
    }

    /// A `Set-Cookie` value ending a session whose renewal the provider refused (its
    /// cookie, being stale, opens nothing; this removes it from the browser).
    // Used by the sign-in through a provider only (feature `oidc`).
    #[cfg_attr(not(feature = "oidc"), allow(dead_code))]
    pub(crate) fn ended_session_cookie(&self) -> String {
        format!("{COOKIE}=; Max-Age=0{}", self.cookie_attributes())
    }

    /// A `Set-Cookie` value keeping (or, with `None`, removing) the ID token of a
    /// sign-in through the provider, for as long as the session lives.
    pub(crate) fn id_token_cookie(&self, id_token: Option<&str>) -> String {
        match id_token {
            Some(token)
                if token.len() <= ID_TOKEN_COOKIE_MAX
                    && token
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b)) =>
            {
                let ttl = self.config().session_ttl.as_secs().max(60);
                format!(
                    "{ID_TOKEN_COOKIE}={token}; Max-Age={ttl}{}",
                    self.cookie_attributes()
                )
            }
            _ => format!("{ID_TOKEN_COOKIE}=; Max-Age=0{}", self.cookie_attributes()),
        }
    }

    /// Whether cookies get `Secure` (the public URL is https).
    // Used by the sign-in through a provider only (feature `oidc`).
    #[cfg_attr(not(feature = "oidc"), allow(dead_code))]
    pub(crate) fn https(&self) -> bool {
        self.config()
            .public_url
            .as_deref()
            .is_some_and(|u| u.starts_with("https://"))
    }

    fn cookie_attributes(&self) -> &'static str {
        let https = self
            .config()
            .public_url
            .as_deref()
            .is_some_and(|u| u.starts_with("https://"));
        if https {
            "; Path=/board; HttpOnly; SameSite=Strict; Secure"
        } else {
            "; Path=/board; HttpOnly; SameSite=Strict"
        }
    }

    fn open_cookie(&self, value: &str) -> Option<Claims> {
        let (body, signature) = value.split_once('.')?;
        let body = URL_SAFE_NO_PAD.decode(body).ok()?;
        let signature = URL_SAFE_NO_PAD.decode(signature).ok()?;
        if !self.inner.keys.verify(&body, &signature) {
            return None;
        }
        let claims: Claims = serde_json::from_slice(&body).ok()?;
        let live = claims.e > chrono::Utc::now().timestamp();
        (live && !self.inner.keys.is_revoked(&claims.n)).then_some(claims)
    }

    /// Checks a pasted token (or bearer JWT, or OAuth access token) the way `/mcp`
    /// checks a bearer token.
    pub(crate) async fn authenticate(
        &self,
        token: &str,
    ) -> Result<mcp_tasks_server::auth::Identity, String> {
        use mcp_tasks_server::auth::Identity;
        match self.server().config().auth.authenticator() {
            None if self.config().oidc.is_some() => Err(format!(
                "this server takes no tokens: sign in with {}",
                self.config().oidc.as_ref().map_or("", |o| o.name.as_str())
            )),
            None => Ok(Identity::named(LOCAL_VIEWER)),
            Some(a) => {
                let token = token.trim();
                let token = token
                    .strip_prefix("Bearer ")
                    .or_else(|| token.strip_prefix("bearer "))
                    .unwrap_or(token)
                    .trim();
                a.identify(token).await.map_err(|e| e.0)
            }
        }
    }
}

/// The value of cookie `name` in the request's `Cookie` headers.
pub(crate) fn cookie<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v)
}

#[cfg(all(test, feature = "oidc"))]
mod renewal_tests;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cookies_are_found_among_others() {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::COOKIE,
            "a=1; mcp_tasks_board=xyz; b=2".parse().unwrap(),
        );
        assert_eq!(cookie(&headers, COOKIE), Some("xyz"));
        assert_eq!(cookie(&headers, "c"), None);
    }

    #[test]
    fn a_secret_gives_the_same_key_and_csrf_on_every_replica() {
        let a = Keys::new(Some(b"shared"));
        let b = Keys::new(Some(b"shared"));
        let c = Keys::new(Some(b"other"));
        assert_eq!(a.csrf("n1"), b.csrf("n1"));
        assert_ne!(a.csrf("n1"), a.csrf("n2"));
        assert_ne!(a.csrf("n1"), c.csrf("n1"));
        let signature = a.sign(b"body");
        assert!(b.verify(b"body", &signature));
        assert!(!c.verify(b"body", &signature));
        assert!(!a.verify(b"bodx", &signature));
    }
}

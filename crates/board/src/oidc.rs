//! Signing in to the board with an OpenID Connect provider (Okta, Entra ID, Google,
//! Keycloak, …): the configuration ([`OidcConfig`]) in every build, and (feature
//! `oidc`) the relying party itself: discovery, the authorization code flow with PKCE,
//! `state` and `nonce`, the ID token checked through the issuer's JWKS (fetched again
//! when the issuer rotates its keys), groups from the ID token or the userinfo
//! endpoint. The pages a person sees are in `oidc_pages`.

use mcp_tasks_protocol::Secret;
use std::time::Duration;

/// How the board authenticates to the provider's token endpoint.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum TokenAuth {
    /// HTTP Basic (`client_secret_basic`, the default of OpenID Connect).
    #[default]
    Basic,
    /// In the form (`client_secret_post`).
    Post,
}

/// How long a sign-in through the provider is trusted before it is renewed silently,
/// unless `refresh_after` says otherwise: ten minutes, so that a person removed from a
/// group at the provider loses what the group gave them within that time, at the cost
/// of one invisible round trip to the provider every ten minutes of use.
pub const DEFAULT_REFRESH_AFTER: Duration = Duration::from_secs(600);

/// `[board.oidc]`: the identity provider people sign in with.
#[derive(Debug, Clone)]
pub struct OidcConfig {
    /// The provider's name on the login page ("Sign in with NAME").
    pub name: String,
    /// The issuer (`https://login.example.com/realms/acme`); its
    /// `/.well-known/openid-configuration` names the endpoints.
    pub issuer: String,
    /// The board's client id at the provider.
    pub client_id: String,
    /// The client secret; `None` for a public client (PKCE only).
    pub client_secret: Option<Secret<String>>,
    /// How the secret is sent.
    pub token_auth: TokenAuth,
    /// Scopes asked for (`openid` is always added).
    pub scopes: Vec<String>,
    /// The claim naming the principal (`sub`, `email`, `preferred_username`, …).
    pub principal_claim: String,
    /// The claim holding the groups (from the ID token, else the userinfo endpoint).
    pub groups_claim: String,
    /// Where the provider sends people back: `{public URL}/board/oidc/callback`, to
    /// register at the provider.
    pub redirect_uri: String,
    /// Where the provider sends people after signing out: `{public URL}/board/login`.
    pub post_logout_redirect_uri: String,
    /// Clock skew allowed on the ID token's `exp`, `iat` and `nbf`.
    pub leeway: Duration,
    /// How long a sign-in is trusted before the board asks the provider again,
    /// silently (`prompt=none`): the person's groups are read again then, and a person
    /// the provider no longer signs in is sent to the login page. This is how long a
    /// person removed from a group (or from the provider) keeps what it gave them.
    /// `Duration::ZERO`: never before `session_ttl`.
    pub refresh_after: Duration,
}

impl OidcConfig {
    /// A configuration with the defaults: scopes `openid email profile`, principal
    /// `sub`, groups `groups`, one minute of leeway; `root` is where people reach the
    /// server (the redirect URIs hang from it).
    pub fn new(
        name: impl Into<String>,
        issuer: impl Into<String>,
        client_id: impl Into<String>,
        root: &str,
    ) -> Self {
        let root = root.trim_end_matches('/');
        OidcConfig {
            name: name.into(),
            issuer: issuer.into(),
            client_id: client_id.into(),
            client_secret: None,
            token_auth: TokenAuth::Basic,
            scopes: vec!["openid".into(), "email".into(), "profile".into()],
            principal_claim: "sub".into(),
            groups_claim: "groups".into(),
            redirect_uri: format!("{root}/board/oidc/callback"),
            post_logout_redirect_uri: format!("{root}/board/login"),
            leeway: Duration::from_secs(60),
            refresh_after: DEFAULT_REFRESH_AFTER,
        }
    }
}

#[cfg(feature = "oidc")]
pub(crate) use rp::*;

#[cfg(all(test, feature = "oidc"))]
mod tests;

#[cfg(feature = "oidc")]
mod rp {
    use super::{OidcConfig, TokenAuth};
    use mcp_tasks_server::auth::{discover, ClaimNames, Identity, ProviderMetadata, RemoteJwks};
    use serde::Deserialize;
    use serde_json::Value;

    /// Why a sign-in failed, in the words the error page shows.
    #[derive(Debug)]
    pub(crate) enum SignInError {
        /// The provider could not be reached or answered nonsense.
        ProviderDown(String),
        /// The person declined, or the provider refused the request.
        Refused(String),
        /// The ID token did not pass (signature, issuer, audience, nonce).
        BadToken(String),
        /// The ID token expired or is not valid yet: clocks differ.
        Clock(String),
        /// Signed in, but without a claim to name them by.
        NoPrincipal(String),
    }

    /// The relying party: the configuration, the provider's metadata and keys (fetched
    /// on first use, and again after a failure).
    #[derive(Debug)]
    pub(crate) struct Rp {
        pub(crate) config: OidcConfig,
        http: reqwest::Client,
        metadata: tokio::sync::OnceCell<ProviderMetadata>,
        jwks: tokio::sync::OnceCell<RemoteJwks>,
        /// Least time between two JWKS fetches for an unknown key; `None`: the
        /// default of [`RemoteJwks`].
        refetch_interval: Option<std::time::Duration>,
    }

    /// A silent sign-in (`prompt=none`): renewing a session without a page.
    #[derive(Debug, Clone, Copy)]
    pub(crate) struct Silent<'a> {
        /// The ID token of the sign-in being renewed, when the browser still has it.
        pub(crate) id_token_hint: Option<&'a str>,
    }

    /// A finished sign-in.
    #[derive(Debug)]
    pub(crate) struct SignedIn {
        /// Who signed in, with the provider's groups.
        pub(crate) identity: Identity,
        /// The verified ID token.
        pub(crate) id_token: String,
    }

    /// The token endpoint's answer.
    #[derive(Deserialize)]
    struct Tokens {
        id_token: Option<String>,
        access_token: Option<String>,
    }

    impl Rp {
        pub(crate) fn new(config: OidcConfig) -> Self {
            let http = reqwest::Client::builder()
                .timeout(std::time::Duration::from_secs(10))
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .unwrap_or_default();
            Rp {
                config,
                http,
                metadata: tokio::sync::OnceCell::new(),
                jwks: tokio::sync::OnceCell::new(),
                refetch_interval: None,
            }
        }

        /// The same relying party, fetching the JWKS again for an unknown key at most
        /// once per `interval` (tests rotate keys without waiting the default).
        #[cfg(test)]
        pub(crate) fn with_refetch_interval(mut self, interval: std::time::Duration) -> Self {
            self.refetch_interval = Some(interval);
            self
        }

        /// The provider's metadata.
        pub(crate) async fn metadata(&self) -> Result<&ProviderMetadata, SignInError> {
            self.metadata
                .get_or_try_init(|| async {
                    let meta = discover(&self.http, &self.config.issuer)
                        .await
                        .map_err(SignInError::ProviderDown)?;
                    if meta.authorization_endpoint.is_none() || meta.token_endpoint.is_none() {
                        return Err(SignInError::ProviderDown(
                            "its metadata names no authorization or token endpoint".into(),
                        ));
                    }
                    Ok(meta)
                })
                .await
        }

        async fn jwks(&self) -> Result<&RemoteJwks, SignInError> {
            let meta = self.metadata().await?;
            self.jwks
                .get_or_try_init(|| async {
                    let url = meta.jwks_uri.clone().ok_or_else(|| {
                        SignInError::ProviderDown("its metadata names no jwks_uri".into())
                    })?;
                    let jwks = RemoteJwks::new(url, self.http.clone());
                    Ok(match self.refetch_interval {
                        Some(interval) => jwks.with_refetch_interval(interval),
                        None => jwks,
                    })
                })
                .await
        }

        /// The provider's sign-in page for a new attempt.
        pub(crate) async fn authorization_url(
            &self,
            state: &str,
            nonce: &str,
            challenge: &str,
            silent: Option<Silent<'_>>,
        ) -> Result<String, SignInError> {
            let meta = self.metadata().await?;
            let endpoint = meta.authorization_endpoint.as_deref().unwrap_or_default();
            let mut scopes = vec!["openid".to_string()];
            for s in &self.config.scopes {
                if !scopes.contains(s) {
                    scopes.push(s.clone());
                }
            }
            let scope = scopes.join(" ");
            let mut params = vec![
                ("response_type", "code"),
                ("client_id", self.config.client_id.as_str()),
                ("redirect_uri", self.config.redirect_uri.as_str()),
                ("scope", scope.as_str()),
                ("state", state),
                ("nonce", nonce),
                ("code_challenge", challenge),
                ("code_challenge_method", "S256"),
            ];
            if let Some(silent) = silent {
                // OpenID Connect Core 3.1.2.1: no page for the person; the provider
                // answers `login_required` (or `interaction_required`) when it cannot
                // sign them in without one.
                params.push(("prompt", "none"));
                if let Some(hint) = silent.id_token_hint {
                    params.push(("id_token_hint", hint));
                }
            }
            let query = serde_urlencoded::to_string(&params).unwrap_or_default();
            let sep = if endpoint.contains('?') { '&' } else { '?' };
            Ok(format!("{endpoint}{sep}{query}"))
        }

        /// Exchanges `code` and checks the ID token: the person it names, with groups,
        /// and the ID token itself (sign-out and silent renewal send it back as
        /// `id_token_hint`).
        pub(crate) async fn finish(
            &self,
            code: &str,
            verifier: &str,
            nonce: &str,
        ) -> Result<SignedIn, SignInError> {
            let meta = self.metadata().await?;
            let endpoint = meta.token_endpoint.as_deref().unwrap_or_default();
            let mut form = vec![
                ("grant_type", "authorization_code"),
                ("code", code),
                ("redirect_uri", self.config.redirect_uri.as_str()),
                ("code_verifier", verifier),
            ];
            let mut request = self.http.post(endpoint);
            match (&self.config.client_secret, self.config.token_auth) {
                (Some(secret), TokenAuth::Basic) => {
                    request = request.basic_auth(
                        form_encode(&self.config.client_id),
                        Some(form_encode(secret.expose())),
                    );
                }
                (Some(secret), TokenAuth::Post) => {
                    form.push(("client_id", self.config.client_id.as_str()));
                    form.push(("client_secret", secret.expose().as_str()));
                }
                (None, _) => form.push(("client_id", self.config.client_id.as_str())),
            }
            let response = request.form(&form).send().await.map_err(|e| {
                SignInError::ProviderDown(format!("its token endpoint is unreachable ({e})"))
            })?;
            let status = response.status();
            let body: Value = response.json().await.map_err(|e| {
                SignInError::ProviderDown(format!("its token endpoint answered no JSON ({e})"))
            })?;
            if !status.is_success() {
                return Err(SignInError::Refused(format!(
                    "the provider did not accept the sign-in code: {} {}",
                    body["error"].as_str().unwrap_or("error"),
                    body["error_description"].as_str().unwrap_or("")
                )));
            }
            let tokens: Tokens = serde_json::from_value(body).map_err(|e| {
                SignInError::ProviderDown(format!("its token answer is malformed ({e})"))
            })?;
            let id_token = tokens.id_token.ok_or_else(|| {
                SignInError::BadToken(
                    "the provider sent no ID token (is 'openid' a scope of this client?)".into(),
                )
            })?;
            let jwks = self.jwks().await?;
            let mut claims = jwks
                .verify(
                    &id_token,
                    self.config.issuer.trim_end_matches('/'),
                    &self.config.client_id,
                    self.config.leeway,
                )
                .await
                .map_err(|e| {
                    if e.0.contains("expired") || e.0.contains("not valid yet") {
                        SignInError::Clock(e.0)
                    } else {
                        SignInError::BadToken(e.0)
                    }
                })?;
            if claims["nonce"].as_str() != Some(nonce) {
                return Err(SignInError::BadToken(
                    "the ID token's nonce is not the one this sign-in sent (a replayed token?)"
                        .into(),
                ));
            }
            if let Some(iat) = claims["iat"].as_i64() {
                let skew = i64::try_from(self.config.leeway.as_secs()).unwrap_or(60);
                if iat > chrono::Utc::now().timestamp() + skew {
                    return Err(SignInError::Clock(
                        "the ID token was issued in the future (iat)".into(),
                    ));
                }
            }
            // Groups (or the principal's claim) the ID token lacks: from userinfo.
            let lacks = |c: &Value, name: &str| c.get(name).is_none();
            if (lacks(&claims, &self.config.groups_claim)
                || lacks(&claims, &self.config.principal_claim))
                && meta.userinfo_endpoint.is_some()
            {
                if let (Some(url), Some(access)) = (&meta.userinfo_endpoint, &tokens.access_token) {
                    if let Some(info) = self.userinfo(url, access).await {
                        if info["sub"] == claims["sub"] {
                            for (k, v) in info.as_object().into_iter().flatten() {
                                if claims.get(k).is_none() {
                                    claims[k] = v.clone();
                                }
                            }
                        }
                    }
                }
            }
            let names = ClaimNames {
                principal: self.config.principal_claim.clone(),
                groups: self.config.groups_claim.clone(),
            };
            let identity = names
                .identity(&claims)
                .map_err(|_| SignInError::NoPrincipal(self.config.principal_claim.clone()))?;
            Ok(SignedIn { identity, id_token })
        }

        async fn userinfo(&self, url: &str, access_token: &str) -> Option<Value> {
            let response = self
                .http
                .get(url)
                .bearer_auth(access_token)
                .send()
                .await
                .map_err(|e| tracing::warn!(error = %e, "the userinfo endpoint is unreachable"))
                .ok()?;
            if !response.status().is_success() {
                tracing::warn!(status = %response.status(), "the userinfo endpoint refused");
                return None;
            }
            response.json().await.ok()
        }

        /// Where sign-out goes at the provider, when it offers RP-initiated logout;
        /// `id_token_hint` is the ID token of the sign-in (Okta requires it, others use
        /// it to skip asking which account to sign out).
        pub(crate) async fn end_session_url(&self, id_token_hint: Option<&str>) -> Option<String> {
            let meta = self.metadata().await.ok()?;
            let endpoint = meta.end_session_endpoint.as_deref()?;
            let mut params = vec![
                ("client_id", self.config.client_id.as_str()),
                (
                    "post_logout_redirect_uri",
                    self.config.post_logout_redirect_uri.as_str(),
                ),
            ];
            if let Some(hint) = id_token_hint {
                params.push(("id_token_hint", hint));
            }
            let query = serde_urlencoded::to_string(&params).ok()?;
            let sep = if endpoint.contains('?') { '&' } else { '?' };
            Some(format!("{endpoint}{sep}{query}"))
        }
    }

    /// `application/x-www-form-urlencoded` of a Basic credential part (RFC 6749 2.3.1).
    fn form_encode(text: &str) -> String {
        serde_urlencoded::to_string([("", text)])
            .map(|s| s.trim_start_matches('=').to_string())
            .unwrap_or_default()
    }
}

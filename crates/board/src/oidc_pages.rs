//! The pages of signing in with an identity provider (feature `oidc`):
//! `/board/oidc/start` (off to the provider, with `state`, `nonce` and a PKCE
//! verifier kept in a short-lived signed cookie), `/board/oidc/callback` (back, the
//! code exchanged, the session cookie set), and the pages a person meets when
//! something goes wrong. The login page's button and sign-out are in `pages`.

#[cfg(feature = "oidc")]
pub(crate) use flow::{callback, start};

#[cfg(feature = "oidc")]
mod flow {
    use axum::extract::{Query, State};
    use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
    use axum::response::{IntoResponse, Redirect, Response};
    use base64::engine::general_purpose::URL_SAFE_NO_PAD;
    use base64::Engine as _;
    use rand::RngCore;
    use serde::{Deserialize, Serialize};
    use sha2::{Digest, Sha256};
    use subtle::ConstantTimeEq;

    use crate::html::escape;
    use crate::oidc::{SignInError, SignedIn, Silent};
    use crate::pages::{after_login, link_page};
    use crate::viewer::ID_TOKEN_COOKIE;
    use crate::Board;

    /// The cookie that carries one sign-in attempt to the callback.
    const ATTEMPT_COOKIE: &str = "mcp_tasks_oidc";
    /// The purpose its signature is made for.
    const ATTEMPT: &[u8] = b"oidc attempt";
    /// How long a person has at the provider.
    const ATTEMPT_TTL: i64 = 600;

    /// One sign-in attempt: what the callback must find again.
    #[derive(Serialize, Deserialize)]
    struct Attempt {
        /// `state`.
        s: String,
        /// `nonce`.
        n: String,
        /// The PKCE verifier.
        v: String,
        /// The board page to go back to.
        b: String,
        /// Expiry, Unix seconds.
        e: i64,
        /// A silent renewal (`prompt=none`) rather than a sign-in with pages.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        q: bool,
    }

    fn random() -> String {
        let mut bytes = [0u8; 32];
        rand::thread_rng().fill_bytes(&mut bytes);
        URL_SAFE_NO_PAD.encode(bytes)
    }

    fn attempt_cookie(board: &Board, value: &str, max_age: i64) -> String {
        // Lax, not Strict: the provider's redirect back is a navigation from its site.
        format!(
            "{ATTEMPT_COOKIE}={value}; Max-Age={max_age}; Path=/board/oidc; HttpOnly; SameSite=Lax{}",
            if board.https() { "; Secure" } else { "" }
        )
    }

    /// A page saying what went wrong at sign-in and what to do, with a way back.
    fn problem(board: &Board, status: StatusCode, title: &str, what: &str, todo: &str) -> Response {
        let name = board
            .config()
            .oidc
            .as_ref()
            .map_or("your identity provider", |o| o.name.as_str());
        let body = format!(
            "<main class=\"narrow\"><h1>{}</h1><p class=\"error\" role=\"alert\">{}</p><p>{}</p>\
             <p><a class=\"button primary\" href=\"/board/oidc/start\">Sign in with {} again</a> \
             <a href=\"/board/login\">Other ways to sign in</a></p></main>",
            escape(title),
            escape(what),
            escape(todo),
            escape(name)
        );
        let mut response = link_page(status, title, &body);
        if let Ok(clear) = HeaderValue::from_str(&attempt_cookie(board, "", 0)) {
            response.headers_mut().append(header::SET_COOKIE, clear);
        }
        response
    }

    fn sign_in_problem(board: &Board, error: SignInError) -> Response {
        let (status, title, what, todo) = match error {
            SignInError::ProviderDown(why) => (
                StatusCode::BAD_GATEWAY,
                "The identity provider cannot be reached",
                format!("Signing in needs the identity provider, and it did not answer as expected: {why}."),
                "Try again in a minute. If it keeps failing, tell whoever runs this server (the issuer in [board.oidc] may be wrong or down).".to_string(),
            ),
            SignInError::Refused(why) => (
                StatusCode::FORBIDDEN,
                "Sign-in was not completed",
                why,
                "If you declined, sign in again and allow access. If the provider refused, ask its administrators to give you access to this application.".to_string(),
            ),
            SignInError::BadToken(why) => (
                StatusCode::UNAUTHORIZED,
                "Your sign-in could not be verified",
                format!("The identity provider's answer did not pass the checks: {why}."),
                "Sign in again. If it keeps failing, tell whoever runs this server: the client id or issuer in [board.oidc] may not match the provider's.".to_string(),
            ),
            SignInError::Clock(why) => (
                StatusCode::UNAUTHORIZED,
                "Your sign-in arrived out of time",
                format!("The identity provider's token was not valid at this server's time: {why}."),
                "Sign in again. If it keeps failing, this server's clock (or the provider's) is wrong: tell whoever runs it to check its time synchronisation.".to_string(),
            ),
            SignInError::NoPrincipal(claim) => (
                StatusCode::FORBIDDEN,
                "Signed in, but without a name here",
                format!("The identity provider signed you in but sent no '{claim}' claim, which this board names people by."),
                format!("Ask whoever runs this server to have the provider send '{claim}' (or to set principal_claim in [board.oidc] to a claim it sends)."),
            ),
        };
        tracing::info!(target: "mcp_tasks::audit", event = "board_login_refused", via = "oidc", reason = %what, "board sign-in refused");
        problem(board, status, title, &what, &todo)
    }

    /// `?next=` of the start, and `renew=1` for a silent renewal.
    #[derive(Debug, Deserialize)]
    pub(crate) struct Start {
        #[serde(default)]
        next: Option<String>,
        #[serde(default)]
        renew: Option<String>,
    }

    /// `GET /board/oidc/start`: off to the provider's sign-in page, or (`renew=1`,
    /// where a page whose session is due for renewal sends the person) to its
    /// authorization endpoint with `prompt=none`, which comes straight back.
    pub(crate) async fn start(
        State(board): State<Board>,
        headers: HeaderMap,
        Query(start): Query<Start>,
    ) -> Response {
        if let Err(refused) = board.check_origin(&headers) {
            return link_page(refused.status, "Task board", &escape(&refused.message));
        }
        let Some(rp) = &board.inner.oidc else {
            return Redirect::to("/board/login").into_response();
        };
        let silent = start.renew.as_deref().is_some_and(|r| r == "1");
        let attempt = Attempt {
            s: random(),
            n: random(),
            v: random(),
            b: after_login(start.next.as_deref()).to_string(),
            e: chrono::Utc::now().timestamp() + ATTEMPT_TTL,
            q: silent,
        };
        let challenge = URL_SAFE_NO_PAD.encode(Sha256::digest(attempt.v.as_bytes()));
        let silent = silent.then(|| Silent {
            id_token_hint: crate::viewer::cookie(&headers, ID_TOKEN_COOKIE)
                .filter(|t| !t.is_empty()),
        });
        let url = match rp
            .authorization_url(&attempt.s, &attempt.n, &challenge, silent)
            .await
        {
            Ok(url) => url,
            Err(e) => return sign_in_problem(&board, e),
        };
        let sealed = board.inner.keys.seal(ATTEMPT, &attempt);
        let mut response = Redirect::to(&url).into_response();
        if let Ok(cookie) = HeaderValue::from_str(&attempt_cookie(&board, &sealed, ATTEMPT_TTL)) {
            response.headers_mut().insert(header::SET_COOKIE, cookie);
        }
        response
    }

    /// What the provider sends back.
    #[derive(Debug, Deserialize)]
    pub(crate) struct Callback {
        #[serde(default)]
        code: Option<String>,
        #[serde(default)]
        state: Option<String>,
        #[serde(default)]
        error: Option<String>,
        #[serde(default)]
        error_description: Option<String>,
    }

    /// `GET /board/oidc/callback`: the code checked against the attempt, exchanged,
    /// the ID token verified, the session cookie set.
    pub(crate) async fn callback(
        State(board): State<Board>,
        headers: HeaderMap,
        Query(back): Query<Callback>,
    ) -> Response {
        if let Err(refused) = board.check_origin(&headers) {
            return link_page(refused.status, "Task board", &escape(&refused.message));
        }
        let Some(rp) = &board.inner.oidc else {
            return Redirect::to("/board/login").into_response();
        };
        let attempt: Option<Attempt> = crate::viewer::cookie(&headers, ATTEMPT_COOKIE)
            .and_then(|value| board.inner.keys.open(ATTEMPT, value))
            .filter(|a: &Attempt| a.e > chrono::Utc::now().timestamp());
        let Some(attempt) = attempt else {
            return problem(
                &board,
                StatusCode::BAD_REQUEST,
                "Sign-in expired",
                "This sign-in was started too long ago, in another browser, or already finished.",
                "Start again from the board.",
            );
        };
        let state_matches = back
            .state
            .as_deref()
            .is_some_and(|s| bool::from(s.as_bytes().ct_eq(attempt.s.as_bytes())));
        if !state_matches {
            return problem(
                &board,
                StatusCode::BAD_REQUEST,
                "Sign-in did not match",
                "The answer from the identity provider does not belong to the sign-in this browser started (state mismatch).",
                "Start again from the board; if a link brought you here, do not trust it.",
            );
        }
        if let Some(error) = back.error {
            if attempt.q && SILENT_REFUSALS.contains(&error.as_str()) {
                return renewal_refused(&board, &attempt, &error);
            }
            let what = match error.as_str() {
                "access_denied" => "Access was declined at the identity provider.".to_string(),
                _ => format!(
                    "The identity provider refused the sign-in: {error}{}",
                    back.error_description
                        .map(|d| format!(" ({d})"))
                        .unwrap_or_default()
                ),
            };
            return sign_in_problem(&board, SignInError::Refused(what));
        }
        let Some(code) = back.code else {
            return sign_in_problem(
                &board,
                SignInError::Refused("the identity provider sent no code".into()),
            );
        };
        let SignedIn { identity, id_token } = match rp.finish(&code, &attempt.v, &attempt.n).await {
            Ok(signed) => signed,
            Err(e) => return sign_in_problem(&board, e),
        };
        tracing::info!(
            target: "mcp_tasks::audit",
            event = if attempt.q { "board_session_renewed" } else { "board_login" },
            via = "oidc",
            principal = %identity.principal,
            groups = %identity.groups.join(","),
            "board sign-in"
        );
        let cookie = board.login_cookie_with(&identity.principal, identity.groups, true);
        // A page of this origin moves on to the board: a redirect straight from the
        // provider's navigation would not carry the SameSite=Strict session cookie.
        let target = escape(&attempt.b);
        let body = format!(
            "<main class=\"narrow\"><h1>Signed in</h1><p>Signed in as {}. \
             <a id=\"continue\" href=\"{target}\">Continue to the board</a></p></main>",
            escape(&identity.principal)
        );
        let mut response = crate::pages::page(
            StatusCode::OK,
            crate::pages::shell(
                "Signed in · Task board",
                &body,
                &format!("<meta http-equiv=\"refresh\" content=\"0;url={target}\">\n"),
            ),
        );
        let headers = response.headers_mut();
        if let Ok(v) = HeaderValue::from_str(&cookie) {
            headers.append(header::SET_COOKIE, v);
        }
        if let Ok(v) = HeaderValue::from_str(&board.id_token_cookie(Some(&id_token))) {
            headers.append(header::SET_COOKIE, v);
        }
        if let Ok(v) = HeaderValue::from_str(&attempt_cookie(&board, "", 0)) {
            headers.append(header::SET_COOKIE, v);
        }
        response
    }

    /// The errors with which a provider declines a silent sign-in (OpenID Connect Core
    /// 3.1.2.6): the person must see one of its pages, so the session ends here.
    const SILENT_REFUSALS: [&str; 4] = [
        "login_required",
        "interaction_required",
        "consent_required",
        "account_selection_required",
    ];

    /// A silent renewal the provider declined: the session ends (its cookies cleared)
    /// and the person lands on the login page, which says why and brings them back.
    fn renewal_refused(board: &Board, attempt: &Attempt, error: &str) -> Response {
        tracing::info!(
            target: "mcp_tasks::audit",
            event = "board_session_ended",
            via = "oidc",
            reason = %error,
            "board session not renewed: the identity provider asks the person to sign in"
        );
        let name = board
            .config()
            .oidc
            .as_ref()
            .map_or("your identity provider", |o| o.name.as_str());
        let notice = format!("Your session has ended: {name} asks you to sign in again ({error}).");
        let mut response = crate::pages::login_page(
            board,
            StatusCode::UNAUTHORIZED,
            Some(&notice),
            Some(&attempt.b),
        );
        let headers = response.headers_mut();
        for cookie in [
            board.ended_session_cookie(),
            board.id_token_cookie(None),
            attempt_cookie(board, "", 0),
        ] {
            if let Ok(v) = HeaderValue::from_str(&cookie) {
                headers.append(header::SET_COOKIE, v);
            }
        }
        response
    }
}

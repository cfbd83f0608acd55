//! The HTML the board serves: the page shell (the same for the list and for a task's
//! link), the login form, and the embedded assets. The assets are compiled into the
//! binary (`include_str!`): nothing is fetched from anywhere else.

use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode, Uri};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::Form;
use serde::Deserialize;

use crate::api::{detail_json, list_page, ListQuery};
use crate::detail_html;
use crate::html::escape;
use crate::list_html;
use crate::viewer::{Refused, Viewer};
use crate::Board;

const BOARD_JS: &str = include_str!("../assets/board.js");
const PEOPLE_JS: &str = include_str!("../assets/people.js");
const BOARD_CSS: &str = include_str!("../assets/board.css");
const CONSOLE_JS: &str = include_str!("../assets/console.js");
/// The board's icon (also served at `/favicon.ico`): embedded, like every asset.
pub(crate) const ICON_SVG: &str = include_str!("../assets/icon.svg");

/// The policy every board page is served under: scripts, styles and connections only
/// from this server, images also inline (results may carry base64 images), no framing.
const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

pub(crate) fn page(status: StatusCode, html: String) -> Response {
    let mut response = (status, Html(html)).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    // Not `no-referrer`: under it Chromium posts the page's own forms (the login) with
    // `Origin: null`, which the Origin check must refuse.
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("same-origin"),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    response
}

pub(crate) fn shell(title: &str, body: &str, meta: &str) -> String {
    format!(
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n{meta}\
         <title>{title}</title>\n<link rel=\"icon\" href=\"/board/assets/icon.svg\" type=\"image/svg+xml\">\n\
         <link rel=\"stylesheet\" href=\"/board/assets/board.css\">\n\
         </head>\n<body>\n{body}\n</body>\n</html>\n"
    )
}

/// A page of an answer link ([`crate::link_pages`]): the board's stylesheet and
/// headers, no script.
pub(crate) fn link_page(status: StatusCode, title: &str, body: &str) -> Response {
    page(
        status,
        shell(&format!("{} · mcp-tasks", escape(title)), body, ""),
    )
}

/// `GET /board`: the page, with the first page of the list rendered here (filtered by
/// the query, as the filter form submits it without a script); the script refreshes it
/// live and reads the rest.
pub(crate) async fn board(
    State(board): State<Board>,
    headers: HeaderMap,
    uri: Uri,
    Query(query): Query<ListQuery>,
) -> Response {
    render(&board, &headers, &uri, &query, None).await
}

/// `GET /board/tasks/{id}`: the same page with the task's detail rendered too (a link
/// that works without JavaScript; the script opens its live pane over it).
pub(crate) async fn task_page(
    State(board): State<Board>,
    headers: HeaderMap,
    uri: Uri,
    Path(id): Path<String>,
    Query(query): Query<ListQuery>,
) -> Response {
    render(&board, &headers, &uri, &query, Some(id)).await
}

/// Where the login page sends a person back to once logged in: the board page they
/// asked for (`next`), when it is one of the board's own pages; else the list. Only a
/// path under `/board` is followed, so a crafted link cannot send anyone elsewhere.
pub(crate) fn after_login(next: Option<&str>) -> &str {
    match next {
        Some(next)
            if (next == "/board" || next.starts_with("/board/") || next.starts_with("/board?"))
                && !next.contains("//")
                && !next.contains('\\')
                && !next.starts_with("/board/login")
                && !next.chars().any(char::is_control) =>
        {
            next
        }
        _ => "/board",
    }
}

/// The login page's address that brings a person back to `uri` afterwards.
pub(crate) fn login_for(uri: &Uri) -> String {
    let back = uri.path_and_query().map_or("/board", |p| p.as_str());
    match serde_urlencoded::to_string([("next", back)]) {
        Ok(query) if after_login(Some(back)) != "/board" => format!("/board/login?{query}"),
        _ => "/board/login".to_string(),
    }
}

/// The board page for `headers`' viewer: the list (as `query` filters it) and, for a
/// task's link, its detail.
async fn render(
    board: &Board,
    headers: &HeaderMap,
    uri: &Uri,
    query: &ListQuery,
    task: Option<String>,
) -> Response {
    let viewer = match board.viewer(headers) {
        Ok(viewer) => viewer,
        // Logged out: the login page, which brings the person back here afterwards
        // (a notification's link to a task lands on that task, not on the list).
        Err(refused) if refused.status == StatusCode::UNAUTHORIZED => {
            // A sign-in due for renewal goes to the provider silently (the groups
            // read again); without token login, a person signed out goes straight to
            // the provider's sign-in page.
            return Redirect::to(&renew_or_login(board, uri, refused.renew)).into_response();
        }
        Err(refused) => return page(refused.status, error_page(&refused.message)),
    };
    let operator = viewer.caller.operator;
    let show_owner = board.shows_owner(&viewer);
    let has_detail = task.is_some();
    let detail = match task {
        None => "<section id=\"detail-pane\" hidden></section>".to_string(),
        Some(id) => match detail_json(board, &viewer, id).await {
            Ok(task) => format!(
                "<section id=\"detail-pane\">{}</section>",
                detail_html::pane(&task)
            ),
            Err(refused) => format!(
                "<section id=\"detail-pane\"><p class=\"error\">{}</p></section>",
                escape(&refused.message)
            ),
        },
    };
    let (rows, more, live) = match list_page(board, &viewer, query).await {
        Ok(list) => {
            let more = list.next_cursor.map(|cursor| {
                let mut next = vec![("cursor", cursor)];
                for (name, value) in [
                    ("status", &query.status),
                    ("tool", &query.tool),
                    ("q", &query.q),
                ] {
                    if let Some(v) = ListQuery::field(value) {
                        next.push((name, v));
                    }
                }
                let encoded = serde_urlencoded::to_string(&next).unwrap_or_default();
                format!(
                    "<a id=\"older\" href=\"/board?{}\">Older tasks</a>",
                    escape(&encoded)
                )
            });
            (
                list_html::rows(&list.tasks, show_owner),
                more.unwrap_or_default(),
                "<p id=\"live\" class=\"live\">as of page load</p>".to_string(),
            )
        }
        Err(refused) => (
            list_html::rows(&[], show_owner),
            String::new(),
            format!(
                "<p id=\"live\" class=\"live bad\" role=\"alert\">could not load tasks: {}</p>",
                escape(&refused.message)
            ),
        ),
    };
    let counts = crate::console::counts_json(board, &viewer, query)
        .await
        .ok();
    let tabs = list_html::tabs(
        &ListQuery::field(&query.status).unwrap_or_default(),
        &ListQuery::field(&query.tool).unwrap_or_default(),
        &ListQuery::field(&query.q).unwrap_or_default(),
        counts.as_ref(),
    );
    // Operators cancel what a filter shows; the script fills in the count and shows it.
    let bulk = if operator {
        "<div id=\"bulk\"><button type=\"button\" id=\"bulk-cancel\" class=\"danger\" hidden>Cancel all shown</button>\
         <p id=\"bulk-result\" class=\"meta\" role=\"status\" hidden></p></div>"
    } else {
        ""
    };
    let who = escape(&viewer.caller.principal);
    let role = if operator {
        " <span class=\"role\">operator</span>"
    } else {
        ""
    };
    let logout = if viewer.logged_in {
        format!(
            "<form method=\"post\" action=\"/board/logout\" id=\"logout\"><input type=\"hidden\" name=\"csrf\" value=\"{}\"><button type=\"submit\">Log out</button></form>",
            escape(&viewer.csrf)
        )
    } else {
        String::new()
    };
    let meta = format!(
        "<meta name=\"csrf-token\" content=\"{}\">\n<meta name=\"operator\" content=\"{}\">\n<meta name=\"show-owner\" content=\"{}\">\n",
        escape(&viewer.csrf),
        operator,
        show_owner
    );
    let chosen = ListQuery::field(&query.status).unwrap_or_default();
    let options: String = [
        ("", "any status"),
        ("working", "working"),
        ("input_required", "input required"),
        ("completed", "completed"),
        ("failed", "failed"),
        ("cancelled", "cancelled"),
    ]
    .iter()
    .map(|(value, label)| {
        let selected = if *value == chosen { " selected" } else { "" };
        format!("<option value=\"{value}\"{selected}>{label}</option>")
    })
    .collect();
    let value = |v: &Option<String>| escape(&ListQuery::field(v).unwrap_or_default());
    let body = format!(
        "<header><h1><a href=\"/board\">Tasks</a></h1><div class=\"who\">{who}{role}{logout}</div></header>\n\
         <main{main_class}>\n<section id=\"list-pane\">\n{tabs}\n<form id=\"filters\" method=\"get\" action=\"/board\">\
         <select name=\"status\" id=\"filter-status\" aria-label=\"Status\">{options}</select>\
         <input name=\"tool\" id=\"filter-tool\" placeholder=\"tool\" aria-label=\"Tool\" value=\"{tool}\">\
         <input name=\"q\" id=\"filter-q\" placeholder=\"task id\" aria-label=\"Search by task id\" value=\"{q}\">\
         <button type=\"submit\">Filter</button></form>\n\
         {bulk}{live}\n\
         <table id=\"tasks\"><thead><tr><th>status</th><th>tool</th><th>message / progress</th>\
         <th class=\"time created\">created</th><th class=\"time updated\">updated</th>{owner}</tr></thead><tbody>{rows}</tbody></table>\n\
         <noscript><p class=\"hint\">This list is as of page load: reload for news, or \
         turn JavaScript on for live updates, questions and cancelling.</p>{more}</noscript>\n\
         <button id=\"more\" hidden>Older tasks</button>\n</section>\n\
         {detail}\n</main>\n\
         <script src=\"/board/assets/board.js\"></script>\
         <script src=\"/board/assets/people.js\"></script>\
         <script src=\"/board/assets/console.js\"></script>",
        tool = value(&query.tool),
        q = value(&query.q),
        main_class = if has_detail { " class=\"with-detail\"" } else { "" },
        owner = if show_owner { "<th class=\"owner\">owner</th>" } else { "" },
    );
    page(StatusCode::OK, shell("Tasks · mcp-tasks", &body, &meta))
}

/// The login page's "Sign in with NAME" button (empty without a provider).
pub(crate) fn sign_in_button(board: &Board, next: &str) -> String {
    if !cfg!(feature = "oidc") {
        return String::new();
    }
    let Some(oidc) = &board.config().oidc else {
        return String::new();
    };
    let start = match next {
        "/board" => "/board/oidc/start".to_string(),
        next => format!(
            "/board/oidc/start?{}",
            serde_urlencoded::to_string([("next", next)]).unwrap_or_default()
        ),
    };
    format!(
        "<p><a class=\"button primary\" id=\"sso\" href=\"{}\">Sign in with {}</a></p>",
        escape(&start),
        escape(&oidc.name)
    )
}

/// Where a person without a usable session goes: a sign-in due for renewal to the
/// provider silently (`renew`: `prompt=none`, back at once with the groups read again,
/// or to the login page if the provider wants the person to sign in); a person signed
/// out straight to the provider's sign-in page when token login is off; else the login
/// page.
pub(crate) fn renew_or_login(board: &Board, uri: &Uri, renew: bool) -> String {
    let login = login_for(uri);
    let oidc = cfg!(feature = "oidc") && board.config().oidc.is_some();
    if oidc && renew {
        let start = login.replacen("/board/login", "/board/oidc/start", 1);
        let sep = if start.contains('?') { '&' } else { '?' };
        format!("{start}{sep}renew=1")
    } else if oidc && !board.config().token_login {
        login.replacen("/board/login", "/board/oidc/start", 1)
    } else {
        login
    }
}

/// Where logging out sends `viewer`: the provider's end-session endpoint when they
/// signed in there and it offers one (with the sign-in's ID token as `id_token_hint`
/// when the browser kept it), else the login page.
pub(crate) async fn after_logout(board: &Board, viewer: &Viewer, headers: &HeaderMap) -> String {
    #[cfg(feature = "oidc")]
    if viewer.via_oidc {
        if let Some(rp) = &board.inner.oidc {
            let hint = crate::viewer::cookie(headers, crate::viewer::ID_TOKEN_COOKIE)
                .filter(|t| !t.is_empty());
            if let Some(url) = rp.end_session_url(hint).await {
                return url;
            }
        }
    }
    let _ = (board, viewer, headers);
    "/board/login".to_string()
}

pub(crate) fn error_page(message: &str) -> String {
    shell(
        "Task board",
        &format!(
            "<main class=\"narrow\"><h1>Task board</h1><p class=\"error\">{}</p></main>",
            escape(message)
        ),
        "",
    )
}

pub(crate) fn login_page(
    board: &Board,
    status: StatusCode,
    problem: Option<&str>,
    next: Option<&str>,
) -> Response {
    let problem = problem
        .map(|p| format!("<p class=\"error\" role=\"alert\">{}</p>", escape(p)))
        .unwrap_or_default();
    let sso = sign_in_button(board, after_login(next));
    let next = match after_login(next) {
        "/board" => String::new(),
        back => format!(
            "<input type=\"hidden\" name=\"next\" id=\"next\" value=\"{}\">",
            escape(back)
        ),
    };
    let token_form = if board.config().token_login {
        format!(
            "<form method=\"post\" action=\"/board/login\" id=\"login\">{next}\
             <label for=\"token\">Token (or bearer JWT)</label>\
             <input type=\"password\" name=\"token\" id=\"token\" autocomplete=\"off\" required{autofocus}>\
             <button type=\"submit\">Log in</button></form>\
             <p class=\"hint\">Paste the token you use with this server. It is checked once; the \
             browser keeps only a signed session cookie.</p>",
            autofocus = if sso.is_empty() { " autofocus" } else { "" }
        )
    } else {
        String::new()
    };
    let body =
        format!("<main class=\"narrow\"><h1>Task board</h1>{problem}{sso}{token_form}</main>");
    page(status, shell("Log in · Task board", &body, ""))
}

/// `GET /board/login`.
pub(crate) async fn login_form(
    State(board): State<Board>,
    Query(back): Query<NextPage>,
) -> Response {
    if !board.needs_login() {
        return Redirect::to(after_login(back.next.as_deref())).into_response();
    }
    login_page(&board, StatusCode::OK, None, back.next.as_deref())
}

/// The page to go back to after logging in (`?next=`).
#[derive(Debug, Deserialize)]
pub(crate) struct NextPage {
    #[serde(default)]
    next: Option<String>,
}

/// The login form's fields.
#[derive(Debug, Deserialize)]
pub(crate) struct LoginForm {
    token: String,
    /// The board page to go back to (see [`after_login`]).
    #[serde(default)]
    next: Option<String>,
}

/// `POST /board/login`: checks the token once and sets the session cookie.
pub(crate) async fn login(
    State(board): State<Board>,
    headers: HeaderMap,
    Form(form): Form<LoginForm>,
) -> Response {
    if let Err(refused) = board.check_origin(&headers) {
        return page(refused.status, error_page(&refused.message));
    }
    let back = after_login(form.next.as_deref());
    if !board.needs_login() {
        return Redirect::to(back).into_response();
    }
    if !board.config().token_login {
        return login_page(
            &board,
            StatusCode::FORBIDDEN,
            Some("Token login is off on this board: sign in with your identity provider."),
            form.next.as_deref(),
        );
    }
    match board.authenticate(&form.token).await {
        Ok(identity) => {
            let principal = identity.principal;
            tracing::info!(target: "mcp_tasks::audit", event = "board_login", via = "token", principal = %principal, "board login");
            let mut response = Redirect::to(back).into_response();
            if let Ok(cookie) =
                HeaderValue::from_str(&board.login_cookie_with(&principal, identity.groups, false))
            {
                response.headers_mut().insert(header::SET_COOKIE, cookie);
            }
            response
        }
        Err(reason) => {
            tracing::info!(target: "mcp_tasks::audit", event = "board_login_refused", reason = %reason, "board login refused");
            login_page(
                &board,
                StatusCode::UNAUTHORIZED,
                Some(&format!("That token was not accepted ({reason}).")),
                form.next.as_deref(),
            )
        }
    }
}

/// The logout form's fields: the CSRF token travels in the form, as a form cannot set
/// headers.
#[derive(Debug, Deserialize)]
pub(crate) struct LogoutForm {
    #[serde(default)]
    csrf: String,
}

/// `POST /board/logout`: ends the login and clears the cookie.
pub(crate) async fn logout(
    State(board): State<Board>,
    mut headers: HeaderMap,
    Form(form): Form<LogoutForm>,
) -> Response {
    if let Ok(value) = HeaderValue::from_str(&form.csrf) {
        headers.entry(crate::viewer::CSRF_HEADER).or_insert(value);
    }
    let viewer = match board.acting_viewer(&headers) {
        Ok(viewer) => viewer,
        Err(refused) => return page(refused.status, error_page(&refused.message)),
    };
    tracing::info!(target: "mcp_tasks::audit", event = "board_logout", via = if viewer.via_oidc { "oidc" } else { "token" }, principal = %viewer.caller.principal, "board logout");
    let target = after_logout(&board, &viewer, &headers).await;
    let mut response = if target.starts_with("/board") {
        Redirect::to(&target).into_response()
    } else {
        // The provider's end-session page: a page of ours moves on to it, as the
        // board's `form-action 'self'` forbids a form's redirect to another site.
        let target = escape(&target);
        page(
            StatusCode::OK,
            shell(
                "Signed out · Task board",
                &format!(
                    "<main class=\"narrow\"><h1>Signed out of the board</h1>\
                     <p><a id=\"continue\" href=\"{target}\">Sign out at the identity provider too</a></p></main>"
                ),
                &format!("<meta http-equiv=\"refresh\" content=\"0;url={target}\">\n"),
            ),
        )
    };
    if let Ok(cookie) = HeaderValue::from_str(&board.logout_cookie(&viewer)) {
        response.headers_mut().insert(header::SET_COOKIE, cookie);
    }
    if viewer.via_oidc {
        if let Ok(cookie) = HeaderValue::from_str(&board.id_token_cookie(None)) {
            response.headers_mut().append(header::SET_COOKIE, cookie);
        }
    }
    response
}

/// `GET /favicon.ico`: the board's icon (an SVG, which browsers take at this address
/// too), so a browser's first request to the server is not a 404.
pub(crate) async fn favicon() -> Response {
    (
        [
            (header::CONTENT_TYPE, "image/svg+xml"),
            (header::CACHE_CONTROL, "max-age=86400"),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        ],
        ICON_SVG,
    )
        .into_response()
}

/// `GET /board/assets/{file}`: the scripts, the style sheet and the icon.
pub(crate) async fn asset(Path(file): Path<String>) -> Response {
    let (body, kind) = match file.as_str() {
        "board.js" => (BOARD_JS, "text/javascript; charset=utf-8"),
        "people.js" => (PEOPLE_JS, "text/javascript; charset=utf-8"),
        "board.css" => (BOARD_CSS, "text/css; charset=utf-8"),
        "console.js" => (CONSOLE_JS, "text/javascript; charset=utf-8"),
        "icon.svg" => (ICON_SVG, "image/svg+xml"),
        _ => {
            return Refused::new(StatusCode::NOT_FOUND, format!("no asset '{file}'"))
                .into_response()
        }
    };
    (
        [
            (header::CONTENT_TYPE, kind),
            (header::CACHE_CONTROL, "no-cache"),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        ],
        body,
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn after_login_goes_back_to_board_pages_only() {
        for kept in ["/board", "/board/tasks/abc", "/board?status=working&tool=x"] {
            assert_eq!(after_login(Some(kept)), kept);
        }
        for refused in [
            "//evil.example/board",
            "https://evil.example/board",
            "/board//evil.example",
            "/boardx",
            "/board/login",
            "/board\\evil",
            "/board/tasks/a\nb",
            "",
        ] {
            assert_eq!(after_login(Some(refused)), "/board", "{refused:?}");
        }
        assert_eq!(after_login(None), "/board");
    }

    #[test]
    fn the_login_link_carries_the_page_asked_for() {
        let uri: Uri = "/board/tasks/abc?status=working".parse().unwrap();
        assert_eq!(
            login_for(&uri),
            "/board/login?next=%2Fboard%2Ftasks%2Fabc%3Fstatus%3Dworking"
        );
        let list: Uri = "/board".parse().unwrap();
        assert_eq!(login_for(&list), "/board/login");
    }
}

//! # mcp-tasks-board
//!
//! The human side of tasks: a page in the browser where people see the tasks of the
//! agents they run, answer the questions a task asks (`input_required`), and cancel
//! work; and webhooks that tell them when a task needs them.
//!
//! The board is a client of the same engine the MCP wires use: an answer given here is
//! [`mcp_tasks_engine::Engine::answer_input`], exactly as a `tasks/update` or an
//! elicitation response, so the task resumes on whichever replica runs it.
//!
//! | module | what it owns |
//! |---|---|
//! | [`Board`] | the shared state and the axum router under `/board` |
//! | `viewer` | who is looking: signed session cookies, CSRF tokens, operators |
//! | `pages` | the HTML shell, the login page and the embedded assets (plain JS, no build step) |
//! | `api` | the JSON the page reads and the actions it posts (answer, cancel) |
//! | `console` | counts per state, bulk cancel by filter (operators), "run again" |
//! | `failures` | a tool error counted and filtered as a failure, as people read it |
//! | `rerun` | whether a task may be run again, and the tasks made from it |
//! | `view` | tasks as the page shows them: summaries, details, questions |
//! | `answer` | a person's answer checked against the question and turned into the engine's answer |
//! | `live` | changes of tasks fanned out to the pages over SSE |
//! | [`oidc`] | signing in with an OpenID Connect provider (feature `oidc`): code flow with PKCE, ID token through the issuer's JWKS, groups |
//! | `oidc_pages` | the sign-in button, the provider's round trip, sign-out there, the pages of a failed sign-in |
//! | `links` | signed one-time answer links (approve / reject) that webhook events carry |
//! | `link_pages` | the confirmation page and the answer behind such a link |
//! | [`notify`] | webhooks: events to people when a task needs them, durable and retried |
//! | [`slack`] | Slack app mode: questions posted with buttons, answered from Slack |
//!
//! Why plain JavaScript and no template engine or library: the page is one list, one
//! detail pane and one form renderer. A few hundred lines of DOM code, built with
//! `textContent` (never `innerHTML` from data, so task data cannot inject markup), need
//! no build step, no vendored framework to keep patched, and load under a strict
//! Content-Security-Policy (`script-src 'self'`).
#![deny(missing_docs)]

mod answer;
mod api;
mod console;
mod detail_html;
#[cfg(feature = "email")]
pub mod email;
mod failures;
mod html;
mod inbox;
mod link_pages;
mod links;
mod list_html;
mod live;
pub mod notify;
pub mod oidc;
#[cfg(feature = "oidc")]
mod oidc_pages;
mod pages;
mod people;
mod rerun;
pub mod slack;
mod view;
mod viewer;

use axum::routing::{get, post};
use axum::Router;
use mcp_tasks_protocol::Secret;
use mcp_tasks_server::Server;
use std::sync::Arc;
use std::time::Duration;

pub use links::AnswerLinks;
pub use notify::{
    default_sink_name, Notifier, NotifyConfig, NotifyFormat, NotifyOn, NotifySink,
    PreparedNotifier, WebhookSecret,
};
pub use oidc::{OidcConfig, TokenAuth};
pub use slack::{PreparedSlack, Slack, SlackConfig};

/// The path the board is served under.
pub const BOARD_PATH: &str = "/board";

/// How the board is run.
#[derive(Debug, Clone)]
pub struct BoardConfig {
    /// Principals who see and act on every principal's tasks (`--operators`). Each of
    /// their actions is an audit event naming them.
    pub operators: Vec<String>,
    /// The address people reach the server at (`--public-url`), for links in
    /// notifications and in the CLI; cookies are marked `Secure` when it is `https`.
    pub public_url: Option<String>,
    /// How long a login lasts.
    pub session_ttl: Duration,
    /// The key that signs session cookies. Replicas behind one address must share it
    /// (`--board-secret`), or a login on one is unknown to the others; `None` picks a
    /// random key at start (logins then end with the process). A [`Secret`]: `Debug` of
    /// the config prints `***`.
    pub secret: Option<Secret<Vec<u8>>>,
    /// The key of the answer links webhook events carry (the same value as the
    /// notifier's [`NotifyConfig::answer_links`]); `None`: links are refused.
    pub answer_links: Option<AnswerLinks>,
    /// The Slack app whose interactions the board takes at
    /// [`slack::INTERACTIONS_PATH`]; `None`: no Slack app.
    pub slack: Option<Slack>,
    /// People sign in with this OpenID Connect provider (`[board.oidc]`, feature
    /// `oidc`); `None`: token login only.
    pub oidc: Option<OidcConfig>,
    /// Whether the login page also takes a pasted token (for people who use the CLI);
    /// `false` leaves only the identity provider.
    pub token_login: bool,
}

impl Default for BoardConfig {
    fn default() -> Self {
        BoardConfig {
            operators: Vec::new(),
            public_url: None,
            session_ttl: Duration::from_secs(12 * 3600),
            secret: None,
            answer_links: None,
            slack: None,
            oidc: None,
            token_login: true,
        }
    }
}

/// The task board: cheap to clone, one per server.
#[derive(Clone, Debug)]
pub struct Board {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    server: Server,
    config: BoardConfig,
    keys: viewer::Keys,
    live: live::Live,
    #[cfg(feature = "oidc")]
    oidc: Option<oidc::Rp>,
}

impl Board {
    /// A board over `server`'s tasks. Starts listening to the engine's events at once,
    /// so progress reported before a page opens is already known. Whether tasks may ask
    /// people questions their client cannot answer is the engine's setting
    /// (`EngineConfig::people_answer_questions`), fixed when the server started.
    pub fn new(server: Server, config: BoardConfig) -> Self {
        let keys = viewer::Keys::new(config.secret.as_ref().map(|s| s.expose().as_slice()));
        let live = live::Live::start(&server);
        #[cfg(feature = "oidc")]
        let oidc = config.oidc.clone().map(oidc::Rp::new);
        #[cfg(not(feature = "oidc"))]
        if config.oidc.is_some() {
            tracing::warn!(
                "[board.oidc] is ignored: this build of the board has no 'oidc' feature"
            );
        }
        Board {
            inner: Arc::new(Inner {
                server,
                config,
                keys,
                live,
                #[cfg(feature = "oidc")]
                oidc,
            }),
        }
    }

    /// The routes of the board (pages, assets, JSON API, live events) under
    /// [`BOARD_PATH`], and `/` (a redirect to the board) and `/favicon.ico`, to merge
    /// beside MCP's router
    /// ([`mcp_tasks_server::Server::serve_http_with`]).
    pub fn router(&self) -> Router {
        let router = Router::new();
        #[cfg(feature = "oidc")]
        let router = router
            .route("/board/oidc/start", get(oidc_pages::start))
            .route("/board/oidc/callback", get(oidc_pages::callback));
        router
            // The server's root says where things are: the board.
            .route(
                "/",
                get(|| async { axum::response::Redirect::to(BOARD_PATH) }),
            )
            .route("/favicon.ico", get(pages::favicon))
            .route(BOARD_PATH, get(pages::board))
            .route("/board/", get(pages::board))
            .route("/board/tasks/{id}", get(pages::task_page))
            .route("/board/login", get(pages::login_form).post(pages::login))
            .route("/board/logout", post(pages::logout))
            .route("/board/assets/{file}", get(pages::asset))
            .route("/board/api/me", get(api::me))
            .route("/board/api/tasks", get(api::list))
            .route("/board/api/inbox", get(inbox::inbox))
            .route("/board/api/tasks/{id}", get(api::detail))
            .route("/board/api/tasks/{id}/answer", post(api::answer))
            .route("/board/api/tasks/{id}/cancel", post(api::cancel))
            .route("/board/api/tasks/{id}/rerun", post(console::run_again))
            .route("/board/api/counts", get(console::counts))
            .route("/board/api/bulk-cancel", post(console::bulk_cancel))
            .route("/board/api/events", get(live::events))
            .route(
                "/board/answer/{token}",
                get(link_pages::confirm).post(link_pages::answer),
            )
            .route(slack::INTERACTIONS_PATH, post(slack::interactions::receive))
            .with_state(self.clone())
    }

    /// The board's link to task `id` under `public_url` (what notifications and the
    /// CLI print).
    pub fn task_link(public_url: &str, id: &str) -> String {
        format!("{}/board/tasks/{id}", public_url.trim_end_matches('/'))
    }

    fn server(&self) -> &Server {
        &self.inner.server
    }

    fn config(&self) -> &BoardConfig {
        &self.inner.config
    }
}

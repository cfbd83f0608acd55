//! `mcp-tasks serve`: build the store, engine and tools, then serve stdio or HTTP.

use anyhow::{Context, Result};
use clap::Args;
use mcp_tasks_protocol::secret::{redact_url, scrub, Secret};
use mcp_tasks_server::transport::http;
use mcp_tasks_server::{drain_on, ShutdownSignals};
use mcp_tasks_server::{Server, ToolRegistry};
use std::path::PathBuf;
use std::time::Duration;
use tokio::net::TcpListener;

use crate::config::{parse_duration, ConfigFile};

// Each optional part of `serve` is one module, with a stub of the same shape for a
// build without its feature: the stub refuses what asks for the part, naming the
// feature (docs/packaging.md, "Building a smaller binary").
#[cfg(feature = "board")]
mod board;
#[cfg(not(feature = "board"))]
#[path = "board_off.rs"]
mod board;
mod board_args;
mod fd_limit;
#[cfg(feature = "gateway")]
mod gateway;
#[cfg(not(feature = "gateway"))]
#[path = "gateway_off.rs"]
mod gateway;
#[cfg(feature = "oidc")]
mod identity;
#[cfg(not(feature = "oidc"))]
#[path = "identity_off.rs"]
mod identity;
mod logging;
#[cfg(feature = "otel")]
mod otlp;
#[cfg(not(feature = "otel"))]
#[path = "otlp_off.rs"]
mod otlp;
mod settings;

/// The target of the lines `serve` always prints, whatever `--log` filters out: where
/// it listens, where the board is, why it stopped. In JSON they are log records of
/// this target (the filter always lets it through); in text, plain `mcp-tasks: ...`
/// lines as before.
pub(crate) const ANNOUNCE: &str = "mcp_tasks::serve";
pub mod wrap;

pub use logging::LogFormat;

/// Default HTTP listen address: loopback only.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:8080";
/// Default database over HTTP: an SQLite file in the working directory. (Over stdio it
/// is `mcp-tasks.db` in the user's data folder: see [`DATA_DIR_NAME`].)
pub const DEFAULT_DATABASE: &str = "sqlite://./mcp-tasks.db";
/// The folder under the user's data folder (`$XDG_DATA_HOME`, else `~/.local/share`)
/// that holds `serve --stdio`'s default database, `mcp-tasks.db`: a host starts a stdio
/// server in a folder of its choosing, often one the user never looks in or cannot write.
pub const DATA_DIR_NAME: &str = "mcp-tasks";

/// Options of `serve`. Each (but --config, --stdio, --demo, --conformance-fixtures,
/// --log, --log-format and --otlp-endpoint, which apply before the file is read) can
/// also come from the config file's `[server]` table, under the flag's name
/// with `_` for `-`; some also from an environment variable. Flags win over the file,
/// the file over the defaults; on/off flags are on when either turns them on.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Serve one session over stdin/stdout (for desktop hosts that spawn the server)
    /// instead of HTTP.
    #[arg(long)]
    stdio: bool,

    /// Address for Streamable HTTP (endpoint /mcp). Port 0 picks a free port; the
    /// chosen address is printed on stderr. [default: 127.0.0.1:8080]
    #[arg(long, env = "MCP_TASKS_LISTEN", value_name = "ADDR")]
    listen: Option<String>,

    /// Task store: sqlite://PATH (durable; created if missing), postgres://USER@HOST/DB
    /// (sslmode and sslrootcert as in libpq), or memory: (lost on exit). [default:
    /// sqlite://./mcp-tasks.db; with --stdio, mcp-tasks.db in the user's data folder:
    /// $XDG_DATA_HOME/mcp-tasks, else ~/.local/share/mcp-tasks]
    // A secret (it may hold a password): never printed, its value hidden in --help too.
    #[arg(
        long,
        env = "MCP_TASKS_DATABASE",
        hide_env_values = true,
        value_name = "URL"
    )]
    database: Option<Secret<String>>,

    /// TOML file with [server] settings, [[tools]] command tools and [[upstream]] MCP
    /// servers to put tasks in front of (see
    /// examples/tasks.toml).
    #[arg(long, env = "MCP_TASKS_CONFIG", value_name = "FILE")]
    config: Option<PathBuf>,

    /// Also serve the built-in demo tools: slow_compute (task optional), greet (sync
    /// only), failing_job (task required), and the human-in-the-loop ones
    /// confirm_delete (asks yes/no), multi_input (asks several questions),
    /// summarize_with_model (asks the client's model) and book_meeting (one form with
    /// every kind of field), the durable pipeline (resumable journaled steps, an
    /// optional approval), ask_a_person (a yes/no question for a person or group, with
    /// a deadline) and deploy (does nothing; a tool to put behind an approval rule).
    #[arg(long)]
    demo: bool,

    /// Serve exactly the tools the official conformance suite's server scenarios call:
    /// the Tasks extension's (greet, slow_compute, failing_job, protocol_error_job,
    /// confirm_delete, multi_input, test_tool_with_task) and the 2025-11-25 tool
    /// scenarios' (test_simple_text, test_image_content, test_audio_content,
    /// test_embedded_resource, test_multiple_content_types, test_error_handling,
    /// test_tool_with_progress, test_tool_with_logging, test_sampling, test_elicitation,
    /// test_elicitation_sep1034_defaults, test_elicitation_sep1330_enums,
    /// json_schema_2020_12_tool).
    #[arg(long, conflicts_with = "demo")]
    conformance_fixtures: bool,

    /// Retention of a task when the client asks for none. [default: 1h]
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    default_ttl: Option<Duration>,

    /// Longest retention a client may ask for; longer requests are clamped and the
    /// clamped ttl is reported. [default: 24h]
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    max_ttl: Option<Duration>,

    /// Shortest retention granted; shorter requests (a ttl of 0 included) are raised
    /// and the raised ttl is reported, so a task never vanishes before its client could
    /// read it. [default: 1s]
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    min_ttl: Option<Duration>,

    /// On the Tasks extension wire (2026-07-28), how long a call of a tool whose task
    /// support is `optional` may run before it becomes a task: a call finishing sooner
    /// gets its plain result and leaves no task; a longer one is created as a task and
    /// its work goes on. `required` tools always become tasks; 0s makes every such call
    /// a task. [default: 20ms]
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    task_after: Option<Duration>,

    /// How long a plain tools/call (the client asked for no task) of a tool whose task
    /// support is `optional` may hold the connection. The call runs as a task from the
    /// start: ending within the budget it gets its ordinary result; otherwise, before
    /// the budget ends, a result telling the model that the work goes on as task ID and
    /// how to wait for it (task_wait), see it (task_status) and cancel it
    /// (task_cancel), with the board link for people. Keep it under the host's own
    /// timeout (60 s for Claude Code and TypeScript SDK clients). 0s turns it off:
    /// plain calls run inline and end with their connection. [default: 45s]
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    sync_budget: Option<Duration>,

    /// Who is offered the task tools (task_wait, task_status, task_answer, task_cancel,
    /// task_list), the way back to a task for clients that speak no tasks: `auto`
    /// offers them to clients that declared no task support, `always` to every
    /// client, `never` to none. [default: auto]
    #[arg(long, value_parser = parse_task_tools, value_name = "auto|always|never")]
    task_tools: Option<mcp_tasks_server::TaskTools>,

    /// A plain call that carries a progressToken gets notifications/progress at least
    /// this often while it runs: its tool's own progress, else a heartbeat with the
    /// time elapsed and the status message, so hosts that reset their timeout on
    /// progress keep waiting. [default: 10s]
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    progress_interval: Option<Duration>,

    /// Polling interval suggested to clients. [default: 1s]
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    poll_interval: Option<Duration>,

    /// How long cancelled work may take to stop before it is aborted. [default: 5s]
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    cancel_grace: Option<Duration>,

    /// How long a plain call run inline (a tool whose task support is `forbidden`, or
    /// any tool with --sync-budget 0s) waits for its client to answer a question
    /// (elicitation, sampling) on the call's own connection before it fails. A task's
    /// question, and so a plain call's under the sync budget, waits as long as the task
    /// lives (its TTL), or until the deadline its tool gave it. [default: 10m]
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    input_timeout: Option<Duration>,

    /// Most input requests one task may have outstanding at once. [default: 16]
    #[arg(long, value_name = "N")]
    max_input_requests: Option<usize>,

    /// Client-hosted tasks (2025-11-25, off by default): when a client declares
    /// tasks.requests.elicitation.create / sampling.createMessage, send it input requests
    /// as tasks and poll them on the client.
    #[arg(long)]
    client_tasks: bool,

    /// Alive window of a server on a database other processes may share (an SQLite
    /// file, PostgreSQL): each process writes one heartbeat every --heartbeat (at most
    /// a third of this) for all its tasks; once a process has not written one for this
    /// long (it died), another takes its tasks over: re-runs resumable tools, fails the
    /// rest. A process restarted on the same host takes over its dead predecessor's
    /// tasks at once. Several servers on one file are safe: none touches another's live
    /// tasks. [default: 6s with sqlite://PATH and postgres://, off with memory:]
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    lease_ttl: Option<Duration>,

    /// Interval of the heartbeat a server writes on a shared database (one write per
    /// process, whatever the number of its tasks). [default: 2s]
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    heartbeat: Option<Duration>,

    /// On SIGTERM, Ctrl-C or the end of stdio input, the server drains: /readyz answers
    /// 503, no new task starts, resumable tasks are handed over at once (another
    /// replica, or the next start, resumes them) and the others get this long to finish
    /// before they are failed with a message saying why. A second signal stops at once.
    /// [default: 30s]
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    drain_timeout: Option<Duration>,

    /// Forget an HTTP session unused this long, with no open stream and no call in
    /// flight (clients often leave without DELETE); its client gets 404 and initializes
    /// again, its tasks still reachable by id. 0s keeps sessions until deleted.
    /// [default: 1h]
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    session_idle_timeout: Option<Duration>,

    /// Most HTTP sessions held at once; one more forgets the session unused the
    /// longest (its client gets 404 and initializes again). [default: 10000]
    #[arg(long, value_name = "N")]
    max_sessions: Option<usize>,

    /// Most HTTP connections open at once; at the limit a new connection closes the
    /// one idle the longest, and is refused when none is idle. Lowered to fit the
    /// process's file-descriptor limit (raised to its hard limit at start).
    /// [default: 1024]
    #[arg(long, value_name = "N")]
    max_connections: Option<usize>,

    /// Time a client has, from the first byte of a request, to send its headers;
    /// slower clients are disconnected. [default: 10s]
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    http_header_timeout: Option<Duration>,

    /// Time a client has to send a request body once its headers arrived; slower
    /// bodies get 408 and the connection is closed. [default: 30s]
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    http_body_timeout: Option<Duration>,

    /// How long an HTTP connection may stay open with no request in progress
    /// (keep-alive between requests, or never used); open SSE streams are in
    /// progress and stay. [default: 60s]
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    http_idle_timeout: Option<Duration>,

    /// Interval of keep-alive comments on open SSE streams. [default: 15s]
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    sse_keep_alive: Option<Duration>,

    /// Largest request body (HTTP) or line (stdio), in bytes. [default: 4194304]
    #[arg(long, value_name = "BYTES")]
    max_body_bytes: Option<usize>,

    /// An extra browser Origin to accept over HTTP (localhost origins always are).
    /// Repeat for several.
    #[arg(long = "allowed-origin", value_name = "ORIGIN")]
    allowed_origins: Vec<String>,

    /// Bearer tokens for HTTP: a TOML file whose keys are tokens and values subjects
    /// (`"s3cret-a" = "alice"`). Tasks are then bound to the subject.
    #[arg(long, env = "MCP_TASKS_AUTH_TOKENS", value_name = "FILE")]
    auth_tokens: Option<PathBuf>,

    /// Validate bearer tokens as JWTs against this JWKS file (with --jwt-issuer and
    /// --jwt-audience); the subject is the `sub` claim.
    #[arg(long, value_name = "FILE", requires_all = ["jwt_issuer", "jwt_audience"], conflicts_with = "auth_tokens")]
    jwt_jwks: Option<PathBuf>,

    /// Expected `iss` of JWTs.
    #[arg(long, value_name = "ISSUER")]
    jwt_issuer: Option<String>,

    /// Expected `aud` of JWTs.
    #[arg(long, value_name = "AUDIENCE")]
    jwt_audience: Option<String>,

    /// With tokens configured: `required` (401 without a valid token, the default) or
    /// `optional` (requests without a token are anonymous sessions).
    /// [default: required]
    #[arg(long, value_name = "MODE", value_parser = ["required", "optional"])]
    auth: Option<String>,

    /// An extra Host name accepted over HTTP (localhost names always are when bound to
    /// loopback). Repeat for several.
    #[arg(long = "allowed-host", value_name = "HOST")]
    allowed_hosts: Vec<String>,

    /// Allow listening on a non-loopback address without authentication. Anyone who can
    /// reach the port can then run the tools.
    #[arg(long)]
    allow_unauthenticated_remote: bool,

    /// Most unfinished tasks one principal may have at once. [default: 100]
    #[arg(long, value_name = "N")]
    max_tasks_per_principal: Option<usize>,

    /// Most unfinished tasks one session may have at once when there is no
    /// authentication (every client is then anonymous, so each session, or stdio
    /// process, counts for itself; stateless requests count only toward
    /// --max-active-tasks). [default: 100]
    #[arg(long, value_name = "N")]
    max_tasks_per_session: Option<usize>,

    /// Most unfinished tasks on the server at once. [default: 10000]
    #[arg(long, value_name = "N")]
    max_active_tasks: Option<usize>,

    /// Largest task result stored, in bytes; larger results become an error. [default: 16777216]
    #[arg(long, value_name = "BYTES")]
    max_result_bytes: Option<usize>,

    /// How long one call to an external job system (a poll or a cancel of an external
    /// job tool) may take before it counts as failed. [default: 10s]
    #[arg(long, value_parser = parse_duration, value_name = "DURATION")]
    external_call_timeout: Option<Duration>,

    /// Include tool arguments in audit events (target mcp_tasks::audit). Off by default
    /// because arguments may carry secrets.
    #[arg(long)]
    audit_arguments: bool,

    /// Log filter for stderr, e.g. info, debug, mcp_tasks_engine=debug.
    #[arg(long, env = "MCP_TASKS_LOG", default_value = "info")]
    log: String,

    /// Format of the log on stderr: `text` (for people) or `json` (one JSON object per
    /// line with timestamp, level, target, fields and span, for log collectors).
    #[arg(long, env = "MCP_TASKS_LOG_FORMAT", value_enum, default_value_t = LogFormat::Text)]
    log_format: LogFormat,

    #[command(flatten)]
    board: board_args::BoardArgs,

    /// Export traces over OTLP/HTTP (protobuf) to this collector, e.g.
    /// http://127.0.0.1:4318 (`/v1/traces` is appended). Without it, traces are
    /// exported when OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (used as is) or
    /// OTEL_EXPORTER_OTLP_ENDPOINT is set; OTEL_SERVICE_NAME names the service
    /// (default mcp-tasks).
    #[arg(long, env = "MCP_TASKS_OTLP_ENDPOINT", value_name = "URL")]
    otlp_endpoint: Option<String>,
}

/// Runs the server until Ctrl-C / SIGTERM (HTTP) or end of input (stdio).
pub async fn run(args: ServeArgs) -> Result<()> {
    run_with_upstreams(args, Vec::new()).await
}

/// `serve`, with `extra` upstreams besides the config file's (`wrap`'s command).
pub async fn run_with_upstreams(
    args: ServeArgs,
    extra: Vec<crate::config::UpstreamEntry>,
) -> Result<()> {
    let format = args.log_format;
    let telemetry = match logging::init(&args) {
        Ok(telemetry) => telemetry,
        Err(e) => {
            logging::fatal(format, false, &crate::error_chain(&e));
            return Err(stopped(format, e));
        }
    };
    let served = serve(args, extra).await;
    if let Err(e) = &served {
        logging::fatal(format, true, &crate::error_chain(e));
    }
    telemetry.shutdown().await;
    served.map_err(|e| stopped(format, e))
}

/// The error `serve` ends with: in JSON mode it was logged already, so the process
/// only exits with status 1 (a plain-text `mcp-tasks: error:` line would break the
/// log's one-JSON-object-per-line promise).
fn stopped(format: LogFormat, e: anyhow::Error) -> anyhow::Error {
    match format {
        LogFormat::Json => crate::cmd::exit::Exit(1).into(),
        LogFormat::Text => e,
    }
}

/// `serve` once logging is set up.
async fn serve(args: ServeArgs, extra: Vec<crate::config::UpstreamEntry>) -> Result<()> {
    let file = match &args.config {
        Some(p) => ConfigFile::load(p)?,
        None => ConfigFile::default(),
    };
    let s = &file.server;
    let engine_config = settings::engine_config(&args, s);
    let listen = args
        .listen
        .clone()
        .or_else(|| s.listen.clone())
        .unwrap_or_else(|| DEFAULT_LISTEN.to_string());
    let auth = identity::auth_mode(&args, &file)?;
    let mut server_config = settings::server_config(&args, s, &listen, auth.clone());
    server_config.approvals =
        mcp_tasks_server::approvals::Approvals::new(file.approval.clone(), file.groups.clone())
            .map_err(|e| anyhow::anyhow!("{e}"))
            .with_context(|| "reading the approval rules of the config file".to_string())?;
    #[cfg(feature = "policy")]
    if let Some(policy) = &file.policy {
        let policies = mcp_tasks_server::approvals::Policies::load_dir(&policy.dir, &file.groups)
            .map_err(|e| anyhow::anyhow!("{e}"))
            .with_context(|| {
                format!(
                    "reading the Cedar policies of [policy] dir = \"{}\"",
                    policy.dir.display()
                )
            })?;
        tracing::info!(policies = policies.len(), dir = %policy.dir.display(), "every tools/call is authorized by the Cedar policies");
        server_config.approvals = server_config.approvals.with_policies(policies);
    }
    // A plain call's input-required round may come back to any replica, or to this
    // server after a restart: its requestState is sealed under a key derived from the
    // board secret, which replicas already share (without one: random per process).
    server_config.request_state_key = args.board.board_secret(&file)?;
    if args.stdio && !server_config.approvals.is_empty() {
        anyhow::bail!(
            "the config file has [[approval]] rules (or @approval policies), but over --stdio nobody can approve a call: stdio serves no task board, and Slack and signed answer links answer through the board. \
             Serve over HTTP (without --stdio) with the board on and authentication for the approvers (--auth-tokens or --jwt-jwks), and point the host at its /mcp URL; or remove the [[approval]] rules"
        );
    }
    if !server_config.approvals.is_empty() && !auth.is_enabled() {
        tracing::warn!("approval rules are configured without authentication: nobody can log in as an approver, so approvals wait until their deadline; configure --auth-tokens or --jwt-jwks");
    }
    let open_files = fd_limit::raise_open_files_limit();
    let fitted = fd_limit::fit_connections(server_config.http.max_connections, open_files);
    if fitted < server_config.http.max_connections {
        tracing::warn!(
            max_connections = fitted,
            open_files_limit = open_files,
            "lowered the connection limit to fit the open-files limit"
        );
        server_config.http.max_connections = fitted;
    }
    let database = args
        .database
        .clone()
        .or_else(|| s.database.clone())
        .map_or_else(
            || settings::default_database(args.stdio).map(Secret::from),
            Ok,
        )?;
    // What logs and errors show: the URL without its password.
    let shown = redact_url(database.expose());

    let mut tools = ToolRegistry::new();
    if args.demo {
        crate::demo::register(&mut tools)?;
    }
    if args.conformance_fixtures {
        crate::fixtures::register(&mut tools)?;
    }
    // Without the feature `[[tools]]` was refused when the file was read.
    #[cfg(feature = "command-tools")]
    for t in file.tools.clone() {
        let name = t.name.clone();
        tools
            .register(crate::command_tool::build(t)?)
            .with_context(|| format!("registering tool '{name}'"))?;
    }
    let mut upstreams = file.upstream.clone();
    upstreams.extend(extra.iter().cloned());
    // `wrap` (its upstream given on the command line) cannot start without it; upstreams
    // of the config file may come later.
    let strict = !extra.is_empty();
    let gateway = gateway::add_upstream_tools(upstreams, &mut tools, strict).await?;
    if tools.is_empty() && gateway.is_none() {
        tracing::warn!(
            "no tools configured: pass --demo, or --config FILE with [[tools]] or [[upstream]]"
        );
    }

    // The driver's message may echo what it was given: it is scrubbed of the password.
    let store = mcp_tasks_store::open(database.expose())
        .await
        .map_err(|e| {
            // The whole chain (the driver's own words last), each cause once: some
            // errors already print their source in their own message.
            let mut chain = e.to_string();
            let mut source = std::error::Error::source(&e);
            while let Some(cause) = source {
                let text = cause.to_string();
                if !chain.contains(&text) {
                    chain.push_str(&format!(": {text}"));
                }
                source = cause.source();
            }
            let why = scrub(&chain, database.expose());
            anyhow::anyhow!("opening task store {shown}: {why}")
        })?;
    // Bound before the server starts: whether the board is served (and so whether
    // people answer questions) depends on the address, and the engine is told at start.
    let listener = if args.stdio {
        None
    } else {
        let listener = TcpListener::bind(&listen)
            .await
            .with_context(|| format!("binding {listen}"))?;
        let addr = listener.local_addr().context("reading the bound address")?;
        let allow_remote = args.allow_unauthenticated_remote || s.allow_unauthenticated_remote;
        if !addr.ip().is_loopback() && !auth.is_enabled() && !allow_remote {
            anyhow::bail!(
                "refusing to serve {addr} without authentication: anyone who can reach it could run the tools. \
                 Configure --auth-tokens or --jwt-jwks, bind 127.0.0.1, or pass --allow-unauthenticated-remote"
            );
        }
        Some((listener, addr))
    };
    let board = board::prepare(
        &args,
        &file,
        listener.as_ref().map(|(_, a)| *a),
        auth.is_enabled() || identity::board_sign_in(&file),
    )?;
    let mut engine_config = engine_config;
    engine_config.people_answer_questions = board.people_answer_questions();
    let mut server_config = server_config;
    // Handles of calls that became tasks link to the task's page, and name only the
    // channels people can answer through here.
    let board_url = board.board_url();
    server_config.board_url = board_url.clone();
    server_config.people_channels = board.people_channels();
    if !server_config.approvals.is_empty() && server_config.people_channels.is_empty() {
        anyhow::bail!(
            "the config file has [[approval]] rules (or @approval policies), but the task board is not served, so nobody can approve a call (Slack and signed answer links answer through the board too). \
             Turn the board on (drop --no-board or [board] disabled; without authentication it is served on loopback addresses only), or remove the [[approval]] rules"
        );
    }
    let observers = board.observers();
    let server = Server::start(store, engine_config, tools, server_config, observers)
        .await
        .context("starting the task engine")?;
    tracing::info!(database = %shown, "task store ready");
    if let Some(gateway) = gateway {
        gateway.keep_current(&server);
    }
    let board = board.start(&server)?;

    let Some((listener, addr)) = listener else {
        let engine = server.engine().clone();
        server.serve_stdio().await?;
        engine.shutdown().await;
        return Ok(());
    };
    // Before the address is announced: whoever stops the server once it is known
    // (SIGTERM) gets a drain, not an abrupt end.
    let signals = ShutdownSignals::listen();
    logging::announce(
        args.log_format,
        "listening on",
        &format!("http://{addr}{}", http::DEFAULT_PATH),
    );
    let board = board.routes(&args, &file, &server)?;
    if args.log_format == logging::LogFormat::Text {
        eprintln!(
            "mcp-tasks: {}",
            try_line(addr, args.demo, board_url.as_deref())
        );
    }
    let engine = server.engine().clone();
    let drained = drain_on(server.clone(), signals);
    server.serve_http_with(listener, board, drained).await?;
    // Retires this process's heartbeat row once nothing runs here under a lease.
    engine.shutdown().await;
    Ok(())
}

/// The first thing to try, printed under the address: a call of a demo tool (and the
/// board to watch it on), or the list of the server's tools. The URL is left out when
/// it is the client commands' default, so the line is as short as what a person types.
fn try_line(addr: std::net::SocketAddr, demo: bool, board: Option<&str>) -> String {
    let url = format!("http://{addr}{}", http::DEFAULT_PATH);
    let at = if addr.to_string() == DEFAULT_LISTEN {
        String::new()
    } else {
        format!("{url} ")
    };
    let mut line = if demo {
        format!("try: mcp-tasks call {at}slow_compute --arg seconds=5")
    } else {
        format!("try: mcp-tasks tools {at}").trim_end().to_string()
    };
    if let Some(board) = board {
        line.push_str(&format!(", and watch it on {board}"));
    }
    line
}

/// Reads `--task-tools`.
fn parse_task_tools(s: &str) -> std::result::Result<mcp_tasks_server::TaskTools, String> {
    mcp_tasks_server::TaskTools::parse(s)
}

#[cfg(test)]
mod try_line_tests {
    use super::try_line;

    #[test]
    fn the_try_line_calls_a_demo_tool_and_names_the_board() {
        let default = "127.0.0.1:8080".parse().unwrap();
        assert_eq!(
            try_line(default, true, Some("http://127.0.0.1:8080/board")),
            "try: mcp-tasks call slow_compute --arg seconds=5, and watch it on http://127.0.0.1:8080/board"
        );
        let other = "127.0.0.1:9001".parse().unwrap();
        assert_eq!(
            try_line(other, false, None),
            "try: mcp-tasks tools http://127.0.0.1:9001/mcp"
        );
    }
}

//! [`ServerConfig`]: the server's settings that are not the engine's, and their
//! documented defaults. Below every part that reads them (the call pipeline, the wires,
//! the transports), so that none of them needs the [`crate::Server`] facade to know its
//! settings; the facade re-exports it at its old path (`server::ServerConfig`).

/// Default largest request body accepted: 4 MiB.
pub const DEFAULT_MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

/// Server settings that are not the engine's.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// `serverInfo.name`.
    pub name: String,
    /// `serverInfo.version`.
    pub version: String,
    /// Optional `instructions` returned by `initialize`.
    pub instructions: Option<String>,
    /// Largest request body (HTTP) or line (stdio) accepted, in bytes.
    pub max_body_bytes: usize,
    /// Extra `Origin` values accepted over HTTP besides localhost ones.
    pub allowed_origins: Vec<String>,
    /// When set, the `Host` header (without port) must be one of these: protection
    /// against DNS rebinding for servers bound to loopback.
    pub allowed_hosts: Option<Vec<String>>,
    /// Bearer-token authentication over HTTP.
    pub auth: crate::ops::auth::AuthMode,
    /// Client-hosted tasks (2025-11-25 only, off by default): when the client declares
    /// `tasks.requests.elicitation.create` / `tasks.requests.sampling.createMessage`,
    /// input requests are sent as tasks on the client and polled there.
    pub client_hosted_tasks: bool,
    /// How long the server waits for the client to answer one of its own requests
    /// (client-hosted task polling).
    pub client_request_timeout: std::time::Duration,
    /// Sessions unused this long, with no open stream and no call in flight, are
    /// forgotten (clients often leave without `DELETE`); a later request with that id
    /// gets 404 and the client initializes again, its tasks still reachable by id.
    /// `None` (or zero) keeps sessions until they are deleted. Default: one hour.
    pub session_idle_timeout: Option<std::time::Duration>,
    /// Most HTTP sessions held at once. Opening one more forgets the session unused
    /// the longest (idle ones before ones with an open stream; never one with a
    /// request in progress): 20,000 `initialize` calls must not all be kept for an
    /// hour. Its client gets 404 and initializes again; its tasks stay reachable by id.
    pub max_sessions: usize,
    /// Limits on HTTP connections (timeouts, how many at once, SSE keep-alive).
    pub http: crate::http_limits::HttpLimits,
    /// On the Tasks extension wire the server decides which calls become tasks: a call
    /// of an `optional` task tool whose work finishes within this window is answered
    /// with its plain `CallToolResult` and leaves no task behind; otherwise the task is
    /// created (durably, before the reply) and the work started in the window goes on.
    /// `required` tools always become tasks. Zero makes every such call a task.
    /// Default [`DEFAULT_TASK_AFTER`].
    pub task_after: std::time::Duration,
    /// How long a plain `tools/call` (the client asked for no task, on either wire) of
    /// an `optional` task tool may hold its connection: the call runs as a task from
    /// the start; ending within the budget it is answered with its ordinary result,
    /// otherwise, before the budget ends, with a result telling the model that the
    /// work goes on as a task and how to wait for it, see it and cancel it (see
    /// `calls::plain`). Zero turns this off (plain calls run inline, as before).
    /// Default [`DEFAULT_SYNC_BUDGET`].
    pub sync_budget: std::time::Duration,
    /// Who is offered the task tools (`task_wait`, `task_status`, `task_answer`,
    /// `task_cancel`, `task_list`). Default [`TaskTools::Auto`].
    pub task_tools: TaskTools,
    /// A plain call carrying a `progressToken` gets `notifications/progress` at least
    /// this often while it runs (its tool's own, else a heartbeat). Default
    /// [`DEFAULT_PROGRESS_INTERVAL`].
    pub progress_interval: std::time::Duration,
    /// Where people see this server's tasks: the task board's root URL (ending in
    /// `/board`), when one is served. The answer to a call that became a task links to
    /// the task's page under it.
    pub board_url: Option<String>,
    /// Where people answer the questions assigned to them (approvals) through this
    /// server, each as the model is told it: e.g. `"on the task board"`, `"in Slack"`,
    /// `"through a signed link"`. Empty: only the task board when
    /// [`ServerConfig::board_url`] is set, else none (a stdio server: handles then say
    /// that nobody can answer through it).
    pub people_channels: Vec<String>,
    /// Approval rules (`[[approval]]`) and groups (`[groups]`): calls that wait for
    /// people before their tool runs, and who belongs to which group (approvers and
    /// question assignees name groups). Default: none.
    pub approvals: crate::approvals::Approvals,
    /// The key that seals the `requestState` of the 2026-07-28 input-required round (a
    /// plain call whose tool asks mid-call): replicas behind one load balancer, and a
    /// server that restarts while a client is answering, must share one to honour each
    /// other's states. `None`: a random key per process, so a state outlives neither a
    /// restart nor a hop to another replica (the client is told to call again). Any
    /// length; 32 random bytes are plenty.
    pub request_state_key: Option<mcp_tasks_protocol::Secret<Vec<u8>>>,
    /// How long a `requestState` is honoured after it was issued: the time a person has
    /// to answer the questions of a plain call. Default [`DEFAULT_REQUEST_STATE_TTL`].
    pub request_state_ttl: std::time::Duration,
}

/// Default [`ServerConfig::request_state_ttl`]: one hour, the default task TTL (the
/// task that keeps the call's work lives no longer by default).
pub const DEFAULT_REQUEST_STATE_TTL: std::time::Duration = std::time::Duration::from_secs(3600);

pub use crate::tools::task_tools_mode::TaskTools;

/// Default [`ServerConfig::sync_budget`]: 45 s.
///
/// Why 45 s: the hosts people use cut a tool call at 60 s (Claude Code and most
/// clients on the TypeScript SDK, its default request timeout) or 300 s (Claude
/// Desktop, Claude.ai). A budget under the shortest of them answers before any of
/// them gives up, with room for the network and the host's own overhead.
pub const DEFAULT_SYNC_BUDGET: std::time::Duration = std::time::Duration::from_secs(45);

/// Default [`ServerConfig::progress_interval`]: 10 s, well inside the shortest host
/// timeout that progress resets (60 s).
pub const DEFAULT_PROGRESS_INTERVAL: std::time::Duration = std::time::Duration::from_secs(10);

/// Default [`ServerConfig::task_after`]: 20 ms.
///
/// Why 20 ms: an instant call answered inline costs what a synchronous call costs
/// (tens of microseconds), while becoming a task costs at least one more round trip
/// (`tasks/get`) and, on a durable store, one fsync of the creation (about 1-5 ms on
/// the disks measured, see docs/benchmarks.md) plus the client's first poll, which it
/// spaces by `pollIntervalMs` (1 s by default). Any call finishing in less than a poll
/// interval is answered sooner inline; 20 ms keeps the reply to a call that does become
/// a task well under human notice and under typical client request timeouts, and is
/// four times the slowest fsync measured, so a call whose work waits on one store write
/// of its own still fits.
pub const DEFAULT_TASK_AFTER: std::time::Duration = std::time::Duration::from_millis(20);

/// Default [`ServerConfig::max_sessions`]: 10,000.
pub const DEFAULT_MAX_SESSIONS: usize = 10_000;

/// Default [`ServerConfig::session_idle_timeout`].
pub const DEFAULT_SESSION_IDLE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(3600);

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            name: "mcp-tasks".into(),
            version: env!("CARGO_PKG_VERSION").into(),
            instructions: None,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            allowed_origins: Vec::new(),
            allowed_hosts: None,
            auth: crate::ops::auth::AuthMode::Off,
            client_hosted_tasks: false,
            client_request_timeout: std::time::Duration::from_secs(60),
            session_idle_timeout: Some(DEFAULT_SESSION_IDLE_TIMEOUT),
            max_sessions: DEFAULT_MAX_SESSIONS,
            http: Default::default(),
            task_after: DEFAULT_TASK_AFTER,
            sync_budget: DEFAULT_SYNC_BUDGET,
            task_tools: TaskTools::Auto,
            progress_interval: DEFAULT_PROGRESS_INTERVAL,
            board_url: None,
            people_channels: Vec::new(),
            approvals: crate::approvals::Approvals::default(),
            request_state_key: None,
            request_state_ttl: DEFAULT_REQUEST_STATE_TTL,
        }
    }
}

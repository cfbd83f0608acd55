//! The interop scenarios, written once and run against every peer server and both
//! front-ends (the client library and the `mcp-tasks` CLI), as the store suite runs its
//! cases against every backend.
//!
//! Three parts:
//! - [`FrontEnd`]: what a scenario asks of the side under test (call a tool as a task and
//!   follow it, start one detached, get, cancel (or see a cancel refused), resume by
//!   id, answer a question, sampling, progress). The client crate's tests implement it
//!   with the library, the CLI crate's with the binary run as a person runs it. This
//!   crate cannot name the client's types (the client's tests depend on it, and a second
//!   copy of the client would not be the same crate), hence the trait.
//! - [`Peer`]: a description of each server nobody here wrote (how to start it, its
//!   tools, what they answer), in [`peers`].
//! - [`scenarios`]: one `async fn` per scenario, taking a front-end, a peer, where it
//!   runs and the wire to ask for.
//!
//! [`peer_suite!`](crate::peer_suite!) stamps out the table: one `#[test]` per scenario ×
//! peer × wire the peer is tested on, for the front-end of the test file that invokes
//! it. A scenario a peer (or a front-end) cannot do is an ignored test whose reason
//! says why, so `cargo test` lists it as `ignored, <reason>` rather than leaving it out.
//! A peer whose environment variable is unset prints a notice and passes (see
//! [`crate::peers`]); set, a missing or broken peer fails (the TypeScript SDK's example
//! servers fail only under `CI`, as their tests did before they joined the table).

use serde_json::Value;
use std::future::Future;
use std::time::Duration;

pub mod peers;
pub mod scenarios;
mod table;

pub use peers::{
    Peer, EVERYTHING_HTTP, EVERYTHING_STDIO, FASTMCP_TASKS, RMCP, TOWER_MCP, TS_STREAMABLE_HTTP,
    TS_TASK_INTERACTIVE, TURUL_MEMORY, TURUL_SQLITE,
};

/// How long any one task or call of a scenario may take before it fails (the
/// everything server's research task takes about 4 s, the Rust peers' slow steps 4.5 s).
pub const LIMIT: Duration = Duration::from_secs(60);

/// The Tasks extension's protocol version.
pub const EXTENSION: &str = "2026-07-28";
/// The protocol version with tasks in the core protocol.
pub const LEGACY: &str = "2025-11-25";

/// The wire a scenario asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    /// No preference (the default): the front-end picks what the server offers.
    Auto,
    /// The 2026-07-28 Tasks extension, forced.
    Extension,
    /// 2025-11-25, forced.
    Legacy,
}

impl Wire {
    /// The protocol version to force, `None` for [`Wire::Auto`].
    pub fn forced(self) -> Option<&'static str> {
        match self {
            Wire::Auto => None,
            Wire::Extension => Some(EXTENSION),
            Wire::Legacy => Some(LEGACY),
        }
    }
}

/// Where a started peer is reached.
#[derive(Debug, Clone)]
pub enum Endpoint {
    /// A Streamable HTTP endpoint.
    Http(String),
    /// A server the front-end starts itself over stdio: the program and its arguments.
    Stdio {
        /// The program.
        program: String,
        /// Its arguments.
        args: Vec<String>,
    },
}

/// A peer started for one test: its endpoint, and the server process (killed when
/// this is dropped) when it listens on HTTP.
#[derive(Debug)]
pub struct Running {
    /// Where to reach it.
    pub at: Endpoint,
    _server: Option<crate::peers::PeerServer>,
}

impl Running {
    /// A peer listening on HTTP.
    pub fn http(server: crate::peers::PeerServer) -> Self {
        Running {
            at: Endpoint::Http(server.url.clone()),
            _server: Some(server),
        }
    }

    /// A peer each connection starts over stdio.
    pub fn stdio(program: String, args: Vec<String>) -> Self {
        Running {
            at: Endpoint::Stdio { program, args },
            _server: None,
        }
    }
}

/// A text a scenario expects.
#[derive(Debug, Clone, Copy)]
pub enum Text {
    /// Exactly this.
    Is(&'static str),
    /// Containing this.
    Has(&'static str),
    /// Starting with the first and ending with the second.
    Around(&'static str, &'static str),
}

impl Text {
    /// Whether `got` is the expected text.
    pub fn matches(self, got: &str) -> bool {
        match self {
            Text::Is(t) => got == t,
            Text::Has(t) => got.contains(t),
            Text::Around(a, b) => got.starts_with(a) && got.ends_with(b),
        }
    }
}

/// How the front-end answers the questions (elicitations) a call asks.
#[derive(Debug, Clone, Copy)]
pub enum Answer {
    /// No question expected; a front-end that gets one fails.
    None,
    /// Accept, with `value` for the question's one field.
    Accept(&'static Question),
    /// Decline.
    Decline(&'static Question),
}

/// A tool that asks one question mid-task, and how to answer it.
#[derive(Debug)]
pub struct Question {
    /// The tool.
    pub tool: &'static str,
    /// Its arguments, as JSON text.
    pub args: &'static str,
    /// The question's message.
    pub asks: Text,
    /// What the CLI shows at the terminal, in order, before it reads the answer.
    pub shows: &'static [&'static str],
    /// The form's one field.
    pub field: &'static str,
    /// The JSON type that field declares when it offers no `oneOf` choice (`string`,
    /// `boolean`): the library checks it and sends `value` as that type.
    pub kind: &'static str,
    /// The library's answer for `field` (one of its `oneOf` consts, when it has them).
    pub value: &'static str,
    /// The line a person types at the CLI's prompt for that answer.
    pub typed: &'static str,
    /// The result once answered.
    pub answered: Text,
    /// The result once declined.
    pub declined: Text,
    /// Status messages seen while the task runs (each must be seen).
    pub messages: &'static [Text],
}

/// A tool run as a task to its end.
#[derive(Debug)]
pub struct Steps {
    /// The tool.
    pub tool: &'static str,
    /// Its arguments, as JSON text.
    pub args: &'static str,
    /// Its result text.
    pub result: Text,
    /// The field of `structuredContent` that holds the result text, when the peer
    /// sends structured content.
    pub structured: Option<&'static str>,
    /// Status messages seen while it runs (each must be seen).
    pub messages: &'static [Text],
    /// When set, at least two status messages start with this and they arrive in order.
    pub ordered: Option<&'static str>,
}

/// A task that runs until cancelled (or long enough to be cancelled).
#[derive(Debug)]
pub struct Long {
    /// The tool.
    pub tool: &'static str,
    /// Its arguments, as JSON text.
    pub args: &'static str,
    /// When set, the scenario waits for a status message starting with this (the task
    /// is seen working) before it cancels.
    pub ticks: Option<&'static str>,
    /// The statuses the acknowledgement of `tasks/cancel` may show (a peer that cancels
    /// cooperatively may still say `working`).
    pub acknowledged: &'static [&'static str],
}

/// A plain call whose tool asks the client for a sampling (`sampling/createMessage`).
#[derive(Debug)]
pub struct Sampling {
    /// The tool.
    pub tool: &'static str,
    /// Its arguments, as JSON text.
    pub args: &'static str,
    /// What the request's prompt holds (the library reads it from the request, the CLI
    /// shows it at the terminal).
    pub prompt: &'static str,
    /// What the CLI shows before it reads the reply.
    pub shows: &'static str,
    /// Whether the tool runs as a task: the sampling is asked on the task's behalf
    /// (while `tasks/result` is held open) instead of during a plain call.
    pub task: bool,
    /// When set, the result's text is exactly this followed by the reply (else it
    /// holds the reply somewhere).
    pub wraps: Option<&'static str>,
}

/// A plain call that reports progress.
#[derive(Debug)]
pub struct Progress {
    /// The tool.
    pub tool: &'static str,
    /// Its arguments, as JSON text.
    pub args: &'static str,
    /// The progress notifications, `(progress, total)`, in order.
    pub steps: &'static [(f64, Option<f64>)],
    /// Its result text.
    pub result: Text,
}

/// What the side under test sees of a server it connects to.
#[derive(Debug)]
pub struct Negotiated {
    /// The protocol version agreed (the library only).
    pub wire: Option<String>,
    /// Whether the server offers tasks on it (the library only).
    pub tasks: Option<bool>,
    /// The server's name (the library only).
    pub server: Option<String>,
    /// The tools, in the server's order, with the task support each declares.
    pub tools: Vec<(String, Option<String>)>,
}

/// A task as its caller saw it end.
#[derive(Debug, Default)]
pub struct Run {
    /// Its id (the CLI reads it from the "task ID started" line).
    pub id: Option<String>,
    /// The protocol version of the connection (the CLI reads it from its status line).
    pub wire: Option<String>,
    /// The final status (`completed`, `cancelled`, `failed`).
    pub status: String,
    /// The result's text.
    pub text: String,
    /// The result's `structuredContent` (when the front-end reads it).
    pub structured: Option<Value>,
    /// The status messages seen while it ran, in order, each once (`None` when the
    /// CLI printed JSON, which holds none, or drew them on a terminal, where they are
    /// redrawn in place).
    pub messages: Option<Vec<String>>,
    /// The statuses seen while it ran, in order (the library only).
    pub statuses: Option<Vec<String>>,
    /// The questions asked, in order (the library only: the CLI checks what it shows
    /// while it runs).
    pub asked: Option<Vec<Asked>>,
    /// The status a `tasks/get` of the same connection read once it ended (the
    /// library only; the CLI's process has ended).
    pub got_after: Option<String>,
}

/// A question the library's handler was asked.
#[derive(Debug, Clone)]
pub struct Asked {
    /// Its method (`elicitation/create`, `sampling/createMessage`).
    pub method: String,
    /// Its message.
    pub message: Option<String>,
    /// The task it was asked on behalf of.
    pub task_id: Option<String>,
}

/// A task started and left running (`call --detach`).
#[derive(Debug)]
pub struct Started {
    /// Its id.
    pub id: String,
    /// The protocol version of the connection that started it.
    pub wire: String,
    /// The HTTP session it lives in, when the server keeps one.
    pub session: Option<String>,
}

/// A task's status read by a `tasks/get` or as the acknowledgement of a cancel.
#[derive(Debug)]
pub struct Seen {
    /// Its id, as the server echoed it.
    pub id: Option<String>,
    /// Its status.
    pub status: String,
    /// Its status message.
    pub message: Option<String>,
}

/// A request the server refused.
#[derive(Debug)]
pub struct Refused {
    /// The JSON-RPC error code (the CLI reads it from its `server error CODE` line).
    pub code: Option<i64>,
    /// The exit status (the CLI only).
    pub exit: Option<i32>,
    /// What was said about it.
    pub text: String,
}

/// The result of a plain call that asked for a sampling.
#[derive(Debug)]
pub struct Sampled {
    /// The prompt as the library's handler read it (the CLI checks it on the terminal).
    pub prompt: Option<String>,
    /// How many questions the library's handler was asked (the CLI: `None`).
    pub asked: Option<usize>,
    /// The call's result text.
    pub text: String,
}

/// The result of a plain call that reported progress.
#[derive(Debug)]
pub struct Progressed {
    /// The notifications `(progress, total)` in order (the CLI parses its
    /// `progress P/T` lines).
    pub steps: Vec<(f64, Option<f64>)>,
    /// The call's result text.
    pub text: String,
}

/// The side under test: the client library or the CLI. Each method connects to `at`
/// on `wire` (the CLI runs a new process per call); `Task` is what a started task
/// keeps alive between calls (the library: its client and handle; the CLI: nothing).
#[allow(async_fn_in_trait)] // used generically by this crate's scenarios only
pub trait FrontEnd {
    /// What a started task keeps alive.
    type Task;

    /// The server's wire, task offer and tools.
    async fn negotiate(&self, at: &Endpoint, wire: Wire) -> Negotiated;

    /// Calls `tool` as a task and follows it to its end, answering questions as `answer`
    /// says.
    async fn call(
        &self,
        at: &Endpoint,
        wire: Wire,
        tool: &str,
        args: &Value,
        answer: Answer,
    ) -> Run;

    /// Calls `tool` as a task and leaves it running.
    async fn start(
        &self,
        at: &Endpoint,
        wire: Wire,
        tool: &str,
        args: &Value,
    ) -> (Started, Self::Task);

    /// Calls `tool` as a task on a wire without tasks; returns the refusal.
    async fn start_refused(&self, at: &Endpoint, wire: Wire, tool: &str, args: &Value) -> Refused;

    /// Reads the task's status (the library: on the connection that started it).
    async fn get(&self, at: &Endpoint, wire: Wire, task: &Started, kept: &Self::Task) -> Seen;

    /// Cancels the task on a server that does not offer `tasks/cancel`; returns the
    /// refusal.
    async fn cancel_refused(
        &self,
        at: &Endpoint,
        wire: Wire,
        task: &Started,
        kept: &Self::Task,
    ) -> Refused;

    /// Cancels the task; returns the acknowledgement.
    async fn cancel(&self, at: &Endpoint, wire: Wire, task: &Started, kept: &Self::Task) -> Seen;

    /// Waits for the task's end on the connection that started it (the CLI: `watch`).
    async fn result(&self, at: &Endpoint, wire: Wire, task: &Started, kept: Self::Task) -> Run;

    /// Lets the starting connection go, then waits for the task's end from a new one
    /// that finds it by id (rejoining its session when it has one).
    async fn resume(&self, at: &Endpoint, wire: Wire, task: &Started, kept: Self::Task) -> Run;

    /// Waits until a status message of the task starts with `prefix`.
    async fn wait_for_message(
        &self,
        at: &Endpoint,
        wire: Wire,
        task: &Started,
        kept: &mut Self::Task,
        prefix: &str,
    );

    /// Reads a task that does not exist; returns the refusal.
    async fn get_unknown(&self, at: &Endpoint, wire: Wire, id: &str) -> Refused;

    /// A plain call of `sampling.tool`, answering its sampling with `reply`.
    async fn sample(&self, at: &Endpoint, wire: Wire, sampling: &Sampling, reply: &str) -> Sampled;

    /// A plain call of `progress.tool`, collecting its progress.
    async fn progress(&self, at: &Endpoint, wire: Wire, progress: &Progress) -> Progressed;
}

/// Runs a scenario's future to its end on a runtime of its own (each generated test
/// is a plain `#[test]`, so the test files need no runtime macro).
pub fn block_on<F: Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime")
        .block_on(future)
}

/// `text` parsed as JSON (the peers' arguments are written as JSON text).
pub fn json(text: &str) -> Value {
    serde_json::from_str(text)
        .unwrap_or_else(|e| panic!("bad JSON in the peer table ({e}): {text}"))
}

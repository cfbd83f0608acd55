//! The peers the scenarios run against, one description each: how to start it, what
//! its tools are called and what they answer. The table of which scenario runs on
//! which peer and wire is [`peer_suite!`](crate::peer_suite!).

use super::{Long, Progress, Question, Running, Sampling, Steps, Text, EXTENSION, LEGACY};
use crate::peers as launch;

/// A server nobody here wrote, as the scenarios see it.
#[derive(Debug)]
pub struct Peer {
    /// How failures name it (library and version).
    pub name: &'static str,
    /// Starts it for one test; `None` (with a notice) when its variable is unset.
    pub start: fn() -> Option<Running>,
    /// The wire the front-end picks when none is forced.
    pub auto: &'static str,
    /// The wires on which it keeps an HTTP session, where its tasks live: later
    /// connections rejoin it to find them.
    pub sessions: &'static [&'static str],
    /// Its name in `initialize` / `server/discover`, when checked.
    pub server: Option<&'static str>,
    /// Its tools, in order, when checked exactly.
    pub tools: Option<&'static [&'static str]>,
    /// A tool that declares task support `required`, when it has one.
    pub required: Option<&'static str>,
    /// A task followed to its end by the call that started it.
    pub steps: Steps,
    /// A shorter task, started detached and followed by id.
    pub detached: Steps,
    /// A task cancelled while it runs.
    pub long: Long,
    /// A tool that asks a question mid-task.
    pub question: Option<&'static Question>,
    /// The JSON-RPC error code of `tasks/get` for an unknown id.
    pub unknown: i64,
    /// Whether a task's id is unknown outside its session: checked (the refusal has
    /// the code `unknown`) from a new connection once a detached task has ended.
    pub fenced: bool,
    /// A plain call that asks for a sampling.
    pub sampling: Option<Sampling>,
    /// A plain call that reports progress.
    pub progress: Option<Progress>,
}

impl Peer {
    /// Starts it, or `None` with a notice when it is not configured.
    pub fn start(&self) -> Option<Running> {
        (self.start)()
    }

    /// Whether it keeps an HTTP session on the wire `negotiated`.
    pub fn keeps_sessions(&self, negotiated: &str) -> bool {
        self.sessions.contains(&negotiated)
    }

    /// The wire the connection speaks when `wire` is asked for.
    pub fn expected(&self, wire: super::Wire) -> &'static str {
        wire.forced().unwrap_or(self.auto)
    }
}

// ---------------------------------------------------------------- fastmcp-tasks

static FASTMCP_QUESTION: Question = Question {
    tool: "ask_name",
    args: r#"{"greeting": "Hi"}"#,
    asks: Text::Is("What is your name?"),
    shows: &["What is your name?"],
    field: "name",
    kind: "string",
    value: "Ada",
    typed: "Ada",
    answered: Text::Is("Hi, Ada!"),
    declined: Text::Is("no name given"),
    messages: &[],
};

/// FastMCP with `fastmcp-tasks` 4.1.4 (the Tasks extension on a Docket `memory://`
/// queue): `tests/interop/fastmcp_tasks_server.py`, stateless HTTP.
pub static FASTMCP_TASKS: Peer = Peer {
    name: "fastmcp-tasks 4.1.4",
    start: || launch::fastmcp_tasks().map(Running::http),
    auto: EXTENSION,
    sessions: &[],
    server: Some("fastmcp-tasks-interop"),
    tools: Some(&["slow_steps", "ask_name", "run_until_cancelled"]),
    required: None,
    steps: Steps {
        tool: "slow_steps",
        args: r#"{"steps": 3, "step_ms": 600}"#,
        result: Text::Is("done after 3 steps"),
        structured: Some("result"),
        // Polled every 100 ms, 600 ms apart: each step's message is seen, in order.
        messages: &[Text::Is("step 1 of 3"), Text::Is("step 3 of 3")],
        ordered: Some("step "),
    },
    detached: Steps {
        tool: "slow_steps",
        args: r#"{"steps": 2, "step_ms": 300}"#,
        result: Text::Is("done after 2 steps"),
        structured: Some("result"),
        messages: &[],
        ordered: None,
    },
    long: Long {
        tool: "run_until_cancelled",
        args: "{}",
        ticks: Some("tick "),
        acknowledged: &["cancelled"],
    },
    question: Some(&FASTMCP_QUESTION),
    unknown: -32602,
    fenced: false,
    sampling: None,
    progress: None,
};

// ---------------------------------------------------------------- server-everything

static EVERYTHING_QUESTION: Question = Question {
    tool: "simulate-research-query",
    args: r#"{"topic": "python", "ambiguous": true}"#,
    asks: Text::Has("\"python\""),
    shows: &["2) Python snake species", "Clarification"],
    field: "interpretation",
    kind: "string",
    value: "snake",
    typed: "2",
    answered: Text::Has("# Research Report: python (snake)"),
    declined: Text::Has("# Research Report: python (User declined - using default interpretation)"),
    messages: &[
        Text::Is("Gathering sources..."),
        Text::Has("Requesting clarification"),
    ],
};

static EVERYTHING_STDIO_QUESTION: Question = Question {
    tool: "simulate-research-query",
    args: r#"{"topic": "python", "ambiguous": true}"#,
    asks: Text::Has("\"python\""),
    shows: &["1) Python programming language", "Clarification"],
    field: "interpretation",
    kind: "string",
    value: "programming",
    typed: "1",
    answered: Text::Has("# Research Report: python (programming)"),
    declined: Text::Has("# Research Report: python (User declined - using default interpretation)"),
    messages: &[Text::Is("Generating report...")],
};

/// The everything server's research task, run to its report, with the status
/// messages of its stages when they are checked (a task followed by the call that
/// started it; `watch --json` prints none).
const fn research(args: &'static str, report: &'static str, messages: &'static [Text]) -> Steps {
    Steps {
        tool: "simulate-research-query",
        args,
        result: Text::Has(report),
        structured: None,
        messages,
        ordered: None,
    }
}

/// The status messages of the research task's first and last stages.
const STAGES: &[Text] = &[
    Text::Is("Gathering sources..."),
    Text::Is("Generating report..."),
];

/// The everything server's research task as one to cancel: it takes about 4 s.
const RESEARCH_TO_CANCEL: Long = Long {
    tool: "simulate-research-query",
    args: r#"{"topic": "cancel me"}"#,
    ticks: None,
    acknowledged: &["cancelled"],
};

/// `@modelcontextprotocol/server-everything` 2026.8.31 (the official test server,
/// 2025-11-25 tasks through the TypeScript SDK) over Streamable HTTP; it keeps tasks
/// per session.
pub static EVERYTHING_HTTP: Peer = Peer {
    name: "server-everything 2026.8.31 (HTTP)",
    start: || launch::everything_http().map(Running::http),
    auto: LEGACY,
    sessions: &[LEGACY],
    server: None,
    tools: None,
    required: Some("simulate-research-query"),
    steps: research(r#"{"topic": "go"}"#, "# Research Report: go", STAGES),
    detached: research(r#"{"topic": "rust"}"#, "# Research Report: rust", &[]),
    long: RESEARCH_TO_CANCEL,
    question: Some(&EVERYTHING_QUESTION),
    unknown: -32602,
    fenced: false,
    sampling: Some(Sampling {
        tool: "trigger-sampling-request",
        args: r#"{"prompt": "autumn"}"#,
        prompt: "autumn",
        shows: "context: autumn",
        task: false,
        wraps: None,
    }),
    progress: Some(Progress {
        tool: "trigger-long-running-operation",
        args: r#"{"duration": 1, "steps": 3}"#,
        steps: &[(1.0, Some(3.0)), (2.0, Some(3.0)), (3.0, Some(3.0))],
        result: Text::Has("Steps: 3"),
    }),
};

/// The everything server over stdio: each connection starts its own.
pub static EVERYTHING_STDIO: Peer = Peer {
    name: "server-everything 2026.8.31 (stdio)",
    start: || launch::everything_stdio().map(|(program, args)| Running::stdio(program, args)),
    auto: LEGACY,
    sessions: &[],
    server: None,
    tools: None,
    required: Some("simulate-research-query"),
    steps: research(r#"{"topic": "zig"}"#, "# Research Report: zig", STAGES),
    detached: research(r#"{"topic": "rust"}"#, "# Research Report: rust", &[]),
    long: RESEARCH_TO_CANCEL,
    question: Some(&EVERYTHING_STDIO_QUESTION),
    unknown: -32602,
    fenced: false,
    sampling: Some(Sampling {
        tool: "trigger-sampling-request",
        args: r#"{"prompt": "winter"}"#,
        prompt: "winter",
        shows: "context: winter",
        task: false,
        wraps: None,
    }),
    progress: Some(Progress {
        tool: "trigger-long-running-operation",
        args: r#"{"duration": 1, "steps": 3}"#,
        steps: &[(1.0, Some(3.0)), (2.0, Some(3.0)), (3.0, Some(3.0))],
        result: Text::Has("Steps: 3"),
    }),
};

// ---------------------------------------------------------------- Rust peers

static RUST_QUESTION: Question = Question {
    tool: "ask_name",
    args: "{}",
    asks: Text::Is("What is your name?"),
    shows: &["What is your name?", "Name: "],
    field: "name",
    kind: "string",
    value: "Ada",
    typed: "Ada",
    answered: Text::Is("hello Ada"),
    declined: Text::Is("no name (decline)"),
    messages: &[],
};

/// The Rust peers' `slow_steps`: tower-mcp suggests polling every 2 s, so the steps
/// are long enough for one to show.
const RUST_STEPS: Steps = Steps {
    tool: "slow_steps",
    args: r#"{"steps": 3, "step_ms": 1500}"#,
    result: Text::Is("done 3 steps"),
    structured: None,
    messages: &[Text::Around("step ", " of 3")],
    ordered: None,
};

const RUST_DETACHED: Steps = Steps {
    tool: "slow_steps",
    args: r#"{"steps": 2, "step_ms": 300}"#,
    result: Text::Is("done 2 steps"),
    structured: None,
    messages: &[],
    ordered: None,
};

/// Both Rust peers cancel cooperatively: the acknowledgement may still show `working`.
const RUST_LONG: Long = Long {
    tool: "until_cancelled",
    args: "{}",
    ticks: None,
    acknowledged: &["working", "cancelled"],
};

/// rmcp 3.11 (`tests/interop/rmcp-server`): tasks on the extension wire only.
pub static RMCP: Peer = Peer {
    name: "rmcp 3.11.0",
    start: || launch::RMCP.start().map(Running::http),
    auto: EXTENSION,
    sessions: &[],
    server: None,
    tools: Some(&["slow_steps", "ask_name", "until_cancelled"]),
    required: None,
    steps: RUST_STEPS,
    detached: RUST_DETACHED,
    long: RUST_LONG,
    question: Some(&RUST_QUESTION),
    unknown: -32602,
    fenced: false,
    sampling: None,
    progress: None,
};

/// tower-mcp 0.25 (`tests/interop/tower-mcp-server`): both wires at one URL.
pub static TOWER_MCP: Peer = Peer {
    name: "tower-mcp 0.25.0",
    start: || launch::TOWER_MCP.start().map(Running::http),
    auto: EXTENSION,
    // The 2025-11-25 session lifecycle; the extension wire is sessionless.
    sessions: &[LEGACY],
    server: None,
    tools: Some(&["ask_name", "slow_steps", "until_cancelled"]),
    required: None,
    steps: RUST_STEPS,
    detached: RUST_DETACHED,
    long: RUST_LONG,
    question: Some(&RUST_QUESTION),
    unknown: -32602,
    fenced: false,
    sampling: None,
    progress: None,
};

// ---------------------------------------------------------------- turul

/// `count_to` of `bench/turul-task-server`: half-way it asks whether to keep going
/// (turul parks the task in `input_required`; answered, the tool runs again from the
/// top and skips to where it stopped through its `requestState`).
static TURUL_QUESTION: Question = Question {
    tool: "count_to",
    args: r#"{"n": 2, "delay_ms": 100}"#,
    asks: Text::Is("Reached 1 of 2. Keep counting?"),
    shows: &["Reached 1 of 2. Keep counting?"],
    field: "keep_going",
    kind: "boolean",
    value: "true",
    typed: "y",
    answered: Text::Is("counted to 2"),
    declined: Text::Is("stopped at 1 of 2"),
    messages: &[],
};

/// turul's tasks: `slow_compute` (the benchmark's tool). turul gives a tool no way to
/// set its task's status message: every task shows the one its runtime writes at
/// creation, "executing tool" (docs/interop.md, "Peers' problems").
const TURUL_STEPS: Steps = Steps {
    tool: "slow_compute",
    args: r#"{"seconds": 1.5, "label": "steps"}"#,
    result: Text::Is("slow_compute 'steps' finished after 1.5 s"),
    structured: None,
    messages: &[Text::Is("executing tool")],
    ordered: None,
};

const TURUL_DETACHED: Steps = Steps {
    tool: "slow_compute",
    args: r#"{"seconds": 0.3, "label": "detached"}"#,
    result: Text::Is("slow_compute 'detached' finished after 0.3 s"),
    structured: None,
    messages: &[],
    ordered: None,
};

/// turul's `tasks/cancel` marks the task `cancelled` in its store before it answers
/// (and aborts the worker); the answer itself is an empty acknowledgement, after
/// which the front-end reads the task.
const TURUL_LONG: Long = Long {
    tool: "slow_compute",
    args: r#"{"seconds": 600, "label": "cancel me"}"#,
    ticks: None,
    acknowledged: &["cancelled"],
};

/// What the turul peer is on every store: the Tasks extension on the stateless
/// 2026-07-28 wire, the only wire it speaks.
const TURUL: Peer = Peer {
    name: "turul-mcp-server 0.4.5 + turul-mcp-ext-tasks 0.1.5",
    start: || None,
    auto: EXTENSION,
    sessions: &[],
    server: Some("turul-task-server"),
    tools: None,
    required: None,
    steps: TURUL_STEPS,
    detached: TURUL_DETACHED,
    long: TURUL_LONG,
    question: Some(&TURUL_QUESTION),
    unknown: -32602,
    fenced: false,
    sampling: None,
    progress: None,
};

/// turul-mcp-server 0.4.5 with turul-mcp-ext-tasks 0.1.5 on its in-memory store
/// (`bench/turul-task-server --store memory`).
pub static TURUL_MEMORY: Peer = Peer {
    name: "turul-mcp-server 0.4.5 + turul-mcp-ext-tasks 0.1.5 (memory)",
    start: || launch::turul(launch::TurulStore::Memory).map(Running::http),
    ..TURUL
};

/// The same on turul's SQLite store (a new file per test).
pub static TURUL_SQLITE: Peer = Peer {
    name: "turul-mcp-server 0.4.5 + turul-mcp-ext-tasks 0.1.5 (SQLite)",
    start: || launch::turul(launch::TurulStore::Sqlite).map(Running::http),
    ..TURUL
};

// ---------------------------------------------------------------- TypeScript SDK examples

/// The TypeScript SDK's `simpleStreamableHttp.js` (`@modelcontextprotocol/sdk` 1.32.2,
/// HTTP only): its task tool `delay` answers "Completed Nms delay" after N ms, with no
/// status message on the way. It keeps tasks per session, and dies some seconds after
/// one of its tasks is cancelled: each test starts its own.
pub static TS_STREAMABLE_HTTP: Peer = Peer {
    name: "TypeScript SDK 1.32.2 simpleStreamableHttp.js",
    start: || launch::ts_example("simpleStreamableHttp.js", "MCP_PORT").map(Running::http),
    auto: LEGACY,
    sessions: &[LEGACY],
    server: Some("simple-streamable-http-server"),
    tools: None,
    required: Some("delay"),
    steps: Steps {
        tool: "delay",
        args: r#"{"duration": 1200}"#,
        result: Text::Is("Completed 1200ms delay"),
        structured: None,
        messages: &[],
        ordered: None,
    },
    detached: Steps {
        tool: "delay",
        args: r#"{"duration": 1500}"#,
        result: Text::Is("Completed 1500ms delay"),
        structured: None,
        messages: &[],
        ordered: None,
    },
    long: Long {
        tool: "delay",
        args: r#"{"duration": 60000}"#,
        ticks: None,
        acknowledged: &["cancelled"],
    },
    question: None,
    unknown: -32602,
    fenced: true,
    sampling: None,
    progress: None,
};

static TS_CONFIRM_DELETE: Question = Question {
    tool: "confirm_delete",
    args: r#"{"filename": "notes.txt"}"#,
    asks: Text::Has("notes.txt"),
    shows: &["Are you sure you want to delete 'notes.txt'?", "[y/n]"],
    field: "confirm",
    kind: "boolean",
    value: "true",
    typed: "y",
    answered: Text::Is("Deleted 'notes.txt'"),
    declined: Text::Is("Deletion cancelled"),
    messages: &[],
};

/// The TypeScript SDK's `simpleTaskInteractive.js` (HTTP only): two task tools that
/// ask the client mid-task while `tasks/result` is held open, `confirm_delete` (an
/// elicitation) and `write_haiku` (a sampling). It keeps tasks per session and does
/// not offer `tasks/cancel`.
pub static TS_TASK_INTERACTIVE: Peer = Peer {
    name: "TypeScript SDK 1.32.2 simpleTaskInteractive.js",
    start: || launch::ts_example("simpleTaskInteractive.js", "PORT").map(Running::http),
    auto: LEGACY,
    sessions: &[LEGACY],
    server: Some("simple-task-interactive"),
    tools: Some(&["confirm_delete", "write_haiku"]),
    required: Some("confirm_delete"),
    // Unused: both tools ask the client before they end (see the table).
    steps: Steps {
        tool: "write_haiku",
        args: r#"{"topic": "autumn"}"#,
        result: Text::Has("Haiku:"),
        structured: None,
        messages: &[],
        ordered: None,
    },
    detached: Steps {
        tool: "write_haiku",
        args: r#"{"topic": "autumn"}"#,
        result: Text::Has("Haiku:"),
        structured: None,
        messages: &[],
        ordered: None,
    },
    // A task to cancel, which this server does not offer.
    long: Long {
        tool: "write_haiku",
        args: r#"{"topic": "winter"}"#,
        ticks: None,
        acknowledged: &[],
    },
    question: Some(&TS_CONFIRM_DELETE),
    // Its own tasks/get handler throws: an internal error, not invalid params.
    unknown: -32603,
    fenced: false,
    sampling: Some(Sampling {
        tool: "write_haiku",
        args: r#"{"topic": "autumn"}"#,
        prompt: "autumn",
        shows: "Write a haiku about autumn",
        task: true,
        wraps: Some("Haiku:\n"),
    }),
    progress: None,
};

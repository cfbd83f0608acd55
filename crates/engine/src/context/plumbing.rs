//! How a [`TaskContext`] is built: by the engine for a task, and by the server for a
//! plain call (and to hand a task's work its preflight answers).
//!
//! Why a module of its own, hidden from the docs: a tool is handed its context and never
//! builds one, so these constructors are not part of the surface a tool author sees
//! (`TaskContext` itself, re-exported by the `mcp-tasks` facade, has none of them). The
//! server needs them across the crate boundary, so they are public here, in a module
//! the facade does not re-export; nothing here is a stable API.

use mcp_tasks_protocol::TaskId;
use serde_json::{Map, Value};
use std::sync::{Arc, Weak};
use tokio_util::sync::CancellationToken;

use super::host::TaskHost;
use super::sinks::{steady, ClientRequester, LogSink, ProgressSink};
use super::{Shared, Sinks, TaskContext};
use crate::reader::{OpaqueReader, ResultReading};
use crate::steps::StepLog;

/// The parts of the context of work that is not a task (a synchronous `tools/call`),
/// collected before [`TaskContextParts::build`] makes the [`TaskContext`].
#[derive(Clone)]
pub struct TaskContextParts {
    cancel: CancellationToken,
    progress: Option<ProgressSink>,
    client: Option<(ClientRequester, Value, Arc<dyn ResultReading>)>,
    log: Option<LogSink>,
    answers: Map<String, Value>,
}

impl std::fmt::Debug for TaskContextParts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TaskContextParts")
            .field("progress", &self.progress.is_some())
            .field("client_requests", &self.client.is_some())
            .field("log", &self.log.is_some())
            .field("answers", &self.answers.len())
            .finish()
    }
}

impl TaskContextParts {
    /// The parts of a context for work that is not a task: cancelled through `cancel`
    /// (`notifications/cancelled`), progress to `progress`. Without more, its questions
    /// fail with [`InputError::Unsupported`](crate::InputError::Unsupported) and its
    /// log messages are dropped.
    pub fn detached(cancel: CancellationToken, progress: Option<ProgressSink>) -> Self {
        TaskContextParts {
            cancel,
            progress,
            client: None,
            log: None,
            answers: Map::new(),
        }
    }

    /// The context may ask the client directly (a synchronous call): input requests
    /// go through `requester`, checked first by `reader` against
    /// `client_capabilities`.
    pub fn client_requests(
        mut self,
        requester: ClientRequester,
        client_capabilities: Value,
        reader: Arc<dyn ResultReading>,
    ) -> Self {
        self.client = Some((requester, client_capabilities, reader));
        self
    }

    /// The context sends [`TaskContext::log`] messages to `sink`.
    pub fn log_sink(mut self, sink: LogSink) -> Self {
        self.log = Some(sink);
        self
    }

    /// The context holds the answers to the questions asked before the work started
    /// (a tool's preflight questions, answered by MRTR rounds), by key.
    pub fn answers(mut self, answers: Map<String, Value>) -> Self {
        self.answers = answers;
        self
    }

    /// The context. A plain call's progress only grows and says each step once (see
    /// `sinks::steady`).
    pub fn build(self) -> TaskContext {
        let (requester, client_capabilities, reader) = match self.client {
            Some((requester, capabilities, reader)) => (Some(requester), capabilities, reader),
            None => (
                None,
                Value::Null,
                Arc::new(OpaqueReader) as Arc<dyn ResultReading>,
            ),
        };
        let shared = Shared {
            task: None,
            sinks: Sinks::Given {
                progress: self.progress.map(steady),
                log: self.log,
            },
            client_capabilities: Arc::new(client_capabilities),
            reader,
            people_answer: false,
            requester,
            steps: Arc::new(StepLog::first()),
        };
        let ctx = TaskContext {
            shared: Arc::new(shared),
            cancel: self.cancel,
            answers: None,
        };
        with_answers(ctx, self.answers)
    }
}

/// `ctx` holding the answers to the questions asked before the work started (a
/// tool's preflight questions, answered by MRTR rounds or by input requests of the
/// task), by key: what [`TaskContext::answer`] reads.
pub fn with_answers(mut ctx: TaskContext, answers: Map<String, Value>) -> TaskContext {
    ctx.answers = (!answers.is_empty()).then(|| Arc::new(answers));
    ctx
}

/// What a task's context addresses its progress reports and log messages with: the
/// session that created the task, and the request's progress token when it asked for
/// progress.
pub(crate) struct TaskRoute {
    pub(crate) session: Option<String>,
    pub(crate) token: Option<Value>,
}

impl TaskContext {
    /// The context of a task's work: `host` answers its status messages, questions and
    /// steps, and takes its progress reports and log messages (addressed by `route`).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn for_task(
        id: TaskId,
        host: Weak<dyn TaskHost>,
        cancel: CancellationToken,
        route: TaskRoute,
        client_capabilities: Arc<Value>,
        reader: Arc<dyn ResultReading>,
        people_answer: bool,
        steps: Arc<StepLog>,
    ) -> Self {
        let shared = Shared {
            task: Some((id, host)),
            sinks: Sinks::Task {
                session: route.session,
                token: route.token.map(Box::new),
            },
            client_capabilities,
            reader,
            people_answer,
            requester: None,
            steps,
        };
        TaskContext {
            shared: Arc::new(shared),
            cancel,
            answers: None,
        }
    }
}

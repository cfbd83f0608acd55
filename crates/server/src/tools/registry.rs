//! The tools a server offers: name, input schema, task support and handler.

use futures::future::BoxFuture;
use mcp_tasks_engine::{ExternalPoller, Outcome, RetryPolicy, TaskContext};
use mcp_tasks_protocol::RpcError;
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use super::schema_check::SchemaCheck;

pub use super::result::ToolResult;
pub use mcp_tasks_protocol::TaskSupport;

/// What a tool handler returns: a `CallToolResult` object (build one with
/// [`ToolResult`] and `.into()`), or a JSON-RPC error for protocol-level failures.
pub type ToolFuture = BoxFuture<'static, Result<Value, RpcError>>;

/// A tool's handler as a task's work: the arguments and context to the outcome, in
/// one boxed future (a running task keeps it for as long as it runs).
pub(crate) type WorkHandler =
    Arc<dyn Fn(Map<String, Value>, TaskContext) -> mcp_tasks_engine::Work + Send + Sync>;

/// The handler behind a tool. Receives validated arguments and a context.
pub type ToolHandler = Arc<dyn Fn(Map<String, Value>, TaskContext) -> ToolFuture + Send + Sync>;

/// Why a tool could not be registered.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RegistryError {
    /// The input schema is not a valid JSON Schema.
    #[error("tool '{tool}': inputSchema is not a valid JSON Schema: {reason}")]
    InvalidSchema {
        /// The tool.
        tool: String,
        /// What the schema compiler said.
        reason: String,
    },
    /// Two tools share a name.
    #[error("tool '{0}' is defined twice")]
    Duplicate(String),
    /// The name is one of the server's own task tools.
    #[error("tool '{0}' has the name of mcp-tasks' own task tool '{0}' (offered to clients that speak no tasks): give the tool another name")]
    Reserved(String),
}

/// A question a tool needs answered before its work starts (MRTR on the extension
/// wire; an input request of the task on 2025-11-25).
#[derive(Debug, Clone, PartialEq)]
pub struct Preflight {
    /// The key the answer is filed under (`ctx.answer(key)`).
    pub key: String,
    /// The question.
    pub message: String,
    /// The form's JSON Schema (flat object of primitive properties).
    pub schema: Value,
}

impl Preflight {
    /// The `elicitation/create` params of the question.
    pub fn elicit_params(&self) -> Value {
        json!({ "mode": "form", "message": self.message, "requestedSchema": self.schema })
    }
}

/// One tool.
///
/// Cheap to clone (one reference count): every call, and every task's running work,
/// holds the tool it runs, and a deep copy of its schemas per running task cost
/// kilobytes each.
#[derive(Clone)]
pub struct Tool {
    spec: Arc<ToolSpec>,
}

/// What a [`Tool`] is, shared by all its clones; the builder methods change it before
/// the tool is shared (copying it only if a clone already exists).
#[derive(Clone)]
struct ToolSpec {
    name: String,
    title: Option<String>,
    description: String,
    input_schema: Value,
    output_schema: Option<Value>,
    /// `ToolAnnotations` (hints such as `readOnlyHint`), passed through as given.
    annotations: Option<Value>,
    task_support: TaskSupport,
    /// The compiled input schema, or why it did not compile (reported at registration).
    validator: Result<Arc<SchemaCheck>, String>,
    handler: ToolHandler,
    /// The handler's work as a task runs it, ending in its outcome, in one box (set
    /// by [`Tool::from_fn`]); `None`: the handler's future, mapped.
    work: Option<WorkHandler>,
    preflight: Vec<Preflight>,
    resumable: bool,
    /// Attempts and backoff of a resumable tool's tasks.
    retry: RetryPolicy,
    /// Retention of this tool's tasks when the client asks for none.
    default_ttl: Option<std::time::Duration>,
    /// Set for tools whose work runs in another system ([`crate::tools::external`]).
    external: Option<ExternalSpec>,
    /// Set for a call's tool behind an approval gate ([`crate::approvals`]): its
    /// call must become a task whatever the client asked for.
    needs_task: bool,
    /// Set for a call held for people before it runs (an approval): the longest
    /// time it may wait for them (`Duration::MAX`: as long as its task may live). Its
    /// task's TTL is raised to cover that wait (see `calls::call::held_ttl`).
    held_for: Option<std::time::Duration>,
    /// How long a call typically runs, when the tool says (see
    /// [`Tool::expected_duration`]).
    expected: Option<std::time::Duration>,
}

impl fmt::Debug for Tool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tool")
            .field("name", &self.spec.name)
            .field("task_support", &self.spec.task_support)
            .finish()
    }
}

impl Tool {
    /// A tool with a JSON Schema for its arguments (an object schema) and a handler
    /// that receives the raw arguments: for tools whose schema is only known at run
    /// time (e.g. read from a configuration file). Prefer [`Tool::from_fn`] when the
    /// arguments have a Rust type.
    ///
    /// # Errors
    /// [`RegistryError::InvalidSchema`] when the schema does not compile.
    pub fn new<F>(
        name: impl Into<String>,
        description: impl Into<String>,
        input_schema: Value,
        handler: F,
    ) -> Result<Self, RegistryError>
    where
        F: Fn(Map<String, Value>, TaskContext) -> ToolFuture + Send + Sync + 'static,
    {
        let tool = Tool::build(
            name.into(),
            description.into(),
            input_schema,
            None,
            Arc::new(handler),
        );
        tool.check()?;
        Ok(tool)
    }

    /// The one constructor: compiles the schema, keeping a failure for [`Tool::check`].
    pub(crate) fn build(
        name: String,
        description: String,
        input_schema: Value,
        output_schema: Option<Value>,
        handler: ToolHandler,
    ) -> Self {
        let validator = SchemaCheck::compile(&input_schema).map(Arc::new);
        let spec = ToolSpec {
            name,
            title: None,
            description,
            input_schema,
            output_schema,
            annotations: None,
            task_support: TaskSupport::Forbidden,
            validator,
            handler,
            work: None,
            preflight: Vec::new(),
            resumable: false,
            retry: RetryPolicy::default(),
            default_ttl: None,
            external: None,
            needs_task: false,
            held_for: None,
            expected: None,
        };
        Tool {
            spec: Arc::new(spec),
        }
    }

    /// Makes the tool an external job's (see [`Tool::external`]).
    pub(crate) fn set_external(&mut self, external: ExternalSpec) {
        Arc::make_mut(&mut self.spec).external = Some(external);
    }

    /// Sets the tool's `annotations` (`readOnlyHint`, `destructiveHint`, ... as the
    /// spec's `ToolAnnotations`), shown in `tools/list` as given.
    pub fn annotations(mut self, annotations: Value) -> Self {
        Arc::make_mut(&mut self.spec).annotations = Some(annotations);
        self
    }

    /// Whether the tool can be served: its input schema compiled.
    ///
    /// # Errors
    /// [`RegistryError::InvalidSchema`] naming the tool and the compiler's reason.
    pub fn check(&self) -> Result<(), RegistryError> {
        match &self.spec.validator {
            Ok(_) => Ok(()),
            Err(reason) => Err(RegistryError::InvalidSchema {
                tool: self.spec.name.clone(),
                reason: reason.clone(),
            }),
        }
    }

    /// Sets the `outputSchema` published in `tools/list`: the schema of the
    /// `structuredContent` the tool returns (typed tools returning [`crate::Json`] get
    /// it from the type).
    pub fn output_schema(mut self, schema: Value) -> Self {
        Arc::make_mut(&mut self.spec).output_schema = Some(schema);
        self
    }

    /// Sets how the tool may be called.
    pub fn task_support(mut self, support: TaskSupport) -> Self {
        Arc::make_mut(&mut self.spec).task_support = support;
        self
    }

    /// Adds a question the user must answer before the work starts; the handler reads
    /// the answer with `ctx.answer(key)`.
    pub fn ask_first(
        mut self,
        key: impl Into<String>,
        message: impl Into<String>,
        schema: Value,
    ) -> Self {
        Arc::make_mut(&mut self.spec).preflight.push(Preflight {
            key: key.into(),
            message: message.into(),
            schema,
        });
        self
    }

    /// The questions asked before the work starts.
    pub fn preflight(&self) -> &[Preflight] {
        &self.spec.preflight
    }

    /// Declares the tool safe to run again (idempotent, or resumable through its
    /// journaled steps, see [`TaskContext::step`]): when the process running one of its
    /// tasks dies or drains, another process (or the next start) runs it again as its
    /// next attempt instead of failing it, and the work may ask for retries
    /// ([`TaskContext::retry`]), under the tool's [`Tool::retry_policy`].
    pub fn resumable(mut self) -> Self {
        Arc::make_mut(&mut self.spec).resumable = true;
        self
    }

    /// Sets how many attempts a resumable tool's task gets in all (takeovers and
    /// retries count) and the waits between retries. Default: [`RetryPolicy::default`].
    pub fn retry_policy(mut self, policy: RetryPolicy) -> Self {
        Arc::make_mut(&mut self.spec).retry = policy;
        self
    }

    /// The tool's retry policy.
    pub fn retry(&self) -> RetryPolicy {
        self.spec.retry
    }

    /// Sets how long this tool's tasks are kept when the client asks for no TTL (an
    /// approval that may wait days), still bounded by the server's largest TTL.
    pub fn default_ttl(mut self, ttl: std::time::Duration) -> Self {
        Arc::make_mut(&mut self.spec).default_ttl = Some(ttl);
        self
    }

    /// The tool's own default TTL, if it has one.
    pub fn ttl(&self) -> Option<std::time::Duration> {
        self.spec.default_ttl
    }

    /// How to start the tool as an external job, for tools made by [`Tool::external`].
    pub(crate) fn external_spec(&self) -> Option<&ExternalSpec> {
        self.spec.external.as_ref()
    }

    /// Whether the tool runs its work in another system (see [`Tool::external`]).
    pub fn is_external(&self) -> bool {
        self.spec.external.is_some()
    }

    /// Whether the tool may be re-run after a takeover.
    pub fn is_resumable(&self) -> bool {
        self.spec.resumable
    }

    /// Sets a human-friendly title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        Arc::make_mut(&mut self.spec).title = Some(title.into());
        self
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.spec.name
    }

    /// How the tool may be called.
    pub fn support(&self) -> TaskSupport {
        self.spec.task_support
    }

    /// The `tools/list` entry.
    pub fn definition(&self) -> Value {
        let mut v = json!({
            "name": self.spec.name,
            "description": self.spec.description,
            "inputSchema": self.spec.input_schema,
            "execution": { "taskSupport": self.spec.task_support.as_str() },
        });
        if let Some(t) = &self.spec.title {
            v["title"] = json!(t);
        }
        if let Some(schema) = &self.spec.output_schema {
            v["outputSchema"] = schema.clone();
        }
        if let Some(a) = &self.spec.annotations {
            v["annotations"] = a.clone();
        }
        v
    }

    /// Whether the tool declares an `outputSchema` (clients then validate its
    /// structured content).
    pub(crate) fn has_output_schema(&self) -> bool {
        self.spec.output_schema.is_some()
    }

    /// Checks arguments against the input schema.
    ///
    /// # Errors
    /// `-32602` listing every violation with its JSON pointer.
    pub fn validate(&self, args: &Value) -> Result<(), RpcError> {
        let validator = match &self.spec.validator {
            Ok(v) => v,
            Err(reason) => {
                return Err(RpcError::new(
                    mcp_tasks_protocol::error_code::INTERNAL_ERROR,
                    format!(
                        "tool '{}' has an invalid inputSchema: {reason}",
                        self.spec.name
                    ),
                ))
            }
        };
        let problems = validator.problems(args);
        if problems.is_empty() {
            Ok(())
        } else {
            Err(RpcError::invalid_params(format!(
                "invalid arguments for tool '{}': {}",
                self.spec.name,
                problems.join("; ")
            ))
            .with_data(json!({ "inputSchema": self.spec.input_schema })))
        }
    }

    /// Says how long a call of this tool typically runs. A tool expected to outlast the
    /// task window ([`crate::ServerConfig::task_after`]) gets its task at once, with no
    /// wait to see whether it ends inline; without this the server learns it from the
    /// tool's recent calls (see [`crate::Server::task_window`]).
    pub fn expected_duration(mut self, typical: std::time::Duration) -> Self {
        Arc::make_mut(&mut self.spec).expected = Some(typical);
        self
    }

    /// How long a call typically runs, when the tool said ([`Tool::expected_duration`]).
    pub fn expected(&self) -> Option<std::time::Duration> {
        self.spec.expected
    }

    /// The JSON Schema of the tool's arguments.
    pub fn input_schema(&self) -> &Value {
        &self.spec.input_schema
    }

    /// Whether a call of this tool must become a task whatever the client asked for
    /// (its work waits for people: an approval).
    pub fn needs_task(&self) -> bool {
        self.spec.needs_task
    }

    /// The same tool with other work (a gate in front of its own): `handler` for an
    /// ordinary tool, `external_start` for an external job's. The result needs a task.
    pub(crate) fn rewired(
        &self,
        handler: ToolHandler,
        external_start: Option<ExternalStart>,
    ) -> Tool {
        let mut spec = ToolSpec::clone(&self.spec);
        spec.handler = handler;
        spec.work = None;
        if let (Some(external), Some(start)) = (spec.external.as_mut(), external_start) {
            external.start = start;
        }
        spec.needs_task = true;
        Tool {
            spec: Arc::new(spec),
        }
    }

    /// The same tool, held for people up to `wait` before it runs (an approval's
    /// longest wait; `Duration::MAX` when it has no deadline): its task lives at least
    /// that long.
    pub(crate) fn held_for(mut self, wait: std::time::Duration) -> Tool {
        Arc::make_mut(&mut self.spec).held_for = Some(wait);
        self
    }

    /// How long a call may be held for people before it runs (see [`Tool::held_for`]).
    pub(crate) fn held(&self) -> Option<std::time::Duration> {
        self.spec.held_for
    }

    /// The same tool running `work` as its tasks' work (the handler's, in one box).
    pub(crate) fn with_work(mut self, work: WorkHandler) -> Tool {
        Arc::make_mut(&mut self.spec).work = Some(work);
        self
    }

    /// The task work of the handler, when the tool has it in one box.
    pub(crate) fn work_handler(&self) -> Option<&WorkHandler> {
        self.spec.work.as_ref()
    }

    /// Starts the handler.
    pub fn call(&self, args: Map<String, Value>, ctx: TaskContext) -> ToolFuture {
        (self.spec.handler)(args, ctx)
    }
}

/// The tools of a server, in registration order.
#[derive(Debug, Clone, Default)]
pub struct ToolRegistry {
    tools: Vec<Tool>,
    index: HashMap<String, usize>,
}

impl ToolRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a tool.
    ///
    /// # Errors
    /// [`RegistryError::Duplicate`] when the name is taken, [`RegistryError::Reserved`]
    /// for the name of a task tool (`task_wait`, ...),
    /// [`RegistryError::InvalidSchema`] when its input schema does not compile.
    pub fn register(&mut self, tool: Tool) -> Result<(), RegistryError> {
        tool.check()?;
        if crate::tools::task_tool_names::is_task_tool(tool.name()) {
            return Err(RegistryError::Reserved(tool.name().to_string()));
        }
        if self.index.contains_key(tool.name()) {
            return Err(RegistryError::Duplicate(tool.name().to_string()));
        }
        self.index.insert(tool.name().to_string(), self.tools.len());
        self.tools.push(tool);
        Ok(())
    }

    /// Finds a tool by name.
    pub fn get(&self, name: &str) -> Option<&Tool> {
        self.index.get(name).and_then(|i| self.tools.get(*i))
    }

    /// All tools.
    pub fn iter(&self) -> impl Iterator<Item = &Tool> {
        self.tools.iter()
    }

    /// Whether there are no tools.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }
}

/// Starts the external job of a task: the stored state, or the outcome that ends the
/// task at once.
pub(crate) type ExternalStart = Arc<
    dyn Fn(Map<String, Value>, TaskContext) -> BoxFuture<'static, Result<Value, Outcome>>
        + Send
        + Sync,
>;

/// What the server needs to run a tool as an external job (built by
/// [`Tool::external`]).
#[derive(Clone)]
pub(crate) struct ExternalSpec {
    pub(crate) start: ExternalStart,
    pub(crate) poller: Arc<dyn ExternalPoller>,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every running task holds the tool it runs: a clone must share the tool's
    /// schemas, not copy them.
    #[test]
    fn a_tool_clone_shares_everything() {
        let tool = Tool::new(
            "t",
            "a tool",
            json!({"type": "object", "properties": {"n": {"type": "integer"}}}),
            |_args, _ctx| Box::pin(async { Ok(ToolResult::text("ok").into()) }) as ToolFuture,
        )
        .expect("a valid schema");
        let copy = tool.clone();
        assert!(Arc::ptr_eq(&tool.spec, &copy.spec));
        assert_eq!(std::mem::size_of::<Tool>(), std::mem::size_of::<usize>());
    }

    /// A typed tool's task runs its function's future in one box (the work handler);
    /// a tool rewired behind a gate runs the gate's handler instead, never the old work.
    #[test]
    fn a_typed_tool_has_its_work_in_one_box_until_rewired() {
        async fn noop(_args: crate::NoArgs) -> String {
            "ok".into()
        }
        let tool = Tool::from_fn("t", "a tool", noop);
        assert!(tool.work_handler().is_some());
        let handler: ToolHandler = Arc::new(|_args, _ctx| {
            Box::pin(async { Ok(ToolResult::text("gate").into()) }) as ToolFuture
        });
        let gated = tool.rewired(handler, None);
        assert!(gated.work_handler().is_none());
        assert!(tool.work_handler().is_some(), "the original keeps its work");
    }
}

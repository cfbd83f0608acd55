//! Typed tools: a tool is an async function of typed arguments.
//!
//! The arguments type derives `serde::Deserialize` and `schemars::JsonSchema`; its
//! schema becomes the tool's `inputSchema` and arguments are validated against it
//! before the function runs. The function may take a [`TaskContext`] as its second
//! parameter (status messages, progress, cancellation, questions to the user). What it
//! returns is anything [`IntoToolResult`]: a `String`, [`Json`] data (which also
//! publishes an `outputSchema`), a [`ToolResult`](crate::ToolResult) (a complete
//! `CallToolResult`), or a `Result` of one of those whose error becomes a tool error
//! (`isError: true`) the model can read.
//!
//! ```
//! use mcp_tasks_server::{Json, TaskSupport, Tool};
//! use mcp_tasks_engine::{Outcome, TaskContext, Work};
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct Add { a: i64, b: i64 }
//!
//! #[derive(serde::Serialize, schemars::JsonSchema)]
//! struct Sum { sum: i64 }
//!
//! async fn add(args: Add, ctx: TaskContext) -> Json<Sum> {
//!     ctx.set_status_message("adding").await;
//!     Json(Sum { sum: args.a + args.b })
//! }
//!
//! let tool = Tool::from_fn("add", "Adds two integers.", add).task_support(TaskSupport::Optional);
//! assert_eq!(tool.definition()["inputSchema"]["required"], serde_json::json!(["a", "b"]));
//! assert!(tool.definition()["outputSchema"].is_object());
//! ```

use futures::FutureExt;
use mcp_tasks_engine::{Outcome, TaskContext, Work};
use mcp_tasks_protocol::RpcError;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{json, Map, Value};
use std::fmt::Display;
use std::future::Future;
use std::sync::Arc;

use crate::tools::registry::Tool;
use crate::tools::result::ToolResult;

/// Turns what a tool function returns into a `CallToolResult`.
///
/// Implemented for text (`String`, `&'static str`), [`Json`] data, a
/// [`ToolResult`], a `CallToolResult` as a [`serde_json::Value`], `()` (an empty
/// success), and `Result<T, E>` where an
/// error becomes a tool error (`isError: true`, its message as text): the tool ran and
/// failed, which the spec asks servers to report in the result so the model sees it,
/// not as a protocol error.
pub trait IntoToolResult {
    /// The `CallToolResult` object, or a JSON-RPC error when the call failed at the
    /// protocol level ([`ProtocolError`]).
    fn into_tool_result(self) -> Result<Value, RpcError>;

    /// The `outputSchema` this type of result conforms to, when it has one (an object
    /// schema for the `structuredContent`).
    fn output_schema() -> Option<Value> {
        None
    }
}

impl IntoToolResult for String {
    fn into_tool_result(self) -> Result<Value, RpcError> {
        Ok(ToolResult::text(self).into())
    }
}

impl IntoToolResult for &'static str {
    fn into_tool_result(self) -> Result<Value, RpcError> {
        Ok(ToolResult::text(self).into())
    }
}

impl IntoToolResult for ToolResult {
    fn into_tool_result(self) -> Result<Value, RpcError> {
        Ok(self.into_value())
    }
}

impl IntoToolResult for () {
    fn into_tool_result(self) -> Result<Value, RpcError> {
        Ok(json!({ "content": [], "isError": false }))
    }
}

/// A value is taken as a complete `CallToolResult` when it is an object with a
/// `content` array (what a [`ToolResult`] becomes); any other value is treated as
/// structured data, like [`Json`].
impl IntoToolResult for Value {
    fn into_tool_result(self) -> Result<Value, RpcError> {
        if self.get("content").is_some_and(Value::is_array) {
            Ok(self)
        } else {
            Ok(structured_with_text(self.to_string(), self))
        }
    }
}

impl<T: IntoToolResult, E: Display> IntoToolResult for Result<T, E> {
    fn into_tool_result(self) -> Result<Value, RpcError> {
        match self {
            Ok(v) => v.into_tool_result(),
            // `{:#}` prints an anyhow error with its chain of causes.
            Err(e) => Ok(ToolResult::error(format!("{e:#}")).into()),
        }
    }

    fn output_schema() -> Option<Value> {
        T::output_schema()
    }
}

/// A failure at the protocol level rather than in the tool's work: the call (or the
/// task) fails with this JSON-RPC error instead of a result. Return
/// `Result<T, ProtocolError>` from a tool for that; other error types become tool
/// errors (`isError: true`), which is what the spec recommends for failures the model
/// should see.
#[derive(Debug, Clone, PartialEq)]
pub struct ProtocolError(pub RpcError);

impl From<RpcError> for ProtocolError {
    fn from(e: RpcError) -> Self {
        ProtocolError(e)
    }
}

impl<T: IntoToolResult> IntoToolResult for Result<T, ProtocolError> {
    fn into_tool_result(self) -> Result<Value, RpcError> {
        match self {
            Ok(v) => v.into_tool_result(),
            Err(ProtocolError(e)) => Err(e),
        }
    }

    fn output_schema() -> Option<Value> {
        T::output_schema()
    }
}

/// Structured data as a tool result: sent as `structuredContent` and, for clients that
/// only read `content`, as its JSON text. When `T` is an object type its schema is
/// published as the tool's `outputSchema`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Json<T>(pub T);

impl<T: Serialize + JsonSchema> IntoToolResult for Json<T> {
    fn into_tool_result(self) -> Result<Value, RpcError> {
        Ok(structured_result(&self.0, None))
    }

    fn output_schema() -> Option<Value> {
        let schema = tool_schema::<T>();
        (schema.get("type") == Some(&json!("object"))).then_some(schema)
    }
}

/// Structured data with the sentence a person (or a client that reads only `content`)
/// sees: `text` becomes the text block, `data` the `structuredContent`, and `T`'s
/// schema the tool's `outputSchema`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Structured<T> {
    /// The human-readable text block.
    pub text: String,
    /// The structured content.
    pub data: T,
}

impl<T> Structured<T> {
    /// Pairs a text with data.
    pub fn new(text: impl Into<String>, data: T) -> Self {
        Structured {
            text: text.into(),
            data,
        }
    }
}

impl<T: Serialize + JsonSchema> IntoToolResult for Structured<T> {
    fn into_tool_result(self) -> Result<Value, RpcError> {
        Ok(structured_result(&self.data, Some(self.text)))
    }

    fn output_schema() -> Option<Value> {
        Json::<T>::output_schema()
    }
}

/// `data` as structured content, with `text` as the text block (its JSON text when
/// `None`); data that does not serialize becomes a tool error saying so.
fn structured_result<T: Serialize>(data: &T, text: Option<String>) -> Value {
    match serde_json::to_value(data) {
        Ok(value) => {
            let text = text.unwrap_or_else(|| value.to_string());
            structured_with_text(text, value)
        }
        Err(e) => {
            ToolResult::error(format!("the tool's result could not be serialized: {e}")).into()
        }
    }
}

fn structured_with_text(text: String, value: Value) -> Value {
    let mut result = json!({ "content": [{ "type": "text", "text": text }], "isError": false });
    // structuredContent must be an object; other data is sent as text only.
    if value.is_object() {
        result["structuredContent"] = value;
    }
    result
}

/// Arguments of a tool that takes none: accepts `{}` (or no `arguments` at all) and
/// publishes `{"type": "object", "properties": {}}` as its input schema.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Deserialize, JsonSchema)]
pub struct NoArgs {}

/// The JSON Schema of `T` (JSON Schema 2020-12, MCP's default dialect), without the
/// `$schema` key, which the dialect makes redundant, and without the `format` values
/// that are not JSON Schema formats (`int32`, `uint64`, `double`...): schemars adds
/// them for Rust number types, and strict validators on the client side reject
/// unknown formats.
pub fn schema_value<T: JsonSchema>() -> Value {
    let schema = schemars::schema_for!(T);
    let mut value = schema.to_value();
    if let Some(obj) = value.as_object_mut() {
        obj.remove("$schema");
    }
    strip_unknown_formats(&mut value);
    value
}

/// `T`'s schema as a tool's `inputSchema` / `outputSchema`: [`schema_value`] without
/// the root `title` and `description` (the Rust type's name and doc comment, which
/// describe code, not the tool), and with `properties` present on an object schema
/// (some clients require it even when empty).
pub fn tool_schema<T: JsonSchema>() -> Value {
    let mut schema = schema_value::<T>();
    if let Some(obj) = schema.as_object_mut() {
        obj.remove("title");
        obj.remove("description");
        if obj.get("type") == Some(&json!("object")) && !obj.contains_key("properties") {
            obj.insert("properties".into(), json!({}));
        }
    }
    schema
}

/// The formats JSON Schema 2020-12 defines.
const STANDARD_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

fn strip_unknown_formats(value: &mut Value) {
    match value {
        Value::Object(obj) => {
            let unknown = obj
                .get("format")
                .and_then(Value::as_str)
                .is_some_and(|f| !STANDARD_FORMATS.contains(&f));
            // Only where `format` is a keyword, i.e. beside a `type`; a property that
            // happens to be called "format" is an object schema, not a string.
            if unknown && obj.contains_key("type") {
                obj.remove("format");
            }
            obj.values_mut().for_each(strip_unknown_formats);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_unknown_formats),
        _ => {}
    }
}

/// A function that can serve as a tool: `async fn(Args) -> R` or
/// `async fn(Args, TaskContext) -> R`, where `Args: Deserialize + JsonSchema` and
/// `R: IntoToolResult`. `Marker` only tells the two shapes apart; you never name it.
pub trait ToolFn<Marker>: Send + Sync + 'static {
    /// The arguments type.
    type Args: DeserializeOwned + JsonSchema + Send + 'static;
    /// The result type.
    type Output: IntoToolResult + 'static;
    /// The function's future, unboxed: a running task holds it inside its one boxed
    /// work future rather than behind a box of its own.
    type Future: Future<Output = Self::Output> + Send + 'static;
    /// Runs the function.
    fn call(&self, args: Self::Args, ctx: TaskContext) -> Self::Future;
}

/// Marker for functions taking only their arguments.
#[derive(Debug)]
pub enum ArgsOnly {}
/// Marker for functions taking their arguments and a [`TaskContext`].
#[derive(Debug)]
pub enum ArgsAndContext {}

impl<F, A, Fut> ToolFn<(ArgsOnly, A)> for F
where
    F: Fn(A) -> Fut + Send + Sync + 'static,
    A: DeserializeOwned + JsonSchema + Send + 'static,
    Fut: Future + Send + 'static,
    Fut::Output: IntoToolResult + 'static,
{
    type Args = A;
    type Output = Fut::Output;
    type Future = Fut;
    fn call(&self, args: A, _ctx: TaskContext) -> Fut {
        self(args)
    }
}

impl<F, A, Fut> ToolFn<(ArgsAndContext, A)> for F
where
    F: Fn(A, TaskContext) -> Fut + Send + Sync + 'static,
    A: DeserializeOwned + JsonSchema + Send + 'static,
    Fut: Future + Send + 'static,
    Fut::Output: IntoToolResult + 'static,
{
    type Args = A;
    type Output = Fut::Output;
    type Future = Fut;
    fn call(&self, args: A, ctx: TaskContext) -> Fut {
        self(args, ctx)
    }
}

/// Reads validated arguments into `A`. The schema check ran first, so a failure here
/// means the schema allows something the type does not (e.g. a custom `Deserialize`).
pub(crate) fn parse_args<A: DeserializeOwned>(
    tool: &str,
    args: Map<String, Value>,
) -> Result<A, RpcError> {
    serde_json::from_value(Value::Object(args)).map_err(|e| {
        RpcError::invalid_params(format!(
            "invalid arguments for tool '{tool}': {e}; see the tool's inputSchema in tools/list"
        ))
    })
}

impl Tool {
    /// A tool from an async function with typed arguments: the `inputSchema` comes from
    /// the arguments type, the `outputSchema` from the result type when it is
    /// [`Json`] of an object type. Task support starts as forbidden (the spec's
    /// default); set it with [`Tool::task_support`]. The same function serves
    /// synchronous calls and tasks on both wire generations.
    ///
    /// A schema that does not compile is reported when the tool is registered.
    pub fn from_fn<M, F: ToolFn<M>>(
        name: impl Into<String>,
        description: impl Into<String>,
        f: F,
    ) -> Tool {
        let name = name.into();
        let f = Arc::new(f);
        let tool_name = name.clone();
        // The function's future is made here, not inside the returned one: the
        // returned future then holds only it (a running task keeps this future for as
        // long as it runs).
        let call_fn = Arc::clone(&f);
        let handler = move |args: Map<String, Value>, ctx: TaskContext| match parse_args::<F::Args>(
            &tool_name, args,
        ) {
            Ok(args) => {
                let call = call_fn.call(args, ctx);
                Box::pin(async move { call.await.into_tool_result() })
            }
            Err(e) => futures::future::ready(Err(e)).boxed(),
        };
        // A task's work: the same, ending in its outcome, in one box (the function's
        // future inside it), where going through the handler would box it twice.
        let work_name = name.clone();
        let work = move |args: Map<String, Value>, ctx: TaskContext| -> Work {
            match parse_args::<F::Args>(&work_name, args) {
                // A combinator, not an async block: an async block awaiting the
                // future it captured would hold it twice (the capture and the
                // awaited copy), doubling what every running task keeps.
                Ok(args) => f
                    .call(args, ctx)
                    .map(|output| to_outcome(output.into_tool_result()))
                    .boxed(),
                Err(e) => futures::future::ready(to_outcome(Err(e))).boxed(),
            }
        };
        Tool::build(
            name,
            description.into(),
            tool_schema::<F::Args>(),
            F::Output::output_schema(),
            Arc::new(handler),
        )
        .with_work(Arc::new(work))
    }
}

/// A tool's answer as a task outcome: its result, or the protocol error it returned.
pub(crate) fn to_outcome(result: Result<Value, RpcError>) -> Outcome {
    match result {
        Ok(value) => Outcome::Result { value },
        Err(e) => Outcome::Error {
            code: e.code,
            message: e.message,
            data: e.data,
        },
    }
}

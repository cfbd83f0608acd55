//! Plain calls that ask when no task holds the call: a tool that forbids tasks, or a
//! server whose sync budget is off (`--sync-budget 0s`). [`super::input_rounds`]
//! keeps a call's work and journal in its task; here there is none, so the round is
//! stateless, as SEP-2322 describes it: when the tool asks, the call stops and answers
//! with the question and a sealed `requestState` carrying the answers given so far;
//! the client calls again with its answer and the state, and the tool runs again from
//! the top, its earlier questions answered from the state. Questions are told apart
//! by the order in which the tool asks them (`q1`, `q2`, ...), so a tool must ask them
//! in the same order each time; it has no journal, so its steps run again (a tool
//! whose work before a question must not be repeated allows tasks, and gets
//! [`super::input_rounds`]).

use mcp_tasks_engine::context::plumbing::TaskContextParts;
use mcp_tasks_engine::{ClientRequester, InputError};
use mcp_tasks_protocol::codec::v2026_07_28;
use mcp_tasks_protocol::RpcError;
use parking_lot::Mutex;
use serde_json::{json, Map, Value};
use std::sync::Arc;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use super::input_rounds::shutting_down;
use super::request_state::{self, InlineState, StateKey};
use super::Request;
use crate::tools::registry::Tool;

/// The question the tool asked that the state has no answer for: its key, and
/// `{method, params}`.
type Asked = Arc<Mutex<Option<(String, Value)>>>;

/// Runs the plain call of `tool` with `args` in the request, as an input-required round
/// when it asks. `preflight` are the answers to the tool's questions asked before it
/// starts (`Tool::ask_first`).
pub(super) async fn run(
    req: &Request<'_>,
    params: &Value,
    tool: &Tool,
    args: Map<String, Value>,
    preflight: Map<String, Value>,
    cancel: CancellationToken,
) -> Result<Value, RpcError> {
    let key = StateKey::new(
        req.server
            .config()
            .request_state_key
            .as_ref()
            .map(|k| k.expose().as_slice()),
    );
    let call = request_state::call_hash(tool.name(), &args);
    let mut answers = Map::new();
    if let Some(state) = params.get("requestState").filter(|s| !s.is_null()) {
        let Some(state) = state.as_str() else {
            return Err(RpcError::invalid_params(
                "requestState must be the string an input_required result gave; call the tool again without it to start over",
            ));
        };
        let now = chrono::Utc::now().timestamp_millis();
        let opened = request_state::open_inline(&key, state, &req.caller.principal, &call, now)
            .map_err(|refused| refused.to_rpc())?;
        answers = opened.answers;
        let responses = params.get("inputResponses").and_then(Value::as_object);
        let mut still_open = Map::new();
        for (k, q) in opened.asked {
            let Some(answer) = responses.and_then(|r| r.get(&k)) else {
                still_open.insert(k, q);
                continue;
            };
            let method = q["method"].as_str().unwrap_or_default();
            crate::answers::check_answer(method, &q["params"], answer).map_err(|problem| {
                RpcError::invalid_params(format!(
                    "the answer to '{k}' in inputResponses was refused: {problem}; send the call again with the same requestState and a corrected answer"
                ))
            })?;
            answers.insert(k, answer.clone());
        }
        if !still_open.is_empty() {
            // Asked again: the round is not over until every open question has its
            // answer.
            return Ok(reply(req, &key, &call, answers, still_open));
        }
    }

    let asked: Asked = Arc::default();
    let noticed = Arc::new(Notify::new());
    let requester = requester(Arc::new(answers.clone()), &asked, &noticed);
    let ctx = TaskContextParts::detached(cancel.clone(), None)
        .answers(preflight)
        .client_requests(
            requester,
            req.capabilities.clone(),
            Arc::new(crate::mcp_results::McpResults),
        )
        .build();
    let grace = req.server.engine().config().cancel_grace;
    tokio::select! {
        r = crate::calls::call::run_inline(tool, args, ctx, &cancel, grace) => match r {
            Some(r) => r.map(v2026_07_28::complete),
            None => Err(shutting_down()),
        },
        () = noticed.notified() => {
            // The tool waits for an answer this request cannot bring: it is stopped
            // (dropping its future aborts it) and runs again when the answer comes.
            let (k, q) = asked
                .lock()
                .take()
                .unwrap_or_default();
            Ok(reply(req, &key, &call, answers, Map::from_iter([(k, q)])))
        }
    }
}

/// Answers the tool's questions from `answers`, in the order it asks them; the first
/// one without an answer is put in `asked` and never answered here.
fn requester(
    answers: Arc<Map<String, Value>>,
    asked: &Asked,
    noticed: &Arc<Notify>,
) -> ClientRequester {
    let count = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let asked = Arc::clone(asked);
    let noticed = Arc::clone(noticed);
    Arc::new(move |method: &str, params: Value| {
        let n = count.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
        let key = format!("q{n}");
        if let Some(answer) = answers.get(&key) {
            let answer = answer.clone();
            return Box::pin(async move { Ok::<Value, InputError>(answer) });
        }
        let mut slot = asked.lock();
        if slot.is_none() {
            *slot = Some((key, json!({ "method": method, "params": params })));
            noticed.notify_one();
        }
        Box::pin(std::future::pending())
    })
}

/// The `InputRequiredResult` asking `open`, with a state carrying `answers`.
fn reply(
    req: &Request<'_>,
    key: &StateKey,
    call: &str,
    answers: Map<String, Value>,
    open: Map<String, Value>,
) -> Value {
    let ttl = req.server.config().request_state_ttl;
    let expires = chrono::Utc::now()
        .timestamp_millis()
        .saturating_add(i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX));
    let state = request_state::seal_inline(
        key,
        InlineState {
            answers,
            asked: open.clone(),
        },
        &req.caller.principal,
        call,
        expires,
    );
    let mut result = v2026_07_28::input_required_result(open);
    result["requestState"] = json!(state);
    result
}

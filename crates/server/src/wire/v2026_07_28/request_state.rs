//! The `requestState` of the input-required round (SEP-2322) for a plain call whose
//! tool asks mid-call.
//!
//! The call's work runs as a task of the caller's (the sync budget's task), so its
//! journal (steps done, questions answered) lives in the store: durable across a
//! restart, shared by the replicas, and never handed to the client (a MAC seals what a
//! client holds but does not hide it, and step outputs may be anything). The state
//! therefore only names that task, bound to who called and what was called:
//!
//! `base64url(claims JSON) "." base64url(HMAC-SHA256(key, claims))`, with the claims
//! the task id, the principal, a SHA-256 of the tool name and its arguments (keys
//! sorted, so the same arguments in another order are the same call), and an expiry.
//!
//! The client echoes it back verbatim; from the server's side it is untrusted input,
//! so [`open`] refuses one that was altered or forged, is past its expiry, belongs to
//! another principal, or was issued for another call, each with a `-32602` that says
//! what to do (in every case: call again without `requestState`, which starts over).

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use hmac::{Hmac, Mac};
use mcp_tasks_protocol::{RpcError, TaskId};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use std::sync::OnceLock;

/// What a state carries.
#[derive(Debug, Serialize, Deserialize, PartialEq)]
struct Claims {
    /// Format version.
    v: u8,
    /// The task that holds the call's work and journal.
    t: String,
    /// The principal that called.
    p: String,
    /// [`call_hash`] of the call.
    c: String,
    /// Expiry, Unix milliseconds.
    e: i64,
}

/// The key a state is sealed with: derived from the configured key (so the same
/// secret serves other purposes without the MACs being interchangeable), or random per
/// process when none is configured.
#[derive(Clone)]
pub(crate) struct StateKey([u8; 32]);

impl std::fmt::Debug for StateKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StateKey(***)")
    }
}

impl StateKey {
    /// The key for `configured` (see [`crate::ServerConfig::request_state_key`]).
    pub(crate) fn new(configured: Option<&[u8]>) -> Self {
        static PROCESS: OnceLock<[u8; 32]> = OnceLock::new();
        let secret: &[u8] = match configured {
            Some(k) => k,
            None => PROCESS.get_or_init(rand::random),
        };
        let mut mac = hmac_with(secret);
        mac.update(b"mcp-tasks requestState key v1");
        StateKey(mac.finalize().into_bytes().into())
    }

    fn mac(&self, payload: &[u8]) -> Hmac<Sha256> {
        let mut mac = hmac_with(&self.0);
        mac.update(payload);
        mac
    }
}

fn hmac_with(key: &[u8]) -> Hmac<Sha256> {
    // HMAC takes keys of any length; this cannot fail.
    <Hmac<Sha256> as Mac>::new_from_slice(key)
        .unwrap_or_else(|_| unreachable!("HMAC takes keys of any length"))
}

/// A digest of the call a state belongs to: the tool's name and its arguments, with
/// object keys sorted at every level.
pub(crate) fn call_hash(tool: &str, args: &Map<String, Value>) -> String {
    let mut h = Sha256::new();
    h.update(tool.as_bytes());
    h.update([0]);
    canonical(&Value::Object(args.clone()), &mut h);
    URL_SAFE_NO_PAD.encode(h.finalize())
}

fn canonical(v: &Value, h: &mut Sha256) {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            h.update(b"{");
            for k in keys {
                h.update(Value::String(k.clone()).to_string().as_bytes());
                h.update(b":");
                canonical(&m[k], h);
                h.update(b",");
            }
            h.update(b"}");
        }
        Value::Array(a) => {
            h.update(b"[");
            for x in a {
                canonical(x, h);
                h.update(b",");
            }
            h.update(b"]");
        }
        other => h.update(other.to_string().as_bytes()),
    }
}

/// A state for task `task`, called by `principal` as `call` ([`call_hash`]), honoured
/// until `expires_ms` (Unix milliseconds).
pub(crate) fn seal(
    key: &StateKey,
    task: &TaskId,
    principal: &str,
    call: &str,
    expires_ms: i64,
) -> String {
    let claims = Claims {
        v: 1,
        t: task.as_str().to_string(),
        p: principal.to_string(),
        c: call.to_string(),
        e: expires_ms,
    };
    // A struct of strings and numbers always serializes.
    sealed(key, &serde_json::to_vec(&claims).unwrap_or_default())
}

/// `payload` and its MAC, as the string a client carries.
fn sealed(key: &StateKey, payload: &[u8]) -> String {
    let tag = key.mac(payload).finalize().into_bytes();
    format!(
        "{}.{}",
        URL_SAFE_NO_PAD.encode(payload),
        URL_SAFE_NO_PAD.encode(tag)
    )
}

/// The payload of a state whose MAC checks out.
fn unsealed(key: &StateKey, state: &str) -> Result<Vec<u8>, Refused> {
    let (payload, tag) = state.split_once('.').ok_or(Refused::Invalid)?;
    let payload = URL_SAFE_NO_PAD
        .decode(payload)
        .map_err(|_| Refused::Invalid)?;
    let tag = URL_SAFE_NO_PAD.decode(tag).map_err(|_| Refused::Invalid)?;
    key.mac(&payload)
        .verify_slice(&tag)
        .map_err(|_| Refused::Invalid)?;
    Ok(payload)
}

/// What the state of a call that no task holds carries (see
/// [`super::inline_rounds`]): the answers so far and the questions now open, since
/// nothing on the server remembers them.
#[derive(Debug, Serialize, Deserialize, PartialEq)]
struct InlineClaims {
    /// Format version: 2 (1 is a state naming a task).
    v: u8,
    /// The answers given in earlier rounds, by question key.
    a: Map<String, Value>,
    /// The questions this round asks, by key: `{method, params}`.
    q: Map<String, Value>,
    /// The principal that called.
    p: String,
    /// [`call_hash`] of the call.
    c: String,
    /// Expiry, Unix milliseconds.
    e: i64,
}

/// The claims every state carries, whatever it holds: format, expiry, principal, call.
struct Binding<'a> {
    v: u8,
    e: i64,
    p: &'a str,
    c: &'a str,
}

impl Binding<'_> {
    /// Whether the state is of format `version`, unexpired at `now_ms`, and was issued
    /// to `principal` for `call`, checked in that order.
    fn check(&self, version: u8, principal: &str, call: &str, now_ms: i64) -> Result<(), Refused> {
        if self.v != version {
            return Err(Refused::Invalid);
        }
        if now_ms >= self.e {
            return Err(Refused::Expired(self.e));
        }
        if self.p != principal {
            return Err(Refused::Foreign);
        }
        if self.c != call {
            return Err(Refused::OtherCall);
        }
        Ok(())
    }
}

/// What an opened inline state gives back.
#[derive(Debug, PartialEq)]
pub(crate) struct InlineState {
    /// The answers given in earlier rounds.
    pub(crate) answers: Map<String, Value>,
    /// The questions the last round asked.
    pub(crate) asked: Map<String, Value>,
}

/// A state for a call that no task holds: `state`'s answers and open questions, for
/// `principal`'s `call`, honoured until `expires_ms`.
pub(crate) fn seal_inline(
    key: &StateKey,
    state: InlineState,
    principal: &str,
    call: &str,
    expires_ms: i64,
) -> String {
    let claims = InlineClaims {
        v: 2,
        a: state.answers,
        q: state.asked,
        p: principal.to_string(),
        c: call.to_string(),
        e: expires_ms,
    };
    // JSON values always serialize.
    sealed(key, &serde_json::to_vec(&claims).unwrap_or_default())
}

/// The answers and questions of an inline state, checked as [`open`] checks a task's.
///
/// # Errors
/// [`Refused`], in the same order as [`open`].
pub(crate) fn open_inline(
    key: &StateKey,
    state: &str,
    principal: &str,
    call: &str,
    now_ms: i64,
) -> Result<InlineState, Refused> {
    let payload = unsealed(key, state)?;
    let claims: InlineClaims = serde_json::from_slice(&payload).map_err(|_| Refused::Invalid)?;
    Binding {
        v: claims.v,
        e: claims.e,
        p: &claims.p,
        c: &claims.c,
    }
    .check(2, principal, call, now_ms)?;
    Ok(InlineState {
        answers: claims.a,
        asked: claims.q,
    })
}

/// Why a state is refused.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Refused {
    /// Not a state this server issued (altered, truncated, another server's key).
    Invalid,
    /// Past its expiry (Unix milliseconds).
    Expired(i64),
    /// Issued to another principal.
    Foreign,
    /// Issued for another tool or other arguments.
    OtherCall,
}

impl Refused {
    /// The `-32602` the client gets.
    pub(crate) fn to_rpc(&self) -> RpcError {
        let message = match self {
            Refused::Invalid => "requestState was refused: it was altered or was not issued by this server (or by a replica sharing its request_state_key); call the tool again without requestState and inputResponses to start over".to_string(),
            Refused::Expired(at) => format!(
                "requestState was refused: it expired at {}; call the tool again without requestState and inputResponses to start over",
                chrono::DateTime::from_timestamp_millis(*at)
                    .map_or_else(|| at.to_string(), |t| t.to_rfc3339())
            ),
            Refused::Foreign => "requestState was refused: it was issued to another principal; call the tool again without requestState and inputResponses to start your own call".to_string(),
            Refused::OtherCall => "requestState was refused: it was issued for another call (a different tool name or arguments); send the same name and arguments as the call that returned it, or call again without requestState and inputResponses to start over".to_string(),
        };
        RpcError::invalid_params(message)
    }
}

/// The task a state names, when the state is intact, unexpired at `now_ms`, and was
/// issued to `principal` for `call`.
///
/// # Errors
/// [`Refused`], checked in that order (an altered state says nothing else).
pub(crate) fn open(
    key: &StateKey,
    state: &str,
    principal: &str,
    call: &str,
    now_ms: i64,
) -> Result<TaskId, Refused> {
    let payload = unsealed(key, state)?;
    let claims: Claims = serde_json::from_slice(&payload).map_err(|_| Refused::Invalid)?;
    Binding {
        v: claims.v,
        e: claims.e,
        p: &claims.p,
        c: &claims.c,
    }
    .check(1, principal, call, now_ms)?;
    Ok(TaskId::from_string(claims.t))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn args(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn a_sealed_state_opens_for_its_principal_and_call_only() {
        let key = StateKey::new(Some(b"k"));
        let call = call_hash("count_to", &args(json!({"n": 3, "delay_ms": 1})));
        let task = TaskId::from_string("t1");
        let s = seal(&key, &task, "alice", &call, 2_000);
        assert_eq!(open(&key, &s, "alice", &call, 1_000), Ok(task));
        assert_eq!(open(&key, &s, "bob", &call, 1_000), Err(Refused::Foreign));
        let other = call_hash("count_to", &args(json!({"n": 4, "delay_ms": 1})));
        assert_eq!(
            open(&key, &s, "alice", &other, 1_000),
            Err(Refused::OtherCall)
        );
        assert_eq!(
            open(&key, &s, "alice", &call, 2_000),
            Err(Refused::Expired(2_000))
        );
        let foreign_key = StateKey::new(Some(b"other"));
        assert_eq!(
            open(&foreign_key, &s, "alice", &call, 1_000),
            Err(Refused::Invalid)
        );
    }

    #[test]
    fn an_altered_state_is_invalid() {
        let key = StateKey::new(None);
        let s = seal(&key, &TaskId::from_string("t1"), "alice", "c", 2_000);
        let (payload, tag) = s.split_once('.').unwrap_or_default();
        let mut claims: Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).unwrap_or_default())
                .unwrap_or_default();
        claims["e"] = json!(i64::MAX);
        let forged = format!(
            "{}.{tag}",
            URL_SAFE_NO_PAD.encode(claims.to_string().as_bytes())
        );
        for bad in [forged, format!("{s}-TAMPERED"), "x".into(), String::new()] {
            assert_eq!(
                open(&key, &bad, "alice", "c", 1_000),
                Err(Refused::Invalid),
                "{bad}"
            );
        }
        assert!(Refused::Invalid
            .to_rpc()
            .message
            .contains("without requestState"));
    }

    #[test]
    fn the_call_hash_ignores_key_order() {
        let a = call_hash("t", &args(json!({"a": 1, "b": {"x": [1, 2], "y": null}})));
        let b = call_hash("t", &args(json!({"b": {"y": null, "x": [1, 2]}, "a": 1})));
        assert_eq!(a, b);
        assert_ne!(
            a,
            call_hash("u", &args(json!({"a": 1, "b": {"x": [1, 2], "y": null}})))
        );
    }
}

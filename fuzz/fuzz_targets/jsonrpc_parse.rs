//! Any bytes through the JSON-RPC decoder, then every params type of the methods we
//! serve. Nothing may panic; a rejection carries one of the three framing codes; an
//! accepted message written back out with our own writers parses to the same message.

#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_tasks_fuzz::json_eq;
use mcp_tasks_protocol::error_code::{INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR};
use mcp_tasks_protocol::jsonrpc::{self, Incoming};
use mcp_tasks_protocol::methods::{
    self as m, CallToolParams, CancelledParams, InitializeParams, ListParams, TaskIdParams,
};
use mcp_tasks_protocol::version;
use serde_json::Value;

fn same_message(a: &Incoming, b: &Incoming) -> bool {
    match (a, b) {
        (
            Incoming::Request { id, method, params },
            Incoming::Request {
                id: i2,
                method: m2,
                params: p2,
            },
        ) => id == i2 && method == m2 && json_eq(params, p2),
        (
            Incoming::Notification { method, params },
            Incoming::Notification {
                method: m2,
                params: p2,
            },
        ) => method == m2 && json_eq(params, p2),
        (Incoming::Response { id, result }, Incoming::Response { id: i2, result: r2 }) => {
            id == i2 && json_eq(result, r2)
        }
        (Incoming::ErrorResponse { id, error }, Incoming::ErrorResponse { id: i2, error: e2 }) => {
            id == i2
                && error.code == e2.code
                && error.message == e2.message
                && match (&error.data, &e2.data) {
                    (Some(x), Some(y)) => json_eq(x, y),
                    (None, None) => true,
                    _ => false,
                }
        }
        _ => false,
    }
}

fn check_params(method: &str, params: &Value) {
    assert!(params.is_object() || params.is_null());
    let codes = [
        m::parse_params::<InitializeParams>(method, params).map(|p| {
            let v = version::negotiate(&p.protocol_version);
            assert!(version::SUPPORTED.contains(&v));
            let _ = version::has_tasks(v);
        }),
        m::parse_params::<CallToolParams>(method, params).map(|_| ()),
        m::parse_params::<TaskIdParams>(method, params).map(|p| {
            let _ = p.task_id.as_str();
        }),
        m::parse_params::<ListParams>(method, params).map(|_| ()),
        m::parse_params::<CancelledParams>(method, params).map(|p| {
            let _ = p.request_id.to_string();
        }),
    ];
    for r in codes {
        if let Err(e) = r {
            assert_eq!(e.code, INVALID_PARAMS, "{e}");
            let _ = e.to_value();
        }
    }
    if let Some(t) = m::progress_token(params) {
        assert!(t.is_string() || t.is_i64() || t.is_u64(), "{t}");
    }
}

fuzz_target!(|data: &[u8]| {
    match jsonrpc::parse(data) {
        Err(rejected) => {
            let code = rejected.error.code;
            assert!(
                [PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS].contains(&code),
                "unexpected code {code}"
            );
            if code == PARSE_ERROR {
                assert!(rejected.id.is_none());
            }
            let reply = rejected.to_response();
            assert!(serde_json::to_vec(&reply).is_ok());
        }
        Ok(msg) => {
            let written = match &msg {
                Incoming::Request { id, method, params } => {
                    check_params(method, params);
                    jsonrpc::request(id, method, params.clone())
                }
                Incoming::Notification { method, params } => {
                    check_params(method, params);
                    jsonrpc::notification(method, params.clone())
                }
                Incoming::Response { id, result } => jsonrpc::response(id, result.clone()),
                Incoming::ErrorResponse { id, error } => jsonrpc::error_response(id.as_ref(), error),
            };
            let bytes = serde_json::to_vec(&written).expect("a parsed message serializes");
            match jsonrpc::parse(&bytes) {
                Ok(again) => assert!(
                    same_message(&msg, &again),
                    "round trip changed the message:\n{msg:?}\n{again:?}"
                ),
                Err(e) => panic!("our own rendering of {msg:?} was rejected: {e:?}"),
            }
        }
    }
});

//! The Tasks extension codec (2026-07-28 wire) and the public routing check of the
//! stateless wire, against small reference predicates written from the spec text.
//!
//! The input is read twice: as JSON (or a value built from it) for capabilities, results
//! and params, and through `arbitrary` for a task view, a header and a method name.

#![no_main]

use arbitrary::Unstructured;
use libfuzzer_sys::fuzz_target;
use mcp_tasks_fuzz::{arb_json, arb_string, arb_view, json_from_bytes};
use mcp_tasks_protocol::codec::{timestamp, v2026_07_28 as ext};
use mcp_tasks_protocol::methods as m;
use mcp_tasks_protocol::task::TaskView;
use mcp_tasks_protocol::version;
use mcp_tasks_server::wire::v2026_07_28::{self as modern, META_PROTOCOL_VERSION};
use serde_json::{json, Map, Value};

const METHODS: &[&str] = &[
    m::INITIALIZE,
    m::PING,
    m::TOOLS_LIST,
    m::TOOLS_CALL,
    m::TASKS_GET,
    m::TASKS_RESULT,
    m::TASKS_LIST,
    m::TASKS_CANCEL,
    m::TASKS_UPDATE,
    m::SERVER_DISCOVER,
];

fn check_capabilities(caps: &Value) {
    let expected = match caps {
        Value::Object(o) => match o.get("extensions") {
            Some(Value::Object(e)) => e.get(ext::EXTENSION_ID).is_some_and(|v| !v.is_null()),
            _ => false,
        },
        _ => false,
    };
    assert_eq!(ext::declares_extension(caps), expected, "{caps}");
}

fn check_complete(result: &Value) {
    let out = ext::complete(result.clone());
    match (result, &out) {
        (Value::Object(before), Value::Object(after)) => {
            let want = before
                .get("resultType")
                .cloned()
                .unwrap_or(json!(ext::RESULT_COMPLETE));
            assert_eq!(after.get("resultType"), Some(&want));
            for (k, v) in before {
                assert_eq!(after.get(k), Some(v));
            }
            assert!(after.len() == before.len() || after.len() == before.len() + 1);
        }
        _ => assert_eq!(&out, result, "complete changed a non-object"),
    }
}

fn check_stateless(header: Option<&str>, method: &str, params: &Value, has_session: bool) {
    let expected = method != m::INITIALIZE
        && !has_session
        && (header.is_some_and(|h| version::STATELESS.contains(&h))
            || params
                .get("_meta")
                .and_then(|x| x.get(META_PROTOCOL_VERSION))
                .is_some());
    assert_eq!(
        modern::is_stateless(header, method, params, has_session),
        expected,
        "header {header:?} method {method} session {has_session} params {params}"
    );
}

fn check_fields(view: &TaskView, detail_value: &Value) {
    let f = ext::task_fields(view);
    assert_eq!(f["taskId"], json!(view.id.as_str()));
    // The extension shows the engine's status: a tool error stays `completed`.
    assert_eq!(f["status"], json!(view.status.as_str()));
    assert_eq!(f["createdAt"], json!(timestamp(&view.created_at)));
    assert_eq!(f["lastUpdatedAt"], json!(timestamp(&view.last_updated_at)));
    match view.ttl {
        Some(d) => assert_eq!(f["ttlMs"].as_u64(), u64::try_from(d.as_millis()).ok()),
        None => assert!(f.get("ttlMs").is_some_and(Value::is_null)),
    }
    match view.poll_interval.filter(|p| !p.is_zero()) {
        Some(p) => assert_eq!(f["pollIntervalMs"].as_u64(), u64::try_from(p.as_millis()).ok()),
        None => assert!(f.get("pollIntervalMs").is_none()),
    }
    assert_eq!(f.get("statusMessage").and_then(Value::as_str), view.status_message.as_deref());
    for absent in ["ttl", "pollInterval", "task", "resultType"] {
        assert!(f.get(absent).is_none(), "{absent}");
    }

    let created = ext::create_task_result(view);
    assert_eq!(created["resultType"], ext::RESULT_TASK);
    let mut without = created.as_object().cloned().unwrap_or_default();
    without.remove("resultType");
    assert_eq!(without, f);

    let inputs = match detail_value {
        Value::Object(o) => o.clone(),
        _ => Map::new(),
    };
    let details = [
        (ext::Detail::None, None),
        (ext::Detail::InputRequests(inputs.clone()), Some(("inputRequests", Value::Object(inputs.clone())))),
        (ext::Detail::Result(detail_value.clone()), Some(("result", detail_value.clone()))),
        (ext::Detail::Error(detail_value.clone()), Some(("error", detail_value.clone()))),
    ];
    for (detail, member) in details {
        let d = ext::detailed_task(view, detail);
        assert_eq!(d["resultType"], ext::RESULT_COMPLETE);
        assert_eq!(d["taskId"], f["taskId"]);
        let extra = usize::from(member.is_some());
        assert_eq!(d.as_object().map(Map::len), Some(f.len() + 1 + extra));
        if let Some((k, v)) = member {
            assert_eq!(d[k], v);
        }
    }
    let ir = ext::input_required_result(inputs.clone());
    assert_eq!(ir["resultType"], ext::RESULT_INPUT_REQUIRED);
    assert_eq!(ir["inputRequests"], Value::Object(inputs));
}

fuzz_target!(|data: &[u8]| {
    let value = json_from_bytes(data);
    check_capabilities(&value);
    if let Some(caps) = value
        .get("_meta")
        .and_then(|x| x.get("io.modelcontextprotocol/clientCapabilities"))
    {
        check_capabilities(caps);
    }
    if let Some(caps) = value.get("capabilities") {
        check_capabilities(caps);
    }
    check_complete(&value);
    let _ = serde_json::to_vec(&ext::required_extension_data());
    assert_eq!(ext::ack()["resultType"], ext::RESULT_COMPLETE);

    let mut u = Unstructured::new(data);
    let header: Option<String> = match u.int_in_range(0..=2u8).unwrap_or(0) {
        0 => None,
        1 => Some(version::V2026_07_28.to_string()),
        _ => arb_string(&mut u).ok(),
    };
    let method = if u.arbitrary().unwrap_or(true) {
        u.choose(METHODS).map(|s| s.to_string()).unwrap_or_default()
    } else {
        arb_string(&mut u).unwrap_or_default()
    };
    let has_session: bool = u.arbitrary().unwrap_or(false);
    check_stateless(header.as_deref(), &method, &value, has_session);
    if let Some(params) = value.get("params") {
        check_stateless(header.as_deref(), &method, params, has_session);
    }
    let negotiated = version::negotiate(header.as_deref().unwrap_or(""));
    assert!(version::SUPPORTED.contains(&negotiated));

    if let Ok(view) = arb_view(&mut u) {
        let detail = arb_json(&mut u, 3).unwrap_or(Value::Null);
        check_fields(&view, &detail);
        check_fields(&view, &value);
    }
});

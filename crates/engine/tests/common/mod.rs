//! What this crate's test files share beyond the test kit (`mcp_tasks_testkit`, where
//! `eventually` lives): the caller and creation parameters most tests use, and a tool's
//! question to the client.
#![allow(dead_code)] // each test file compiles this module; not all of them use all of it

/// Asks the client a form question the way an MCP tool does (the engine stores the
/// method and params without reading them) and returns the answer's `action`.
#[allow(dead_code)]
pub async fn ask(
    ctx: &mcp_tasks_engine::TaskContext,
    message: &str,
) -> Result<String, mcp_tasks_engine::InputError> {
    let params = serde_json::json!({
        "mode": "form",
        "message": message,
        "requestedSchema": {"type": "object", "properties": {}},
    });
    let answer = ctx.request_input("elicitation/create", params).await?;
    Ok(answer["action"].as_str().unwrap_or("none").to_string())
}

/// The caller of most tests: an anonymous principal in one session.
pub fn caller() -> mcp_tasks_engine::Caller {
    mcp_tasks_engine::Caller::anonymous("owner-a", Some("session-a".into()))
}

/// A `tools/call` of tool `t` by [`caller`], from a client that can answer forms.
pub fn params() -> mcp_tasks_engine::CreateParams {
    mcp_tasks_engine::CreateParams {
        caller: caller(),
        method: "tools/call".into(),
        request: serde_json::json!({"name": "t", "arguments": {}}),
        requested_ttl: None,
        client_capabilities: serde_json::json!({"elicitation": {}}),
    }
}

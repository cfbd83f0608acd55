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

/// Pauses tokio's time and, for a test that waits on a database's I/O (`with_io`),
/// keeps it from moving on its own until dropped. Paused time normally jumps to the
/// next timer whenever the runtime waits, also on I/O, which would fire a pool's
/// acquire timeout or a maintenance round at a moment the test did not choose; a
/// blocking task kept alive counts as work under way, so time then moves only when the
/// test advances it.
pub fn freeze(with_io: bool) -> Frozen {
    tokio::time::pause();
    if !with_io {
        // No I/O to wait on: paused time moves only to timers, as the test means.
        return Frozen(None);
    }
    let (release, held) = std::sync::mpsc::channel::<()>();
    tokio::task::spawn_blocking(move || {
        let _ = held.recv();
    });
    Frozen(Some(release))
}

/// Frozen time (see [`freeze`]); dropping it lets paused time move on its own again.
pub struct Frozen(Option<std::sync::mpsc::Sender<()>>);

impl Drop for Frozen {
    fn drop(&mut self) {
        if let Some(release) = self.0.take() {
            let _ = release.send(());
        }
    }
}

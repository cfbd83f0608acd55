//! [`Passthrough`]: requests this server does not answer itself (resources, prompts,
//! completions) handed to someone who can, such as a gateway's upstream servers. Its
//! capabilities are merged into ours, so clients see what it offers.

use async_trait::async_trait;
use mcp_tasks_protocol::RpcError;
use serde_json::Value;

/// Answers the methods it [`Passthrough::handles`], on both wires.
#[async_trait]
pub trait Passthrough: Send + Sync {
    /// Server capabilities to add to ours (`{"resources": {...}, "prompts": {...}}`).
    fn capabilities(&self) -> Value;

    /// Whether `method` is answered here.
    fn handles(&self, method: &str) -> bool;

    /// Answers one request.
    ///
    /// # Errors
    /// The JSON-RPC error to send back.
    async fn request(&self, method: &str, params: Value) -> Result<Value, RpcError>;
}

/// Adds `extra`'s top-level members to `caps` (an object), keeping ours on a clash.
pub(crate) fn merge_capabilities(caps: &mut Value, extra: &Value) {
    if let (Some(ours), Some(theirs)) = (caps.as_object_mut(), extra.as_object()) {
        for (k, v) in theirs {
            ours.entry(k.clone()).or_insert_with(|| v.clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn capabilities_merge_without_overriding_ours() {
        let mut caps = json!({"tools": {"listChanged": true}});
        merge_capabilities(
            &mut caps,
            &json!({"tools": {"listChanged": false}, "resources": {"subscribe": true}}),
        );
        assert_eq!(
            caps,
            json!({"tools": {"listChanged": true}, "resources": {"subscribe": true}})
        );
    }
}

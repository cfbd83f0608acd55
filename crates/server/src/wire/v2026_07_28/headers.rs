//! SEP-2243 routing headers: `Mcp-Method` must name the body's method, `Mcp-Name` the
//! tool, resource or task it targets, and `MCP-Protocol-Version` the `_meta` version.
//! A proxy may route on them, so a request whose headers disagree with its body is
//! refused (`-32020`) rather than served.

use mcp_tasks_protocol::methods as m;
use mcp_tasks_protocol::version;
use mcp_tasks_protocol::RpcError;
use serde_json::Value;

use super::{header_mismatch, unsupported_version, META_PROTOCOL_VERSION};

/// The routing headers of one request.
#[derive(Debug, Clone, Default)]
pub struct RoutingHeaders {
    /// `Mcp-Method`.
    pub method: Option<String>,
    /// `Mcp-Name`.
    pub name: Option<String>,
    /// `MCP-Protocol-Version`.
    pub protocol_version: Option<String>,
}

impl RoutingHeaders {
    /// Checks the headers against the body.
    ///
    /// # Errors
    /// `-32020` on a missing or mismatched header, `-32022` on an unsupported version.
    pub(crate) fn check(&self, method: &str, params: &Value) -> Result<(), RpcError> {
        let meta_version = params
            .get("_meta")
            .and_then(|m| m.get(META_PROTOCOL_VERSION))
            .and_then(Value::as_str);
        if let (Some(h), Some(b)) = (self.protocol_version.as_deref(), meta_version) {
            if h != b {
                return Err(header_mismatch(format!(
                    "MCP-Protocol-Version header '{h}' does not match _meta protocolVersion '{b}'"
                )));
            }
        }
        if let Some(v) = meta_version.or(self.protocol_version.as_deref()) {
            if !version::STATELESS.contains(&v) {
                return Err(unsupported_version(v));
            }
        }
        match self.method.as_deref() {
            Some(h) if h == method => {}
            Some(h) => {
                return Err(header_mismatch(format!(
                    "Mcp-Method header '{h}' does not match the body's method '{method}'"
                )))
            }
            None => {
                return Err(header_mismatch(format!(
                    "missing Mcp-Method header (expected '{method}')"
                )))
            }
        }
        let target = match method {
            m::TOOLS_CALL | "prompts/get" => Some(("name", params.get("name"))),
            "resources/read" => Some(("uri", params.get("uri"))),
            m::TASKS_GET | m::TASKS_UPDATE | m::TASKS_CANCEL => {
                Some(("taskId", params.get("taskId")))
            }
            _ => None,
        };
        if let Some((field, value)) = target {
            let body = value.and_then(Value::as_str).unwrap_or("");
            match self.name.as_deref() {
                Some(h) if h == body => {}
                Some(h) => {
                    return Err(header_mismatch(format!(
                        "Mcp-Name header '{h}' does not match params.{field} '{body}'"
                    )))
                }
                None => {
                    return Err(header_mismatch(format!(
                        "missing Mcp-Name header (expected params.{field} '{body}')"
                    )))
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn headers(method: &str, name: Option<&str>) -> RoutingHeaders {
        RoutingHeaders {
            method: Some(method.into()),
            name: name.map(String::from),
            protocol_version: Some("2026-07-28".into()),
        }
    }

    #[test]
    fn matching_headers_pass_and_mismatches_are_32020() {
        let p = json!({"name": "greet", "_meta": {META_PROTOCOL_VERSION: "2026-07-28"}});
        assert!(headers("tools/call", Some("greet"))
            .check("tools/call", &p)
            .is_ok());
        assert_eq!(
            headers("tasks/get", Some("greet"))
                .check("tools/call", &p)
                .unwrap_err()
                .code,
            -32020
        );
        assert_eq!(
            headers("tools/call", Some("other"))
                .check("tools/call", &p)
                .unwrap_err()
                .code,
            -32020
        );
        assert_eq!(
            headers("tools/call", None)
                .check("tools/call", &p)
                .unwrap_err()
                .code,
            -32020
        );
        let t = json!({"taskId": "abc"});
        assert!(headers("tasks/get", Some("abc"))
            .check("tasks/get", &t)
            .is_ok());
        assert_eq!(
            headers("tasks/get", Some("xyz"))
                .check("tasks/get", &t)
                .unwrap_err()
                .code,
            -32020
        );
        assert!(headers("tasks/list", None)
            .check("tasks/list", &json!({}))
            .is_ok());
    }

    #[test]
    fn versions_must_agree_and_be_stateless_ones() {
        let mut h = headers("ping", None);
        let p = json!({"_meta": {META_PROTOCOL_VERSION: "2026-07-28"}});
        assert!(h.check("ping", &p).is_ok());
        h.protocol_version = Some("2026-01-01".into());
        assert_eq!(h.check("ping", &p).unwrap_err().code, -32020);
        let q = json!({"_meta": {META_PROTOCOL_VERSION: "2099-01-01"}});
        h.protocol_version = None;
        assert_eq!(h.check("ping", &q).unwrap_err().code, -32022);
    }
}

//! Protected Resource Metadata (RFC 9728): what an MCP host reads to find the
//! authorization server that issues tokens for this server, as the MCP authorization
//! spec asks of a server that takes OAuth access tokens.

use serde_json::{json, Value};

/// This server as an OAuth protected resource: its canonical URI (the audience tokens
/// must be minted for, RFC 8707), the authorization servers that mint them, and the
/// scopes it knows and requires.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceMetadata {
    /// The canonical URI of the MCP endpoint (`https://tasks.example.com/mcp`).
    pub resource: String,
    /// The issuers of the authorization servers (`authorization_servers`).
    pub authorization_servers: Vec<String>,
    /// Scopes the server understands (`scopes_supported`).
    pub scopes_supported: Vec<String>,
    /// Scopes every token must carry; a token without one of them is refused with 403
    /// `insufficient_scope` naming them.
    pub required_scopes: Vec<String>,
    /// A name people read in a host's consent screen (`resource_name`).
    pub resource_name: Option<String>,
}

/// Where RFC 9728 puts the metadata document: under the resource's origin.
pub const WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";

impl ResourceMetadata {
    /// The metadata document (JSON) served at [`ResourceMetadata::url`].
    pub fn document(&self) -> Value {
        let mut doc = json!({
            "resource": self.resource,
            "authorization_servers": self.authorization_servers,
            "bearer_methods_supported": ["header"],
        });
        if !self.scopes_supported.is_empty() {
            doc["scopes_supported"] = json!(self.scopes_supported);
        }
        if let Some(name) = &self.resource_name {
            doc["resource_name"] = json!(name);
        }
        doc
    }

    /// The metadata's URL: the well-known path inserted between the resource's origin
    /// and its path (`https://h/mcp` → `https://h/.well-known/oauth-protected-resource/mcp`).
    pub fn url(&self) -> String {
        let (origin, path) = split_origin(&self.resource);
        let path = path.trim_end_matches('/');
        format!("{origin}{WELL_KNOWN}{path}")
    }

    /// The `WWW-Authenticate` value of a 401: `Bearer resource_metadata="…"`, with
    /// `error="invalid_token"` and its description when a token was sent and refused.
    pub fn challenge(&self, refused: Option<&str>) -> String {
        let mut c = format!("Bearer resource_metadata=\"{}\"", self.url());
        if !self.required_scopes.is_empty() {
            c.push_str(&format!(", scope=\"{}\"", self.required_scopes.join(" ")));
        }
        if let Some(why) = refused {
            c.push_str(&format!(
                ", error=\"invalid_token\", error_description=\"{}\"",
                quoted(why)
            ));
        }
        c
    }

    /// The scopes of `required_scopes` that `granted` lacks.
    pub fn missing_scopes(&self, granted: &[String]) -> Vec<String> {
        self.required_scopes
            .iter()
            .filter(|s| !granted.contains(s))
            .cloned()
            .collect()
    }

    /// The `WWW-Authenticate` value of a 403 for a token without the required scopes.
    pub fn insufficient_scope(&self) -> String {
        format!(
            "Bearer error=\"insufficient_scope\", scope=\"{}\", resource_metadata=\"{}\", error_description=\"the token lacks a required scope\"",
            self.required_scopes.join(" "),
            self.url()
        )
    }
}

/// A header parameter's value: no quotes or control characters inside.
fn quoted(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c == '"' || c == '\\' || c.is_control() {
                '\''
            } else {
                c
            }
        })
        .collect()
}

/// `https://h:1/a/b` → (`https://h:1`, `/a/b`).
fn split_origin(url: &str) -> (&str, &str) {
    let after_scheme = url.find("://").map_or(0, |i| i + 3);
    match url[after_scheme..].find('/') {
        Some(i) => url.split_at(after_scheme + i),
        None => (url, ""),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(resource: &str) -> ResourceMetadata {
        ResourceMetadata {
            resource: resource.into(),
            authorization_servers: vec!["https://idp.example".into()],
            scopes_supported: vec!["mcp:tools".into()],
            required_scopes: vec!["mcp:tools".into()],
            resource_name: None,
        }
    }

    #[test]
    fn the_metadata_url_inserts_the_well_known_path_before_the_resource_path() {
        assert_eq!(
            meta("https://tasks.example.com/mcp").url(),
            "https://tasks.example.com/.well-known/oauth-protected-resource/mcp"
        );
        assert_eq!(
            meta("http://127.0.0.1:8080").url(),
            "http://127.0.0.1:8080/.well-known/oauth-protected-resource"
        );
    }

    #[test]
    fn challenges_name_the_metadata_and_the_scope() {
        let m = meta("https://tasks.example.com/mcp");
        let c = m.challenge(Some("expired \"token\""));
        assert!(c.starts_with("Bearer resource_metadata=\"https://tasks.example.com/.well-known/oauth-protected-resource/mcp\""));
        assert!(c.contains("scope=\"mcp:tools\""));
        assert!(c.contains("error_description=\"expired 'token'\""));
        assert!(m
            .insufficient_scope()
            .contains("error=\"insufficient_scope\""));
        assert_eq!(m.missing_scopes(&["openid".into()]), vec!["mcp:tools"]);
        assert!(m.missing_scopes(&["mcp:tools".into()]).is_empty());
        assert_eq!(m.document()["resource"], "https://tasks.example.com/mcp");
    }
}

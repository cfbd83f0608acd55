//! From a token's claims to an [`Identity`]: which claim names the principal and which
//! holds the groups. The board's OpenID Connect sign-in and the MCP endpoint's OAuth
//! access tokens use the same mapping, so a person is named the same way in both.

use super::{AuthError, Identity};
use serde_json::Value;

/// Which claims name the principal and hold the groups.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimNames {
    /// The principal's claim (`sub` by default; `email` or `preferred_username` are
    /// what people recognise). A dotted name (`a.b`) reaches into an object.
    pub principal: String,
    /// The groups' claim (`groups` by default): an array of strings, or one string of
    /// names separated by spaces or commas. A dotted name (`realm_access.roles`)
    /// reaches into an object.
    pub groups: String,
}

impl Default for ClaimNames {
    fn default() -> Self {
        ClaimNames {
            principal: "sub".into(),
            groups: "groups".into(),
        }
    }
}

/// The claim `name` of `claims`: the top-level key, else the dotted path.
pub(crate) fn claim<'v>(claims: &'v Value, name: &str) -> Option<&'v Value> {
    if let Some(v) = claims.get(name) {
        return Some(v);
    }
    name.split('.')
        .try_fold(claims, |v, part| v.get(part))
        .filter(|_| name.contains('.'))
}

/// The groups a claim value lists.
pub(crate) fn groups_in(value: Option<&Value>) -> Vec<String> {
    match value {
        Some(Value::Array(items)) => items
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .filter(|g| !g.is_empty())
            .collect(),
        Some(Value::String(s)) => s
            .split([' ', ','])
            .filter(|g| !g.is_empty())
            .map(str::to_string)
            .collect(),
        _ => Vec::new(),
    }
}

/// The scopes of an access token: `scope` (a space-separated string, RFC 9068 and
/// RFC 7662) or `scp` (an array or string, as Entra ID and Okta write it).
#[cfg_attr(not(feature = "oauth"), allow(dead_code))]
pub(crate) fn scopes_in(claims: &Value) -> Vec<String> {
    let mut scopes = groups_in(claims.get("scope"));
    scopes.extend(groups_in(claims.get("scp")));
    scopes
}

impl ClaimNames {
    /// The identity `claims` stand for.
    ///
    /// # Errors
    /// When the principal claim is missing or not a non-empty string.
    pub fn identity(&self, claims: &Value) -> Result<Identity, AuthError> {
        let principal = match claim(claims, &self.principal) {
            Some(Value::String(s)) if !s.trim().is_empty() => s.trim().to_string(),
            Some(Value::Number(n)) => n.to_string(),
            _ => {
                return Err(AuthError(format!(
                    "the token has no '{}' claim to name the principal (set principal_claim to a claim the identity provider sends)",
                    self.principal
                )))
            }
        };
        Ok(Identity {
            principal,
            groups: groups_in(claim(claims, &self.groups)),
            email: claims
                .get("email")
                .and_then(Value::as_str)
                .map(str::to_string),
            scopes: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn principal_and_groups_come_from_the_named_claims() {
        let names = ClaimNames {
            principal: "email".into(),
            groups: "realm_access.roles".into(),
        };
        let id = names
            .identity(&json!({"sub": "1", "email": "ana@example.com", "realm_access": {"roles": ["ops", "dev"]}}))
            .unwrap();
        assert_eq!(id.principal, "ana@example.com");
        assert_eq!(id.groups, vec!["ops", "dev"]);
        let err = names.identity(&json!({"sub": "1"})).unwrap_err();
        assert!(err.0.contains("'email'"), "{err}");
        let id = ClaimNames::default()
            .identity(&json!({"sub": "1", "groups": "a b,c"}))
            .unwrap();
        assert_eq!(id.groups, vec!["a", "b", "c"]);
        assert_eq!(
            scopes_in(&json!({"scope": "openid mcp:tools", "scp": ["x"]})),
            vec!["openid", "mcp:tools", "x"]
        );
    }
}

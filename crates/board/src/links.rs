//! Signed answer links: approve and reject URLs a webhook event carries for people on
//! channels without a login (email, chat, push).
//!
//! A link is `{public_url}/board/answer/{token}`, where the token is a compact JSON
//! payload (task, question key, the question's fingerprint, assignee, decision,
//! expiry) in base64url, a `.`, and an HMAC-SHA256 of it under the server's link key.
//! The key derives from the board secret (`--board-secret-file`), so every replica
//! sharing that secret honours the links any of them sent; without one it is random
//! per process and links stop working when the process ends.
//!
//! A link is single-use through the task itself: it answers one question, and a
//! question answered (by the link, the board, or the client) no longer waits, so the
//! link is refused as "already answered". The fingerprint (a hash of the question's
//! method and params) binds it to the question as asked: a rerun that asks something
//! else under the same key does not take the old link.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use chrono::{DateTime, Utc};
use hmac::{Hmac, Mac};
use mcp_tasks_engine::{InputRequest, Outcome};
use mcp_tasks_protocol::answer;
use mcp_tasks_server::approvals::APPROVAL_METHOD;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};
use std::sync::Arc;
use std::time::Duration;

use crate::view::QuestionKind;

/// What a link does to its question.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Decision {
    /// Accept the elicitation (a confirmation: with its one yes/no field set to yes).
    #[serde(rename = "a")]
    Approve,
    /// Decline the elicitation.
    #[serde(rename = "r")]
    Reject,
}

impl Decision {
    /// The word a person reads.
    pub(crate) fn verb(self) -> &'static str {
        match self {
            Decision::Approve => "Approve",
            Decision::Reject => "Reject",
        }
    }
}

/// What a token carries.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct Claims {
    /// The task.
    pub(crate) t: String,
    /// The question's key.
    pub(crate) k: String,
    /// The question's fingerprint ([`fingerprint`]).
    pub(crate) q: String,
    /// Who answers (the sink's assignee); `None`: nobody in particular.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) w: Option<String>,
    /// Approve or reject.
    pub(crate) d: Decision,
    /// Expiry, Unix seconds.
    pub(crate) e: i64,
    /// The channel the link was sent through (`email`, `teams`), recorded as the
    /// answer's `via`; `None`: a webhook's link (`link`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) c: Option<String>,
}

impl Claims {
    /// The channel an answer through this link is recorded under: `email` or `teams`
    /// for a link sent there, `link` for any other.
    pub(crate) fn via(&self) -> &'static str {
        match self.c.as_deref() {
            Some("email") => "email",
            Some("teams") => "teams",
            _ => "link",
        }
    }
}

/// Why a token is refused before the task is looked at.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum TokenError {
    /// Not a token of this server (altered, truncated, or signed with another key).
    Invalid,
    /// Past its expiry.
    Expired(i64),
}

/// The key that signs answer links, and how long a link lives when its question has
/// no deadline. Cheap to clone; `Debug` shows no key. Build one per process and give
/// the same to the board ([`crate::BoardConfig::answer_links`]) and the notifier
/// ([`crate::NotifyConfig::answer_links`]).
#[derive(Clone)]
pub struct AnswerLinks {
    key: Arc<[u8; 32]>,
    /// The life of a link to a question without a deadline.
    pub default_ttl: Duration,
    /// Whether the key was made at start (links die with the process).
    pub ephemeral: bool,
}

impl std::fmt::Debug for AnswerLinks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AnswerLinks")
            .field("default_ttl", &self.default_ttl)
            .field("ephemeral", &self.ephemeral)
            .finish_non_exhaustive()
    }
}

impl AnswerLinks {
    /// The default life of a link whose question has no deadline.
    pub const DEFAULT_TTL: Duration = Duration::from_secs(24 * 3600);

    /// Links keyed from the board secret (shared by replicas), or from a random key
    /// made now when there is none: such links stop working when the process ends.
    pub fn new(board_secret: Option<&[u8]>) -> Self {
        let key = crate::viewer::derive_key(b"mcp-tasks answer link key v1\0", board_secret);
        AnswerLinks {
            key: Arc::new(key),
            default_ttl: Self::DEFAULT_TTL,
            ephemeral: board_secret.is_none(),
        }
    }

    fn mac(&self, payload: &[u8]) -> Hmac<Sha256> {
        // A key of any length is accepted by HMAC; this cannot fail.
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(self.key.as_slice())
            .unwrap_or_else(|_| unreachable!("HMAC takes keys of any length"));
        mac.update(b"answer-link\0");
        mac.update(payload);
        mac
    }

    /// The token for `claims`.
    pub(crate) fn seal(&self, claims: &Claims) -> String {
        let payload = serde_json::to_vec(claims).unwrap_or_default();
        let signature = self.mac(&payload).finalize().into_bytes();
        format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(&payload),
            URL_SAFE_NO_PAD.encode(signature)
        )
    }

    /// The claims of a token this server made and that has not expired at `now`.
    pub(crate) fn open(&self, token: &str, now: DateTime<Utc>) -> Result<Claims, TokenError> {
        let (payload, signature) = token.split_once('.').ok_or(TokenError::Invalid)?;
        let payload = URL_SAFE_NO_PAD
            .decode(payload)
            .map_err(|_| TokenError::Invalid)?;
        let signature = URL_SAFE_NO_PAD
            .decode(signature)
            .map_err(|_| TokenError::Invalid)?;
        // Constant-time comparison.
        self.mac(&payload)
            .verify_slice(&signature)
            .map_err(|_| TokenError::Invalid)?;
        let claims: Claims = serde_json::from_slice(&payload).map_err(|_| TokenError::Invalid)?;
        if now.timestamp() >= claims.e {
            return Err(TokenError::Expired(claims.e));
        }
        Ok(claims)
    }

    /// The approve and reject links of the outstanding question `key` of
    /// `recipient`'s task, as the event's `answers` entry; `None` when the question is
    /// not a yes/no one ([`approval_content`]) and is answered on the board only.
    pub(crate) fn for_question(
        &self,
        recipient: &Recipient<'_>,
        key: &str,
        request: &InputRequest,
        now: DateTime<Utc>,
    ) -> Option<Value> {
        let Recipient {
            public_url,
            task,
            assignee,
            ttl,
            channel,
        } = *recipient;
        approval_content(&request.method, &request.params)?;
        let ttl = chrono::Duration::from_std(ttl.unwrap_or(self.default_ttl))
            .unwrap_or(chrono::Duration::hours(24));
        let expires = request.deadline.as_ref().map(|d| d.at).unwrap_or(now + ttl);
        let link = |d: Decision| {
            let claims = Claims {
                t: task.to_string(),
                k: key.to_string(),
                q: fingerprint(request),
                w: assignee.map(str::to_string),
                d,
                e: expires.timestamp(),
                c: channel.map(str::to_string),
            };
            format!(
                "{}/board/answer/{}",
                public_url.trim_end_matches('/'),
                self.seal(&claims)
            )
        };
        Some(json!({
            "question": key,
            "message": crate::view::question_text(&request.method, &request.params),
            "assignee": assignee,
            "approve": link(Decision::Approve),
            "reject": link(Decision::Reject),
            "expiresAt": DateTime::<Utc>::from_timestamp(expires.timestamp(), 0)
                .map(|at| at.to_rfc3339()),
        }))
    }
}

/// Whom a task's links are for: where they point, which task, who answers with them
/// and how long they live without a deadline.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Recipient<'a> {
    /// The board's public address.
    pub(crate) public_url: &'a str,
    /// The task.
    pub(crate) task: &'a str,
    /// The sink's assignee.
    pub(crate) assignee: Option<&'a str>,
    /// The sink's link life; `None`: [`AnswerLinks::default_ttl`].
    pub(crate) ttl: Option<Duration>,
    /// The channel the links are sent through (`email`, `teams`); `None`: a webhook.
    pub(crate) channel: Option<&'a str>,
}

/// A question's identity as asked: 16 hex digits of the SHA-256 of its method and
/// params.
pub(crate) fn fingerprint(request: &InputRequest) -> String {
    let mut hash = Sha256::new();
    hash.update(request.method.as_bytes());
    hash.update(b"\0");
    hash.update(request.params.to_string().as_bytes());
    hex::encode(&hash.finalize()[..8])
}

/// The content an approval sends for a yes/no question: a form elicitation with no
/// fields (`{}`) or with exactly one boolean field (set to `true`). `None` for any
/// other question: it needs the board.
pub(crate) fn approval_content(method: &str, params: &Value) -> Option<Map<String, Value>> {
    if method == APPROVAL_METHOD {
        // An approval is the yes/no question par excellence (its links approve or
        // reject the call as it is; changing arguments needs the board).
        return Some(Map::new());
    }
    if QuestionKind::of(method, params) != QuestionKind::Form {
        return None;
    }
    let schema = &params["requestedSchema"];
    let properties = schema["properties"].as_object();
    let content = match properties.map(|p| p.iter().collect::<Vec<_>>()) {
        None => Map::new(),
        Some(fields) if fields.is_empty() => Map::new(),
        Some(fields) => match fields[..] {
            [(name, field)] if field["type"] == "boolean" => {
                let mut content = Map::new();
                content.insert(name.clone(), Value::Bool(true));
                content
            }
            _ => return None,
        },
    };
    answer::validate_answer(schema, &content).ok()?;
    Some(content)
}

/// The engine's answer for `decision` on a yes/no question.
pub(crate) fn outcome(decision: Decision, method: &str, params: &Value) -> Option<Outcome> {
    if method == APPROVAL_METHOD {
        let decision = match decision {
            Decision::Approve => "approve",
            Decision::Reject => "reject",
        };
        return Some(Outcome::Result {
            value: json!({ "decision": decision }),
        });
    }
    let value = match decision {
        Decision::Approve => json!({
            "action": "accept",
            "content": approval_content(method, params)?,
        }),
        Decision::Reject => json!({ "action": "decline" }),
    };
    Some(Outcome::Result { value })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn confirm() -> InputRequest {
        InputRequest::new(
            "elicitation/create",
            json!({"message": "Delete?", "requestedSchema": {"type": "object",
                "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]}}),
        )
    }

    fn claims() -> Claims {
        Claims {
            t: "task".into(),
            k: "q1".into(),
            q: fingerprint(&confirm()),
            w: Some("alice".into()),
            d: Decision::Approve,
            e: Utc::now().timestamp() + 60,
            c: None,
        }
    }

    #[test]
    fn a_token_opens_only_unaltered_unexpired_and_under_its_key() {
        let links = AnswerLinks::new(Some(b"0123456789abcdef"));
        let token = links.seal(&claims());
        let now = Utc::now();
        assert_eq!(links.open(&token, now), Ok(claims()));
        // Another key (another process without a shared secret) refuses it.
        assert_eq!(
            AnswerLinks::new(None).open(&token, now),
            Err(TokenError::Invalid)
        );
        // A payload changed to another assignee, with the old signature.
        let (_, signature) = token.split_once('.').unwrap();
        let mut other = claims();
        other.w = Some("mallory".into());
        let forged = format!(
            "{}.{signature}",
            URL_SAFE_NO_PAD.encode(serde_json::to_vec(&other).unwrap())
        );
        assert_eq!(links.open(&forged, now), Err(TokenError::Invalid));
        for wrong in ["", "x", "a.b", &token[1..], &format!("{token}x")] {
            assert_eq!(links.open(wrong, now), Err(TokenError::Invalid), "{wrong}");
        }
        let later = now + chrono::Duration::seconds(61);
        assert!(matches!(
            links.open(&token, later),
            Err(TokenError::Expired(_))
        ));
    }

    #[test]
    fn only_yes_no_questions_get_links() {
        assert_eq!(
            approval_content("elicitation/create", &confirm().params),
            Some(json!({"confirm": true}).as_object().unwrap().clone())
        );
        let empty =
            json!({"message": "Go?", "requestedSchema": {"type": "object", "properties": {}}});
        assert_eq!(
            approval_content("elicitation/create", &empty),
            Some(Map::new())
        );
        let form = json!({"message": "Who?", "requestedSchema": {"type": "object",
            "properties": {"name": {"type": "string"}}, "required": ["name"]}});
        assert_eq!(approval_content("elicitation/create", &form), None);
        assert_eq!(approval_content("sampling/createMessage", &json!({})), None);
        let links = AnswerLinks::new(None);
        let request = confirm();
        let recipient = Recipient {
            public_url: "https://t.example/",
            task: "task",
            assignee: Some("alice"),
            ttl: None,
            channel: None,
        };
        let entry = links
            .for_question(&recipient, "q1", &request, Utc::now())
            .unwrap();
        let approve = entry["approve"].as_str().unwrap();
        assert!(
            approve.starts_with("https://t.example/board/answer/"),
            "{approve}"
        );
        let token = approve.rsplit('/').next().unwrap();
        let opened = links.open(token, Utc::now()).unwrap();
        assert_eq!(
            (opened.d, opened.w.as_deref()),
            (Decision::Approve, Some("alice"))
        );
    }
}

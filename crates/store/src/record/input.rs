//! The questions a task waits on: what the running work asked ([`InputRequest`]), who
//! may answer ([`Assignment`], [`Answerer`]) and until when ([`QuestionDeadline`]).

use super::Outcome;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// A question the running work asked the client (elicitation, sampling, roots) and is
/// waiting on. Kept in the record, not only in memory, so that a client that reconnects
/// is asked again.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InputRequest {
    /// The client method to call (`elicitation/create`, `sampling/createMessage`, ...).
    pub method: String,
    /// Its params, without transport `_meta`.
    pub params: Value,
    /// The client's answer, once given. Stored so that the replica running the work
    /// receives it whichever replica the answer arrived at; the request is outstanding
    /// while this is `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answer: Option<Outcome>,
    /// When the question stops waiting and what happens then; `None`: it waits as long
    /// as the task lives (its TTL). Stored with the question so that a restarted
    /// process keeps the deadline the work gave.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deadline: Option<QuestionDeadline>,
    /// Who the question is for, when people answer it (an approval, a question
    /// assigned to a person or a group); `None`: the client that asked, or anyone who
    /// may act on the task.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub assignment: Option<Assignment>,
    /// Who gave the answer, through which channel and when; `None` for a client's
    /// answer and before the answer. Kept for the task's history (who approved).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub answered_by: Option<Answerer>,
}

/// Who may answer a question a person is asked. Names are principals or group names;
/// which groups a principal belongs to is the caller's (resolved when someone answers,
/// so a change of membership counts at once).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Assignment {
    /// The principals and groups the question is for (the assignees).
    pub to: Vec<String>,
    /// Principals who may not answer although `to` names them: approvers who voted in
    /// an earlier round, so that one person counts once.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub except: Vec<String>,
    /// Only the assignees may answer: not the client that asked, not an operator. An
    /// approval is such a question; an ordinary assigned question is also open to the
    /// client and to the task's owner and operators.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub only: bool,
}

impl Assignment {
    /// Whether `principal`, a member of `groups`, is one of the assignees who may
    /// answer (listed, and not excepted).
    pub fn names(&self, principal: &str, groups: &[String]) -> bool {
        !self.except.iter().any(|p| p == principal) && self.lists(principal, groups)
    }

    /// Whether `principal`, a member of `groups`, is listed among the assignees
    /// (excepted or not): they may see the task that asks.
    pub fn lists(&self, principal: &str, groups: &[String]) -> bool {
        self.to
            .iter()
            .any(|a| a == principal || groups.iter().any(|g| g == a))
    }
}

/// Who answered a question, through which channel, and when.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Answerer {
    /// The person (their principal).
    pub principal: String,
    /// The channel: `board`, `link`, `slack`, ...
    pub via: String,
    /// When.
    pub at: DateTime<Utc>,
}

/// When an unanswered question stops waiting, and what happens then.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QuestionDeadline {
    /// The moment.
    pub at: DateTime<Utc>,
    /// What happens at it.
    pub outcome: DeadlineOutcome,
}

/// What happens to a question nobody answered by its deadline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum DeadlineOutcome {
    /// The task fails, saying which question went unanswered.
    Fail,
    /// The question is answered as declined (an elicitation's `decline` action).
    Decline,
    /// The question is answered with this default answer.
    Answer {
        /// The answer, as the client would have sent it.
        value: Value,
    },
    /// Nothing is decided: the question stays open, marked overdue (in the task's
    /// timeline, and in its assignees' inbox on the task board).
    KeepWaiting,
    /// The question is handed to other people (principals or groups): assigned to
    /// them, with a deadline `within` seconds later (then it stays open, overdue).
    Escalate {
        /// Who is asked next.
        to: Vec<String>,
        /// Seconds they have; `None`: as long as the task lives.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        within: Option<u64>,
    },
}

impl InputRequest {
    /// A question for `method` with `params`, unanswered, without a deadline.
    pub fn new(method: impl Into<String>, params: Value) -> Self {
        InputRequest {
            method: method.into(),
            params,
            answer: None,
            deadline: None,
            assignment: None,
            answered_by: None,
        }
    }

    /// Whether the client has not answered yet.
    pub fn is_outstanding(&self) -> bool {
        self.answer.is_none()
    }
}

/// Outstanding input requests by key. Keys are unique within a task.
pub type InputRequests = BTreeMap<String, InputRequest>;

//! Who is asking: the principal a task is bound to.

/// The identity behind a request.
///
/// `principal` is the authenticated subject when authentication is configured,
/// otherwise the session (HTTP) or the process (stdio). When `authenticated` is false
/// the task id itself is the capability (the spec allows this for single-user servers):
/// anyone holding it may read or cancel the task, which is what lets a client collect a
/// result after reconnecting. Listing is always limited to the caller's own tasks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    /// Owner key stored on tasks this caller creates.
    pub principal: String,
    /// The session the request came on, if any; status notifications go there.
    pub session: Option<String>,
    /// Whether `principal` comes from verified credentials.
    pub authenticated: bool,
}

impl Caller {
    /// An unauthenticated caller identified by its session or process.
    pub fn anonymous(principal: impl Into<String>, session: Option<String>) -> Self {
        Caller {
            principal: principal.into(),
            session,
            authenticated: false,
        }
    }

    /// Whether this caller may see a task owned by `owner`.
    pub fn may_access(&self, owner: &str) -> bool {
        !self.authenticated || self.principal == owner
    }
}

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
    /// Whether this caller may see and act on every principal's tasks: a person listed
    /// as an operator on the task board (`--operators`), or the local user of a board
    /// served without authentication on loopback. Every such action is audited under
    /// the operator's own name.
    pub operator: bool,
    /// The groups the principal belongs to (the server's `[groups]` table), for
    /// questions assigned to a group: an approval's approvers, an assignee.
    pub groups: Vec<String>,
}

impl Caller {
    /// An unauthenticated caller identified by its session or process.
    pub fn anonymous(principal: impl Into<String>, session: Option<String>) -> Self {
        Caller {
            principal: principal.into(),
            session,
            authenticated: false,
            operator: false,
            groups: Vec::new(),
        }
    }

    /// An authenticated caller, bound to its own tasks.
    pub fn authenticated(principal: impl Into<String>, session: Option<String>) -> Self {
        Caller {
            principal: principal.into(),
            session,
            authenticated: true,
            operator: false,
            groups: Vec::new(),
        }
    }

    /// The same caller allowed to see and act on everyone's tasks.
    pub fn as_operator(mut self) -> Self {
        self.operator = true;
        self
    }

    /// The same caller as a member of `groups`.
    pub fn with_groups(mut self, groups: Vec<String>) -> Self {
        self.groups = groups;
        self
    }

    /// Whether this caller may see a task owned by `owner`.
    pub fn may_access(&self, owner: &str) -> bool {
        self.operator || !self.authenticated || self.principal == owner
    }
}

//! Mail to people: when a question or an approval is assigned to someone, they get one
//! email (what is asked, the tool and its arguments or the form, who asked, the
//! deadline, one-click Approve / Reject or Yes / No through signed one-time links, the
//! task on the board), multipart text and HTML; later mails about the same task (a
//! further round, the outcome: decided, escalated, nobody answered by the deadline)
//! thread under the first (`In-Reply-To`, `References`).
//!
//! Mails go through the webhooks' durable outbox ([`crate::notify`]): written into the
//! store when the task changes, keyed so that each exists once, claimed and sent by
//! any process, retried with backoff, so a mail server that is down loses nothing.
//!
//! | module | what it owns |
//! |---|---|
//! | `compose` | which mails a task's change makes, and their text and HTML |
//! | `send` | SMTP through lettre: implicit TLS, STARTTLS or plain |

pub(crate) mod compose;
mod send;

use mcp_tasks_protocol::Secret;
use std::collections::BTreeMap;
use std::sync::Arc;

pub(crate) use compose::mails;
pub(crate) use send::{Mailer, SendError};

/// The outbox's sink name for mail deliveries.
pub(crate) const EMAIL_SINK: &str = "email";

/// How the connection to the SMTP server is secured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EmailTls {
    /// TLS from the first byte (SMTPS, usually port 465).
    #[default]
    Implicit,
    /// Plain, then `STARTTLS` before anything else is said (usually port 587); a
    /// server that does not offer it is refused.
    Starttls,
    /// No encryption: a relay on the same host or a test server only.
    None,
}

impl std::str::FromStr for EmailTls {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "implicit" => Ok(EmailTls::Implicit),
            "starttls" => Ok(EmailTls::Starttls),
            "none" => Ok(EmailTls::None),
            other => Err(format!(
                "tls = \"{other}\" is not one of implicit (port 465), starttls (port 587), none"
            )),
        }
    }
}

/// Where people's mail goes: a principal's address. The `[people]` table is one; an
/// identity provider's claims (an `email` claim) can be another, chained in front.
pub trait AddressBook: Send + Sync + std::fmt::Debug {
    /// The address of `principal`, if known.
    fn email_of(&self, principal: &str) -> Option<String>;
}

/// The `[people]` table: principal to address.
#[derive(Debug, Clone, Default)]
pub struct PeopleTable(pub BTreeMap<String, String>);

impl AddressBook for PeopleTable {
    fn email_of(&self, principal: &str) -> Option<String> {
        self.0.get(principal).cloned()
    }
}

/// The SMTP server, the sender and the address book.
#[derive(Debug, Clone)]
pub struct EmailConfig {
    /// The SMTP server's host name (checked against its certificate under TLS).
    pub host: String,
    /// Its port (465 implicit TLS, 587 STARTTLS, 25 plain).
    pub port: u16,
    /// How the connection is secured.
    pub tls: EmailTls,
    /// The user to log in as, if the server wants a login.
    pub user: Option<String>,
    /// Its password (from a file or the environment, never the config file itself).
    pub password: Option<Secret<String>>,
    /// The `From` mailbox (`mcp-tasks <tasks@example.com>`); its domain also names the
    /// mails' `Message-ID`s.
    pub from: String,
    /// Whose address is what.
    pub people: Arc<dyn AddressBook>,
}

impl EmailConfig {
    /// Checks what can be checked before the first mail: a `From` mailbox that parses,
    /// a host, a user with a password.
    ///
    /// # Errors
    /// What is wrong and what to write instead.
    pub fn check(&self) -> Result<(), String> {
        if self.host.trim().is_empty() {
            return Err("[email]: 'host' is empty; name your SMTP server".into());
        }
        self.from.parse::<lettre::message::Mailbox>().map_err(|e| {
            format!(
                "[email]: from = \"{}\" is not a mailbox ({e}); write e.g. \"mcp-tasks <tasks@example.com>\"",
                self.from
            )
        })?;
        if self.user.is_some() != self.password.is_some() {
            return Err(
                "[email]: 'user' and a password (password_file or password_env) go together".into(),
            );
        }
        Ok(())
    }

    /// The domain of the `From` address, for `Message-ID`s.
    pub(crate) fn domain(&self) -> String {
        self.from
            .parse::<lettre::message::Mailbox>()
            .map(|m| m.email.domain().to_string())
            .unwrap_or_else(|_| "mcp-tasks.invalid".to_string())
    }
}

//! Sending one mail over SMTP (lettre), and what a failure means for the outbox: a
//! server that is down, busy or refusing for now (4xx) is tried again later; a
//! permanent refusal (5xx: no such mailbox) is given up at once.

use lettre::message::header::ContentType;
use lettre::message::{Mailbox, MultiPart, SinglePart};
use lettre::transport::smtp::authentication::Credentials;
use lettre::transport::smtp::client::{Tls, TlsParameters};
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};
use serde_json::Value;
use std::time::Duration;

use super::{EmailConfig, EmailTls};

/// Why a mail was not sent.
#[derive(Debug)]
pub(crate) enum SendError {
    /// Try again later (the server is down, busy, or said 4xx).
    Retry(String),
    /// Do not try again (a 5xx, or a mail that cannot be built).
    GiveUp(String),
}

/// The SMTP client of one `[email]` section.
#[derive(Clone)]
pub(crate) struct Mailer {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    from: Mailbox,
}

impl std::fmt::Debug for Mailer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mailer")
            .field("from", &self.from.to_string())
            .finish_non_exhaustive()
    }
}

impl Mailer {
    /// The client for `config`; `timeout` bounds one mail's conversation.
    ///
    /// # Errors
    /// A `From` that does not parse, or TLS parameters that cannot be built.
    pub(crate) fn new(config: &EmailConfig, timeout: Duration) -> Result<Self, String> {
        let from: Mailbox = config
            .from
            .parse()
            .map_err(|e| format!("[email]: from = \"{}\": {e}", config.from))?;
        let tls = |host: &str| {
            TlsParameters::new(host.to_string())
                .map_err(|e| format!("[email]: TLS for {host}: {e}"))
        };
        let tls = match config.tls {
            EmailTls::Implicit => Tls::Wrapper(tls(&config.host)?),
            EmailTls::Starttls => Tls::Required(tls(&config.host)?),
            EmailTls::None => Tls::None,
        };
        let mut builder = AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(&config.host)
            .port(config.port)
            .tls(tls)
            .timeout(Some(timeout));
        if let (Some(user), Some(password)) = (&config.user, &config.password) {
            builder =
                builder.credentials(Credentials::new(user.clone(), password.expose().clone()));
        }
        Ok(Mailer {
            transport: builder.build(),
            from,
        })
    }

    /// Sends the mail an outbox `payload` describes ([`super::Mail`]).
    pub(crate) async fn send(&self, payload: &str) -> Result<(), SendError> {
        let mail: Value = serde_json::from_str(payload)
            .map_err(|e| SendError::GiveUp(format!("the stored mail is not JSON: {e}")))?;
        let text = |key: &str| mail[key].as_str().unwrap_or_default().to_string();
        let to: Mailbox = format!(
            "{} <{}>",
            text("name").replace(['<', '>', '"'], ""),
            text("to")
        )
        .parse()
        .or_else(|_| text("to").parse())
        .map_err(|e| SendError::GiveUp(format!("'{}' is not an address: {e}", text("to"))))?;
        let mut builder = Message::builder()
            .from(self.from.clone())
            .to(to)
            .subject(text("subject"))
            .message_id(Some(text("messageId")));
        if let Some(parent) = mail["inReplyTo"].as_str() {
            builder = builder
                .in_reply_to(parent.to_string())
                .references(parent.to_string());
        }
        let body = MultiPart::alternative()
            .singlepart(
                SinglePart::builder()
                    .header(ContentType::TEXT_PLAIN)
                    .body(text("text")),
            )
            .singlepart(
                SinglePart::builder()
                    .header(ContentType::TEXT_HTML)
                    .body(text("html")),
            );
        let message = builder
            .multipart(body)
            .map_err(|e| SendError::GiveUp(format!("the mail cannot be built: {e}")))?;
        match self.transport.send(message).await {
            Ok(_) => Ok(()),
            Err(e) if e.is_permanent() => Err(SendError::GiveUp(format!(
                "the mail server refused it for good: {e}"
            ))),
            Err(e) => Err(SendError::Retry(format!("sending failed: {e}"))),
        }
    }
}

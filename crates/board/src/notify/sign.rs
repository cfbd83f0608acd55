//! Standard Webhooks signatures (<https://www.standardwebhooks.com/>, spec 1.0.0):
//! the `webhook-id`, `webhook-timestamp` and `webhook-signature` headers every
//! delivery carries, so that a receiver can check with any of the spec's reference
//! libraries that an event comes from this server, unaltered and recent.
//!
//! - `webhook-id`: `msg_` and 32 hex digits of the SHA-256 of the delivery's key (task,
//!   version, sink). The same on every retry of one event to one sink, so receivers
//!   drop repeats by it; never a `.` (the spec forbids one: it delimits the signed
//!   content).
//! - `webhook-timestamp`: the attempt's time in integer Unix seconds; a retry has its
//!   own, so a receiver's tolerance (5 minutes in the reference libraries) refuses old
//!   replays, not late retries.
//! - `webhook-signature`: `v1,` and the base64 HMAC-SHA256 of `{id}.{timestamp}.{body}`
//!   keyed with the decoded bytes of a `whsec_…` secret, one such entry per secret of
//!   the sink, space-separated (the first secret is the current one; the others are
//!   old ones a receiver may still hold while secrets rotate). A sink without a secret
//!   sends no `webhook-signature`.

use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig, STANDARD};
use base64::engine::DecodePaddingMode;
use base64::Engine;
use hmac::{Hmac, Mac};
use mcp_tasks_protocol::Secret;
use sha2::{Digest, Sha256};

/// The prefix of a serialized Standard Webhooks symmetric secret.
const PREFIX: &str = "whsec_";
/// The spec's bounds on a secret's random bytes (192 to 512 bits).
const MIN_BYTES: usize = 24;
const MAX_BYTES: usize = 64;

/// Base64 that takes a secret with or without its `=` padding, as the reference
/// libraries do.
const LENIENT: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

/// A Standard Webhooks signing secret: the random bytes of a `whsec_<base64>` string.
/// `Debug` prints `***`; the bytes are read only to sign.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WebhookSecret(Secret<Vec<u8>>);

impl WebhookSecret {
    /// Parses `whsec_` followed by the base64 of 24 to 64 random bytes (the spec's
    /// serialization and bounds). Surrounding whitespace is ignored.
    ///
    /// # Errors
    /// What is wrong and how to make one, never quoting the text (it may be a secret
    /// with a typo).
    pub fn parse(text: &str) -> Result<Self, String> {
        let how = "make one with `echo whsec_$(openssl rand -base64 32)`";
        let Some(encoded) = text.trim().strip_prefix(PREFIX) else {
            return Err(format!(
                "a webhook secret starts with '{PREFIX}' followed by base64 ({how})"
            ));
        };
        let bytes = LENIENT
            .decode(encoded)
            .map_err(|_| format!("the part after '{PREFIX}' is not base64 ({how})"))?;
        if !(MIN_BYTES..=MAX_BYTES).contains(&bytes.len()) {
            return Err(format!(
                "a webhook secret holds {MIN_BYTES} to {MAX_BYTES} random bytes, this one {} ({how})",
                bytes.len()
            ));
        }
        Ok(WebhookSecret(Secret::new(bytes)))
    }

    /// Parses a secret file: one secret per line (the current one first, then older
    /// ones still accepted during a rotation); blank lines and lines starting with `#`
    /// are skipped.
    ///
    /// # Errors
    /// Which line is wrong and why; an error also when the text holds no secret.
    pub fn parse_lines(text: &str) -> Result<Vec<Self>, String> {
        let mut secrets = Vec::new();
        for (number, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            secrets.push(Self::parse(line).map_err(|e| format!("line {}: {e}", number + 1))?);
        }
        if secrets.is_empty() {
            return Err("it holds no secret: write one whsec_… per line".to_string());
        }
        Ok(secrets)
    }

    /// The `v1,<base64>` signature of one message under this secret.
    pub fn sign(&self, id: &str, timestamp: i64, body: &str) -> String {
        // A key of any length is accepted by HMAC; this cannot fail.
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(self.0.expose())
            .unwrap_or_else(|_| unreachable!("HMAC takes keys of any length"));
        mac.update(id.as_bytes());
        mac.update(b".");
        mac.update(timestamp.to_string().as_bytes());
        mac.update(b".");
        mac.update(body.as_bytes());
        format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes()))
    }
}

/// The `webhook-id` of the delivery whose key is `key`: stable across retries, unique
/// per event and sink, without a `.`.
pub(crate) fn message_id(key: &str) -> String {
    let digest = Sha256::digest(key.as_bytes());
    format!("msg_{}", hex::encode(&digest[..16]))
}

/// The `webhook-signature` value: one `v1,` signature per secret, space-separated;
/// `None` for a sink without secrets.
pub(crate) fn signature_header(
    secrets: &[WebhookSecret],
    id: &str,
    timestamp: i64,
    body: &str,
) -> Option<String> {
    if secrets.is_empty() {
        return None;
    }
    let signatures: Vec<String> = secrets
        .iter()
        .map(|s| s.sign(id, timestamp, body))
        .collect();
    Some(signatures.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The vector of the reference Python library's own test (`test_sign_function`
    /// in standard-webhooks' libraries/python), checked against standardwebhooks
    /// 1.1.0 from PyPI.
    #[test]
    fn signs_the_reference_librarys_vector() {
        let secret = WebhookSecret::parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap();
        assert_eq!(
            secret.sign(
                "msg_p5jXN8AQM9LWM0D4loKWxJek",
                1_614_265_330,
                r#"{"test": 2432232314}"#
            ),
            "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
        );
    }

    #[test]
    fn several_secrets_give_one_signature_each_in_order() {
        let a = WebhookSecret::parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap();
        let b = WebhookSecret::parse(&format!("whsec_{}", STANDARD.encode([7u8; 32]))).unwrap();
        let header = signature_header(&[a.clone(), b.clone()], "msg_1", 5, "{}").unwrap();
        let parts: Vec<&str> = header.split(' ').collect();
        assert_eq!(
            parts,
            vec![a.sign("msg_1", 5, "{}"), b.sign("msg_1", 5, "{}")]
        );
        assert!(parts.iter().all(|p| p.starts_with("v1,")));
        assert_eq!(signature_header(&[], "msg_1", 5, "{}"), None);
        // The timestamp and the id are signed too.
        assert_ne!(a.sign("msg_1", 6, "{}"), a.sign("msg_1", 5, "{}"));
        assert_ne!(a.sign("msg_2", 5, "{}"), a.sign("msg_1", 5, "{}"));
    }

    #[test]
    fn secrets_are_checked_without_being_quoted() {
        let unpadded = format!("whsec_{}", STANDARD.encode([1u8; 25]).trim_end_matches('='));
        assert!(WebhookSecret::parse(&unpadded).is_ok());
        for wrong in [
            "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
            "whsec_not base64!!",
            "whsec_c2hvcnQ=",
        ] {
            let error = WebhookSecret::parse(wrong).unwrap_err();
            assert!(!error.contains(wrong), "{error}");
            assert!(error.contains("openssl rand"), "{error}");
        }
        let secret = WebhookSecret::parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap();
        assert_eq!(format!("{secret:?}"), "WebhookSecret(***)");
    }

    #[test]
    fn a_secret_file_holds_one_per_line() {
        let text = "# current\nwhsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw\n\n  whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw  \n";
        assert_eq!(WebhookSecret::parse_lines(text).unwrap().len(), 2);
        assert!(WebhookSecret::parse_lines("# none\n\n")
            .unwrap_err()
            .contains("no secret"));
        assert!(
            WebhookSecret::parse_lines("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw\nnope\n")
                .unwrap_err()
                .starts_with("line 2:")
        );
    }

    #[test]
    fn a_message_id_is_stable_and_has_no_dot() {
        let key = "task-1:3:https://hooks.example.com/…#5f0e2a91";
        let id = message_id(key);
        assert_eq!(id, message_id(key));
        assert_ne!(
            id,
            message_id("task-1:4:https://hooks.example.com/…#5f0e2a91")
        );
        assert!(
            id.starts_with("msg_") && id.len() == 36 && !id.contains('.'),
            "{id}"
        );
    }
}

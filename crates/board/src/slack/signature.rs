//! Slack's request signature (v0): every interaction Slack sends carries
//! `X-Slack-Request-Timestamp` and `X-Slack-Signature: v0=<hex>`, the HMAC-SHA256 of
//! `v0:{timestamp}:{raw body}` under the app's signing secret. A request is taken only
//! when the signature matches (compared in constant time) and the timestamp is within
//! [`TOLERANCE`] of now either way, so a captured request cannot be replayed later.

use axum::http::HeaderMap;
use hmac::{Hmac, Mac};
use sha2::Sha256;
use subtle::ConstantTimeEq;

/// How far a request's timestamp may be from now (Slack's own advice: 5 minutes).
pub(crate) const TOLERANCE: i64 = 5 * 60;

/// The header with the request's Unix time.
pub(crate) const TIMESTAMP_HEADER: &str = "x-slack-request-timestamp";
/// The header with the `v0=` signature.
pub(crate) const SIGNATURE_HEADER: &str = "x-slack-signature";

/// Why a request is not taken as Slack's.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum SignatureError {
    /// A header is missing or not in Slack's form.
    Malformed(&'static str),
    /// The timestamp is more than [`TOLERANCE`] seconds away from now.
    Stale(i64),
    /// The signature does not match (another secret, or an altered body).
    Mismatch,
}

impl std::fmt::Display for SignatureError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SignatureError::Malformed(what) => write!(f, "not a signed Slack request: {what}"),
            SignatureError::Stale(age) => write!(
                f,
                "the request's timestamp is {age} s away from now (at most {TOLERANCE} s are taken): a replay, or a clock off"
            ),
            SignatureError::Mismatch => f.write_str(
                "the Slack signature does not match: check signing_secret_file under [slack] (the app's Signing Secret)",
            ),
        }
    }
}

/// The `v0=` signature of `body` sent at `timestamp` (what Slack computes).
#[cfg(test)]
pub(crate) fn sign(secret: &[u8], timestamp: &str, body: &[u8]) -> String {
    let digest = mac(secret, timestamp, body).finalize().into_bytes();
    format!("v0={}", hex::encode(digest))
}

fn mac(secret: &[u8], timestamp: &str, body: &[u8]) -> Hmac<Sha256> {
    // HMAC takes keys of any length; this cannot fail.
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(secret)
        .unwrap_or_else(|_| unreachable!("HMAC takes keys of any length"));
    mac.update(b"v0:");
    mac.update(timestamp.as_bytes());
    mac.update(b":");
    mac.update(body);
    mac
}

/// Checks that `headers` and `body` are a request Slack signed with `secret`, sent
/// within [`TOLERANCE`] of `now` (Unix seconds).
pub(crate) fn verify(
    secret: &[u8],
    headers: &HeaderMap,
    body: &[u8],
    now: i64,
) -> Result<(), SignatureError> {
    let header = |name: &'static str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
            .ok_or(SignatureError::Malformed(name))
    };
    let timestamp = header(TIMESTAMP_HEADER)?;
    let signature = header(SIGNATURE_HEADER)?;
    let at: i64 = timestamp
        .parse()
        .map_err(|_| SignatureError::Malformed("x-slack-request-timestamp is not a number"))?;
    let age = now.saturating_sub(at);
    if age.abs() > TOLERANCE {
        return Err(SignatureError::Stale(age));
    }
    let given = signature
        .strip_prefix("v0=")
        .and_then(|h| hex::decode(h).ok())
        .ok_or(SignatureError::Malformed(
            "x-slack-signature is not v0=<hex>",
        ))?;
    let expected = mac(secret, timestamp, body).finalize().into_bytes();
    if bool::from(expected.as_slice().ct_eq(&given)) {
        Ok(())
    } else {
        Err(SignatureError::Mismatch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(timestamp: &str, signature: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(TIMESTAMP_HEADER, HeaderValue::from_str(timestamp).unwrap());
        h.insert(SIGNATURE_HEADER, HeaderValue::from_str(signature).unwrap());
        h
    }

    #[test]
    fn slacks_documented_example_verifies() {
        // The example of Slack's "Verifying requests from Slack".
        let secret = b"8f742231b10e8888abcd99yyyzzz85a5";
        let body = b"token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c";
        let timestamp = "1531420618";
        let signature = "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503";
        assert_eq!(sign(secret, timestamp, body), signature);
        let h = headers(timestamp, signature);
        assert_eq!(verify(secret, &h, body, 1_531_420_618 + 10), Ok(()));
        assert_eq!(
            verify(b"another secret", &h, body, 1_531_420_618),
            Err(SignatureError::Mismatch)
        );
        assert_eq!(
            verify(secret, &h, b"token=altered", 1_531_420_618),
            Err(SignatureError::Mismatch)
        );
        assert_eq!(
            verify(secret, &h, body, 1_531_420_618 + 6 * 60),
            Err(SignatureError::Stale(360))
        );
        assert_eq!(
            verify(secret, &h, body, 1_531_420_618 - 6 * 60),
            Err(SignatureError::Stale(-360))
        );
        assert!(matches!(
            verify(secret, &headers(timestamp, "v1=abc"), body, 1_531_420_618),
            Err(SignatureError::Malformed(_))
        ));
        assert!(matches!(
            verify(secret, &HeaderMap::new(), body, 1_531_420_618),
            Err(SignatureError::Malformed(_))
        ));
    }
}

//! [`Secret`]: a value that must never be printed (a password, a bearer token, a
//! webhook header, a signing key), and [`redact_url`] / [`scrub`] for the one secret
//! that travels inside something people do want to see, a database URL.
//!
//! It lives here, in the crate with no I/O that every other crate depends on, so that
//! the store, the server, the gateway, the board and the CLI share one type: a config
//! struct holding a `Secret` can derive `Debug`, be logged, appear in an error or a
//! panic message, and still print `***`. Reading the value takes an explicit
//! [`Secret::expose`], which is easy to find in review.

use std::fmt;
use std::str::FromStr;

/// What a [`Secret`] prints instead of its value.
pub const REDACTED: &str = "***";

/// A value whose `Debug` and `Display` print [`REDACTED`]. Deserializes like the value
/// (so config fields can hold one), never serializes (so it cannot end up in a JSON
/// body or a log record by accident); [`Secret::expose`] reads it where it is used.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Secret<T>(T);

impl<T> Secret<T> {
    /// Wraps `value`.
    pub fn new(value: T) -> Self {
        Secret(value)
    }

    /// The value, for the one place that needs it (connecting, comparing, signing).
    /// Never format what this returns.
    pub fn expose(&self) -> &T {
        &self.0
    }

    /// The value, unwrapped.
    pub fn into_inner(self) -> T {
        self.0
    }
}

impl<T> From<T> for Secret<T> {
    fn from(value: T) -> Self {
        Secret(value)
    }
}

impl<T> fmt::Debug for Secret<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTED)
    }
}

impl<T> fmt::Display for Secret<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTED)
    }
}

/// Parses the value (clap's value parsers use this); a parse error is the value's own,
/// which for the types a secret is made of (strings) never quotes the input.
impl<T: FromStr> FromStr for Secret<T> {
    type Err = T::Err;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        s.parse().map(Secret)
    }
}

impl<'de, T: serde::Deserialize<'de>> serde::Deserialize<'de> for Secret<T> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        T::deserialize(deserializer).map(Secret)
    }
}

/// Whether a query parameter named `key` carries a secret (`password`, `sslpassword`,
/// `token`, `secret`, `api_key` and the like).
fn secret_key(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    ["pass", "pwd", "secret", "token", "apikey", "api_key"]
        .iter()
        .any(|k| key.contains(k))
}

/// Splits `url` into (scheme and `://`, the part after it) when it has an authority.
fn split_scheme(url: &str) -> Option<(&str, &str)> {
    let at = url.find("://")?;
    Some((&url[..at + 3], &url[at + 3..]))
}

/// The byte range of the password in `rest` (the URL after `scheme://`): between the
/// first `:` of the userinfo and the last `@` before the query. A password written
/// with an unescaped `@` or `/` is still covered whole; a stray `@` further on makes
/// the masked part longer, never shorter.
fn password_range(rest: &str) -> Option<std::ops::Range<usize>> {
    let end = rest.find(['?', '#']).unwrap_or(rest.len());
    let at = rest[..end].rfind('@')?;
    let colon = rest[..at].find(':')?;
    Some(colon + 1..at)
}

/// The query's `key=value` pairs as byte ranges of their values in `url`, for keys
/// that carry secrets.
fn secret_query_values(url: &str) -> Vec<std::ops::Range<usize>> {
    let Some(q) = url.find('?') else {
        return Vec::new();
    };
    let end = url[q..].find('#').map_or(url.len(), |h| q + h);
    let mut ranges = Vec::new();
    let mut start = q + 1;
    for pair in url[q + 1..end].split('&') {
        if let Some((key, value)) = pair.split_once('=') {
            if secret_key(key) && !value.is_empty() {
                let from = start + key.len() + 1;
                ranges.push(from..from + value.len());
            }
        }
        start += pair.len() + 1;
    }
    ranges
}

/// `url` with its password (`user:PASSWORD@host`) and secret query parameters
/// (`?password=…`, `sslpassword`, `token`, …) replaced by [`REDACTED`]:
/// `postgres://app:***@db/tasks`. For showing a database (or any) URL in logs, errors
/// and status pages; anything that is not a URL comes back unchanged.
pub fn redact_url(url: &str) -> String {
    let mut ranges = secret_query_values(url);
    if let Some((scheme, rest)) = split_scheme(url) {
        if let Some(r) = password_range(rest) {
            if !r.is_empty() {
                ranges.push(scheme.len() + r.start..scheme.len() + r.end);
            }
        }
    }
    ranges.sort_by_key(|r| r.start);
    let mut out = String::with_capacity(url.len());
    let mut at = 0;
    for r in ranges {
        if r.start < at {
            continue;
        }
        out.push_str(&url[at..r.start]);
        out.push_str(REDACTED);
        at = r.end;
    }
    out.push_str(&url[at..]);
    out
}

/// The secrets `url` carries (its password, secret query values), as written and
/// percent-decoded.
fn url_secrets(url: &str) -> Vec<String> {
    let mut ranges = secret_query_values(url);
    if let Some((scheme, rest)) = split_scheme(url) {
        if let Some(r) = password_range(rest) {
            ranges.push(scheme.len() + r.start..scheme.len() + r.end);
        }
    }
    let mut secrets = Vec::new();
    for r in ranges {
        let raw = &url[r];
        secrets.push(raw.to_string());
        let decoded = percent_decode(raw);
        if decoded != raw {
            secrets.push(decoded);
        }
    }
    secrets
}

/// `%XX` escapes decoded (and `+` left alone, as in a URL's userinfo); invalid escapes
/// and invalid UTF-8 are kept as written.
fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8(out).unwrap_or_else(|_| s.to_string())
}

/// Shortest secret [`scrub`] replaces inside other text: a shorter one would turn
/// ordinary words into `***` (and one that short protects little anyway).
const SCRUB_MIN_LEN: usize = 4;

/// `text` (an error message, say, from a driver that may echo what it was given) with
/// every secret of `url` — its password, as written and percent-decoded, and secret
/// query values — replaced by [`REDACTED`], and `url` itself by [`redact_url`]'s form.
pub fn scrub(text: &str, url: &str) -> String {
    let mut out = text.replace(url, &redact_url(url));
    let mut secrets = url_secrets(url);
    // Longest first, so a secret containing another is replaced whole.
    secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
    for secret in secrets {
        if secret.len() >= SCRUB_MIN_LEN {
            out = out.replace(&secret, REDACTED);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_prints_stars_in_every_format() {
        let s = Secret::new("hunter2".to_string());
        assert_eq!(format!("{s}"), "***");
        assert_eq!(format!("{s:?}"), "***");
        assert_eq!(format!("{s:#?}"), "***");
        #[derive(Debug)]
        #[allow(dead_code)]
        struct Config {
            token: Secret<String>,
            key: Option<Secret<Vec<u8>>>,
        }
        let c = Config {
            token: s.clone(),
            key: Some(Secret::new(b"signing".to_vec())),
        };
        let shown = format!("{c:?} {c:#?}");
        assert!(!shown.contains("hunter2"), "{shown}");
        assert!(!shown.contains("115"), "bytes of the key: {shown}");
        assert_eq!(s.expose(), "hunter2");
        assert_eq!(s.into_inner(), "hunter2");
    }

    #[test]
    fn a_secret_parses_and_deserializes_like_its_value() {
        let parsed: Secret<String> = "tok".parse().expect("parse");
        assert_eq!(parsed.expose(), "tok");
        let read: Secret<String> = serde_json::from_str("\"tok\"").expect("deserialize");
        assert_eq!(read, parsed);
    }

    #[test]
    fn the_password_of_a_url_is_masked() {
        for (url, shown) in [
            (
                "postgres://app:s3cr3t@db.example:5432/tasks",
                "postgres://app:***@db.example:5432/tasks",
            ),
            (
                "postgresql://app:p%40ss@db/tasks?sslmode=require",
                "postgresql://app:***@db/tasks?sslmode=require",
            ),
            // An unescaped `@` or `/` in the password is masked whole.
            (
                "postgres://app:a@b/c@db/tasks",
                "postgres://app:***@db/tasks",
            ),
            (
                "postgres://db/tasks?user=app&password=s3cr3t&sslmode=disable",
                "postgres://db/tasks?user=app&password=***&sslmode=disable",
            ),
            (
                "postgres://app:one@db/tasks?sslpassword=two",
                "postgres://app:***@db/tasks?sslpassword=***",
            ),
            // Nothing secret: unchanged.
            ("postgres://app@db/tasks", "postgres://app@db/tasks"),
            ("postgres://db:5432/tasks", "postgres://db:5432/tasks"),
            ("sqlite://./mcp-tasks.db", "sqlite://./mcp-tasks.db"),
            ("memory:", "memory:"),
            ("not a url", "not a url"),
        ] {
            assert_eq!(redact_url(url), shown, "{url}");
        }
    }

    #[test]
    fn scrub_removes_the_password_from_any_text() {
        let url = "postgres://app:p%40ssw0rd@db/tasks?password=other-one";
        let text = format!(
            "cannot connect to {url}: password p@ssw0rd refused; also p%40ssw0rd and other-one"
        );
        let clean = scrub(&text, url);
        for secret in ["p@ssw0rd", "p%40ssw0rd", "other-one"] {
            assert!(!clean.contains(secret), "{secret} in {clean}");
        }
        assert!(
            clean.contains("postgres://app:***@db/tasks?password=***"),
            "{clean}"
        );
        // Very short passwords are not hunted inside words.
        assert_eq!(scrub("a connection", "postgres://u:a@h/d"), "a connection");
    }
}

//! A PostgreSQL URL read into connect options: its scheme and TLS parameters checked
//! first, so that a typo is reported as one (without the URL's password) rather than
//! as a server that cannot be reached.

use super::tls;
use crate::error::StoreError;
use mcp_tasks_protocol::secret::{redact_url, scrub};
use sqlx::postgres::PgConnectOptions;
use std::str::FromStr;

/// The connect options of `url` (`postgres://` or `postgresql://`, with any
/// libpq-style parameters sqlx understands).
///
/// # Errors
/// [`StoreError::InvalidUrl`] when the URL is not a PostgreSQL URL or does not parse,
/// its `sslmode` is unknown or a certificate file it names cannot be read.
pub(super) async fn options(url: &str) -> Result<PgConnectOptions, StoreError> {
    let invalid = |why: &str| {
        StoreError::InvalidUrl(format!(
            "'{}' is not a usable PostgreSQL URL ({}): use postgres://USER:PASSWORD@HOST:PORT/DATABASE",
            redact_url(url),
            scrub(why, url)
        ))
    };
    if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
        return Err(invalid("it does not start with postgres://"));
    }
    tls::check_url(url).await.map_err(|why| invalid(&why))?;
    PgConnectOptions::from_str(url).map_err(|e| invalid(&e.to_string()))
}

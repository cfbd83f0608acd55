//! TLS to the PostgreSQL server (rustls, Mozilla's roots built in): the URL's TLS
//! parameters checked before connecting, so that a typo is reported as such rather than
//! as a server that cannot be reached, and TLS failures told apart from the network's.
//!
//! sqlx does the TLS itself from the URL: `sslmode` (`disable`, `allow`, `prefer` (the
//! default), `require`, `verify-ca`, `verify-full`), `sslrootcert` (a PEM file of CAs
//! trusted besides the built-in roots), `sslcert` and `sslkey` (a client certificate),
//! and the `PGSSLMODE`, `PGSSLROOTCERT`, `PGSSLCERT`, `PGSSLKEY` variables when the URL
//! does not set them.

use rustls::CertificateError;
use std::fmt;

/// The `sslmode` values, as libpq spells them.
pub(super) const SSL_MODES: [&str; 6] = [
    "disable",
    "allow",
    "prefer",
    "require",
    "verify-ca",
    "verify-full",
];

/// The URL parameters that name a certificate or key file (sqlx's spellings: libpq's
/// and its own), with the environment variable used when the URL names none.
const FILE_PARAMS: [(&[&str], &str); 3] = [
    (&["sslrootcert", "ssl-root-cert", "ssl-ca"], "PGSSLROOTCERT"),
    (&["sslcert", "ssl-cert"], "PGSSLCERT"),
    (&["sslkey", "ssl-key"], "PGSSLKEY"),
];

/// Checks the TLS parameters of `url`: `sslmode` is one sqlx knows, and each file named
/// by `sslrootcert`, `sslcert` or `sslkey` (or their variables) can be read. Without
/// this, an unknown mode reads as a configuration error about `ssl_mode`, and a missing
/// file as a server that is "temporarily unavailable: No such file or directory".
///
/// # Errors
/// What is wrong, naming the parameter, for [`super::PgStore::open`]'s URL error. A URL
/// that does not parse passes: sqlx's parser says what is wrong with it.
pub(super) async fn check_url(url: &str) -> Result<(), String> {
    let Ok(parsed) = url::Url::parse(url) else {
        return Ok(());
    };
    let pairs: Vec<(String, String)> = parsed.query_pairs().into_owned().collect();
    if let Some((key, mode)) = pairs
        .iter()
        .find(|(key, _)| key == "sslmode" || key == "ssl-mode")
    {
        if !SSL_MODES.contains(&mode.to_ascii_lowercase().as_str()) {
            return Err(format!(
                "{key}={mode} is not a TLS mode: use one of {}",
                SSL_MODES.join(", ")
            ));
        }
    }
    for (names, variable) in FILE_PARAMS {
        let named = pairs
            .iter()
            .rev()
            .find(|(key, _)| names.contains(&key.as_str()))
            .map(|(key, value)| (key.clone(), value.clone()));
        let named = named.or_else(|| Some((variable.to_string(), std::env::var(variable).ok()?)));
        if let Some((name, value)) = named {
            readable(&name, &value).await?;
        }
    }
    Ok(())
}

/// Whether the file `value` (unless it is inline PEM, which sqlx also accepts) can be
/// opened; `name` is the parameter or variable that named it.
async fn readable(name: &str, value: &str) -> Result<(), String> {
    let inline = value.trim().starts_with("-----BEGIN");
    if inline {
        return Ok(());
    }
    match tokio::fs::File::open(value).await {
        Ok(_) => Ok(()),
        Err(e) => Err(format!("{name}: cannot read {value}: {e}")),
    }
}

/// A TLS failure with the server: a certificate refused or a handshake that failed.
/// Not retryable (unlike an unreachable server): the URL or the server's certificate
/// must change.
#[derive(Debug)]
pub(super) struct TlsRefused {
    message: String,
    source: rustls::Error,
}

impl fmt::Display for TlsRefused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for TlsRefused {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

/// The TLS failure inside `err`, with what to do about it; `None` for any other error.
/// rustls reports a refused certificate through the handshake's I/O, so without this it
/// would read as a lost connection.
pub(super) fn refused(err: &sqlx::Error) -> Option<TlsRefused> {
    let inner: &(dyn std::error::Error + 'static) = match err {
        sqlx::Error::Io(io) => io.get_ref()?,
        sqlx::Error::Tls(tls) => tls.as_ref(),
        _ => return None,
    };
    let tls = inner.downcast_ref::<rustls::Error>()?;
    let message = match tls {
        rustls::Error::InvalidCertificate(cert) => {
            let hint = match cert {
                CertificateError::NotValidForName
                | CertificateError::NotValidForNameContext { .. } => {
                    "the certificate does not name the host of the URL: connect by a name \
                     (or IP address) the certificate holds"
                }
                CertificateError::Expired
                | CertificateError::ExpiredContext { .. }
                | CertificateError::NotValidYet
                | CertificateError::NotValidYetContext { .. } => {
                    "the certificate is outside its validity period (or this machine's clock \
                     is wrong)"
                }
                _ => {
                    "it is not signed by a CA this client trusts: set sslrootcert to the PEM \
                     file of the CA that signed the server's certificate"
                }
            };
            format!(
                "TLS certificate verification failed: the PostgreSQL server's certificate \
                 was refused ({tls}): {hint}"
            )
        }
        _ => format!(
            "TLS with the PostgreSQL server failed ({tls}): check the URL's sslmode and \
             the server's TLS settings"
        ),
    };
    Some(TlsRefused {
        message,
        source: tls.clone(),
    })
}

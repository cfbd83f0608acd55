//! Merges `serve`'s flags with the config file's `[server]` table into the engine's and
//! the server's configuration: a flag wins over the file, the file over the default.

use super::ServeArgs;
use crate::config::{AuthRequirement, ServerSection};
use anyhow::{Context, Result};
use mcp_tasks_engine::{config as defaults, EngineConfig};
use mcp_tasks_server::auth::{AuthMode, Authenticator, StaticTokens};
use mcp_tasks_server::server::{
    DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_SESSIONS, DEFAULT_SESSION_IDLE_TIMEOUT,
};
use mcp_tasks_server::transport::connections::{self, HttpLimits};
use mcp_tasks_server::ServerConfig;
use std::path::Path;
use std::sync::Arc;

/// The database when neither `--database` nor the file names one. Over HTTP
/// [`DEFAULT_DATABASE`](super::DEFAULT_DATABASE), in the working folder, as documented
/// since the first release: whoever starts an HTTP server chose that folder. Over stdio
/// the host chose it (often `/` or its own install folder): `mcp-tasks.db` in the
/// user's data folder instead, created if missing and said on stderr.
///
/// # Errors
/// When the user has no data folder (no home) or it cannot be created, naming it.
pub(super) fn default_database(stdio: bool) -> Result<String> {
    if !stdio {
        return Ok(super::DEFAULT_DATABASE.to_string());
    }
    let base = directories::BaseDirs::new().context(
        "no data folder for the task store (no home folder): set XDG_DATA_HOME, or pass --database",
    )?;
    let dir = base.data_dir().join(super::DATA_DIR_NAME);
    std::fs::create_dir_all(&dir).with_context(|| {
        format!(
            "cannot create {} for the task store (set XDG_DATA_HOME to a writable folder, or pass --database)",
            dir.display()
        )
    })?;
    let file = dir.join("mcp-tasks.db");
    tracing::info!(
        path = %file.display(),
        "no --database: over stdio the task store is in the user's data folder"
    );
    // sqlx percent-decodes the path of a sqlite: URL.
    let path = file
        .display()
        .to_string()
        .replace('%', "%25")
        .replace('?', "%3F")
        .replace('#', "%23");
    Ok(format!("sqlite://{path}"))
}

/// The engine's settings: ttl, polling, quotas, leases, external job calls.
pub(super) fn engine_config(args: &ServeArgs, file: &ServerSection) -> EngineConfig {
    EngineConfig {
        default_ttl: args
            .default_ttl
            .or(file.default_ttl)
            .unwrap_or(defaults::DEFAULT_TTL),
        max_ttl: args
            .max_ttl
            .or(file.max_ttl)
            .unwrap_or(defaults::DEFAULT_MAX_TTL),
        min_ttl: args
            .min_ttl
            .or(file.min_ttl)
            .unwrap_or(defaults::DEFAULT_MIN_TTL),
        poll_interval: args
            .poll_interval
            .or(file.poll_interval)
            .unwrap_or(defaults::DEFAULT_POLL_INTERVAL),
        cancel_grace: args
            .cancel_grace
            .or(file.cancel_grace)
            .unwrap_or(defaults::DEFAULT_CANCEL_GRACE),
        input_timeout: args
            .input_timeout
            .or(file.input_timeout)
            .unwrap_or(defaults::DEFAULT_INPUT_TIMEOUT),
        max_input_requests: args
            .max_input_requests
            .or(file.max_input_requests)
            .unwrap_or(defaults::DEFAULT_MAX_INPUT_REQUESTS),
        max_tasks_per_principal: args
            .max_tasks_per_principal
            .or(file.max_tasks_per_principal)
            .unwrap_or(defaults::DEFAULT_MAX_TASKS_PER_PRINCIPAL),
        max_tasks_per_session: args
            .max_tasks_per_session
            .or(file.max_tasks_per_session)
            .unwrap_or(defaults::DEFAULT_MAX_TASKS_PER_SESSION),
        max_active_tasks: args
            .max_active_tasks
            .or(file.max_active_tasks)
            .unwrap_or(defaults::DEFAULT_MAX_ACTIVE_TASKS),
        max_result_bytes: args
            .max_result_bytes
            .or(file.max_result_bytes)
            .unwrap_or(defaults::DEFAULT_MAX_RESULT_BYTES),
        external_call_timeout: args
            .external_call_timeout
            .or(file.external_call_timeout)
            .unwrap_or(defaults::DEFAULT_EXTERNAL_CALL_TIMEOUT),
        audit_arguments: args.audit_arguments || file.audit_arguments,
        // None: the engine chooses from the store (leases on any database file or
        // server, which other processes may share).
        lease_ttl: args.lease_ttl.or(file.lease_ttl),
        heartbeat: args
            .heartbeat
            .or(file.heartbeat)
            .unwrap_or(defaults::DEFAULT_HEARTBEAT),
        drain_timeout: args
            .drain_timeout
            .or(file.drain_timeout)
            .unwrap_or(defaults::DEFAULT_DRAIN_TIMEOUT),
        ..EngineConfig::default()
    }
}

/// The transport's settings: authentication, accepted hosts and origins, body limit.
pub(super) fn server_config(
    args: &ServeArgs,
    file: &ServerSection,
    listen: &str,
    auth: AuthMode,
) -> ServerConfig {
    let mut allowed_origins = file.allowed_origins.clone();
    allowed_origins.extend(args.allowed_origins.iter().cloned());
    let mut extra_hosts = file.allowed_hosts.clone();
    extra_hosts.extend(args.allowed_hosts.iter().cloned());
    ServerConfig {
        auth,
        allowed_hosts: allowed_hosts(listen, &extra_hosts),
        max_body_bytes: args
            .max_body_bytes
            .or(file.max_body_bytes)
            .unwrap_or(DEFAULT_MAX_BODY_BYTES),
        allowed_origins,
        client_hosted_tasks: args.client_tasks || file.client_tasks,
        session_idle_timeout: match args.session_idle_timeout.or(file.session_idle_timeout) {
            Some(off) if off.is_zero() => None,
            Some(timeout) => Some(timeout),
            None => Some(DEFAULT_SESSION_IDLE_TIMEOUT),
        },
        task_after: args
            .task_after
            .or(file.task_after)
            .unwrap_or(mcp_tasks_server::server::DEFAULT_TASK_AFTER),
        sync_budget: args
            .sync_budget
            .or(file.sync_budget)
            .unwrap_or(mcp_tasks_server::server::DEFAULT_SYNC_BUDGET),
        task_tools: args.task_tools.or(file.task_tools).unwrap_or_default(),
        progress_interval: args
            .progress_interval
            .or(file.progress_interval)
            .unwrap_or(mcp_tasks_server::server::DEFAULT_PROGRESS_INTERVAL),
        max_sessions: args
            .max_sessions
            .or(file.max_sessions)
            .unwrap_or(DEFAULT_MAX_SESSIONS),
        http: HttpLimits {
            header_timeout: args
                .http_header_timeout
                .or(file.http_header_timeout)
                .unwrap_or(connections::DEFAULT_HEADER_TIMEOUT),
            body_timeout: args
                .http_body_timeout
                .or(file.http_body_timeout)
                .unwrap_or(connections::DEFAULT_BODY_TIMEOUT),
            idle_timeout: args
                .http_idle_timeout
                .or(file.http_idle_timeout)
                .unwrap_or(connections::DEFAULT_IDLE_TIMEOUT),
            max_connections: args
                .max_connections
                .or(file.max_connections)
                .unwrap_or(connections::DEFAULT_MAX_CONNECTIONS),
            sse_keep_alive: args
                .sse_keep_alive
                .or(file.sse_keep_alive)
                .unwrap_or(connections::DEFAULT_SSE_KEEP_ALIVE),
        },
        ..ServerConfig::default()
    }
}

/// The authentication configured by flags or, when no flag names a token source, by
/// the file (one source, never a mix of both).
pub(super) fn auth_mode(args: &ServeArgs, file: &ServerSection) -> Result<AuthMode> {
    let authenticator: Arc<dyn Authenticator> = if let Some(path) = &args.auth_tokens {
        static_tokens(path)?
    } else if let Some(path) = &args.jwt_jwks {
        jwt(
            path,
            args.jwt_issuer.as_deref(),
            args.jwt_audience.as_deref(),
        )?
    } else if let Some(path) = &file.auth_tokens {
        static_tokens(path)?
    } else if let Some(path) = &file.jwt_jwks {
        jwt(
            path,
            file.jwt_issuer.as_deref(),
            file.jwt_audience.as_deref(),
        )?
    } else {
        return Ok(AuthMode::Off);
    };
    let requirement = match args.auth.as_deref() {
        Some("optional") => AuthRequirement::Optional,
        Some(_) => AuthRequirement::Required,
        None => file.auth.unwrap_or(AuthRequirement::Required),
    };
    Ok(match requirement {
        AuthRequirement::Optional => AuthMode::Optional(authenticator),
        AuthRequirement::Required => AuthMode::Required(authenticator),
    })
}

fn static_tokens(path: &Path) -> Result<Arc<dyn Authenticator>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let tokens =
        StaticTokens::from_toml(&text).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    Ok(Arc::new(tokens))
}

#[cfg(feature = "jwt")]
fn jwt(
    path: &Path,
    issuer: Option<&str>,
    audience: Option<&str>,
) -> Result<Arc<dyn Authenticator>> {
    use mcp_tasks_server::auth::JwtVerifier;
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let verifier = JwtVerifier::new(
        &text,
        issuer.unwrap_or_default().to_string(),
        audience.unwrap_or_default().to_string(),
    )
    .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    Ok(Arc::new(verifier))
}

/// In a build without the `jwt` feature: refuses, naming it.
#[cfg(not(feature = "jwt"))]
fn jwt(
    _path: &Path,
    _issuer: Option<&str>,
    _audience: Option<&str>,
) -> Result<Arc<dyn Authenticator>> {
    Err(crate::features::missing(
        "--jwt-jwks (jwt_jwks in [server])",
        "jwt",
    ))
}

/// Host names accepted in the `Host` header: loopback names when bound to loopback,
/// plus configured ones; no check when bound elsewhere without extra names.
fn allowed_hosts(listen: &str, extra: &[String]) -> Option<Vec<String>> {
    let loopback = listen
        .parse::<std::net::SocketAddr>()
        .map(|a| a.ip().is_loopback())
        .unwrap_or_else(|_| listen.starts_with("localhost:"));
    if !loopback && extra.is_empty() {
        return None;
    }
    let mut hosts: Vec<String> = if loopback {
        ["localhost", "127.0.0.1", "[::1]"]
            .iter()
            .map(|s| s.to_string())
            .collect()
    } else {
        Vec::new()
    };
    hosts.extend(extra.iter().cloned());
    Some(hosts)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::config::ConfigFile;
    use clap::Parser;
    use std::time::Duration;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        serve: ServeArgs,
    }

    fn flags(list: &[&str]) -> ServeArgs {
        Cli::try_parse_from(std::iter::once("serve").chain(list.iter().copied()))
            .unwrap()
            .serve
    }

    /// A config file in a fresh folder, with a tokens file beside it.
    fn file(text: &str) -> (tempfile::TempDir, ServerSection) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("tokens.toml"), "\"s3cret\" = \"alice\"\n").unwrap();
        let path = dir.path().join("tasks.toml");
        std::fs::write(&path, text).unwrap();
        let server = ConfigFile::load(&path).unwrap().server;
        (dir, server)
    }

    #[test]
    fn every_engine_setting_comes_from_the_file_and_a_flag_wins_over_it() {
        let (_dir, s) = file(
            "[server]\nmax_tasks_per_principal = 7\nmax_active_tasks = 70\nmax_tasks_per_session = 5\n\
             max_result_bytes = 1000\nlease_ttl = \"45s\"\nexternal_call_timeout = \"3s\"\n\
             audit_arguments = true\ndefault_ttl = \"2h\"\nheartbeat = \"3s\"\ndrain_timeout = \"1m\"\n",
        );
        let from_file = engine_config(&flags(&[]), &s);
        assert_eq!(from_file.max_tasks_per_principal, 7);
        assert_eq!(from_file.max_active_tasks, 70);
        assert_eq!(from_file.max_tasks_per_session, 5);
        assert_eq!(from_file.max_result_bytes, 1000);
        assert_eq!(from_file.lease_ttl, Some(Duration::from_secs(45)));
        assert_eq!(from_file.external_call_timeout, Duration::from_secs(3));
        assert!(from_file.audit_arguments);
        assert_eq!(from_file.default_ttl, Duration::from_secs(7200));
        assert_eq!(from_file.heartbeat, Duration::from_secs(3));
        assert_eq!(from_file.drain_timeout, Duration::from_secs(60));

        let flagged = engine_config(
            &flags(&[
                "--max-tasks-per-principal",
                "9",
                "--max-tasks-per-session",
                "6",
                "--lease-ttl",
                "1m",
                "--external-call-timeout",
                "20s",
                "--drain-timeout",
                "5s",
            ]),
            &s,
        );
        assert_eq!(flagged.max_tasks_per_principal, 9);
        assert_eq!(flagged.max_tasks_per_session, 6);
        assert_eq!(flagged.max_active_tasks, 70);
        assert_eq!(flagged.lease_ttl, Some(Duration::from_secs(60)));
        assert_eq!(flagged.external_call_timeout, Duration::from_secs(20));
        assert_eq!(flagged.drain_timeout, Duration::from_secs(5));
        assert_eq!(flagged.heartbeat, Duration::from_secs(3));

        let defaults = engine_config(&flags(&[]), &ServerSection::default());
        assert_eq!(
            defaults.max_tasks_per_principal,
            defaults::DEFAULT_MAX_TASKS_PER_PRINCIPAL
        );
        assert_eq!(
            defaults.external_call_timeout,
            defaults::DEFAULT_EXTERNAL_CALL_TIMEOUT
        );
        assert_eq!(defaults.lease_ttl, None);
        assert_eq!(defaults.heartbeat, defaults::DEFAULT_HEARTBEAT);
        assert_eq!(defaults.drain_timeout, defaults::DEFAULT_DRAIN_TIMEOUT);
        assert!(!defaults.audit_arguments);
        assert_eq!(
            defaults.max_tasks_per_session,
            defaults::DEFAULT_MAX_TASKS_PER_SESSION
        );
    }

    #[test]
    fn task_after_comes_from_the_file_and_a_flag_wins_over_it() {
        let (_dir, s) = file("[server]\ntask_after = \"50ms\"\n");
        let off = AuthMode::Off;
        let from_file = server_config(&flags(&[]), &s, "127.0.0.1:0", off.clone());
        assert_eq!(from_file.task_after, Duration::from_millis(50));
        let flagged = server_config(
            &flags(&["--task-after", "0s"]),
            &s,
            "127.0.0.1:0",
            off.clone(),
        );
        assert_eq!(flagged.task_after, Duration::ZERO);
        let defaults = server_config(&flags(&[]), &ServerSection::default(), "127.0.0.1:0", off);
        assert_eq!(
            defaults.task_after,
            mcp_tasks_server::server::DEFAULT_TASK_AFTER
        );
    }

    #[test]
    fn the_sync_budget_task_tools_and_progress_interval_come_from_the_file_or_flags() {
        let (_dir, s) = file(
            "[server]\nsync_budget = \"2s\"\ntask_tools = \"always\"\nprogress_interval = \"250ms\"\n",
        );
        let off = AuthMode::Off;
        let from_file = server_config(&flags(&[]), &s, "127.0.0.1:0", off.clone());
        assert_eq!(from_file.sync_budget, Duration::from_secs(2));
        assert_eq!(from_file.task_tools, mcp_tasks_server::TaskTools::Always);
        assert_eq!(from_file.progress_interval, Duration::from_millis(250));
        let flagged = server_config(
            &flags(&[
                "--sync-budget",
                "0s",
                "--task-tools",
                "never",
                "--progress-interval",
                "1s",
            ]),
            &s,
            "127.0.0.1:0",
            off.clone(),
        );
        assert_eq!(flagged.sync_budget, Duration::ZERO);
        assert_eq!(flagged.task_tools, mcp_tasks_server::TaskTools::Never);
        assert_eq!(flagged.progress_interval, Duration::from_secs(1));
        let defaults = server_config(&flags(&[]), &ServerSection::default(), "127.0.0.1:0", off);
        assert_eq!(defaults.sync_budget, Duration::from_secs(45));
        assert_eq!(defaults.task_tools, mcp_tasks_server::TaskTools::Auto);
        assert_eq!(defaults.progress_interval, Duration::from_secs(10));
    }

    #[test]
    fn auth_comes_from_the_file_relative_to_it_and_flags_replace_it() {
        let (_dir, s) = file("[server]\nauth_tokens = \"tokens.toml\"\nauth = \"optional\"\n");
        assert!(matches!(
            auth_mode(&flags(&[]), &s).unwrap(),
            AuthMode::Optional(_)
        ));
        assert!(matches!(
            auth_mode(&flags(&["--auth", "required"]), &s).unwrap(),
            AuthMode::Required(_)
        ));
        // A flag naming another token source replaces the file's (here: a missing file).
        let err = auth_mode(&flags(&["--auth-tokens", "/nonexistent/tokens.toml"]), &s)
            .err()
            .unwrap();
        assert!(
            format!("{err:#}").contains("/nonexistent/tokens.toml"),
            "{err:#}"
        );
        let (_dir, none) = file("[server]\n");
        assert!(matches!(
            auth_mode(&flags(&[]), &none).unwrap(),
            AuthMode::Off
        ));
        let (_dir, s) = file("[server]\nauth_tokens = \"tokens.toml\"\n");
        assert!(matches!(
            auth_mode(&flags(&[]), &s).unwrap(),
            AuthMode::Required(_)
        ));
    }

    #[test]
    fn the_file_refuses_what_the_flags_refuse() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tasks.toml");
        for (text, says) in [
            (
                "[server]\nauth_tokens = \"a\"\njwt_jwks = \"b\"\n",
                "exclude each other",
            ),
            (
                "[server]\njwt_jwks = \"b\"\njwt_issuer = \"i\"\n",
                "needs jwt_issuer and jwt_audience",
            ),
            ("[server]\nauth = \"sometimes\"\n", "unknown variant"),
        ] {
            std::fs::write(&path, text).unwrap();
            let err = ConfigFile::load(&path).unwrap_err();
            assert!(format!("{err:#}").contains(says), "{text}: {err:#}");
        }
    }

    #[test]
    fn hosts_and_origins_add_up_and_switches_turn_on_from_either_side() {
        let (_dir, s) = file(
            "[server]\nallowed_hosts = [\"mcp.internal\"]\nallowed_origins = [\"https://a.example\"]\n\
             client_tasks = true\nmax_body_bytes = 2048\nsession_idle_timeout = \"10m\"\n",
        );
        let config = server_config(
            &flags(&["--allowed-host", "other.internal"]),
            &s,
            "127.0.0.1:0",
            AuthMode::Off,
        );
        let hosts = config.allowed_hosts.unwrap();
        assert!(hosts.contains(&"mcp.internal".to_string()), "{hosts:?}");
        assert!(hosts.contains(&"other.internal".to_string()), "{hosts:?}");
        assert!(hosts.contains(&"localhost".to_string()), "{hosts:?}");
        assert_eq!(
            config.allowed_origins,
            vec!["https://a.example".to_string()]
        );
        assert!(config.client_hosted_tasks);
        assert_eq!(config.max_body_bytes, 2048);
        assert_eq!(config.session_idle_timeout, Some(Duration::from_secs(600)));
        let never = server_config(
            &flags(&["--session-idle-timeout", "0s"]),
            &s,
            "127.0.0.1:0",
            AuthMode::Off,
        );
        assert_eq!(never.session_idle_timeout, None);
        let plain = server_config(
            &flags(&[]),
            &ServerSection::default(),
            "0.0.0.0:0",
            AuthMode::Off,
        );
        assert_eq!(plain.allowed_hosts, None);
        assert_eq!(
            plain.session_idle_timeout,
            Some(DEFAULT_SESSION_IDLE_TIMEOUT)
        );
        assert!(!plain.client_hosted_tasks);
    }
}

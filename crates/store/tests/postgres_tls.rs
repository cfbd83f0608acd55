//! TLS to PostgreSQL: a throwaway server started here with `ssl = on` and a certificate
//! from a CA made here, and what each `sslmode` of the URL does with it. PostgreSQL's
//! binaries come from PATH or Debian's /usr/lib/postgresql/*/bin; without them the
//! test is skipped with a notice, except under CI, where it fails.
//!
//! The certificates are made with rcgen (in memory, no external program); as root the
//! server runs as the `postgres` user, as scripts/pg-test-cluster.sh does.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use mcp_tasks_store::{PgStore, SessionRecord, SessionStore, StoreError};
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A CA made for the test: its certificate (PEM) and what signs with it.
struct TestCa {
    pem: String,
    issuer: Issuer<'static, KeyPair>,
}

impl TestCa {
    fn new(name: &str) -> TestCa {
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, name);
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let pem = params.self_signed(&key).unwrap().pem();
        TestCa {
            pem,
            issuer: Issuer::new(params, key),
        }
    }

    /// A server certificate for `names` and its private key, both PEM.
    fn server_cert(&self, names: &[&str]) -> (String, String) {
        let key = KeyPair::generate().unwrap();
        let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        let mut params = CertificateParams::new(names).unwrap();
        params
            .distinguished_name
            .push(DnType::CommonName, "mcp-tasks test server");
        let cert = params.signed_by(&key, &self.issuer).unwrap();
        (cert.pem(), key.serialize_pem())
    }
}

/// PostgreSQL's bin folder, or `None` (after a notice) when it is not installed and
/// this is not CI.
fn postgres_bin() -> Option<PathBuf> {
    let on_path = std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .find(|dir| dir.join("initdb").is_file() && dir.join("pg_ctl").is_file())
    });
    let debian = || {
        let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
            .ok()?
            .filter_map(|entry| {
                let entry = entry.ok()?;
                let version = entry.file_name().to_str()?.parse::<u32>().ok()?;
                let bin = entry.path().join("bin");
                bin.join("initdb").is_file().then_some((version, bin))
            })
            .collect();
        found.sort();
        found.pop().map(|(_, bin)| bin)
    };
    let bin = on_path.or_else(debian);
    if bin.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "PostgreSQL (initdb, pg_ctl) is not installed, and CI is set: the TLS test must \
             run in CI (scripts/pg-test-cluster.sh start installs it)"
        );
        eprintln!("PostgreSQL TLS test skipped: initdb and pg_ctl not found");
    }
    bin
}

/// Whether this process runs as root (PostgreSQL then runs as `postgres`).
fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|out| String::from_utf8_lossy(&out.stdout).trim() == "0")
        .unwrap_or(false)
}

/// How to run PostgreSQL's programs on one data folder: as `postgres` when root.
struct Server {
    bin: PathBuf,
    data: PathBuf,
    as_postgres: bool,
}

impl Server {
    /// `program` of PostgreSQL's bin folder with `args`, as the cluster's owner.
    fn command(&self, program: &str, args: &[&str]) -> Command {
        let program = self.bin.join(program);
        let mut command = if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(program);
            c
        } else {
            Command::new(program)
        };
        // From /, which the owner can always enter (every path given is absolute).
        command.args(args).current_dir("/");
        command
    }

    /// `pg_ctl -D DATA` with `args`.
    fn pg_ctl(&self, args: &[&str]) -> Output {
        let mut all = vec!["-D", path_str(&self.data)];
        all.extend_from_slice(args);
        self.command("pg_ctl", &all).output().unwrap()
    }
}

/// A throwaway TLS-enabled cluster in a temporary folder, stopped when dropped.
struct TlsCluster {
    server: Server,
    port: u16,
    // Removed once the server stopped (fields drop after `drop`).
    _dir: tempfile::TempDir,
}

impl TlsCluster {
    /// Creates and starts a cluster on 127.0.0.1 serving TLS with `cert` and `key` (PEM).
    fn start(bin: PathBuf, cert: &str, key: &str) -> TlsCluster {
        let as_postgres = is_root();
        // As root, a folder the postgres user can reach (TMPDIR may be under /root).
        let dir = if as_postgres {
            tempfile::Builder::new()
                .prefix("mcp-tasks-pg-tls")
                .tempdir_in("/tmp")
        } else {
            tempfile::tempdir()
        }
        .unwrap();
        if as_postgres {
            run(Command::new("chown").arg("postgres").arg(dir.path()));
        }
        let server = Server {
            bin,
            data: dir.path().join("data"),
            as_postgres,
        };
        let data = &server.data;
        run(&mut server.command(
            "initdb",
            &[
                "-D",
                path_str(data),
                "-U",
                "postgres",
                "--auth=trust",
                "--encoding=UTF8",
                "--locale=C.UTF-8",
            ],
        ));
        write_private(&data.join("server.crt"), cert);
        write_private(&data.join("server.key"), key);
        let conf = std::fs::read_to_string(data.join("postgresql.conf")).unwrap();
        std::fs::write(
            data.join("postgresql.conf"),
            format!(
                "{conf}\n# mcp-tasks TLS test\nlisten_addresses = '127.0.0.1'\n\
                 unix_socket_directories = ''\nssl = on\nssl_cert_file = 'server.crt'\n\
                 ssl_key_file = 'server.key'\nfsync = off\n"
            ),
        )
        .unwrap();
        if as_postgres {
            // The key must belong to the server's user (and be private to it).
            run(Command::new("chown").args(["-R", "postgres"]).arg(data));
        }
        // PostgreSQL cannot take a bound socket: pick a free port, and pick again in the
        // rare case another process took it before the server bound it.
        let log = dir.path().join("log");
        for _ in 0..5 {
            let port = std::net::TcpListener::bind("127.0.0.1:0")
                .unwrap()
                .local_addr()
                .unwrap()
                .port();
            let started = server.pg_ctl(&[
                "-l",
                path_str(&log),
                "-o",
                &format!("-p {port}"),
                "-w",
                "-t",
                "60",
                "start",
            ]);
            if started.status.success() {
                return TlsCluster {
                    server,
                    port,
                    _dir: dir,
                };
            }
            let log_text = std::fs::read_to_string(&log).unwrap_or_default();
            assert!(
                log_text.contains("could not bind"),
                "pg_ctl start failed: {}\n{log_text}",
                String::from_utf8_lossy(&started.stderr)
            );
        }
        panic!("no free port for the TLS test server after 5 attempts");
    }

    /// The URL of the `postgres` database on `host`, with `query` appended.
    fn url(&self, host: &str, query: &str) -> String {
        format!("postgres://postgres@{host}:{}/postgres{query}", self.port)
    }
}

impl Drop for TlsCluster {
    fn drop(&mut self) {
        let stopped = self.server.pg_ctl(&["-m", "immediate", "-w", "stop"]);
        if !stopped.status.success() {
            eprintln!(
                "could not stop the TLS test server: {}",
                String::from_utf8_lossy(&stopped.stderr)
            );
        }
    }
}

/// Runs `command`, failing the test with its output when it fails.
fn run(command: &mut Command) {
    let out = command.output().unwrap();
    assert!(
        out.status.success(),
        "{command:?} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn path_str(path: &Path) -> &str {
    path.to_str().expect("a UTF-8 temporary path")
}

/// Writes `text` to a new file only its owner may read (a private key must be).
fn write_private(path: &Path, text: &str) {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .unwrap();
    file.write_all(text.as_bytes()).unwrap();
}

/// Whether the store's connections use TLS, as the server sees it.
async fn uses_tls(store: &PgStore) -> bool {
    sqlx::query_scalar("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()")
        .fetch_one(store.pool())
        .await
        .unwrap()
}

/// A store operation through `store`: a session saved and read back.
async fn round_trip(store: &PgStore) {
    let session = SessionRecord {
        id: format!("tls-{}", mcp_tasks_protocol::TaskId::generate()),
        principal: "alice".to_string(),
        authenticated: false,
        protocol_version: "2025-11-25".to_string(),
        client_capabilities: serde_json::json!({}),
        created_at: chrono::DateTime::from_timestamp_millis(1_000).unwrap(),
    };
    store.save_session(&session).await.unwrap();
    assert_eq!(
        store.load_session(&session.id).await.unwrap(),
        Some(session)
    );
}

/// The error of opening `url`, which must fail.
async fn refused(url: &str) -> StoreError {
    match PgStore::open(url).await {
        Ok(_) => panic!("{url} connected"),
        Err(err) => err,
    }
}

#[tokio::test]
async fn each_sslmode_does_what_libpq_does_against_a_tls_server() {
    let Some(bin) = postgres_bin() else {
        return;
    };
    let ca = TestCa::new("mcp-tasks test CA");
    // The certificate names the address only: "localhost" is a name it does not hold.
    let (cert, key) = ca.server_cert(&["127.0.0.1"]);
    let cluster = TlsCluster::start(bin, &cert, &key);
    let files = tempfile::tempdir().unwrap();
    let right_ca = files.path().join("ca.pem");
    let wrong_ca = files.path().join("other-ca.pem");
    std::fs::write(&right_ca, &ca.pem).unwrap();
    std::fs::write(&wrong_ca, TestCa::new("another CA").pem).unwrap();
    let (right_ca, wrong_ca) = (path_str(&right_ca), path_str(&wrong_ca));

    // verify-full with the CA that signed the certificate: TLS, and the store works.
    let url = cluster.url(
        "127.0.0.1",
        &format!("?sslmode=verify-full&sslrootcert={right_ca}"),
    );
    let store = PgStore::open(&url).await.unwrap();
    assert!(uses_tls(&store).await, "verify-full connected without TLS");
    round_trip(&store).await;
    drop(store);

    // Another CA: refused, saying it is the certificate, and not as a passing outage.
    let err = refused(&cluster.url(
        "127.0.0.1",
        &format!("?sslmode=verify-full&sslrootcert={wrong_ca}"),
    ))
    .await;
    assert!(matches!(err, StoreError::Backend(_)), "{err:?}");
    let text = err.to_string();
    assert!(
        text.contains("TLS certificate verification failed"),
        "{text}"
    );
    assert!(text.contains("sslrootcert"), "{text}");

    // No sslrootcert: the built-in roots do not hold the test CA.
    let err = refused(&cluster.url("127.0.0.1", "?sslmode=verify-full")).await;
    assert!(
        err.to_string()
            .contains("TLS certificate verification failed"),
        "{err}"
    );

    // verify-full checks the host name: the certificate does not hold "localhost".
    let err = refused(&cluster.url(
        "localhost",
        &format!("?sslmode=verify-full&sslrootcert={right_ca}"),
    ))
    .await;
    assert!(err.to_string().contains("does not name the host"), "{err}");

    // verify-ca checks the CA (and, with sqlx 0.8, the host name too: docs/storage.md).
    let store = PgStore::open(&cluster.url(
        "127.0.0.1",
        &format!("?sslmode=verify-ca&sslrootcert={right_ca}"),
    ))
    .await
    .unwrap();
    assert!(uses_tls(&store).await, "verify-ca connected without TLS");
    drop(store);
    let err = refused(&cluster.url(
        "127.0.0.1",
        &format!("?sslmode=verify-ca&sslrootcert={wrong_ca}"),
    ))
    .await;
    assert!(
        err.to_string()
            .contains("TLS certificate verification failed"),
        "{err}"
    );

    // require: TLS without checking the certificate.
    let store = PgStore::open(&cluster.url("127.0.0.1", "?sslmode=require"))
        .await
        .unwrap();
    assert!(uses_tls(&store).await, "require connected without TLS");
    round_trip(&store).await;
    drop(store);

    // prefer (the default): TLS when the server offers it.
    let store = PgStore::open(&cluster.url("127.0.0.1", "")).await.unwrap();
    assert!(uses_tls(&store).await, "the default did not use TLS");
    drop(store);

    // disable: no TLS though the server offers it.
    let store = PgStore::open(&cluster.url("127.0.0.1", "?sslmode=disable"))
        .await
        .unwrap();
    assert!(!uses_tls(&store).await, "disable connected with TLS");
}

#[tokio::test]
async fn an_unknown_sslmode_is_refused_with_the_valid_ones() {
    // Nothing listens on port 1: the URL is refused before any connection.
    let err = PgStore::open("postgres://app@127.0.0.1:1/db?sslmode=verify_full")
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::InvalidUrl(_)), "{err:?}");
    let text = err.to_string();
    assert!(
        text.contains("sslmode=verify_full is not a TLS mode"),
        "{text}"
    );
    assert!(text.contains("verify-full"), "{text}");
}

#[tokio::test]
async fn an_unreadable_sslrootcert_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-ca.pem");
    let url = format!(
        "postgres://app@127.0.0.1:1/db?sslmode=verify-full&sslrootcert={}",
        missing.display()
    );
    let err = PgStore::open(&url).await.unwrap_err();
    assert!(matches!(err, StoreError::InvalidUrl(_)), "{err:?}");
    let text = err.to_string();
    assert!(
        text.contains(&format!("sslrootcert: cannot read {}", missing.display())),
        "{text}"
    );
}

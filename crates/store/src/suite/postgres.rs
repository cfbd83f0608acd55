//! PostgreSQL test plumbing (features `test-suite` and `postgres`): the server comes
//! from [`TEST_URL_VAR`], and each test gets a schema of its own, dropped afterwards.

use crate::postgres::PgStore;
use crate::TaskStore;
use mcp_tasks_protocol::TaskId;
use sqlx::{Connection, PgConnection};
use std::io::Write;
use std::sync::{Arc, Once};

/// The environment variable naming the test server, for example
/// `postgres://postgres@127.0.0.1:55432/mcp_tasks_test` (what
/// `scripts/pg-test-cluster.sh start` prints).
pub const TEST_URL_VAR: &str = "MCP_TASKS_TEST_PG_URL";

/// The test server's URL. When it is not set, prints a skip notice and returns `None`,
/// except under CI (the `CI` variable is set), where a silently skipped backend would
/// hide failures: then it panics.
pub fn test_url() -> Option<String> {
    match std::env::var(TEST_URL_VAR) {
        Ok(url) if !url.is_empty() => Some(url),
        _ if std::env::var_os("CI").is_some() => panic!(
            "{TEST_URL_VAR} is not set, and CI is: the PostgreSQL tests must run in CI \
             (scripts/pg-test-cluster.sh start prints a URL to use)"
        ),
        _ => {
            // Once per test binary, and past the harness's output capture, so that the
            // skip is seen in a normal run.
            static NOTICE: Once = Once::new();
            NOTICE.call_once(|| {
                let _ = writeln!(
                    std::io::stderr(),
                    "PostgreSQL tests skipped: {TEST_URL_VAR} is not set \
                     (scripts/pg-test-cluster.sh start prints a URL to use)"
                );
            });
            None
        }
    }
}

/// A fresh schema on the test server that is dropped (with everything in it) when
/// this value is dropped.
#[derive(Debug)]
pub struct TestSchema {
    server: String,
    name: String,
    url: String,
}

impl TestSchema {
    /// Creates a schema with a random name on the server at `server`.
    ///
    /// # Panics
    /// When the server cannot be reached: this is test code.
    pub async fn create(server: &str) -> Self {
        let name = format!("t_{}", TaskId::generate());
        let mut conn = PgConnection::connect(server)
            .await
            .unwrap_or_else(|e| panic!("cannot connect to {TEST_URL_VAR}: {e}"));
        sqlx::query(&format!("CREATE SCHEMA {name}"))
            .execute(&mut conn)
            .await
            .expect("CREATE SCHEMA");
        let _ = conn.close().await;
        let separator = if server.contains('?') { '&' } else { '?' };
        let url = format!("{server}{separator}options=-c%20search_path%3D{name}");
        Self {
            server: server.to_string(),
            name,
            url,
        }
    }

    /// A URL whose connections use this schema.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The schema's name.
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl Drop for TestSchema {
    fn drop(&mut self) {
        let (server, name) = (self.server.clone(), self.name.clone());
        // Drop cannot await, and the test's runtime may be shutting down: use a thread
        // with a runtime of its own. Best effort; the cluster is disposable anyway.
        let dropped = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .ok()?;
            runtime.block_on(async {
                let mut conn = PgConnection::connect(&server).await.ok()?;
                sqlx::query(&format!("DROP SCHEMA IF EXISTS {name} CASCADE"))
                    .execute(&mut conn)
                    .await
                    .ok()?;
                conn.close().await.ok()
            })
        })
        .join();
        if !matches!(dropped, Ok(Some(()))) {
            eprintln!("could not drop test schema {}", self.name);
        }
    }
}

/// A store in a fresh schema, with the schema (dropped once the case ended), or `None`
/// (after a skip notice) without a test server: the `$make` of `store_suite!` for
/// PostgreSQL.
pub async fn fresh_store() -> Option<(Arc<dyn TaskStore>, TestSchema)> {
    let server = test_url()?;
    let schema = TestSchema::create(&server).await;
    let store = PgStore::open(schema.url())
        .await
        .unwrap_or_else(|e| panic!("opening a store in schema {}: {e}", schema.name()));
    Some((Arc::new(store), schema))
}

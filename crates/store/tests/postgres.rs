//! The parity suite on PostgreSQL, each case in a fresh schema of the server named by
//! `MCP_TASKS_TEST_PG_URL` (skipped with a notice when it is unset, failing under CI),
//! plus what only a database shared by several replicas promises.

#![allow(clippy::unwrap_used)]

use mcp_tasks_protocol::TaskId;
use mcp_tasks_store::suite::postgres::{fresh_store, test_url, TestSchema};
use mcp_tasks_store::suite::{at, record};
use mcp_tasks_store::{
    Change, ChangeFeed, ClaimExpiredParams, PgStore, SessionRecord, SessionStore, StoreError,
    TaskRecord, TaskStore,
};
use std::collections::HashSet;
use std::time::Duration;

mcp_tasks_store::store_suite!(fresh_store);

/// The next event of `feed`, failing after ten seconds.
async fn next(feed: &mut ChangeFeed) -> Option<Change> {
    tokio::time::timeout(Duration::from_secs(10), feed.recv())
        .await
        .unwrap()
}

/// `n` stores on one fresh schema, opened at the same time: replicas starting together.
async fn replicas(n: usize) -> Option<(Vec<PgStore>, TestSchema)> {
    let server = test_url()?;
    let schema = TestSchema::create(&server).await;
    let opening: Vec<_> = (0..n)
        .map(|_| {
            let url = schema.url().to_string();
            tokio::spawn(async move { PgStore::open(&url).await })
        })
        .collect();
    let mut stores = Vec::new();
    for handle in opening {
        stores.push(handle.await.unwrap().unwrap());
    }
    Some((stores, schema))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn replicas_starting_together_migrate_once() {
    let Some((stores, schema)) = replicas(4).await else {
        return;
    };
    let pool = stores[0].pool();
    let applied: Vec<i64> =
        sqlx::query_scalar("SELECT version FROM _sqlx_migrations ORDER BY version")
            .fetch_all(pool)
            .await
            .unwrap();
    // Each migration of the source folder once, in order (read from the folder, so a
    // new migration needs no change here).
    let folder = concat!(env!("CARGO_MANIFEST_DIR"), "/src/postgres/migrations");
    let mut expected: Vec<i64> = std::fs::read_dir(folder)
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().into_string().unwrap();
            name.split('_').next().and_then(|n| n.parse().ok())
        })
        .collect();
    expected.sort_unstable();
    assert_eq!(applied, expected);
    // Everything went to the schema named in the URL.
    let current: String = sqlx::query_scalar("SELECT current_schema()")
        .fetch_one(pool)
        .await
        .unwrap();
    assert_eq!(current, schema.name());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_write_on_one_replica_wakes_a_subscriber_on_another() {
    let Some((stores, _schema)) = replicas(2).await else {
        return;
    };
    let mut feed = stores[0].subscribe_changes().await.unwrap().unwrap();
    let rec = record("alice", None, at(0));
    stores[1].create(&rec).await.unwrap();
    let event = next(&mut feed).await;
    assert_eq!(
        event,
        Some(Change::TaskVersion(rec.id.clone(), rec.version))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn stores_in_other_schemas_do_not_hear_each_other() {
    let (Some((a, _sa)), Some((b, _sb))) = (replicas(1).await, replicas(1).await) else {
        return;
    };
    let mut feed = a[0].subscribe_changes().await.unwrap().unwrap();
    b[0].create(&record("alice", None, at(0))).await.unwrap();
    let mine = record("alice", None, at(1));
    a[0].create(&mine).await.unwrap();
    let event = next(&mut feed).await;
    assert_eq!(event, Some(Change::TaskVersion(mine.id, mine.version)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn replicas_rescuing_expired_leases_split_them() {
    let Some((stores, _schema)) = replicas(3).await else {
        return;
    };
    let mut expired = HashSet::new();
    for i in 0..90 {
        let rec = TaskRecord {
            runner: Some("dead".to_string()),
            lease_until: Some(at(100)),
            lease_generation: 1,
            ..record("alice", None, at(i))
        };
        stores[0].create(&rec).await.unwrap();
        expired.insert(rec.id);
    }
    let rescuers: Vec<_> = stores
        .iter()
        .enumerate()
        .map(|(n, store)| {
            let store = store.clone();
            tokio::spawn(async move {
                let params = ClaimExpiredParams {
                    runner: format!("replica-{n}"),
                    until: at(60_000),
                    now: at(1_000),
                    limit: 5,
                };
                let mut mine: Vec<TaskId> = Vec::new();
                loop {
                    let batch = store.claim_expired_leases(&params).await.unwrap();
                    if batch.is_empty() {
                        return mine;
                    }
                    mine.extend(batch.into_iter().map(|r| r.id));
                }
            })
        })
        .collect();
    let mut claimed = Vec::new();
    for rescuer in rescuers {
        claimed.extend(rescuer.await.unwrap());
    }
    assert_eq!(claimed.len(), expired.len(), "a task was rescued twice");
    assert_eq!(claimed.into_iter().collect::<HashSet<_>>(), expired);
}

#[tokio::test]
async fn an_unreachable_server_is_unavailable() {
    // Port 1 on loopback: nothing listens there, so the connection is refused at once,
    // and the error says so (not merely that a pool timed out).
    let err = PgStore::open("postgres://nobody@127.0.0.1:1/none")
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::Unavailable(_)), "{err:?}");
    assert!(err.to_string().contains("refused"), "{err}");
}

#[tokio::test]
async fn open_by_url_accepts_both_schemes() {
    let Some(server) = test_url() else {
        return;
    };
    let schema = TestSchema::create(&server).await;
    let rest = schema
        .url()
        .split_once("://")
        .map(|(_, rest)| rest.to_string())
        .unwrap();
    for url in [format!("postgres://{rest}"), format!("postgresql://{rest}")] {
        let store = mcp_tasks_store::open(&url).await.unwrap();
        assert!(store.supports_notify());
        let rec = record("alice", None, at(0));
        store.create(&rec).await.unwrap();
        assert_eq!(store.get(&rec.id, at(1)).await.unwrap(), Some(rec));
    }
}

#[tokio::test]
async fn a_missing_database_is_reported_by_name() {
    let Some(server) = test_url() else {
        return;
    };
    let (base, _query) = server.split_once('?').unwrap_or((&server, ""));
    let (host, _database) = base.rsplit_once('/').unwrap();
    let err = PgStore::open(&format!("{host}/mcp_tasks_no_such_db"))
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::Backend(_)), "{err:?}");
    assert!(err.to_string().contains("mcp_tasks_no_such_db"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_lost_listening_connection_is_reported_and_replaced() {
    let Some((stores, _schema)) = replicas(1).await else {
        return;
    };
    let store = &stores[0];
    let mut feed = store.subscribe_changes().await.unwrap().unwrap();

    // The server drops the listening session, as a failover or restart would.
    let channel: String = sqlx::query_scalar("SELECT 'mcp_tasks_' || md5(current_schema())")
        .fetch_one(store.pool())
        .await
        .unwrap();
    let killed: Vec<bool> = sqlx::query_scalar(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query = $1",
    )
    .bind(format!("LISTEN \"{channel}\""))
    .fetch_all(store.pool())
    .await
    .unwrap();
    assert_eq!(killed, [true]);

    assert_eq!(next(&mut feed).await, Some(Change::Missed));
    // Listening again: later changes arrive.
    let rec = record("alice", None, at(0));
    store.create(&rec).await.unwrap();
    assert_eq!(
        next(&mut feed).await,
        Some(Change::TaskVersion(rec.id, rec.version))
    );
}

/// A stored session opened at `created_at`.
fn session(id: &str, created_at: i64) -> SessionRecord {
    SessionRecord {
        id: id.to_string(),
        principal: format!("session:{id}"),
        authenticated: false,
        protocol_version: "2025-11-25".to_string(),
        client_capabilities: serde_json::json!({"elicitation": {}}),
        created_at: at(created_at),
    }
}

/// Sessions whose clients left without DELETE are deleted once idle; a session a
/// replica keeps (its client active or its stream open) stays, whichever replica
/// sweeps; keeping never moves the time of last use backwards.
#[tokio::test]
async fn idle_sessions_are_deleted_and_kept_ones_stay() {
    let Some((stores, _schema)) = replicas(2).await else {
        return;
    };
    let (a, b) = (&stores[0], &stores[1]);
    for s in [session("left", 0), session("kept", 0), session("late", 500)] {
        a.save_session(&s).await.unwrap();
    }
    // Replica A still holds "kept" at 900 (and an id it never stored: ignored).
    a.keep_sessions(&["kept".to_string(), "unknown".to_string()], at(900))
        .await
        .unwrap();
    // An older keep from a slower replica does not undo it.
    b.keep_sessions(&["kept".to_string()], at(100))
        .await
        .unwrap();

    // Replica B sweeps what was idle since 400: only "left".
    assert_eq!(b.delete_idle_sessions(at(400)).await.unwrap(), 1);
    assert_eq!(b.load_session("left").await.unwrap(), None);
    assert_eq!(
        b.load_session("kept").await.unwrap(),
        Some(session("kept", 0))
    );
    assert_eq!(
        b.load_session("late").await.unwrap(),
        Some(session("late", 500))
    );
    // Storing a session again (a new initialize of the same id) counts as use.
    a.save_session(&session("late", 800)).await.unwrap();
    assert_eq!(a.delete_idle_sessions(at(700)).await.unwrap(), 0);
    assert_eq!(a.delete_idle_sessions(at(900)).await.unwrap(), 2);
    assert_eq!(a.load_session("kept").await.unwrap(), None);
    assert_eq!(a.delete_idle_sessions(at(10_000)).await.unwrap(), 0);
}

/// A replica's cached read never serves a record older than another replica's change
/// that committed before the read began: a status change, each of many changes while
/// the reader keeps the cache busy, and a takeover of an expired lease.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cached_read_shows_the_other_replicas_change_once_committed() {
    use mcp_tasks_protocol::TaskStatus;
    use mcp_tasks_store::suite::{ok_outcome, to_status};
    let Some((stores, _schema)) = replicas(2).await else {
        return;
    };
    let (a, b) = (&stores[0], &stores[1]);
    let now = at(1_000_000);
    for round in 0..20 {
        let task = record("alice", None, at(round));
        a.create(&task).await.unwrap();
        for _ in 0..2 {
            let seen = a.get(&task.id, now).await.unwrap().unwrap();
            assert_eq!(seen.status, TaskStatus::Working);
        }
        b.transition(
            &to_status(&task.id, TaskStatus::Completed, at(round + 1)).outcome(ok_outcome("done")),
        )
        .await
        .unwrap();
        let seen = a.get(&task.id, now).await.unwrap().unwrap();
        assert_eq!(seen.status, TaskStatus::Completed, "round {round}");
        assert!(seen.outcome.is_some());
    }

    let task = record("alice", None, at(0));
    a.create(&task).await.unwrap();
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let busy = {
        let (a, id, stop) = (a.clone(), task.id.clone(), std::sync::Arc::clone(&stop));
        tokio::spawn(async move {
            let mut reads = 0u64;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) && reads < 1_000_000 {
                a.get(&id, now).await.unwrap();
                reads += 1;
            }
        })
    };
    for step in 1..=100 {
        let change = to_status(&task.id, TaskStatus::Working, at(step)).message(format!("{step}"));
        let written = b.transition(&change).await.unwrap();
        let read = a.get(&task.id, now).await.unwrap().unwrap();
        assert!(
            read.version >= written.version,
            "step {step}: read version {} after version {} committed",
            read.version,
            written.version
        );
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    busy.await.unwrap();

    // A takeover moves no version: the lease's generation and runner tell it.
    let mut leased = record("alice", None, at(0));
    leased.lease_until = Some(at(10));
    a.create(&leased).await.unwrap();
    a.get(&leased.id, at(20)).await.unwrap().unwrap();
    a.get(&leased.id, at(20)).await.unwrap().unwrap();
    let taken = b
        .claim_expired_leases(&ClaimExpiredParams {
            runner: "other".into(),
            until: at(100_000),
            now: at(20),
            limit: 100,
        })
        .await
        .unwrap();
    assert!(taken.iter().any(|r| r.id == leased.id), "{taken:?}");
    let seen = a.get(&leased.id, at(20)).await.unwrap().unwrap();
    assert_eq!(seen.runner.as_deref(), Some("other"));
    assert_eq!(seen.lease_until, Some(at(100_000)));
}

//! Cached reads on one SQLite file written by several processes: a store's `get` never
//! serves a cached record once another process's change of the task has committed.
//! Two stores opened apart on one file are what two processes are to SQLite (each its
//! own connections, its own cache, one shared change board); one test also runs the
//! other writer as a real second process (this test binary, re-run as a child).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use mcp_tasks_protocol::{TaskId, TaskStatus};
use mcp_tasks_store::suite::{at, ok_outcome, record, to_status};
use mcp_tasks_store::{ClaimExpiredParams, SqliteStore, TaskStore};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Read "now" in these tests: after every time the records use.
fn now() -> chrono::DateTime<chrono::Utc> {
    at(1_000_000)
}

async fn two_stores() -> (tempfile::TempDir, SqliteStore, SqliteStore) {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("shared.db").display());
    let a = SqliteStore::open(&url).await.unwrap();
    let b = SqliteStore::open(&url).await.unwrap();
    (dir, a, b)
}

async fn status_in(store: &SqliteStore, id: &TaskId) -> TaskStatus {
    store.get(id, now()).await.unwrap().unwrap().status
}

#[tokio::test]
async fn a_cached_read_shows_the_other_stores_change_once_committed() {
    let (_dir, a, b) = two_stores().await;
    for round in 0..50 {
        let task = record("alice", None, at(round));
        a.create(&task).await.unwrap();
        // Cached by the second read, served by the third.
        for _ in 0..3 {
            assert_eq!(status_in(&a, &task.id).await, TaskStatus::Working);
        }
        let (status, outcome) = if round % 2 == 0 {
            (TaskStatus::Cancelled, None)
        } else {
            (TaskStatus::Completed, Some(ok_outcome("done")))
        };
        let mut change = to_status(&task.id, status, at(round + 1));
        if let Some(outcome) = outcome {
            change = change.outcome(outcome);
        }
        b.transition(&change).await.unwrap();
        assert_eq!(status_in(&a, &task.id).await, status, "round {round}");
        let seen = a.get(&task.id, now()).await.unwrap().unwrap();
        assert_eq!(seen.outcome.is_some(), status == TaskStatus::Completed);
    }
}

/// A reader hammering one task while the other store changes it: every read that
/// begins after a change returned shows that change or a later one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_read_begun_after_a_commit_is_older_than_it() {
    let (_dir, a, b) = two_stores().await;
    let task = record("alice", None, at(0));
    a.create(&task).await.unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    // Background reads keep the cache busy with every version as it comes and goes.
    let busy = {
        let (a, id, stop) = (a.clone(), task.id.clone(), Arc::clone(&stop));
        tokio::spawn(async move {
            let mut reads = 0u64;
            while !stop.load(Ordering::Relaxed) && reads < 1_000_000 {
                a.get(&id, now()).await.unwrap();
                reads += 1;
                tokio::task::yield_now().await;
            }
        })
    };
    for step in 1..=200 {
        let written = b
            .transition(
                &to_status(&task.id, TaskStatus::Working, at(step)).message(format!("step {step}")),
            )
            .await
            .unwrap();
        let read = a.get(&task.id, now()).await.unwrap().unwrap();
        assert!(
            read.version >= written.version,
            "step {step}: read version {} after version {} committed",
            read.version,
            written.version
        );
    }
    stop.store(true, Ordering::Relaxed);
    busy.await.unwrap();
}

/// Writes whose tasks are not known up front (a takeover of expired leases, orphans
/// failed at start, a sweep of expired tasks) invalidate the other store's cached reads
/// as well.
#[tokio::test]
async fn batch_changes_of_the_other_store_are_seen() {
    let (_dir, a, b) = two_stores().await;
    let mut leased = record("alice", None, at(0));
    leased.lease_until = Some(at(10));
    a.create(&leased).await.unwrap();
    let mut expiring = record("alice", None, at(0));
    expiring.ttl = Some(Duration::from_secs(60));
    expiring.expires_at = Some(at(60_000));
    a.create(&expiring).await.unwrap();
    let orphan = record("alice", None, at(0));
    a.create(&orphan).await.unwrap();
    for id in [&leased.id, &expiring.id, &orphan.id] {
        for _ in 0..2 {
            a.get(id, at(20)).await.unwrap().unwrap();
        }
    }

    let taken = b
        .claim_expired_leases(&ClaimExpiredParams {
            runner: "other".into(),
            until: at(100_000),
            now: at(20),
            limit: 10,
        })
        .await
        .unwrap();
    assert!(taken.iter().any(|r| r.id == leased.id), "{taken:?}");
    let seen = a.get(&leased.id, at(20)).await.unwrap().unwrap();
    assert_eq!(seen.runner.as_deref(), Some("other"));

    let failed = b
        .fail_orphaned("other", "lost", &ok_outcome("x"), at(30))
        .await
        .unwrap();
    assert!(failed >= 1);
    assert_eq!(
        a.get(&orphan.id, at(30)).await.unwrap().unwrap().status,
        TaskStatus::Failed
    );

    // An expired record reads as gone from the cache too, before and after the sweep.
    assert!(a.get(&expiring.id, at(59_999)).await.unwrap().is_some());
    assert!(a.get(&expiring.id, at(60_000)).await.unwrap().is_none());
    b.delete_expired(at(60_000), 10).await.unwrap();
    assert!(a.get(&expiring.id, at(59_999)).await.unwrap().is_none());
}

/// The environment variables of the child run of [`child_cancels_a_task`].
const CHILD_URL: &str = "MCP_TASKS_TEST_CHILD_SQLITE_URL";
const CHILD_TASK: &str = "MCP_TASKS_TEST_CHILD_TASK";
/// The longest the child run may take (only a failing test waits it out).
const CHILD_LIMIT: Duration = Duration::from_secs(60);

/// Does nothing in a normal run; run as the child of
/// [`a_cached_read_shows_a_change_made_by_another_process`], cancels the task it is
/// given in the database it is given, then exits.
#[tokio::test]
async fn child_cancels_a_task() {
    let (Ok(url), Ok(id)) = (std::env::var(CHILD_URL), std::env::var(CHILD_TASK)) else {
        return;
    };
    let store = SqliteStore::open(&url).await.unwrap();
    let id = TaskId::from_string(id);
    store
        .transition(&to_status(&id, TaskStatus::Cancelled, at(5)))
        .await
        .unwrap();
}

#[tokio::test]
async fn a_cached_read_shows_a_change_made_by_another_process() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}", dir.path().join("shared.db").display());
    let a = SqliteStore::open(&url).await.unwrap();
    let this_test = std::env::current_exe().unwrap();
    for round in 0..3 {
        let task = record("alice", None, at(round));
        a.create(&task).await.unwrap();
        for _ in 0..3 {
            assert_eq!(status_in(&a, &task.id).await, TaskStatus::Working);
        }
        // The child's exit is the signal (tokio waits on it), bounded in case it hangs;
        // a child left behind by a failing test is killed when its handle drops.
        let mut child = tokio::process::Command::new(&this_test)
            .args(["child_cancels_a_task", "--exact", "--test-threads=1"])
            .env(CHILD_URL, &url)
            .env(CHILD_TASK, task.id.as_str())
            .stdout(std::process::Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let exit = tokio::time::timeout(CHILD_LIMIT, child.wait())
            .await
            .unwrap_or_else(|_| panic!("the child process did not finish in {CHILD_LIMIT:?}"))
            .unwrap();
        assert!(exit.success(), "the child process failed: {exit}");
        assert_eq!(
            status_in(&a, &task.id).await,
            TaskStatus::Cancelled,
            "round {round}: a stale cached read after the other process committed"
        );
    }
}

//! The change feed: backends that promise one report every visible change.

use super::{at, record, to_status};
use crate::change::{Change, ChangeFeed};
use crate::record::{ClaimLeaseParams, RenewLeaseParams, TaskRecord};
use crate::TaskStore;
use mcp_tasks_protocol::{TaskId, TaskStatus};
use std::sync::Arc;
use std::time::Duration;

/// How long an expected event may take (a notification crosses a database server).
const EVENT_WAIT: Duration = Duration::from_secs(10);

/// The next event, failing after [`EVENT_WAIT`].
async fn next(feed: &mut ChangeFeed) -> Change {
    tokio::time::timeout(EVENT_WAIT, feed.recv())
        .await
        .expect("a change event in time")
        .expect("the feed stays open while the store lives")
}

/// A feed exists exactly when `supports_notify` says so. Each subscriber then gets,
/// in order, the id of every create, transition, orphan failure and deletion made
/// after it subscribed, and nothing for lease claims and renewals (the next event after
/// them is the next visible change).
pub async fn change_feed_reports_visible_changes(store: Arc<dyn TaskStore>) {
    let before = record("alice", None, at(0));
    store.create(&before).await.unwrap();

    let feed = store.subscribe_changes().await.unwrap();
    assert_eq!(feed.is_some(), store.supports_notify());
    let Some(mut feed) = feed else {
        return;
    };
    let mut second = store.subscribe_changes().await.unwrap().unwrap();

    let a = record("alice", None, at(1));
    let b = TaskRecord {
        ttl: Some(Duration::from_millis(100)),
        expires_at: Some(at(102)),
        ..record("alice", None, at(2))
    };
    let c = TaskRecord {
        runner: Some("old".to_string()),
        ..record("alice", None, at(3))
    };
    let mut expected: Vec<TaskId> = Vec::new();

    store.create(&a).await.unwrap();
    store.create(&b).await.unwrap();
    expected.extend([a.id.clone(), b.id.clone()]);

    store
        .transition(&to_status(&a.id, TaskStatus::Working, at(10)).message("halfway"))
        .await
        .unwrap();
    expected.push(a.id.clone());

    // Silent: lease bookkeeping is not a visible change.
    let claimed = store
        .claim_lease(&ClaimLeaseParams {
            id: a.id.clone(),
            runner: "r".to_string(),
            until: at(60_000),
            now: at(20),
        })
        .await
        .unwrap();
    store
        .renew_lease(&RenewLeaseParams {
            id: a.id.clone(),
            runner: "r".to_string(),
            generation: claimed.lease_generation,
            until: at(90_000),
            now: at(30),
        })
        .await
        .unwrap();

    store
        .transition(&to_status(&b.id, TaskStatus::InputRequired, at(40)))
        .await
        .unwrap();
    expected.push(b.id.clone());

    // Only `c` is an orphan: `a` is under a live lease, `b` and `before` run here.
    store.create(&c).await.unwrap();
    expected.push(c.id.clone());
    let error = crate::record::Outcome::Error {
        code: -32603,
        message: "lost".to_string(),
        data: None,
    };
    let failed = store
        .fail_orphaned("current", "lost", &error, at(50))
        .await
        .unwrap();
    assert_eq!(failed, 1);
    expected.push(c.id.clone());

    let deleted = store.delete_expired(at(200), 10).await.unwrap();
    let deleted: Vec<TaskId> = deleted.into_iter().map(|e| e.id).collect();
    assert_eq!(deleted, std::slice::from_ref(&b.id));
    expected.push(b.id.clone());

    for feed in [&mut feed, &mut second] {
        let mut got = Vec::new();
        while got.len() < expected.len() {
            match next(feed).await {
                Change::Missed => panic!("unexpected Missed after {got:?}"),
                change => got.extend(change.task_id().cloned()),
            }
        }
        assert_eq!(got, expected);
    }
}

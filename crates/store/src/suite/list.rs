//! Listing: owner and session filters, creation order, keyset pages.

use super::{at, record};
use crate::record::{ListParams, TaskRecord};
use crate::TaskStore;
use std::sync::Arc;

/// Pages through `owner`'s (and `session`'s) records `limit` at a time, checking each
/// page's `has_more` against what is still expected, and returns them all.
async fn page_through(
    store: &dyn TaskStore,
    owner: &str,
    session: Option<&str>,
    limit: usize,
    expected_total: usize,
) -> Vec<TaskRecord> {
    let mut all: Vec<TaskRecord> = Vec::new();
    let mut after = None;
    loop {
        let page = store
            .list(&ListParams {
                owner: owner.to_string(),
                session: session.map(str::to_string),
                after: after.clone(),
                limit,
                now: at(1_000_000),
            })
            .await
            .unwrap();
        assert!(page.records.len() <= limit);
        all.extend(page.records.iter().cloned());
        assert_eq!(
            page.has_more,
            all.len() < expected_total,
            "{owner}/{session:?}: has_more after {} of {expected_total}",
            all.len()
        );
        if !page.has_more {
            return all;
        }
        assert_eq!(page.records.len(), limit, "a page before the last is full");
        let last = page.records.last().unwrap();
        after = Some((last.created_at, last.id.clone()));
    }
}

/// Records of two owners in two sessions (plus none), several sharing a creation
/// time, created out of order: each filter returns exactly its records, ordered by
/// `(created_at, id)`, over keyset pages of 10.
pub async fn list_filters_by_owner_and_session_and_pages_by_keyset(store: Arc<dyn TaskStore>) {
    let mut created = Vec::new();
    for i in 0..25_i64 {
        let owner = if i % 5 == 4 { "bob" } else { "alice" };
        let session = match i % 3 {
            0 => Some("s1"),
            1 => Some("s2"),
            _ => None,
        };
        // Three records per millisecond, so ids break ties.
        created.push(record(owner, session, at(i / 3)));
    }
    // Insert in an order unrelated to creation time.
    for i in (0..created.len()).map(|i| (i * 7) % created.len()) {
        store.create(&created[i]).await.unwrap();
    }

    let filters = [
        ("alice", None),
        ("alice", Some("s1")),
        ("alice", Some("s2")),
        ("bob", None),
        ("bob", Some("s1")),
        ("bob", Some("s3")),
        ("carol", None),
    ];
    for (owner, session) in filters {
        let mut expected: Vec<TaskRecord> = created
            .iter()
            .filter(|r| r.owner == owner && (session.is_none() || r.session.as_deref() == session))
            .cloned()
            .collect();
        expected.sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));

        for limit in [10, 1, expected.len().max(1)] {
            let listed = page_through(&*store, owner, session, limit, expected.len()).await;
            assert_eq!(listed, expected, "{owner}/{session:?} in pages of {limit}");
        }
    }
    assert_eq!(created.iter().filter(|r| r.owner == "alice").count(), 20);
}

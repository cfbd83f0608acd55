//! The board: every owner's tasks (or one's), newest first, filtered, keyset pages.

use super::{at, record};
use crate::record::{TaskQuery, TaskRecord};
use crate::TaskStore;
use mcp_tasks_protocol::{TaskId, TaskStatus};
use serde_json::json;
use std::sync::Arc;

/// When every board query of these cases runs: records expiring at or before it are
/// invisible.
const NOW: i64 = 1_000;

/// A query with no filter and no cursor.
fn all(limit: usize) -> TaskQuery {
    TaskQuery {
        owner: None,
        status: None,
        request_name: None,
        id_prefix: None,
        before: None,
        limit,
        now: at(NOW),
    }
}

/// Pages through `query` `limit` at a time (newest first, each page starting before
/// the last record of the previous one), checking `has_more` and page sizes, and
/// returns every record.
async fn page_through(
    store: &dyn TaskStore,
    query: &TaskQuery,
    expected: usize,
) -> Vec<TaskRecord> {
    let mut seen: Vec<TaskRecord> = Vec::new();
    let mut query = query.clone();
    loop {
        let page = store.query_tasks(&query).await.unwrap();
        assert!(page.records.len() <= query.limit);
        seen.extend(page.records.iter().cloned());
        assert_eq!(
            page.has_more,
            seen.len() < expected,
            "{query:?}: has_more after {} of {expected}",
            seen.len()
        );
        if !page.has_more {
            return seen;
        }
        assert_eq!(
            page.records.len(),
            query.limit,
            "a page before the last is full"
        );
        let last = page.records.last().unwrap();
        query.before = Some((last.created_at, last.id.clone()));
    }
}

/// What `query` must return from `created`, computed here: visible records passing
/// every filter, by `(created_at, id)` descending.
fn expected(created: &[TaskRecord], query: &TaskQuery) -> Vec<TaskRecord> {
    let mut shown: Vec<TaskRecord> = created
        .iter()
        .filter(|r| r.expires_at.is_none_or(|e| e > query.now))
        .filter(|r| query.owner.as_ref().is_none_or(|o| &r.owner == o))
        .filter(|r| query.status.is_none_or(|s| r.status == s))
        .filter(|r| {
            query
                .request_name
                .as_deref()
                .is_none_or(|n| r.request.name().as_deref() == Some(n))
        })
        .filter(|r| {
            query
                .id_prefix
                .as_deref()
                .is_none_or(|p| r.id.as_str().starts_with(p))
        })
        .cloned()
        .collect();
    shown.sort_by(|a, b| (b.created_at, &b.id).cmp(&(a.created_at, &a.id)));
    shown
}

/// Thirty records of three owners in every status, with several request shapes, three
/// per millisecond (ids break ties), some expired, created out of order. Each query
/// (no filter, an owner, a status, a tool name, an id prefix, combinations) returns
/// exactly its visible records, newest first, over keyset pages of 1, 4 and all.
pub async fn query_tasks_filters_and_pages_newest_first(store: Arc<dyn TaskStore>) {
    let owners = ["alice", "bob", "carol"];
    let statuses = [
        TaskStatus::Working,
        TaskStatus::InputRequired,
        TaskStatus::Completed,
        TaskStatus::Failed,
        TaskStatus::Cancelled,
    ];
    let requests = [
        json!({"name": "slow", "arguments": {"n": 3}}),
        json!({"name": "fast"}),
        // A NUL in the arguments must not break a search by name.
        json!({"name": "slow", "arguments": {"text": "a\u{0}b"}}),
        // Names that are not strings never match, not even by their text.
        json!({"name": 5}),
        json!({"name": {"slow": true}}),
        json!({"arguments": {}}),
    ];
    let mut created = Vec::new();
    for i in 0..30_usize {
        let prefix = ["a", "b", "ab"][i % 3];
        let mut rec = TaskRecord {
            id: TaskId::from_string(format!("{prefix}{:02}-{}", i % 7, TaskId::generate())),
            status: statuses[i % 5],
            request: (&requests[i % 6]).into(),
            ..record(owners[(i / 5) % 3], None, at(i as i64 / 3))
        };
        if i % 8 == 1 {
            // Expiring just before NOW, at NOW (both invisible) or just after (visible).
            rec.ttl = Some(std::time::Duration::from_millis(100));
            rec.expires_at = Some(at(NOW + (i as i64 % 3) - 1));
        }
        created.push(rec);
    }
    for i in (0..created.len()).map(|i| (i * 7) % created.len()) {
        store.create(&created[i]).await.unwrap();
    }
    assert!(created.iter().any(|r| r.expires_at == Some(at(NOW - 1))));
    assert!(created.iter().any(|r| r.expires_at == Some(at(NOW + 1))));

    let queries = [
        all(0),
        TaskQuery {
            owner: Some("alice".to_string()),
            ..all(0)
        },
        TaskQuery {
            owner: Some("nobody".to_string()),
            ..all(0)
        },
        TaskQuery {
            status: Some(TaskStatus::Completed),
            ..all(0)
        },
        TaskQuery {
            request_name: Some("slow".to_string()),
            ..all(0)
        },
        TaskQuery {
            request_name: Some("5".to_string()),
            ..all(0)
        },
        TaskQuery {
            id_prefix: Some("ab".to_string()),
            ..all(0)
        },
        TaskQuery {
            id_prefix: Some(String::new()),
            ..all(0)
        },
        TaskQuery {
            owner: Some("bob".to_string()),
            status: Some(TaskStatus::Working),
            ..all(0)
        },
        TaskQuery {
            owner: Some("carol".to_string()),
            request_name: Some("slow".to_string()),
            id_prefix: Some("a".to_string()),
            ..all(0)
        },
    ];
    let mut nonempty = 0;
    for query in queries {
        let want = expected(&created, &query);
        nonempty += usize::from(!want.is_empty());
        for limit in [1, 4, want.len().max(1)] {
            let query = TaskQuery {
                limit,
                ..query.clone()
            };
            let got = page_through(&*store, &query, want.len()).await;
            assert_eq!(got, want, "{query:?}");
            // The count of the same query stops at its limit (the cursor is ignored).
            let counted = store
                .count_tasks(&TaskQuery {
                    before: Some((at(0), TaskId::from_string("zzz"))),
                    ..query.clone()
                })
                .await
                .unwrap();
            assert_eq!(counted, want.len().min(limit) as u64, "count of {query:?}");
        }
    }
    // The cases are not vacuous: every query but two ("nobody", name 5) finds
    // something, and expired records exist to be skipped.
    assert_eq!(nonempty, 8);
    assert!(expected(&created, &all(0)).len() < created.len());
    assert_eq!(
        expected(
            &created,
            &TaskQuery {
                request_name: Some("5".to_string()),
                ..all(0)
            }
        ),
        Vec::<TaskRecord>::new()
    );

    // A page of none still says whether there are more.
    let empty = store.query_tasks(&all(0)).await.unwrap();
    assert!(empty.records.is_empty() && empty.has_more);
}

/// An id prefix is literal text: `_` and `%` match only themselves, not any character.
pub async fn query_tasks_id_prefix_wildcards_are_literal(store: Arc<dyn TaskStore>) {
    let ids = ["t_1", "tx1", "t%2", "tab2", "t\\3", "u_1"];
    for (i, id) in ids.iter().enumerate() {
        let rec = TaskRecord {
            id: TaskId::from_string(*id),
            ..record("alice", None, at(i as i64))
        };
        store.create(&rec).await.unwrap();
    }
    let cases: [(&str, &[&str]); 6] = [
        ("t_", &["t_1"]),
        ("t%", &["t%2"]),
        ("t\\", &["t\\3"]),
        ("_", &[]),
        ("%", &[]),
        ("t", &["t\\3", "tab2", "t%2", "tx1", "t_1"]),
    ];
    for (prefix, want) in cases {
        let page = store
            .query_tasks(&TaskQuery {
                id_prefix: Some(prefix.to_string()),
                ..all(10)
            })
            .await
            .unwrap();
        let got: Vec<&str> = page.records.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(got, want, "prefix {prefix:?}");
        assert!(!page.has_more);
    }
}

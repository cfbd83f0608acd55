//! The parity suite on the SQLite backend (a fresh file per test, and in memory), plus
//! what only a durable backend promises.

#![allow(clippy::unwrap_used)]

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use mcp_tasks_protocol::{TaskId, TaskStatus};
use mcp_tasks_store::suite::{at, base_time, ok_outcome, record, to_status};
use mcp_tasks_store::{
    ListPage, ListParams, Outcome, SqliteStore, StoreError, TaskRecord, TaskStore, TransitionParams,
};
use std::sync::Arc;
use tempfile::TempDir;

/// A store on a file in a temporary directory that lives exactly as long as the store.
#[derive(Debug)]
struct FileStore {
    store: SqliteStore,
    _dir: TempDir,
}

impl FileStore {
    async fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let url = format!("sqlite://{}", dir.path().join("tasks.db").display());
        Self {
            store: SqliteStore::open(&url).await.unwrap(),
            _dir: dir,
        }
    }
}

#[async_trait]
impl TaskStore for FileStore {
    async fn create(&self, record: &TaskRecord) -> Result<(), StoreError> {
        self.store.create(record).await
    }
    async fn get(&self, id: &TaskId, now: DateTime<Utc>) -> Result<Option<TaskRecord>, StoreError> {
        self.store.get(id, now).await
    }
    async fn list(&self, params: &ListParams) -> Result<ListPage, StoreError> {
        self.store.list(params).await
    }
    async fn transition(&self, params: &TransitionParams) -> Result<TaskRecord, StoreError> {
        self.store.transition(params).await
    }
    async fn delete_expired(
        &self,
        now: DateTime<Utc>,
        limit: usize,
    ) -> Result<Vec<TaskId>, StoreError> {
        self.store.delete_expired(now, limit).await
    }
    async fn fail_orphaned(
        &self,
        current_runner: &str,
        status_message: &str,
        error: &Outcome,
        now: DateTime<Utc>,
    ) -> Result<u64, StoreError> {
        self.store
            .fail_orphaned(current_runner, status_message, error, now)
            .await
    }
}

mod file {
    use super::*;

    async fn fresh_store() -> Arc<dyn TaskStore> {
        Arc::new(FileStore::new().await)
    }

    mcp_tasks_store::store_suite!(fresh_store);
}

mod in_memory {
    use super::*;

    mcp_tasks_store::store_suite!(|| async {
        Arc::new(SqliteStore::open("sqlite::memory:").await.unwrap()) as Arc<dyn TaskStore>
    });
}

/// Reads every record back by id.
async fn read_all(store: &dyn TaskStore, ids: &[TaskId]) -> Vec<TaskRecord> {
    let mut out = Vec::new();
    for id in ids {
        out.push(store.get(id, at(10_000)).await.unwrap().unwrap());
    }
    out
}

#[tokio::test]
async fn records_survive_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("durable.db");
    let url = format!("sqlite://{}", path.display());

    let store = SqliteStore::open(&url).await.unwrap();
    let mut ids = Vec::new();
    for i in 0..6 {
        let mut rec = record("alice", Some("s1"), at(i));
        rec.ttl = Some(std::time::Duration::from_secs(3_600));
        rec.expires_at = Some(at(i + 3_600_000));
        store.create(&rec).await.unwrap();
        ids.push(rec.id);
    }
    store
        .transition(&TransitionParams {
            outcome: Some(ok_outcome("done")),
            status_message: Some(Some("finished".to_string())),
            ..to_status(&ids[0], TaskStatus::Completed, at(50))
        })
        .await
        .unwrap();
    store
        .transition(&to_status(&ids[1], TaskStatus::Cancelled, at(60)))
        .await
        .unwrap();
    store
        .transition(&to_status(&ids[2], TaskStatus::InputRequired, at(70)))
        .await
        .unwrap();
    let before = read_all(&store, &ids).await;
    // No orderly close: the data must already be on disk when calls return.
    drop(store);

    // Both URL spellings reach the same file.
    for url in [url.clone(), format!("sqlite:{}", path.display())] {
        let reopened = SqliteStore::open(&url).await.unwrap();
        assert_eq!(read_all(&reopened, &ids).await, before);
        let page = reopened
            .list(&ListParams {
                owner: "alice".to_string(),
                session: None,
                after: None,
                limit: 10,
                now: at(100),
            })
            .await
            .unwrap();
        assert_eq!(page.records, before);
    }
}

#[tokio::test]
async fn open_by_url_creates_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("new.db");
    assert!(!path.exists());
    let store = mcp_tasks_store::open(&format!("sqlite://{}", path.display()))
        .await
        .unwrap();
    let rec = record("alice", None, base_time());
    store.create(&rec).await.unwrap();
    assert!(path.exists());
    assert_eq!(store.get(&rec.id, at(1)).await.unwrap(), Some(rec));
}

#[tokio::test]
async fn journal_is_wal_with_full_sync() {
    let store = FileStore::new().await;
    let mode: String = sqlx::query_scalar("PRAGMA journal_mode")
        .fetch_one(store.store.pool())
        .await
        .unwrap();
    assert_eq!(mode, "wal");
    let sync: i64 = sqlx::query_scalar("PRAGMA synchronous")
        .fetch_one(store.store.pool())
        .await
        .unwrap();
    assert_eq!(sync, 2, "synchronous = FULL");
}

#[tokio::test]
async fn opening_in_a_missing_directory_fails() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!(
        "sqlite://{}",
        dir.path().join("no/such/dir/tasks.db").display()
    );
    let err = SqliteStore::open(&url).await.unwrap_err();
    assert!(matches!(err, StoreError::Backend(_)), "{err:?}");
}

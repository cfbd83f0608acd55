//! Counting tasks by status (the metrics gauge).

use super::{at, base_time, record};
use crate::TaskStore;
use mcp_tasks_protocol::TaskStatus;
use std::collections::HashMap;
use std::sync::Arc;

/// Every visible task is counted once under its status; expired ones are not, and
/// statuses nobody has are absent or zero. Also runs through [`crate::ObservedStore`],
/// which must answer the same.
pub async fn count_by_status_counts_visible_tasks(store: Arc<dyn TaskStore>) {
    let statuses = [
        TaskStatus::Working,
        TaskStatus::Working,
        TaskStatus::InputRequired,
        TaskStatus::Completed,
        TaskStatus::Failed,
        TaskStatus::Failed,
        TaskStatus::Failed,
    ];
    for (i, status) in statuses.into_iter().enumerate() {
        let mut r = record("alice", None, at(i64::try_from(i).unwrap()));
        r.status = status;
        r.expires_at = Some(at(60_000));
        store.create(&r).await.unwrap();
    }
    let mut expired = record("bob", None, base_time());
    expired.status = TaskStatus::Cancelled;
    expired.expires_at = Some(at(10));
    store.create(&expired).await.unwrap();

    let observed: Arc<dyn TaskStore> = Arc::new(crate::ObservedStore::new(Arc::clone(&store)));
    for s in [store, observed] {
        let counts: HashMap<TaskStatus, u64> = s
            .count_by_status(at(1_000))
            .await
            .unwrap()
            .expect("every backend of this crate counts")
            .into_iter()
            .filter(|(_, n)| *n > 0)
            .collect();
        let wanted = HashMap::from([
            (TaskStatus::Working, 2),
            (TaskStatus::InputRequired, 1),
            (TaskStatus::Completed, 1),
            (TaskStatus::Failed, 3),
        ]);
        assert_eq!(counts, wanted);
    }
}

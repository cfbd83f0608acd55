//! External jobs: a task whose work runs in another system keeps the job's state in its
//! record, and no process holds it, so neither start-up recovery nor lease takeover may
//! touch it.

use super::{at, ok_outcome, record, to_status};
use crate::record::{ClaimExpiredParams, ExpiredTask, Outcome, StoredJob, TaskRecord};
use crate::TaskStore;
use mcp_tasks_protocol::TaskStatus;
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;

/// A job of kind `trino` with a nested state (so JSON survives whole, not flattened).
fn job(token: &str) -> StoredJob {
    StoredJob {
        kind: "trino".to_string(),
        state: json!({"query_id": "q-1", "next": token, "pages": [1, 2], "done": false}),
    }
}

/// The external job is stored by `create`, read back by `get`, replaced by a
/// transition that attaches a job, kept by one that leaves it (a message update),
/// removed by one that detaches it, and kept through a terminal transition that leaves it.
pub async fn external_job_round_trips(store: Arc<dyn TaskStore>) {
    let plain = record("alice", None, at(0));
    let with_job = TaskRecord {
        external: Some(Box::new(job("t1"))),
        ..record("alice", None, at(1))
    };
    store.create(&plain).await.unwrap();
    store.create(&with_job).await.unwrap();
    assert_eq!(
        store.get(&plain.id, at(2)).await.unwrap().as_ref(),
        Some(&plain)
    );
    assert_eq!(
        store.get(&with_job.id, at(2)).await.unwrap().as_ref(),
        Some(&with_job)
    );

    // Attach a job to the plain task, as the engine does once the job started.
    let attached = store
        .transition(
            &to_status(&plain.id, TaskStatus::Working, at(10))
                .message("started")
                .attach(job("a1")),
        )
        .await
        .unwrap();
    assert_eq!(attached.external, Some(Box::new(job("a1"))));
    assert_eq!(attached.version, plain.version + 1);
    assert_eq!(
        store.get(&plain.id, at(11)).await.unwrap().as_ref(),
        Some(&attached)
    );

    // A message-only update leaves the job.
    let messaged = store
        .transition(&to_status(&plain.id, TaskStatus::Working, at(20)).message("50%"))
        .await
        .unwrap();
    assert_eq!(messaged.external, Some(Box::new(job("a1"))));

    // A new state replaces the old one.
    let replaced = store
        .transition(&to_status(&plain.id, TaskStatus::Working, at(30)).attach(job("a2")))
        .await
        .unwrap();
    assert_eq!(replaced.external, Some(Box::new(job("a2"))));
    assert_eq!(replaced.status_message.as_deref(), Some("50%"));
    assert_eq!(
        store.get(&plain.id, at(31)).await.unwrap().as_ref(),
        Some(&replaced)
    );

    // Finishing leaves it (a note of which job produced the outcome).
    let finished = store
        .transition(
            &to_status(&plain.id, TaskStatus::Completed, at(40)).outcome(ok_outcome("rows")),
        )
        .await
        .unwrap();
    assert_eq!(finished.external, Some(Box::new(job("a2"))));
    assert_eq!(
        store.get(&plain.id, at(41)).await.unwrap().as_ref(),
        Some(&finished)
    );

    // Detaching removes it.
    let removed = store
        .transition(&to_status(&with_job.id, TaskStatus::Working, at(50)).detach())
        .await
        .unwrap();
    assert_eq!(removed.external, None);
    assert_eq!(
        store.get(&with_job.id, at(51)).await.unwrap().as_ref(),
        Some(&removed)
    );
}

/// Start-up recovery fails a dead runner's running tasks but not those waiting on an
/// external job, whether the job came with the record or was attached later, leased
/// (with an expired lease) or not.
pub async fn fail_orphaned_skips_external_jobs(store: Arc<dyn TaskStore>) {
    let orphan = TaskRecord {
        runner: Some("old".to_string()),
        ..record("alice", None, at(0))
    };
    let external = TaskRecord {
        runner: Some("old".to_string()),
        external: Some(Box::new(job("x"))),
        ..record("alice", None, at(1))
    };
    let expired_lease = TaskRecord {
        runner: Some("old".to_string()),
        lease_until: Some(at(5)),
        lease_generation: 1,
        external: Some(Box::new(job("y"))),
        ..record("alice", None, at(2))
    };
    let attached_later = TaskRecord {
        runner: Some("old".to_string()),
        ..record("alice", None, at(3))
    };
    for rec in [&orphan, &external, &expired_lease, &attached_later] {
        store.create(rec).await.unwrap();
    }
    let attached_later = store
        .transition(&to_status(&attached_later.id, TaskStatus::Working, at(10)).attach(job("z")))
        .await
        .unwrap();

    let error = Outcome::Error {
        code: -32603,
        message: "restarted".to_string(),
        data: None,
    };
    let failed = store
        .fail_orphaned("current", "restarted", &error, at(100))
        .await
        .unwrap();
    assert_eq!(failed, 1, "only the task without an external job is failed");
    assert_eq!(
        store
            .get(&orphan.id, at(100))
            .await
            .unwrap()
            .unwrap()
            .status,
        TaskStatus::Failed
    );
    for rec in [&external, &expired_lease, &attached_later] {
        assert_eq!(
            store.get(&rec.id, at(100)).await.unwrap().as_ref(),
            Some(rec),
            "a task with an external job was touched"
        );
    }
}

/// Lease takeover claims expired leases of running tasks, but never one waiting on an
/// external job: its lease lapses by design once the job started.
pub async fn claim_expired_leases_skips_external_jobs(store: Arc<dyn TaskStore>) {
    let leased = |i: i64| TaskRecord {
        runner: Some("dead".to_string()),
        lease_until: Some(at(100 + i)),
        lease_generation: 1,
        ..record("alice", None, at(i))
    };
    let plain = leased(0);
    let external = TaskRecord {
        external: Some(Box::new(job("x"))),
        ..leased(1)
    };
    let attached_later = leased(2);
    for rec in [&plain, &external, &attached_later] {
        store.create(rec).await.unwrap();
    }
    let attached_later = store
        .transition(
            &to_status(&attached_later.id, TaskStatus::Working, at(10))
                .attach(job("z"))
                .fenced(1),
        )
        .await
        .unwrap();

    let claimed = store
        .claim_expired_leases(&ClaimExpiredParams {
            runner: "rescuer".to_string(),
            until: at(60_000),
            now: at(1_000),
            limit: 100,
        })
        .await
        .unwrap();
    let ids: Vec<_> = claimed.iter().map(|r| r.id.clone()).collect();
    assert_eq!(
        ids,
        vec![plain.id.clone()],
        "only the plain task is taken over"
    );
    for rec in [&external, &attached_later] {
        assert_eq!(
            store.get(&rec.id, at(1_000)).await.unwrap().as_ref(),
            Some(rec),
            "a task with an external job was taken over"
        );
    }
}

/// `delete_expired` hands back each deleted task's status and external job, so that the
/// engine can ask the external system to stop a job whose task nobody can collect any
/// more; a job attached after creation is reported too.
pub async fn delete_expired_returns_external_jobs(store: Arc<dyn TaskStore>) {
    let expiring = |i: i64, job: Option<StoredJob>| TaskRecord {
        ttl: Some(Duration::from_millis(1_000)),
        expires_at: Some(at(i + 1_000)),
        external: job.map(Box::new),
        ..record("alice", None, at(i))
    };
    let running = expiring(0, Some(job("running")));
    let plain = expiring(1, None);
    let attached_later = expiring(2, None);
    let finished = expiring(3, Some(job("done")));
    for rec in [&running, &plain, &attached_later, &finished] {
        store.create(rec).await.unwrap();
    }
    store
        .transition(
            &to_status(&attached_later.id, TaskStatus::InputRequired, at(10)).attach(job("late")),
        )
        .await
        .unwrap();
    store
        .transition(
            &to_status(&finished.id, TaskStatus::Completed, at(20)).outcome(ok_outcome("rows")),
        )
        .await
        .unwrap();

    let mut gone = store.delete_expired(at(5_000), 10).await.unwrap();
    gone.sort_by_key(|e| e.id.to_string());
    let mut expected = vec![
        ExpiredTask {
            id: running.id.clone(),
            status: TaskStatus::Working,
            external: Some(job("running")),
        },
        ExpiredTask {
            id: plain.id.clone(),
            status: TaskStatus::Working,
            external: None,
        },
        ExpiredTask {
            id: attached_later.id.clone(),
            status: TaskStatus::InputRequired,
            external: Some(job("late")),
        },
        ExpiredTask {
            id: finished.id.clone(),
            status: TaskStatus::Completed,
            external: Some(job("done")),
        },
    ];
    expected.sort_by_key(|e| e.id.to_string());
    assert_eq!(gone, expected);
}

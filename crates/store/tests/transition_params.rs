//! The constructors and builder methods of `TransitionParams` fill the fields a store
//! reads exactly as the struct literals they replace did.

use mcp_tasks_protocol::{TaskId, TaskStatus};
use mcp_tasks_store::suite::{at, ok_outcome};
use mcp_tasks_store::{Failure, FieldChange, InputRequests, Outcome, StoredJob, TransitionParams};
use serde_json::json;

fn id() -> TaskId {
    TaskId::from_string("t-1")
}

#[test]
fn to_changes_nothing_but_the_status() {
    let change = TransitionParams::to(id(), TaskStatus::Working, at(5));
    assert_eq!(
        change,
        TransitionParams {
            id: id(),
            expected_version: None,
            status: TaskStatus::Working,
            status_message: FieldChange::Keep,
            outcome: None,
            input_requests: None,
            now: at(5),
            expected_lease_generation: None,
            external: FieldChange::Keep,
        }
    );
}

#[test]
fn builders_set_each_field() {
    let job = StoredJob {
        kind: "batch".into(),
        state: json!({"n": 1}),
    };
    let change = TransitionParams::to(id(), TaskStatus::InputRequired, at(5))
        .message("waiting")
        .questions(InputRequests::new())
        .attach(job.clone())
        .fenced(3)
        .expecting(7);
    assert_eq!(change.status_message, FieldChange::Set("waiting".into()));
    assert_eq!(change.input_requests, Some(InputRequests::new()));
    assert_eq!(change.external, FieldChange::Set(job));
    assert_eq!(change.expected_lease_generation, Some(3));
    assert_eq!(change.expected_version, Some(7));

    let change = change.clear_message().detach().fenced(None).expecting(None);
    assert_eq!(change.status_message, FieldChange::Clear);
    assert_eq!(change.external, FieldChange::Clear);
    assert_eq!(change.expected_lease_generation, None);
    assert_eq!(change.expected_version, None);
}

#[test]
fn finish_picks_the_status_from_the_outcome_and_drops_questions() {
    let done = TransitionParams::finish(id(), ok_outcome("ok"), at(5));
    assert_eq!(done.status, TaskStatus::Completed);
    assert_eq!(done.outcome, Some(ok_outcome("ok")));
    assert_eq!(done.input_requests, Some(InputRequests::new()));
    assert_eq!(done.status_message, FieldChange::Keep);

    let error = Outcome::failed(Failure::Internal, "boom");
    let failed = TransitionParams::finish(id(), error.clone(), at(5));
    assert_eq!(failed.status, TaskStatus::Failed);
    assert_eq!(failed.outcome, Some(error));
}

#[test]
fn fail_and_cancel_end_the_task() {
    let failed = TransitionParams::fail(id(), Failure::LeaseLost, "lost", at(5));
    assert_eq!(failed.status, TaskStatus::Failed);
    assert_eq!(failed.status_message, FieldChange::Set("lost".into()));
    assert_eq!(
        failed.outcome,
        Some(Outcome::failed(Failure::LeaseLost, "lost"))
    );
    assert_eq!(failed.input_requests, Some(InputRequests::new()));

    let cancelled = TransitionParams::cancel(id(), "stopped", at(5)).message("by alice");
    assert_eq!(cancelled.status, TaskStatus::Cancelled);
    assert_eq!(
        cancelled.status_message,
        FieldChange::Set("by alice".into())
    );
    assert_eq!(
        cancelled.outcome,
        Some(Outcome::failed(Failure::Cancelled, "stopped"))
    );
    assert_eq!(cancelled.input_requests, Some(InputRequests::new()));
}

#[test]
fn field_change_reads_as_the_columns_bind_it() {
    let keep: FieldChange<String> = FieldChange::default();
    assert!(keep.is_keep());
    assert_eq!(keep.new_value(), None);
    assert_eq!(FieldChange::set_or_keep(None::<String>), FieldChange::Keep);
    assert_eq!(
        FieldChange::set_or_keep(Some("x".to_string())).new_value(),
        Some(&"x".to_string())
    );
    let mut field = Some(1);
    FieldChange::<i32>::Keep.apply_to(&mut field, |v| *v);
    assert_eq!(field, Some(1));
    FieldChange::Set(2).apply_to(&mut field, |v| *v);
    assert_eq!(field, Some(2));
    FieldChange::<i32>::Clear.apply_to(&mut field, |v| *v);
    assert_eq!(field, None);
}

//! The store's error type.

use crate::record::TaskRecord;

/// What can go wrong in a store call. Variants are things a caller can act on.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// No record with that id (or it expired).
    #[error("task not found")]
    NotFound,
    /// The record is terminal or changed since it was read; carries what it is now.
    #[error("task changed concurrently or is already terminal (now {})", .current.status)]
    Conflict {
        /// The record as it is now.
        current: Box<TaskRecord>,
    },
    /// The caller does not hold the task's lease: a renewal or fenced transition
    /// named a generation (or runner) that is no longer current because another runner
    /// claimed the task since, or a claim found a live lease held by someone else.
    /// A runner that sees this must stop acting on the task. Carries the record as it is.
    #[error("the task's lease is held by another runner (now generation {} of {})", .current.lease_generation, .current.runner.as_deref().unwrap_or("no runner"))]
    LeaseConflict {
        /// The record as it is now.
        current: Box<TaskRecord>,
    },
    /// A delivery sender reported on a delivery it does not hold: its claim was taken
    /// over after it expired (or ended with a retry), the delivery is already finished,
    /// or no delivery has that key. The sender must not report on it again; whoever
    /// holds it now reports instead (see [`crate::delivery`]).
    #[error(
        "delivery {key:?} is not claimed by this runner (claim lost, already finished, or unknown)"
    )]
    DeliveryClaimLost {
        /// The delivery's key.
        key: String,
    },
    /// An id that already exists was created again.
    #[error("a task with this id already exists")]
    Duplicate,
    /// The backend is temporarily unable to serve (busy, pool timeout); retrying may work.
    #[error("store temporarily unavailable: {0}")]
    Unavailable(String),
    /// The database URL is not one we can open.
    #[error("{0}")]
    InvalidUrl(String),
    /// Any other backend failure.
    #[error("store backend error: {0}")]
    Backend(#[source] Box<dyn std::error::Error + Send + Sync>),
}

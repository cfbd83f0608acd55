//! Why a compare-and-set did not apply, told from the record as it is now.
//!
//! The SQL backends run each change as one conditional `UPDATE ... RETURNING`. When it
//! returns no row they read the record again and ask these functions which condition
//! failed, so every backend reports the same error for the same situation (the memory
//! store checks the same conditions in the same order before writing).

use crate::error::StoreError;
use crate::record::{RenewLeaseParams, TaskRecord, TransitionParams};

/// A transition that changed nothing: absent, fenced out, or terminal / stale version.
pub(crate) fn transition_failed(
    current: Option<TaskRecord>,
    params: &TransitionParams,
) -> StoreError {
    let Some(current) = current else {
        return StoreError::NotFound;
    };
    if params
        .expected_lease_generation
        .is_some_and(|generation| generation != current.lease_generation)
    {
        return StoreError::LeaseConflict {
            current: Box::new(current),
        };
    }
    StoreError::Conflict {
        current: Box::new(current),
    }
}

/// A claim that took nothing: absent, terminal, or someone else's live lease.
pub(crate) fn claim_failed(current: Option<TaskRecord>) -> StoreError {
    match current {
        None => StoreError::NotFound,
        Some(current) if current.status.is_terminal() => StoreError::Conflict {
            current: Box::new(current),
        },
        Some(current) => StoreError::LeaseConflict {
            current: Box::new(current),
        },
    }
}

/// A renewal that extended nothing: absent, taken over, or terminal.
pub(crate) fn renew_failed(current: Option<TaskRecord>, params: &RenewLeaseParams) -> StoreError {
    match current {
        None => StoreError::NotFound,
        Some(current)
            if current.lease_generation != params.generation
                || current.runner.as_deref() != Some(params.runner.as_str()) =>
        {
            StoreError::LeaseConflict {
                current: Box::new(current),
            }
        }
        Some(current) => StoreError::Conflict {
            current: Box::new(current),
        },
    }
}

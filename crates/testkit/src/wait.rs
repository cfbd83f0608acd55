//! [`eventually`]: checks a condition until it is met, bounded by a timeout that only a
//! failing test reaches.

use std::future::Future;
use std::time::Duration;

/// A bound for [`eventually`] that only a failing test reaches.
pub const WAIT: Duration = Duration::from_secs(10);

/// How long [`eventually`] lets pass between two checks: short enough that an
/// in-process condition is seen soon after it holds, long enough that a condition read
/// from another process (an HTTP request, a CLI run) does not spin.
pub const STEP: Duration = Duration::from_millis(10);

/// What a condition of [`eventually`] returns: a `bool`, or an `Option` holding what was
/// found once the condition is met.
pub trait Met {
    /// What [`eventually`] returns.
    type Value;
    /// `Some` once the condition is met.
    fn met(self) -> Option<Self::Value>;
}

impl Met for bool {
    type Value = ();
    fn met(self) -> Option<()> {
        self.then_some(())
    }
}

impl<T> Met for Option<T> {
    type Value = T;
    fn met(self) -> Option<T> {
        self
    }
}

/// Checks `condition` every [`STEP`] until it is met and returns what it found; panics,
/// naming the line of the call, when `timeout` (tokio time) passes first. The timeout
/// only bounds a failure, so it can be generous.
#[track_caller]
pub fn eventually<M, F, Fut>(timeout: Duration, mut condition: F) -> impl Future<Output = M::Value>
where
    M: Met,
    F: FnMut() -> Fut,
    Fut: Future<Output = M>,
{
    let caller = std::panic::Location::caller();
    async move {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            if let Some(value) = condition().await.met() {
                return value;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "the condition awaited at {caller} was not met within {timeout:?}"
            );
            // The interval between two checks of a condition nothing signals.
            tokio::time::sleep(STEP).await;
        }
    }
}

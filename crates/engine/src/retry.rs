//! Retries: a tool's [`RetryPolicy`] (how many attempts, how long between them) and
//! the [`Retry`] its work asks for when a failure is worth another attempt.
//!
//! An attempt is one run of a task's work. The first run is attempt 1; a takeover
//! (the process running the task died), a drain (it shut down) and a retry the work
//! asked for each start the next one, which replays the journaled steps of the
//! earlier ones (see [`TaskContext::step`](crate::TaskContext::step)). The policy
//! bounds all of them: after `max_attempts` the task fails with the reason.

use std::fmt;
use std::time::Duration;

/// How often, and how far apart, a resumable tool's task is attempted.
///
/// The wait before attempt `n + 1` is `initial_backoff × factor^(n − 1)`, at most
/// `max_backoff`, moved by up to `jitter` (a fraction) either way so that many tasks
/// failing together do not come back together.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RetryPolicy {
    /// Most attempts in all, the first included (`1`: never again).
    pub max_attempts: u32,
    /// Wait before the second attempt.
    pub initial_backoff: Duration,
    /// How much each wait grows over the previous one.
    pub factor: f64,
    /// Longest wait.
    pub max_backoff: Duration,
    /// Fraction (0 to 1) by which a wait is moved at random either way.
    pub jitter: f64,
}

/// Default attempts of a resumable task: 10 (a takeover counts as one).
pub const DEFAULT_MAX_ATTEMPTS: u32 = 10;

impl Default for RetryPolicy {
    /// 10 attempts, 1 s doubling up to 5 min, ±20 % jitter.
    fn default() -> Self {
        RetryPolicy {
            max_attempts: DEFAULT_MAX_ATTEMPTS,
            initial_backoff: Duration::from_secs(1),
            factor: 2.0,
            max_backoff: Duration::from_secs(5 * 60),
            jitter: 0.2,
        }
    }
}

impl RetryPolicy {
    /// The wait after attempt `attempt` failed, before jitter.
    pub fn backoff(&self, attempt: u32) -> Duration {
        let exponent = i32::try_from(attempt.saturating_sub(1)).unwrap_or(i32::MAX);
        let factor = if self.factor.is_finite() && self.factor >= 1.0 {
            self.factor
        } else {
            1.0
        };
        let secs = self.initial_backoff.as_secs_f64() * factor.powi(exponent);
        let max = self.max_backoff.as_secs_f64();
        Duration::from_secs_f64(if secs.is_finite() { secs.min(max) } else { max }.max(0.0))
    }

    /// [`RetryPolicy::backoff`] moved by the jitter, `unit` being a random number in
    /// `[0, 1)`.
    pub fn jittered(&self, base: Duration, unit: f64) -> Duration {
        let jitter = self.jitter.clamp(0.0, 1.0);
        let scale = 1.0 + jitter * (2.0 * unit.clamp(0.0, 1.0) - 1.0);
        Duration::from_secs_f64((base.as_secs_f64() * scale).max(0.0))
    }

    /// Checks the settings: at least one attempt, a factor of at least 1, a jitter
    /// between 0 and 1.
    ///
    /// # Errors
    /// A message naming the wrong setting and what it must be.
    pub fn check(&self) -> Result<(), String> {
        if self.max_attempts == 0 {
            return Err("retry max_attempts must be at least 1 (1: never retry)".into());
        }
        if !(self.factor.is_finite() && self.factor >= 1.0) {
            return Err(format!(
                "retry factor must be a number of at least 1, not {}",
                self.factor
            ));
        }
        if !(0.0..=1.0).contains(&self.jitter) {
            return Err(format!(
                "retry jitter must be between 0 and 1, not {}",
                self.jitter
            ));
        }
        Ok(())
    }
}

/// A failure worth another attempt, as work reports it through
/// [`TaskContext::retry`](crate::TaskContext::retry).
#[derive(Debug, Clone, PartialEq)]
pub struct Retry {
    pub(crate) reason: String,
    pub(crate) after: Option<Duration>,
}

impl Retry {
    /// A retry for `reason` (shown in the task's status message and, when no attempt
    /// is left, in its result), after the policy's backoff.
    pub fn because(reason: impl Into<String>) -> Self {
        Retry {
            reason: reason.into(),
            after: None,
        }
    }

    /// The same retry after `wait` instead of the policy's backoff (an outside
    /// service said when to come back).
    pub fn after(mut self, wait: Duration) -> Self {
        self.after = Some(wait);
        self
    }
}

/// What [`TaskContext::retry`](crate::TaskContext::retry) returns: the error for the
/// tool to return. Its text is the reason, which becomes the tool error the model
/// reads when no attempt is left.
#[derive(Debug, Clone, PartialEq)]
pub struct RetryRequested {
    reason: String,
}

impl RetryRequested {
    pub(crate) fn new(retry: &Retry) -> Self {
        RetryRequested {
            reason: retry.reason.clone(),
        }
    }
}

impl fmt::Display for RetryRequested {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.reason)
    }
}

impl std::error::Error for RetryRequested {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_by_the_factor_up_to_the_maximum() {
        let policy = RetryPolicy {
            max_attempts: 5,
            initial_backoff: Duration::from_secs(1),
            factor: 3.0,
            max_backoff: Duration::from_secs(20),
            jitter: 0.5,
        };
        assert_eq!(policy.backoff(1), Duration::from_secs(1));
        assert_eq!(policy.backoff(2), Duration::from_secs(3));
        assert_eq!(policy.backoff(3), Duration::from_secs(9));
        assert_eq!(policy.backoff(4), Duration::from_secs(20));
        assert_eq!(
            policy.jittered(Duration::from_secs(10), 0.0),
            Duration::from_secs(5)
        );
        assert_eq!(
            policy.jittered(Duration::from_secs(10), 0.5),
            Duration::from_secs(10)
        );
        assert!(RetryPolicy {
            factor: 0.5,
            ..policy
        }
        .check()
        .is_err());
        assert!(RetryPolicy {
            max_attempts: 0,
            ..policy
        }
        .check()
        .is_err());
    }
}

//! [`Clock`]: the engine's "now", which tokio's paused time drives.
//!
//! Every time the engine writes or compares (creation, TTL and expiry, leases, input
//! deadlines, idle sessions) comes from one [`Clock`], so a test that pauses tokio's
//! time (`tokio::time::pause`, `#[tokio::test(start_paused = true)]`) and advances it
//! moves the engine's wall clock exactly as far: a task with a one-hour TTL expires
//! after `advance(Duration::from_secs(3601))`, without an hour of waiting, on every
//! store.
//!
//! Outside paused time the clock is the system's wall clock (`Utc::now()`), steps and
//! all: several processes on one database compare leases written by each other, so
//! they must all read the same wall clock, not the time since each one started.
//!
//! How: `now = wall clock + (tokio's instant − the monotonic clock's instant)`, read
//! together. Unpaused, tokio's `Instant` *is* the monotonic clock and the difference is
//! nil; paused, tokio's clock stood still at the pause (or moved by `advance`) while the
//! monotonic clock ran on, and the difference is exactly the time the test made pass
//! minus the real time it took, so `now` is the wall clock at the pause plus what was
//! advanced. No anchor is kept, so every engine in a process (a test's "restarted"
//! replica too) reads the same time.

use chrono::{DateTime, Utc};

/// The engine's source of "now". It holds nothing; see the module docs.
#[derive(Debug, Clone, Copy, Default)]
pub struct Clock;

impl Clock {
    /// The clock (read it inside the runtime that drives it: outside a runtime,
    /// tokio's time is the monotonic clock and this is the wall clock).
    pub fn new() -> Self {
        Clock
    }

    /// Now, truncated to milliseconds: the precision every store keeps, so a record
    /// reads back exactly as written.
    pub fn now(&self) -> DateTime<Utc> {
        let virtual_now = tokio::time::Instant::now().into_std();
        let real_now = std::time::Instant::now();
        let wall = Utc::now();
        let now = match virtual_now.checked_duration_since(real_now) {
            Some(ahead) => chrono::Duration::from_std(ahead)
                .ok()
                .and_then(|ahead| wall.checked_add_signed(ahead)),
            None => chrono::Duration::from_std(real_now.duration_since(virtual_now))
                .ok()
                .and_then(|behind| wall.checked_sub_signed(behind)),
        }
        .unwrap_or(wall);
        DateTime::from_timestamp_millis(now.timestamp_millis()).unwrap_or(now)
    }
}

/// `at` plus `wait` (the latest representable time when that overflows).
pub(crate) fn after(at: DateTime<Utc>, wait: std::time::Duration) -> DateTime<Utc> {
    chrono::Duration::from_std(wait)
        .ok()
        .and_then(|d| at.checked_add_signed(d))
        .unwrap_or(DateTime::<Utc>::MAX_UTC)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test(start_paused = true)]
    async fn paused_time_moves_the_clock_by_exactly_what_was_advanced() {
        let clock = Clock::new();
        let before = clock.now();
        tokio::time::advance(Duration::from_secs(3600)).await;
        let after = clock.now();
        let off = ((after - before) - chrono::Duration::seconds(3600))
            .num_milliseconds()
            .abs();
        // The wall clock's real time and the monotonic clock's cancel: what is left
        // is the advance, give or take the millisecond the reads straddle.
        assert!(off <= 5, "moved {} ms more or less than advanced", off);
    }

    #[tokio::test(start_paused = true)]
    async fn clocks_made_at_different_times_agree() {
        let first = Clock::new();
        tokio::time::advance(Duration::from_secs(600)).await;
        let second = Clock::new();
        let apart = (second.now() - first.now()).num_milliseconds().abs();
        assert!(apart <= 5, "two clocks {apart} ms apart");
    }

    #[tokio::test]
    async fn unpaused_the_clock_is_the_wall_clock() {
        let clock = Clock::new();
        let skew = (clock.now() - Utc::now()).num_milliseconds().abs();
        assert!(skew <= 5, "{skew} ms from the wall clock");
    }
}

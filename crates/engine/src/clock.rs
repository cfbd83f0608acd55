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
//! How: `now = wall clock + (tokio time elapsed − monotonic time elapsed)` since the
//! clock was made. Unpaused, tokio's `Instant` *is* the monotonic clock and the two
//! elapsed times cancel; paused, the monotonic clock still runs but tokio's stands
//! still (or jumps by `advance`), and the difference is exactly the time a test made
//! pass (minus the real time the test took, a few milliseconds, which only makes the
//! clock slower than the test's story, never faster).

use chrono::{DateTime, Utc};

/// The engine's source of "now". Cheap to copy; see the module docs.
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    /// tokio's time when the clock was made.
    tokio_start: tokio::time::Instant,
    /// The monotonic clock's time when the clock was made.
    real_start: std::time::Instant,
}

impl Default for Clock {
    fn default() -> Self {
        Clock::new()
    }
}

impl Clock {
    /// A clock starting now (read tokio's time inside the runtime that will drive it:
    /// outside a runtime, tokio's time is the monotonic clock).
    pub fn new() -> Self {
        Clock {
            tokio_start: tokio::time::Instant::now(),
            real_start: std::time::Instant::now(),
        }
    }

    /// Now, truncated to milliseconds: the precision every store keeps, so a record
    /// reads back exactly as written.
    pub fn now(&self) -> DateTime<Utc> {
        let virtual_elapsed = self.tokio_start.elapsed();
        let real_elapsed = self.real_start.elapsed();
        let wall = Utc::now();
        let now = if virtual_elapsed >= real_elapsed {
            chrono::Duration::from_std(virtual_elapsed - real_elapsed)
                .ok()
                .and_then(|ahead| wall.checked_add_signed(ahead))
        } else {
            chrono::Duration::from_std(real_elapsed - virtual_elapsed)
                .ok()
                .and_then(|behind| wall.checked_sub_signed(behind))
        }
        .unwrap_or(wall);
        DateTime::from_timestamp_millis(now.timestamp_millis()).unwrap_or(now)
    }
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

    #[tokio::test]
    async fn unpaused_the_clock_is_the_wall_clock() {
        let clock = Clock::new();
        let skew = (clock.now() - Utc::now()).num_milliseconds().abs();
        assert!(skew <= 5, "{skew} ms from the wall clock");
    }
}

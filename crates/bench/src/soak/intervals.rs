//! The soak's bookkeeping over time: every finished request and every error is kept
//! with the moment it happened (from the start of the creation window), and after the
//! run they are split into the intervals between two snapshots. Issue #47 asks how the
//! latency develops over an hour; one p99 for the whole hour hides a database that
//! starts fast and slows down as its tables bloat, so each interval gets its own
//! percentiles, of the requests that finished in it (not cumulative).
//!
//! Splitting after the run, not while it goes, keeps the workers free of a shared lock
//! and makes the split a pure function ([`intervals`]) that tests can feed directly.

use serde::Serialize;
use std::time::Duration;

use crate::stats::{Latencies, LatencySummary};

/// One finished request: when it finished and how long it took.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Finished {
    /// When it finished, from the start of the creation window.
    pub at: Duration,
    /// Its latency.
    pub took: Duration,
}

/// What the workers saw, timed: enough for the whole run's figures and for every
/// interval's. About 16 bytes per request: an hour at 200 tasks/s keeps some 17 MB.
#[derive(Debug, Default, Clone)]
pub struct Timed {
    /// Every creation that succeeded (`tools/call` until the task exists).
    pub creates: Vec<Finished>,
    /// Every answer that completed its task (`tasks/update` until completed).
    pub answers: Vec<Finished>,
    /// When each error happened.
    pub errors: Vec<Duration>,
}

impl Timed {
    /// Moves everything `other` saw into this record.
    pub fn merge(&mut self, mut other: Timed) {
        self.creates.append(&mut other.creates);
        self.answers.append(&mut other.answers);
        self.errors.append(&mut other.errors);
    }
}

/// The latencies of some finished requests, for their percentiles.
pub fn latencies(finished: &[Finished]) -> Latencies {
    let mut l = Latencies::with_capacity(finished.len());
    for f in finished {
        l.record(f.took);
    }
    l
}

/// What the requests that finished in one interval show.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IntervalFigures {
    /// Where the interval starts, seconds from the start of the creation window.
    pub from_s: f64,
    /// Where it ends (the snapshot's time).
    pub to_s: f64,
    /// Tasks whose creation finished in the interval.
    pub created: u64,
    /// Those per second of the interval: the rate achieved in it.
    pub rate: f64,
    /// Answered tasks that completed in the interval.
    pub answered: u64,
    /// Errors in the interval.
    pub errors: u64,
    /// Creation latency of the interval's creations.
    pub create_latency: Option<LatencySummary>,
    /// Answer latency of the interval's answers.
    pub answer_latency: Option<LatencySummary>,
}

/// When the snapshots are taken: every multiple of `every` inside the creation
/// `window`, and the window's end (once, when it is itself a multiple). `every` is at
/// least 1 s (the flag's check), so the list is bounded by the window's seconds.
pub fn snapshot_times(window: Duration, every: Duration) -> Vec<Duration> {
    let mut times = Vec::new();
    if !every.is_zero() {
        let mut t = every;
        while t < window {
            times.push(t);
            t += every;
        }
    }
    times.push(window);
    times
}

/// Splits what the workers saw into the intervals that end at `ends` (ascending): the
/// first runs from 0 to `ends[0]`, each next one from the previous end (excluded) to
/// its own (included). What finished after the last end (answers in flight as the
/// window closed, expiry checks of the last tasks, their errors) counts in the last
/// interval, so the intervals add up to the whole run. Empty `ends`: no intervals.
pub fn intervals(timed: &Timed, ends: &[Duration]) -> Vec<IntervalFigures> {
    let Some(last) = ends.len().checked_sub(1) else {
        return Vec::new();
    };
    let slot = |at: Duration| ends.partition_point(|end| *end < at).min(last);
    let mut creates: Vec<Latencies> = vec![Latencies::default(); ends.len()];
    let mut answers: Vec<Latencies> = vec![Latencies::default(); ends.len()];
    let mut errors = vec![0u64; ends.len()];
    for f in &timed.creates {
        creates[slot(f.at)].record(f.took);
    }
    for f in &timed.answers {
        answers[slot(f.at)].record(f.took);
    }
    for at in &timed.errors {
        errors[slot(*at)] += 1;
    }
    let mut from = Duration::ZERO;
    let mut out = Vec::with_capacity(ends.len());
    for ((end, (c, a)), e) in ends
        .iter()
        .zip(creates.into_iter().zip(answers))
        .zip(errors)
    {
        let length = end.saturating_sub(from).as_secs_f64();
        let created = c.len() as u64;
        out.push(IntervalFigures {
            from_s: from.as_secs_f64(),
            to_s: end.as_secs_f64(),
            created,
            rate: if length > 0.0 {
                created as f64 / length
            } else {
                0.0
            },
            answered: a.len() as u64,
            errors: e,
            create_latency: c.summary(),
            answer_latency: a.summary(),
        });
        from = *end;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(secs: u64) -> Duration {
        Duration::from_secs(secs)
    }

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn done(at: Duration, took: Duration) -> Finished {
        Finished { at, took }
    }

    #[test]
    fn snapshots_fall_on_every_multiple_and_the_window_end() {
        assert_eq!(
            snapshot_times(s(3600), s(600)),
            [600, 1200, 1800, 2400, 3000, 3600].map(s)
        );
        assert_eq!(snapshot_times(s(20), s(6)), [6, 12, 18, 20].map(s));
        assert_eq!(snapshot_times(s(5), s(600)), [s(5)]);
        assert_eq!(snapshot_times(s(5), Duration::ZERO), [s(5)]);
    }

    #[test]
    fn each_interval_has_the_percentiles_of_its_own_requests() {
        // A fast first interval and a slow second one: cumulative figures would mix
        // them; per interval the second shows its own slowness.
        let mut timed = Timed::default();
        for i in 0..100 {
            timed.creates.push(done(ms(i * 10), ms(1)));
            timed.creates.push(done(s(10) + ms(i * 10 + 1), ms(50 + i)));
        }
        timed.answers.push(done(s(15), ms(7)));
        let iv = intervals(&timed, &[s(10), s(20)]);
        assert_eq!(iv.len(), 2);
        assert_eq!((iv[0].from_s, iv[0].to_s), (0.0, 10.0));
        assert_eq!((iv[1].from_s, iv[1].to_s), (10.0, 20.0));
        assert_eq!((iv[0].created, iv[1].created), (100, 100));
        assert_eq!((iv[0].rate, iv[1].rate), (10.0, 10.0));
        let c0 = iv[0].create_latency.expect("creates in the first");
        let c1 = iv[1].create_latency.expect("creates in the second");
        assert_eq!((c0.p50_us, c0.p99_us), (1000.0, 1000.0));
        assert_eq!((c1.p50_us, c1.p99_us), (99_000.0, 148_000.0));
        assert!(iv[0].answer_latency.is_none());
        assert_eq!(iv[1].answered, 1);
        assert_eq!(iv[1].answer_latency.map(|l| l.p99_us), Some(7000.0));
    }

    #[test]
    fn an_interval_ends_at_its_snapshot_inclusive() {
        let mut timed = Timed::default();
        timed.creates.push(done(Duration::ZERO, ms(1)));
        timed.creates.push(done(s(10), ms(1)));
        timed
            .creates
            .push(done(s(10) + Duration::from_nanos(1), ms(1)));
        timed.errors = vec![s(10), s(11)];
        let iv = intervals(&timed, &[s(10), s(20)]);
        assert_eq!((iv[0].created, iv[1].created), (2, 1));
        assert_eq!((iv[0].errors, iv[1].errors), (1, 1));
    }

    #[test]
    fn what_finished_after_the_window_counts_in_the_last_interval() {
        let mut timed = Timed::default();
        timed.answers.push(done(s(21), ms(3)));
        timed.errors = vec![s(5), s(35), s(40)];
        let iv = intervals(&timed, &[s(10), s(20)]);
        assert_eq!(iv[1].answered, 1);
        assert_eq!((iv[0].errors, iv[1].errors), (1, 2));
        let total: u64 = iv.iter().map(|i| i.errors).sum();
        assert_eq!(total, 3, "the intervals add up to the run");
        // An interval in which nothing finished has no percentiles and rate 0.
        assert_eq!(iv[0].rate, 0.0);
        assert!(iv[0].create_latency.is_none());
        assert!(intervals(&timed, &[]).is_empty());
    }

    #[test]
    fn a_short_last_interval_has_the_rate_of_its_own_length() {
        let mut timed = Timed::default();
        for i in 0..4 {
            timed.creates.push(done(s(18) + ms(i * 100 + 100), ms(1)));
        }
        let iv = intervals(&timed, &snapshot_times(s(20), s(6)));
        assert_eq!(iv.len(), 4);
        assert_eq!(iv[3].from_s, 18.0);
        assert_eq!(iv[3].created, 4);
        assert_eq!(iv[3].rate, 2.0);
    }

    #[test]
    fn merged_records_keep_everything_and_the_whole_run_percentiles() {
        let mut a = Timed::default();
        a.creates.push(done(s(1), ms(2)));
        let mut b = Timed::default();
        b.creates.push(done(s(2), ms(4)));
        b.errors.push(s(3));
        a.merge(b);
        assert_eq!((a.creates.len(), a.errors.len()), (2, 1));
        let whole = latencies(&a.creates).summary().expect("two");
        assert_eq!((whole.p50_us, whole.p99_us), (2000.0, 4000.0));
    }
}

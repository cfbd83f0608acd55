//! Statistics: latency percentiles within one run, and median plus spread across the
//! repeated runs of one figure.

use serde::Serialize;
use std::time::Duration;

/// Latencies of one run, in nanoseconds, in the order they were recorded.
#[derive(Debug, Default, Clone)]
pub struct Latencies {
    samples: Vec<u64>,
}

impl Latencies {
    /// An empty set with room for `n` samples.
    pub fn with_capacity(n: usize) -> Self {
        Latencies {
            samples: Vec::with_capacity(n),
        }
    }

    /// Records one latency.
    pub fn record(&mut self, d: Duration) {
        self.samples
            .push(u64::try_from(d.as_nanos()).unwrap_or(u64::MAX));
    }

    /// Moves every sample of `other` into this set.
    pub fn merge(&mut self, mut other: Latencies) {
        self.samples.append(&mut other.samples);
    }

    /// How many samples there are.
    pub fn len(&self) -> usize {
        self.samples.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.samples.is_empty()
    }

    /// p50, p99 and p99.9 in microseconds (`None` when empty).
    pub fn summary(mut self) -> Option<LatencySummary> {
        if self.samples.is_empty() {
            return None;
        }
        self.samples.sort_unstable();
        let us = |q: f64| percentile_sorted(&self.samples, q).map(|ns| ns as f64 / 1000.0);
        Some(LatencySummary {
            p50_us: us(50.0)?,
            p99_us: us(99.0)?,
            p999_us: us(99.9)?,
        })
    }
}

/// The latency percentiles a figure reports, in microseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct LatencySummary {
    /// Median.
    pub p50_us: f64,
    /// 99th percentile.
    pub p99_us: f64,
    /// 99.9th percentile.
    pub p999_us: f64,
}

/// The `q`-th percentile (0 < q <= 100) of sorted samples by the nearest-rank method:
/// the smallest sample such that at least `q` percent of the samples are at or below
/// it. `None` for an empty slice.
pub fn percentile_sorted(sorted: &[u64], q: f64) -> Option<u64> {
    if sorted.is_empty() {
        return None;
    }
    let n = sorted.len();
    // The small epsilon keeps binary rounding (0.999 * 1000 = 999.0000000000001) from
    // pushing the rank up by one.
    let rank = (q * n as f64 / 100.0 - 1e-9).ceil() as usize;
    let index = rank.clamp(1, n) - 1;
    Some(sorted[index])
}

/// Median of values (the mean of the two middle ones for an even count); `None` when
/// empty. NaNs sort last.
pub fn median(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

/// Median and spread of the repeated runs of one figure.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Spread {
    /// Median of the runs.
    pub median: f64,
    /// Smallest run.
    pub min: f64,
    /// Largest run.
    pub max: f64,
    /// Half the range as a percentage of the median: the "±" printed in the table.
    pub spread_pct: f64,
    /// Every run, in the order measured.
    pub runs: Vec<f64>,
}

impl Spread {
    /// Summarises runs; `None` when there are none.
    pub fn of(runs: &[f64]) -> Option<Spread> {
        let median = median(runs)?;
        let min = runs.iter().copied().fold(f64::INFINITY, f64::min);
        let max = runs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let spread_pct = if median != 0.0 {
            (max - min) / 2.0 / median.abs() * 100.0
        } else {
            0.0
        };
        Some(Spread {
            median,
            min,
            max,
            spread_pct,
            runs: runs.to_vec(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentile_uses_nearest_rank() {
        let v: Vec<u64> = (1..=100).collect();
        assert_eq!(percentile_sorted(&v, 50.0), Some(50));
        assert_eq!(percentile_sorted(&v, 99.0), Some(99));
        assert_eq!(percentile_sorted(&v, 99.9), Some(100));
        assert_eq!(percentile_sorted(&v, 100.0), Some(100));
        assert_eq!(percentile_sorted(&v, 0.1), Some(1));
    }

    #[test]
    fn percentile_of_one_sample_is_that_sample() {
        assert_eq!(percentile_sorted(&[7], 50.0), Some(7));
        assert_eq!(percentile_sorted(&[7], 99.9), Some(7));
        assert_eq!(percentile_sorted(&[], 50.0), None);
    }

    #[test]
    fn p999_needs_a_thousand_samples_to_differ_from_max() {
        let v: Vec<u64> = (1..=1000).collect();
        assert_eq!(percentile_sorted(&v, 99.9), Some(999));
        let v: Vec<u64> = (1..=10).collect();
        assert_eq!(percentile_sorted(&v, 99.9), Some(10));
    }

    #[test]
    fn latency_summary_sorts_and_converts_to_micros() {
        let mut l = Latencies::default();
        for us in [30u64, 10, 20] {
            l.record(Duration::from_micros(us));
        }
        let s = l.summary().expect("non-empty");
        assert_eq!(s.p50_us, 20.0);
        assert_eq!(s.p99_us, 30.0);
        assert_eq!(s.p999_us, 30.0);
        assert!(Latencies::default().summary().is_none());
    }

    #[test]
    fn merge_keeps_every_sample() {
        let mut a = Latencies::with_capacity(2);
        a.record(Duration::from_nanos(1));
        let mut b = Latencies::default();
        b.record(Duration::from_nanos(2));
        b.record(Duration::from_nanos(3));
        a.merge(b);
        assert_eq!(a.len(), 3);
    }

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[]), None);
    }

    #[test]
    fn spread_is_half_the_range_over_the_median() {
        let s = Spread::of(&[90.0, 100.0, 110.0]).expect("runs");
        assert_eq!(s.median, 100.0);
        assert_eq!(s.min, 90.0);
        assert_eq!(s.max, 110.0);
        assert!((s.spread_pct - 10.0).abs() < 1e-9);
        let one = Spread::of(&[5.0]).expect("one run");
        assert_eq!(one.spread_pct, 0.0);
        assert!(Spread::of(&[]).is_none());
    }

    #[test]
    fn spread_of_zero_median_does_not_divide_by_zero() {
        let s = Spread::of(&[0.0, 0.0]).expect("runs");
        assert_eq!(s.spread_pct, 0.0);
    }
}

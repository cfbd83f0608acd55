//! Heartbeats of plain calls: a `tools/call` that carries a `progressToken` gets a
//! `notifications/progress` at least every [`crate::ServerConfig::progress_interval`]
//! while it runs. The tool's own progress counts; when it says nothing for that long, a
//! heartbeat goes out with the time elapsed and the task's status message.
//!
//! Why: hosts that speak no tasks hold a long call open, and some of them (the
//! TypeScript SDK's `resetTimeoutOnProgress`, hosts built on it) keep waiting only
//! while progress arrives. A tool that works quietly for a minute must not look dead.

use mcp_tasks_engine::Progress;
use parking_lot::Mutex;
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

use crate::messages::progress_notification;

/// Sends one notification on the call's stream; false when it could not be queued.
pub(crate) type Send = Arc<dyn Fn(Value) -> bool + std::marker::Send + Sync>;

/// The heartbeat of one plain call (see the module docs). Time is tokio's, so tests
/// with paused time see beats without waiting for them.
pub(crate) struct Heartbeat {
    token: Value,
    started: Instant,
    interval: Duration,
    last: Mutex<Last>,
    send: Send,
}

/// The last notification this call's client was sent.
struct Last {
    at: Instant,
    progress: f64,
    total: Option<f64>,
}

/// How far a heartbeat moves the progress value past the last one: progress must
/// increase between notifications, and a step this small never overtakes the tool's
/// next report of its own.
const STEP: f64 = 0.001;

impl Heartbeat {
    /// A heartbeat for the call whose `_meta.progressToken` is `token`; `interval` is
    /// clamped to at least 10 ms so that a misconfiguration cannot flood the client.
    pub(crate) fn new(token: Value, interval: Duration, send: Send) -> Arc<Self> {
        let now = Instant::now();
        Arc::new(Heartbeat {
            token,
            started: now,
            interval: interval.max(Duration::from_millis(10)),
            last: Mutex::new(Last {
                at: now,
                progress: 0.0,
                total: None,
            }),
            send,
        })
    }

    /// The heartbeat of a call whose `params` carry a `progressToken`, sent on the
    /// call's `stream` every `interval` of quiet; `None` without a token or a stream.
    pub(crate) fn for_call(
        params: &Value,
        stream: Option<&tokio::sync::mpsc::Sender<Value>>,
        interval: Duration,
    ) -> Option<Arc<Self>> {
        let token = mcp_tasks_protocol::methods::progress_token(params)?;
        let tx = stream?.clone();
        Some(Heartbeat::new(
            token,
            interval,
            Arc::new(move |n| tx.try_send(n).is_ok()),
        ))
    }

    /// Sends the tool's own progress report and notes it.
    pub(crate) fn forward(&self, p: &Progress) {
        self.note(p);
        (self.send)(progress_notification(&self.token, p));
    }

    /// Notes a progress report someone else sent (the event router, for a call that
    /// runs as a task): the next heartbeat is due an interval after it.
    pub(crate) fn note(&self, p: &Progress) {
        let mut last = self.last.lock();
        last.at = Instant::now();
        last.progress = last.progress.max(p.progress);
        if p.total.is_some() {
            last.total = p.total;
        }
    }

    /// When the next heartbeat is due if nothing else is sent before.
    pub(crate) fn due_at(&self) -> Instant {
        self.last.lock().at + self.interval
    }

    /// Sends a heartbeat now when one is due: the progress a step past the last, and a
    /// message with the time elapsed and `status` (the task's status message).
    pub(crate) fn beat_if_due(&self, status: Option<&str>) {
        let now = Instant::now();
        let p = {
            let mut last = self.last.lock();
            if now < last.at + self.interval {
                return;
            }
            last.at = now;
            last.progress += STEP;
            let elapsed = humantime::format_duration(Duration::from_secs(
                now.duration_since(self.started).as_secs(),
            ));
            Progress {
                progress: last.progress,
                total: last.total,
                message: Some(match status {
                    Some(s) if !s.is_empty() => format!("still working after {elapsed}: {s}"),
                    _ => format!("still working after {elapsed}"),
                }),
            }
        };
        (self.send)(progress_notification(&self.token, &p));
    }

    /// Beats until `stop` is cancelled (an inline call's ticker; a call that runs as a
    /// task beats from its own wait loop instead).
    pub(crate) async fn run(self: Arc<Self>, stop: tokio_util::sync::CancellationToken) {
        loop {
            tokio::select! {
                () = stop.cancelled() => return,
                () = tokio::time::sleep_until(self.due_at()) => self.beat_if_due(None),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recorder() -> (Send, Arc<Mutex<Vec<Value>>>) {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&seen);
        (
            Arc::new(move |v| {
                sink.lock().push(v);
                true
            }),
            seen,
        )
    }

    #[tokio::test(start_paused = true)]
    async fn a_quiet_call_gets_a_beat_every_interval_with_increasing_progress() {
        let (send, seen) = recorder();
        let beat = Heartbeat::new(Value::from("tok"), Duration::from_secs(10), send);
        let stop = tokio_util::sync::CancellationToken::new();
        let ticker = tokio::spawn(Arc::clone(&beat).run(stop.clone()));
        tokio::time::sleep(Duration::from_secs(35)).await;
        stop.cancel();
        ticker.await.unwrap();
        let seen = seen.lock();
        assert_eq!(seen.len(), 3, "{seen:?}");
        let values: Vec<f64> = seen
            .iter()
            .map(|n| n["params"]["progress"].as_f64().unwrap())
            .collect();
        assert!(values.windows(2).all(|w| w[1] > w[0]), "{values:?}");
        assert_eq!(seen[0]["params"]["progressToken"], "tok");
        assert_eq!(
            seen[2]["params"]["message"], "still working after 30s",
            "{seen:?}"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn the_tools_own_progress_pushes_the_next_beat_back_and_sets_its_scale() {
        let (send, seen) = recorder();
        let beat = Heartbeat::new(Value::from(7), Duration::from_secs(10), send);
        tokio::time::sleep(Duration::from_secs(8)).await;
        beat.forward(&Progress {
            progress: 3.0,
            total: Some(10.0),
            message: None,
        });
        tokio::time::sleep(Duration::from_secs(8)).await;
        beat.beat_if_due(Some("step 3"));
        assert_eq!(seen.lock().len(), 1, "not due yet: the tool spoke 8 s ago");
        tokio::time::sleep(Duration::from_secs(2)).await;
        beat.beat_if_due(Some("step 3"));
        let seen = seen.lock();
        assert_eq!(seen.len(), 2);
        let p = &seen[1]["params"];
        assert!(p["progress"].as_f64().unwrap() > 3.0);
        assert_eq!(p["total"], 10.0);
        assert_eq!(p["message"], "still working after 18s: step 3");
    }
}

//! The change feed over LISTEN/NOTIFY: one listening connection per store, shared by
//! every subscriber.
//!
//! The trigger of `migrations/0001_init.sql` notifies the task id on the schema's
//! channel inside each writing transaction, so PostgreSQL delivers it when (and only
//! if) the change commits, from whichever replica wrote it. A pump task forwards each
//! notification to a broadcast channel that [`ChangeFeed`]s read. When the connection
//! drops, PostgreSQL forgets the subscription and notifications sent meanwhile are
//! lost; the pump reconnects, listens again, and only then sends [`Change::Missed`], so
//! a subscriber that re-reads on `Missed` cannot miss a change made after its re-read.

use super::row::classify;
use crate::change::{Change, ChangeFeed, ChangeHub};
use crate::error::StoreError;
use mcp_tasks_protocol::TaskId;
use sqlx::postgres::{PgListener, PgPool, PgPoolOptions};
use std::time::Duration;
use tokio::sync::Mutex;
use tokio::task::JoinHandle;

/// How long the pump waits before trying to re-establish a failed listening connection.
pub const RECONNECT_DELAY: Duration = Duration::from_secs(1);

/// The lazily started listener of one store (shared by its clones). Dropping it stops
/// the pump, which ends every feed.
#[derive(Debug)]
pub(super) struct Listener {
    /// Where the listening connection comes from: the store's connect options, in a
    /// pool of its own so that it never takes a connection from queries.
    pool: PgPool,
    /// The schema's NOTIFY channel.
    channel: String,
    running: Mutex<Option<Running>>,
}

#[derive(Debug)]
struct Running {
    hub: ChangeHub,
    pump: JoinHandle<()>,
}

impl Listener {
    /// A listener on `channel` using connections like those of `queries`. Connects
    /// nothing until the first [`Listener::subscribe`].
    pub(super) fn new(queries: &PgPool, channel: String) -> Self {
        let pool = PgPoolOptions::new()
            .max_connections(1)
            .idle_timeout(None)
            .max_lifetime(None)
            .connect_lazy_with((*queries.connect_options()).clone());
        Self {
            pool,
            channel,
            running: Mutex::new(None),
        }
    }

    /// A feed of every change committed after this returns. The first call (or the
    /// first after the pump stopped) opens the listening connection.
    pub(super) async fn subscribe(&self) -> Result<ChangeFeed, StoreError> {
        let mut running = self.running.lock().await;
        if let Some(r) = running.as_ref().filter(|r| !r.pump.is_finished()) {
            return Ok(r.hub.subscribe());
        }
        let listener = listen(&self.pool, &self.channel).await?;
        let hub = ChangeHub::default();
        // Subscribe before the pump can publish anything.
        let feed = hub.subscribe();
        let pump = tokio::spawn(pump(
            listener,
            self.pool.clone(),
            self.channel.clone(),
            hub.clone(),
        ));
        *running = Some(Running { hub, pump });
        Ok(feed)
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        if let Some(running) = self.running.get_mut().take() {
            running.pump.abort();
        }
    }
}

/// A connection that listens on `channel`.
async fn listen(pool: &PgPool, channel: &str) -> Result<PgListener, StoreError> {
    let mut listener = PgListener::connect_with(pool).await.map_err(classify)?;
    listener.listen(channel).await.map_err(classify)?;
    Ok(listener)
}

/// Forwards notifications until aborted, re-establishing the subscription whenever
/// the connection fails.
async fn pump(mut listener: PgListener, pool: PgPool, channel: String, hub: ChangeHub) {
    loop {
        match listener.try_recv().await {
            Ok(Some(notification)) => hub.publish(change_of(notification.payload())),
            // The connection dropped; sqlx reconnected and listens again already.
            Ok(None) => {
                tracing::warn!(%channel, "change feed connection lost and re-established");
                hub.publish(Change::Missed);
            }
            Err(err) => {
                tracing::warn!(%channel, error = %err, "change feed connection failed");
                listener = reconnect(&pool, &channel).await;
                hub.publish(Change::Missed);
            }
        }
    }
}

/// A fresh listening connection, retried every [`RECONNECT_DELAY`] until it works.
async fn reconnect(pool: &PgPool, channel: &str) -> PgListener {
    loop {
        tokio::time::sleep(RECONNECT_DELAY).await;
        match listen(pool, channel).await {
            Ok(listener) => return listener,
            Err(err) => tracing::warn!(%channel, error = %err, "change feed cannot reconnect yet"),
        }
    }
}

/// The change a notification's payload announces: `ID VERSION` for an insert or an
/// update (migration 0012), `ID` for a delete (and from replicas of older versions).
fn change_of(payload: &str) -> Change {
    match payload.split_once(' ') {
        Some((id, version)) => match version.parse::<u64>() {
            Ok(version) => Change::TaskVersion(TaskId::from_string(id), version),
            Err(_) => Change::Task(TaskId::from_string(payload)),
        },
        None => Change::Task(TaskId::from_string(payload)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_payload_with_a_version_says_which() {
        assert_eq!(
            change_of("abc 7"),
            Change::TaskVersion(TaskId::from_string("abc"), 7)
        );
        assert_eq!(change_of("abc"), Change::Task(TaskId::from_string("abc")));
        assert_eq!(
            change_of("abc x"),
            Change::Task(TaskId::from_string("abc x"))
        );
    }
}

//! PostgreSQL helpers of the CLI tests: a test schema's URL with a password in it, and
//! a TCP forwarder in front of the server that a test can drop to make the database
//! go away.

use std::sync::{Arc, Mutex};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::AbortHandle;

/// `url` with `password` as its password (the test cluster trusts every local
/// connection, so any password is accepted).
pub fn with_password(url: &str, password: &str) -> String {
    let (scheme, rest) = url.split_once("://").expect("a postgres:// URL");
    let authority_end = rest.find('/').unwrap_or(rest.len());
    let (authority, path) = rest.split_at(authority_end);
    let (user, host) = match authority.rsplit_once('@') {
        Some((userinfo, host)) => (userinfo.split(':').next().unwrap_or("postgres"), host),
        None => ("postgres", authority),
    };
    format!("{scheme}://{user}:{password}@{host}{path}")
}

/// The `host:port` of a PostgreSQL URL.
pub fn host_port(url: &str) -> String {
    let rest = url.split_once("://").expect("a postgres:// URL").1;
    let authority = &rest[..rest.find('/').unwrap_or(rest.len())];
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    if host.contains(':') {
        host.to_string()
    } else {
        format!("{host}:5432")
    }
}

/// `url` pointed at `addr` instead of its own host and port.
pub fn via(url: &str, addr: std::net::SocketAddr) -> String {
    url.replacen(&host_port(url), &addr.to_string(), 1)
}

/// A TCP forwarder from a loopback port to `target`, until [`Forwarder::close`]:
/// then the port refuses connections and every forwarded one is cut.
pub struct Forwarder {
    /// Where it listens.
    pub addr: std::net::SocketAddr,
    tasks: Arc<Mutex<Vec<AbortHandle>>>,
}

impl Forwarder {
    /// Starts forwarding (on a port bound here, handed to the accept loop).
    pub async fn start(target: String) -> Forwarder {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let addr = listener.local_addr().expect("addr");
        let tasks: Arc<Mutex<Vec<AbortHandle>>> = Arc::default();
        let held = Arc::clone(&tasks);
        let accept = tokio::spawn(async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                let target = target.clone();
                let pipe = tokio::spawn(async move {
                    if let Ok(mut outbound) = TcpStream::connect(&target).await {
                        let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                    }
                });
                held.lock().unwrap().push(pipe.abort_handle());
            }
        });
        tasks.lock().unwrap().push(accept.abort_handle());
        Forwarder { addr, tasks }
    }

    /// Stops listening and cuts every forwarded connection.
    pub fn close(&self) {
        for task in self.tasks.lock().unwrap().drain(..) {
            task.abort();
        }
    }
}

impl Drop for Forwarder {
    fn drop(&mut self) {
        self.close();
    }
}

//! What a hostile or careless HTTP client can hold: slow headers, short bodies, idle
//! sockets, more sockets than the limit; and what an ordinary client gets: a reused
//! connection that answers without waiting on delayed ACKs, SSE streams that stay open.
//!
//! These clients are raw sockets with default options (no `TCP_NODELAY`), like an
//! ordinary `http.client` user, because the point is what the server does to them.
#![allow(clippy::unwrap_used, clippy::expect_used, missing_docs)]

mod common;

use common::{start_server_with, TestServer};
use mcp_tasks_server::transport::connections::HttpLimits;
use mcp_tasks_server::ServerConfig;
use serde_json::{json, Value};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Generous bound for "the server closed it": the limits below are 300 ms, so a
/// connection still open after this was never going to be closed.
const CLOSED_WITHIN: Duration = Duration::from_secs(10);

fn limits() -> HttpLimits {
    HttpLimits {
        header_timeout: Duration::from_millis(300),
        body_timeout: Duration::from_millis(300),
        idle_timeout: Duration::from_millis(300),
        max_connections: 8,
        sse_keep_alive: Duration::from_millis(100),
    }
}

async fn server(limits: HttpLimits) -> TestServer {
    start_server_with(ServerConfig {
        http: limits,
        ..ServerConfig::default()
    })
    .await
}

fn addr(s: &TestServer) -> String {
    s.url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_string()
}

/// Reads until the peer closes; returns what was read. Fails the test if the socket
/// is still open after [`CLOSED_WITHIN`].
async fn read_to_close(stream: &mut TcpStream) -> String {
    let mut all = Vec::new();
    let mut buf = [0u8; 4096];
    let deadline = tokio::time::Instant::now() + CLOSED_WITHIN;
    loop {
        match tokio::time::timeout_at(deadline, stream.read(&mut buf)).await {
            Err(_) => panic!(
                "the server kept the connection open; read so far: {}",
                String::from_utf8_lossy(&all)
            ),
            Ok(Ok(0)) | Ok(Err(_)) => return String::from_utf8_lossy(&all).into_owned(),
            Ok(Ok(n)) => all.extend_from_slice(&buf[..n]),
        }
    }
}

/// Whether the server closed `stream` already (a read sees EOF or a reset at once).
async fn is_closed(stream: &mut TcpStream) -> bool {
    let mut buf = [0u8; 64];
    matches!(
        tokio::time::timeout(Duration::from_millis(50), stream.read(&mut buf)).await,
        Ok(Ok(0)) | Ok(Err(_))
    )
}

#[tokio::test]
async fn a_client_that_never_finishes_its_headers_is_disconnected() {
    let s = server(limits()).await;
    let mut stream = TcpStream::connect(addr(&s)).await.unwrap();
    stream
        .write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: applic")
        .await
        .unwrap();
    let started = Instant::now();
    read_to_close(&mut stream).await;
    assert!(started.elapsed() >= Duration::from_millis(250));
}

#[tokio::test]
async fn a_body_shorter_than_its_content_length_gets_408_and_a_closed_connection() {
    let s = server(limits()).await;
    let mut stream = TcpStream::connect(addr(&s)).await.unwrap();
    stream
        .write_all(
            b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
              Accept: application/json\r\nContent-Length: 100\r\n\r\n{\"jsonrpc\":",
        )
        .await
        .unwrap();
    let answer = read_to_close(&mut stream).await;
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("--http-body-timeout"), "{answer}");
}

#[tokio::test]
async fn idle_connections_are_closed_new_and_kept_alive_alike() {
    let s = server(limits()).await;
    // Never sends anything.
    let mut silent = TcpStream::connect(addr(&s)).await.unwrap();
    // One request, then keep-alive silence.
    let mut used = TcpStream::connect(addr(&s)).await.unwrap();
    let reply = exchange(
        &mut used,
        &post_request(&initialize_body(), None, "application/json"),
    )
    .await;
    assert_eq!(reply.status, 200);
    read_to_close(&mut silent).await;
    read_to_close(&mut used).await;
}

#[tokio::test]
async fn twice_the_connection_limit_of_idle_sockets_does_not_stop_a_normal_request() {
    let limits = HttpLimits {
        // Long enough that no idle socket is closed by its timeout during the test:
        // only the limit can close them.
        idle_timeout: Duration::from_secs(60),
        header_timeout: Duration::from_secs(60),
        ..limits()
    };
    let max = limits.max_connections;
    let s = server(limits).await;
    let mut idle = Vec::new();
    for _ in 0..2 * max {
        idle.push(TcpStream::connect(addr(&s)).await.unwrap());
    }
    // A normal client still gets its answer.
    let http = reqwest::Client::new();
    let answer = tokio::time::timeout(
        CLOSED_WITHIN,
        http.post(&s.url)
            .header("accept", "application/json")
            .json(&initialize_body())
            .send(),
    )
    .await
    .expect("a normal request was not answered")
    .unwrap();
    assert_eq!(answer.status(), 200);
    // The server made room by closing the oldest idle sockets: at most `max` are open.
    let mut closed = Vec::new();
    for stream in &mut idle {
        closed.push(is_closed(stream).await);
    }
    let count = closed.iter().filter(|c| **c).count();
    assert!(
        count > max,
        "only {count} of {} idle sockets closed",
        2 * max
    );
    // "Longest idle" is measured in milliseconds, and sockets opened in one
    // millisecond tie (the server picks any of them), so the very first socket may
    // outlive a later one (a CI run saw it). The test asks only that room was made
    // among the older sockets, not by refusing the newest.
    assert!(
        closed[..max].iter().any(|c| *c),
        "no socket of the older half was closed: {closed:?}"
    );
}

#[tokio::test]
async fn an_sse_stream_outlives_the_idle_timeout_with_keep_alive_comments() {
    let s = server(limits()).await;
    let mut stream = TcpStream::connect(addr(&s)).await.unwrap();
    let session = initialize(&mut stream).await;
    let get = format!(
        "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\nMcp-Session-Id: {session}\r\n\r\n"
    );
    stream.write_all(get.as_bytes()).await.unwrap();
    // Read for ten idle timeouts: the stream stays open and comments keep coming.
    let mut seen = String::new();
    let mut buf = [0u8; 1024];
    let until = tokio::time::Instant::now() + 10 * limits().idle_timeout;
    while tokio::time::Instant::now() < until {
        match tokio::time::timeout_at(until, stream.read(&mut buf)).await {
            Err(_) => break,
            Ok(Ok(0)) | Ok(Err(_)) => panic!("the SSE stream was closed: {seen}"),
            Ok(Ok(n)) => seen.push_str(&String::from_utf8_lossy(&buf[..n])),
        }
    }
    assert!(seen.starts_with("HTTP/1.1 200"), "{seen}");
    let comments = seen.matches("\n:").count();
    assert!(comments >= 5, "{comments} keep-alive comments: {seen}");
}

/// The ~40 ms stall of Nagle against a delayed ACK on a reused connection shows up in
/// every call; a median under 20 ms is far from it on loopback however noisy the
/// machine (a call here takes about a millisecond).
#[tokio::test]
async fn a_reused_connection_answers_an_sse_tool_call_without_a_delayed_ack_stall() {
    let s = server(HttpLimits::default()).await;
    let mut stream = TcpStream::connect(addr(&s)).await.unwrap();
    let session = initialize(&mut stream).await;
    let mut times = Vec::new();
    for id in 0..15 {
        let body = json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":0}}});
        let request = post_request(&body, Some(&session), "application/json, text/event-stream");
        let started = Instant::now();
        let reply = exchange(&mut stream, &request).await;
        times.push(started.elapsed());
        assert_eq!(reply.status, 200);
        assert!(reply.body.contains("slept 0 ms"), "{}", reply.body);
    }
    times.sort();
    let median = times[times.len() / 2];
    assert!(
        median < Duration::from_millis(20),
        "median {median:?} per call on a reused connection: {times:?}"
    );
}

struct RawReply {
    status: u16,
    headers: String,
    body: String,
}

fn post_request(body: &Value, session: Option<&str>, accept: &str) -> String {
    let body = body.to_string();
    let session = session
        .map(|s| format!("Mcp-Session-Id: {s}\r\n"))
        .unwrap_or_default();
    format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: {accept}\r\n{session}Content-Length: {}\r\n\r\n{body}",
        body.len()
    )
}

fn initialize_body() -> Value {
    json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
        "protocolVersion":"2025-11-25","capabilities":{},
        "clientInfo":{"name":"connections-test","version":"0"}}})
}

/// Opens a 2025-11-25 session on `stream`; returns its id.
async fn initialize(stream: &mut TcpStream) -> String {
    let init = post_request(&initialize_body(), None, "application/json");
    let reply = exchange(stream, &init).await;
    let session = reply
        .headers
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .starts_with("mcp-session-id:")
                .then(|| l.split_once(':').unwrap().1.trim().to_string())
        })
        .unwrap_or_else(|| panic!("no session id: {}", reply.headers));
    let done = json!({"jsonrpc":"2.0","method":"notifications/initialized"});
    let reply = exchange(
        stream,
        &post_request(&done, Some(&session), "application/json"),
    )
    .await;
    assert_eq!(reply.status, 202);
    session
}

/// Sends one request and reads one whole response (Content-Length or chunked).
async fn exchange(stream: &mut TcpStream, request: &str) -> RawReply {
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut data = Vec::new();
    let mut buf = [0u8; 8192];
    let deadline = tokio::time::Instant::now() + CLOSED_WITHIN;
    loop {
        if let Some(reply) = parse(&data) {
            return reply;
        }
        let n = tokio::time::timeout_at(deadline, stream.read(&mut buf))
            .await
            .expect("no whole response in time")
            .unwrap();
        assert!(
            n > 0,
            "closed mid-response: {}",
            String::from_utf8_lossy(&data)
        );
        data.extend_from_slice(&buf[..n]);
    }
}

/// A whole response in `data`, if it has arrived.
fn parse(data: &[u8]) -> Option<RawReply> {
    let text = std::str::from_utf8(data).ok()?;
    let (headers, rest) = text.split_once("\r\n\r\n")?;
    let status = headers.get(9..12)?.parse().ok()?;
    let lower = headers.to_ascii_lowercase();
    let body = if let Some(len) = lower
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
    {
        let len: usize = len.trim().parse().ok()?;
        rest.get(..len)?.to_string()
    } else if lower.contains("transfer-encoding: chunked") {
        let mut body = String::new();
        let mut rest = rest;
        loop {
            let (size, after) = rest.split_once("\r\n")?;
            let size = usize::from_str_radix(size.trim(), 16).ok()?;
            if size == 0 {
                break;
            }
            body.push_str(after.get(..size)?);
            rest = after.get(size + 2..)?;
        }
        body
    } else {
        String::new()
    };
    Some(RawReply {
        status,
        headers: headers.to_string(),
        body,
    })
}

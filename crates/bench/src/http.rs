//! A minimal HTTP/1.1 client for one keep-alive connection: `POST` a JSON body, read
//! one response (`Content-Length` or chunked), nothing else.
//!
//! It exists so the load generator costs as little CPU per request as possible: the
//! server under test shares the machine's cores with it, and every microsecond the
//! generator burns is one the server does not get. A request is one `write` of a
//! prebuilt header plus body; a response is parsed in place with `httparse`, with no
//! per-request allocation besides the body buffer's growth.

use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::error::BenchError;

/// Longest wait for one response before the request counts as failed.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);
/// Most response headers we parse.
const MAX_HEADERS: usize = 32;
/// Largest response we accept (a benchmark reply is a few hundred bytes).
const MAX_RESPONSE_BYTES: usize = 16 << 20;

/// Where a server listens: host and port for the socket and `Host` header, plus path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// `host:port`.
    pub authority: String,
    /// The request path, e.g. `/mcp`.
    pub path: String,
}

impl Endpoint {
    /// Parses `http://host:port/path` (only plain HTTP: the bench runs on loopback).
    ///
    /// # Errors
    /// [`BenchError::Usage`] for another scheme or a URL without a port.
    pub fn parse(url: &str) -> Result<Self, BenchError> {
        let rest = url.strip_prefix("http://").ok_or_else(|| {
            BenchError::Usage(format!(
                "'{url}': only http:// URLs are supported (the bench measures loopback servers)"
            ))
        })?;
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, "/"),
        };
        if authority.is_empty() || !authority.contains(':') {
            return Err(BenchError::Usage(format!(
                "'{url}': give the port explicitly, e.g. http://127.0.0.1:8080/mcp"
            )));
        }
        Ok(Endpoint {
            authority: authority.to_string(),
            path: path.to_string(),
        })
    }
}

/// One response, borrowed from the connection's buffers until the next request.
#[derive(Debug)]
pub struct Response<'a> {
    /// HTTP status code.
    pub status: u16,
    /// Whether the body is `text/event-stream`.
    pub event_stream: bool,
    /// The `Mcp-Session-Id` header, when present.
    pub session_id: Option<String>,
    /// The body, de-chunked.
    pub body: &'a [u8],
}

/// A keep-alive HTTP/1.1 connection that sends `POST`s to one endpoint.
#[derive(Debug)]
pub struct HttpConn {
    stream: TcpStream,
    /// `POST /path HTTP/1.1` plus the fixed headers, ending before `Content-Length`.
    head: Vec<u8>,
    out: Vec<u8>,
    buf: Vec<u8>,
    body: Vec<u8>,
}

impl HttpConn {
    /// Connects; with `nodelay`, Nagle is disabled (each request is one write;
    /// waiting would only add latency), without it the socket keeps its default
    /// options, as an ordinary client's does.
    ///
    /// # Errors
    /// [`BenchError::Io`] when the connection fails.
    pub async fn connect(
        endpoint: &Endpoint,
        accept: &str,
        nodelay: bool,
    ) -> Result<Self, BenchError> {
        let stream = TcpStream::connect(&endpoint.authority)
            .await
            .map_err(|e| BenchError::Io(format!("connecting to {}", endpoint.authority), e))?;
        if nodelay {
            stream
                .set_nodelay(true)
                .map_err(|e| BenchError::Io("setting TCP_NODELAY".into(), e))?;
        }
        let head = format!(
            "POST {} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: {accept}\r\n",
            endpoint.path, endpoint.authority
        )
        .into_bytes();
        Ok(HttpConn {
            stream,
            head,
            out: Vec::with_capacity(1024),
            buf: Vec::with_capacity(8192),
            body: Vec::with_capacity(4096),
        })
    }

    /// The port of the server at the other end (0 when the socket cannot say): where
    /// several servers listen on one host, it tells which one this connection reaches.
    pub fn peer_port(&self) -> u16 {
        self.stream.peer_addr().map_or(0, |a| a.port())
    }

    /// Adds a header sent with every later request.
    pub fn add_header(&mut self, name: &str, value: &str) {
        self.head
            .extend_from_slice(format!("{name}: {value}\r\n").as_bytes());
    }

    /// Sends `body` and reads the whole response.
    ///
    /// # Errors
    /// [`BenchError::Io`] on socket errors, [`BenchError::Http`] on a malformed
    /// response or a timeout.
    pub async fn post(&mut self, body: &[u8]) -> Result<Response<'_>, BenchError> {
        self.post_with(body, &[]).await
    }

    /// Sends `body` with `headers` added to this request only (the 2026-07-28 wire's
    /// `Mcp-Method` and `Mcp-Name`) and reads the whole response.
    ///
    /// # Errors
    /// As [`HttpConn::post`].
    pub async fn post_with(
        &mut self,
        body: &[u8],
        headers: &[(&str, &str)],
    ) -> Result<Response<'_>, BenchError> {
        self.out.clear();
        self.out.extend_from_slice(&self.head);
        for (name, value) in headers {
            self.out.extend_from_slice(name.as_bytes());
            self.out.extend_from_slice(b": ");
            self.out.extend_from_slice(value.as_bytes());
            self.out.extend_from_slice(b"\r\n");
        }
        self.out
            .extend_from_slice(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes());
        self.out.extend_from_slice(body);
        match tokio::time::timeout(REQUEST_TIMEOUT, self.exchange()).await {
            Ok(r) => r,
            Err(_) => Err(BenchError::Http(format!(
                "no response within {} s",
                REQUEST_TIMEOUT.as_secs()
            ))),
        }
    }

    async fn exchange(&mut self) -> Result<Response<'_>, BenchError> {
        self.stream
            .write_all(&self.out)
            .await
            .map_err(|e| BenchError::Io("sending a request".into(), e))?;
        self.buf.clear();
        let head = loop {
            self.fill().await?;
            if let Some(h) = parse_head(&self.buf)? {
                break h;
            }
        };
        self.body.clear();
        let body_start = head.len;
        match head.framing {
            Framing::Length(n) => {
                while self.buf.len() < body_start + n {
                    self.fill().await?;
                }
                self.body
                    .extend_from_slice(&self.buf[body_start..body_start + n]);
            }
            Framing::Chunked => {
                let mut pos = body_start;
                loop {
                    match decode_chunk(&self.buf, pos, &mut self.body)? {
                        Chunk::Data(next) => pos = next,
                        Chunk::End => break,
                        Chunk::NeedMore => self.fill().await?,
                    }
                }
            }
        }
        Ok(Response {
            status: head.status,
            event_stream: head.event_stream,
            session_id: head.session_id,
            body: &self.body,
        })
    }

    /// Reads more bytes into the buffer.
    async fn fill(&mut self) -> Result<(), BenchError> {
        if self.buf.len() > MAX_RESPONSE_BYTES {
            return Err(BenchError::Http("response larger than 16 MiB".into()));
        }
        self.buf.reserve(8192);
        let n = self
            .stream
            .read_buf(&mut self.buf)
            .await
            .map_err(|e| BenchError::Io("reading a response".into(), e))?;
        if n == 0 {
            return Err(BenchError::Http(
                "the server closed the connection mid-response".into(),
            ));
        }
        Ok(())
    }
}

#[derive(Debug, PartialEq)]
enum Framing {
    Length(usize),
    Chunked,
}

#[derive(Debug, PartialEq)]
struct Head {
    len: usize,
    status: u16,
    framing: Framing,
    event_stream: bool,
    session_id: Option<String>,
}

/// Parses a response head; `None` while incomplete.
fn parse_head(buf: &[u8]) -> Result<Option<Head>, BenchError> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut resp = httparse::Response::new(&mut headers);
    let len = match resp.parse(buf) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(e) => return Err(BenchError::Http(format!("malformed response head: {e}"))),
    };
    let status = resp.code.unwrap_or(0);
    let mut framing = None;
    let mut event_stream = false;
    let mut session_id = None;
    for h in resp.headers.iter() {
        if h.name.eq_ignore_ascii_case("content-length") {
            let n = std::str::from_utf8(h.value)
                .ok()
                .and_then(|s| s.trim().parse::<usize>().ok())
                .ok_or_else(|| BenchError::Http("bad Content-Length".into()))?;
            framing = Some(Framing::Length(n));
        } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
            if h.value.eq_ignore_ascii_case(b"chunked") {
                framing = Some(Framing::Chunked);
            }
        } else if h.name.eq_ignore_ascii_case("content-type") {
            event_stream = h.value.starts_with(b"text/event-stream");
        } else if h.name.eq_ignore_ascii_case("mcp-session-id") {
            session_id = std::str::from_utf8(h.value).ok().map(str::to_string);
        }
    }
    let framing = match framing {
        Some(f) => f,
        // No body for these; anything else without framing would end at EOF, which a
        // keep-alive client cannot use.
        None if status == 204 || status == 304 || (100..200).contains(&status) => {
            Framing::Length(0)
        }
        None => {
            return Err(BenchError::Http(format!(
                "HTTP {status} response without Content-Length or chunked encoding"
            )))
        }
    };
    Ok(Some(Head {
        len,
        status,
        framing,
        event_stream,
        session_id,
    }))
}

#[derive(Debug, PartialEq)]
enum Chunk {
    /// A chunk was appended to the body; the next one starts at this offset.
    Data(usize),
    /// The last chunk and the empty trailer were read.
    End,
    /// The buffer ends mid-chunk.
    NeedMore,
}

/// Decodes the chunk starting at `pos` of `buf`, appending its data to `body`.
fn decode_chunk(buf: &[u8], pos: usize, body: &mut Vec<u8>) -> Result<Chunk, BenchError> {
    let rest = &buf[pos..];
    let Some(line_end) = rest.windows(2).position(|w| w == b"\r\n") else {
        return Ok(Chunk::NeedMore);
    };
    let size_text = std::str::from_utf8(&rest[..line_end])
        .map_err(|_| BenchError::Http("bad chunk size".into()))?;
    let size_text = size_text.split(';').next().unwrap_or("").trim();
    let size = usize::from_str_radix(size_text, 16)
        .map_err(|_| BenchError::Http(format!("bad chunk size '{size_text}'")))?;
    let data_start = line_end + 2;
    if size == 0 {
        // No trailers expected: the last chunk is followed by an empty line.
        if rest.len() < data_start + 2 {
            return Ok(Chunk::NeedMore);
        }
        return Ok(Chunk::End);
    }
    if rest.len() < data_start + size + 2 {
        return Ok(Chunk::NeedMore);
    }
    body.extend_from_slice(&rest[data_start..data_start + size]);
    Ok(Chunk::Data(pos + data_start + size + 2))
}

/// The JSON-RPC response carried by an SSE body: the data of the last event whose
/// payload has a `result` or an `error` (priming and notification events are skipped).
pub fn sse_response(body: &[u8]) -> Option<Vec<u8>> {
    let mut found = None;
    let mut data: Vec<u8> = Vec::new();
    let flush = |data: &mut Vec<u8>, found: &mut Option<Vec<u8>>| {
        if !data.is_empty() {
            let is_reply = contains(data, b"\"result\"") || contains(data, b"\"error\"");
            if is_reply {
                *found = Some(std::mem::take(data));
            }
            data.clear();
        }
    };
    for line in body.split(|&b| b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty() {
            flush(&mut data, &mut found);
        } else if let Some(d) = line.strip_prefix(b"data:") {
            let d = d.strip_prefix(b" ").unwrap_or(d);
            if !data.is_empty() {
                data.push(b'\n');
            }
            data.extend_from_slice(d);
        }
    }
    flush(&mut data, &mut found);
    found
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoint_parses_host_port_and_path() {
        let e = Endpoint::parse("http://127.0.0.1:8080/mcp").expect("valid");
        assert_eq!(e.authority, "127.0.0.1:8080");
        assert_eq!(e.path, "/mcp");
        assert_eq!(
            Endpoint::parse("http://localhost:1").expect("valid").path,
            "/"
        );
        assert!(Endpoint::parse("https://x:1/mcp").is_err());
        assert!(Endpoint::parse("http://localhost/mcp").is_err());
    }

    #[test]
    fn head_with_length_and_session() {
        let raw = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nmcp-session-id: abc\r\ncontent-length: 2\r\n\r\n{}";
        let h = parse_head(raw).expect("ok").expect("complete");
        assert_eq!(h.status, 200);
        assert_eq!(h.framing, Framing::Length(2));
        assert_eq!(h.session_id.as_deref(), Some("abc"));
        assert!(!h.event_stream);
        assert_eq!(&raw[h.len..], b"{}");
        assert!(parse_head(b"HTTP/1.1 200 OK\r\ncontent-le")
            .expect("ok")
            .is_none());
    }

    #[test]
    fn chunked_body_decodes_across_chunks() {
        let raw = b"4\r\nWiki\r\n5;x=y\r\npedia\r\n0\r\n\r\n";
        let mut body = Vec::new();
        let mut pos = 0;
        loop {
            match decode_chunk(raw, pos, &mut body).expect("valid") {
                Chunk::Data(next) => pos = next,
                Chunk::End => break,
                Chunk::NeedMore => panic!("input is complete"),
            }
        }
        assert_eq!(body, b"Wikipedia");
        assert_eq!(
            decode_chunk(b"4\r\nWi", 0, &mut Vec::new()).expect("valid"),
            Chunk::NeedMore
        );
        assert!(decode_chunk(b"zz\r\n", 0, &mut Vec::new()).is_err());
    }

    #[test]
    fn sse_response_skips_priming_and_notifications() {
        let body = b"id: 0\nretry: 3000\ndata:\n\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n";
        let got = sse_response(body).expect("a reply");
        assert_eq!(got, br#"{"jsonrpc":"2.0","id":1,"result":{}}"#);
        assert!(sse_response(b"data: {\"method\":\"x\"}\n\n").is_none());
    }
}

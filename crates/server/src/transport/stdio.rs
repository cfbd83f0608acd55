//! stdio transport: one JSON-RPC message per line in, one per line out. One session per
//! process; its principal is the local process.

use mcp_tasks_protocol::error_code::INVALID_REQUEST;
use mcp_tasks_protocol::jsonrpc::{self, Incoming, RpcError};
use mcp_tasks_protocol::methods::INITIALIZE;
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

use crate::session::{Session, OUTBOUND_CAPACITY};
use crate::shared::Shared;

/// How long pending replies may still be written after stdin closes.
const DRAIN_AFTER_EOF: Duration = Duration::from_secs(2);

/// Serves one session over a reader and a writer (stdin/stdout) until the input ends or
/// `shutdown` completes, then drains the engine (resumable tasks handed over, the others
/// given the drain timeout: [`mcp_tasks_engine::Engine::drain`]). Requests are handled
/// concurrently, so a blocking `tasks/result` never holds up a `tasks/get`.
///
/// # Errors
/// I/O errors on the output.
pub async fn serve<R, W>(
    server: impl AsRef<Shared>,
    input: R,
    output: W,
    shutdown: impl std::future::Future<Output = ()>,
) -> std::io::Result<()>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let server = server.as_ref().clone();
    serve_until(server, input, output, shutdown, std::future::pending()).await
}

/// [`serve`], whose drain stops at once when `stop_now` completes (a second signal).
///
/// # Errors
/// I/O errors on the output.
pub async fn serve_until<R, W>(
    server: impl AsRef<Shared>,
    input: R,
    output: W,
    shutdown: impl std::future::Future<Output = ()>,
    stop_now: impl std::future::Future<Output = ()>,
) -> std::io::Result<()>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let server = server.as_ref().clone();
    let session = open_stdio_session(&server);
    let (tx, rx) = mpsc::channel::<Value>(OUTBOUND_CAPACITY);
    session.attach_outbound(tx.clone());
    let writer = tokio::spawn(write_lines(rx, output));

    let max = server.config().max_body_bytes;
    let mut reader = BufReader::new(input);
    tokio::pin!(shutdown);
    loop {
        let line = tokio::select! {
            _ = &mut shutdown => break,
            l = read_line(&mut reader, max) => l,
        };
        let line = match line {
            Ok(Line::End) => break,
            Ok(Line::Text(l)) => l,
            Ok(Line::TooLong) => {
                let err = RpcError::new(
                    INVALID_REQUEST,
                    format!("message longer than {max} bytes rejected (raise --max-body-bytes to allow it)"),
                );
                let _ = tx.send(jsonrpc::error_response(None, &err)).await;
                continue;
            }
            Err(e) => {
                tracing::warn!(error = %e, "stdin read failed");
                break;
            }
        };
        if !line.iter().all(u8::is_ascii_whitespace) {
            handle_line(&server, &session, &tx, &line).await;
        }
    }
    crate::drain::drain_unless(server.engine(), stop_now).await;
    drop(tx);
    session.detach_outbound();
    server.sessions().close(session.id());
    server.inner.shutdown.cancel();
    match tokio::time::timeout(DRAIN_AFTER_EOF, writer).await {
        Ok(Ok(r)) => r,
        _ => Ok(()),
    }
}

/// The one session of this process. Without authentication the process is the
/// principal; with authentication configured, stdio belongs to the local user who
/// started the server, so that user's tasks stay theirs across restarts.
fn open_stdio_session(server: &Shared) -> Arc<Session> {
    if server.config().auth.is_enabled() {
        let user = std::env::var("USER")
            .or_else(|_| std::env::var("LOGNAME"))
            .unwrap_or_else(|_| "unknown".into());
        server.sessions().open_subject(format!("local-user:{user}"))
    } else {
        server
            .sessions()
            .open(Some(format!("process:{}", std::process::id())))
    }
}

/// Writes each outgoing message as one line until every sender is gone. A client that
/// stopped reading (broken pipe) ends the session quietly: nobody is left to answer,
/// which is an ordinary end, not a failure of the server.
async fn write_lines<W: AsyncWrite + Unpin>(
    mut rx: mpsc::Receiver<Value>,
    mut output: W,
) -> std::io::Result<()> {
    while let Some(msg) = rx.recv().await {
        let mut line = msg.to_string();
        line.push('\n');
        let written = match output.write_all(line.as_bytes()).await {
            Ok(()) => output.flush().await,
            Err(e) => Err(e),
        };
        match written {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => return Ok(()),
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Parses one input line and handles it. `initialize` and notifications are handled in
/// order, before the next line is read, so a client that pipelines its first requests
/// behind `initialize` finds the session ready; other requests run concurrently, so a
/// blocking `tasks/result` never holds up a `tasks/get`.
async fn handle_line(
    server: &Shared,
    session: &Arc<Session>,
    tx: &mpsc::Sender<Value>,
    line: &[u8],
) {
    let message = match jsonrpc::parse(line) {
        Ok(message) => message,
        Err(rejected) => {
            let _ = tx.send(rejected.to_response()).await;
            return;
        }
    };
    let in_order = !matches!(&message, Incoming::Request { method, .. } if method != INITIALIZE);
    if in_order {
        if let Some(reply) =
            crate::wire::v2025_11_25::handle(server, session, message, Some(tx.clone())).await
        {
            let _ = tx.send(reply).await;
        }
        return;
    }
    let (server, session, tx) = (server.clone(), session.clone(), tx.clone());
    tokio::spawn(async move {
        if let Some(reply) =
            crate::wire::v2025_11_25::handle(&server, &session, message, Some(tx.clone())).await
        {
            let _ = tx.send(reply).await;
        }
    });
}

/// One framed line of input.
enum Line {
    /// A line's bytes, without the newline.
    Text(Vec<u8>),
    /// A line longer than the limit; its bytes were discarded up to the newline.
    TooLong,
    /// End of input.
    End,
}

/// Reads one newline-terminated line, never buffering more than `max` bytes of it: a
/// longer line is skipped to its end and reported, so the session can go on.
async fn read_line<R: AsyncBufRead + Unpin>(reader: &mut R, max: usize) -> std::io::Result<Line> {
    let mut line = Vec::new();
    let mut too_long = false;
    loop {
        let buf = reader.fill_buf().await?;
        if buf.is_empty() {
            return Ok(if too_long {
                Line::TooLong
            } else if line.is_empty() {
                Line::End
            } else {
                Line::Text(line)
            });
        }
        let (chunk, found_newline) = match buf.iter().position(|b| *b == b'\n') {
            Some(i) => (&buf[..i], true),
            None => (buf, false),
        };
        if !too_long {
            if line.len() + chunk.len() > max {
                too_long = true;
                line = Vec::new();
            } else {
                line.extend_from_slice(chunk);
            }
        }
        let used = chunk.len() + usize::from(found_newline);
        reader.consume(used);
        if found_newline {
            return Ok(if too_long {
                Line::TooLong
            } else {
                Line::Text(line)
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn long_lines_are_skipped_and_reading_goes_on() {
        let input = format!("short\n{}\nafter\nlast-without-newline", "x".repeat(50));
        let mut r = BufReader::with_capacity(8, input.as_bytes());
        assert!(matches!(read_line(&mut r, 10).await, Ok(Line::Text(t)) if t == b"short"));
        assert!(matches!(read_line(&mut r, 10).await, Ok(Line::TooLong)));
        assert!(matches!(read_line(&mut r, 10).await, Ok(Line::Text(t)) if t == b"after"));
        assert!(
            matches!(read_line(&mut r, 100).await, Ok(Line::Text(t)) if t == b"last-without-newline")
        );
        assert!(matches!(read_line(&mut r, 10).await, Ok(Line::End)));
    }
}

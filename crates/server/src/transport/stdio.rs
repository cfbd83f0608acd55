//! stdio transport: one JSON-RPC message per line in, one per line out. One session per
//! process; its principal is the local process.

use futures::StreamExt;
use mcp_tasks_protocol::error_code::INVALID_REQUEST;
use mcp_tasks_protocol::jsonrpc::{self, RpcError};
use serde_json::Value;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio_util::codec::{FramedRead, LinesCodec, LinesCodecError};

use crate::server::McpServer;
use crate::session::OUTBOUND_CAPACITY;

/// How long pending replies may still be written after stdin closes.
const DRAIN_AFTER_EOF: Duration = Duration::from_secs(2);

/// Serves one session over a reader and a writer (stdin/stdout) until the input ends or
/// `shutdown` completes. Requests are handled concurrently, so a blocking `tasks/result`
/// never holds up a `tasks/get`.
///
/// # Errors
/// I/O errors on the output.
pub async fn serve<R, W>(
    server: McpServer,
    input: R,
    output: W,
    shutdown: impl std::future::Future<Output = ()>,
) -> std::io::Result<()>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let session = server.open_session(Some(format!("process:{}", std::process::id())));
    let (tx, mut rx) = mpsc::channel::<Value>(OUTBOUND_CAPACITY);
    session.attach_outbound(tx.clone());
    let writer = tokio::spawn(async move {
        let mut output = output;
        while let Some(msg) = rx.recv().await {
            let mut line = msg.to_string();
            line.push('\n');
            output.write_all(line.as_bytes()).await?;
            output.flush().await?;
        }
        Ok::<(), std::io::Error>(())
    });

    let max = server.config().max_body_bytes;
    let mut lines = FramedRead::new(input, LinesCodec::new_with_max_length(max));
    tokio::pin!(shutdown);
    loop {
        let line = tokio::select! {
            _ = &mut shutdown => break,
            l = lines.next() => l,
        };
        let line = match line {
            None => break,
            Some(Ok(l)) => l,
            Some(Err(LinesCodecError::MaxLineLengthExceeded)) => {
                let err = RpcError::new(
                    INVALID_REQUEST,
                    format!("message longer than {max} bytes rejected (raise --max-body-bytes to allow it)"),
                );
                let _ = tx.send(jsonrpc::error_response(None, &err)).await;
                continue;
            }
            Some(Err(LinesCodecError::Io(e))) => {
                tracing::warn!(error = %e, "stdin read failed");
                break;
            }
        };
        if line.trim().is_empty() {
            continue;
        }
        match jsonrpc::parse(line.as_bytes()) {
            Err(rejected) => {
                let _ = tx.send(rejected.to_response()).await;
            }
            Ok(message) => {
                let server = server.clone();
                let session = session.clone();
                let tx = tx.clone();
                tokio::spawn(async move {
                    if let Some(reply) = server.handle(&session, message, Some(tx.clone())).await {
                        let _ = tx.send(reply).await;
                    }
                });
            }
        }
    }
    drop(tx);
    session.detach_outbound();
    server.close_session(session.id());
    server.shutdown();
    match tokio::time::timeout(DRAIN_AFTER_EOF, writer).await {
        Ok(Ok(r)) => r,
        _ => Ok(()),
    }
}

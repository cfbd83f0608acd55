//! A small incremental reader of `text/event-stream` bodies: bytes in, complete events
//! out. Only what MCP uses: `event`, `data` (joined by newlines), `id`; comments and
//! `retry` are skipped.

/// One complete server-sent event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SseEvent {
    /// The `event:` field; `message` when absent.
    pub(crate) event: String,
    /// The `data:` lines joined with `\n`.
    pub(crate) data: String,
    /// The `id:` field, for `Last-Event-ID` on reconnect.
    pub(crate) id: Option<String>,
}

/// Accumulates bytes and yields events as their terminating blank line arrives.
#[derive(Debug, Default)]
pub(crate) struct SseReader {
    buffer: Vec<u8>,
    event: Option<String>,
    data: Vec<String>,
    id: Option<String>,
}

impl SseReader {
    /// Feeds a chunk; returns the events it completed.
    pub(crate) fn push(&mut self, chunk: &[u8]) -> Vec<SseEvent> {
        self.buffer.extend_from_slice(chunk);
        let mut out = Vec::new();
        while let Some(pos) = self.buffer.iter().position(|b| *b == b'\n') {
            let mut line: Vec<u8> = self.buffer.drain(..=pos).collect();
            line.pop();
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            let line = String::from_utf8_lossy(&line).into_owned();
            if let Some(ev) = self.line(&line) {
                out.push(ev);
            }
        }
        out
    }

    fn line(&mut self, line: &str) -> Option<SseEvent> {
        if line.is_empty() {
            if self.data.is_empty() {
                self.event = None;
                return None;
            }
            return Some(SseEvent {
                event: self.event.take().unwrap_or_else(|| "message".into()),
                data: std::mem::take(&mut self.data).join("\n"),
                id: self.id.clone(),
            });
        }
        if line.starts_with(':') {
            return None;
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line, ""),
        };
        match field {
            "event" => self.event = Some(value.to_string()),
            "data" => self.data.push(value.to_string()),
            "id" => self.id = Some(value.to_string()),
            _ => {}
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_split_across_chunks_are_joined() {
        let mut r = SseReader::default();
        assert!(r.push(b"event: message\r\nda").is_empty());
        assert!(r.push(b"ta: {\"a\":1}\n").is_empty());
        let evs = r.push(b"\n: keep-alive\n\nid: 7\ndata: x\ndata: y\n\n");
        assert_eq!(evs.len(), 2);
        assert_eq!(evs[0].event, "message");
        assert_eq!(evs[0].data, "{\"a\":1}");
        assert_eq!(evs[1].data, "x\ny");
        assert_eq!(evs[1].id.as_deref(), Some("7"));
    }

    #[test]
    fn a_blank_line_without_data_yields_nothing() {
        let mut r = SseReader::default();
        assert!(r.push(b"event: ping\n\n\n").is_empty());
    }
}

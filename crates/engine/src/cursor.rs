//! The opaque `tasks/list` cursor: a keyset position `(created_at, id)`, hex-encoded so
//! that clients pass it back unchanged and cannot read meaning into it.

use chrono::DateTime;
use chrono::Utc;
use mcp_tasks_protocol::TaskId;
use mcp_tasks_store::TaskRecord;

use crate::error::EngineError;

/// The cursor of the page that follows `r`.
pub(crate) fn encode_cursor(r: &TaskRecord) -> String {
    hex::encode(format!("{}|{}", r.created_at.timestamp_millis(), r.id))
}

/// The keyset position a cursor stands for.
///
/// # Errors
/// [`EngineError::InvalidInput`] for a cursor this server did not issue.
pub(crate) fn decode_cursor(cursor: &str) -> Result<(DateTime<Utc>, TaskId), EngineError> {
    let bad = || {
        EngineError::InvalidInput(format!(
            "invalid cursor '{cursor}': pass back a nextCursor from tasks/list unchanged"
        ))
    };
    let bytes = hex::decode(cursor).map_err(|_| bad())?;
    let text = String::from_utf8(bytes).map_err(|_| bad())?;
    let (ms, id) = text.split_once('|').ok_or_else(bad)?;
    let ms: i64 = ms.parse().map_err(|_| bad())?;
    let at = DateTime::from_timestamp_millis(ms).ok_or_else(bad)?;
    if id.is_empty() {
        return Err(bad());
    }
    Ok((at, TaskId::from_string(id)))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn cursors_round_trip_and_junk_is_refused() {
        let at = DateTime::from_timestamp_millis(1_700_000_000_123).unwrap();
        let encoded = hex::encode(format!("{}|{}", at.timestamp_millis(), "abc"));
        let (back, id) = decode_cursor(&encoded).unwrap();
        assert_eq!((back, id.as_str()), (at, "abc"));
        for junk in ["zz", "", &hex::encode("no-separator"), &hex::encode("12|")] {
            assert!(decode_cursor(junk).is_err(), "{junk}");
        }
    }
}

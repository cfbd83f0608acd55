//! Protocol versions and negotiation.
//!
//! A client proposes a version in `initialize`; the server answers with the same one if
//! it speaks it, otherwise with the newest it speaks (the client then decides whether to
//! continue). Which version was agreed decides which task wire a session gets.

/// The 2026-07-28 revision: stateless requests (`server/discover`, per-request `_meta`
/// capabilities); tasks come from the `io.modelcontextprotocol/tasks` extension.
pub const V2026_07_28: &str = "2026-07-28";
/// Versions served on the stateless wire.
pub const STATELESS: &[&str] = &[V2026_07_28];
/// The 2025-11-25 revision: the first with (experimental) tasks.
pub const V2025_11_25: &str = "2025-11-25";
/// The 2025-06-18 revision: no tasks; tools are plain synchronous calls.
pub const V2025_06_18: &str = "2025-06-18";
/// The 2025-03-26 revision, still spoken by older clients.
pub const V2025_03_26: &str = "2025-03-26";

/// Every version this server accepts, newest first.
pub const SUPPORTED: &[&str] = &[V2025_11_25, V2025_06_18, V2025_03_26];

/// The version a server answers with when a client proposes `requested`.
///
/// Returns `requested` itself when we speak it, else our newest version, as the
/// lifecycle section of the spec prescribes.
pub fn negotiate(requested: &str) -> &'static str {
    SUPPORTED
        .iter()
        .copied()
        .find(|v| *v == requested)
        .unwrap_or(SUPPORTED[0])
}

/// Whether a negotiated version carries the 2025-11-25 task wire (`params.task`,
/// `tasks/*`). Older versions only get synchronous tool calls.
pub fn has_tasks(version: &str) -> bool {
    version >= V2025_11_25
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_versions_are_echoed_and_unknown_get_newest() {
        assert_eq!(negotiate("2025-06-18"), V2025_06_18);
        assert_eq!(negotiate("2025-11-25"), V2025_11_25);
        assert_eq!(negotiate("1999-01-01"), V2025_11_25);
        assert!(has_tasks(V2025_11_25));
        assert!(!has_tasks(V2025_06_18));
    }
}

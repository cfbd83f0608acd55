//! The client's journal of the tasks this user started with `mcp-tasks call`, one file
//! per server, so that `list` works on every wire (the Tasks extension has no
//! `tasks/list`) and after the terminal that started a task closed. The spec asks
//! clients to keep the ids of the tasks they create; this is where the CLI keeps them.
//!
//! Where: `$MCP_TASKS_STATE_DIR`, else `$XDG_STATE_HOME/mcp-tasks`, else
//! `~/.local/state/mcp-tasks`: this OS account's own folder, created `0700` (one that
//! is open to others is closed, one that belongs to another account is not used), its
//! files `0600`. One JSON-lines file per server and credential: the server's URL (or
//! its command line for stdio) and, when a bearer token is sent, a hash of it, since
//! the token says who the caller is and a server with authentication shows each
//! principal only its own tasks. A task started with one token is thus never listed,
//! refreshed or forgotten under another: `list --token tok-alice` does not see the
//! agent's tasks as "expired" and drop them. The file is named after the URL, a hash
//! of it and, with a token, a hash of both (never the token). Each line is a whole
//! [`Entry`]; a later line for the same task replaces an earlier one. Entries older
//! than [`MAX_AGE`] and beyond the newest [`MAX_ENTRIES`] are dropped when the file is
//! read, and the file is then rewritten.
//!
//! The journal is a convenience: failing to read or write it is a warning on stderr,
//! never a failed command.

use mcp_tasks_client::{Target, TaskView, Wire};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::fs::OpenOptions;
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Environment variable naming the journal's folder (overrides the XDG state folder).
pub const STATE_DIR_ENV: &str = "MCP_TASKS_STATE_DIR";
/// Entries older than this (by creation) are forgotten.
pub const MAX_AGE: Duration = Duration::from_secs(7 * 24 * 3600);
/// Most entries kept per server; the oldest go first.
pub const MAX_ENTRIES: usize = 1000;

/// One task this user started.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    /// The task id.
    pub task_id: String,
    /// The tool that was called.
    pub tool: String,
    /// When the task was created, in milliseconds since the Unix epoch.
    pub created_ms: i64,
    /// The wire it was created on: `2025-11-25` or `extension`.
    pub wire: String,
    /// The last status seen (`working`, `completed`, ...).
    pub status: String,
    /// The last status message seen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
}

impl Entry {
    /// The entry for a task just created (or just seen) by a call to `tool`.
    pub fn new(task: &TaskView, tool: &str, wire: Wire) -> Self {
        Entry {
            task_id: task.id.as_str().to_string(),
            tool: tool.to_string(),
            created_ms: task.created_at.timestamp_millis(),
            wire: wire_name(wire).to_string(),
            status: task.status.as_str().to_string(),
            status_message: task.status_message.clone(),
        }
    }

    /// When the task was created, as RFC 3339 text.
    pub fn created_text(&self) -> String {
        let ms = u64::try_from(self.created_ms).unwrap_or(0);
        humantime::format_rfc3339_seconds(UNIX_EPOCH + Duration::from_millis(ms)).to_string()
    }
}

/// The name a wire is recorded under.
pub fn wire_name(wire: Wire) -> &'static str {
    match wire {
        Wire::V2026_07_28 => "2026-07-28",
        _ => "2025-11-25",
    }
}

/// The journal of one server.
#[derive(Debug, Clone)]
pub struct Journal {
    path: PathBuf,
}

/// The folder for this user's mcp-tasks state (journals, `wrap`'s task store), as
/// the environment names it; `None` without one (no `HOME`).
pub fn user_state_dir() -> Option<PathBuf> {
    state_dir(
        std::env::var_os(STATE_DIR_ENV).map(PathBuf::from),
        std::env::var_os("XDG_STATE_HOME").map(PathBuf::from),
        std::env::var_os("HOME").map(PathBuf::from),
    )
}

impl Journal {
    /// The journal of `target` as the caller who sends `token` (none: the server's
    /// anonymous caller), in the folder the environment names; `None` when there is no
    /// such folder (no `HOME`).
    pub fn for_target(target: &Target, token: Option<&str>) -> Option<Self> {
        let dir = user_state_dir()?;
        Some(Journal::in_dir(&dir, &target_key(target), token))
    }

    /// The journal of the server `key` (its URL) as the caller who sends `token`, in
    /// `dir`.
    pub fn in_dir(dir: &Path, key: &str, token: Option<&str>) -> Self {
        Journal {
            path: dir.join(file_name(key, token)),
        }
    }

    /// The file this journal is kept in.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Records `entry` (a new task, or a newer state of one already recorded). A
    /// failure is a warning on stderr.
    pub fn record(&self, entry: &Entry) {
        if let Err(e) = self.append(std::slice::from_ref(entry)) {
            self.warn("record", &e);
        }
    }

    /// Records the newer states of tasks the journal has (tasks started elsewhere are
    /// not added). A failure is a warning on stderr.
    pub fn update<'a>(&self, tasks: impl IntoIterator<Item = &'a TaskView>) {
        let entries = self.entries();
        let mut newer = Vec::new();
        for task in tasks {
            let Some(known) = entries.iter().find(|e| e.task_id == task.id.as_str()) else {
                continue;
            };
            let status = task.status.as_str();
            if known.status != status || known.status_message != task.status_message {
                let mut e = known.clone();
                e.status = status.to_string();
                e.status_message = task.status_message.clone();
                newer.push(e);
            }
        }
        if newer.is_empty() {
            return;
        }
        if let Err(e) = self.append(&newer) {
            self.warn("record", &e);
        }
    }

    /// Forgets the tasks with these ids (the server no longer knows them). A failure
    /// is a warning on stderr.
    pub fn forget(&self, ids: &[String]) {
        if ids.is_empty() {
            return;
        }
        let kept: Vec<Entry> = self
            .entries()
            .into_iter()
            .filter(|e| !ids.contains(&e.task_id))
            .collect();
        if let Err(e) = self.rewrite(&kept) {
            self.warn("update", &e);
        }
    }

    /// The recorded tasks, oldest first, without those too old or too many; the file
    /// is compacted when it held more lines than that. A file that cannot be read is
    /// a warning on stderr and no entries.
    pub fn entries(&self) -> Vec<Entry> {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Vec::new(),
            Err(e) => {
                self.warn("read", &e);
                return Vec::new();
            }
        };
        let lines = text.lines().filter(|l| !l.trim().is_empty()).count();
        let entries = fold(&text, now_ms());
        if lines > entries.len() {
            if let Err(e) = self.rewrite(&entries) {
                self.warn("compact", &e);
            }
        }
        entries
    }

    fn append(&self, entries: &[Entry]) -> std::io::Result<()> {
        if let Some(dir) = self.path.parent() {
            private_dir(dir)?;
        }
        let mut text = String::new();
        for e in entries {
            text.push_str(&serde_json::to_string(e).map_err(std::io::Error::other)?);
            text.push('\n');
        }
        let mut file = OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(&self.path)?;
        // A file an older version wrote with the umask's permissions.
        let meta = file.metadata()?;
        if meta.permissions().mode() & 0o077 != 0 {
            file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
        }
        // One write, so lines from two processes do not interleave.
        file.write_all(text.as_bytes())
    }

    /// Replaces the file's contents with `entries` (through a temporary file renamed
    /// over it, so a reader never sees half a file).
    fn rewrite(&self, entries: &[Entry]) -> std::io::Result<()> {
        let tmp = self
            .path
            .with_extension(format!("jsonl.{}.tmp", std::process::id()));
        let mut text = String::new();
        for e in entries {
            text.push_str(&serde_json::to_string(e).map_err(std::io::Error::other)?);
            text.push('\n');
        }
        if let Some(dir) = self.path.parent() {
            private_dir(dir)?;
        }
        let mut file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&tmp)?;
        file.write_all(text.as_bytes())?;
        drop(file);
        std::fs::rename(&tmp, &self.path)
    }

    fn warn(&self, what: &str, e: &std::io::Error) {
        eprintln!(
            "{} could not {what} the task journal {}: {e} (set {STATE_DIR_ENV} to a writable folder)",
            console::style("warning:").yellow().for_stderr(),
            self.path.display()
        );
    }
}

/// Makes `dir` a folder only this OS account can enter: created `0700` when missing
/// (with any missing parents), closed to others when it is open to them. A folder
/// that belongs to another account is an error: this account's tasks are not kept
/// where another can read them.
fn private_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    let meta = std::fs::metadata(dir)?;
    let me = nix::unistd::geteuid().as_raw();
    if meta.uid() != me {
        return Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            format!(
                "the folder belongs to another account (uid {}, this one is {me})",
                meta.uid()
            ),
        ));
    }
    if meta.permissions().mode() & 0o077 != 0 {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

/// The journal's folder: `explicit`, else `xdg_state/mcp-tasks` (when absolute), else
/// `home/.local/state/mcp-tasks`.
fn state_dir(
    explicit: Option<PathBuf>,
    xdg_state: Option<PathBuf>,
    home: Option<PathBuf>,
) -> Option<PathBuf> {
    if let Some(dir) = explicit.filter(|d| !d.as_os_str().is_empty()) {
        return Some(dir);
    }
    if let Some(dir) = xdg_state.filter(|d| d.is_absolute()) {
        return Some(dir.join("mcp-tasks"));
    }
    home.filter(|h| !h.as_os_str().is_empty())
        .map(|h| h.join(".local/state/mcp-tasks"))
}

/// What names a server in the journal: its URL, or `stdio:` and its command line.
pub fn target_key(target: &Target) -> String {
    match target {
        Target::Http(url) => url.clone(),
        Target::Stdio { program, args } => format!("stdio:{program} {}", args.join(" ")),
    }
}

/// A file name for the server `key` as the caller who sends `token`: a readable part
/// of the key and a hash of all of it, then (with a token) a SHA-256 of key and token,
/// so that each credential has its own file and the name does not reveal the token.
/// Without a token the name is the one earlier versions used for every caller.
fn file_name(key: &str, token: Option<&str>) -> String {
    let readable: String = key
        .trim_start_matches("https://")
        .trim_start_matches("http://")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(60)
        .collect();
    let server = format!("{readable}-{:016x}", fnv1a(key.as_bytes()));
    match token {
        None => format!("{server}.jsonl"),
        Some(token) => format!("{server}-as-{}.jsonl", caller_hash(key, token)),
    }
}

/// The first 64 bits of SHA-256 over the server key and the token, in hex: the same
/// for one credential at one server, different for another, and no use to anyone
/// looking for the token.
fn caller_hash(key: &str, token: &str) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    h.update(b"mcp-tasks journal caller\0");
    h.update(key.as_bytes());
    h.update(b"\0");
    h.update(token.as_bytes());
    h.finalize()[..8]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The 64-bit FNV-1a hash: stable across runs and versions, unlike `std`'s hasher.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// The entries of a journal file's text at time `now`: the last line of each task,
/// unreadable lines skipped, entries older than [`MAX_AGE`] dropped, at most the
/// newest [`MAX_ENTRIES`], oldest first.
fn fold(text: &str, now: i64) -> Vec<Entry> {
    let oldest = now.saturating_sub(i64::try_from(MAX_AGE.as_millis()).unwrap_or(i64::MAX));
    let mut order: Vec<String> = Vec::new();
    let mut latest: HashMap<String, Entry> = HashMap::new();
    for line in text.lines() {
        let Ok(e) = serde_json::from_str::<Entry>(line) else {
            continue;
        };
        if !latest.contains_key(&e.task_id) {
            order.push(e.task_id.clone());
        }
        latest.insert(e.task_id.clone(), e);
    }
    let mut entries: Vec<Entry> = order
        .into_iter()
        .filter_map(|id| latest.remove(&id))
        .filter(|e| e.created_ms >= oldest)
        .collect();
    entries.sort_by_key(|e| e.created_ms);
    let extra = entries.len().saturating_sub(MAX_ENTRIES);
    entries.drain(..extra);
    entries
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn entry(id: &str, created_ms: i64, status: &str) -> Entry {
        Entry {
            task_id: id.into(),
            tool: "slow_compute".into(),
            created_ms,
            wire: "2026-07-28".into(),
            status: status.into(),
            status_message: None,
        }
    }

    #[test]
    fn the_last_line_of_a_task_wins_and_old_or_excess_entries_go() {
        let now = now_ms();
        let day = 24 * 3600 * 1000;
        let mut text = String::new();
        for e in [
            entry("a", now - day, "working"),
            entry("old", now - 8 * day, "working"),
            entry("b", now - 2 * day, "working"),
            entry("a", now - day, "completed"),
        ] {
            text.push_str(&serde_json::to_string(&e).unwrap());
            text.push('\n');
        }
        text.push_str("not json\n");
        let got = fold(&text, now);
        assert_eq!(
            got,
            vec![
                entry("b", now - 2 * day, "working"),
                entry("a", now - day, "completed")
            ]
        );

        let many: String = (0..MAX_ENTRIES + 5)
            .map(|i| {
                serde_json::to_string(&entry(&format!("t{i}"), now - 1000 + i as i64, "working"))
                    .unwrap()
                    + "\n"
            })
            .collect();
        let kept = fold(&many, now);
        assert_eq!(kept.len(), MAX_ENTRIES);
        assert_eq!(kept[0].task_id, "t5");
    }

    #[test]
    fn records_update_and_forget_in_a_file_per_server() {
        let dir = tempfile::tempdir().unwrap();
        let j = Journal::in_dir(dir.path(), "http://127.0.0.1:8080/mcp", None);
        let other = Journal::in_dir(dir.path(), "http://127.0.0.1:9090/mcp", None);
        assert_ne!(j.path(), other.path());
        assert!(j.entries().is_empty());
        let now = now_ms();
        j.record(&entry("a", now, "working"));
        j.record(&entry("b", now + 1, "working"));
        j.record(&entry("a", now, "completed"));
        assert_eq!(j.entries().len(), 2);
        // Reading compacted the file to one line per task.
        let text = std::fs::read_to_string(j.path()).unwrap();
        assert_eq!(text.lines().count(), 2);
        j.forget(&["a".to_string()]);
        assert_eq!(j.entries(), vec![entry("b", now + 1, "working")]);
        assert!(other.entries().is_empty());
    }

    #[test]
    fn a_journal_that_cannot_be_written_only_warns() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a-file");
        std::fs::write(&file, "").unwrap();
        // The folder is a file: every write fails, none panics.
        let j = Journal::in_dir(&file, "http://h/mcp", None);
        j.record(&entry("a", now_ms(), "working"));
        j.forget(&["a".to_string()]);
        assert!(j.entries().is_empty());
    }

    #[test]
    fn the_folder_follows_the_environment() {
        let p = |s: &str| Some(PathBuf::from(s));
        assert_eq!(state_dir(p("/x"), p("/s"), p("/h")), p("/x"));
        assert_eq!(state_dir(None, p("/s"), p("/h")), p("/s/mcp-tasks"));
        assert_eq!(
            state_dir(None, p("rel"), p("/h")),
            p("/h/.local/state/mcp-tasks")
        );
        assert_eq!(state_dir(None, None, None), None);
        let name = file_name("http://127.0.0.1:8080/mcp", None);
        assert!(
            name.starts_with("127.0.0.1_8080_mcp-") && name.ends_with(".jsonl"),
            "{name}"
        );
    }

    #[test]
    fn each_credential_has_its_own_file_that_does_not_name_the_token() {
        let url = "http://127.0.0.1:8080/mcp";
        let anonymous = file_name(url, None);
        let agent = file_name(url, Some("tok-agent"));
        let alice = file_name(url, Some("tok-alice"));
        assert_ne!(agent, alice);
        assert_ne!(agent, anonymous);
        assert_eq!(agent, file_name(url, Some("tok-agent")));
        assert_ne!(
            agent,
            file_name("http://127.0.0.1:9090/mcp", Some("tok-agent"))
        );
        assert!(!agent.contains("tok-agent"), "{agent}");
        assert!(
            agent.starts_with(anonymous.trim_end_matches(".jsonl")),
            "{agent}"
        );
    }

    #[test]
    fn the_folder_and_files_are_this_accounts_alone() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("state/mcp-tasks");
        let j = Journal::in_dir(&state, "http://h/mcp", Some("t"));
        j.record(&entry("a", now_ms(), "working"));
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&state), 0o700);
        assert_eq!(mode(j.path()), 0o600);
        // A folder and a file left open to others (an older version, a umask) are
        // closed on the next write, compaction included.
        std::fs::set_permissions(&state, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::set_permissions(j.path(), std::fs::Permissions::from_mode(0o644)).unwrap();
        j.record(&entry("a", now_ms(), "completed"));
        assert_eq!(mode(&state), 0o700);
        assert_eq!(mode(j.path()), 0o600);
        assert_eq!(j.entries().len(), 1);
        assert_eq!(mode(j.path()), 0o600);
    }
}

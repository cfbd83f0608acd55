//! [`ProcessIdentity`]: where this process runs and when it started, as written into its
//! runner row, and the test a process starting on the same host applies to the rows it
//! finds there: is that process gone (its pid is gone, or belongs to a process that
//! started at another time)?
//!
//! On Linux the host is the host name plus the pid namespace (two containers sharing a
//! host name never judge each other's pids), and the start is the boot id plus the start
//! time in clock ticks from `/proc/PID/stat` (a pid reused by another process, or the same
//! pid after a reboot, is told apart). Elsewhere the start is unknown, and a row is judged
//! by its `alive_until` alone.

/// Where and when this process runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ProcessIdentity {
    /// [`mcp_tasks_store::RunnerRecord::host`].
    pub(crate) host: String,
    /// This process's id.
    pub(crate) pid: u32,
    /// [`mcp_tasks_store::RunnerRecord::process_start`]; empty when unknown.
    pub(crate) start: String,
}

impl ProcessIdentity {
    /// The identity of the running process.
    pub(crate) fn current() -> Self {
        let pid = std::process::id();
        ProcessIdentity {
            host: host(),
            pid,
            start: process_start(pid).unwrap_or_default(),
        }
    }

    /// Whether the process a row of this host names is gone: `Some(true)` when its pid
    /// is gone or now belongs to another process, `Some(false)` when it still runs,
    /// `None` when this cannot be told (no start recorded, or not Linux).
    pub(crate) fn is_gone(&self, pid: u32, start: &str) -> Option<bool> {
        if start.is_empty() || self.start.is_empty() {
            return None;
        }
        match process_start(pid) {
            Some(now) => Some(now != start),
            None if cfg!(target_os = "linux") => Some(true),
            None => None,
        }
    }
}

/// The host name, and on Linux the pid namespace.
fn host() -> String {
    let name = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "unknown-host".to_string());
    match std::fs::read_link("/proc/self/ns/pid") {
        Ok(ns) => format!("{name}/{}", ns.display()),
        Err(_) => name,
    }
}

/// The boot id and start time (clock ticks after boot) of process `pid`, or `None`
/// when it does not exist (or this is not Linux).
fn process_start(pid: u32) -> Option<String> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold spaces or ')': the
    // fields after the last ')' start with field 3 (state); starttime is field 22.
    let after = &stat[stat.rfind(')')? + 1..];
    let ticks = after.split_whitespace().nth(19)?;
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap_or_default();
    Some(format!("{}:{ticks}", boot.trim()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(target_os = "linux")]
    fn this_process_is_alive_and_other_starts_are_not() {
        let me = ProcessIdentity::current();
        assert!(!me.start.is_empty());
        assert_eq!(me.is_gone(me.pid, &me.start), Some(false));
        assert_eq!(me.is_gone(me.pid, "other-boot:1"), Some(true));
        // Beyond the largest pid Linux hands out (2^22).
        assert_eq!(me.is_gone(4_194_304 + 7, &me.start), Some(true));
        assert_eq!(me.is_gone(me.pid, ""), None);
    }
}

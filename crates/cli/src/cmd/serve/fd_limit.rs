//! The open-files limit: raised to what the system allows, and the connection limit
//! kept inside it, so a crowd of idle sockets can never leave the server without a
//! descriptor for the store, a log file or the next real client.

/// Descriptors kept for everything but client connections: the database (a pool of
/// connections and its WAL files), stdio, logs, child processes of command tools.
pub(super) const RESERVED_DESCRIPTORS: u64 = 64;

/// Raises the soft `RLIMIT_NOFILE` to the hard limit (a process may do that without
/// privileges) and returns the soft limit in force afterwards, or `None` when it cannot
/// be read. Many systems start processes at 256 or 1,024 open files while allowing far
/// more.
pub(super) fn raise_open_files_limit() -> Option<u64> {
    use nix::sys::resource::{getrlimit, setrlimit, Resource};
    let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE).ok()?;
    if soft >= hard {
        return Some(soft);
    }
    match setrlimit(Resource::RLIMIT_NOFILE, hard, hard) {
        Ok(()) => {
            tracing::debug!(from = soft, to = hard, "raised the open-files limit");
            Some(hard)
        }
        Err(e) => {
            tracing::warn!(error = %e, soft, hard, "could not raise the open-files limit");
            Some(soft)
        }
    }
}

/// The connection limit that fits `open_files` (after [`RESERVED_DESCRIPTORS`]), at
/// least one.
pub(super) fn fit_connections(wanted: usize, open_files: Option<u64>) -> usize {
    let Some(limit) = open_files else {
        return wanted;
    };
    let room = usize::try_from(limit.saturating_sub(RESERVED_DESCRIPTORS)).unwrap_or(usize::MAX);
    wanted.min(room).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connections_fit_inside_the_open_files_limit() {
        assert_eq!(fit_connections(1024, Some(256)), 192);
        assert_eq!(fit_connections(1024, Some(1_048_576)), 1024);
        assert_eq!(fit_connections(1024, None), 1024);
        assert_eq!(fit_connections(1024, Some(10)), 1);
    }

    #[test]
    fn the_soft_limit_is_raised_to_the_hard_one() {
        use nix::sys::resource::{getrlimit, Resource};
        let raised = raise_open_files_limit().expect("RLIMIT_NOFILE is readable");
        let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE).expect("readable");
        assert_eq!(soft, raised);
        assert_eq!(soft, hard);
    }
}

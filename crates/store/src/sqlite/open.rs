//! What can go wrong opening a SQLite database, told so that a person can act: a
//! file another process is creating at this moment (try again), or a file SQLite
//! cannot open or write (named, with its folder's problem).

use super::row::classify;
use crate::error::StoreError;
use std::path::Path;

/// A database file SQLite cannot open or write, named, with the reason when the file
/// system tells it: SQLite itself says only "unable to open database file (code: 14)".
#[derive(Debug)]
struct CannotOpen {
    message: String,
    source: sqlx::Error,
}

impl std::fmt::Display for CannotOpen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for CannotOpen {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

/// Whether `err` is SQLite's "database is locked" or "busy" (another connection holds
/// the lock it needs).
pub(super) fn is_busy(err: &sqlx::Error) -> bool {
    /// Primary result codes (the low byte of an extended code).
    const SQLITE_BUSY: i32 = 5;
    const SQLITE_LOCKED: i32 = 6;
    match err {
        sqlx::Error::Database(db) => db
            .code()
            .and_then(|code| code.parse::<i32>().ok())
            .is_some_and(|code| matches!(code & 0xff, SQLITE_BUSY | SQLITE_LOCKED)),
        _ => false,
    }
}

/// Sorts an error of opening the file at `path`: SQLite's "cannot open" and "read-only"
/// become [`CannotOpen`] naming the file (absolute) and its folder's problem; anything
/// else is classified as any other error.
pub(super) fn cannot_open(path: &Path, err: sqlx::Error) -> StoreError {
    /// Primary result codes (the low byte of an extended code).
    const SQLITE_READONLY: i32 = 8;
    const SQLITE_CANTOPEN: i32 = 14;
    let (code, said) = match &err {
        sqlx::Error::Database(db) => (
            db.code()
                .and_then(|code| code.parse::<i32>().ok())
                .map(|code| code & 0xff),
            db.message().to_string(),
        ),
        _ => (None, String::new()),
    };
    if !matches!(code, Some(SQLITE_READONLY | SQLITE_CANTOPEN)) {
        return classify(err);
    }
    let shown = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let reason = match shown.parent().filter(|dir| !dir.as_os_str().is_empty()) {
        Some(dir) if dir.is_file() => format!("{} is a file, not a folder", dir.display()),
        Some(dir) if !dir.exists() => format!(
            "the folder {} does not exist (create it, or choose another path)",
            dir.display()
        ),
        _ => format!("{said} (is the folder writable, and the file if it exists?)"),
    };
    StoreError::Backend(Box::new(CannotOpen {
        message: format!("cannot open {}: {reason}", shown.display()),
        source: err,
    }))
}

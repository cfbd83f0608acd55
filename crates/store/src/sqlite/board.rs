//! The change board of a database file: counters every process on the file shares,
//! so that one process learns, from memory alone, that another may have changed a task.
//!
//! The board is a small file beside the database (`<db>-changes`, next to SQLite's own
//! `-wal` and `-shm`), mapped into memory by every process that opens the database. It
//! holds a global epoch and [`SLOTS`] per-slot counters; a task's slot is a hash of its
//! id, the same in every process and version. Every write of a task moves its slot
//! before its transaction commits and again after; a write whose tasks are not known
//! up front moves the epoch the same way. So a reader that takes the [`Stamp`] of a
//! task (epoch and slot) before reading its row knows the row it then reads is the one
//! committed under that stamp or newer, and that any later commit changes the stamp
//! (see `cache.rs`). A process that dies between its two moves leaves a counter
//! advanced, which costs one re-read and nothing else.
//!
//! This assumes what SQLite's WAL mode assumes: every process on the file runs on one
//! machine, over a local file system, where a shared mapping of a file is one piece of
//! memory. When the board cannot be created or mapped (a read-only folder), the store
//! reads every task from the database, as before, and says so once in the log.
//!
//! This is the only module of the crate with `unsafe` code: the atomics over the
//! mapping.

#![allow(unsafe_code)]

use memmap2::MmapMut;
use std::fs::OpenOptions;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Per-slot counters on the board. Tasks that share a slot invalidate each other's
/// cached reads, so there are many more slots than a busy server runs tasks at once.
pub(crate) const SLOTS: usize = 1 << 16;

/// The first word of a board: its layout's version, so that a board of another layout
/// is refused rather than misread.
const MAGIC: u64 = 0x6d63_7074_6368_0001;

/// Words before the slots: the magic and the epoch.
const HEADER_WORDS: usize = 2;

/// The size of a board file, in bytes.
const BOARD_BYTES: usize = (HEADER_WORDS + SLOTS) * std::mem::size_of::<u64>();

/// What a reader compares: the epoch and the task's slot at one moment.
pub(crate) use crate::change::ChangeMark as Stamp;

/// A mapped board: a shared file for a database file, private memory for an in-memory
/// database (which only this store opens).
#[derive(Debug)]
pub(crate) struct ChangeBoard {
    map: MmapMut,
}

impl ChangeBoard {
    /// The board of the database file at `db`, created when missing.
    pub(crate) fn open(db: &Path) -> std::io::Result<Self> {
        let path = board_path(db);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)?;
        // Two processes opening at once both extend it to the same size, with zeros.
        if file.metadata()?.len() < BOARD_BYTES as u64 {
            file.set_len(BOARD_BYTES as u64)?;
        }
        // SAFETY: the mapping is shared with other processes, which change its words
        // only through atomic operations (this module), so no Rust reference to its
        // bytes is ever held across such a change except as `AtomicU64`. The file is
        // never shortened by this crate (a file shortened by someone else would fault
        // like SQLite's `-shm` would: documented as "do not remove it while in use").
        let map = unsafe {
            memmap2::MmapOptions::new()
                .len(BOARD_BYTES)
                .map_mut(&file)?
        };
        Self::checked(map)
    }

    /// A board in this process's memory only.
    pub(crate) fn private() -> std::io::Result<Self> {
        Self::checked(MmapMut::map_anon(BOARD_BYTES)?)
    }

    fn checked(map: MmapMut) -> std::io::Result<Self> {
        let board = Self { map };
        let magic = board.word(0);
        match magic.compare_exchange(0, MAGIC, Ordering::SeqCst, Ordering::SeqCst) {
            Ok(_) => Ok(board),
            Err(found) if found == MAGIC => Ok(board),
            Err(found) => Err(std::io::Error::other(format!(
                "the change board has layout {found:#x}, not {MAGIC:#x} (written by another version of mcp-tasks?)"
            ))),
        }
    }

    /// The word at `index` (0: magic, 1: epoch, then the slots).
    fn word(&self, index: usize) -> &AtomicU64 {
        assert!(index < HEADER_WORDS + SLOTS, "board word out of range");
        let base = self.map.as_ptr().cast::<AtomicU64>();
        // SAFETY: the mapping is BOARD_BYTES long and page-aligned, so every index
        // below HEADER_WORDS + SLOTS (checked above) is an aligned u64 inside it, and
        // it lives as long as `self`. `AtomicU64` has the layout of `u64` and allows
        // shared mutation, which is what other processes (and threads) do to it.
        unsafe { &*base.add(index) }
    }

    /// The task's stamp now.
    pub(crate) fn stamp(&self, slot: usize) -> Stamp {
        Stamp {
            epoch: self.word(1).load(Ordering::SeqCst),
            slot: self.word(HEADER_WORDS + slot).load(Ordering::SeqCst),
        }
    }

    /// A copy of every counter now.
    pub(crate) fn snapshot(&self) -> crate::change::ChangeMarks {
        let epoch = self.word(1).load(Ordering::SeqCst);
        let slots = (0..SLOTS)
            .map(|slot| self.word(HEADER_WORDS + slot).load(Ordering::SeqCst))
            .collect();
        crate::change::ChangeMarks::new(epoch, slots)
    }

    /// Moves one slot (before and after each write of a task in it).
    pub(crate) fn bump(&self, slot: usize) {
        self.word(HEADER_WORDS + slot)
            .fetch_add(1, Ordering::SeqCst);
    }

    /// Moves the epoch (before and after each write whose tasks are not known).
    pub(crate) fn bump_epoch(&self) {
        self.word(1).fetch_add(1, Ordering::SeqCst);
    }
}

/// The board file of the database at `db`: `<db>-changes`.
pub(crate) fn board_path(db: &Path) -> PathBuf {
    let mut name = db.as_os_str().to_owned();
    name.push("-changes");
    PathBuf::from(name)
}

/// The slot of a task id on a board.
pub(crate) fn slot_of(id: &str) -> usize {
    crate::change::slot_of(id, SLOTS)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn two_mappings_of_one_file_see_each_others_moves() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("x.db");
        let a = ChangeBoard::open(&db).unwrap();
        let b = ChangeBoard::open(&db).unwrap();
        let slot = slot_of("task-1");
        let before = a.stamp(slot);
        b.bump(slot);
        assert_ne!(a.stamp(slot), before);
        let before = a.stamp(slot);
        b.bump_epoch();
        assert_eq!(a.stamp(slot).slot, before.slot);
        assert_ne!(a.stamp(slot), before);
        assert!(board_path(&db).exists());
    }

    #[test]
    fn a_board_of_another_layout_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("x.db");
        std::fs::write(board_path(&db), [0xffu8; 64]).unwrap();
        assert!(ChangeBoard::open(&db).is_err());
    }
}

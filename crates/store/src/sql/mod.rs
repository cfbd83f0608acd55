//! What the SQLite and PostgreSQL backends share.

pub(crate) mod values;

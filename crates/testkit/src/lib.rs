//! What the workspace's tests share, written once: [`eventually`] (the one way a test
//! waits for something that nothing signals), the [`cli`] helpers that run a binary to
//! its end and read what it wrote, the interop [`peers`] (servers nobody here wrote)
//! and the [`peer_suite`](mod@peer_suite): the scenarios run against every peer by both front-ends
//! (the client library and the CLI). Each crate takes it as a dev-dependency; it is
//! never published.

pub mod cli;
pub mod docs;
#[cfg(feature = "issuer")]
pub mod issuer;
pub mod peer_suite;
pub mod peers;
mod wait;

pub use wait::{eventually, Met, STEP, WAIT};

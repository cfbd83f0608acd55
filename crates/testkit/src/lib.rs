//! What the workspace's tests share, written once: [`eventually`] (the one way a test
//! waits for something that nothing signals), the [`cli`] helpers that run a binary to
//! its end and read what it wrote, and the interop [`peers`] (servers nobody here
//! wrote). Each crate takes it as a dev-dependency; it is never published.

pub mod cli;
pub mod peers;
mod wait;

pub use wait::{eventually, Met, STEP, WAIT};

//! Transports: newline-delimited JSON over stdio, and Streamable HTTP (axum).

#[cfg(feature = "http")]
pub mod connections;
#[cfg(feature = "http")]
pub mod health;
#[cfg(feature = "http")]
pub mod http;
pub use crate::http_limits as limits;
#[cfg(feature = "stdio")]
pub mod stdio;

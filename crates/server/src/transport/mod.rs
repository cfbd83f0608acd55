//! Transports: newline-delimited JSON over stdio, and Streamable HTTP (axum).

#[cfg(feature = "http")]
pub mod connections;
#[cfg(feature = "http")]
pub mod health;
#[cfg(feature = "http")]
pub mod http;
pub mod limits;
#[cfg(feature = "stdio")]
pub mod stdio;

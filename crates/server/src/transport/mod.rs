//! Transports: newline-delimited JSON over stdio, and Streamable HTTP (axum).

pub mod http;
pub mod stdio;

//! Transports: newline-delimited JSON over stdio, and Streamable HTTP (axum).

pub mod connections;
pub mod http;
pub mod stdio;

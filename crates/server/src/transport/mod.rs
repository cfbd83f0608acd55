//! Transports: newline-delimited JSON over stdio, and Streamable HTTP (axum).

pub mod connections;
pub mod health;
pub mod http;
pub mod limits;
pub mod stdio;

//! Operating a server: who may call it ([`auth`]), what it measures ([`metrics`]) and
//! the spans it traces ([`telemetry`]).

pub mod auth;
pub mod metrics;
pub mod telemetry;

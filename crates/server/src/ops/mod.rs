//! Operating a server: who may call it ([`auth`]), what it measures ([`metrics`]) and
//! the spans it traces ([`telemetry`]).

pub mod auth;
#[cfg(feature = "metrics")]
pub mod metrics;
#[cfg(not(feature = "metrics"))]
#[path = "metrics_off.rs"]
pub mod metrics;
pub mod telemetry;

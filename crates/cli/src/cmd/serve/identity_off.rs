//! The identity part of `serve` in a build without the `oidc` feature: `[oauth]` and
//! `[board.oidc]` were refused when the file was read, so `/mcp` takes the token
//! sources of the flags and `[server]` only.

use anyhow::Result;
use mcp_tasks_server::auth::AuthMode;

use super::ServeArgs;
use crate::config::ConfigFile;

/// The token sources of the flags and `[server]`.
///
/// # Errors
/// A bad token source, named.
pub fn auth_mode(args: &ServeArgs, file: &ConfigFile) -> Result<AuthMode> {
    super::settings::auth_mode(args, &file.server)
}

/// No board sign-in in this build.
#[cfg(feature = "board")]
pub fn board_oidc(
    _file: &ConfigFile,
    _root: &str,
) -> Result<(Option<mcp_tasks_board::OidcConfig>, bool)> {
    Ok((None, true))
}

/// No board sign-in in this build.
pub fn board_sign_in(_file: &ConfigFile) -> bool {
    false
}

//! The identity sections of `serve` (feature `oidc`): `[oauth]` turned into the
//! authenticator of `/mcp` (OAuth access tokens, Protected Resource Metadata), and
//! `[board.oidc]` into the board's sign-in with an OpenID Connect provider.

use anyhow::Result;
use mcp_tasks_server::auth::{
    AuthMode, ClaimNames, Introspection, OAuthConfig, OAuthVerifier, ResourceMetadata,
};
use std::sync::Arc;
use std::time::Duration;

use super::ServeArgs;
use crate::config::{AuthRequirement, ConfigFile};

/// The authentication of `/mcp`: `[oauth]` when the file has it (then no other token
/// source may be configured), else the token sources of the flags and `[server]`.
///
/// # Errors
/// Both `[oauth]` and another token source; a bad `[oauth]` section, named.
pub fn auth_mode(args: &ServeArgs, file: &ConfigFile) -> Result<AuthMode> {
    let Some(oauth) = &file.oauth else {
        return super::settings::auth_mode(args, &file.server);
    };
    let s = &file.server;
    if args.auth_tokens.is_some()
        || args.jwt_jwks.is_some()
        || s.auth_tokens.is_some()
        || s.jwt_jwks.is_some()
    {
        anyhow::bail!(
            "[oauth] and --auth-tokens / --jwt-jwks (or auth_tokens / jwt_jwks in [server]) both configure bearer tokens: keep one"
        );
    }
    if oauth.authorization_servers.is_empty() {
        anyhow::bail!("[oauth]: name the issuer(s) hosts get tokens from in authorization_servers");
    }
    if !oauth.resource.starts_with("https://") && !oauth.resource.starts_with("http://") {
        anyhow::bail!(
            "[oauth]: resource must be the MCP endpoint's URL as clients reach it (https://tasks.example.com/mcp), not '{}'",
            oauth.resource
        );
    }
    let secret = oauth.secret.read("[oauth]")?;
    let introspection = match (&oauth.client_id, secret) {
        (Some(id), Some(secret)) => Some(Introspection {
            endpoint: oauth.introspection_endpoint.clone(),
            client_id: id.clone(),
            client_secret: secret,
            cache: oauth.introspection_cache.unwrap_or(Duration::from_secs(30)),
        }),
        (None, None) if oauth.introspection_endpoint.is_none() => None,
        _ => anyhow::bail!(
            "[oauth]: introspection needs both client_id and a client secret (client_secret_file or client_secret_env)"
        ),
    };
    let mut scopes_supported = oauth.scopes_supported.clone();
    for s in &oauth.required_scopes {
        if !scopes_supported.contains(s) {
            scopes_supported.push(s.clone());
        }
    }
    let verifier = OAuthVerifier::new(OAuthConfig {
        metadata: ResourceMetadata {
            resource: oauth.resource.trim_end_matches('/').to_string(),
            authorization_servers: oauth.authorization_servers.clone(),
            scopes_supported,
            required_scopes: oauth.required_scopes.clone(),
            resource_name: oauth.resource_name.clone(),
        },
        issuer: oauth.issuer.clone(),
        audience: oauth.audience.clone(),
        jwks_uri: oauth.jwks_uri.clone(),
        introspection,
        claims: claim_names(oauth.principal_claim.as_ref(), oauth.groups_claim.as_ref()),
        leeway: oauth.leeway.unwrap_or(Duration::from_secs(30)),
    })
    .map_err(|e| anyhow::anyhow!("[oauth]: {e}"))?;
    tracing::info!(resource = %oauth.resource, issuer = %oauth.authorization_servers[0], "OAuth access tokens accepted");
    let requirement = match args.auth.as_deref() {
        Some("optional") => AuthRequirement::Optional,
        Some(_) => AuthRequirement::Required,
        None => s.auth.unwrap_or(AuthRequirement::Required),
    };
    let verifier = Arc::new(verifier);
    Ok(match requirement {
        AuthRequirement::Optional => AuthMode::Optional(verifier),
        AuthRequirement::Required => AuthMode::Required(verifier),
    })
}

fn claim_names(principal: Option<&String>, groups: Option<&String>) -> ClaimNames {
    let defaults = ClaimNames::default();
    ClaimNames {
        principal: principal.cloned().unwrap_or(defaults.principal),
        groups: groups.cloned().unwrap_or(defaults.groups),
    }
}

/// The board's sign-in with `[board.oidc]`, its redirect URIs under `root` (where
/// people reach the server), and whether token login stays.
///
/// # Errors
/// A bad section or an unreadable secret, named.
pub fn board_oidc(
    file: &ConfigFile,
    root: &str,
) -> Result<(Option<mcp_tasks_board::OidcConfig>, bool)> {
    let Some(section) = &file.board.oidc else {
        return Ok((None, true));
    };
    let name = section
        .name
        .clone()
        .unwrap_or_else(|| "your identity provider".into());
    let mut config = mcp_tasks_board::OidcConfig::new(
        name,
        section.issuer.trim_end_matches('/'),
        &section.client_id,
        root,
    );
    config.client_secret = section.secret.read("[board.oidc]")?;
    config.token_auth = match section.token_endpoint_auth_method.as_deref() {
        None | Some("client_secret_basic") => mcp_tasks_board::TokenAuth::Basic,
        Some("client_secret_post") => mcp_tasks_board::TokenAuth::Post,
        Some(other) => anyhow::bail!(
            "[board.oidc]: token_endpoint_auth_method '{other}' is not one of client_secret_basic, client_secret_post"
        ),
    };
    if !section.scopes.is_empty() {
        config.scopes = section.scopes.clone();
    }
    let names = claim_names(
        section.principal_claim.as_ref(),
        section.groups_claim.as_ref(),
    );
    config.principal_claim = names.principal;
    config.groups_claim = names.groups;
    if let Some(leeway) = section.leeway {
        config.leeway = leeway;
    }
    if let Some(refresh_after) = section.refresh_after {
        // A renewal is a round trip through the provider: one shorter than a few
        // seconds could come due again before the page it returns to has loaded.
        if !refresh_after.is_zero() && refresh_after < Duration::from_secs(5) {
            anyhow::bail!(
                "[board.oidc]: refresh_after must be at least 5s (or \"0s\" to renew only when the session ends)"
            );
        }
        config.refresh_after = refresh_after;
    }
    tracing::info!(issuer = %config.issuer, redirect_uri = %config.redirect_uri, "board sign-in with OpenID Connect");
    Ok((Some(config), section.token_login.unwrap_or(true)))
}

/// Whether `[board.oidc]` is configured (the board then has a login of its own).
pub fn board_sign_in(file: &ConfigFile) -> bool {
    file.board.oidc.is_some()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;

    fn oidc(extra: &str) -> Result<Option<mcp_tasks_board::OidcConfig>> {
        let file = ConfigFile::parse(&format!(
            "[board.oidc]\nissuer = \"https://idp.example/\"\nclient_id = \"board\"\n{extra}"
        ))
        .unwrap();
        board_oidc(&file, "https://tasks.example").map(|(config, _)| config)
    }

    #[test]
    fn refresh_after_defaults_to_ten_minutes_and_may_be_off_but_not_a_loop() {
        let config = oidc("").unwrap().unwrap();
        assert_eq!(config.refresh_after, Duration::from_secs(600));
        assert_eq!(
            config.redirect_uri,
            "https://tasks.example/board/oidc/callback"
        );
        let off = oidc("refresh_after = \"0s\"").unwrap().unwrap();
        assert!(off.refresh_after.is_zero());
        let hour = oidc("refresh_after = \"1h\"").unwrap().unwrap();
        assert_eq!(hour.refresh_after, Duration::from_secs(3600));
        let error = oidc("refresh_after = \"2s\"").unwrap_err().to_string();
        assert!(error.contains("at least 5s"), "{error}");
    }
}

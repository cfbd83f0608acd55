//! What this build of `mcp-tasks` leaves out (its Cargo features, docs/packaging.md,
//! "Building a smaller binary"), and the one message that says so.
//!
//! A build without a feature still parses every config file and every flag: a
//! section, flag or subcommand that needs a missing feature stops the start with
//! [`missing`]'s message, naming it and the feature, rather than being ignored (a
//! server that silently drops its `[[upstream]]` servers or its webhooks would look
//! healthy while doing less than its file says).

use anyhow::Result;

/// The optional parts of the config file this build can serve.
#[derive(Debug, Clone, Copy)]
pub struct Built {
    /// `[board]`, `[[notify]]`, `[slack]` (the `board` feature).
    pub board: bool,
    /// `[[upstream]]` (the `gateway` feature).
    pub gateway: bool,
    /// `[[tools]]` (the `command-tools` feature).
    pub command_tools: bool,
    /// `[board.oidc]` and `[oauth]` (the `oidc` feature).
    pub oidc: bool,
    /// `[policy]` and `policy check` (the `policy` feature).
    pub policy: bool,
    /// `[email]` (the `email` feature).
    pub email: bool,
}

impl Built {
    /// This binary's.
    pub const THIS: Built = Built {
        board: cfg!(feature = "board"),
        gateway: cfg!(feature = "gateway"),
        command_tools: cfg!(feature = "command-tools"),
        oidc: cfg!(feature = "oidc"),
        policy: cfg!(feature = "policy"),
        email: cfg!(feature = "email"),
    };
}

/// The error for `what` (a section, a flag, a subcommand, as the user wrote it) used
/// in a build without `feature`: it names both and says how to get a build with it.
pub fn missing(what: &str, feature: &str) -> anyhow::Error {
    anyhow::anyhow!(
        "{what} needs the `{feature}` feature: this mcp-tasks was built without it; reinstall with `--features {feature}`"
    )
}

/// The optional sections a config file uses (see `ConfigFile::uses`).
#[derive(Debug, Default, Clone, Copy)]
pub struct Uses {
    /// `[[upstream]]` entries.
    pub upstream: bool,
    /// `[[tools]]` entries.
    pub tools: bool,
    /// A `[board]` that asks for more than turning the board off.
    pub board: bool,
    /// `[[notify]]` entries.
    pub notify: bool,
    /// `[slack]`.
    pub slack: bool,
    /// `[board.oidc]`.
    pub oidc: bool,
    /// `[oauth]`.
    pub oauth: bool,
    /// `[policy]`.
    pub policy: bool,
    /// `[email]`.
    pub email: bool,
}

/// Refuses the first section a config file `uses` that needs a feature `built` lacks.
///
/// # Errors
/// [`missing`]'s message for that section.
pub fn refuse_missing(uses: Uses, built: Built) -> Result<()> {
    let needs = [
        (uses.upstream, built.gateway, "[[upstream]]", "gateway"),
        (
            uses.tools,
            built.command_tools,
            "[[tools]]",
            "command-tools",
        ),
        (uses.board, built.board, "[board]", "board"),
        (uses.notify, built.board, "[[notify]]", "board"),
        (uses.slack, built.board, "[slack]", "board"),
        (uses.oidc, built.board, "[board.oidc]", "board"),
        (uses.oidc, built.oidc, "[board.oidc]", "oidc"),
        (uses.oauth, built.oidc, "[oauth]", "oidc"),
        (uses.policy, built.policy, "[policy]", "policy"),
        (uses.email, built.email, "[email]", "email"),
    ];
    match needs.into_iter().find(|(used, has, _, _)| *used && !*has) {
        Some((_, _, section, feature)) => Err(missing(section, feature)),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOTHING: Built = Built {
        board: false,
        gateway: false,
        command_tools: false,
        oidc: false,
        policy: false,
        email: false,
    };

    /// What a build without the feature says (the same function the smaller builds run
    /// when they read a file; this build has every feature, so it is called with none).
    #[test]
    fn a_section_of_a_missing_feature_is_refused_by_name() {
        let err = refuse_missing(
            Uses {
                upstream: true,
                ..Uses::default()
            },
            NOTHING,
        )
        .expect_err("refused");
        assert_eq!(
            err.to_string(),
            "[[upstream]] needs the `gateway` feature: this mcp-tasks was built without it; reinstall with `--features gateway`"
        );
        for (uses, section, feature) in [
            (
                Uses {
                    tools: true,
                    ..Uses::default()
                },
                "[[tools]]",
                "command-tools",
            ),
            (
                Uses {
                    board: true,
                    ..Uses::default()
                },
                "[board]",
                "board",
            ),
            (
                Uses {
                    notify: true,
                    ..Uses::default()
                },
                "[[notify]]",
                "board",
            ),
            (
                Uses {
                    slack: true,
                    ..Uses::default()
                },
                "[slack]",
                "board",
            ),
            (
                Uses {
                    oauth: true,
                    ..Uses::default()
                },
                "[oauth]",
                "oidc",
            ),
            (
                Uses {
                    policy: true,
                    ..Uses::default()
                },
                "[policy]",
                "policy",
            ),
            (
                Uses {
                    email: true,
                    ..Uses::default()
                },
                "[email]",
                "email",
            ),
        ] {
            let err = refuse_missing(uses, NOTHING)
                .expect_err(section)
                .to_string();
            assert!(
                err.starts_with(&format!("{section} needs the `{feature}` feature"))
                    && err.ends_with(&format!("reinstall with `--features {feature}`")),
                "{err}"
            );
        }
        let every = Uses {
            upstream: true,
            tools: true,
            board: true,
            notify: true,
            slack: true,
            oidc: true,
            oauth: true,
            policy: true,
            email: true,
        };
        let all = Built {
            board: true,
            gateway: true,
            command_tools: true,
            oidc: true,
            policy: true,
            email: true,
        };
        refuse_missing(every, all).expect("a build with every feature");
        refuse_missing(Uses::default(), NOTHING).expect("nothing optional used");
    }
}

//! A build without the optional features (scripts/test.sh runs this file with
//! `--no-default-features --features sqlite`; in a build with any of them it is empty):
//! a config section, flag or subcommand that needs a missing feature stops the start
//! with a message naming it and the feature, and the demo tools still serve.
#![cfg(not(any(
    feature = "board",
    feature = "gateway",
    feature = "command-tools",
    feature = "bench",
    feature = "otel",
    feature = "jwt",
    feature = "oidc"
)))]
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_mcp-tasks");

/// Runs the binary in `cwd` with stdin closed (a stdio server that is not refused
/// reads end of input and stops: the wait is bounded) and waits for it.
fn run_in(cwd: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir(cwd)
        .env_remove("MCP_TASKS_DATABASE")
        .env_remove("MCP_TASKS_CONFIG")
        .env_remove("MCP_TASKS_OTLP_ENDPOINT")
        .env("MCP_TASKS_STATE_DIR", cwd)
        .stdin(Stdio::null())
        .output()
        .expect("run mcp-tasks")
}

/// The error line of a refused start, asserting that it names `what` and `feature`.
fn refused(out: &Output, what: &str, feature: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let says = format!(
        "{what} needs the `{feature}` feature: this mcp-tasks was built without it; reinstall with `--features {feature}`"
    );
    assert!(stderr.contains(&says), "expected «{says}» in: {stderr}");
}

/// `serve --stdio` on a memory store with `config` (a file written into `dir`) and
/// `extra` flags.
fn serve(dir: &Path, config: Option<&str>, extra: &[&str]) -> Output {
    let mut args = vec!["serve", "--stdio", "--database", "memory:"];
    let path = dir.join("tasks.toml");
    if let Some(text) = config {
        std::fs::write(&path, text).unwrap();
        args.extend(["--config", path.to_str().unwrap()]);
    }
    args.extend(extra);
    run_in(dir, &args)
}

#[test]
fn a_section_of_a_missing_feature_stops_the_start_by_name() {
    let dir = tempfile::tempdir().unwrap();
    for (text, section, feature) in [
        (
            "[[upstream]]\nname = 'u'\ncommand = ['srv']\n",
            "[[upstream]]",
            "gateway",
        ),
        (
            "[[tools]]\nname = 't'\ncommand = ['ls']\n",
            "[[tools]]",
            "command-tools",
        ),
        ("[board]\noperators = ['alice']\n", "[board]", "board"),
        (
            "[[notify]]\nurl = 'http://127.0.0.1:9/hook'\n",
            "[[notify]]",
            "board",
        ),
        (
            "[oauth]\nresource = 'http://127.0.0.1:9/mcp'\nauthorization_servers = ['http://127.0.0.1:9']\n",
            "[oauth]",
            "oidc",
        ),
        (
            "[board.oidc]\nissuer = 'http://127.0.0.1:9'\nclient_id = 'board'\n",
            "[board.oidc]",
            "board",
        ),
        ("[policy]\ndir = 'policies'\n", "[policy]", "policy"),
        (
            "[email]\nhost = 'smtp.example.com'\nfrom = 'a@example.com'\n",
            "[email]",
            "email",
        ),
    ] {
        refused(&serve(dir.path(), Some(text), &[]), section, feature);
    }
}

#[test]
fn a_flag_or_subcommand_of_a_missing_feature_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let jwks = dir.path().join("jwks.json");
    std::fs::write(&jwks, "{\"keys\": []}").unwrap();
    let jwks = jwks.to_str().unwrap();
    for (flags, what, feature) in [
        (
            vec!["--notify-webhook", "http://127.0.0.1:9/hook"],
            "--notify-webhook",
            "board",
        ),
        (
            vec!["--otlp-endpoint", "http://127.0.0.1:9"],
            "--otlp-endpoint",
            "otel",
        ),
        (
            vec![
                "--jwt-jwks",
                jwks,
                "--jwt-issuer",
                "i",
                "--jwt-audience",
                "a",
            ],
            "--jwt-jwks (jwt_jwks in [server])",
            "jwt",
        ),
    ] {
        refused(&serve(dir.path(), None, &flags), what, feature);
    }
    refused(
        &run_in(dir.path(), &["wrap", "--", "some-server"]),
        "`mcp-tasks wrap`",
        "gateway",
    );
    refused(
        &run_in(
            dir.path(),
            &["policy", "check", "--principal", "a", "--tool", "t"],
        ),
        "`mcp-tasks policy check`",
        "policy",
    );
    refused(
        &run_in(dir.path(), &["bench", "--tasks", "10"]),
        "`mcp-tasks bench`",
        "bench",
    );
}

#[test]
fn the_demo_tools_and_a_board_turned_off_need_no_feature() {
    let dir = tempfile::tempdir().unwrap();
    let out = serve(
        dir.path(),
        Some("[board]\ndisabled = true\n"),
        &["--demo", "--no-board"],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

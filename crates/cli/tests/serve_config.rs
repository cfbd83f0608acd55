//! `mcp-tasks serve` with a config file, through the real binary: a relative database
//! path is relative to the file, a command tool's argument never becomes an option of
//! its program, and a failing store is reported once.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_mcp-tasks");

/// Runs the binary in `cwd` with stdin closed and waits for it.
fn run_in(cwd: &Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir(cwd)
        .env_remove("MCP_TASKS_DATABASE")
        .env_remove("MCP_TASKS_CONFIG")
        .env("MCP_TASKS_STATE_DIR", cwd)
        .stdin(Stdio::null())
        .output()
        .expect("run mcp-tasks")
}

#[test]
fn a_relative_database_in_the_config_file_is_next_to_the_file() {
    let conf = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let path = conf.path().join("tasks.toml");
    std::fs::write(&path, "[server]\ndatabase = \"sqlite://./here.db\"\n").unwrap();
    // Over stdio with stdin closed, the server opens its store and ends.
    let out = run_in(
        elsewhere.path(),
        &[
            "serve",
            "--stdio",
            "--log",
            "warn",
            "--config",
            path.to_str().unwrap(),
        ],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        conf.path().join("here.db").exists(),
        "the database is beside the file"
    );
    assert!(!elsewhere.path().join("here.db").exists());
}

#[test]
fn a_store_that_cannot_open_is_reported_once() {
    let dir = tempfile::tempdir().unwrap();
    let url = format!("sqlite://{}/missing/dir/x.db", dir.path().display());
    let out = run_in(
        dir.path(),
        &["serve", "--stdio", "--log", "warn", "--database", &url],
    );
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        err.matches("unable to open database file").count(),
        1,
        "{err}"
    );
    assert!(err.contains(&url), "{err}");
    // Named, with what is wrong: not SQLite's bare "code: 14".
    let missing = dir.path().join("missing/dir");
    let says = format!(
        "cannot open {}: the folder {} does not exist",
        missing.join("x.db").display(),
        missing.display()
    );
    assert_eq!(err.matches(&says).count(), 1, "{err}");
}

#[test]
fn a_database_under_a_file_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("plain-file");
    std::fs::write(&file, "not a folder").unwrap();
    let db = file.join("x.db");
    let url = format!("sqlite://{}", db.display());
    let out = run_in(
        dir.path(),
        &["serve", "--stdio", "--log", "warn", "--database", &url],
    );
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    let says = format!(
        "cannot open {}: {} is a file, not a folder",
        db.display(),
        file.display()
    );
    assert!(err.contains(&says), "{err}");
}

/// A config whose tools show their arguments, with and without `--` before them.
fn option_config(dir: &Path) -> std::path::PathBuf {
    let path = dir.join("tasks.toml");
    std::fs::write(
        &path,
        r#"
[[tools]]
name = "no_dashes"
command = ["ls", "-d", "{path}"]
task_support = "forbidden"
input_schema = { type = "object", properties = { path = { type = "string" } }, required = ["path"] }

[[tools]]
name = "show"
command = ["sh", "-c", "printf '[%s]' \"$1\"", "--", "{word}"]
task_support = "forbidden"
input_schema = { type = "object", properties = { word = { type = "string" } }, required = ["word"] }
"#,
    )
    .unwrap();
    path
}

fn call_over_stdio(config: &Path, tool: &str, arg: &str) -> (Option<i32>, Value) {
    // The config's folder is the working directory and the journal's folder.
    let dir = config.parent().unwrap();
    let out = run_in(
        dir,
        &[
            "call",
            tool,
            "--arg",
            arg,
            "--json",
            "--",
            BIN,
            "serve",
            "--stdio",
            "--log",
            "warn",
            "--database",
            "memory:",
            "--config",
            config.to_str().unwrap(),
        ],
    );
    let v = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (out.status.code(), v)
}

#[test]
fn an_argument_never_becomes_an_option_of_the_program() {
    let dir = tempfile::tempdir().unwrap();
    let config = option_config(dir.path());

    // `ls -d --version` would print ls's version: the call is refused instead.
    let (code, refused) = call_over_stdio(&config, "no_dashes", "path=--version");
    assert_eq!(code, Some(1));
    assert_eq!(refused["isError"], true);
    let text = refused["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("'path'") && text.contains("\"--\""), "{text}");
    assert!(!text.contains("coreutils"), "{text}");

    // After `--` the same value is a plain word, one word however it is spelled.
    let (code, shown) = call_over_stdio(&config, "show", "word=--version");
    assert_eq!(code, Some(0), "{shown}");
    assert_eq!(shown["structuredContent"]["stdout"], "[--version]\n");
    let (_, shown) = call_over_stdio(&config, "show", "word=a b; echo x");
    assert_eq!(shown["structuredContent"]["stdout"], "[a b; echo x]\n");
}

#[test]
fn an_unknown_placeholder_stops_the_server_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tasks.toml");
    std::fs::write(
        &path,
        "[[tools]]\nname = \"typo\"\ncommand = [\"echo\", \"--\", \"{nme}\"]\n\
         input_schema = { type = \"object\", properties = { name = { type = \"string\" } } }\n",
    )
    .unwrap();
    let out = run_in(
        dir.path(),
        &[
            "serve",
            "--stdio",
            "--database",
            "memory:",
            "--config",
            path.to_str().unwrap(),
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("tool 'typo'") && err.contains("{nme}"),
        "{err}"
    );
}

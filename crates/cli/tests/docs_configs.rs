//! Every config file the documentation shows starts the server as written, not only
//! parses: each whole ```toml block of README.md and docs/*.md, and the config files under
//! examples/, is handed to `mcp-tasks serve --config` and must reach "listening on".
//!
//! A page's command line for its config (`mcp-tasks serve --config approvals.toml --demo`)
//! gives the flags it is started with. Files a config names beside itself come from the
//! same page: a block whose first line is `# not a whole config file: NAME` is written
//! as NAME next to the config. Secrets the reader makes themselves (a board secret, a
//! webhook's `whsec_…`, a Slack token) are made fresh by the test when the page does not
//! show them. Only the address and the database are replaced (flags win over the file),
//! so the servers bind free loopback ports and leave nothing behind.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{listening_url, BIN};
use mcp_tasks_testkit::docs::code_blocks;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// The marker of a block that is not a config file of its own; followed by `: NAME`
/// it is a file the page's configs name beside themselves.
const NOT_A_CONFIG_FILE: &str = "# not a whole config file";

/// The first line of a Cedar policy file a page's config reads, before its path.
const CEDAR_FILE: &str = "// file:";

/// How long a config may take to start: an upstream that does not answer holds the
/// start for the gateway's startup wait (20 s) before the server serves without it.
const START_WITHIN: Duration = Duration::from_secs(60);

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// README.md and every page in docs/, with their names and text.
fn pages() -> Vec<(String, String)> {
    mcp_tasks_testkit::docs::pages(&root())
}

/// A config to start: where it was found, its text, the files beside it, and the
/// flags the page starts it with.
struct Case {
    place: String,
    text: String,
    beside: Vec<(String, String)>,
    flags: Vec<String>,
}

/// The flags after `--config NAME` in the page's `mcp-tasks serve --config NAME ...`
/// inline command, if it has one.
fn page_flags(text: &str) -> Vec<String> {
    for span in text.split('`').skip(1).step_by(2) {
        let words: Vec<&str> = span.split_whitespace().collect();
        if words.starts_with(&["mcp-tasks", "serve", "--config"]) && words.len() >= 4 {
            return words[4..].iter().map(|w| (*w).to_string()).collect();
        }
    }
    Vec::new()
}

fn cases() -> Vec<Case> {
    let mut cases = Vec::new();
    for (page, text) in pages() {
        let blocks: Vec<_> = code_blocks(&text)
            .into_iter()
            .filter(|(_, info, _)| info == "toml")
            .collect();
        let mut beside: Vec<(String, String)> = blocks
            .iter()
            .filter_map(|(_, _, body)| {
                let first = body.first()?.trim();
                let name = first.strip_prefix(NOT_A_CONFIG_FILE)?.strip_prefix(':')?;
                Some((name.trim().to_string(), body[1..].join("\n")))
            })
            .collect();
        // Cedar policies a `[policy] dir` reads: a ```cedar block whose first line is
        // `// file: policies/NAME.cedar`.
        beside.extend(
            code_blocks(&text)
                .into_iter()
                .filter_map(|(_, info, body)| {
                    let first = body.first()?.trim();
                    let name = first.strip_prefix(CEDAR_FILE)?;
                    (info == "cedar").then(|| (name.trim().to_string(), body[1..].join("\n")))
                }),
        );
        for (line, _, body) in &blocks {
            let first = body.first().map_or("", |l| l.trim());
            // Fragments, other files, and Cargo manifests of the library guide.
            if first.starts_with(NOT_A_CONFIG_FILE) || body.iter().any(|l| l.trim() == "[package]")
            {
                continue;
            }
            cases.push(Case {
                place: format!("{page}:{line}"),
                text: body.join("\n"),
                beside: beside.clone(),
                flags: page_flags(&text),
            });
        }
    }
    for entry in std::fs::read_dir(root().join("examples")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            cases.push(Case {
                place: format!("examples/{}", path.file_name().unwrap().to_string_lossy()),
                text: std::fs::read_to_string(&path).unwrap(),
                beside: Vec::new(),
                flags: Vec::new(),
            });
        }
    }
    cases
}

/// A secret the reader makes themselves, for a `*_file` key the page leaves to them.
fn made_secret(key: &str) -> String {
    if key == "secret_file" {
        // Webhook signing secrets are `whsec_` and the base64 of 24 to 64 random
        // bytes (here 32); the board's secret is any long string, and this one serves.
        "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=".to_string()
    } else if key.contains("bot_token") {
        "xoxb-0000000000-0000000000000-made-by-the-test".to_string()
    } else {
        "6d6164652d62792d7468652d746573742d6f6e6c792d6e6f742d612d7265616c".to_string()
    }
}

/// Writes the files a config names beside itself that the page did not give.
fn make_missing_files(dir: &Path, config: &toml::Value) {
    fn walk(dir: &Path, value: &toml::Value) {
        match value {
            toml::Value::Table(table) => {
                for (key, v) in table {
                    if let (true, Some(name)) = (key.ends_with("_file"), v.as_str()) {
                        let path = dir.join(name);
                        if !path.exists() {
                            std::fs::write(&path, made_secret(key)).unwrap();
                        }
                    }
                    walk(dir, v);
                }
            }
            toml::Value::Array(items) => items.iter().for_each(|v| walk(dir, v)),
            _ => {}
        }
    }
    walk(dir, config);
}

/// Starts `serve` on the case's config; `Err` holds what it printed when it did not
/// reach "listening on".
fn start(case: &Case) -> Result<(), String> {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("tasks.toml");
    std::fs::write(&config, &case.text).unwrap();
    for (name, body) in &case.beside {
        let path = dir.path().join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(path, body).unwrap();
    }
    let parsed: toml::Value = toml::from_str(&case.text).map_err(|e| e.to_string())?;
    make_missing_files(dir.path(), &parsed);
    let database = format!("sqlite://{}", dir.path().join("tasks.db").display());
    let mut child = Command::new(BIN)
        .current_dir(dir.path())
        .arg("serve")
        .arg("--config")
        .arg(&config)
        .args(&case.flags)
        .args(["--listen", "127.0.0.1:0", "--database", &database])
        .args(["--log", "warn"])
        .env_remove("MCP_TASKS_URL")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start mcp-tasks");
    let stderr = child.stderr.take().expect("stderr");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut printed = Vec::new();
    let outcome = loop {
        match rx.recv_timeout(START_WITHIN) {
            Ok(line) if listening_url(&line).is_some() => break Ok(()),
            Ok(line) => printed.push(line),
            Err(mpsc::RecvTimeoutError::Disconnected) => break Err(printed.join("\n")),
            Err(mpsc::RecvTimeoutError::Timeout) => {
                printed.push(format!("(not listening after {START_WITHIN:?})"));
                break Err(printed.join("\n"));
            }
        }
    };
    let _ = child.kill();
    let _ = child.wait();
    outcome
}

#[test]
fn every_config_in_the_docs_starts_the_server() {
    let cases = cases();
    assert!(cases.len() >= 6, "too few configs found: {}", cases.len());
    let handles: Vec<_> = cases
        .into_iter()
        .map(|case| std::thread::spawn(move || (case.place.clone(), start(&case))))
        .collect();
    let mut wrong = Vec::new();
    for handle in handles {
        let (place, outcome) = handle.join().unwrap();
        if let Err(printed) = outcome {
            wrong.push(format!("{place}:\n{printed}"));
        }
    }
    assert!(
        wrong.is_empty(),
        "configs in the docs that do not start the server:\n\n{}",
        wrong.join("\n\n")
    );
}

#[test]
fn the_page_flags_come_from_its_serve_command() {
    assert_eq!(
        page_flags("start it: `mcp-tasks serve --config approvals.toml --demo`, with:"),
        vec!["--demo".to_string()]
    );
    assert!(page_flags("`mcp-tasks serve --demo`").is_empty());
}

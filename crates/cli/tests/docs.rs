//! The documentation stays true to the binary: the configuration reference is the
//! `serve --help` text (regenerated, never edited), `wrap --help` says its own defaults,
//! links between the pages resolve,
//! the bench commands use real flags, and the README keeps its two commands.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::BIN;
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `mcp-tasks ARGS --help` with no environment, so that no variable's current value
/// (clap shows `[env: NAME=value]`) leaks into the text.
fn help(args: &[&str]) -> String {
    let out = Command::new(BIN)
        .args(args)
        .arg("--help")
        .env_clear()
        .output()
        .unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap()
}

/// What `docs/configuration.md` must hold.
fn configuration_reference() -> String {
    format!(
        "# Configuration reference: `mcp-tasks serve`\n\
         \n\
         <!-- Generated from `mcp-tasks serve --help` by crates/cli/tests/docs.rs: do not\n\
         edit by hand. After changing a flag, regenerate with\n\
         MCP_TASKS_UPDATE_DOCS=1 cargo test -p mcp-tasks-cli --test docs -->\n\
         \n\
         Most flags can also be set in the config file's `[server]` table, under the flag's\n\
         name with `_` for `-`; the board's in `[board]`; which key each flag has, and the\n\
         few that are flags only, are in [serving.md](serving.md). A flag wins over the\n\
         file. `mcp-tasks wrap` takes every `serve` flag, plus `--prefix`, `--resumable`\n\
         and `--max-upstream-connections` ([gateway.md](gateway.md)); it serves stdio\n\
         unless `--listen` is given, and keeps its tasks in the user's state folder\n\
         (`mcp-tasks wrap --help` shows its defaults).\n\
         \n\
         ```text\n{}```\n",
        help(&["serve"])
    )
}

#[test]
fn the_configuration_reference_is_the_help_text() {
    let path = root().join("docs/configuration.md");
    let wanted = configuration_reference();
    if std::env::var("MCP_TASKS_UPDATE_DOCS").is_ok_and(|v| v == "1") {
        std::fs::write(&path, &wanted).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == wanted,
        "docs/configuration.md is stale: regenerate it with \
         MCP_TASKS_UPDATE_DOCS=1 cargo test -p mcp-tasks-cli --test docs"
    );
}

/// The Markdown pages: the README and every page in docs/.
fn pages() -> Vec<PathBuf> {
    let mut pages = vec![root().join("README.md")];
    for entry in std::fs::read_dir(root().join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            pages.push(path);
        }
    }
    pages
}

/// The relative link targets of a page, outside HTML comments (a slot for a page to
/// come stays in a comment).
fn relative_links(text: &str) -> Vec<String> {
    let mut visible = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("<!--") {
        visible.push_str(&rest[..start]);
        rest = rest[start..]
            .split_once("-->")
            .map_or("", |(_, after)| after);
    }
    visible.push_str(rest);
    visible
        .split("](")
        .skip(1)
        .filter_map(|s| s.split(')').next())
        .filter(|t| !t.contains("://") && !t.starts_with('#') && !t.starts_with("mailto:"))
        .map(|t| t.split('#').next().unwrap_or(t).to_string())
        .filter(|t| !t.is_empty())
        .collect()
}

#[test]
fn links_between_the_pages_resolve() {
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        let dir = page.parent().unwrap();
        for link in relative_links(&text) {
            assert!(
                dir.join(&link).exists(),
                "{}: the link {link} points at nothing",
                page.display()
            );
        }
    }
}

#[test]
fn the_bench_commands_use_real_flags_and_paths() {
    let flags = help(&["bench"]);
    let text = std::fs::read_to_string(root().join("docs/benchmarks.md")).unwrap();
    let commands: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("target/release/mcp-tasks bench") || l.starts_with("cargo build"))
        .collect();
    assert!(commands.len() >= 3, "{commands:?}");
    for line in commands {
        // `bench soak …` and `bench replicas …` have flags of their own.
        let sub = line
            .split_whitespace()
            .nth(2)
            .filter(|w| line.starts_with("target/") && !w.starts_with("--"));
        let flags = match sub {
            Some(sub) => help(&["bench", sub]),
            None => flags.clone(),
        };
        for word in line.split_whitespace() {
            if let Some(flag) = word.strip_prefix("--").filter(|f| !f.is_empty()) {
                if line.starts_with("target/") {
                    assert!(
                        flags.contains(&format!("--{flag}")),
                        "{line}: --{flag} is not a bench flag"
                    );
                }
            }
            // Paths inside the repository (not build outputs) exist.
            if word.starts_with("bench/") && !word.contains("/target/") {
                assert!(root().join(word).exists(), "{line}: {word} does not exist");
            }
        }
    }
}

#[test]
fn the_readme_keeps_its_two_commands() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    for command in [
        "cargo run -p mcp-tasks-cli -- serve --demo",
        "bash scripts/test.sh",
        "cargo install --path crates/cli --locked",
    ] {
        assert!(readme.contains(command), "README.md lost `{command}`");
    }
}

/// `wrap` takes `serve`'s flags but serves stdio and keeps its tasks in the user's
/// state folder by default: its help says so, not `serve`'s defaults.
#[test]
fn every_command_shows_its_own_defaults() {
    let serve = help(&["serve"]);
    assert!(serve.contains("[default: 127.0.0.1:8080]"), "{serve}");
    assert!(serve.contains("--stdio"), "{serve}");
    let wrap = help(&["wrap"]);
    for not_wrap in ["127.0.0.1:8080", "./mcp-tasks.db", "--stdio"] {
        assert!(
            !wrap.contains(not_wrap),
            "wrap --help shows {not_wrap}:\n{wrap}"
        );
    }
    assert!(wrap.contains("one session over stdin/stdout]"), "{wrap}");
    assert!(wrap.contains("wrap.db"), "{wrap}");
    // The rest of serve's flags are there, with the same defaults.
    assert!(
        wrap.contains("--poll-interval") && wrap.contains("[default: 1s]"),
        "{wrap}"
    );
}

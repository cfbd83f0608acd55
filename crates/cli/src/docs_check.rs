//! The documentation against the binary itself (unit tests, since they need the
//! argument parser and the config parser, which live in this binary): every
//! `mcp-tasks …` command line of README.md and docs/*.md parses, every ```toml
//! snippet loads, every `serve` flag has the config key the docs name, and every demo
//! tool is described. crates/cli/tests/docs.rs checks what the built binary prints.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::config::ConfigFile;
use crate::Cli;
use clap::{CommandFactory, Parser};
use mcp_tasks_testkit::docs::code_blocks;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// README.md and every page in docs/, with their names and text.
fn pages() -> Vec<(String, String)> {
    mcp_tasks_testkit::docs::pages(&root())
}

/// The inline code spans of a page outside code blocks (a span may wrap a line).
fn inline_spans(text: &str) -> Vec<(usize, String)> {
    let mut prose = String::new();
    let mut in_block = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_block = !in_block;
            prose.push('\n');
            continue;
        }
        if !in_block {
            prose.push_str(line);
        }
        prose.push('\n');
    }
    let mut spans = Vec::new();
    let mut rest = prose.as_str();
    let mut line = 1;
    while let Some(start) = rest.find('`') {
        line += rest[..start].matches('\n').count();
        let after = &rest[start + 1..];
        let Some(end) = after.find('`') else { break };
        spans.push((line, after[..end].replace('\n', " ")));
        line += after[..end].matches('\n').count();
        rest = &after[end + 1..];
    }
    spans
}

/// The words of one shell command line: quotes removed; a word that starts a comment,
/// a pipe, a redirection or a background `&` ends the command.
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' | '"' => {
                in_word = true;
                for q in chars.by_ref() {
                    if q == c {
                        break;
                    }
                    word.push(q);
                }
            }
            '\\' => {
                in_word = true;
                word.extend(chars.next());
            }
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
            }
            '#' | '|' | '>' | '&' | ';' | '<' if !in_word => break,
            '|' | '>' | '&' | ';' | '<' => {
                // `2>/dev/null`: the descriptor number is no argument.
                let redirected = matches!(c, '>' | '<') && word.chars().all(|d| d.is_ascii_digit());
                if !redirected {
                    words.push(std::mem::take(&mut word));
                }
                return words;
            }
            c => {
                in_word = true;
                word.push(c);
            }
        }
    }
    if in_word {
        words.push(word);
    }
    words
}

/// The `mcp-tasks` arguments of a command line that runs the binary (`mcp-tasks …`,
/// `target/release/mcp-tasks …`, `cargo run -p mcp-tasks-cli [--release] -- …`, after
/// a `$ ` prompt and `VAR=value` assignments); `None` for any other line.
fn mcp_tasks_args(line: &str) -> Option<Vec<String>> {
    let line = line.trim().trim_start_matches("$ ");
    let words = shell_words(line);
    let mut words = words.iter().skip_while(|w| {
        w.contains('=')
            && !w.starts_with('-')
            && w.split('=')
                .next()
                .is_some_and(|k| k.chars().all(|c| c.is_ascii_uppercase() || c == '_'))
    });
    let first = words.next()?;
    if first == "mcp-tasks" || (first.starts_with("target/") && first.ends_with("/mcp-tasks")) {
        // A shell variable (`--server-pid $PID`) stands for a number.
        let number = |w: &String| {
            if w.starts_with('$') {
                "1".to_string()
            } else {
                w.clone()
            }
        };
        return Some(words.map(number).collect());
    }
    if first == "cargo" {
        let rest: Vec<&String> = words.collect();
        let is_run = rest.first().is_some_and(|w| *w == "run")
            && rest
                .windows(2)
                .any(|w| w[0] == "-p" && w[1] == "mcp-tasks-cli");
        let dashes = rest.iter().position(|w| *w == "--")?;
        return is_run.then(|| rest[dashes + 1..].iter().map(|w| w.to_string()).collect());
    }
    None
}

/// Every `mcp-tasks …` command line of the docs: code-block lines (with `\`
/// continuations joined) and inline code that starts with `mcp-tasks `.
fn command_lines() -> Vec<(String, usize, String, Vec<String>)> {
    let mut found = Vec::new();
    for (page, text) in pages() {
        for (first, info, body) in code_blocks(&text) {
            if !matches!(info.as_str(), "" | "sh" | "bash" | "console" | "shell") {
                continue;
            }
            let mut joined = String::new();
            let mut start = first;
            for (i, line) in body.iter().enumerate() {
                if joined.is_empty() {
                    start = first + i;
                }
                match line.trim_end().strip_suffix('\\') {
                    Some(head) => {
                        joined.push_str(head);
                        joined.push(' ');
                    }
                    None => {
                        joined.push_str(line);
                        if let Some(args) = mcp_tasks_args(&joined) {
                            found.push((page.clone(), start, joined.trim().to_string(), args));
                        }
                        joined.clear();
                    }
                }
            }
        }
        for (line, span) in inline_spans(&text) {
            if span.starts_with("mcp-tasks ") || span.starts_with("cargo run -p mcp-tasks-cli") {
                if let Some(args) = mcp_tasks_args(&span) {
                    found.push((page.clone(), line, span, args));
                }
            }
        }
    }
    found
}

#[test]
fn every_command_line_in_the_docs_parses() {
    let lines = command_lines();
    assert!(lines.len() >= 20, "too few command lines found: {lines:?}");
    let mut wrong = Vec::new();
    for (page, line, text, mut args) in lines {
        // A bare command named in prose (`mcp-tasks call`) must exist.
        if args.len() == 1 && !args[0].starts_with('-') {
            args.push("--help".into());
        }
        let argv = std::iter::once("mcp-tasks".to_string()).chain(args);
        if let Err(e) = Cli::try_parse_from(argv) {
            use clap::error::ErrorKind::{DisplayHelp, DisplayVersion};
            if !matches!(e.kind(), DisplayHelp | DisplayVersion) {
                let reason = e.to_string();
                let reason = reason.lines().next().unwrap_or_default().to_string();
                wrong.push(format!("{page}:{line}: `{text}`: {reason}"));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "command lines of the docs that mcp-tasks does not accept:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_command_line_finder_finds_what_it_should() {
    assert_eq!(
        mcp_tasks_args("$ mcp-tasks serve --demo --database memory: 2>/dev/null &"),
        Some(vec![
            "serve".into(),
            "--demo".into(),
            "--database".into(),
            "memory:".into()
        ])
    );
    assert_eq!(
        mcp_tasks_args("cargo run -p mcp-tasks-cli -- serve --config 'a b.toml' # x"),
        Some(vec!["serve".into(), "--config".into(), "a b.toml".into()])
    );
    assert_eq!(
        mcp_tasks_args("MCP_TASKS_LOG=debug target/release/mcp-tasks bench --x"),
        Some(vec!["bench".into(), "--x".into()])
    );
    assert_eq!(mcp_tasks_args("cargo install --path crates/cli"), None);
    assert_eq!(mcp_tasks_args("npx mcp-tasks serve"), None);
    assert_eq!(mcp_tasks_args("crates/mcp-tasks the facade crate"), None);
    // A wrong flag is caught.
    assert!(Cli::try_parse_from(["mcp-tasks", "serve", "--no-such-flag"]).is_err());
}

/// A ```toml block whose first line starts with this comment is a fragment (a table to
/// merge into a config file, or another file's format, e.g. `# not a whole config file:
/// tokens.toml` for a file a config names beside itself) and is not loaded on its own.
const NOT_A_CONFIG_FILE: &str = "# not a whole config file";

#[test]
fn every_toml_snippet_in_the_docs_loads() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tasks.toml");
    let mut loaded = 0;
    let mut wrong = Vec::new();
    for (page, text) in pages() {
        for (line, info, body) in code_blocks(&text) {
            if info != "toml"
                || body
                    .first()
                    .is_some_and(|l| l.trim().starts_with(NOT_A_CONFIG_FILE))
            {
                continue;
            }
            std::fs::write(&path, body.join("\n")).unwrap();
            match ConfigFile::load(&path) {
                Ok(_) => loaded += 1,
                Err(e) => wrong.push(format!("{page}:{line}: {e:#}")),
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "TOML snippets that do not load:\n{}",
        wrong.join("\n")
    );
    assert!(loaded >= 2, "too few TOML snippets found");
}

/// Where the config file takes each `serve` flag, as serving.md says: `[board]` for
/// the board's, none for those that apply before the file is read or only as flags.
fn file_key(flag: &str) -> Option<(&'static str, String)> {
    let board = [
        ("no-board", "disabled"),
        ("operators", "operators"),
        ("public-url", "public_url"),
        ("board-secret-file", "secret_file"),
        ("board-takes-questions", "takes_questions"),
    ];
    if let Some((_, key)) = board.iter().find(|(f, _)| *f == flag) {
        return Some(("board", key.to_string()));
    }
    let flags_only = [
        "config",
        "stdio",
        "demo",
        "conformance-fixtures",
        "log",
        "log-format",
        "otlp-endpoint",
        "notify-webhook",
        "notify-retry",
        "notify-timeout",
        "help",
    ];
    if flags_only.contains(&flag) {
        return None;
    }
    let key = match flag {
        "allowed-origin" => "allowed_origins".to_string(),
        "allowed-host" => "allowed_hosts".to_string(),
        f => f.replace('-', "_"),
    };
    Some(("server", key))
}

#[test]
fn every_serve_flag_has_the_config_key_the_docs_name() {
    let mut cli = Cli::command();
    let serve = cli.find_subcommand_mut("serve").unwrap();
    let mut checked = 0;
    for arg in serve.get_arguments() {
        let Some(flag) = arg.get_long() else { continue };
        let Some((table, key)) = file_key(flag) else {
            continue;
        };
        let text = format!("[{table}]\n{key} = {{}}\n");
        if let Err(e) = ConfigFile::parse(&text) {
            assert!(!e.contains("unknown key"), "--{flag}: {e}");
        }
        checked += 1;
    }
    assert!(checked > 30, "{checked}");
    let serving = std::fs::read_to_string(root().join("docs/serving.md")).unwrap();
    for said in [
        "`disabled = true`",
        "`secret_file`",
        "`takes_questions`",
        "`allowed_origins`",
        "--notify-retry",
    ] {
        assert!(
            serving.contains(said),
            "docs/serving.md does not say {said}"
        );
    }
}

#[test]
fn every_demo_tool_is_described() {
    let mut tools = mcp_tasks_server::ToolRegistry::new();
    crate::demo::register(&mut tools).unwrap();
    let serving = std::fs::read_to_string(root().join("docs/serving.md")).unwrap();
    let mut missing = Vec::new();
    for tool in tools.iter() {
        if !serving.contains(&format!("- `{} {{", tool.name())) {
            missing.push(tool.name().to_string());
        }
    }
    assert!(
        missing.is_empty(),
        "demo tools not described in docs/serving.md: {missing:?}"
    );
}

#[test]
fn every_crate_is_in_the_layout_and_its_dependencies() {
    let layout = std::fs::read_to_string(root().join("docs/layout.md")).unwrap();
    for entry in std::fs::read_dir(root().join("crates")).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        assert!(
            layout.contains(&format!("crates/{name} ")),
            "docs/layout.md does not show crates/{name}"
        );
        let short = name.strip_prefix("mcp-tasks-").unwrap_or(&name).to_string();
        let row = if short == "mcp-tasks" {
            "mcp-tasks (facade)".to_string()
        } else {
            short
        };
        assert!(
            layout.lines().any(|l| l.starts_with(&format!("{row} "))),
            "docs/layout.md's dependency list has no line for {row}"
        );
    }
}

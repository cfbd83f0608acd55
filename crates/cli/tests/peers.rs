//! The interop scenarios (`mcp_tasks_testkit::peer_suite`) with the `mcp-tasks` CLI,
//! run as a person would, as the front-end, against every peer: fastmcp-tasks, the
//! everything server (HTTP and stdio), the task servers written with rmcp, tower-mcp
//! and turul (memory and SQLite stores), and the TypeScript SDK's example servers
//! (HTTP only). Each step is a new process (`call`, `call --detach`, `get`, `cancel`,
//! `watch`, `tools`), with `--wire` when the scenario forces one; questions and
//! samplings are answered at the prompt in a pseudo-terminal.
//!
//! `tests/interop/run.sh` installs or builds the peers and points at them with
//! environment variables (`MCP_TASKS_INTEROP_FASTMCP_PYTHON`,
//! `MCP_TASKS_INTEROP_EVERYTHING`, `MCP_TASKS_INTEROP_RMCP_SERVER`,
//! `MCP_TASKS_INTEROP_TOWER_MCP_SERVER`, `MCP_TASKS_INTEROP_TURUL_SERVER`,
//! `MCP_TASKS_INTEROP_NODE`) and picks a peer's tests by their module
//! (`fastmcp_tasks_`, `everything_`, `rmcp_`, `tower_mcp_`, `turul_memory_`,
//! `turul_sqlite_`, `ts_streamable_http_`, `ts_task_interactive_`). Without its
//! variable a peer's tests print a notice and pass; a scenario a peer cannot do is
//! listed as ignored, with the reason.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use mcp_tasks_testkit::peer_suite::{
    self, Answer, Endpoint, FrontEnd, Negotiated, Progress, Progressed, Refused, Run, Sampled,
    Sampling, Seen, Started, Text,
};
use serde_json::Value;
use std::process::{Command, Output};

mod common;

use common::{json_out, state_dir, stderr, stdout};

mcp_tasks_testkit::peer_suite!(cli, crate::cli);

/// The CLI as the front-end.
fn cli() -> Cli {
    Cli
}

/// The `mcp-tasks` binary, a process per step.
struct Cli;

/// `mcp-tasks SUBCOMMAND [URL] ARGS... [--wire W] [-- PROGRAM ARGS...]`: the server's
/// URL comes first, a stdio server's command line last. The journal is the test
/// binary's shared folder: every step names its task by id.
fn command(sub: &str, at: &Endpoint, wire: peer_suite::Wire, args: &[&str]) -> Command {
    let mut argv: Vec<&str> = vec![sub];
    if let Endpoint::Http(url) = at {
        argv.push(url);
    }
    argv.extend_from_slice(args);
    if let Some(w) = wire.forced() {
        argv.extend(["--wire", w]);
    }
    if let Endpoint::Stdio { program, args } = at {
        argv.extend(["--", program.as_str()]);
        argv.extend(args.iter().map(String::as_str));
    }
    common::command(state_dir(), &argv)
}

fn run(sub: &str, at: &Endpoint, wire: peer_suite::Wire, args: &[&str]) -> Output {
    mcp_tasks_testkit::cli::run(command(sub, at, wire, args))
}

/// `--session S ID`, or `ID` alone when the task lives in no session.
fn task_args<'a>(task: &'a Started, extra: &[&'a str]) -> Vec<&'a str> {
    let mut a = Vec::new();
    if let Some(s) = &task.session {
        a.extend(["--session", s.as_str()]);
    }
    a.push(task.id.as_str());
    a.extend_from_slice(extra);
    a
}

/// The tool's arguments as `--arg KEY=VALUE` (strings as they are, the rest as JSON:
/// the CLI reads each by the tool's schema).
fn tool_args(tool: &str, args: &Value) -> Vec<String> {
    let mut a = vec![tool.to_string()];
    for (k, v) in args.as_object().expect("arguments are an object") {
        let v = match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        a.extend(["--arg".to_string(), format!("{k}={v}")]);
    }
    a
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

/// The status messages of the `working: MESSAGE` lines, in order, each once in a row.
fn messages_of(log: &str) -> Vec<String> {
    let mut messages: Vec<String> = Vec::new();
    for line in log.lines() {
        if let Some((_, m)) = line.split_once("working: ") {
            let m = m.trim().to_string();
            if messages.last() != Some(&m) {
                messages.push(m);
            }
        }
    }
    messages
}

/// The needle of an expected text, for a terminal that shows it among other lines.
fn needle(t: Text) -> &'static str {
    match t {
        Text::Is(s) | Text::Has(s) => s,
        Text::Around(..) => panic!("a terminal check needs a fixed text"),
    }
}

/// Waits for the program in the pseudo-terminal to end with status 0.
fn exits_zero(p: &mut rexpect::session::PtySession) -> String {
    let rest = p.exp_eof().unwrap();
    let status = format!("{:?}", p.process().wait().unwrap());
    assert!(
        status.starts_with("Exited(") && status.ends_with(", 0)"),
        "{status}"
    );
    rest
}

/// `watch --json` to the end, then `get --json` once more.
fn watch(at: &Endpoint, wire: peer_suite::Wire, task: &Started) -> Run {
    let watched = run("watch", at, wire, &task_args(task, &["--json"]));
    let log = stderr(&watched);
    let v = json_out(&watched);
    let (status, text, structured) = match watched.status.code() {
        Some(0) => (
            "completed".to_string(),
            v["content"][0]["text"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
            Some(v["structuredContent"].clone()),
        ),
        Some(3) => (
            v["status"].as_str().unwrap().to_string(),
            String::new(),
            None,
        ),
        other => panic!("watch exited {other:?}: {log}"),
    };
    let got = json_out(&run("get", at, wire, &task_args(task, &["--json"])));
    Run {
        id: Some(task.id.clone()),
        wire: None,
        status,
        text,
        structured,
        messages: Some(messages_of(&log)),
        statuses: None,
        asked: None,
        got_after: got["status"].as_str().map(str::to_string),
    }
}

fn seen(v: &Value) -> Seen {
    Seen {
        id: v["taskId"].as_str().map(str::to_string),
        status: v["status"].as_str().unwrap_or_default().to_string(),
        message: v["statusMessage"].as_str().map(str::to_string),
    }
}

impl FrontEnd for Cli {
    type Task = ();

    async fn negotiate(&self, at: &Endpoint, wire: peer_suite::Wire) -> Negotiated {
        let out = run("tools", at, wire, &["--json"]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let tools = json_out(&out)
            .as_array()
            .expect("a list of tools")
            .iter()
            .map(|t| {
                (
                    t["name"].as_str().unwrap().to_string(),
                    t["taskSupport"].as_str().map(str::to_string),
                )
            })
            .collect();
        Negotiated {
            wire: None,
            tasks: None,
            server: None,
            tools,
        }
    }

    async fn call(
        &self,
        at: &Endpoint,
        wire: peer_suite::Wire,
        tool: &str,
        args: &Value,
        how: Answer,
    ) -> Run {
        let argv = tool_args(tool, args);
        let (q, typed, expect) = match how {
            Answer::None => {
                // Over stdio the result is read as JSON, as a script piping a local
                // server would; over HTTP as the text a person reads.
                let stdio = matches!(at, Endpoint::Stdio { .. });
                let mut argv = strs(&argv);
                if stdio {
                    argv.push("--json");
                }
                let out = run("call", at, wire, &argv);
                let log = stderr(&out);
                let status = match out.status.code() {
                    Some(0) => "completed".to_string(),
                    Some(3) => "cancelled".to_string(),
                    other => format!("failed (exit {other:?}): {log}"),
                };
                let id = log
                    .split_once("task ")
                    .and_then(|(_, rest)| rest.split_once(" started"))
                    .map(|(id, _)| id.to_string());
                return Run {
                    id,
                    // A person's output names no wire (`--detach --json` does).
                    wire: None,
                    status,
                    text: if stdio {
                        json_out(&out)["content"][0]["text"]
                            .as_str()
                            .unwrap_or_default()
                            .to_string()
                    } else {
                        stdout(&out).trim().to_string()
                    },
                    structured: None,
                    // With --json no status lines are printed.
                    messages: (!stdio).then(|| messages_of(&log)),
                    statuses: None,
                    asked: None,
                    got_after: None,
                };
            }
            Answer::Accept(q) => (q, q.typed, q.answered),
            Answer::Decline(q) => (q, "!decline", q.declined),
        };
        // A person at the terminal answers the question.
        let cmd = command("call", at, wire, &strs(&argv));
        let mut p = rexpect::session::spawn_command(cmd, Some(60_000)).expect("spawn in a pty");
        p.exp_regex(r"task [0-9a-zA-Z_-]+ started").unwrap();
        for shown in q.shows {
            p.exp_string(shown).unwrap();
        }
        p.send_line(typed).unwrap();
        let text = needle(expect);
        p.exp_string(text).unwrap();
        exits_zero(&mut p);
        Run {
            id: None,
            wire: None,
            status: "completed".to_string(),
            text: text.to_string(),
            structured: None,
            messages: None,
            statuses: None,
            asked: None,
            got_after: None,
        }
    }

    async fn start(
        &self,
        at: &Endpoint,
        wire: peer_suite::Wire,
        tool: &str,
        args: &Value,
    ) -> (Started, ()) {
        let mut argv = tool_args(tool, args);
        argv.push("--detach".to_string());
        // Without --json, --detach prints the task's id alone.
        let plain = run("call", at, wire, &strs(&argv));
        assert_eq!(plain.status.code(), Some(0), "{}", stderr(&plain));
        let id = stdout(&plain).trim().to_string();
        assert!(
            !id.is_empty() && !id.contains(char::is_whitespace),
            "{id:?}"
        );
        argv.push("--json".to_string());
        let out = run("call", at, wire, &strs(&argv));
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let v = json_out(&out);
        let started = Started {
            id: v["taskId"].as_str().expect("a task id").to_string(),
            wire: v["wire"].as_str().expect("the wire").to_string(),
            session: v["sessionId"].as_str().map(str::to_string),
        };
        (started, ())
    }

    async fn start_refused(
        &self,
        at: &Endpoint,
        wire: peer_suite::Wire,
        tool: &str,
        args: &Value,
    ) -> Refused {
        let mut argv = tool_args(tool, args);
        argv.extend(["--detach".to_string(), "--json".to_string()]);
        let out = run("call", at, wire, &strs(&argv));
        Refused {
            code: None,
            exit: out.status.code(),
            text: format!("stdout: {}\nstderr: {}", stdout(&out), stderr(&out)),
        }
    }

    async fn get(&self, at: &Endpoint, wire: peer_suite::Wire, task: &Started, _: &()) -> Seen {
        let out = run("get", at, wire, &task_args(task, &["--json"]));
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        seen(&json_out(&out))
    }

    async fn cancel_refused(
        &self,
        at: &Endpoint,
        wire: peer_suite::Wire,
        task: &Started,
        _: &(),
    ) -> Refused {
        let out = run("cancel", at, wire, &task_args(task, &["--json"]));
        Refused {
            code: None,
            exit: out.status.code(),
            text: format!("stdout: {}\nstderr: {}", stdout(&out), stderr(&out)),
        }
    }

    async fn cancel(&self, at: &Endpoint, wire: peer_suite::Wire, task: &Started, _: &()) -> Seen {
        let out = run("cancel", at, wire, &task_args(task, &["--json"]));
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        seen(&json_out(&out))
    }

    async fn result(&self, at: &Endpoint, wire: peer_suite::Wire, task: &Started, _: ()) -> Run {
        watch(at, wire, task)
    }

    async fn resume(&self, at: &Endpoint, wire: peer_suite::Wire, task: &Started, _: ()) -> Run {
        watch(at, wire, task)
    }

    async fn wait_for_message(
        &self,
        at: &Endpoint,
        wire: peer_suite::Wire,
        task: &Started,
        _: &mut (),
        prefix: &str,
    ) {
        mcp_tasks_testkit::eventually(peer_suite::LIMIT, || async {
            let got = json_out(&run("get", at, wire, &task_args(task, &["--json"])));
            got["statusMessage"]
                .as_str()
                .is_some_and(|m| m.starts_with(prefix))
        })
        .await;
    }

    async fn get_unknown(&self, at: &Endpoint, wire: peer_suite::Wire, id: &str) -> Refused {
        let out = run("get", at, wire, &[id, "--json"]);
        let text = stderr(&out);
        // "error: getting task ID: server error CODE: MESSAGE"
        let code = text
            .split_once("server error ")
            .and_then(|(_, rest)| rest.split(':').next())
            .and_then(|c| c.parse().ok());
        Refused {
            code,
            exit: out.status.code(),
            text,
        }
    }

    async fn sample(
        &self,
        at: &Endpoint,
        wire: peer_suite::Wire,
        s: &Sampling,
        reply: &str,
    ) -> Sampled {
        let argv = tool_args(s.tool, &peer_suite::json(s.args));
        let cmd = command("call", at, wire, &strs(&argv));
        let mut p = rexpect::session::spawn_command(cmd, Some(60_000)).expect("spawn in a pty");
        p.exp_string(s.shows).unwrap();
        p.exp_string("Reply (as the model)").unwrap();
        p.send_line(reply).unwrap();
        let shown = match s.wraps {
            // The result's text printed as it is: what comes before the reply, then the
            // reply on the next line (past the echo of the typed line).
            Some(before) => {
                let first = before.trim_end_matches('\n');
                p.exp_string(first).unwrap();
                p.exp_string(reply).unwrap();
                format!("{before}{reply}")
            }
            None => {
                let shown = format!("\"text\": \"{reply}\"");
                p.exp_string(&shown).unwrap();
                shown
            }
        };
        exits_zero(&mut p);
        Sampled {
            prompt: None,
            asked: None,
            text: shown,
        }
    }

    async fn progress(&self, at: &Endpoint, wire: peer_suite::Wire, p: &Progress) -> Progressed {
        let argv = tool_args(p.tool, &peer_suite::json(p.args));
        let out = run("call", at, wire, &strs(&argv));
        let log = stderr(&out);
        assert_eq!(out.status.code(), Some(0), "{log}");
        // `progress P/T` lines, each once in a row.
        let mut steps: Vec<(f64, Option<f64>)> = Vec::new();
        for (_, rest) in log
            .match_indices("progress ")
            .map(|(i, _)| log.split_at(i + 9))
        {
            let word: String = rest
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == '/' || *c == '.')
                .collect();
            let step = match word.split_once('/') {
                Some((p, t)) => (p.parse().ok(), t.parse().ok()),
                None => (word.parse().ok(), None),
            };
            if let (Some(p), total) = step {
                if steps.last() != Some(&(p, total)) {
                    steps.push((p, total));
                }
            }
        }
        Progressed {
            steps,
            text: stdout(&out).trim().to_string(),
        }
    }
}

//! Runs the example binary over stdio: a task completes, and the journal the binary
//! prints when the client leaves shows its creation and completion.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Stdio};

#[test]
fn tasks_go_through_the_custom_store() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_example-custom-store"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut send = |v: Value| writeln!(stdin, "{v}").unwrap();
    let mut read = || {
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        serde_json::from_str::<Value>(&line).unwrap()
    };
    send(
        json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"smoke","version":"1"}}}),
    );
    assert_eq!(read()["id"], 1);
    send(json!({"jsonrpc":"2.0","method":"notifications/initialized"}));
    send(
        json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"remember","arguments":{"text":"milk"},"task":{}}}),
    );
    let created = loop {
        let m = read();
        if m["id"] == 2 {
            break m;
        }
    };
    let task_id = created["result"]["task"]["taskId"]
        .as_str()
        .unwrap()
        .to_string();
    send(json!({"jsonrpc":"2.0","id":3,"method":"tasks/result","params":{"taskId": task_id}}));
    let result = loop {
        let m = read();
        if m["id"] == 3 {
            break m;
        }
    };
    assert_eq!(result["result"]["content"][0]["text"], "noted: milk");
    send(json!({"jsonrpc":"2.0","id":4,"method":"ping"}));
    drop(stdin);
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert!(child.wait().unwrap().success());
    assert!(
        err.contains(&format!("journal: create {task_id} working")),
        "{err}"
    );
    assert!(
        err.contains(&format!("journal: transition {task_id} completed")),
        "{err}"
    );
}

//! What a new user sees when `mcp-tasks serve --demo` starts: where it listens, the
//! board, and a `try:` line whose command, run exactly as printed, calls a demo tool.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

#[test]
fn the_first_screen_offers_a_command_that_works() {
    let state = common::state_dir();
    let (server, lines) = common::spawn_listening_logged(&[
        "serve",
        "--demo",
        "--listen",
        "127.0.0.1:0",
        "--database",
        "memory:",
    ]);
    let mut board = None;
    let try_line = loop {
        let line = lines
            .recv_timeout(Duration::from_secs(30))
            .expect("serve printed a try: line after its address");
        if let Some(url) = line.strip_prefix("mcp-tasks: task board at ") {
            board = Some(url.to_string());
        }
        if let Some(rest) = line.strip_prefix("mcp-tasks: try: ") {
            break rest.to_string();
        }
    };
    let board = board.expect("the board's address comes before the try: line");
    assert!(
        try_line.ends_with(&format!(", and watch it on {board}")),
        "{try_line}"
    );
    let command = try_line.split(", and watch it on").next().unwrap();
    let words: Vec<&str> = command.split_whitespace().collect();
    assert_eq!(words[0], "mcp-tasks", "{try_line}");
    assert!(
        words.contains(&server.url.as_str()),
        "a server off the default address is named in the command: {try_line}"
    );
    let out = common::run(state, &words[1..]);
    assert!(out.status.success(), "{command}: {}", common::stderr(&out));
    assert!(
        common::stdout(&out).contains("finished after 5 s"),
        "{}",
        common::stdout(&out)
    );
}

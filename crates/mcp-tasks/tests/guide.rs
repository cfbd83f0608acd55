//! docs/library.md, followed to the end as a newcomer would: its `Cargo.toml` and
//! `src/main.rs` are taken out of the page into a new project outside this repository,
//! with the `[patch.crates-io]` section the page tells you to add, built there with
//! cargo, started, and driven with our client: `count_to` as a task (its question
//! answered, then declined) and `echo` as a plain call. The page's files must also be
//! `examples/count-to` as they are, so that the example in the repository and the
//! guide cannot drift apart.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use mcp_tasks_client::input::{accept, decline};
use mcp_tasks_client::{Client, Target, TaskOptions, TaskStatus};
use mcp_tasks_testkit::eventually;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// The longest the project's build may take (a clean debug build of the minimal
/// feature set is about two minutes on two cores; later runs reuse `target/guide`).
const BUILD_LIMIT: Duration = Duration::from_secs(20 * 60);
/// The longest the built server may take to listen (only a failing test waits it out).
const LISTEN_LIMIT: Duration = Duration::from_secs(30);

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The code block of the page whose info string is `info` (e.g. `toml file=Cargo.toml`).
fn block(page: &str, info: &str) -> String {
    let fence = format!("```{info}\n");
    let start = page
        .find(&fence)
        .unwrap_or_else(|| panic!("docs/library.md has no ```{info} block"))
        + fence.len();
    let len = page[start..].find("```").expect("the block is closed");
    page[start..start + len].to_string()
}

/// Kills the server when the test ends, however it ends.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn build(project: &Path, target_dir: &Path) -> PathBuf {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut child = Command::new(cargo)
        .args(["build", "--quiet"])
        .current_dir(project)
        .env("CARGO_TARGET_DIR", target_dir)
        // The outer `cargo test` may set these for its own build; the project is built
        // as a user would build it.
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .stdout(Stdio::inherit())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("run cargo");
    // The build's end, as a signal: a thread waits on cargo and reports it.
    let pid = child.id();
    let (ended, end) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = ended.send(child.wait().map(|s| s.success()).unwrap_or(false));
    });
    match end.recv_timeout(BUILD_LIMIT) {
        Ok(built) => assert!(built, "the guide's project does not build"),
        Err(_) => {
            // Stops the cargo this test started, by its pid.
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
            panic!("building the guide's project took over {BUILD_LIMIT:?}");
        }
    }
    target_dir.join("debug/count-to")
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// Waits until the guide's server accepts connections on `port`, through the testkit's
/// one readiness wait; a server that exits first fails the test with its exit status.
async fn wait_until_listening(server: &mut Running, port: u16) {
    eventually(LISTEN_LIMIT, || {
        let exited = server.0.try_wait().ok().flatten();
        async move {
            if let Some(status) = exited {
                panic!("the guide's server exited before listening on {port}: {status}");
            }
            tokio::net::TcpStream::connect(("127.0.0.1", port))
                .await
                .is_ok()
        }
    })
    .await;
}

async fn count_to(url: &str, answer: Value) -> (String, usize) {
    let asked = Arc::new(AtomicUsize::new(0));
    let seen = Arc::clone(&asked);
    let client = Client::builder()
        .on_elicitation(move |req| {
            let answer = answer.clone();
            let seen = Arc::clone(&seen);
            async move {
                assert_eq!(req.message(), Some("Half-way there. Go on?"));
                let schema = req.requested_schema().cloned().unwrap_or_default();
                assert_eq!(schema["properties"]["go_on"]["type"], "boolean");
                seen.fetch_add(1, Ordering::SeqCst);
                Ok(answer)
            }
        })
        .connect(&Target::Http(url.into()))
        .await
        .expect("connect to the guide's server");
    let handle = client
        .call_tool_as_task(
            "count_to",
            json!({"n": 4, "delay_ms": 5}),
            TaskOptions::default(),
        )
        .await
        .expect("count_to as a task");
    assert!(handle.task_id().is_some(), "count_to did not become a task");
    let outcome = handle.result().await.expect("the task's outcome");
    assert_eq!(outcome.status(), TaskStatus::Completed);
    let text = outcome.text().expect("a text result");
    client.close().await;
    (text, asked.load(Ordering::SeqCst))
}

#[tokio::test(flavor = "multi_thread")]
async fn the_guide_builds_outside_the_repository_and_serves() {
    let root = workspace();
    let page = std::fs::read_to_string(root.join("docs/library.md")).expect("docs/library.md");
    let manifest = block(&page, "toml file=Cargo.toml");
    let main_rs = block(&page, "rust file=src/main.rs");
    for (shown, file) in [
        (&manifest, "examples/count-to/Cargo.toml"),
        (&main_rs, "examples/count-to/src/main.rs"),
    ] {
        let actual = std::fs::read_to_string(root.join(file)).expect(file);
        assert_eq!(
            shown.trim_end(),
            actual.trim_end(),
            "docs/library.md shows {file} differently: copy the file into the page"
        );
    }
    assert!(
        page.contains(
            "[patch.crates-io]\nmcp-tasks = { path = \"../mcp-tasks/crates/mcp-tasks\" }"
        ),
        "the page no longer tells a newcomer how to point mcp-tasks at a clone"
    );

    let dir = tempfile::tempdir().expect("a temporary folder");
    let project = dir.path().join("count-to");
    std::fs::create_dir_all(project.join("src")).unwrap();
    let crate_path = root.join("crates/mcp-tasks").canonicalize().unwrap();
    let patched = format!(
        "{manifest}\n[patch.crates-io]\nmcp-tasks = {{ path = {:?} }}\n",
        crate_path.display().to_string()
    );
    std::fs::write(project.join("Cargo.toml"), patched).unwrap();
    std::fs::write(project.join("src/main.rs"), &main_rs).unwrap();
    // The versions this repository is tested with (and already downloaded).
    std::fs::copy(root.join("Cargo.lock"), project.join("Cargo.lock")).unwrap();
    let target_dir = std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| root.join("target"), PathBuf::from)
        .join("guide");
    let binary = build(&project, &target_dir);

    let port = free_port();
    let mut server = Running(
        Command::new(&binary)
            .arg(format!("127.0.0.1:{port}"))
            .stdout(Stdio::null())
            .spawn()
            .expect("start the guide's server"),
    );
    wait_until_listening(&mut server, port).await;
    let url = format!("http://127.0.0.1:{port}/mcp");

    let (text, asked) = count_to(&url, accept(json!({"go_on": true}))).await;
    assert_eq!((text.as_str(), asked), ("counted to 4", 1));
    let (text, asked) = count_to(&url, decline()).await;
    assert_eq!((text.as_str(), asked), ("stopped at 2", 1));

    let client = Client::connect(&Target::Http(url.clone())).await.unwrap();
    let echoed = client
        .call_tool("echo", json!({"text": "hi"}))
        .await
        .unwrap();
    assert_eq!(echoed["content"][0]["text"], "hi");
    client.close().await;
}

//! What installing and publishing rely on: a `rust-version` that is true for the locked
//! dependencies, declared by every crate, and a Dockerfile that builds and runs the
//! release binary of this workspace on a toolchain that `rust-version` allows.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn cargo() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string())
}

/// `major.minor` of a version string (`1.88`, `1.89.0`).
fn minor(version: &str) -> (u64, u64) {
    let mut parts = version.split('.').map(|p| p.parse::<u64>().unwrap());
    (parts.next().unwrap(), parts.next().unwrap_or(0))
}

/// The workspace's packages and its locked dependencies, for this machine's platform
/// (what builds here; resolving every platform would download crates never built).
fn metadata() -> Value {
    let rustc = Command::new("rustc").arg("-vV").output().unwrap();
    let host = String::from_utf8(rustc.stdout)
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("host: ").map(str::to_string))
        .expect("rustc -vV names the host");
    let out = Command::new(cargo())
        .current_dir(root())
        .args(["metadata", "--format-version", "1", "--locked", "--offline"])
        .args(["--filter-platform", &host])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "cargo metadata: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The workspace's `rust-version` is exactly the newest one a locked dependency
/// declares: lower would be a promise the dependencies break, higher would turn away
/// toolchains that work. Every crate inherits it, and the Dockerfile builds with it.
#[test]
fn the_rust_version_is_the_newest_a_locked_dependency_needs() {
    let meta = metadata();
    let members: Vec<&str> = meta["workspace_members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap())
        .collect();
    let packages = meta["packages"].as_array().unwrap();
    let (needed, by) = packages
        .iter()
        .filter(|p| !members.contains(&p["id"].as_str().unwrap()))
        .filter_map(|p| {
            let v = p["rust_version"].as_str()?;
            Some((minor(v), format!("{} {}", p["name"], p["version"])))
        })
        .max()
        .expect("dependencies declare rust versions");
    for p in packages
        .iter()
        .filter(|p| members.contains(&p["id"].as_str().unwrap()))
    {
        let declared = p["rust_version"]
            .as_str()
            .unwrap_or_else(|| panic!("{} declares no rust-version", p["name"]));
        assert_eq!(
            minor(declared),
            needed,
            "{}: rust-version {declared}, but {by} needs {}.{}",
            p["name"],
            needed.0,
            needed.1
        );
    }

    let dockerfile = std::fs::read_to_string(root().join("Dockerfile")).unwrap();
    let image = dockerfile
        .lines()
        .find_map(|l| l.strip_prefix("FROM rust:"))
        .expect("the build stage uses the rust image");
    let image_version = image.split(['-', ' ']).next().unwrap();
    assert_eq!(
        minor(image_version),
        needed,
        "the Dockerfile builds with Rust {image_version}, the workspace's rust-version is {}.{}",
        needed.0,
        needed.1
    );
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    assert!(
        readme.contains(&format!("{}.{} or newer", needed.0, needed.1)),
        "the README names another minimum Rust"
    );
}

/// The Dockerfile builds the binary this workspace's CLI crate defines, in release, and
/// copies exactly that file: a renamed binary or package breaks this test, not the image.
#[test]
fn the_dockerfile_builds_and_runs_the_release_binary() {
    let meta = metadata();
    let cli = meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| {
            p["manifest_path"]
                .as_str()
                .is_some_and(|m| m.ends_with("crates/cli/Cargo.toml"))
        })
        .unwrap();
    let package = cli["name"].as_str().unwrap();
    let bin = cli["targets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["kind"].as_array().unwrap().iter().any(|k| k == "bin"))
        .and_then(|t| t["name"].as_str())
        .unwrap();
    let dockerfile = std::fs::read_to_string(root().join("Dockerfile")).unwrap();
    for wanted in [
        format!("cargo build --release --locked -p {package}"),
        format!("COPY --from=build /src/target/release/{bin} /usr/local/bin/{bin}"),
        format!("ENTRYPOINT [\"{bin}\"]"),
    ] {
        assert!(dockerfile.contains(&wanted), "Dockerfile lacks: {wanted}");
    }
    // The binary the Dockerfile names is the one `cargo build` makes for this package.
    assert_eq!(
        Path::new(env!("CARGO_BIN_EXE_mcp-tasks"))
            .file_name()
            .unwrap(),
        bin
    );
}

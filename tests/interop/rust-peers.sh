#!/usr/bin/env bash
# The Rust peers of the interop tests: task servers written with other Rust MCP libraries
# (tests/interop/rmcp-server, tests/interop/tower-mcp-server, and bench/turul-task-server
# with turul's own client, bench/turul-task-server/client), each its own cargo workspace
# with a committed lock, built (debug, --locked) into target/interop/rust-peers.
#
#   bash tests/interop/rust-peers.sh    builds all four and prints their paths; scripts/test.sh
#                                       runs this in the background (at the lowest CPU
#                                       priority) while the workspace builds, so that
#                                       tests/interop/run.sh finds them fresh
#   . tests/interop/rust-peers.sh       (tests/interop/run.sh) defines the pins below and
#                                       build_rust_peer, and builds nothing
#
# Both ways run the same cargo commands, so the second one is a no-op when the first ran.

# Pinned (=) in tests/interop/{rmcp,tower-mcp}-server/Cargo.toml and their Cargo.lock.
RMCP_VERSION=3.11.0
TOWER_MCP_VERSION=0.25.0
# Pinned (=) in bench/turul-task-server/Cargo.toml (and client/Cargo.toml) and its Cargo.lock.
TURUL_VERSION=0.4.5
TURUL_EXT_TASKS_VERSION=0.1.5
TURUL_CLIENT_VERSION=0.4.2

RUST_PEERS_HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
RUST_PEERS_ROOT="$(cd "$RUST_PEERS_HERE/../.." && pwd)"
RUST_PEERS="$RUST_PEERS_ROOT/target/interop/rust-peers"

# build_rust_peer DIR PACKAGE VERSION [MEMBER]: builds DIR (tests/interop/DIR, or an absolute
# path; its own workspace, --locked, debug) into target/interop/rust-peers, after checking its
# lock pins PACKAGE at VERSION; prints the binary's path: the workspace's own package's, or
# with MEMBER that member package's (built alone). Idempotent: cargo rebuilds only what changed.
build_rust_peer() {
  local dir="$1" package="$2" version="$3" member="${4:-}" bin
  case "$dir" in /*) ;; *) dir="$RUST_PEERS_HERE/$dir" ;; esac
  if ! grep -A1 "^name = \"$package\"\$" "$dir/Cargo.lock" | grep -q "^version = \"$version\"\$"; then
    echo "[interop] $dir/Cargo.lock does not pin $package $version" >&2
    return 1
  fi
  echo "[interop] building $1${member:+ ($member)} ($package $version) into $RUST_PEERS" >&2
  if [ -n "$member" ]; then
    (cd "$dir" && CARGO_TARGET_DIR="$RUST_PEERS" cargo build --locked --quiet -p "$member" >&2) || return 1
    bin="$RUST_PEERS/debug/$member"
  else
    (cd "$dir" && CARGO_TARGET_DIR="$RUST_PEERS" cargo build --locked --quiet >&2) || return 1
    bin="$RUST_PEERS/debug/$(sed -n 's/^name = "\(.*\)"$/\1/p' "$dir/Cargo.toml" | head -n1)"
  fi
  [ -x "$bin" ] || { echo "[interop] no binary at $bin" >&2; return 1; }
  echo "$bin"
}

# Run as a script (not sourced): build them all, one after the other; the exit status
# says whether every one built (tests/interop/run.sh reports each failure on its own).
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  t0=$SECONDS
  status=0
  build_rust_peer rmcp-server rmcp "$RMCP_VERSION" || status=1
  build_rust_peer tower-mcp-server tower-mcp "$TOWER_MCP_VERSION" || status=1
  build_rust_peer "$RUST_PEERS_ROOT/bench/turul-task-server" turul-mcp-server "$TURUL_VERSION" || status=1
  build_rust_peer "$RUST_PEERS_ROOT/bench/turul-task-server" turul-mcp-client "$TURUL_CLIENT_VERSION" turul-task-client || status=1
  echo "[interop] Rust peers built in $((SECONDS - t0)) s (status $status)" >&2
  exit "$status"
fi

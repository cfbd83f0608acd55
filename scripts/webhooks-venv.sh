#!/usr/bin/env bash
# Installs the reference Standard Webhooks verifier (standardwebhooks from PyPI, pinned)
# into a virtualenv under target/webhooks, for crates/cli/tests/notify_signed.rs: real
# webhook deliveries are verified there with the library receivers use. scripts/test.sh
# runs this before `cargo test`. Without the venv the test is skipped with a notice,
# except under CI, where it fails; so here a failed install fails under CI too.
set -euo pipefail
cd "$(dirname "$0")/.."

STANDARDWEBHOOKS_VERSION=1.1.0
venv=target/webhooks/venv
python="$venv/bin/python"

installed() {
  "$python" -c "import importlib.metadata as m; assert m.version('standardwebhooks') == '$STANDARDWEBHOOKS_VERSION'" 2>/dev/null
}

if ! installed; then
  if ! { python3 -m venv "$venv" && "$venv/bin/pip" install --quiet --disable-pip-version-check "standardwebhooks==$STANDARDWEBHOOKS_VERSION"; }; then
    if [ -n "${CI:-}" ]; then
      echo "standardwebhooks $STANDARDWEBHOOKS_VERSION could not be installed from PyPI, and CI needs it" >&2
      exit 1
    fi
    echo "note: standardwebhooks could not be installed from PyPI; the signed-webhook test will be skipped" >&2
    exit 0
  fi
fi
echo "standardwebhooks $STANDARDWEBHOOKS_VERSION in $venv"

#!/usr/bin/env bash
# Installs aiosmtpd (a maintained SMTP server from PyPI, pinned) into a virtualenv under
# target/email, for crates/cli/tests/email.rs: mails to approvers are sent to a real
# SMTP server there (tests/email/smtp_sink.py). scripts/test.sh runs this before
# `cargo test`. Without the venv the test is skipped with a notice, except under CI,
# where it fails; so here a failed install fails under CI too.
set -euo pipefail
cd "$(dirname "$0")/.."

AIOSMTPD_VERSION=1.4.6
venv=target/email/venv
python="$venv/bin/python"

installed() {
  "$python" -c "import importlib.metadata as m; assert m.version('aiosmtpd') == '$AIOSMTPD_VERSION'" 2>/dev/null
}

if ! installed; then
  if ! { python3 -m venv "$venv" && "$venv/bin/pip" install --quiet --disable-pip-version-check "aiosmtpd==$AIOSMTPD_VERSION"; }; then
    if [ -n "${CI:-}" ]; then
      echo "aiosmtpd $AIOSMTPD_VERSION could not be installed from PyPI, and CI needs it" >&2
      exit 1
    fi
    echo "note: aiosmtpd could not be installed from PyPI; the email test will be skipped" >&2
    exit 0
  fi
fi
echo "aiosmtpd $AIOSMTPD_VERSION in $venv"

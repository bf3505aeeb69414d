#!/usr/bin/env bash
# The test command (README, CI): sets up what the tests need, then type-checks,
# lints and runs every test, the Docker and browser ones included.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

bash scripts/setup.sh
# Browser tests drive Debian's Chromium with playwright-core (no browser download).
apt_install chromium fonts-dejavu-core poppler-utils
# report.md is read back by pandoc (-f gfm, -f commonmark), a renderer that checks no link scheme itself.
apt_install pandoc
# The local (unisolated) backend's tests run the kernel with Debian's own Python.
apt_install python3 python3-pandas python3-matplotlib python3-openpyxl python3-altair
# The engine-outage and remote-engine tests run a second dockerd with a bridge of its own
# (ip, from iproute2; the remote one also in a network namespace, with TLS made by openssl).
apt_install iproute2 openssl
# `datalyst chat` is driven in a real terminal (tmux send-keys / capture-pane).
apt_install tmux
# The runsc project re-runs the hostile and kernel tests under gVisor: install Debian's
# runsc and register it with the engine (daemon.json merged, the engine reloaded by SIGHUP).
node bin/datalyst.js setup --gvisor --quiet

log "type-checking"
npx tsc --noEmit
log "linting"
npx eslint . --cache --cache-location node_modules/.cache/eslint
npx prettier --check . --log-level warn
log "running the tests"
mkdir -p test-artifacts
status=0
npx vitest run --reporter=default --reporter=json --outputFile.json=test-artifacts/vitest.json "$@" || status=$?
# One plain closing line that any CI can read.
node -e '
  const r = JSON.parse(require("fs").readFileSync("test-artifacts/vitest.json", "utf8"));
  console.log(`tests: ${r.numPassedTests} passed, ${r.numFailedTests} failed` + (r.numPendingTests ? `, ${r.numPendingTests} skipped` : ""));
' || true
exit $status

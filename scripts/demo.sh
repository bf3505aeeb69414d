#!/usr/bin/env bash
# The main job: sets up, then runs the offline analyst on an example workspace
# and writes a report. Pass another workspace and instruction to analyse those.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
workspace=${1:-workspace-examples/sales}
shift || true
exec node bin/datalyst.js analyze "$workspace" --offline "$@"

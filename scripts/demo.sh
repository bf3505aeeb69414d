#!/usr/bin/env bash
# The main job: sets up, then runs the offline analyst on an example workspace
# and writes a report. Pass another workspace (and an instruction) to analyse
# those; without an instruction, the workspace's instruction.txt is used.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
workspace=${1:-workspace-examples/sales}
shift || true
if [ $# -eq 0 ] && [ -f "$workspace/instruction.txt" ]; then
  set -- "$(cat "$workspace/instruction.txt")"
fi
exec node bin/datalyst.js analyze "$workspace" "$@" --offline

#!/usr/bin/env bash
# Everything the main job needs: npm packages, a Docker engine, the runner image.
# Quick when all of it is already there.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh

# npm packages: reinstall only when package-lock.json changed since the last install.
stamp=node_modules/.datalyst-lock-hash
lock_hash=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$lock_hash" ]; then
  log "installing npm packages"
  # `npm install` rather than `npm ci`: npm 11 here leaves rollup's optional
  # platform packages out of the lock file and then refuses `npm ci`.
  npm install --no-audit --no-fund --loglevel=error
  echo "$lock_hash" > "$stamp"
fi

# The web UI (web/, served by `datalyst serve` at /): rebuilt only when its
# sources or the lock file changed since the last build.
web_stamp=web/dist/.datalyst-source-hash
web_hash=$( (find web -path web/dist -prune -o -type f -print | LC_ALL=C sort | xargs sha256sum; sha256sum package-lock.json) | sha256sum | cut -d' ' -f1)
if [ "$(cat "$web_stamp" 2>/dev/null)" != "$web_hash" ]; then
  log "building the web UI"
  npx tsc --noEmit -p web/tsconfig.json   # Vite strips types without checking them
  npx vite build --config web/vite.config.ts --logLevel warn
  echo "$web_hash" > "$web_stamp"
fi

bash scripts/setup-engine.sh
npx tsx scripts/ensure-runner-image.ts ${DATALYST_SETUP_VERBOSE:+--verbose}

#!/usr/bin/env bash
# Makes a Docker engine reachable. Uses the one that answers (Docker Desktop, a
# remote DOCKER_HOST, a running dockerd); on Debian or Ubuntu as root with no
# engine, installs Debian's docker.io and starts dockerd in the background.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

engine_answers() { timeout 10 docker info >/dev/null 2>&1; }

if command -v docker >/dev/null 2>&1 && engine_answers; then exit 0; fi

if [ -n "${DOCKER_HOST:-}" ]; then
  die "DOCKER_HOST=$DOCKER_HOST does not answer. Start that engine, or unset DOCKER_HOST to use a local one."
fi
if ! is_root || ! has_apt; then
  die "no Docker engine answers. Install Docker (https://docs.docker.com/engine/install/ or Docker Desktop) and start it, or run this as root on Debian/Ubuntu to let it install docker.io."
fi

command -v dockerd >/dev/null 2>&1 || apt_install docker.io
log "starting dockerd in the background (log: /var/log/datalyst-dockerd.log)"
nohup dockerd >/var/log/datalyst-dockerd.log 2>&1 &
for _ in $(seq 1 60); do
  engine_answers && { log "Docker engine is up"; exit 0; }
  sleep 1
done
tail -20 /var/log/datalyst-dockerd.log >&2 || true
die "dockerd did not come up within 60 s (see /var/log/datalyst-dockerd.log)"

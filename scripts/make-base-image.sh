#!/usr/bin/env bash
# Makes the runner's base image where no container registry answers: a minimal
# Debian trixie root filesystem from debootstrap, imported with `docker import`.
# Equivalent to debian:trixie-slim for the runner's Dockerfile.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

image=datalyst/trixie-base:local
# The mirror apt already uses on this machine, else Debian's CDN.
mirror=${DATALYST_DEBIAN_MIRROR:-$(sed -n 's/^URIs: *\(http[^ ]*\/debian\)\/\{0,1\} *$/\1/p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n 1)}
mirror=${mirror:-http://deb.debian.org/debian}

is_root || die "debootstrap needs root"
apt_install debootstrap
rootfs=$(mktemp -d /var/tmp/datalyst-rootfs.XXXXXX)
trap 'rm -rf "$rootfs"' EXIT
log "debootstrap trixie from $mirror"
debootstrap --variant=minbase trixie "$rootfs" "$mirror" >/var/tmp/datalyst-debootstrap.log 2>&1 \
  || { tail -20 /var/tmp/datalyst-debootstrap.log >&2; die "debootstrap failed"; }
tar -C "$rootfs" -c . | docker import -c 'CMD ["bash"]' - "$image" >/dev/null
log "made $image"

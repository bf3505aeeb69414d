# Shared helpers for the setup scripts. Sourced, not run.

log() { printf '\033[1m[datalyst setup]\033[0m %s\n' "$*" >&2; }
die() { printf '[datalyst setup] error: %s\n' "$*" >&2; exit 1; }

is_root() { [ "$(id -u)" = 0 ]; }
has_apt() { command -v apt-get >/dev/null 2>&1; }

# Installs Debian packages that are missing; runs `apt-get update` once, only when needed.
apt_install() {
  local missing=()
  for package in "$@"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  is_root && has_apt || die "missing packages: ${missing[*]} (install them, e.g. with: sudo apt-get install ${missing[*]})"
  log "installing Debian packages: ${missing[*]}"
  if [ -z "${DATALYST_APT_UPDATED:-}" ]; then
    apt-get update -q >/dev/null
    export DATALYST_APT_UPDATED=1
  fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
}

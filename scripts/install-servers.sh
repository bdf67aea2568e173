#!/usr/bin/env bash
# Installs the servers emq-race runs against, when they are missing:
#   redis-server (7.x, Debian's own package) and valkey-server (8.x, from bookworm-backports).
# Idempotent: a second run changes nothing. Needs root (or sudo) and Debian's apt.
set -euo pipefail

need_redis=0; need_valkey=0
command -v redis-server >/dev/null 2>&1 || need_redis=1
command -v valkey-server >/dev/null 2>&1 || need_valkey=1
if [ "${EMQ_SKIP_VALKEY:-0}" = 1 ]; then need_valkey=0; fi
if [ $need_redis = 0 ] && [ $need_valkey = 0 ]; then
  echo "install-servers: redis-server and valkey-server already installed"
  exit 0
fi

if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-servers: apt-get not found; install redis-server (7.x) or valkey-server (8.x) yourself" >&2
  exit 1
fi
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

sources=/etc/apt/sources.list.d/debian.sources
if [ $need_valkey = 1 ] && [ -f "$sources" ] && ! grep -q 'bookworm-backports' "$sources"; then
  # Valkey 8 ships in bookworm-backports: add that suite to the entry that already lists bookworm.
  $SUDO sed -i -E 's/^(Suites:.*\bbookworm\b.*\bbookworm-updates\b.*)$/\1 bookworm-backports/' "$sources"
  if ! grep -q 'bookworm-backports' "$sources"; then
    $SUDO sed -i -E '0,/^Suites:[[:space:]]*bookworm([[:space:]]|$)/s//&bookworm-backports /' "$sources"
  fi
fi

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
pkgs=()
[ $need_redis = 1 ] && pkgs+=(redis-server)
[ $need_valkey = 1 ] && pkgs+=(valkey-server)
$SUDO apt-get install -y -qq --no-install-recommends "${pkgs[@]}" >/dev/null
# The packages' own service units are not needed: emq-race starts private servers on free ports.
echo "install-servers: installed ${pkgs[*]}"
redis-server --version || true
valkey-server --version || true

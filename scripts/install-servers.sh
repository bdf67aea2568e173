#!/usr/bin/env bash
# Installs a server emq-race can run against, and changes the system no further than that needs:
#   - with neither server installed: redis-server (7.x, Debian's own package), or valkey-server
#     where Debian has no redis-server package;
#   - with --valkey (or EMQ_INSTALL_VALKEY=1): valkey-server (8.x) too, enabling Debian's
#     bookworm-backports suite only if no configured suite has it. The repository's own tests race
#     both servers, so its test command asks for this.
#   - with --redict (or EMQ_INSTALL_REDICT=1): redict-server (7.3.x) too, from the same suite and
#     enabled the same way. Its package would start a system service on port 6379: the script keeps
#     that service from starting and leaves it disabled (emq-race starts its own servers).
# A server already installed is left as it is; a second run changes nothing. Needs root (or sudo)
# and Debian's apt.
set -euo pipefail

want_valkey=0; want_redict=0
for arg in "$@"; do
  case "$arg" in
    --valkey) want_valkey=1 ;;
    --redict) want_redict=1 ;;
    -h | --help)
      sed -n '2,12p' "$0" | sed -E 's/^# ?//'
      exit 0
      ;;
    *)
      echo "install-servers: unknown argument $arg (the flags are --valkey and --redict)" >&2
      exit 2
      ;;
  esac
done
if [ "${EMQ_INSTALL_VALKEY:-0}" = 1 ]; then want_valkey=1; fi
if [ "${EMQ_INSTALL_REDICT:-0}" = 1 ]; then want_redict=1; fi

have() { command -v "$1" >/dev/null 2>&1; }
need_redis=0; need_valkey=0; need_redict=0
if ! have redis-server && ! have valkey-server; then need_redis=1; fi
if [ $want_valkey = 1 ] && ! have valkey-server; then need_valkey=1; fi
if [ $want_redict = 1 ] && ! have redict-server; then need_redict=1; fi
if [ $need_redis = 0 ] && [ $need_valkey = 0 ] && [ $need_redict = 0 ]; then
  installed=""
  for bin in redis-server valkey-server redict-server; do if have $bin; then installed="$installed $bin"; fi; done
  echo "install-servers: already installed:${installed}"
  exit 0
fi

if ! have apt-get; then
  echo "install-servers: apt-get not found; install redis-server (7.x) or valkey-server (8.x) yourself" >&2
  exit 1
fi
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive

# Whether a configured suite offers the package.
offered() { apt-cache policy "$1" 2>/dev/null | grep -q 'Candidate: [0-9]'; }

$SUDO apt-get update -qq
if [ $need_redis = 1 ] && ! offered redis-server; then
  echo "install-servers: no redis-server package in the configured suites; installing valkey-server instead"
  need_redis=0; need_valkey=1
fi

sources=/etc/apt/sources.list.d/debian.sources
backported=""
if [ $need_valkey = 1 ] && ! offered valkey-server; then backported="valkey-server"; fi
if [ $need_redict = 1 ] && ! offered redict-server; then backported="${backported:+$backported and }redict-server"; fi
if [ -n "$backported" ] && [ -f "$sources" ] && ! grep -q 'bookworm-backports' "$sources"; then
  # Valkey 8 and Redict 7.3 ship in bookworm-backports: add that suite to the entry that already lists bookworm.
  echo "install-servers: enabling bookworm-backports in $sources for $backported"
  $SUDO sed -i -E 's/^(Suites:.*\bbookworm\b.*\bbookworm-updates\b.*)$/\1 bookworm-backports/' "$sources"
  if ! grep -q 'bookworm-backports' "$sources"; then
    $SUDO sed -i -E '0,/^Suites:[[:space:]]*bookworm([[:space:]]|$)/s//&bookworm-backports /' "$sources"
  fi
  $SUDO apt-get update -qq
fi

pkgs=()
if [ $need_redis = 1 ]; then pkgs+=(redis-server); fi
if [ $need_valkey = 1 ]; then pkgs+=(valkey-server); fi
if [ ${#pkgs[@]} -gt 0 ]; then
  $SUDO apt-get install -y -qq --no-install-recommends "${pkgs[@]}" >/dev/null
fi
# The packages' own service units are not needed: emq-race starts private servers on free ports.
if [ $need_redict = 1 ]; then
  # redict-server's package starts its service on install, with a configuration on port 6379, where
  # a Redis may already listen. Under systemd the unit is masked for the install (a runtime mask,
  # lifted when the script ends however it ends, and gone at the next boot in any case); under any
  # init system the service is then left stopped and disabled. Only a Redict installed here is
  # touched, never a running Redis or Valkey.
  systemd=0
  if [ -d /run/systemd/system ] && have systemctl; then systemd=1; fi
  if [ $systemd = 1 ]; then
    $SUDO systemctl mask --runtime --quiet redict-server.service
    trap '$SUDO systemctl unmask --runtime --quiet redict-server.service 2>/dev/null || true' EXIT
  fi
  $SUDO apt-get install -y -qq --no-install-recommends redict-server >/dev/null
  if [ $systemd = 1 ]; then
    $SUDO systemctl unmask --runtime --quiet redict-server.service
    $SUDO systemctl disable --now --quiet redict-server.service 2>/dev/null || true
  elif [ -x /etc/init.d/redict-server ]; then
    $SUDO update-rc.d redict-server disable >/dev/null 2>&1 || true
    # The init script stops only the process its pid file names, and only if it is redict-server.
    $SUDO /etc/init.d/redict-server stop >/dev/null 2>&1 || true
  fi
  pkgs+=(redict-server)
fi
echo "install-servers: installed ${pkgs[*]}"
if have redis-server; then redis-server --version; fi
if have valkey-server; then valkey-server --version; fi
if have redict-server; then redict-server --version; fi

#!/usr/bin/env bash
# Installs the headless browser the HTML report tests open their pages in: Debian's chromium, at
# /usr/bin/chromium, with the DejaVu fonts the pages name. Only when it is missing: a second run
# changes nothing. Needs root (or sudo). Where it is not installed, those tests skip and say why.
set -euo pipefail

if [ -x /usr/bin/chromium ]; then
  echo "install-browser: chromium already installed"
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "install-browser: apt-get not found; install Chromium yourself and set CHROMIUM_PATH for the tests" >&2
  exit 1
fi
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
echo "install-browser: installed chromium"
/usr/bin/chromium --version 2>/dev/null || true

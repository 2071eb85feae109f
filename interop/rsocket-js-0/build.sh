#!/bin/sh
# Build the rsocket-js-0 fixtures: npm ci from package-lock.json (cached: skipped when up to date).
set -eu
cd "$(dirname "$0")"
if [ node_modules/.package-lock.json -nt package-lock.json ]; then echo "rsocket-js-0: up to date"; exit 0; fi
nice timeout 600 npm ci --no-audit --no-fund --loglevel=error

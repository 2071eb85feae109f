#!/bin/sh
# Build the rsocket-go fixtures: go build with the module versions of go.sum
# (cached: skipped when bin/ is newer than go.sum and the sources).
set -eu
cd "$(dirname "$0")"
if [ -x bin/server ] && [ -x bin/client ] && [ -z "$(find go.mod go.sum cmd -newer bin/client)" ]; then
  echo "rsocket-go: up to date"; exit 0
fi
mkdir -p bin
nice timeout 900 go build -p 1 -o bin/server ./cmd/server
nice timeout 900 go build -p 1 -o bin/client ./cmd/client

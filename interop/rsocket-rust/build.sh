#!/bin/sh
# Build the rsocket-rust fixtures: cargo debug build with the crate versions of Cargo.lock
# (cached: skipped when target/debug is newer than Cargo.lock and the sources).
set -eu
cd "$(dirname "$0")"
if [ -x target/debug/server ] && [ -x target/debug/client ] && [ -z "$(find Cargo.toml Cargo.lock src -newer target/debug/client)" ]; then
  echo "rsocket-rust: up to date"; exit 0
fi
nice timeout 1800 cargo build --locked -j1 --bins
touch target/debug/client

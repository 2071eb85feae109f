#!/bin/bash
# Unjudged client x server run: every client test case of every built client against every built server,
# a fresh server per cell, printing one line per cell (exit code and what the client printed).
# Not the kit's verdict (that is `make interop` through the proxy, later): it shows which pairs talk at all.
# Usage: interop/cross.sh [CLIENT ...]   (servers: RSIO_SERVERS="a b", default all six)
set -u
cd "$(dirname "$0")"
all="rsocket-py rsocket-js-0 rsocket-java rsocket-go rsocket-js-1 rsocket-rust"
clients=${*:-$all}
servers=${RSIO_SERVERS:-$all}
testcases=$(python3 -c 'import json; print(" ".join(c["name"] for c in json.load(open("testcases.json"))["testcases"]))')
port=${RSIO_CROSS_PORT:-47600}
for server in $servers; do
  for client in $clients; do
    for testcase in $testcases; do
      port=$((port + 1))
      ./"$server"/server "$port" > /dev/null 2>&1 &
      pid=$!
      # Wait for the listening socket without connecting (a bare connect is a test of its own).
      for _ in $(seq 1 150); do ss -ltn "sport = :$port" | grep -q LISTEN && break; sleep 0.2; done
      out=$(RSIO_URL="tcp://127.0.0.1:$port" RSIO_TESTCASE="$testcase" timeout 30 ./"$client"/client 2>&1)
      rc=$?
      echo "$client -> $server $testcase rc=$rc $(echo "$out" | tr '\n' '|' | cut -c1-120)"
      kill "$pid" 2>/dev/null
      wait "$pid" 2>/dev/null
    done
  done
done

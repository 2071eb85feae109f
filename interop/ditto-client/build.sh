#!/bin/bash
# Build the ditto-client fixture: compile against the exact versions of pom.xml, write the classpath and check
# it resolves to dependencies.lock (cached: skipped when target/classpath.txt is newer than pom.xml and the
# sources). Offline once resolved. Needs a JDK 17+ and Maven.
set -eu
cd "$(dirname "$0")"
if [ -f target/classpath.txt ] && [ -z "$(find pom.xml src dependencies.lock -newer target/classpath.txt)" ]; then
  echo "ditto-client: up to date"; exit 0
fi
goals="compile dependency:build-classpath -Dmdep.outputFile=target/classpath.txt dependency:list"
goals="$goals -DoutputFile=target/dependencies.list -Dstyle.color=never"
# shellcheck disable=SC2086
# Offline first, quietly (on a fresh machine it fails for want of the artifacts), then from Maven Central.
nice timeout 600 mvn -B -q -o $goals >/dev/null 2>&1 || nice timeout 900 mvn -B -q $goals
# The resolved tree must be the locked one (sorted: Maven's listing order is not stable).
if ! diff -q <(grep ':jar:' dependencies.lock | sort) <(grep ':jar:' target/dependencies.list | sort) >/dev/null; then
  echo "ditto-client: the resolved dependencies differ from dependencies.lock:" >&2
  diff <(grep ':jar:' dependencies.lock | sort) <(grep ':jar:' target/dependencies.list | sort) >&2 || true
  rm -f target/classpath.txt
  exit 1
fi
touch target/classpath.txt

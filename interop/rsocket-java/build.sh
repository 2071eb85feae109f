#!/bin/sh
# Build the rsocket-java fixtures: compile against the exact versions of pom.xml, write the classpath
# (cached: skipped when target/classpath.txt is newer than pom.xml and the sources). Offline once resolved.
set -eu
cd "$(dirname "$0")"
if [ -f target/classpath.txt ] && [ -z "$(find pom.xml src -newer target/classpath.txt)" ]; then
  echo "rsocket-java: up to date"; exit 0
fi
goals="compile dependency:build-classpath -Dmdep.outputFile=target/classpath.txt -Dstyle.color=never"
# shellcheck disable=SC2086
# Offline first, quietly (on a fresh machine it fails for want of the artifacts), then from Maven Central.
nice timeout 600 mvn -B -q -o $goals >/dev/null 2>&1 || nice timeout 900 mvn -B -q $goals
touch target/classpath.txt

#!/bin/sh
# Build the golden-vector generator once (cached in target/) and write the vectors.
# Usage: interop/ditto-protocol/build.sh [OUTPUT]   (default: tests/data/ditto/golden.jsonl)
# Needs a JDK 17+ and Maven; ditto-protocol and the pinned plugins come from Maven Central.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${1:-$root/tests/data/ditto/golden.jsonl}
cd "$here"
jar=target/ditto-protocol-golden-1.0.0.jar
if [ ! -f "$jar" ] || [ ! -f target/classpath.txt ] || [ pom.xml -nt "$jar" ] \
    || [ -n "$(find src -newer "$jar" -type f)" ]; then
    # One thread, one forked compiler at most: the machine is shared.
    mvn -q -B -T 1 package
fi
mkdir -p "$(dirname "$out")"
java -XX:TieredStopAtLevel=1 -XX:ActiveProcessorCount=1 -cp "$jar:$(cat target/classpath.txt)" tck.Golden "$out"
echo "wrote $(wc -l < "$out") Ditto golden vectors to $out"

#!/bin/sh
# Build the rsocket-py fixtures: a venv with the pinned requirements (cached: skipped when up to date).
set -eu
cd "$(dirname "$0")"
if [ .venv/.built -nt requirements.txt ]; then echo "rsocket-py: up to date"; exit 0; fi
python3 -m venv .venv
nice timeout 600 .venv/bin/pip install --quiet --disable-pip-version-check -r requirements.txt
touch .venv/.built

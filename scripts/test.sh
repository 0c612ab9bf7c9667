#!/usr/bin/env bash
# The whole test suite: install what is needed, build, run every test, fuzz
# each parser of untrusted input briefly (10 s each), then check the sources'
# format.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh"
# Absolute: the scripts change folder, and a relative SCHED_BUILD_DIR means
# the one under the folder they were started from.
build="$(realpath -m "${SCHED_BUILD_DIR:-$root/build}")"
ctest --test-dir "$build" --output-on-failure -j"$(nproc)"
"$root/scripts/fuzz.sh"
"$root/scripts/check-format.sh"

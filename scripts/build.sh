#!/usr/bin/env bash
# Configures and builds sched in ./build (or $SCHED_BUILD_DIR).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${SCHED_BUILD_DIR:-$root/build}"
werror=OFF
if [ "${CI:-}" = "true" ]; then werror=ON; fi
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSCHED_WERROR="$werror" >/dev/null
cmake --build "$build" -j"$(nproc)"

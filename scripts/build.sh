#!/usr/bin/env bash
# Configures and builds sched in ./build (or $SCHED_BUILD_DIR).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
# Absolute: the scripts change folder, and a relative SCHED_BUILD_DIR means
# the one under the folder they were started from.
build="$(realpath -m "${SCHED_BUILD_DIR:-$root/build}")"
# CI treats warnings as errors; elsewhere a build folder keeps what it was
# configured with (setting the option anew would rebuild everything).
options=()
if [ "${CI:-}" = "true" ]; then options+=(-DSCHED_WERROR=ON); fi
cmake -S "$root" -B "$build" "${options[@]}" >/dev/null
cmake --build "$build" -j"$(nproc)"

#!/usr/bin/env bash
# The ESP experiment of Chadha et al. (Figure 3): builds, then runs
# easy_backfill, fpsma and perf_aware on ESP for malleable fractions 0..1 and
# writes results.csv, results.md and figure3.svg to bench/esp/results/ (or
# to the folder given as the first argument). Extra arguments go to the
# program (e.g. --seed 2).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
"$root/scripts/build.sh" >/dev/null
build="${SCHED_BUILD_DIR:-$root/build}"
out="${1:-$root/bench/esp/results}"
shift || true
"$build/bench/esp_experiment" --out "$out" "$@"

#!/usr/bin/env bash
# The ESP experiment of Chadha et al. (Figure 3): builds, then runs
# easy_backfill, slurm_backfill, fpsma and perf_aware on ESP for malleable
# fractions 0..1, seeds 1-10 and time limits exact and round:900, and writes
# runs.csv, results.csv, results.md and figure3.svg to bench/esp/results/ (or
# to the folder given as the first argument). Extra arguments go to the
# program (e.g. --seeds 1 2 3, --time-limits exact, --no-sensitivity); also
# sensitivity.md (perf_aware against slurm_backfill under other application
# models). The run: about 2.5 min on 2 busy cores (docs/experiments.md).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
"$root/scripts/build.sh" >/dev/null
build="${SCHED_BUILD_DIR:-$root/build}"
out="${1:-$root/bench/esp/results}"
shift || true
"$build/bench/esp_experiment" --out "$out" "$@"

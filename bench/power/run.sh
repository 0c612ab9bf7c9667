#!/usr/bin/env bash
# The power experiment of Chadha et al. (Table II, Figure 4): builds, then runs
# scenarios 1-3 (easy_backfill; power_aware without and with waiting jobs) and
# 3b (ours: 3 with best_effort, the closest distribution when none fits) and
# writes table.csv, table.md and figure4.svg, then scenarios 1-3 over a sweep
# of corridor change times with the ideal-schedule bound of each (sweep.csv,
# sweep.md, sweep.svg), to bench/power/results/ (or to the folder given as
# the first argument). Extra arguments go to the program (e.g. --seed 2,
# --allowed 120, --no-sweep).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
"$root/scripts/build.sh" >/dev/null
build="${SCHED_BUILD_DIR:-$root/build}"
out="${1:-$root/bench/power/results}"
shift || true
"$build/bench/power_experiment" --out "$out" "$@"

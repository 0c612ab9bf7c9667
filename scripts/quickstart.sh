#!/usr/bin/env bash
# The main job: install what is needed, build, and compare fcfs with EASY
# backfilling on the ESP benchmark in the simulator.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh"
build="${SCHED_BUILD_DIR:-$root/build}"
"$build/cli/sched" sim --workload esp --policy fcfs --policy easy_backfill --out "$root/out/esp"
echo
echo "jobs.csv and metrics.json for each policy are in $root/out/esp/"

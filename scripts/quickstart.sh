#!/usr/bin/env bash
# The main job: install what is needed, build, and compare EASY backfilling
# with the malleable policies (fpsma, perf_aware) on the ESP benchmark with
# every job malleable, in the simulator.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh"
build="${SCHED_BUILD_DIR:-$root/build}"
"$build/cli/sched" sim --workload esp --malleable-fraction 1 \
  --policy easy_backfill --policy fpsma --policy perf_aware --out "$root/out/esp"
echo
echo "jobs.csv, resizes.csv and metrics.json for each policy are in $root/out/esp/"

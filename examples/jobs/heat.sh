#!/bin/sh
#SCHED --job-name=heat --min-nodes=1 --max-nodes=4 --time=10:00
#SCHED --min-power=150 --max-power=250
# The malleable 2D heat solver (examples/heat/heat.c), one process per node:
# the scheduler may grow it up to 4 nodes and shrink it back to 1 while it
# runs; the rows move with each resize and the final grid is the same.
# Writes heat-<job id>.grid in the submit folder. HEAT_ARGS replaces the
# solver's options (sched submit --env HEAT_ARGS="--iters 500" heat.sh). The
# default lasts at least 16 s (2 ms a step), longer than the quick start's
# other jobs, so the solver is grown back once they end.
set -eu
# The programs: $EXAMPLES_DIR, else examples/ of the build tree whose
# `sched` is on PATH (scripts/quickstart.sh puts <build>/cli there).
bin="${EXAMPLES_DIR:-$(dirname "$(command -v sched)")/../examples}"
dir="${SCHED_SUBMIT_DIR:-$PWD}"
# Where the processes find each other's data endpoints (one folder per job).
export SCHED_MALL_RENDEZVOUS_DIR="$dir/.sched-mall/job-$SCHED_JOB_ID"
mkdir -p "$SCHED_MALL_RENDEZVOUS_DIR"
trap 'rm -rf "$SCHED_MALL_RENDEZVOUS_DIR"; rmdir "$dir/.sched-mall" 2>/dev/null || true' EXIT
# shellcheck disable=SC2086  # HEAT_ARGS is a list of options
sched run -n "$SCHED_JOB_NUM_NODES" "$bin/heat" \
  ${HEAT_ARGS:---nx 256 --ny 256 --iters 8000 --sleep-ms 2} --out "$dir/heat-$SCHED_JOB_ID.grid"

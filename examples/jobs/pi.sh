#!/bin/sh
#SCHED --job-name=pi --min-nodes=1 --max-nodes=4 --node-constraints=pof2 --time=10:00
#SCHED --min-power=120 --max-power=200
# The malleable Monte-Carlo pi (examples/pi/pi.c), one process per node: the
# scheduler may resize it between chunks; the estimate does not depend on
# the sizes it had. Writes pi-<job id>.txt (samples, hits, estimate) in the
# submit folder. PI_ARGS replaces the program's options.
set -eu
# The programs: $EXAMPLES_DIR, else examples/ of the build tree whose
# `sched` is on PATH (scripts/quickstart.sh puts <build>/cli there).
bin="${EXAMPLES_DIR:-$(dirname "$(command -v sched)")/../examples}"
dir="${SCHED_SUBMIT_DIR:-$PWD}"
# Where the processes find each other's data endpoints (one folder per job).
export SCHED_MALL_RENDEZVOUS_DIR="$dir/.sched-mall/job-$SCHED_JOB_ID"
mkdir -p "$SCHED_MALL_RENDEZVOUS_DIR"
trap 'rm -rf "$SCHED_MALL_RENDEZVOUS_DIR"; rmdir "$dir/.sched-mall" 2>/dev/null || true' EXIT
# shellcheck disable=SC2086  # PI_ARGS is a list of options
sched run -n "$SCHED_JOB_NUM_NODES" "$bin/pi" \
  ${PI_ARGS:---samples 200000000 --chunks 100} --out "$dir/pi-$SCHED_JOB_ID.txt"

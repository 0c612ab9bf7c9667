#!/usr/bin/env bash
# The main job: install what is needed, build, start a local cluster of four
# virtual nodes (schedd plus four node agents on this machine), submit the
# example jobs of examples/jobs/ (rigid, moldable, multi-node with steps, a
# Slurm script, a failing one) and show them run to completion.
# The cluster stays up afterwards; `sched cluster down` stops it.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh"
build="${SCHED_BUILD_DIR:-$root/build}"
# Jobs call `sched run`: the agents pass this PATH on to them.
export PATH="$build/cli:$PATH"

state="${SCHED_QUICKSTART_STATE:-$root/out/quickstart/state}"
work="$root/out/quickstart/jobs"
mkdir -p "$work"
sched cluster down --state-dir "$state" >/dev/null 2>&1 || true
sched cluster up --nodes 4 --policy easy_backfill --state-dir "$state"
endpoint="$(sed -n 's/.*"client_endpoint": "\(.*\)".*/\1/p' "$state/cluster.json")"
export SCHED_ENDPOINT="$endpoint"

cd "$work"
echo
for job in hello steps moldable slurm_style failing; do
  printf '%-12s ' "$job.sh:"
  sched submit "$root/examples/jobs/$job.sh"
done
echo
sched queue
echo
echo "waiting for the jobs to finish..."
while [ -n "$(sched queue --json | grep '"id"')" ]; do sleep 1; done
echo
sched acct
echo
for out in "$work"/sched-*.out; do
  echo "== $(basename "$out")"
  cat "$out"
done
echo
sched nodes
echo
echo "The cluster is still up (SCHED_ENDPOINT=$endpoint): try 'sched queue', 'sched events',"
echo "'sched submit --wrap \"sleep 10\" -N 2'; stop it with 'sched cluster down --state-dir $state'."
echo "The simulator: 'sched sim --workload esp --malleable-fraction 1 --policy perf_aware'."

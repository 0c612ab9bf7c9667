#!/usr/bin/env bash
# The main job: install what is needed, build, start a local cluster of four
# virtual nodes (schedd plus four node agents on this machine) under the
# performance-aware policy, start the malleable heat solver of
# examples/jobs/heat.sh on the whole cluster, then submit the other example
# jobs (rigid, moldable, multi-node with steps, a Slurm script, a failing
# one): perf_aware shrinks the solver to start them and grows it again as
# they end, and `sched events` prints each resize as it happens.
# The cluster stays up afterwards; `sched cluster down` stops it.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
"$root/scripts/install-deps.sh"
"$root/scripts/build.sh"
# Absolute: the scripts change folder, and a relative SCHED_BUILD_DIR means
# the one under the folder they were started from.
build="$(realpath -m "${SCHED_BUILD_DIR:-$root/build}")"
# Jobs call `sched run`: the agents pass this PATH on to them.
export PATH="$build/cli:$PATH"

state="${SCHED_QUICKSTART_STATE:-$root/out/quickstart/state}"
work="$root/out/quickstart/jobs"
rm -rf "$work"
mkdir -p "$work"
sched cluster down --state-dir "$state" >/dev/null 2>&1 || true
sched cluster up --nodes 4 --policy perf_aware --state-dir "$state"
endpoint="$(sed -n 's/.*"client_endpoint": "\(.*\)".*/\1/p' "$state/cluster.json")"
export SCHED_ENDPOINT="$endpoint"
# The cluster's own munged, when the machine runs none: requests are signed there.
munge_socket="$(sed -n 's/.*"munge_socket": "\(.*\)".*/\1/p' "$state/cluster.json")"
if [ -n "$munge_socket" ]; then export SCHED_MUNGE_SOCKET="$munge_socket"; fi

cd "$work"
echo
# Resizes as they happen, one JSON object per event.
sched events --topic job.adapting --topic job.resized &
events=$!
trap 'kill $events 2>/dev/null || true' EXIT
printf '%-15s ' "heat.sh:"
sched submit "$root/examples/jobs/heat.sh"
sleep 2
for job in hello steps moldable slurm_style failing; do
  printf '%-15s ' "$job.sh:"
  sched submit "$root/examples/jobs/$job.sh"
done
echo
sched queue
echo
echo "waiting for the jobs to finish..."
while [ -n "$(sched queue --json | grep '"id"')" ]; do sleep 1; done
sleep 0.5
kill $events 2>/dev/null || true
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
echo "Slurm's commands work too: 'export PATH=$build/slurm:\$PATH', then sbatch, squeue, srun, salloc, ..."
echo "The simulator: 'sched sim --workload esp --malleable-fraction 1 --policy perf_aware'."

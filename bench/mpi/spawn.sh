#!/usr/bin/env bash
# The time of one MPI_Comm_spawn under `sched run --mpi=pmix` (Open MPI),
# issue 16 item 2: a local cluster of 4 virtual nodes (`sched cluster up`),
# one job whose script runs RUNS steps of 2 ranks (on the job's first two
# nodes) that each spawn 4 children on its other two nodes, merge and
# reduce. Rank 0 times its MPI_Comm_spawn with MPI_Wtime: schedd's checks,
# the launch on 2 agents, the children's MPI_Init, the publish/lookup of
# the port and the connect across 4 nodes. Prints the median and range;
# figures only, nothing is asserted.
#
#   bench/mpi/spawn.sh [RUNS=7]
# after building sched, schedd, nodeagent and mpi_spawn_openmpi.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${SCHED_BUILD_DIR:-$root/build}"
runs="${1:-7}"
sched="$build/cli/sched"
app="$build/tests/mpi_spawn_openmpi"
state="$(mktemp -d /tmp/sched-spawn-bench.XXXXXX)"
port=$((20000 + RANDOM % 20000))
export SCHED_ENDPOINT="tcp://127.0.0.1:$port"
trap '"$sched" cluster down --state-dir "$state" >/dev/null 2>&1 || true; rm -rf "$state"' EXIT
"$sched" cluster up --nodes 4 --cores 2 --policy fcfs --port "$port" --state-dir "$state" >/dev/null
[ -S "$state/munge/munge.socket" ] && export SCHED_MUNGE_SOCKET="$state/munge/munge.socket"
script="$state/steps.sh"
{
  echo "#!/bin/sh"
  echo "added=\$(echo \$SCHED_JOB_NODELIST | cut -d, -f3-4)"
  for _ in $(seq "$runs"); do
    echo "SPAWN_TIMING=1 $sched run -n 2 --mpi=pmix $app \$added 4 | grep spawn_ms || echo failed"
  done
} >"$script"
id="$("$sched" submit -N 4 -o "$state/out" --parsable "$script")"
while "$sched" show "$id" --json | grep -Eq '"state": *"(PENDING|STARTING|RUNNING|COMPLETING)"'; do
  sleep 0.5
done
if grep -q failed "$state/out"; then
  echo "a step failed:" >&2
  cat "$state/out" >&2
  exit 1
fi
echo "| MPI | parents | children | added nodes | runs | median ms | min ms | max ms |"
echo "|---|---|---|---|---|---|---|---|"
grep '^spawn_ms ' "$state/out" | awk '{print $2}' | sort -n | awk '{v[NR]=$1} END {
  med = NR % 2 ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2;
  printf "| Open MPI 4.1 | 2 | 4 | 2 | %d | %.1f | %.1f | %.1f |\n", NR, med, v[1], v[NR]}'

#!/usr/bin/env bash
# The wall time of a whole MPI step under `sched run --mpi=pmix` (Open MPI)
# beside `--mpi=pmi2` (MPICH), issue 16: a local cluster of NODES virtual
# nodes (`sched cluster up`), one job whose script runs `sched run -n TASKS
# --mpi=M mpi_ranks` RUNS times for each MPI and stamps each with `date`;
# prints the median and range per MPI. The step's time covers the launch,
# MPI_Init (the PMI/PMIx fences through schedd), an allreduce, MPI_Finalize
# and `sched run`'s exit. Figures only: nothing is asserted.
#
#   bench/mpi/pmix_step.sh [NODES=8] [TASKS=32] [RUNS=7]
# after building sched, schedd, nodeagent, mpi_ranks_openmpi and mpi_ranks_mpich.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${SCHED_BUILD_DIR:-$root/build}"
nodes="${1:-8}" tasks="${2:-32}" runs="${3:-7}"
sched="$build/cli/sched"
state="$(mktemp -d /tmp/sched-pmix-bench.XXXXXX)"
port=$((20000 + RANDOM % 20000))
export SCHED_ENDPOINT="tcp://127.0.0.1:$port"
trap '"$sched" cluster down --state-dir "$state" >/dev/null 2>&1 || true; rm -rf "$state"' EXIT
"$sched" cluster up --nodes "$nodes" --cores $(((tasks + nodes - 1) / nodes)) \
  --policy fcfs --port "$port" --state-dir "$state" >/dev/null
# Its own munged when the machine runs none.
[ -S "$state/munge/munge.socket" ] && export SCHED_MUNGE_SOCKET="$state/munge/munge.socket"
script="$state/steps.sh"
{
  echo "#!/bin/sh"
  for mpi in pmix pmi2; do
    app="$build/tests/mpi_ranks_openmpi"
    [ "$mpi" = pmi2 ] && app="$build/tests/mpi_ranks_mpich"
    for _ in $(seq "$runs"); do
      echo "t0=\$(date +%s%N); $sched run -n $tasks --mpi=$mpi $app >/dev/null || echo failed $mpi"
      echo "echo $mpi \$(( (\$(date +%s%N) - t0) / 1000000 ))"
    done
  done
} >"$script"
id="$("$sched" submit -N "$nodes" -o "$state/out" --parsable "$script")"
while "$sched" show "$id" --json | grep -Eq '"state": *"(PENDING|STARTING|RUNNING|COMPLETING)"'; do
  sleep 0.5
done
if grep -q failed "$state/out"; then
  echo "a step failed:" >&2
  cat "$state/out" >&2
  exit 1
fi
echo "| --mpi | MPI | nodes | ranks | runs | median ms | min ms | max ms |"
echo "|---|---|---|---|---|---|---|---|"
for mpi in pmix pmi2; do
  name="Open MPI 4.1"
  [ "$mpi" = pmi2 ] && name="MPICH 4.0"
  grep "^$mpi " "$state/out" | awk '{print $2}' | sort -n | awk -v m="$mpi" -v n="$name" \
    -v nodes="$nodes" -v tasks="$tasks" '{v[NR]=$1} END {
      med = NR % 2 ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2;
      printf "| %s | %s | %d | %d | %d | %d | %d | %d |\n", m, n, nodes, tasks, NR, med, v[1], v[NR]}'
done

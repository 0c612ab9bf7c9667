#!/usr/bin/env bash
# MPI start time on a local cluster (issue 16): builds, then runs
# build/bench/mpi_bench (default: 32 ranks over 8 virtual nodes, --mpi=pmi2
# with MPICH, 7 runs) and writes the table to bench/mpi/results.md (or the
# file given as the first argument). Other arguments go to mpi_bench
# (--mpi=pmix once sched run offers it). Figures only: nothing is asserted.
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
"$root/scripts/build.sh" >/dev/null
build="${SCHED_BUILD_DIR:-$root/build}"
out="${1:-$root/bench/mpi/results.md}"
shift || true
{
  echo "# MPI start time"
  echo
  echo "A local cluster on loopback ($(nproc) cores); produced by \`bench/mpi/run.sh $*\` on $(date -u +%Y-%m-%d)."
  echo "Time from \`sched run -n T --mpi=M\` in a batch script to all of its ranks past MPI_Init."
  echo
  "$build/bench/mpi_bench" "$@"
} | tee "$out"

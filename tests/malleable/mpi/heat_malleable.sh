#!/bin/sh
# The malleable MPI heat solver (examples/mpi/heat_mpi_malleable.c) under a
# real MPI launcher, outside sched: it resizes by the plan and must end with
# the grid of the rigid solver (examples/mpi/heat_mpi.c) bit for bit.
#   heat_malleable.sh openmpi|mpich RIGID MALLEABLE WORKDIR
# Open MPI: grown 2->4 by spawn + merge, shrunk 4->2 (the spawned ranks
# leave, then ranks 1 and 2: one of each). MPICH: Debian's MPICH (ch4:ucx)
# has no dynamic processes (MPI_Open_port: "not supported with ucx netmod"),
# so only shrinks: 4->2, and 4->3->2 with ranks 1 then 0 leaving.
set -eu
mpi=$1 rigid=$2 malleable=$3 dir=$4
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$dir" && mkdir -p "$dir" && cd "$dir"
grid="--nx 24 --ny 37 --iters 40"

run() { sh "$here/mpirun.sh" "$mpi" "$@"; }

run 2 "$rigid" $grid --out rigid.txt

check() { # name, ranks at start, plan, adaptations rank 0 saw
  run "$2" "$malleable" $grid --out "$1.txt" --plan "$3" --host "$(hostname)" | tee "$1.log"
  grep -q "2 ranks at the end, $4 adaptations" "$1.log" ||
    { echo "FAIL $1: not 2 ranks after $4 adaptations" >&2; exit 1; }
  cmp rigid.txt "$1.txt" || { echo "FAIL $1: the grid differs from the rigid run's" >&2; exit 1; }
  echo "ok $1"
}

if [ "$mpi" = openmpi ]; then
  check grow-shrink 2 "10:4,25:2" 2
  check grow-shrink-mixed 2 "10:4,25:2:1+2" 2
else
  check shrink 4 "10:2" 1
  check shrink-twice 4 "10:3:1,25:2:0" 2
fi

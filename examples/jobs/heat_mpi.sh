#!/bin/sh
#SCHED --job-name=heat_mpi --nodes=4 --ntasks=8 --time=10:00
# The rigid MPI heat solver (examples/mpi/heat_mpi.c), 8 ranks over 4 nodes.
# MPI picks how the ranks start (default pmi2):
#   pmi2, pmi1        sched run -n $SCHED_NTASKS --mpi=... (MPICH, no mpirun)
#   hydra             mpiexec.hydra -np $SCHED_NTASKS (MPICH's mpirun; the
#                     job's hostfile and sched-mpi-agent, no ssh)
#   openmpi           mpirun.openmpi -np $SCHED_NTASKS (Open MPI's mpirun,
#                     likewise)
# Writes heat_mpi-<job id>.grid in the submit folder: the same grid as the
# malleable examples/jobs/heat.sh with the same HEAT_ARGS.
#   sched submit --env MPI=openmpi --env 'HEAT_ARGS=--nx 64 --ny 64 --iters 500' heat_mpi.sh
set -eu
# The programs: $EXAMPLES_DIR, else examples/ of the build tree whose
# `sched` is on PATH (scripts/quickstart.sh puts <build>/cli there).
bin="${EXAMPLES_DIR:-$(dirname "$(command -v sched)")/../examples}"
dir="${SCHED_SUBMIT_DIR:-$PWD}"
args="${HEAT_ARGS:---nx 256 --ny 256 --iters 4000} --out $dir/heat_mpi-$SCHED_JOB_ID.grid"
# shellcheck disable=SC2086  # args is a list of options
case "${MPI:-pmi2}" in
  pmi2 | pmi1) sched run -n "$SCHED_NTASKS" --mpi="${MPI:-pmi2}" "$bin/heat_mpi_mpich" $args ;;
  hydra) mpiexec.hydra -np "$SCHED_NTASKS" "$bin/heat_mpi_mpich" $args ;;
  openmpi) mpirun.openmpi -np "$SCHED_NTASKS" "$bin/heat_mpi_openmpi" $args ;;
  *) echo "heat_mpi.sh: MPI=$MPI is not pmi2, pmi1, hydra or openmpi" >&2; exit 2 ;;
esac

#!/bin/sh
#SCHED --job-name=pi_mpi --nodes=4 --ntasks=8 --time=10:00
# The rigid MPI Monte-Carlo pi (examples/mpi/pi_mpi.c), 8 ranks over 4 nodes.
# MPI picks how the ranks start (default pmi2):
#   pmi2, pmi1        sched run -n $SCHED_NTASKS --mpi=... (MPICH, no mpirun)
#   hydra             mpiexec.hydra -np $SCHED_NTASKS (MPICH's mpirun; the
#                     job's hostfile and sched-mpi-agent, no ssh)
#   openmpi           mpirun.openmpi -np $SCHED_NTASKS (Open MPI's mpirun,
#                     likewise)
# Writes pi_mpi-<job id>.txt (samples, hits, estimate): the same as the
# malleable examples/jobs/pi.sh with the same PI_ARGS.
#   sched submit --env MPI=openmpi --env 'PI_ARGS=--samples 1000000' pi_mpi.sh
set -eu
# The programs: $EXAMPLES_DIR, else examples/ of the build tree whose
# `sched` is on PATH (scripts/quickstart.sh puts <build>/cli there).
bin="${EXAMPLES_DIR:-$(dirname "$(command -v sched)")/../examples}"
dir="${SCHED_SUBMIT_DIR:-$PWD}"
args="${PI_ARGS:---samples 200000000 --chunks 100} --out $dir/pi_mpi-$SCHED_JOB_ID.txt"
# shellcheck disable=SC2086  # args is a list of options
case "${MPI:-pmi2}" in
  pmi2 | pmi1) sched run -n "$SCHED_NTASKS" --mpi="${MPI:-pmi2}" "$bin/pi_mpi_mpich" $args ;;
  hydra) mpiexec.hydra -np "$SCHED_NTASKS" "$bin/pi_mpi_mpich" $args ;;
  openmpi) mpirun.openmpi -np "$SCHED_NTASKS" "$bin/pi_mpi_openmpi" $args ;;
  *) echo "pi_mpi.sh: MPI=$MPI is not pmi2, pmi1, hydra or openmpi" >&2; exit 2 ;;
esac

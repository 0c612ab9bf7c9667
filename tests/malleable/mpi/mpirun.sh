#!/bin/sh
# Runs an MPI program with Debian's launcher of one MPI, as root if need be,
# bounded in time (a hang fails the test instead of blocking ctest).
#   mpirun.sh openmpi|mpich NP PROGRAM ARGS...
set -eu
mpi=$1 np=$2
shift 2
case $mpi in
  openmpi)
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,tcp \
      OMPI_MCA_rtc_hwloc_vmhole=none
    exec timeout 120 mpirun.openmpi --oversubscribe -np "$np" "$@" ;;
  mpich) exec timeout 120 mpiexec.hydra -np "$np" "$@" ;;
  *) echo "mpirun.sh: unknown MPI $mpi" >&2; exit 2 ;;
esac

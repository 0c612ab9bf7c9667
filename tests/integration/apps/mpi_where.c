/* An MPI program for the tests of `mpirun` inside a batch script (built with
 * both mpicc.openmpi and mpicc.mpich; tests/CMakeLists.txt). Each rank prints
 *   "rank R size S sum X on NODE"
 * X: MPI_Allreduce of the ranks; NODE: $SLURM_STEP_NODELIST, the node whose
 * agent ran the launcher's daemon (orted, hydra_pmi_proxy) as a one-node step
 * and so the rank; the batch script has no such variable, so an MPI that
 * passes mpirun's environment on (hydra does) cannot hide where it ran. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = -1, size = -1, sum = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  const char* node = getenv("SLURM_STEP_NODELIST");
  printf("rank %d size %d sum %d on %s\n", rank, size, sum, node ? node : "?");
  fflush(stdout);
  MPI_Finalize();
  return 0;
}

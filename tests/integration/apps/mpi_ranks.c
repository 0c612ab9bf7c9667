/* An MPI program for the integration tests of `sched run --mpi` (built with
 * mpicc.mpich for --mpi=pmi2|pmi1 and with mpicc.openmpi for --mpi=pmix;
 * tests/CMakeLists.txt).
 *
 *   mpi_ranks                 each rank prints
 *                             "rank R size S sum X node $SLURM_NODEID procid $SLURM_PROCID"
 *                             (X: MPI_Allreduce of the ranks)
 *   mpi_ranks abort R         as above, then rank R calls MPI_Abort(…, 3) and
 *                             the others wait in a barrier
 *   mpi_ranks die R           as above, then rank R exits with status 5
 *                             without MPI_Finalize, the others wait
 *   mpi_ranks hang PIDFILE    as above, then every rank appends its pid to
 *                             PIDFILE and sleeps until killed */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char* env_or(const char* name, const char* fallback) {
  const char* value = getenv(name);
  return value ? value : fallback;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = -1, size = -1, sum = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  printf("rank %d size %d sum %d node %s procid %s\n", rank, size, sum, env_or("SLURM_NODEID", "?"),
         env_or("SLURM_PROCID", "?"));
  fflush(stdout);
  const char* mode = argc > 1 ? argv[1] : "";
  const int chosen = argc > 2 ? atoi(argv[2]) : -1;
  if (strcmp(mode, "abort") == 0 || strcmp(mode, "die") == 0) {
    if (rank == chosen) {
      if (mode[0] == 'a') MPI_Abort(MPI_COMM_WORLD, 3);
      _exit(5);
    }
    /* The others wait for a rank that will never come: only the step's
     * failure ends them. */
    MPI_Barrier(MPI_COMM_WORLD);
    sleep(600);
  } else if (strcmp(mode, "hang") == 0 && argc > 2) {
    FILE* pids = fopen(argv[2], "a");
    if (pids) {
      fprintf(pids, "%d\n", (int)getpid());
      fclose(pids);
    }
    sleep(600);
  }
  MPI_Finalize();
  return 0;
}

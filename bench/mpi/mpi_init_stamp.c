/* bench/mpi: each rank prints the wall time (seconds since the epoch) at
 * which it got past MPI_Init, then finalizes. Built with mpicc.mpich (and
 * mpicc.openmpi, for --mpi=pmix). */
#include <mpi.h>
#include <stdio.h>
#include <time.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  printf("%lld.%09ld\n", (long long)now.tv_sec, now.tv_nsec);
  fflush(stdout);
  MPI_Finalize();
  return 0;
}

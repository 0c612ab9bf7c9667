/* An MPI program that reports nothing itself (issue 16 item 3's PMPI
 * measurement): `mpi_waits ITERATIONS COMPUTE_MS WAIT_MS`. Each iteration
 * every rank computes COMPUTE_MS; rank 0 then computes WAIT_MS more while the
 * others wait for it in MPI_Barrier; an allreduce closes the iteration. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Busy, not asleep: computation as a profiler sees it. */
static void compute(double ms) {
  const double end = now_s() + ms / 1000.0;
  volatile double x = 0;
  while (now_s() < end) x += 1.0;
}

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: mpi_waits ITERATIONS COMPUTE_MS WAIT_MS\n");
    return 2;
  }
  const int iterations = atoi(argv[1]);
  const double compute_ms = atof(argv[2]);
  const double wait_ms = atof(argv[3]);
  MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int total = 0;
  for (int i = 0; i < iterations; ++i) {
    compute(compute_ms);
    if (rank == 0) compute(wait_ms);
    MPI_Barrier(MPI_COMM_WORLD);
    int one = 1;
    MPI_Allreduce(&one, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  }
  printf("rank %d of %d: %d iterations, sum %d\n", rank, size, iterations, total);
  MPI_Finalize();
  return 0;
}

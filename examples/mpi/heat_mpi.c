/* The heat solver of examples/heat/heat.c as a rigid MPI program (issue 16
 * item 4): Jacobi iterations on an NX x NY grid whose edges hold fixed
 * temperatures (the top edge 100, the others 0), rows split over the ranks
 * in the same consecutive blocks, edge rows exchanged with MPI_Sendrecv.
 * Each cell is computed from the same values in the same order as heat.c
 * does, so both write the same grid bit for bit: compare with diff.
 *
 *   heat_mpi [--nx N] [--ny N] [--iters N] [--out FILE] [--sleep-ms MS]
 *
 * Run it with `sched run -n 8 --mpi=pmi2 heat_mpi ...` (MPICH) or with
 * mpirun in a batch script (examples/jobs/heat_mpi.sh). The number of ranks
 * is fixed for the run; heat_mpi_malleable.c is the malleable build (the MPI
 * layer, issue 16 item 3), whose grid this one's must equal. */
#define _POSIX_C_SOURCE 200809L

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TOP_TEMPERATURE 100.0

typedef struct {
  long nx, ny, iters, sleep_ms;
  const char* out;
} options;

static void* xcalloc(size_t count, size_t size) {
  void* p = calloc(count ? count : 1, size);
  if (!p) {
    fprintf(stderr, "heat_mpi: out of memory\n");
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  return p;
}

/* Rows [block_begin, +block_rows) belong to rank r of p (as in heat.c). */
static long block_begin(long n, int p, int r) { return r * (n / p) + (r < n % p ? r : n % p); }
static long block_rows(long n, int p, int r) { return n / p + (r < n % p ? 1 : 0); }

static long parse_long(const char* flag, const char* text, long min) {
  char* end = NULL;
  const long v = text ? strtol(text, &end, 10) : 0;
  if (!text || *end != '\0' || v < min) {
    fprintf(stderr, "heat_mpi: %s needs a number >= %ld\n", flag, min);
    exit(2);
  }
  return v;
}

static options parse_options(int argc, char** argv) {
  options o = {256, 256, 4000, 0, NULL};
  const struct {
    const char* name;
    long* value;
    long min;
  } flags[] = {{"--nx", &o.nx, 3},
               {"--ny", &o.ny, 3},
               {"--iters", &o.iters, 0},
               {"--sleep-ms", &o.sleep_ms, 0}};
  int ok = argc % 2 == 1; /* flags come in pairs */
  for (int i = 1; ok && i + 1 < argc; i += 2) {
    ok = strcmp(argv[i], "--out") == 0;
    if (ok) o.out = argv[i + 1];
    for (size_t f = 0; f < sizeof flags / sizeof flags[0] && !ok; ++f) {
      ok = strcmp(argv[i], flags[f].name) == 0;
      if (ok) *flags[f].value = parse_long(argv[i], argv[i + 1], flags[f].min);
    }
  }
  if (!ok) {
    fprintf(stderr, "usage: heat_mpi [--nx N] [--ny N] [--iters N] [--out FILE] [--sleep-ms MS]\n");
    exit(2);
  }
  return o;
}

static void sleep_ms(long ms) {
  if (ms <= 0) return;
  struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&t, NULL);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const options o = parse_options(argc, argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (o.ny < size) {
    if (rank == 0) fprintf(stderr, "heat_mpi: %d ranks but only %ld rows\n", size, o.ny);
    MPI_Finalize();
    return 1;
  }
  const double started = MPI_Wtime();
  const long nx = o.nx, begin = block_begin(o.ny, size, rank), rows = block_rows(o.ny, size, rank);
  /* rows + 2 rows of nx cells: one halo row above and one below. */
  double* cur = xcalloc((size_t)(rows + 2) * (size_t)nx, sizeof(double));
  double* next = xcalloc((size_t)(rows + 2) * (size_t)nx, sizeof(double));
  if (begin == 0) {
    for (long j = 0; j < nx; ++j) cur[nx + j] = next[nx + j] = TOP_TEMPERATURE;
  }
  const int up = rank > 0 ? rank - 1 : MPI_PROC_NULL;
  const int down = rank < size - 1 ? rank + 1 : MPI_PROC_NULL;
  for (long iter = 0; iter < o.iters; ++iter) {
    /* My first row up, the row below mine from down; then the other way. */
    MPI_Sendrecv(cur + nx, (int)nx, MPI_DOUBLE, up, 0, cur + (rows + 1) * nx, (int)nx, MPI_DOUBLE,
                 down, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Sendrecv(cur + rows * nx, (int)nx, MPI_DOUBLE, down, 1, cur, (int)nx, MPI_DOUBLE, up, 1,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    for (long i = 1; i <= rows; ++i) {
      const long g = begin + i - 1;
      if (g == 0 || g == o.ny - 1) continue; /* fixed boundary rows */
      for (long j = 1; j < nx - 1; ++j)
        next[i * nx + j] = 0.25 * (cur[(i - 1) * nx + j] + cur[(i + 1) * nx + j] +
                                   cur[i * nx + j - 1] + cur[i * nx + j + 1]);
    }
    double* t = cur;
    cur = next;
    next = t;
    sleep_ms(o.sleep_ms);
  }
  /* Rank 0 gathers the blocks and writes the grid, one row per line. */
  int* counts = xcalloc((size_t)size, sizeof(int));
  int* displs = xcalloc((size_t)size, sizeof(int));
  for (int r = 0; r < size; ++r) {
    counts[r] = (int)(block_rows(o.ny, size, r) * nx);
    displs[r] = (int)(block_begin(o.ny, size, r) * nx);
  }
  double* grid = rank == 0 ? xcalloc((size_t)(o.ny * nx), sizeof(double)) : NULL;
  MPI_Gatherv(cur + nx, (int)(rows * nx), MPI_DOUBLE, grid, counts, displs, MPI_DOUBLE, 0,
              MPI_COMM_WORLD);
  int status = 0;
  if (rank == 0) {
    double sum = 0;
    for (long k = 0; k < o.ny * nx; ++k) sum += grid[k];
    if (o.out) {
      FILE* f = fopen(o.out, "w");
      status = f ? 0 : 1;
      for (long i = 0; f && i < o.ny; ++i) {
        for (long j = 0; j < nx; ++j)
          fprintf(f, j + 1 < nx ? "%.17g " : "%.17g\n", grid[i * nx + j]);
      }
      if (!f || fclose(f) != 0) {
        fprintf(stderr, "heat_mpi: cannot write %s\n", o.out);
        status = 1;
      }
    }
    printf("heat_mpi: %ld iterations on %ldx%ld, %d ranks, checksum %.17g, %.2f s\n", o.iters, nx,
           o.ny, size, sum, MPI_Wtime() - started);
  }
  free(grid);
  free(counts);
  free(displs);
  free(cur);
  free(next);
  MPI_Finalize();
  return status;
}

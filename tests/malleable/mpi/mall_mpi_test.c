/* The mechanics of the malleable MPI layer (sched/malleable_mpi.h) under a
 * real MPI, outside sched: block layout, redistribution between layouts of
 * any sizes and owners, refusals that reach every process, shrink order, and
 * (with --spawn) an expansion by spawn + merge onto this host. Run with 4
 * processes; exits 0 when every check held on every process (the spawned
 * ones included), else prints each failure.
 *   mall_mpi_test [--spawn] */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sched/malleable_mpi.h"

static int failures;

#define CHECK(cond, ...)                                            \
  do {                                                              \
    if (!(cond)) {                                                  \
      ++failures;                                                   \
      fprintf(stderr, "FAIL (rank %d) line %d: ", rank_, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                                 \
      fprintf(stderr, "\n");                                        \
    }                                                               \
  } while (0)

static int rank_;

static void check_blocks(void) {
  for (long n = 0; n < 20; ++n) {
    for (int parts = 1; parts <= 6; ++parts) {
      long next = 0;
      for (int p = 0; p < parts; ++p) {
        CHECK(sched_mall_mpi_block_begin(n, parts, p) == next, "block %d of %d over %ld", p, parts,
              n);
        next += sched_mall_mpi_block_count(n, parts, p);
      }
      CHECK(next == n, "blocks of %d cover %ld of %ld", parts, next, n);
    }
  }
}

/* Old block of process q: the layout rotated by `shift`, -1 past `parts`. */
static int part_of(int q, int size, int shift, int parts) {
  const int p = (q + shift) % size;
  return p < parts ? p : -1;
}

static void check_redistribution(MPI_Comm comm) {
  int size = 0;
  MPI_Comm_size(comm, &size);
  const long rows = 17;
  const int len = 3;
  for (int old_parts = 1; old_parts <= size; ++old_parts) {
    for (int new_parts = 1; new_parts <= size; ++new_parts) {
      for (int shift = 0; shift < size; ++shift) {
        const int op = part_of(rank_, size, shift, old_parts);
        const int np = part_of(rank_, size, (shift + 1) % size, new_parts);
        const long o0 = sched_mall_mpi_block_begin(rows, old_parts, op);
        const long on = op >= 0 ? sched_mall_mpi_block_count(rows, old_parts, op) : 0;
        const long n0 = sched_mall_mpi_block_begin(rows, new_parts, np);
        const long nn = np >= 0 ? sched_mall_mpi_block_count(rows, new_parts, np) : 0;
        int* old_rows = calloc((size_t)(on * len + 1), sizeof(int));
        int* new_rows = calloc((size_t)(nn * len + 1), sizeof(int));
        for (long i = 0; i < on * len; ++i) old_rows[i] = (int)((o0 + i / len) * 100 + i % len);
        for (long i = 0; i < nn * len; ++i) new_rows[i] = -1;
        const int rc = sched_mall_mpi_redistribute_rows(comm, rows, len, MPI_INT, old_parts, op,
                                                        old_rows, new_parts, np, new_rows);
        CHECK(rc == 0, "%d -> %d shift %d: %s", old_parts, new_parts, shift,
              sched_mall_mpi_error());
        for (long i = 0; rc == 0 && i < nn * len; ++i)
          CHECK(new_rows[i] == (int)((n0 + i / len) * 100 + i % len),
                "%d -> %d shift %d: row %ld col %ld is %d", old_parts, new_parts, shift,
                n0 + i / len, i % len, new_rows[i]);
        free(old_rows);
        free(new_rows);
      }
    }
  }
}

static void check_refusals(MPI_Comm comm) {
  int size = 0, cell = 0;
  MPI_Comm_size(comm, &size);
  /* One process's bad block number: every process refuses, none waits. */
  int rc = sched_mall_mpi_redistribute_rows(comm, 8, 1, MPI_INT, size, rank_, &cell, size,
                                            rank_ == 1 ? size : rank_, &cell);
  CHECK(rc == SCHED_MALL_EINVAL, "a bad block number elsewhere gave %d", rc);
  /* Block 0 held twice (and the last by nobody). */
  rc = sched_mall_mpi_redistribute_rows(comm, 8, 1, MPI_INT, size, rank_ == size - 1 ? 0 : rank_,
                                        &cell, size, rank_, &cell);
  CHECK(rc == SCHED_MALL_EINVAL, "a block held twice gave %d", rc);
  MPI_Comm none = MPI_COMM_WORLD;
  rc = sched_mall_mpi_shrink(comm, 1, &none);
  CHECK(rc == SCHED_MALL_EINVAL && none == MPI_COMM_NULL, "everyone leaving gave %d", rc);
  rc = sched_mall_mpi_expand(comm, size, NULL, NULL, NULL, &none);
  CHECK(rc == SCHED_MALL_EINVAL, "expanding to the same size gave %d", rc);
  CHECK(strstr(sched_mall_mpi_error(), "not above") != NULL, "the reason: %s",
        sched_mall_mpi_error());
}

static void check_shrink(MPI_Comm comm) {
  int size = 0;
  MPI_Comm_size(comm, &size);
  MPI_Comm shrunk = MPI_COMM_NULL;
  const int leaving = rank_ % 2 == 1; /* 1 and 3 leave: 0, 2 close up */
  const int rc = sched_mall_mpi_shrink(comm, leaving, &shrunk);
  CHECK(rc == 0, "shrink: %s", sched_mall_mpi_error());
  if (leaving) {
    CHECK(shrunk == MPI_COMM_NULL, "a leaving process got a communicator");
    return;
  }
  int r = -1, s = 0;
  MPI_Comm_rank(shrunk, &r);
  MPI_Comm_size(shrunk, &s);
  CHECK(r == rank_ / 2 && s == (size + 1) / 2, "old rank %d became %d of %d", rank_, r, s);
  MPI_Comm_free(&shrunk);
}

/* Old processes keep their ranks; the new ones come after, and know the old size. */
static void check_expand(MPI_Comm comm, const char* host) {
  int size = 0;
  MPI_Comm_size(comm, &size);
  const char* hosts[2] = {host, host};
  char* args[] = {"--child", NULL};
  MPI_Comm merged = MPI_COMM_NULL;
  const int rc = sched_mall_mpi_expand(comm, size + 2, hosts, NULL, args, &merged);
  CHECK(rc == 0, "expand: %s", sched_mall_mpi_error());
  if (rc != 0) return;
  int r = -1, s = 0, sum = 0;
  MPI_Comm_rank(merged, &r);
  MPI_Comm_size(merged, &s);
  CHECK(r == rank_ && s == size + 2, "old rank %d is %d of %d after the expansion", rank_, r, s);
  MPI_Allreduce(&r, &sum, 1, MPI_INT, MPI_SUM, merged);
  CHECK(sum == (s - 1) * s / 2, "the merged ranks sum to %d", sum);
  int spawned = 1;
  sched_mall_mpi_spawned(&spawned);
  CHECK(spawned == 0, "an old process says it was spawned");
  int none = 0, theirs = 0; /* the spawned processes' failures */
  MPI_Allreduce(&none, &theirs, 1, MPI_INT, MPI_SUM, merged);
  CHECK(theirs == 0, "%d failures in the spawned processes", theirs);
  MPI_Comm_free(&merged);
}

static int child(void) {
  int spawned = 0, old_size = 0, r = -1, s = 0, sum = 0;
  sched_mall_mpi_spawned(&spawned);
  CHECK(spawned == 1, "a spawned process does not know it");
  MPI_Comm merged = MPI_COMM_NULL;
  const int rc = sched_mall_mpi_join(&merged, &old_size);
  CHECK(rc == 0, "join: %s", sched_mall_mpi_error());
  if (rc != 0) return 1;
  MPI_Comm_rank(merged, &r);
  MPI_Comm_size(merged, &s);
  CHECK(r >= old_size && s == old_size + 2, "a new process is %d of %d after %d", r, s, old_size);
  MPI_Allreduce(&r, &sum, 1, MPI_INT, MPI_SUM, merged);
  sched_mall_mpi_spawned(&spawned);
  CHECK(spawned == 0, "still spawned after joining");
  MPI_Comm again = MPI_COMM_NULL;
  CHECK(sched_mall_mpi_join(&again, NULL) == SCHED_MALL_ENOTPENDING, "joined twice");
  int total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, merged);
  MPI_Comm_free(&merged);
  return 0;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  if (argc == 2 && strcmp(argv[1], "--child") == 0) {
    child();
  } else {
    check_blocks();
    check_redistribution(MPI_COMM_WORLD);
    check_refusals(MPI_COMM_WORLD);
    check_shrink(MPI_COMM_WORLD);
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    if (argc == 2 && strcmp(argv[1], "--spawn") == 0) check_expand(MPI_COMM_WORLD, host);
  }
  int all = 0;
  MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank_ == 0) printf("mall_mpi_test: %d failures\n", all);
  MPI_Finalize();
  return all == 0 ? 0 : 1;
}

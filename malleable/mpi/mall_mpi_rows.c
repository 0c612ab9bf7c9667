/* Block-distributed rows from n processes to m (sched/malleable_mpi.h):
 * every process learns who holds which old and new block, sends each new
 * block's holder the part of its old block that falls inside it, all in one
 * MPI_Alltoallv counted in rows. */
#include <limits.h>
#include <stdlib.h>

#include "mall_mpi_error.h"
#include "sched/malleable_mpi.h"

long sched_mall_mpi_block_begin(long n, int parts, int part) {
  if (parts < 1 || part < 0 || part >= parts || n < 0) return 0;
  const long base = n / parts, extra = n % parts;
  return part * base + (part < extra ? part : extra);
}

long sched_mall_mpi_block_count(long n, int parts, int part) {
  if (parts < 1 || part < 0 || part >= parts || n < 0) return 0;
  return n / parts + (part < n % parts ? 1 : 0);
}

/* Rows [begin, end) of block `part` (empty for part -1). */
static void span(long rows, int parts, int part, long* begin, long* end) {
  *begin = sched_mall_mpi_block_begin(rows, parts, part);
  *end = part < 0 ? *begin : *begin + sched_mall_mpi_block_count(rows, parts, part);
}

static long overlap(long a0, long a1, long b0, long b1, long* from) {
  *from = a0 > b0 ? a0 : b0;
  const long to = a1 < b1 ? a1 : b1;
  return to > *from ? to - *from : 0;
}

/* Each block of a layout held by exactly one process. */
static int layout_ok(const int* parts_of, int size, int stride, int parts) {
  int ok = 1;
  int* held = calloc((size_t)parts, sizeof(int));
  if (!held) return 0;
  for (int q = 0; q < size; ++q) {
    const int p = parts_of[q * 2 + stride];
    if (p >= 0) ++held[p];
  }
  for (int p = 0; p < parts; ++p) ok = ok && held[p] == 1;
  free(held);
  return ok;
}

int sched_mall_mpi_redistribute_rows(MPI_Comm comm, long rows, int row_len, MPI_Datatype type,
                                     int old_parts, int old_part, const void* old_data,
                                     int new_parts, int new_part, void* new_data) {
  mall_mpi_clear();
  int size = 0, rank = 0;
  int rc = mall_mpi_check(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  if (rc == SCHED_MALL_OK) rc = mall_mpi_check(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  if (rc != SCHED_MALL_OK) return rc;
  /* A bad argument is shared (as block -2) so that every process refuses,
   * rather than the others waiting in the exchange. */
  const int valid = rows >= 0 && rows <= INT_MAX && row_len >= 1 && old_parts >= 1 &&
                    new_parts >= 1 && old_part >= -1 && old_part < old_parts && new_part >= -1 &&
                    new_part < new_parts && (old_part < 0 || old_data || rows == 0) &&
                    (new_part < 0 || new_data || rows == 0);
  const int mine[2] = {valid ? old_part : -2, valid ? new_part : -2};
  int* all = calloc((size_t)size * 2, sizeof(int));
  int* counts = calloc((size_t)size * 4, sizeof(int));
  if (!all || !counts) {
    free(all);
    free(counts);
    return mall_mpi_fail(SCHED_MALL_ENOMEM, "out of memory");
  }
  rc = mall_mpi_check(MPI_Allgather(mine, 2, MPI_INT, all, 2, MPI_INT, comm), "MPI_Allgather");
  int everyone_valid = 1;
  for (int q = 0; rc == SCHED_MALL_OK && q < size; ++q)
    everyone_valid = everyone_valid && all[2 * q] != -2 && all[2 * q + 1] != -2;
  if (rc == SCHED_MALL_OK && !everyone_valid)
    rc = mall_mpi_fail(SCHED_MALL_EINVAL, "sched_mall_mpi_redistribute_rows: a bad argument (%s)",
                       valid ? "on another process" : "here");
  if (rc == SCHED_MALL_OK &&
      (!layout_ok(all, size, 0, old_parts) || !layout_ok(all, size, 1, new_parts)))
    rc = mall_mpi_fail(SCHED_MALL_EINVAL,
                       "sched_mall_mpi_redistribute_rows: a block held by no process or by two");
  MPI_Datatype row = MPI_DATATYPE_NULL;
  if (rc == SCHED_MALL_OK)
    rc = mall_mpi_check(MPI_Type_contiguous(row_len, type, &row), "MPI_Type_contiguous");
  if (rc == SCHED_MALL_OK) rc = mall_mpi_check(MPI_Type_commit(&row), "MPI_Type_commit");
  if (rc == SCHED_MALL_OK) {
    int *send = counts, *send_at = counts + size, *recv = counts + 2 * size,
        *recv_at = counts + 3 * size;
    long old0, old1, new0, new1;
    span(rows, old_parts, old_part, &old0, &old1);
    span(rows, new_parts, new_part, &new0, &new1);
    for (int q = 0; q < size; ++q) {
      long q0, q1, from;
      span(rows, new_parts, all[2 * q + 1], &q0, &q1); /* what q will hold */
      send[q] = (int)overlap(old0, old1, q0, q1, &from);
      send_at[q] = (int)(from - old0);
      span(rows, old_parts, all[2 * q], &q0, &q1); /* what q held */
      recv[q] = (int)overlap(q0, q1, new0, new1, &from);
      recv_at[q] = (int)(from - new0);
      if (send[q] == 0) send_at[q] = 0;
      if (recv[q] == 0) recv_at[q] = 0;
    }
    rc = mall_mpi_check(
        MPI_Alltoallv(old_data, send, send_at, row, new_data, recv, recv_at, row, comm),
        "MPI_Alltoallv");
  }
  if (row != MPI_DATATYPE_NULL) MPI_Type_free(&row);
  free(all);
  free(counts);
  return rc;
}

/* The MPI layer driven by a sched session (sched/malleable_mpi.h): the
 * session's adaptation (sizes, ranks, who leaves) decides what the
 * mechanics of mall_mpi_comm.c do. The probe / adapt_begin / commit protocol
 * is the session's own, unchanged. */
#include "mall_mpi_error.h"
#include "sched/malleable_mpi.h"

/* A session error keeps the session's text. */
static int session_failed(sched_mall* m, int rc, const char* what) {
  return mall_mpi_fail(rc, "%s: %s", what, sched_mall_error(m));
}

static void reset(sched_mall_mpi_adaptation* out) {
  out->window = MPI_COMM_NULL;
  out->next = MPI_COMM_NULL;
}

int sched_mall_mpi_adapt_begin(sched_mall* m, MPI_Comm comm, const char* const* hosts,
                               const char* command, char* const* argv,
                               sched_mall_mpi_adaptation* out) {
  mall_mpi_clear();
  if (!m || !out)
    return mall_mpi_fail(SCHED_MALL_EINVAL, "sched_mall_mpi_adapt_begin: NULL argument");
  reset(out);
  int rc = sched_mall_adapt_begin(m, &out->base);
  if (rc != SCHED_MALL_OK) return session_failed(m, rc, "sched_mall_adapt_begin");
  int size = 0;
  rc = mall_mpi_check(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  if (rc != SCHED_MALL_OK) return rc;
  if (size != out->base.old_size)
    return mall_mpi_fail(SCHED_MALL_EPROTO,
                         "the adaptation starts from %d processes but the communicator has %d",
                         out->base.old_size, size);
  if (out->base.new_size > out->base.old_size) {
    rc = sched_mall_mpi_expand(comm, out->base.new_size, hosts, command, argv, &out->next);
    out->window = out->next;
    return rc;
  }
  out->window = comm; /* a shrink: the old set hands over, then splits */
  return SCHED_MALL_OK;
}

int sched_mall_mpi_adapt_join(sched_mall* m, sched_mall_mpi_adaptation* out) {
  mall_mpi_clear();
  if (!m || !out)
    return mall_mpi_fail(SCHED_MALL_EINVAL, "sched_mall_mpi_adapt_join: NULL argument");
  reset(out);
  int rc = sched_mall_mpi_join(&out->next, NULL);
  if (rc != SCHED_MALL_OK) return rc;
  out->window = out->next;
  rc = sched_mall_adapt_begin(m, &out->base);
  if (rc != SCHED_MALL_OK) return session_failed(m, rc, "sched_mall_adapt_begin");
  int rank = 0;
  rc = mall_mpi_check(MPI_Comm_rank(out->next, &rank), "MPI_Comm_rank");
  if (rc == SCHED_MALL_OK && rank != out->base.new_rank)
    rc = mall_mpi_fail(SCHED_MALL_EPROTO, "spawned as MPI rank %d but the session says new rank %d",
                       rank, out->base.new_rank);
  return rc;
}

int sched_mall_mpi_adapt_commit(sched_mall* m, sched_mall_mpi_adaptation* a, MPI_Comm* comm) {
  mall_mpi_clear();
  if (!m || !a || !comm)
    return mall_mpi_fail(SCHED_MALL_EINVAL, "sched_mall_mpi_adapt_commit: NULL argument");
  int rc = SCHED_MALL_OK;
  if (a->base.new_size < a->base.old_size)
    rc = sched_mall_mpi_shrink(a->window, a->base.leaving, &a->next);
  int rank = -1;
  if (rc == SCHED_MALL_OK && a->next != MPI_COMM_NULL)
    rc = mall_mpi_check(MPI_Comm_rank(a->next, &rank), "MPI_Comm_rank");
  /* The session's order and MPI's must agree, or the data went astray. */
  if (rc == SCHED_MALL_OK && rank != a->base.new_rank)
    rc =
        mall_mpi_fail(SCHED_MALL_EPROTO, "MPI rank %d after the adaptation but the session says %d",
                      rank, a->base.new_rank);
  if (rc != SCHED_MALL_OK) return rc;
  rc = sched_mall_adapt_commit(m);
  if (rc != SCHED_MALL_OK) return session_failed(m, rc, "sched_mall_adapt_commit");
  *comm = a->next;
  return SCHED_MALL_OK;
}

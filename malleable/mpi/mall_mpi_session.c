/* The MPI layer driven by a sched session (sched/malleable_mpi.h): the
 * session's adaptation (sizes, ranks, who leaves) decides what the
 * mechanics of mall_mpi_comm.c do. The probe / adapt_begin / commit protocol
 * is the session's own, unchanged. */
#include <stdlib.h>
#include <string.h>

#include "mall_mpi_error.h"
#include "sched/malleable_mpi.h"

/* Room for one data endpoint ("tcp://host:port") in the exchange below. */
#define ENDPOINT_MAX 256

/* A session error keeps the session's text. */
static int session_failed(sched_mall* m, int rc, const char* what) {
  return mall_mpi_fail(rc, "%s: %s", what, sched_mall_error(m));
}

static void reset(sched_mall_mpi_adaptation* out) {
  out->window = MPI_COMM_NULL;
  out->next = MPI_COMM_NULL;
}

/* The session's peers in an expansion's window: processes the program
 * spawned started after the window opened, so every process learns every
 * endpoint here, over the merged communicator (its rank is the window
 * rank: the old processes first, the new ones in spawn order). */
static int share_endpoints(sched_mall* m, MPI_Comm window) {
  int size = 0, rank = 0;
  int rc = mall_mpi_check(MPI_Comm_size(window, &size), "MPI_Comm_size");
  if (rc == SCHED_MALL_OK) rc = mall_mpi_check(MPI_Comm_rank(window, &rank), "MPI_Comm_rank");
  if (rc != SCHED_MALL_OK) return rc;
  char mine[ENDPOINT_MAX] = "";
  const char* endpoint = sched_mall_endpoint(m);
  /* Too long: sent empty, so that every process fails together below. */
  if (strlen(endpoint) < sizeof mine) strcpy(mine, endpoint);
  char* all = calloc((size_t)size, ENDPOINT_MAX);
  if (!all) return mall_mpi_fail(SCHED_MALL_ENOMEM, "out of memory");
  rc = mall_mpi_check(
      MPI_Allgather(mine, ENDPOINT_MAX, MPI_CHAR, all, ENDPOINT_MAX, MPI_CHAR, window),
      "MPI_Allgather");
  for (int w = 0; rc == SCHED_MALL_OK && w < size; ++w) {
    const char* theirs = all + (size_t)w * ENDPOINT_MAX;
    if (theirs[0] == '\0' || theirs[ENDPOINT_MAX - 1] != '\0') {
      rc = mall_mpi_fail(SCHED_MALL_EPROTO, "window rank %d has no usable data endpoint", w);
    } else if (sched_mall_adapt_set_endpoint(m, w, theirs) != SCHED_MALL_OK) {
      rc = mall_mpi_fail(SCHED_MALL_EPROTO, "window rank %d: %s", w, sched_mall_error(m));
    }
  }
  free(all);
  return rc;
}

/* The nodes the scheduler placed the new ranks on (an expansion of a step
 * run with --mall-spawn=mpi), or NULL when it does not say. */
static const char** session_hosts(sched_mall* m, const sched_mall_adaptation* base) {
  const int add = base->new_size - base->old_size;
  const char** hosts = calloc((size_t)add, sizeof(char*));
  if (!hosts) return NULL;
  for (int i = 0; i < add; ++i) {
    if (sched_mall_adapt_host(m, base->old_size + i, &hosts[i]) != SCHED_MALL_OK || !hosts[i]) {
      free(hosts);
      return NULL;
    }
  }
  return hosts;
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
    /* No hosts given: where the scheduler placed the new ranks. */
    const char** placed = hosts ? NULL : session_hosts(m, &out->base);
    rc = sched_mall_mpi_expand(comm, out->base.new_size, placed ? placed : hosts, command, argv,
                               &out->next);
    free((void*)placed);
    out->window = out->next;
    if (rc == SCHED_MALL_OK) rc = share_endpoints(m, out->window);
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
  if (rc == SCHED_MALL_OK) rc = share_endpoints(m, out->window);
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

/* Expansion by spawn and merge, shrink by split (sched/malleable_mpi.h,
 * docs/malleable.md "MPI applications"). The launcher is whatever started
 * the program: MPI_Comm_spawn asks it, with the "host" info key that Open
 * MPI and MPICH both read for placement. */
#define _GNU_SOURCE
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mall_mpi_error.h"
#include "sched/malleable_mpi.h"

/* Consecutive new ranks on one host are one command of spawn_multiple. */
typedef struct {
  int count;         /* commands */
  int* procs;        /* processes per command */
  const char** host; /* host per command (NULL: the launcher's choice) */
} groups;

static int same_host(const char* a, const char* b) {
  return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

static int make_groups(int add, const char* const* hosts, groups* g) {
  g->count = 0;
  g->procs = calloc((size_t)add, sizeof(int));
  g->host = calloc((size_t)add, sizeof(char*));
  if (!g->procs || !g->host) return mall_mpi_fail(SCHED_MALL_ENOMEM, "out of memory");
  for (int i = 0; i < add; ++i) {
    const char* host = hosts ? hosts[i] : NULL;
    if (host && host[0] == '\0') host = NULL;
    if (g->count > 0 && same_host(g->host[g->count - 1], host)) {
      ++g->procs[g->count - 1];
    } else {
      g->host[g->count] = host;
      g->procs[g->count++] = 1;
    }
  }
  return SCHED_MALL_OK;
}

static void free_groups(groups* g) {
  free(g->procs);
  free(g->host);
}

/* Rank 0 decides the commands; the others learn their number and sizes, so
 * that every rank passes spawn_multiple consistent counts. */
static int share_groups(MPI_Comm comm, int rank, int add, groups* g) {
  int rc = mall_mpi_check(MPI_Bcast(&g->count, 1, MPI_INT, 0, comm), "MPI_Bcast");
  if (rc == SCHED_MALL_OK && rank != 0) memset(g->host, 0, (size_t)add * sizeof(char*));
  if (rc == SCHED_MALL_OK)
    rc = mall_mpi_check(MPI_Bcast(g->procs, g->count, MPI_INT, 0, comm), "MPI_Bcast");
  return rc;
}

int sched_mall_mpi_expand(MPI_Comm comm, int new_size, const char* const* hosts,
                          const char* command, char* const* argv, MPI_Comm* merged) {
  mall_mpi_clear();
  if (!merged) return mall_mpi_fail(SCHED_MALL_EINVAL, "sched_mall_mpi_expand: merged is NULL");
  *merged = MPI_COMM_NULL;
  int size = 0, rank = 0;
  int rc = mall_mpi_check(MPI_Comm_size(comm, &size), "MPI_Comm_size");
  if (rc == SCHED_MALL_OK) rc = mall_mpi_check(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  if (rc != SCHED_MALL_OK) return rc;
  /* Every rank sees the same new_size and size: they all refuse together. */
  if (new_size <= size)
    return mall_mpi_fail(SCHED_MALL_EINVAL,
                         "sched_mall_mpi_expand: new size %d is not above the current %d", new_size,
                         size);
  const int add = new_size - size;
  char self[PATH_MAX] = "";
  if (rank == 0 && !command) {
    const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n > 0) self[n] = '\0';
    command = self;
  }
  groups g;
  rc = make_groups(add, rank == 0 ? hosts : NULL, &g);
  if (rc == SCHED_MALL_OK) rc = share_groups(comm, rank, add, &g);
  char** commands = calloc((size_t)add, sizeof(char*));
  char*** argvs = calloc((size_t)add, sizeof(char**));
  MPI_Info* infos = calloc((size_t)add, sizeof(MPI_Info));
  int* errcodes = calloc((size_t)add, sizeof(int));
  if (rc == SCHED_MALL_OK && (!commands || !argvs || !infos || !errcodes))
    rc = mall_mpi_fail(SCHED_MALL_ENOMEM, "out of memory");
  int infos_made = 0;
  for (int i = 0; rc == SCHED_MALL_OK && i < g.count; ++i) {
    commands[i] = (char*)(rank == 0 ? command : "");
    argvs[i] = (char**)argv;
    infos[i] = MPI_INFO_NULL;
    if (rank == 0 && g.host[i]) {
      rc = mall_mpi_check(MPI_Info_create(&infos[i]), "MPI_Info_create");
      if (rc == SCHED_MALL_OK) {
        infos_made = i + 1;
        rc = mall_mpi_check(MPI_Info_set(infos[i], "host", g.host[i]), "MPI_Info_set");
      }
    }
  }
  MPI_Comm inter = MPI_COMM_NULL;
  if (rc == SCHED_MALL_OK)
    rc = mall_mpi_check(MPI_Comm_spawn_multiple(g.count, commands, argv ? argvs : MPI_ARGVS_NULL,
                                                g.procs, infos, 0, comm, &inter, errcodes),
                        "MPI_Comm_spawn_multiple");
  for (int i = 0; rc == SCHED_MALL_OK && i < add; ++i) {
    if (errcodes[i] != MPI_SUCCESS) rc = mall_mpi_check(errcodes[i], "spawning a new process");
  }
  /* The old processes are the low group: they keep their ranks. */
  if (rc == SCHED_MALL_OK)
    rc = mall_mpi_check(MPI_Intercomm_merge(inter, 0, merged), "MPI_Intercomm_merge");
  if (inter != MPI_COMM_NULL && rc == SCHED_MALL_OK)
    rc = mall_mpi_check(MPI_Comm_disconnect(&inter), "MPI_Comm_disconnect");
  for (int i = 0; i < infos_made; ++i) {
    if (infos[i] != MPI_INFO_NULL) MPI_Info_free(&infos[i]);
  }
  free(commands);
  free(argvs);
  free(infos);
  free(errcodes);
  free_groups(&g);
  return rc;
}

int sched_mall_mpi_spawned(int* spawned) {
  mall_mpi_clear();
  if (!spawned) return mall_mpi_fail(SCHED_MALL_EINVAL, "sched_mall_mpi_spawned: spawned is NULL");
  MPI_Comm parent = MPI_COMM_NULL;
  const int rc = mall_mpi_check(MPI_Comm_get_parent(&parent), "MPI_Comm_get_parent");
  *spawned = rc == SCHED_MALL_OK && parent != MPI_COMM_NULL;
  return rc;
}

int sched_mall_mpi_join(MPI_Comm* merged, int* old_size) {
  mall_mpi_clear();
  if (!merged) return mall_mpi_fail(SCHED_MALL_EINVAL, "sched_mall_mpi_join: merged is NULL");
  *merged = MPI_COMM_NULL;
  MPI_Comm parent = MPI_COMM_NULL;
  int rc = mall_mpi_check(MPI_Comm_get_parent(&parent), "MPI_Comm_get_parent");
  if (rc != SCHED_MALL_OK) return rc;
  if (parent == MPI_COMM_NULL)
    return mall_mpi_fail(SCHED_MALL_ENOTPENDING,
                         "sched_mall_mpi_join: this process was not spawned (or joined already)");
  int parents = 0;
  rc = mall_mpi_check(MPI_Comm_remote_size(parent, &parents), "MPI_Comm_remote_size");
  /* The spawned processes are the high group: after the old ones. */
  if (rc == SCHED_MALL_OK)
    rc = mall_mpi_check(MPI_Intercomm_merge(parent, 1, merged), "MPI_Intercomm_merge");
  /* Disconnected, the parent handle reads MPI_COMM_NULL from now on. */
  if (rc == SCHED_MALL_OK) rc = mall_mpi_check(MPI_Comm_disconnect(&parent), "MPI_Comm_disconnect");
  if (rc == SCHED_MALL_OK && old_size) *old_size = parents;
  return rc;
}

int sched_mall_mpi_shrink(MPI_Comm comm, int leaving, MPI_Comm* shrunk) {
  mall_mpi_clear();
  if (!shrunk) return mall_mpi_fail(SCHED_MALL_EINVAL, "sched_mall_mpi_shrink: shrunk is NULL");
  *shrunk = MPI_COMM_NULL;
  int rank = 0, staying = 0;
  const int stays = leaving ? 0 : 1;
  int rc = mall_mpi_check(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  if (rc == SCHED_MALL_OK)
    rc =
        mall_mpi_check(MPI_Allreduce(&stays, &staying, 1, MPI_INT, MPI_SUM, comm), "MPI_Allreduce");
  if (rc != SCHED_MALL_OK) return rc;
  if (staying == 0)
    return mall_mpi_fail(SCHED_MALL_EINVAL, "sched_mall_mpi_shrink: every process would leave");
  /* Keyed by the old rank: those who stay keep their order. */
  return mall_mpi_check(MPI_Comm_split(comm, leaving ? MPI_UNDEFINED : 0, rank, shrunk),
                        "MPI_Comm_split");
}

/* Malleable MPI (issue 16 item 3, docs/malleable.md "MPI applications"):
 * turns an adaptation into MPI communicators. An expansion spawns the new
 * processes (MPI_Comm_spawn) and merges them with the old ones into a new
 * working communicator; a shrink splits off the leaving processes; a helper
 * moves block-distributed rows from the old layout to the new one.
 *
 * One library per MPI, since each MPI has its own ABI:
 * libsched-malleable-mpi-mpich and libsched-malleable-mpi-openmpi (pkg-config
 * sched-malleable-mpi-mpich / -openmpi); it links that MPI and
 * libsched-malleable. A program that does not include this header links no
 * MPI.
 *
 * Two levels:
 *
 * 1. The mechanics, usable alone (no sched session, e.g. under mpirun):
 *
 *      MPI_Comm work = MPI_COMM_WORLD, next;
 *      int spawned = 0;
 *      sched_mall_mpi_spawned(&spawned);
 *      if (spawned) sched_mall_mpi_join(&work);    // a process an expansion started
 *      ...
 *      sched_mall_mpi_expand(work, 4, hosts, NULL, argv + 1, &next);   // grow to 4
 *      sched_mall_mpi_redistribute_rows(next, ...);                  // move the data
 *      ...
 *      sched_mall_mpi_redistribute_rows(work, ...);                  // hand over, then
 *      sched_mall_mpi_shrink(work, i_leave, &next);                  // shrink
 *
 *    Ranks: an expansion keeps the old processes' ranks (0..n-1) and gives
 *    the new ones n..m-1 in the order of `hosts`; a shrink closes up the
 *    processes that stay, in their old order. The communicator passed in
 *    stays the caller's (MPI_Comm_free it when done, unless it is
 *    MPI_COMM_WORLD: MPI_Comm_disconnect of a merged communicator hangs in
 *    Debian's Open MPI 4.1, in its PMIx fence); the one returned is new.
 *
 * 2. Driven by a sched session (sched/malleable.h): the adaptation's sizes,
 *    ranks and who leaves come from sched_mall_adapt_begin; the placement of
 *    the new processes from the hosts the caller passes (see "Scheduler
 *    side" below for what is still missing):
 *
 *      sched_mall_probe_all(m, &pending);
 *      if (pending) {
 *        sched_mall_mpi_adaptation a;
 *        if (sched_mall_mpi_adapt_begin(m, work, NULL, NULL, argv + 1, &a) == 0) {
 *          sched_mall_mpi_redistribute_rows(a.window, rows, ..., a.base.old_size,
 *                                           a.base.old_rank, old, a.base.new_size,
 *                                           a.base.new_rank, new);
 *          sched_mall_mpi_adapt_commit(m, &a, &work);
 *          if (a.base.leaving) finish;     // work is MPI_COMM_NULL
 *        }
 *      }
 *    and a spawned process: sched_mall_init (status NEW), then
 *    sched_mall_mpi_adapt_join(m, &a), redistribute, sched_mall_mpi_adapt_commit.
 *
 * The launcher is not this library's business: MPI_Comm_spawn goes to
 * whatever started the program (mpirun's daemons, hydra, or sched's PMIx /
 * PMI servers), and the "host" info key (which both Open MPI and MPICH read)
 * says where. The layer never starts a process itself.
 *
 * Scheduler side (not built yet: docs/malleable.md "MPI applications"). For a
 * step whose application spawns its own processes, an expansion must differ
 * from today's (protocol.md §8) in three ways: the agents of the added nodes
 * do not start the new processes (the application's MPI_Comm_spawn does,
 * through the step's PMIx / PMI server), so the window opens when the old
 * processes are in; proc.adapt_begin's reply names the node of each new
 * rank, for the "host" key; a spawned process's sched_mall_init is answered
 * "new" with its new rank. A job says so with a step option (proposed:
 * `sched run --mall-spawn=mpi`). A shrink needs one change: MPI_Finalize
 * fences (PMI / PMIx) over the first MPI_COMM_WORLD, leaving ranks included,
 * so the step's fences must still span the nodes that left (today schedd
 * refuses them and the step hangs in MPI_Finalize).
 *
 * Every function is collective over the communicator it names, returns 0
 * (SCHED_MALL_OK) or a negative SCHED_MALL_E* code, and leaves the reason,
 * for people, in sched_mall_mpi_error(). Errors inside MPI calls follow the
 * communicator's error handler (MPI_ERRORS_ARE_FATAL by default: they abort
 * before this library sees them); with MPI_ERRORS_RETURN they come back as
 * SCHED_MALL_ECOMM with MPI's message.
 */
#ifndef SCHED_MALLEABLE_MPI_H
#define SCHED_MALLEABLE_MPI_H

#include <mpi.h>

#include "sched/malleable.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- The mechanics (no session) ---- */

/* Grows the processes of comm (size n) to new_size > n. Collective over
 * comm. The new processes run `command` (NULL: this program, read from
 * /proc/self/exe) with the arguments argv (a NULL-terminated list without
 * the program's name; NULL for none); hosts, when not NULL, holds
 * new_size - n host names, the host of new rank n + i at index i (NULL
 * entries or hosts NULL: the launcher places them). Only comm's rank 0's
 * command, argv and hosts count. On success *merged is the new working
 * communicator: old ranks unchanged, new ranks after them. The spawned
 * processes call sched_mall_mpi_join. */
SCHED_MALL_API int sched_mall_mpi_expand(MPI_Comm comm, int new_size, const char* const* hosts,
                                         const char* command, char* const* argv, MPI_Comm* merged);

/* *spawned = 1 when this process was started by an expansion and has not
 * joined yet (it has an MPI parent), else 0. Call after MPI_Init. */
SCHED_MALL_API int sched_mall_mpi_spawned(int* spawned);

/* In a spawned process: the other half of sched_mall_mpi_expand (collective
 * with it). On success *merged is the working communicator (this process's
 * rank is its new rank) and *old_size (may be NULL) the number of processes
 * before the expansion. SCHED_MALL_ENOTPENDING when this process has no
 * parent. */
SCHED_MALL_API int sched_mall_mpi_join(MPI_Comm* merged, int* old_size);

/* Shrinks comm: every process calls it, the leaving ones with leaving = 1.
 * Collective over comm. On success *shrunk is the communicator of the
 * processes that stay, closed up in their old order, and MPI_COMM_NULL in a
 * leaving process. Hand the data over before (sched_mall_mpi_redistribute_
 * rows on comm). A leaving process then disconnects: it frees its
 * communicators and calls MPI_Finalize. MPI_Finalize is collective over
 * the processes still connected to it (MPI's rule), so a leaving process
 * that shares MPI_COMM_WORLD with staying ones may wait there until they
 * finalize too; processes an expansion spawned, leaving together, do not.
 * SCHED_MALL_EINVAL when every process would leave. */
SCHED_MALL_API int sched_mall_mpi_shrink(MPI_Comm comm, int leaving, MPI_Comm* shrunk);

/* ---- Block-distributed data ---- */

/* Block p of `parts` over n items: the first n % parts blocks have one item
 * more (the layout of examples/heat). begin is its first item, count its
 * length. */
SCHED_MALL_API long sched_mall_mpi_block_begin(long n, int parts, int part);
SCHED_MALL_API long sched_mall_mpi_block_count(long n, int parts, int part);

/* Moves `rows` rows of row_len elements of `type`, distributed in blocks
 * over old_parts processes, to blocks over new_parts processes, with one
 * MPI_Alltoallv over comm (which holds both sets: the merged communicator of
 * an expansion, the old one of a shrink). Each process gives its old block
 * number (-1: it had none, a new process) with its rows at old_data, and
 * its new block number (-1: it leaves) with room for its new rows at
 * new_data (sched_mall_mpi_block_count rows). Every block of both layouts
 * must be held by exactly one process. old_data and new_data must not
 * overlap. Collective over comm. */
SCHED_MALL_API int sched_mall_mpi_redistribute_rows(MPI_Comm comm, long rows, int row_len,
                                                    MPI_Datatype type, int old_parts, int old_part,
                                                    const void* old_data, int new_parts,
                                                    int new_part, void* new_data);

/* ---- Driven by a sched session ---- */

typedef struct {
  sched_mall_adaptation base; /* sizes, ranks, leaving: from the session */
  MPI_Comm window;            /* both sets: redistribute over it */
  MPI_Comm next;              /* the working communicator after the commit */
} sched_mall_mpi_adaptation;

/* In an old process, after probe / probe_all said an adaptation waits:
 * sched_mall_adapt_begin, then for an expansion sched_mall_mpi_expand of
 * comm with hosts, command and argv as there (window = next = the merged
 * communicator), for a shrink window = comm. Collective over comm.
 * hosts NULL: the nodes the scheduler names for the new ranks
 * (sched_mall_adapt_host; a step run with `sched run --mall-spawn=mpi`),
 * else the launcher's choice. An expansion also tells the session every
 * process's data endpoint over the merged communicator
 * (sched_mall_adapt_set_endpoint), as sched_mall_mpi_adapt_join does.
 * SCHED_MALL_EABORTED (nothing changed) as sched_mall_adapt_begin;
 * SCHED_MALL_EPROTO when the session's sizes do not match comm's. */
SCHED_MALL_API int sched_mall_mpi_adapt_begin(sched_mall* m, MPI_Comm comm,
                                              const char* const* hosts, const char* command,
                                              char* const* argv, sched_mall_mpi_adaptation* out);

/* In a spawned process whose sched_mall_init said SCHED_MALL_NEW:
 * sched_mall_mpi_join, then sched_mall_adapt_begin. */
SCHED_MALL_API int sched_mall_mpi_adapt_join(sched_mall* m, sched_mall_mpi_adaptation* out);

/* After the redistribution: for a shrink sched_mall_mpi_shrink of the
 * window, then sched_mall_adapt_commit. *comm becomes the working
 * communicator (MPI_COMM_NULL in a leaving process); the old one stays the
 * caller's. */
SCHED_MALL_API int sched_mall_mpi_adapt_commit(sched_mall* m, sched_mall_mpi_adaptation* a,
                                               MPI_Comm* comm);

/* Why the last call of this thread failed ("" when it succeeded). */
SCHED_MALL_API const char* sched_mall_mpi_error(void);

#ifdef __cplusplus
}
#endif

#endif /* SCHED_MALLEABLE_MPI_H */

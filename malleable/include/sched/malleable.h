/* The application side of malleability (docs/design.md §6): the routines of iMPI for
 * a program started by `sched run`. Pure C; the C++ wrapper is
 * sched/malleable.hpp.
 *
 *   sched_mall* m;
 *   sched_mall_status status;
 *   if (sched_mall_init(&m, &status) != 0) {
 *     fprintf(stderr, "%s\n", sched_mall_last_init_error());
 *     return 1;
 *   }
 *   for (step = 0; step < steps; ++step) {
 *     ... compute, exchange with sched_mall_send / sched_mall_recv ...
 *     sched_mall_report_phase(m, comm_seconds, compute_seconds);
 *     int pending = 0;
 *     if (sched_mall_probe(m, &pending) == 0 && pending) {
 *       sched_mall_adaptation a;
 *       sched_mall_adapt_begin(m, &a);
 *       ... redistribute the data ...
 *       sched_mall_adapt_commit(m);
 *       if (a.leaving) break;
 *     }
 *   }
 *   sched_mall_finalize(m);
 *
 * Every function returns 0 (SCHED_MALL_OK) or a negative SCHED_MALL_E* code
 * and never aborts; sched_mall_error() says what went wrong, for people. A
 * handle is used by one thread at a time.
 *
 * Environment. `sched run` gives each process SCHED_JOB_ID, SCHED_STEP_ID,
 * SCHED_PROCID (its rank), SCHED_NTASKS and SCHED_AGENT_ENDPOINT (its node
 * agent's local endpoint). The library also reads:
 *   SCHED_MALL_TIMEOUT_MS    how long any wait lasts (agent replies, a peer's
 *                            endpoint, send on a full queue, recv); default
 *                            30000.
 *   SCHED_MALL_BIND          where this process receives data from its peers:
 *                            a host address peers can reach ("10.0.0.5"; a
 *                            free port is chosen) or a full ZeroMQ endpoint;
 *                            default tcp://127.0.0.1 (single node only).
 *   SCHED_MALL_RENDEZVOUS_DIR  a folder shared by the step's processes, used
 *                            to find peers (below) until the agent says.
 *
 * Data exchange. Each process binds its own receiving socket at init and
 * tells the agent where (proc.init). sched_mall_send queues a copy of the
 * data for the peer and returns without waiting for it to be received (it
 * waits only when the peer's queue is full); messages still queued at
 * finalize are delivered first, for up to the timeout. sched_mall_recv(from)
 * returns the next message from that rank: between two processes messages
 * arrive in the order they were sent, and messages from other ranks that
 * arrive meanwhile are kept for later calls. A process may send to itself.
 * Peers' endpoints: with SCHED_MALL_RENDEZVOUS_DIR, each process writes
 * "<job> <step> <endpoint>" to <dir>/rank-<R> at init, and the first send to
 * rank R reads that file, waiting for it up to the timeout (files of another
 * job or step are stale and ignored). Without it, sending fails with
 * SCHED_MALL_ENOPEER until the agent hands out the step's endpoints.
 *
 * Adaptations (docs/design.md §6). When the scheduler grows or shrinks the job, the
 * node agents tell the processes of the job's running step: an existing
 * process learns of it at sched_mall_probe; a process an expansion starts
 * gets SCHED_MALL_NEW from init and calls sched_mall_adapt_begin directly.
 * Every process of the old and the new set calls adapt_begin, which waits
 * until all of them have (the window opens for all at once), then
 * redistributes its data and calls adapt_commit. Between the two, send and
 * recv name peers by their rank in the window: an old process keeps its old
 * rank, and sched_mall_adapt_window_rank gives the window rank of the
 * process that will have a given new rank (for an expansion the new
 * processes follow the old ones; for a shrink the processes on the nodes
 * that leave drop out and the others close up in order). An adaptation is
 * never both a shrink and an expansion. After commit, rank and size give
 * the new values and send/recv use new ranks. A leaving process finalizes
 * after its commit and exits.
 * probe is per process: the agents' notices reach the processes at slightly
 * different times, so one process may enter adapt_begin (and wait there)
 * while a peer that has not seen the notice yet waits for a message from
 * it. Programs that exchange data between probes should use probe_all, a
 * collective probe that gives every process the same answer (or agree on
 * adapting their own way).
 * adapt_begin fails with SCHED_MALL_EABORTED when the scheduler rolled the
 * adaptation back before the window opened (a process that did not come in
 * time, a lost node): nothing changed, carry on with the old set. It waits
 * for the window up to SCHED_MALL_TIMEOUT_MS, which should exceed the
 * scheduler's adaptation timeout (adapt_timeout_s, 20 s by default).
 */
#ifndef SCHED_MALLEABLE_H
#define SCHED_MALLEABLE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define SCHED_MALL_API __attribute__((visibility("default")))
#else
#define SCHED_MALL_API
#endif

/* Result codes: 0 or one of these. */
#define SCHED_MALL_OK 0
#define SCHED_MALL_EENV (-1)        /* not inside a sched step, or a bad variable */
#define SCHED_MALL_ENOAGENT (-2)    /* the node agent cannot be reached */
#define SCHED_MALL_EPROTO (-3)      /* the agent refused or answered nonsense */
#define SCHED_MALL_ETIMEDOUT (-4)   /* no answer, peer or message within the timeout */
#define SCHED_MALL_EINVAL (-5)      /* a bad argument (null pointer, rank out of range) */
#define SCHED_MALL_ENOTPENDING (-6) /* no adaptation pending, or none begun */
#define SCHED_MALL_ENOPEER (-7)     /* a peer's endpoint is not known */
#define SCHED_MALL_ECOMM (-8)       /* the data sockets failed (bind, connect) */
#define SCHED_MALL_ENOMEM (-9)
#define SCHED_MALL_EINTERNAL (-10) /* a bug in the library */
#define SCHED_MALL_EABORTED (-11)  /* the adaptation was rolled back: nothing changed */

typedef struct sched_mall sched_mall; /* one per process */

typedef enum {
  SCHED_MALL_EXISTING = 0, /* started with the step */
  SCHED_MALL_NEW = 1       /* started by an expansion: call adapt_begin next */
} sched_mall_status;

/* One adaptation as this process sees it. */
typedef struct {
  int old_size, new_size; /* processes before and after */
  int old_rank;           /* -1 for a new process */
  int new_rank;           /* -1 for a leaving process */
  int leaving;            /* 1: finalize after adapt_commit */
} sched_mall_adaptation;

/* Reads the environment, binds the data socket, connects to the agent and
 * sends proc.init; waits for its reply. On success *out is the handle (free
 * it with sched_mall_finalize) and *status (may be NULL) says whether the
 * process is new. On failure *out is NULL and sched_mall_last_init_error()
 * says why. */
SCHED_MALL_API int sched_mall_init(sched_mall** out, sched_mall_status* status);

/* This process's rank and the number of processes (-1 for a NULL handle). */
SCHED_MALL_API int sched_mall_rank(const sched_mall* m);
SCHED_MALL_API int sched_mall_size(const sched_mall* m);

/* Sets *pending to 1 when an adaptation waits for this process, else 0.
 * Does not block. */
SCHED_MALL_API int sched_mall_probe(sched_mall* m, int* pending);

/* Collective: every process of the current set calls it at the same point
 * of the program. Sets *pending to 1 on all of them when an adaptation waits
 * for any, else 0 on all; a process told 1 whose own notice has not come
 * yet waits for it (SCHED_MALL_ETIMEDOUT after the timeout). After a 1,
 * every process calls adapt_begin (which may still return
 * SCHED_MALL_EABORTED). SCHED_MALL_EINVAL in a window and in a process an
 * expansion started (it calls adapt_begin directly). */
SCHED_MALL_API int sched_mall_probe_all(sched_mall* m, int* pending);

/* Enters the adaptation window (see above) and describes it in *out.
 * SCHED_MALL_ENOTPENDING when no adaptation waits. */
SCHED_MALL_API int sched_mall_adapt_begin(sched_mall* m, sched_mall_adaptation* out);

/* During the window: *window_rank is the window rank of the process that
 * will have rank new_rank after the commit. SCHED_MALL_ENOTPENDING outside
 * a window, SCHED_MALL_EINVAL when new_rank is not one of the new set. */
SCHED_MALL_API int sched_mall_adapt_window_rank(const sched_mall* m, int new_rank,
                                                int* window_rank);

/* A job of an invasive partition resized by cores (issue 20 item 2): from
 * adapt_begin on, *node_cores is how many cores the job has on this
 * process's node after the adaptation and *job_cores how many in all (the
 * process's CPU affinity already covers them when it grows, and is narrowed
 * after adapt_commit when it shrinks). Both 0 before any adaptation by cores
 * (a job of whole nodes, or one not resized yet). Either pointer may be NULL. */
SCHED_MALL_API int sched_mall_cores(const sched_mall* m, int* node_cores, int* job_cores);
/* ---- MPI expansions (a step run with `sched run --mall-spawn=mpi`): the
 * program spawns the new processes itself once the window is open (the MPI
 * layer, sched/malleable_mpi.h, does it with these).
 *
 * During the window: *host is the node where window rank window_rank runs
 * or must be spawned, NULL when the scheduler does not say (its agents
 * start the new processes). SCHED_MALL_ENOTPENDING outside a window,
 * SCHED_MALL_EINVAL for a rank outside it. */
SCHED_MALL_API int sched_mall_adapt_host(const sched_mall* m, int window_rank, const char** host);

/* Where this process receives its peers' data (valid while m lives). */
SCHED_MALL_API const char* sched_mall_endpoint(const sched_mall* m);

/* During the window: window rank window_rank receives at endpoint. The
 * processes a program spawned start after the window opened, so the others
 * learn their endpoints from the program (the MPI layer: over the merged
 * communicator). SCHED_MALL_ENOTPENDING outside a window. */
SCHED_MALL_API int sched_mall_adapt_set_endpoint(sched_mall* m, int window_rank,
                                                 const char* endpoint);

/* Leaves the window: the data is where the new process set needs it.
 * SCHED_MALL_ENOTPENDING when no window is open. */
SCHED_MALL_API int sched_mall_adapt_commit(sched_mall* m);

/* Tells the agent about one phase of the application (proc.phase), for the
 * scheduler's MTCT = communication / computation. Times are seconds, finite
 * and not negative. Does not wait for anything. */
SCHED_MALL_API int sched_mall_report_phase(sched_mall* m, double comm_seconds,
                                           double compute_seconds);

/* ---- Evolving requests (docs/malleable.md): an evolving job's application
 * asks to grow or shrink. Only evolving jobs (--kind evolving) may ask; the
 * scheduler's policy decides when (the bundled elastic policy serves
 * requests first in each pass).
 *
 * sched_mall_request sends the request through the node agent to the
 * scheduler and returns as soon as the scheduler took it (or refused it),
 * without waiting for the grant: *request is this handle's number for it.
 * sched_mall_request_status then says where it stands; the answer comes by
 * itself (any call on the handle reads it; request_status and probe do
 * without waiting):
 *   PENDING  taken, waiting for nodes (or for the policy);
 *   GRANTED  the adaptation to info.nodes has begun: it arrives as any
 *            adaptation does (probe, adapt_begin, adapt_commit);
 *   REFUSED  info.code and info.message say why ("invalid": outside the
 *            job's bounds or constraint, or not an evolving job;
 *            "conflict": not running, not a change, or replaced by a later
 *            request: a job has one request at a time);
 *   EXPIRED  not granted within the timeout: dropped.
 * The timeout is SCHED_MALL_REQUEST_TIMEOUT_S seconds (default: the
 * scheduler's, 300; at most a day). A request a schedd restart finds
 * pending is dropped (a resize.expired event; this process is not told).
 * Any rank may ask; usually one does. */
#define SCHED_MALL_GROW 1
#define SCHED_MALL_SHRINK 2

typedef enum {
  SCHED_MALL_REQUEST_PENDING = 0,
  SCHED_MALL_REQUEST_GRANTED = 1,
  SCHED_MALL_REQUEST_REFUSED = 2,
  SCHED_MALL_REQUEST_EXPIRED = 3
} sched_mall_request_state;

typedef struct {
  sched_mall_request_state state;
  int nodes;               /* granted: the size the adaptation goes to; else the size asked */
  const char* code;        /* refused/expired: a wire error code ("invalid"); else "" */
  const char* message;     /* for people; "" when none */
} sched_mall_request_info; /* strings valid until the next call on the handle */

/* op: SCHED_MALL_GROW or SCHED_MALL_SHRINK; nodes: the size asked for
 * (bigger than the job's size for GROW, smaller for SHRINK, else the
 * request is refused); reason: for people, may be NULL. SCHED_MALL_EINVAL
 * for a bad op, nodes < 1 or a NULL request; SCHED_MALL_EPROTO when the
 * agent could not pass it on (not registered: ask again later). */
SCHED_MALL_API int sched_mall_request(sched_mall* m, int op, int nodes, const char* reason,
                                      int* request);

/* Where request `request` (from sched_mall_request) stands. Does not block.
 * SCHED_MALL_EINVAL for a number this handle did not give. */
SCHED_MALL_API int sched_mall_request_status(sched_mall* m, int request,
                                             sched_mall_request_info* info);

/* The name of a request state ("GRANTED"; "unknown" for others). */
SCHED_MALL_API const char* sched_mall_request_state_name(int state);

/* Sends a copy of size bytes at data (NULL allowed when size is 0) to rank
 * to_rank. */
SCHED_MALL_API int sched_mall_send(sched_mall* m, int to_rank, const void* data, size_t size);

/* Receives the next message from rank from_rank, waiting up to the timeout.
 * On success *data is a new buffer (never NULL, even for 0 bytes) that the
 * caller frees with sched_mall_free, and *size its length. On
 * SCHED_MALL_ETIMEDOUT nothing is lost: a later call gets the message. */
SCHED_MALL_API int sched_mall_recv(sched_mall* m, int from_rank, void** data, size_t* size);

/* Frees a buffer from sched_mall_recv (NULL is fine). */
SCHED_MALL_API void sched_mall_free(void* data);

/* Sends proc.finalize and waits for its reply, delivers queued data, closes
 * and frees the handle, whatever the result (the handle is gone after the
 * call; on failure sched_mall_last_init_error() says why). */
SCHED_MALL_API int sched_mall_finalize(sched_mall* m);

/* Why the last call on this handle failed, for people ("" when it
 * succeeded); valid until the next call on the handle. With NULL:
 * sched_mall_last_init_error(). */
SCHED_MALL_API const char* sched_mall_error(const sched_mall* m);

/* Why the last sched_mall_init or sched_mall_finalize of this thread
 * failed ("" when none). */
SCHED_MALL_API const char* sched_mall_last_init_error(void);

/* The name of a result code ("SCHED_MALL_ETIMEDOUT"; "unknown" for others). */
SCHED_MALL_API const char* sched_mall_strerror(int code);

#ifdef __cplusplus
}
#endif

#endif /* SCHED_MALLEABLE_H */

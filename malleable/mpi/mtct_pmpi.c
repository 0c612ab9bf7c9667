/* MTCT measured in MPI calls (issue 16 item 3, docs/malleable.md "MPI"): a
 * PMPI profiling library for an MPI program that does not report its phases
 * itself. It times the program's blocking and collective MPI calls; every
 * SCHED_MALL_MTCT_INTERVAL_S seconds (default 1) and at MPI_Finalize it tells the
 * node agent, through libsched-malleable, the time spent inside MPI
 * (communication) and the rest (computation): the scheduler's MTCT.
 *
 * Linked before the MPI library, or preloaded (LD_PRELOAD) into a program of
 * the same MPI: one build per MPI (libsched-mpi-mtct-mpich,
 * libsched-mpi-mtct-openmpi), since an MPI's ABI is its own. Outside `sched
 * run` (no agent) it measures nothing and changes nothing. Not for a program
 * that opens its own sched_mall handle (it would be a second one for the
 * same rank). Calls from several threads at once are timed as one. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "sched/malleable.h"

static sched_mall* handle;
static double interval_s = 1.0;
static double last_report_s;
static double in_mpi_s; /* inside MPI since the last report */
static int depth;       /* a call made while another is timed counts once */

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void report(double now) {
  double compute = (now - last_report_s) - in_mpi_s;
  if (compute < 0) compute = 0;
  sched_mall_report_phase(handle, in_mpi_s, compute);
  in_mpi_s = 0;
  last_report_s = now;
}

static double enter(void) { return depth++ == 0 && handle ? now_s() : 0; }

static void leave(double start) {
  if (--depth > 0 || !handle) return;
  const double now = now_s();
  in_mpi_s += now - start;
  if (now - last_report_s >= interval_s) report(now);
}

static void start_measuring(void) {
  const char* interval = getenv("SCHED_MALL_MTCT_INTERVAL_S");
  if (interval) {
    const double value = atof(interval);
    if (value > 0) interval_s = value;
  }
  /* Only under `sched run`: elsewhere there is no agent to tell. */
  if (!getenv("SCHED_AGENT_ENDPOINT")) return;
  sched_mall_status status;
  if (sched_mall_init(&handle, &status) != SCHED_MALL_OK) {
    fprintf(stderr, "sched-mpi-mtct: no MTCT for this rank: %s\n", sched_mall_last_init_error());
    handle = NULL;
    return;
  }
  last_report_s = now_s();
}

static void stop_measuring(void) {
  if (!handle) return;
  report(now_s());
  sched_mall_finalize(handle);
  handle = NULL;
}

#define TIMED(call)             \
  do {                          \
    const double t0_ = enter(); \
    const int rc_ = (call);     \
    leave(t0_);                 \
    return rc_;                 \
  } while (0)

int MPI_Init(int* argc, char*** argv) {
  const int rc = PMPI_Init(argc, argv);
  if (rc == MPI_SUCCESS) start_measuring();
  return rc;
}

int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  const int rc = PMPI_Init_thread(argc, argv, required, provided);
  if (rc == MPI_SUCCESS) start_measuring();
  return rc;
}

int MPI_Finalize(void) {
  stop_measuring();
  return PMPI_Finalize();
}

int MPI_Send(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  TIMED(PMPI_Send(buf, count, type, dest, tag, comm));
}

int MPI_Recv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
             MPI_Status* status) {
  TIMED(PMPI_Recv(buf, count, type, source, tag, comm, status));
}

int MPI_Isend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
              MPI_Request* request) {
  TIMED(PMPI_Isend(buf, count, type, dest, tag, comm, request));
}

int MPI_Irecv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
              MPI_Request* request) {
  TIMED(PMPI_Irecv(buf, count, type, source, tag, comm, request));
}

int MPI_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                 void* recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                 MPI_Comm comm, MPI_Status* status) {
  TIMED(PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype,
                      source, recvtag, comm, status));
}

int MPI_Wait(MPI_Request* request, MPI_Status* status) { TIMED(PMPI_Wait(request, status)); }

int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
  TIMED(PMPI_Waitall(count, requests, statuses));
}

int MPI_Waitany(int count, MPI_Request requests[], int* index, MPI_Status* status) {
  TIMED(PMPI_Waitany(count, requests, index, status));
}

int MPI_Barrier(MPI_Comm comm) { TIMED(PMPI_Barrier(comm)); }

int MPI_Bcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  TIMED(PMPI_Bcast(buf, count, type, root, comm));
}

int MPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
               int root, MPI_Comm comm) {
  TIMED(PMPI_Reduce(sendbuf, recvbuf, count, type, op, root, comm));
}

int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op,
                  MPI_Comm comm) {
  TIMED(PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm));
}

int MPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
               int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  TIMED(PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm));
}

int MPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  TIMED(PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm));
}

int MPI_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
  TIMED(PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm));
}

int MPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  TIMED(PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm));
}

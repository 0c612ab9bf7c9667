/* The heat solver of heat_mpi.c made malleable with the MPI layer
 * (sched/malleable_mpi.h, docs/malleable.md "MPI applications"): on an
 * expansion the processes spawn the new ones and merge with them, on a
 * shrink the leaving ones hand over their rows and leave; the grid rows move
 * to the new block layout each time. It writes the same grid as heat_mpi
 * (and heat) bit for bit, whatever the sizes it went through.
 *
 *   heat_mpi_malleable [--nx N] [--ny N] [--iters N] [--out FILE] [--sleep-ms MS]
 *                      [--probe-every K] [--plan PLAN] [--host HOST]
 *                      [--hold ITER:N] [--window-ms MS]
 *
 * Who decides the sizes:
 * - under `sched run` (SCHED_AGENT_ENDPOINT set) the scheduler: every K
 *   iterations the processes report MTCT and ask (sched_mall_probe_all),
 *   and an adaptation goes through sched_mall_mpi_adapt_begin / _commit.
 *   An expansion needs `sched run --mpi=pmix --mall-spawn=mpi`: the
 *   processes spawn the new ones on the nodes the scheduler names.
 *   --hold ITER:N stops computing at iteration ITER (probing on) until N
 *   adaptations are done, so that a test or benchmark sees them whatever the
 *   machine's speed; --window-ms MS waits that long in each window (tests
 *   of failures during an adaptation). Neither changes the grid.
 * - elsewhere (mpirun, mpiexec) the plan: "ITER:SIZE[:R+R...],..." resizes
 *   to SIZE after iteration ITER; a shrink's leaving ranks are the R listed
 *   (default: the highest). The new processes of an expansion go on --host
 *   (default: the launcher's choice). This is what the tests run.
 * Under sched, --host (up to 64 new processes) replaces the nodes the
 * scheduler names: a spawn elsewhere is refused (a test of that check). */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sched/malleable_mpi.h"

#define TOP_TEMPERATURE 100.0
#define MAX_PLAN 32

typedef struct {
  long iter;
  int size;
  unsigned long leave; /* bit r: rank r leaves (0: the highest ranks) */
} resize_step;

typedef struct {
  long nx, ny, iters, sleep_ms, probe_every;
  const char* out;
  const char* host;
  resize_step plan[MAX_PLAN];
  int plan_steps;
  long hold_iter, hold_adaptations, window_ms;
} options;

/* This process's part: rows [begin, begin + rows) of the grid, with a halo
 * row above and below in cur and next. */
typedef struct {
  MPI_Comm work;
  int rank, size;
  long iter, begin, rows;
  double *cur, *next;
  long adaptations; /* done so far (a spawned process learns the count) */
} state;

static void fail(const char* what, int rc) {
  fprintf(stderr, "heat_mpi_malleable: %s: %s (%s)\n", what, sched_mall_strerror(rc),
          sched_mall_mpi_error());
  MPI_Abort(MPI_COMM_WORLD, 1);
}

static void* xcalloc(size_t count, size_t size) {
  void* p = calloc(count ? count : 1, size);
  if (!p) fail("calloc", SCHED_MALL_ENOMEM);
  return p;
}

static void usage(void) {
  fprintf(stderr,
          "usage: heat_mpi_malleable [--nx N] [--ny N] [--iters N] [--out FILE] [--sleep-ms MS]\n"
          "                          [--probe-every K] [--plan ITER:SIZE[:R+R...],...] [--host H]\n"
          "                          [--hold ITER:N] [--window-ms MS]\n");
  exit(2);
}

static long parse_long(const char* text, long min, char** end) {
  const long v = strtol(text, end, 10);
  if (*end == text || v < min) usage();
  return v;
}

static void parse_plan(options* o, const char* text) {
  char* end = (char*)text;
  while (*end) {
    if (o->plan_steps == MAX_PLAN) usage();
    resize_step* s = &o->plan[o->plan_steps++];
    s->iter = parse_long(end, 1, &end);
    if (*end != ':') usage();
    s->size = (int)parse_long(end + 1, 1, &end);
    s->leave = 0;
    if (*end == ':') {
      do {
        const long r = parse_long(end + 1, 0, &end);
        if (r >= 63) usage();
        s->leave |= 1UL << r;
      } while (*end == '+');
    }
    if (*end == ',')
      ++end;
    else if (*end)
      usage();
  }
}

static options parse_options(int argc, char** argv) {
  options o = {256, 256, 4000, 0, 10, NULL, NULL, {{0, 0, 0}}, 0, 0, 0, 0};
  const struct {
    const char* name;
    long* value;
    long min;
  } flags[] = {{"--nx", &o.nx, 3},
               {"--ny", &o.ny, 3},
               {"--iters", &o.iters, 0},
               {"--sleep-ms", &o.sleep_ms, 0},
               {"--probe-every", &o.probe_every, 1},
               {"--window-ms", &o.window_ms, 0}};
  if (argc % 2 != 1) usage();
  for (int i = 1; i + 1 < argc; i += 2) {
    int ok = 1;
    if (strcmp(argv[i], "--out") == 0)
      o.out = argv[i + 1];
    else if (strcmp(argv[i], "--host") == 0)
      o.host = argv[i + 1];
    else if (strcmp(argv[i], "--plan") == 0)
      parse_plan(&o, argv[i + 1]);
    else if (strcmp(argv[i], "--hold") == 0) {
      char* end = NULL;
      o.hold_iter = parse_long(argv[i + 1], 1, &end);
      if (*end != ':') usage();
      o.hold_adaptations = parse_long(end + 1, 1, &end);
      if (*end) usage();
    } else
      ok = 0;
    for (size_t f = 0; f < sizeof flags / sizeof flags[0] && !ok; ++f) {
      if (strcmp(argv[i], flags[f].name) != 0) continue;
      char* end = NULL;
      *flags[f].value = parse_long(argv[i + 1], flags[f].min, &end);
      ok = *end == '\0';
    }
    if (!ok) usage();
  }
  return o;
}

static void sleep_ms(long ms) {
  if (ms <= 0) return;
  struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&t, NULL);
}

/* Takes comm as the working communicator and rows of the new layout from
 * `rows` (already redistributed); next starts as a copy, so the fixed cells
 * are in both. */
static void adopt(state* s, const options* o, MPI_Comm comm, double* rows) {
  MPI_Comm_rank(comm, &s->rank);
  MPI_Comm_size(comm, &s->size);
  s->work = comm;
  s->begin = sched_mall_mpi_block_begin(o->ny, s->size, s->rank);
  s->rows = sched_mall_mpi_block_count(o->ny, s->size, s->rank);
  const size_t cells = (size_t)(s->rows + 2) * (size_t)o->nx;
  free(s->cur);
  free(s->next);
  s->cur = rows;
  s->next = xcalloc(cells, sizeof(double));
  memcpy(s->next, s->cur, cells * sizeof(double));
}

/* The old block (rows only, past the halo) to the new one, over `window`. */
static double* move_rows(const state* s, const options* o, MPI_Comm window, int old_size,
                         int old_rank, int new_size, int new_rank) {
  const long rows = new_rank >= 0 ? sched_mall_mpi_block_count(o->ny, new_size, new_rank) : 0;
  double* moved = xcalloc((size_t)(rows + 2) * (size_t)o->nx, sizeof(double));
  const int rc = sched_mall_mpi_redistribute_rows(window, o->ny, (int)o->nx, MPI_DOUBLE, old_size,
                                                  old_rank, old_rank >= 0 ? s->cur + o->nx : NULL,
                                                  new_size, new_rank, moved + o->nx);
  if (rc != SCHED_MALL_OK) fail("redistribute", rc);
  return moved;
}

static void release(MPI_Comm* comm) {
  if (*comm != MPI_COMM_WORLD && *comm != MPI_COMM_NULL) MPI_Comm_free(comm);
}

/* A resize from the plan; returns 0 when this process left. */
static int planned_resize(state* s, const options* o, const resize_step* step, char** args) {
  const int old_size = s->size, old_rank = s->rank;
  MPI_Comm next = MPI_COMM_NULL;
  if (step->size > old_size) {
    const char** hosts = xcalloc((size_t)(step->size - old_size), sizeof(char*));
    for (int i = 0; i < step->size - old_size; ++i) hosts[i] = o->host;
    const int rc = sched_mall_mpi_expand(s->work, step->size, hosts, NULL, args, &next);
    free(hosts);
    if (rc != SCHED_MALL_OK) fail("expand", rc);
    long progress[2] = {s->iter, s->adaptations + 1}; /* the new processes pick up here */
    MPI_Bcast(progress, 2, MPI_LONG, 0, next);
    double* moved = move_rows(s, o, next, old_size, old_rank, step->size, old_rank);
    release(&s->work);
    adopt(s, o, next, moved);
    return 1;
  }
  const int leaving = step->leave ? (int)((step->leave >> old_rank) & 1) : old_rank >= step->size;
  /* The new rank: the ones staying, closed up in order. */
  int new_rank = -1, before = 0;
  for (int r = 0; r <= old_rank; ++r) {
    const int r_leaves = step->leave ? (int)((step->leave >> r) & 1) : r >= step->size;
    if (r == old_rank) new_rank = leaving ? -1 : before;
    before += !r_leaves;
  }
  double* moved = move_rows(s, o, s->work, old_size, old_rank, step->size, new_rank);
  const int rc = sched_mall_mpi_shrink(s->work, leaving, &next);
  if (rc != SCHED_MALL_OK) fail("shrink", rc);
  release(&s->work);
  if (leaving) {
    free(moved);
    return 0;
  }
  adopt(s, o, next, moved);
  return 1;
}

/* An adaptation the scheduler decided; returns 0 when this process left. */
static int sched_resize(state* s, const options* o, sched_mall* m, char** args) {
  sched_mall_mpi_adaptation a;
  /* --host overrides the scheduler's placement (the spawn is then refused
   * unless it names the very nodes: what the tests check). */
  const char* hosts[64]; /* --host: up to 64 new processes */
  const int n_hosts = (int)(sizeof hosts / sizeof hosts[0]);
  for (int i = 0; i < n_hosts; ++i) hosts[i] = o->host;
  int rc = sched_mall_mpi_adapt_begin(m, s->work, o->host ? hosts : NULL, NULL, args, &a);
  if (rc == SCHED_MALL_EABORTED) return 1; /* rolled back: nothing changed */
  if (rc != SCHED_MALL_OK) fail("adapt_begin", rc);
  sleep_ms(o->window_ms);
  if (a.base.new_size > a.base.old_size) {
    long progress[2] = {s->iter, s->adaptations + 1}; /* this one counts */
    MPI_Bcast(progress, 2, MPI_LONG, 0, a.window);
  }
  double* moved =
      move_rows(s, o, a.window, a.base.old_size, a.base.old_rank, a.base.new_size, a.base.new_rank);
  MPI_Comm next = MPI_COMM_NULL;
  rc = sched_mall_mpi_adapt_commit(m, &a, &next);
  if (rc != SCHED_MALL_OK) fail("adapt_commit", rc);
  release(&s->work);
  if (a.base.leaving) {
    free(moved);
    return 0;
  }
  adopt(s, o, next, moved);
  return 1;
}

/* A process an expansion spawned: join, learn the iteration, get its rows. */
static void join(state* s, const options* o, sched_mall* m) {
  MPI_Comm merged = MPI_COMM_NULL;
  int old_size = 0, rc = SCHED_MALL_OK;
  sched_mall_mpi_adaptation a;
  if (m) {
    rc = sched_mall_mpi_adapt_join(m, &a);
    merged = a.next;
    old_size = a.base.old_size;
  } else {
    rc = sched_mall_mpi_join(&merged, &old_size);
  }
  if (rc != SCHED_MALL_OK) fail("join", rc);
  long progress[2] = {0, 0};
  MPI_Bcast(progress, 2, MPI_LONG, 0, merged);
  s->iter = progress[0];
  s->adaptations = progress[1];
  int rank = 0, size = 0;
  MPI_Comm_rank(merged, &rank);
  MPI_Comm_size(merged, &size);
  double* moved = move_rows(s, o, merged, old_size, -1, size, rank);
  if (m) {
    rc = sched_mall_mpi_adapt_commit(m, &a, &merged);
    if (rc != SCHED_MALL_OK) fail("adapt_commit", rc);
  }
  adopt(s, o, merged, moved);
}

static void iterate(state* s, const options* o) {
  const long nx = o->nx, rows = s->rows;
  double *cur = s->cur, *next = s->next;
  const int up = s->rank > 0 ? s->rank - 1 : MPI_PROC_NULL;
  const int down = s->rank < s->size - 1 ? s->rank + 1 : MPI_PROC_NULL;
  MPI_Sendrecv(cur + nx, (int)nx, MPI_DOUBLE, up, 0, cur + (rows + 1) * nx, (int)nx, MPI_DOUBLE,
               down, 0, s->work, MPI_STATUS_IGNORE);
  MPI_Sendrecv(cur + rows * nx, (int)nx, MPI_DOUBLE, down, 1, cur, (int)nx, MPI_DOUBLE, up, 1,
               s->work, MPI_STATUS_IGNORE);
  for (long i = 1; i <= rows; ++i) {
    const long g = s->begin + i - 1;
    if (g == 0 || g == o->ny - 1) continue; /* fixed boundary rows */
    for (long j = 1; j < nx - 1; ++j)
      next[i * nx + j] = 0.25 * (cur[(i - 1) * nx + j] + cur[(i + 1) * nx + j] +
                                 cur[i * nx + j - 1] + cur[i * nx + j + 1]);
  }
  s->cur = next;
  s->next = cur;
  ++s->iter;
}

/* How long a resize took, as the new rank 0 saw it (the bench figure). */
static void report_resize(const state* s, int from, double seconds, int here) {
  if (here && s->rank == 0) {
    printf("heat_mpi_malleable: resized %d -> %d after iteration %ld in %.3f s\n", from, s->size,
           s->iter, seconds);
    fflush(stdout); /* seen while the run goes on, whatever stdout is */
  }
}

/* Rank 0 gathers the blocks and writes the grid as heat_mpi does. */
static int write_grid(const state* s, const options* o, int adaptations, double seconds) {
  int* counts = xcalloc((size_t)s->size, sizeof(int));
  int* displs = xcalloc((size_t)s->size, sizeof(int));
  for (int r = 0; r < s->size; ++r) {
    counts[r] = (int)(sched_mall_mpi_block_count(o->ny, s->size, r) * o->nx);
    displs[r] = (int)(sched_mall_mpi_block_begin(o->ny, s->size, r) * o->nx);
  }
  double* grid = s->rank == 0 ? xcalloc((size_t)(o->ny * o->nx), sizeof(double)) : NULL;
  MPI_Gatherv(s->cur + o->nx, (int)(s->rows * o->nx), MPI_DOUBLE, grid, counts, displs, MPI_DOUBLE,
              0, s->work);
  int status = 0;
  if (s->rank == 0) {
    double sum = 0;
    for (long k = 0; k < o->ny * o->nx; ++k) sum += grid[k];
    FILE* f = o->out ? fopen(o->out, "w") : NULL;
    for (long i = 0; f && i < o->ny; ++i) {
      for (long j = 0; j < o->nx; ++j)
        fprintf(f, j + 1 < o->nx ? "%.17g " : "%.17g\n", grid[i * o->nx + j]);
    }
    if (o->out && (!f || fclose(f) != 0)) {
      fprintf(stderr, "heat_mpi_malleable: cannot write %s\n", o->out);
      status = 1;
    }
    printf(
        "heat_mpi_malleable: %ld iterations on %ldx%ld, %d ranks at the end, %d adaptations, "
        "checksum %.17g, %.2f s\n",
        o->iters, o->nx, o->ny, s->size, adaptations, sum, seconds);
    fflush(stdout);
  }
  free(grid);
  free(counts);
  free(displs);
  return status;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const double started = MPI_Wtime();
  const options o = parse_options(argc, argv);
  char** args = argv + 1; /* the new processes get the same options */
  sched_mall* m = NULL;
  sched_mall_status status = SCHED_MALL_EXISTING;
  if (getenv("SCHED_AGENT_ENDPOINT") && sched_mall_init(&m, &status) != SCHED_MALL_OK) {
    fprintf(stderr, "heat_mpi_malleable: %s\n", sched_mall_last_init_error());
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  int spawned = 0, rc = sched_mall_mpi_spawned(&spawned);
  if (rc != SCHED_MALL_OK) fail("spawned", rc);
  state s = {MPI_COMM_WORLD, 0, 1, 0, 0, 0, NULL, NULL, 0};
  if (spawned) {
    join(&s, &o, m);
  } else {
    MPI_Comm_rank(MPI_COMM_WORLD, &s.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &s.size);
    s.begin = sched_mall_mpi_block_begin(o.ny, s.size, s.rank);
    s.rows = sched_mall_mpi_block_count(o.ny, s.size, s.rank);
    s.cur = xcalloc((size_t)(s.rows + 2) * (size_t)o.nx, sizeof(double));
    s.next = xcalloc((size_t)(s.rows + 2) * (size_t)o.nx, sizeof(double));
    if (s.begin == 0) {
      for (long j = 0; j < o.nx; ++j) s.cur[o.nx + j] = s.next[o.nx + j] = TOP_TEMPERATURE;
    }
  }
  if (o.ny < s.size) {
    if (s.rank == 0)
      fprintf(stderr, "heat_mpi_malleable: %d ranks but only %ld rows\n", s.size, o.ny);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  int here = 1;
  double phase_start = MPI_Wtime(), compute_s = 0;
  while (here && s.iter < o.iters) {
    /* --hold: every process has the same iteration and count, so all
     * hold (and probe) together. */
    const int holding = m && s.iter == o.hold_iter && s.adaptations < o.hold_adaptations;
    if (!holding) {
      const double t0 = MPI_Wtime();
      iterate(&s, &o);
      compute_s += MPI_Wtime() - t0;
    }
    sleep_ms(holding && o.sleep_ms < 10 ? 10 : o.sleep_ms);
    if (m && (holding || s.iter % o.probe_every == 0) && s.iter < o.iters) {
      /* Time in the loop outside the stencil counts as communication. */
      if (!holding) { /* a hold computes nothing: no phase to report */
        const double total = MPI_Wtime() - phase_start;
        sched_mall_report_phase(m, total > compute_s ? total - compute_s : 0, compute_s);
      }
      phase_start = MPI_Wtime();
      compute_s = 0;
      int pending = 0;
      rc = sched_mall_probe_all(m, &pending);
      if (rc != SCHED_MALL_OK) fail("probe_all", rc);
      if (pending) {
        const double t = MPI_Wtime();
        const int from = s.size;
        here = sched_resize(&s, &o, m, args);
        ++s.adaptations;
        report_resize(&s, from, MPI_Wtime() - t, here);
      }
    }
    for (int k = 0; !m && k < o.plan_steps; ++k) {
      if (o.plan[k].iter != s.iter || o.plan[k].size == s.size) continue;
      const double t = MPI_Wtime();
      const int from = s.size;
      here = planned_resize(&s, &o, &o.plan[k], args);
      ++s.adaptations;
      report_resize(&s, from, MPI_Wtime() - t, here);
      break;
    }
  }
  int result = 0;
  if (here) result = write_grid(&s, &o, (int)s.adaptations, MPI_Wtime() - started);
  release(&s.work);
  free(s.cur);
  free(s.next);
  if (m) sched_mall_finalize(m);
  MPI_Finalize();
  return result;
}

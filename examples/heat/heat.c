/* A malleable 2D heat solver: Jacobi iterations on an NX x NY grid whose
 * edges hold fixed temperatures (the top edge 100, the others 0). The rows
 * are split over the job's processes in consecutive blocks; each iteration
 * exchanges the block's edge rows with the neighbours, updates the interior
 * and reports its communication and computation times (MTCT, docs/design.md §6).
 * Every K iterations the processes ask whether the scheduler resizes the
 * job and, when it does, hand the rows over to the new process set.
 *
 *   heat [--nx N] [--ny N] [--iters N] [--out FILE] [--probe-every K]
 *        [--sleep-ms MS]
 *
 * Run it as a step: `sched run -n 4 heat --nx 256 --ny 256 --iters 4000
 * --out grid.txt`. Each cell is always computed from the same values in the
 * same order, so the grid does not depend on how many processes there were
 * nor on when the set changed: compare files with diff. */
#define _POSIX_C_SOURCE 200809L

#include <sched/malleable.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TOP_TEMPERATURE 100.0

typedef struct {
  long nx, ny, iters, probe_every, sleep_ms;
  const char* out;
} options;

/* What a process holds: rows [row_begin, row_begin + rows) of the grid, with
 * one halo row above and one below (rows + 2 rows of nx cells). */
typedef struct {
  sched_mall* m;
  int rank, size;
  long iter, adaptations;
  long row_begin, rows;
  double *cur, *next;
  double started; /* when this process began, for the summary */
} state;

/* What travels with a block of rows (redistribution and final gather). The
 * iteration and adaptation counts let a new process pick up where the old
 * set stands. */
typedef struct {
  int64_t iter, adaptations, nx, ny, row_begin, rows;
} block_header;

static const options* opt; /* set once in main, read everywhere */

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void die(const char* what) {
  fprintf(stderr, "heat: %s\n", what);
  exit(1);
}

/* Any library error ends the run: a solver with a missing block is wrong. */
static void check(sched_mall* m, int rc, const char* what) {
  if (rc == SCHED_MALL_OK) return;
  fprintf(stderr, "heat: %s failed: %s: %s\n", what, sched_mall_strerror(rc), sched_mall_error(m));
  exit(1);
}

static void* xcalloc(size_t count, size_t size) {
  void* p = calloc(count ? count : 1, size);
  if (!p) die("out of memory");
  return p;
}

/* Rows [block_begin, +block_rows) belong to rank r of p: consecutive blocks,
 * rank 0 first, sizes differing by at most one. */
static long block_begin(long n, int p, int r) { return r * (n / p) + (r < n % p ? r : n % p); }
static long block_rows(long n, int p, int r) { return n / p + (r < n % p ? 1 : 0); }

/* The fixed value of a boundary cell; interior cells start at 0. */
static double initial_value(long row, long col) {
  (void)col;
  return row == 0 ? TOP_TEMPERATURE : 0.0;
}

static long parse_long(const char* flag, const char* text, long min) {
  char* end = NULL;
  const long v = text ? strtol(text, &end, 10) : 0;
  if (!text || *end != '\0' || v < min) {
    fprintf(stderr, "heat: %s needs a number >= %ld\n", flag, min);
    exit(2);
  }
  return v;
}

static options parse_options(int argc, char** argv) {
  options o = {256, 256, 4000, 10, 0, NULL};
  const struct {
    const char* name;
    long* value;
    long min;
  } flags[] = {{"--nx", &o.nx, 3},
               {"--ny", &o.ny, 3},
               {"--iters", &o.iters, 0},
               {"--probe-every", &o.probe_every, 1},
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
    fprintf(stderr,
            "usage: heat [--nx N] [--ny N] [--iters N] [--out FILE] [--probe-every K] "
            "[--sleep-ms MS]\n");
    exit(2);
  }
  return o;
}

static double* row_ptr(double* grid, long local_row) { return grid + local_row * opt->nx; }

/* Every process must hold a row for the halo exchange to make sense. */
static void check_size(int processes) {
  if (opt->ny >= processes) return;
  fprintf(stderr, "heat: %d processes but only %ld rows: --ny must be at least the size\n",
          processes, opt->ny);
  exit(1);
}

/* Takes rows [row_begin, +rows) for this process, both buffers filled with
 * the same values so the fixed boundary cells hold in either. */
static void set_block(state* s, long row_begin, long rows) {
  free(s->cur);
  free(s->next);
  s->row_begin = row_begin;
  s->rows = rows;
  s->cur = xcalloc((size_t)(rows + 2) * (size_t)opt->nx, sizeof(double));
  s->next = xcalloc((size_t)(rows + 2) * (size_t)opt->nx, sizeof(double));
}

static void init_block(state* s) {
  set_block(s, block_begin(opt->ny, s->size, s->rank), block_rows(opt->ny, s->size, s->rank));
  for (long i = 0; i < s->rows; ++i) {
    for (long j = 0; j < opt->nx; ++j) {
      const double v = initial_value(s->row_begin + i, j);
      row_ptr(s->cur, i + 1)[j] = v;
      row_ptr(s->next, i + 1)[j] = v;
    }
  }
}

/* Sends my first row up and my last row down, then fills the halo rows from
 * the neighbours (sends do not wait, so the order cannot deadlock). */
static void exchange_halos(state* s) {
  const size_t row_bytes = (size_t)opt->nx * sizeof(double);
  if (s->rank > 0)
    check(s->m, sched_mall_send(s->m, s->rank - 1, row_ptr(s->cur, 1), row_bytes), "send");
  if (s->rank < s->size - 1)
    check(s->m, sched_mall_send(s->m, s->rank + 1, row_ptr(s->cur, s->rows), row_bytes), "send");
  for (int side = 0; side < 2; ++side) {
    const int peer = side == 0 ? s->rank - 1 : s->rank + 1;
    if (peer < 0 || peer >= s->size) continue;
    void* data = NULL;
    size_t size = 0;
    check(s->m, sched_mall_recv(s->m, peer, &data, &size), "recv");
    if (size != row_bytes) die("a halo row has the wrong size");
    memcpy(row_ptr(s->cur, side == 0 ? 0 : s->rows + 1), data, row_bytes);
    sched_mall_free(data);
  }
}

/* One Jacobi sweep over the interior cells of my block; boundary cells are
 * never written, so they keep their fixed values in both buffers. */
static void jacobi(state* s) {
  for (long i = 1; i <= s->rows; ++i) {
    const long g = s->row_begin + i - 1;
    if (g == 0 || g == opt->ny - 1) continue;
    const double* up = row_ptr(s->cur, i - 1);
    const double* mid = row_ptr(s->cur, i);
    const double* down = row_ptr(s->cur, i + 1);
    double* out = row_ptr(s->next, i);
    for (long j = 1; j < opt->nx - 1; ++j)
      out[j] = 0.25 * (up[j] + down[j] + mid[j - 1] + mid[j + 1]);
  }
  double* t = s->cur;
  s->cur = s->next;
  s->next = t;
}

static void sleep_ms(long ms) {
  if (ms <= 0) return;
  struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&t, NULL);
}

/* A message of header + rows [begin, +rows) of my block. */
static void send_rows(state* s, int to, long begin, long rows) {
  const size_t row_bytes = (size_t)opt->nx * sizeof(double);
  const size_t size = sizeof(block_header) + (size_t)rows * row_bytes;
  unsigned char* buf = xcalloc(size, 1);
  const block_header h = {s->iter, s->adaptations, opt->nx, opt->ny, begin, rows};
  memcpy(buf, &h, sizeof h);
  if (rows > 0) memcpy(buf + sizeof h, row_ptr(s->cur, begin - s->row_begin + 1), rows * row_bytes);
  check(s->m, sched_mall_send(s->m, to, buf, size), "send");
  free(buf);
}

/* Receives one header + rows message; the rows go to *rows_out (freed by
 * the caller with sched_mall_free via *raw). */
static block_header recv_rows(state* s, int from, void** raw, const double** rows_out) {
  size_t size = 0;
  check(s->m, sched_mall_recv(s->m, from, raw, &size), "recv");
  block_header h;
  if (size < sizeof h) die("a block message is too short");
  memcpy(&h, *raw, sizeof h);
  if (h.nx != opt->nx || h.ny != opt->ny || h.rows < 0 ||
      size != sizeof h + (size_t)h.rows * (size_t)opt->nx * sizeof(double))
    die("a block message does not match this grid (different --nx/--ny?)");
  *rows_out = (const double*)((unsigned char*)*raw + sizeof h);
  return h;
}

/* Old side of the hand-over: every process of the new set gets the part of
 * my block that falls into its new block (maybe none, sent anyway so that
 * every receiver expects exactly one message from each old rank). */
static void send_old_block(state* s, const sched_mall_adaptation* a) {
  for (int q = 0; q < a->new_size; ++q) {
    int w = -1;
    check(s->m, sched_mall_adapt_window_rank(s->m, q, &w), "adapt_window_rank");
    const long b = block_begin(opt->ny, a->new_size, q);
    const long e = b + block_rows(opt->ny, a->new_size, q);
    const long lo = b > s->row_begin ? b : s->row_begin;
    const long hi = e < s->row_begin + s->rows ? e : s->row_begin + s->rows;
    send_rows(s, w, lo, hi > lo ? hi - lo : 0);
  }
}

/* New side: one message from each old rank (window rank = old rank). The
 * counters come with every message; all old processes agree on them. */
static void recv_new_block(state* s, const sched_mall_adaptation* a) {
  const long begin = block_begin(opt->ny, a->new_size, a->new_rank);
  const long rows = block_rows(opt->ny, a->new_size, a->new_rank);
  double* cur = xcalloc((size_t)(rows + 2) * (size_t)opt->nx, sizeof(double));
  long covered = 0;
  for (int r = 0; r < a->old_size; ++r) {
    void* raw = NULL;
    const double* data = NULL;
    const block_header h = recv_rows(s, r, &raw, &data);
    if (r == 0) {
      s->iter = h.iter;
      s->adaptations = h.adaptations;
    } else if (h.iter != s->iter) {
      die("old processes disagree on the iteration");
    }
    if (h.rows > 0 && (h.row_begin < begin || h.row_begin + h.rows > begin + rows))
      die("received rows outside my new block");
    if (h.rows > 0)
      memcpy(row_ptr(cur, h.row_begin - begin + 1), data,
             (size_t)h.rows * (size_t)opt->nx * sizeof(double));
    covered += h.rows;
    sched_mall_free(raw);
  }
  if (covered != rows) die("the received rows do not cover my new block");
  set_block(s, begin, rows);
  memcpy(s->cur, cur, (size_t)(rows + 2) * (size_t)opt->nx * sizeof(double));
  memcpy(s->next, cur, (size_t)(rows + 2) * (size_t)opt->nx * sizeof(double));
  free(cur);
}

typedef enum { ADAPT_STAY, ADAPT_LEAVE, ADAPT_ABORTED } adapt_result;

/* Enters the window and hands the rows over. */
static adapt_result adapt(state* s) {
  sched_mall_adaptation a;
  const int rc = sched_mall_adapt_begin(s->m, &a);
  if (rc == SCHED_MALL_EABORTED) return ADAPT_ABORTED; /* nothing changed */
  check(s->m, rc, "adapt_begin");
  check_size(a.new_size); /* every process of the window stops at once */
  if (a.old_rank >= 0) send_old_block(s, &a);
  if (a.new_rank >= 0) recv_new_block(s, &a);
  check(s->m, sched_mall_adapt_commit(s->m), "adapt_commit");
  s->adaptations++;
  if (a.leaving) return ADAPT_LEAVE;
  s->rank = sched_mall_rank(s->m);
  s->size = sched_mall_size(s->m);
  if (s->rank != a.new_rank || s->size != a.new_size)
    die("rank or size differ from the adaptation");
  return ADAPT_STAY;
}

/* Do all processes adapt now? A notice may reach the processes at
 * different probes, and a process that went on to the halo exchange while
 * the others wait in adapt_begin would stall them all: the collective probe
 * gives every process the same answer. */
static int agree_pending(state* s) {
  int pending = 0;
  check(s->m, sched_mall_probe_all(s->m, &pending), "probe_all");
  return pending;
}

/* Rank 0 collects every block and writes the grid, one row per line. */
static void gather_and_write(state* s) {
  if (s->rank != 0) {
    send_rows(s, 0, s->row_begin, s->rows);
    return;
  }
  double* grid = xcalloc((size_t)opt->ny * (size_t)opt->nx, sizeof(double));
  memcpy(grid, row_ptr(s->cur, 1), (size_t)s->rows * (size_t)opt->nx * sizeof(double));
  for (int r = 1; r < s->size; ++r) {
    void* raw = NULL;
    const double* data = NULL;
    const block_header h = recv_rows(s, r, &raw, &data);
    memcpy(grid + h.row_begin * opt->nx, data, (size_t)h.rows * (size_t)opt->nx * sizeof(double));
    sched_mall_free(raw);
  }
  double sum = 0;
  for (long k = 0; k < opt->ny * opt->nx; ++k) sum += grid[k];
  if (opt->out) {
    FILE* f = fopen(opt->out, "w");
    if (!f) die("cannot open the --out file");
    for (long i = 0; i < opt->ny; ++i) {
      for (long j = 0; j < opt->nx; ++j)
        fprintf(f, j + 1 < opt->nx ? "%.17g " : "%.17g\n", grid[i * opt->nx + j]);
    }
    if (fclose(f) != 0) die("cannot write the --out file");
  }
  printf(
      "heat: %ld iterations on %ldx%ld, final size %d, %ld adaptations, checksum %.17g, "
      "%.2f s\n",
      s->iter, opt->nx, opt->ny, s->size, s->adaptations, sum, now_s() - s->started);
  free(grid);
}

/* Iterates to the end; returns 1 when this process left the job early. */
static int run(state* s) {
  double comm = 0, compute = 0;
  while (s->iter < opt->iters) {
    const double t0 = now_s();
    exchange_halos(s);
    const double t1 = now_s();
    jacobi(s);
    sleep_ms(opt->sleep_ms);
    const double t2 = now_s();
    comm += t1 - t0;
    compute += t2 - t1;
    s->iter++;
    /* Reporting every K iterations keeps the agent's traffic small. */
    if (s->iter % opt->probe_every == 0 || s->iter == opt->iters) {
      check(s->m, sched_mall_report_phase(s->m, comm, compute), "report_phase");
      comm = compute = 0;
    }
    if (s->iter % opt->probe_every == 0 && s->iter < opt->iters && agree_pending(s) &&
        adapt(s) == ADAPT_LEAVE)
      return 1;
  }
  return 0;
}

int main(int argc, char** argv) {
  const options o = parse_options(argc, argv);
  opt = &o;
  state s;
  memset(&s, 0, sizeof s);
  sched_mall_status status;
  if (sched_mall_init(&s.m, &status) != 0) {
    fprintf(stderr, "heat: %s\n", sched_mall_last_init_error());
    return 1;
  }
  s.started = now_s();
  s.rank = sched_mall_rank(s.m);
  s.size = sched_mall_size(s.m);
  int left = 0;
  if (status == SCHED_MALL_NEW) {
    /* Started by an expansion: no rows yet, they come in the window. When
     * the expansion was rolled back this process is not part of the job. */
    const adapt_result r = adapt(&s);
    if (r == ADAPT_LEAVE) die("a new process was told to leave");
    if (r == ADAPT_ABORTED) {
      fprintf(stderr, "heat: the expansion that started this process was rolled back\n");
      left = 1;
    }
  } else {
    check_size(s.size);
    init_block(&s);
  }
  if (!left) left = run(&s);
  if (!left) gather_and_write(&s);
  free(s.cur);
  free(s.next);
  if (sched_mall_finalize(s.m) != 0) {
    fprintf(stderr, "heat: finalize failed: %s\n", sched_mall_last_init_error());
    return 1;
  }
  return 0;
}

/* A malleable Monte-Carlo estimate of pi: draws points in the unit square
 * and counts those inside the quarter circle. The samples are drawn in
 * chunks; each chunk is cut into a fixed number of blocks, each with its own
 * seed from (seed, chunk, block), and the blocks are shared out among the
 * current processes. The count is thus the same on any number of processes
 * and across resizes: the estimate is reproducible bit for bit. After each
 * chunk rank 0 sums the counts, and the processes ask whether the scheduler
 * resizes the job (docs/design.md §6); the state to hand over is only the chunk
 * counter and rank 0's running totals.
 *
 *   pi [--samples N] [--chunks C] [--blocks B] [--seed S] [--out FILE]
 *      [--sleep-ms MS]
 *
 * Run it as a step: `sched run -n 4 pi --samples 100000000`. */
#define _POSIX_C_SOURCE 200809L

#include <sched/malleable.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
  uint64_t samples, chunks, blocks, seed, sleep_ms;
  const char* out;
} options;

typedef struct {
  sched_mall* m;
  int rank, size;
  uint64_t chunk;
  long adaptations;
  uint64_t hits, drawn; /* running totals, meaningful on rank 0 */
  double started;       /* when this process began, for the summary */
} state;

/* What old rank 0 hands to each process of the new set. */
typedef struct {
  int64_t adaptations;
  uint64_t chunk, hits, drawn, samples, seed;
} handover;

static const options* opt; /* set once in main, read everywhere */

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void sleep_ms(long ms) {
  if (ms <= 0) return;
  struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&t, NULL);
}

static void die(const char* what) {
  fprintf(stderr, "pi: %s\n", what);
  exit(1);
}

/* Any library error ends the run: a lost count would bias the estimate. */
static void check(sched_mall* m, int rc, const char* what) {
  if (rc == SCHED_MALL_OK) return;
  fprintf(stderr, "pi: %s failed: %s: %s\n", what, sched_mall_strerror(rc), sched_mall_error(m));
  exit(1);
}

static uint64_t parse_u64(const char* flag, const char* text, uint64_t min) {
  char* end = NULL;
  const unsigned long long v = text ? strtoull(text, &end, 10) : 0;
  if (!text || *text == '-' || *end != '\0' || v < min) {
    fprintf(stderr, "pi: %s needs a number >= %llu\n", flag, (unsigned long long)min);
    exit(2);
  }
  return (uint64_t)v;
}

static options parse_options(int argc, char** argv) {
  options o = {100000000u, 100, 64, 42, 0, NULL};
  const struct {
    const char* name;
    uint64_t* value;
    uint64_t min;
  } flags[] = {{"--samples", &o.samples, 1},
               {"--chunks", &o.chunks, 1},
               {"--blocks", &o.blocks, 1},
               {"--seed", &o.seed, 0},
               {"--sleep-ms", &o.sleep_ms, 0}};
  int ok = argc % 2 == 1; /* flags come in pairs */
  for (int i = 1; ok && i + 1 < argc; i += 2) {
    ok = strcmp(argv[i], "--out") == 0;
    if (ok) o.out = argv[i + 1];
    for (size_t f = 0; f < sizeof flags / sizeof flags[0] && !ok; ++f) {
      ok = strcmp(argv[i], flags[f].name) == 0;
      if (ok) *flags[f].value = parse_u64(argv[i], argv[i + 1], flags[f].min);
    }
  }
  if (!ok) {
    fprintf(stderr,
            "usage: pi [--samples N] [--chunks C] [--blocks B] [--seed S] [--out FILE] "
            "[--sleep-ms MS]\n");
    exit(2);
  }
  return o;
}

/* Part k of n things cut into p parts: consecutive, sizes differing by at
 * most one, part 0 first. */
static uint64_t part_begin(uint64_t n, uint64_t p, uint64_t k) {
  return k * (n / p) + (k < n % p ? k : n % p);
}
static uint64_t part_size(uint64_t n, uint64_t p, uint64_t k) { return n / p + (k < n % p); }

/* SplitMix64: small, fast, statistically sound for this use, and its state
 * is one number, so a block's stream is easy to derive from its seed. */
static uint64_t splitmix64(uint64_t* x) {
  uint64_t z = (*x += 0x9e3779b97f4a7c15u);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}

static double unit(uint64_t* x) { return (double)(splitmix64(x) >> 11) * 0x1.0p-53; }

/* Hits among one block's samples; its stream depends only on (seed, chunk,
 * block), never on which process draws it. */
static uint64_t draw_block(uint64_t chunk, uint64_t block, uint64_t n) {
  uint64_t x = opt->seed;
  x ^= splitmix64(&x) + chunk * 0xd1b54a32d192ed03u + block * 0x8cb92ba72f3d8dd7u;
  uint64_t hits = 0;
  for (uint64_t i = 0; i < n; ++i) {
    const double px = unit(&x), py = unit(&x);
    hits += px * px + py * py < 1.0;
  }
  return hits;
}

/* My blocks of this chunk. */
static uint64_t draw_my_share(const state* s) {
  const uint64_t n = part_size(opt->samples, opt->chunks, s->chunk);
  const uint64_t b0 = part_begin(opt->blocks, (uint64_t)s->size, (uint64_t)s->rank);
  const uint64_t nb = part_size(opt->blocks, (uint64_t)s->size, (uint64_t)s->rank);
  uint64_t hits = 0;
  for (uint64_t b = b0; b < b0 + nb; ++b)
    hits += draw_block(s->chunk, b, part_size(n, opt->blocks, b));
  return hits;
}

/* The message every rank sends to rank 0 after a chunk. */
typedef struct {
  uint64_t hits, pending; /* no padding: the bytes go as they are */
} partial;

/* Rank 0 sums the chunk's hits and ORs everyone's probe answer, then tells
 * every process whether to adapt (a notice may reach the processes at
 * different chunks; all must enter the window together). Returns the
 * decision. */
static int collect(state* s, uint64_t hits, int pending) {
  const partial mine = {hits, (uint64_t)pending};
  unsigned char decision = (unsigned char)pending;
  if (s->rank != 0) {
    check(s->m, sched_mall_send(s->m, 0, &mine, sizeof mine), "send");
    void* data = NULL;
    size_t size = 0;
    check(s->m, sched_mall_recv(s->m, 0, &data, &size), "recv");
    if (size != 1) die("a decision message has the wrong size");
    decision = *(unsigned char*)data;
    sched_mall_free(data);
    return decision;
  }
  for (int r = 1; r < s->size; ++r) {
    void* data = NULL;
    size_t size = 0;
    check(s->m, sched_mall_recv(s->m, r, &data, &size), "recv");
    if (size != sizeof(partial)) die("a partial count has the wrong size");
    partial p;
    memcpy(&p, data, sizeof p);
    sched_mall_free(data);
    hits += p.hits;
    if (p.pending) decision = 1;
  }
  s->hits += hits;
  s->drawn += part_size(opt->samples, opt->chunks, s->chunk);
  for (int r = 1; r < s->size; ++r) check(s->m, sched_mall_send(s->m, r, &decision, 1), "send");
  return decision;
}

static long timeout_ms(void) {
  const char* t = getenv("SCHED_MALL_TIMEOUT_MS");
  return t && atol(t) > 0 ? atol(t) : 30000;
}

/* Told to adapt but my probe has not seen it yet: wait for it, up to the
 * library's timeout (meanwhile the others' adapt_begin is rolled back). */
static int await_pending(state* s, int pending) {
  const double deadline = now_s() + timeout_ms() / 1000.0;
  while (!pending && now_s() < deadline) {
    sleep_ms(5);
    check(s->m, sched_mall_probe(s->m, &pending), "probe");
  }
  return pending;
}

typedef enum { ADAPT_STAY, ADAPT_LEAVE, ADAPT_ABORTED } adapt_result;

/* Enters the window; old rank 0 hands the counters to each new process. */
static adapt_result adapt(state* s) {
  sched_mall_adaptation a;
  const int rc = sched_mall_adapt_begin(s->m, &a);
  if (rc == SCHED_MALL_EABORTED) return ADAPT_ABORTED; /* nothing changed */
  check(s->m, rc, "adapt_begin");
  if (a.old_rank == 0) {
    const handover h = {s->adaptations + 1, s->chunk, s->hits, s->drawn, opt->samples, opt->seed};
    for (int q = 0; q < a.new_size; ++q) {
      int w = -1;
      check(s->m, sched_mall_adapt_window_rank(s->m, q, &w), "adapt_window_rank");
      check(s->m, sched_mall_send(s->m, w, &h, sizeof h), "send");
    }
  }
  if (a.new_rank >= 0) {
    void* data = NULL;
    size_t size = 0;
    check(s->m, sched_mall_recv(s->m, 0, &data, &size), "recv");
    handover h;
    if (size != sizeof h) die("the hand-over message has the wrong size");
    memcpy(&h, data, sizeof h);
    sched_mall_free(data);
    if (h.samples != opt->samples || h.seed != opt->seed)
      die("the hand-over is for other --samples/--seed");
    s->chunk = h.chunk;
    s->adaptations = (long)h.adaptations;
    s->hits = a.new_rank == 0 ? h.hits : 0;
    s->drawn = a.new_rank == 0 ? h.drawn : 0;
  }
  check(s->m, sched_mall_adapt_commit(s->m), "adapt_commit");
  if (a.leaving) return ADAPT_LEAVE;
  s->rank = sched_mall_rank(s->m);
  s->size = sched_mall_size(s->m);
  if (s->rank != a.new_rank || s->size != a.new_size)
    die("rank or size differ from the adaptation");
  return ADAPT_STAY;
}

/* Draws every remaining chunk; returns 1 when this process left early. */
static int run(state* s) {
  while (s->chunk < opt->chunks) {
    const double t0 = now_s();
    const uint64_t hits = draw_my_share(s);
    sleep_ms((long)opt->sleep_ms);
    const double t1 = now_s();
    int pending = 0;
    check(s->m, sched_mall_probe(s->m, &pending), "probe");
    const int decision = collect(s, hits, pending);
    const double t2 = now_s();
    check(s->m, sched_mall_report_phase(s->m, t2 - t1, t1 - t0), "report_phase");
    s->chunk++;
    if (decision && s->chunk < opt->chunks && await_pending(s, pending)) {
      if (adapt(s) == ADAPT_LEAVE) return 1;
    }
  }
  return 0;
}

static void print_result(const state* s) {
  const double estimate = 4.0 * (double)s->hits / (double)s->drawn;
  printf(
      "pi: estimate %.17g from %llu samples (%llu inside) in %llu chunks, final size %d, %ld "
      "adaptations, error %.3g, %.2f s\n",
      estimate, (unsigned long long)s->drawn, (unsigned long long)s->hits,
      (unsigned long long)opt->chunks, s->size, s->adaptations, estimate - 3.14159265358979323846,
      now_s() - s->started);
  if (!opt->out) return;
  FILE* f = fopen(opt->out, "w");
  if (!f) die("cannot open the --out file");
  fprintf(f, "%llu %llu %.17g\n", (unsigned long long)s->drawn, (unsigned long long)s->hits,
          estimate);
  if (fclose(f) != 0) die("cannot write the --out file");
}

int main(int argc, char** argv) {
  const options o = parse_options(argc, argv);
  opt = &o;
  state s;
  memset(&s, 0, sizeof s);
  sched_mall_status status;
  if (sched_mall_init(&s.m, &status) != 0) {
    fprintf(stderr, "pi: %s\n", sched_mall_last_init_error());
    return 1;
  }
  s.started = now_s();
  s.rank = sched_mall_rank(s.m);
  s.size = sched_mall_size(s.m);
  int left = 0;
  if (status == SCHED_MALL_NEW) {
    /* Started by an expansion: the counters come in the window. When the
     * expansion was rolled back this process is not part of the job. */
    const adapt_result r = adapt(&s);
    if (r == ADAPT_LEAVE) die("a new process was told to leave");
    if (r == ADAPT_ABORTED) {
      fprintf(stderr, "pi: the expansion that started this process was rolled back\n");
      left = 1;
    }
  }
  if (!left) left = run(&s);
  if (!left && s.rank == 0) print_result(&s);
  if (sched_mall_finalize(s.m) != 0) {
    fprintf(stderr, "pi: finalize failed: %s\n", sched_mall_last_init_error());
    return 1;
  }
  return 0;
}

/* The adaptation benchmark's application (bench/adapt): a malleable program
 * that does nothing but follow the scheduler's expansions and shrinks, so
 * that the time of a step is the system's own cost (process start and stop,
 * the window's synchronisation), not the application's.
 *
 *   adapt_app [STOP_FILE [REPORT_FILE]]
 *
 * Run as a step, one process per node: `sched run adapt_app STOP_FILE`.
 * Rank 0 reports one application phase at start, so that the job has an
 * MTCT: the benchmark's policy waits for it before the first step.
 * Every process probes about once a millisecond. In each adaptation window
 * the old rank 0 sends a counter (the number of adaptations so far) to every
 * other process of the new set, which receives it; then all commit and the
 * leaving processes finalize and exit. The program ends when STOP_FILE
 * exists (or when it is killed). Rank 0 prints one line per adaptation, to
 * REPORT_FILE (appended) when given, else to its standard output:
 *   adapt_app: adaptation N expand|shrink OLD->NEW window W ms total T ms
 * (W: adapt_begin's wait for the window to open; T: from the probe that saw
 * the adaptation to the commit). */
#include <sched/malleable.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* Where rank 0 reports. */
static FILE* report;

static void sleep_1ms(void) {
  struct timespec t = {0, 1000000L};
  nanosleep(&t, NULL);
}

static int fail(const sched_mall* m, const char* what, int rc) {
  fprintf(stderr, "adapt_app[%d]: %s: %s: %s\n", sched_mall_rank(m), what, sched_mall_strerror(rc),
          sched_mall_error(m));
  return rc < 0 ? rc : -1;
}

/* What one adaptation did to this process. */
enum { STAY = 0, LEAVE = 1 };

/* One adaptation window, from adapt_begin to adapt_commit. `seen` is when
 * the adaptation was noticed (the probe, or init for a new process).
 * Returns STAY, LEAVE, or a negative error. */
static int adapt(sched_mall* m, long* counter, int is_new, double seen) {
  sched_mall_adaptation a;
  int rc = sched_mall_adapt_begin(m, &a);
  if (rc == SCHED_MALL_EABORTED) {
    /* Rolled back before the window opened: nothing changed. A process the
     * expansion started has no place in the old set. */
    if (sched_mall_rank(m) == 0 && !is_new) {
      fprintf(report, "adapt_app: adaptation rolled back\n");
      fflush(report);
    }
    return is_new ? LEAVE : STAY;
  }
  if (rc != 0) return fail(m, "adapt_begin", rc);
  const double opened = now_ms();
  /* My rank in the window: an old process keeps its old rank. */
  int me = a.old_rank;
  if (me < 0) {
    rc = sched_mall_adapt_window_rank(m, a.new_rank, &me);
    if (rc != 0) return fail(m, "adapt_window_rank", rc);
  }
  if (a.old_rank == 0) {
    const long next = *counter + 1;
    for (int r = 0; r < a.new_size; ++r) {
      int peer = 0;
      rc = sched_mall_adapt_window_rank(m, r, &peer);
      if (rc != 0) return fail(m, "adapt_window_rank", rc);
      if (peer == me) continue;
      rc = sched_mall_send(m, peer, &next, sizeof next);
      if (rc != 0) return fail(m, "send", rc);
    }
    *counter = next;
  } else if (a.new_rank >= 0) {
    void* data = NULL;
    size_t size = 0;
    rc = sched_mall_recv(m, 0, &data, &size);
    if (rc != 0) return fail(m, "recv", rc);
    if (size == sizeof *counter) memcpy(counter, data, sizeof *counter);
    sched_mall_free(data);
  }
  rc = sched_mall_adapt_commit(m);
  if (rc != 0) return fail(m, "adapt_commit", rc);
  if (a.old_rank == 0) {
    fprintf(report, "adapt_app: adaptation %ld %s %d->%d window %.3f ms total %.3f ms\n", *counter,
            a.new_size > a.old_size ? "expand" : "shrink", a.old_size, a.new_size, opened - seen,
            now_ms() - seen);
    fflush(report);
  }
  return a.leaving ? LEAVE : STAY;
}

int main(int argc, char** argv) {
  const char* stop_file = argc > 1 ? argv[1] : NULL;
  report = stdout;
  if (argc > 2) {
    report = fopen(argv[2], "a");
    if (!report) {
      perror(argv[2]);
      return 1;
    }
  }
  sched_mall* m = NULL;
  sched_mall_status status = SCHED_MALL_EXISTING;
  if (sched_mall_init(&m, &status) != 0) {
    fprintf(stderr, "adapt_app: %s\n", sched_mall_last_init_error());
    return 1;
  }
  long counter = 0;
  int result = STAY;
  /* A first phase tells the scheduler (the job's MTCT) that the step runs:
   * the benchmark's policy starts the steps then. */
  if (status == SCHED_MALL_EXISTING && sched_mall_rank(m) == 0 &&
      sched_mall_report_phase(m, 0.0, 1e-3) != 0) {
    fprintf(stderr, "adapt_app: report_phase: %s\n", sched_mall_error(m));
  }
  if (status == SCHED_MALL_NEW) result = adapt(m, &counter, 1, now_ms());
  while (result == STAY) {
    if (stop_file && access(stop_file, F_OK) == 0) break;
    int pending = 0;
    const int rc = sched_mall_probe(m, &pending);
    if (rc != 0) {
      result = fail(m, "probe", rc);
    } else if (pending) {
      result = adapt(m, &counter, 0, now_ms());
    } else {
      sleep_1ms();
    }
  }
  if (result == STAY && sched_mall_rank(m) == 0) {
    fprintf(report, "adapt_app: done after %ld adaptations on %d processes\n", counter,
            sched_mall_size(m));
    fflush(report);
  }
  if (sched_mall_finalize(m) != 0) {
    fprintf(stderr, "adapt_app: finalize: %s\n", sched_mall_last_init_error());
    return 1;
  }
  return result < 0 ? 1 : 0;
}

/* A malleable test program for the integration tests: it holds no data and
 * only follows adaptations, probing at a chosen pace.
 *
 *   mall_probe PROBE_MS STOP_FILE
 *
 * PROBE_MS: probe every this many milliseconds; 0 never probes (the process
 * never reaches an adaptation window). Ends when STOP_FILE exists. Writes
 * its pid to $MALL_PROBE_PIDS (appended) when set, so a test can find every
 * process it started. Rank 0 prints "start on N" once initialised, the new
 * set's rank 0 "resized OLD->NEW" after each adaptation, and rank 0 "done on
 * N" at the end; any failure goes to stderr
 * with the library's message, and the exit status is 1. */
#include <sched/malleable.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static void pause_ms(long ms) {
  struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&t, NULL);
}

static int failed(sched_mall* m, const char* call, int rc) {
  fprintf(stderr, "mall_probe: %s: %s: %s\n", call, sched_mall_strerror(rc), sched_mall_error(m));
  return -1;
}

/* One adaptation: 0 stay, 1 leave, 2 rolled back, -1 error. */
static int follow(sched_mall* m) {
  sched_mall_adaptation a;
  int rc = sched_mall_adapt_begin(m, &a);
  if (rc == SCHED_MALL_EABORTED) return 2;
  if (rc != 0) return failed(m, "adapt_begin", rc);
  rc = sched_mall_adapt_commit(m);
  if (rc != 0) return failed(m, "adapt_commit", rc);
  if (a.new_rank == 0) {
    printf("resized %d->%d\n", a.old_size, a.new_size);
    fflush(stdout);
  }
  return a.leaving ? 1 : 0;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: mall_probe PROBE_MS STOP_FILE\n");
    return 2;
  }
  const long probe_ms = atol(argv[1]);
  const char* stop_file = argv[2];
  const char* pids = getenv("MALL_PROBE_PIDS");
  if (pids) {
    FILE* f = fopen(pids, "a");
    if (f) {
      fprintf(f, "%ld\n", (long)getpid());
      fclose(f);
    }
  }
  sched_mall* m = NULL;
  sched_mall_status status = SCHED_MALL_EXISTING;
  if (sched_mall_init(&m, &status) != 0) {
    fprintf(stderr, "mall_probe: init: %s\n", sched_mall_last_init_error());
    return 1;
  }
  /* A new process whose expansion was rolled back never joined: it leaves. */
  if (status == SCHED_MALL_EXISTING && sched_mall_rank(m) == 0) {
    printf("start on %d\n", sched_mall_size(m));
    fflush(stdout);
  }
  int state = status == SCHED_MALL_NEW ? follow(m) : 0;
  if (state == 2) state = 1;
  long since_probe = 0;
  while (state == 0 && access(stop_file, F_OK) != 0) {
    pause_ms(1);
    if (probe_ms <= 0 || ++since_probe < probe_ms) continue;
    since_probe = 0;
    int pending = 0;
    const int rc = sched_mall_probe(m, &pending);
    if (rc != 0) {
      state = failed(m, "probe", rc);
    } else if (pending) {
      state = follow(m);
      if (state == 2) state = 0;
    }
  }
  if (state == 0 && sched_mall_rank(m) == 0) printf("done on %d\n", sched_mall_size(m));
  const int rc = sched_mall_finalize(m);
  if (rc != 0) fprintf(stderr, "mall_probe: finalize: %s\n", sched_mall_last_init_error());
  return state < 0 || rc != 0 ? 1 : 0;
}

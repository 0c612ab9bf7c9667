/* A malleable test program for resizes by cores (issue 20 item 2): it
 * follows adaptations and reports the CPUs it may run on.
 *
 *   mall_cores STOP_FILE
 *
 * Writes its pid to $MALL_PROBE_PIDS (appended) when set. Rank 0 prints
 * "start cpus LIST" once initialised and, after each adaptation, "resized
 * OLD->NEW cores NODE/JOB cpus LIST": NODE and JOB from sched_mall_cores, LIST
 * its own Cpus_allowed_list from /proc/self/status, read once its affinity
 * has as many CPUs as its cores map onto (a shrink narrows it after the
 * commit; the grow has widened it already). Ends when STOP_FILE exists. */
#define _GNU_SOURCE
#include <sched.h>
#include <sched/malleable.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void pause_ms(long ms) {
  struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&t, NULL);
}

static void cpus_allowed(char* out, size_t size) {
  out[0] = '\0';
  FILE* f = fopen("/proc/self/status", "r");
  if (!f) return;
  char line[512];
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, "Cpus_allowed_list:", 18) == 0) {
      const char* value = line + 18;
      while (*value == ' ' || *value == '\t') ++value;
      const size_t length = strcspn(value, "\n");
      const size_t n = length < size - 1 ? length : size - 1;
      memcpy(out, value, n);
      out[n] = '\0';
      break;
    }
  }
  fclose(f);
}

static int cpu_count(void) {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return -1;
  return CPU_COUNT(&set);
}

/* Waits (up to 60 s) until the affinity has `want` CPUs. */
static void await_cpus(int want) {
  for (int i = 0; i < 6000 && cpu_count() != want; ++i) pause_ms(10);
}

static int failed(sched_mall* m, const char* call, int rc) {
  fprintf(stderr, "mall_cores: %s: %s: %s\n", call, sched_mall_strerror(rc), sched_mall_error(m));
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
  int node_cores = 0, job_cores = 0;
  sched_mall_cores(m, &node_cores, &job_cores);
  if (a.new_rank == 0) {
    const long host = sysconf(_SC_NPROCESSORS_ONLN);
    if (node_cores > 0) await_cpus(host > 0 && node_cores > host ? (int)host : node_cores);
    char cpus[256];
    cpus_allowed(cpus, sizeof cpus);
    printf("resized %d->%d cores %d/%d cpus %s\n", a.old_size, a.new_size, node_cores, job_cores,
           cpus);
    fflush(stdout);
  }
  return a.leaving ? 1 : 0;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: mall_cores STOP_FILE\n");
    return 2;
  }
  const char* stop_file = argv[1];
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
    fprintf(stderr, "mall_cores: init: %s\n", sched_mall_last_init_error());
    return 1;
  }
  if (status == SCHED_MALL_EXISTING && sched_mall_rank(m) == 0) {
    char cpus[256];
    cpus_allowed(cpus, sizeof cpus);
    printf("start cpus %s\n", cpus);
    fflush(stdout);
  }
  int state = status == SCHED_MALL_NEW ? follow(m) : 0;
  if (state == 2) state = 1;
  while (state == 0 && access(stop_file, F_OK) != 0) {
    pause_ms(20);
    int pending = 0;
    const int rc = sched_mall_probe(m, &pending);
    if (rc != 0) {
      state = failed(m, "probe", rc);
    } else if (pending) {
      state = follow(m);
      if (state == 2) state = 0;
    }
  }
  if (state == 0 && sched_mall_rank(m) == 0) printf("done\n");
  const int rc = sched_mall_finalize(m);
  if (rc != 0) fprintf(stderr, "mall_cores: finalize: %s\n", sched_mall_last_init_error());
  return state < 0 || rc != 0 ? 1 : 0;
}

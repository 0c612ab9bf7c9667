/* An evolving test program for the integration tests (issue 17 item 1): it
 * follows adaptations as mall_probe does, and its rank 0 asks the scheduler
 * to resize the job, one size after another.
 *
 *   mall_evolve STOP_FILE GO_PREFIX SIZE...
 *
 * Rank 0 asks for the i-th SIZE (i = 1, 2, ...) once the file GO_PREFIX<i>
 * exists, and the next once the answer came (and, when granted, the job
 * reached that size). It prints "request I to N: STATE" when the scheduler
 * took the request, "request I: GRANTED N", "request I: REFUSED CODE: WHY"
 * or "request I: EXPIRED" when the answer changes, and like mall_probe
 * "start on N", "resized OLD->NEW" (the new set's rank 0) and "done on N".
 * Ends when STOP_FILE exists. Writes its pid to $MALL_PROBE_PIDS (appended)
 * when set. Failures go to stderr, and the exit status is then 1. */
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
  fprintf(stderr, "mall_evolve: %s: %s: %s\n", call, sched_mall_strerror(rc), sched_mall_error(m));
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

/* Rank 0's requests: which is next, and the one waiting for its answer. */
struct asker {
  char** sizes;
  int count;
  int next; /* index into sizes of the next request */
  const char* go_prefix;
  int request; /* the library's number of the request under way; 0: none */
  int granted; /* size to reach before the next request; 0: none */
};

static void print_answer(int index, const sched_mall_request_info* info) {
  switch (info->state) {
    case SCHED_MALL_REQUEST_GRANTED:
      printf("request %d: GRANTED %d\n", index, info->nodes);
      break;
    case SCHED_MALL_REQUEST_REFUSED:
      printf("request %d: REFUSED %s: %s\n", index, info->code, info->message);
      break;
    default:
      printf("request %d: %s\n", index, sched_mall_request_state_name(info->state));
  }
  fflush(stdout);
}

/* 0 on success (whatever the answer), -1 on a library error. */
static int ask(sched_mall* m, struct asker* a) {
  if (a->granted > 0) {
    if (sched_mall_size(m) != a->granted) return 0;
    a->granted = 0;
  }
  sched_mall_request_info info;
  if (a->request != 0) {
    const int rc = sched_mall_request_status(m, a->request, &info);
    if (rc != 0) return failed(m, "request_status", rc);
    if (info.state == SCHED_MALL_REQUEST_PENDING) return 0;
    print_answer(a->next, &info);
    a->request = 0;
    if (info.state == SCHED_MALL_REQUEST_GRANTED) a->granted = info.nodes;
    return 0;
  }
  if (a->next >= a->count) return 0;
  char go[4096];
  snprintf(go, sizeof go, "%s%d", a->go_prefix, a->next + 1);
  if (access(go, F_OK) != 0) return 0;
  const int nodes = atoi(a->sizes[a->next]);
  const int op = nodes > sched_mall_size(m) ? SCHED_MALL_GROW : SCHED_MALL_SHRINK;
  ++a->next;
  int rc = sched_mall_request(m, op, nodes, "mall_evolve", &a->request);
  if (rc != 0) return failed(m, "request", rc);
  rc = sched_mall_request_status(m, a->request, &info);
  if (rc != 0) return failed(m, "request_status", rc);
  printf("request %d to %d: %s\n", a->next, nodes, sched_mall_request_state_name(info.state));
  fflush(stdout);
  if (info.state != SCHED_MALL_REQUEST_PENDING) {
    print_answer(a->next, &info);
    a->request = 0;
    if (info.state == SCHED_MALL_REQUEST_GRANTED) a->granted = info.nodes;
  }
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: mall_evolve STOP_FILE GO_PREFIX SIZE...\n");
    return 2;
  }
  const char* stop_file = argv[1];
  struct asker asker = {argv + 3, argc - 3, 0, argv[2], 0, 0};
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
    fprintf(stderr, "mall_evolve: init: %s\n", sched_mall_last_init_error());
    return 1;
  }
  if (status == SCHED_MALL_EXISTING && sched_mall_rank(m) == 0) {
    printf("start on %d\n", sched_mall_size(m));
    fflush(stdout);
  }
  int state = status == SCHED_MALL_NEW ? follow(m) : 0;
  if (state == 2) state = 1;
  while (state == 0 && access(stop_file, F_OK) != 0) {
    pause_ms(2);
    int pending = 0;
    const int rc = sched_mall_probe(m, &pending);
    if (rc != 0) {
      state = failed(m, "probe", rc);
    } else if (pending) {
      state = follow(m);
      if (state == 2) state = 0;
    } else if (sched_mall_rank(m) == 0 && ask(m, &asker) != 0) {
      state = -1;
    }
  }
  if (state == 0 && sched_mall_rank(m) == 0) printf("done on %d\n", sched_mall_size(m));
  const int rc = sched_mall_finalize(m);
  if (rc != 0) fprintf(stderr, "mall_evolve: finalize: %s\n", sched_mall_last_init_error());
  return state < 0 || rc != 0 ? 1 : 0;
}

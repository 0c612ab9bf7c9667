/* A synthetic AMR-like application: it alternates computing and
 * communicating, and the share of communication changes from phase to phase
 * as a mesh refines and coarsens, so its MTCT (communication over
 * computation time) changes while it runs. Each iteration reports its
 * times through the malleable library; the node agent sums them and schedd
 * shows the job's MTCT (`sched show`), which performance-aware policies use.
 *
 *   amr_phases [ITERATIONS [ITERATION_MS [PHASES]]]   (defaults 40, 50, 4)
 *
 * Run it as a step: `sched run amr_phases 40 50 4`. */
#include <sched/malleable.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void spend(double seconds) {
  struct timespec t;
  t.tv_sec = (time_t)seconds;
  t.tv_nsec = (long)((seconds - (double)t.tv_sec) * 1e9);
  nanosleep(&t, NULL);
}

int main(int argc, char** argv) {
  const int iterations = argc > 1 ? atoi(argv[1]) : 40;
  const double iteration_s = (argc > 2 ? atoi(argv[2]) : 50) / 1000.0;
  const int phases = argc > 3 ? atoi(argv[3]) : 4;
  if (iterations < 1 || iteration_s <= 0 || phases < 1) {
    fprintf(stderr, "usage: amr_phases [ITERATIONS [ITERATION_MS [PHASES]]]\n");
    return 2;
  }
  sched_mall* m = NULL;
  sched_mall_status status;
  if (sched_mall_init(&m, &status) != 0) {
    fprintf(stderr, "amr_phases: %s\n", sched_mall_last_init_error());
    return 1;
  }
  const int rank = sched_mall_rank(m);
  /* The communication share of each phase: 10%, 40%, 20%, 50%, ... */
  static const double shares[] = {0.1, 0.4, 0.2, 0.5};
  for (int i = 0; i < iterations; ++i) {
    const int phase = i * phases / iterations;
    const double share = shares[phase % 4];
    const double t0 = now_s();
    spend(iteration_s * (1 - share));
    const double t1 = now_s();
    spend(iteration_s * share);
    const double t2 = now_s();
    if (sched_mall_report_phase(m, t2 - t1, t1 - t0) != 0) {
      fprintf(stderr, "amr_phases: %s\n", sched_mall_error(m));
    }
  }
  if (rank == 0) printf("amr_phases: %d iterations in %d phases done\n", iterations, phases);
  return sched_mall_finalize(m) == 0 ? 0 : 1;
}

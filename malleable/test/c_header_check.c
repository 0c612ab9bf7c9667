/* Compiled as C99 by CMake, so that malleable.h stays usable from C: every
 * declaration is used once, nothing runs. */
#include "sched/malleable.h"

int sched_mall_c_header_check(void);

int sched_mall_c_header_check(void) {
  sched_mall* m = NULL;
  sched_mall_status status = SCHED_MALL_EXISTING;
  sched_mall_adaptation adaptation = {0, 0, -1, -1, 0};
  int pending = 0;
  void* data = NULL;
  size_t size = 0;
  int result = sched_mall_init(&m, &status);
  if (result != SCHED_MALL_OK) return result;
  result = sched_mall_probe(m, &pending);
  if (pending) {
    result = sched_mall_adapt_begin(m, &adaptation);
    result = sched_mall_adapt_commit(m);
  }
  result = sched_mall_report_phase(m, 0.5, 1.5);
  result = sched_mall_send(m, sched_mall_rank(m), "x", 1);
  result = sched_mall_recv(m, sched_mall_size(m) - 1, &data, &size);
  sched_mall_free(data);
  (void)sched_mall_error(m);
  (void)sched_mall_strerror(result);
  (void)sched_mall_last_init_error();
  return sched_mall_finalize(m) == SCHED_MALL_OK ? adaptation.leaving : SCHED_MALL_EINTERNAL;
}

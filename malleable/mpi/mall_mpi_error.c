/* The layer's error text: one per thread, like sched_mall_last_init_error. */
#include "mall_mpi_error.h"

#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>

#include "sched/malleable_mpi.h"

static _Thread_local char last_error[512];

int mall_mpi_fail(int code, const char* format, ...) {
  va_list args;
  va_start(args, format);
  vsnprintf(last_error, sizeof last_error, format, args);
  va_end(args);
  return code;
}

void mall_mpi_clear(void) { last_error[0] = '\0'; }

int mall_mpi_check(int mpi_rc, const char* what) {
  if (mpi_rc == MPI_SUCCESS) return SCHED_MALL_OK;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(mpi_rc, text, &length) != MPI_SUCCESS) snprintf(text, sizeof text, "?");
  return mall_mpi_fail(SCHED_MALL_ECOMM, "%s failed: %s", what, text);
}

const char* sched_mall_mpi_error(void) { return last_error; }

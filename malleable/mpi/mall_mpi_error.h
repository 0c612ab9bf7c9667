/* The layer's error text (sched_mall_mpi_error), shared by its files. */
#ifndef SCHED_MALL_MPI_ERROR_H
#define SCHED_MALL_MPI_ERROR_H

/* Records why a call failed (printf format) and returns code. */
int mall_mpi_fail(int code, const char* format, ...) __attribute__((format(printf, 2, 3)));

/* Clears the text at the start of a call. */
void mall_mpi_clear(void);

/* Turns an MPI result into ours: 0, or SCHED_MALL_ECOMM with MPI's text
 * prefixed by what was called. */
int mall_mpi_check(int mpi_rc, const char* what);

#endif

/* What the engine does with a trace (singa/trace.h): a buffer per thread, spans recorded into
 * it, the file written at the end.  A NULL trace or buffer records nothing, so callers need no
 * test of their own. */
#ifndef SINGA_CORE_TRACE_H
#define SINGA_CORE_TRACE_H

#include <stdbool.h>

#include "singa/trace.h"

typedef struct singa_trace singa_trace;
typedef struct singa_trace_buf singa_trace_buf;

/* A trace for path; from < 0 keeps the last SINGA_TRACE_RING steps, else steps from..to. */
singa_trace *singa_trace_new(const char *path, int from, int to);
void singa_trace_free(singa_trace *t);
/* The calling thread's buffer, named for its track ("worker 0.1"); NULL when t is NULL or out of
 * memory.  Called when a thread starts, not per step. */
singa_trace_buf *singa_trace_thread(singa_trace *t, const char *name);
/* The step the thread works on now: its spans belong to it. */
void singa_trace_step(singa_trace_buf *b, int step);
/* A span of the thread's current step from t0 to t1 (singa_trace_now's clock); name is copied
 * (cut to 27 bytes). */
void singa_trace_span(singa_trace_buf *b, const char *cat, const char *name, double t0, double t1);
double singa_trace_now(void);
/* Rank 0, before the job: removes <path>.rank<r> files an earlier run may have left. */
void singa_trace_clear_ranks(const singa_trace *t, int nprocs);
/* Writes the trace: a process of one rank writes the file itself; in several, every rank but 0
 * writes <path>.rank<r>, and rank 0 waits up to `wait` seconds for each, merges them into the
 * file and removes them.  offset: what turns this process's clock into rank 0's. */
int singa_trace_write(const singa_trace *t, int rank, int nprocs, double offset, double wait, singa_err *err);

#endif

/* A job's timeline (the job fields `trace` and `trace_steps`, singa-tui --trace FILE and
 * --trace-steps A:B): Chrome trace-event JSON, which Perfetto and chrome://tracing open.  Every
 * thread of every process records spans (layers' forward and backward, sends, waits, server
 * updates, checkpoints) into a buffer of its own, without locks or allocation; the file is
 * written when the job ends.  By default it holds the last SINGA_TRACE_RING steps; with
 * trace_steps "A:B" steps A to B.  Either way a thread keeps at most SINGA_TRACE_EVENTS events. */
#ifndef SINGA_TRACE_H
#define SINGA_TRACE_H

#include "singa/error.h"

#pragma GCC visibility push(default) /* exported: libsinga is built hidden */

enum { SINGA_TRACE_RING = 50, SINGA_TRACE_EVENTS = 16384 };

/* Whether a trace can be written at path (its folder exists and is writable, and the file, if
 * there, too): checked before training. */
int singa_trace_check_path(const char *path, singa_err *err);
/* "A:B" with 0 <= A <= B: the steps a trace keeps. */
int singa_trace_parse_steps(const char *text, int *from, int *to, singa_err *err);

#pragma GCC visibility pop

#endif

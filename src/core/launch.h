/* The launcher's environment (launch.c), internal to libsinga. */
#ifndef SINGA_CORE_LAUNCH_H
#define SINGA_CORE_LAUNCH_H

#include "singa/error.h"

/* $name as a count of processes or a rank, at least min and at most 65535; a clear error else. */
int singa_launch_count(const char *name, long min, long *out, singa_err *err);

#endif

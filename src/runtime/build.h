/* Which build of libsinga this process runs (build.c), as the meeting compares it. */
#ifndef SINGA_RUNTIME_BUILD_H
#define SINGA_RUNTIME_BUILD_H

#include <stdbool.h>
#include <stddef.h>

#include "singa/error.h"

/* Room for the longest build: "id:" and a build-id's hex (SHA-1's 40 digits; up to 64). */
enum { RT_BUILD_MAX = 3 + 2 * 64 + 1 };

/* This process's build, one word: "id:<hex>", the GNU build-id of the object this code is in, or
 * "version:<SINGA_VERSION>" when it has none. */
void rt_build(char *buf, size_t len);

/* 0 when a joining process's build (its word, "" if it sent none) is this process's; else -1 with
 * the reason, naming both, in err.  rejoin: it asked to rejoin a running job (SINGA_REJOIN). */
int rt_build_check(int rank, const char *theirs, bool rejoin, singa_err *err);

#endif

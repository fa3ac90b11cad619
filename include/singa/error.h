/* Errors: functions return 0 on success or -1 with a message in a caller-owned buffer.
 * The library never prints or exits; the program decides what to do with the message. */
#ifndef SINGA_ERROR_H
#define SINGA_ERROR_H

#include <stddef.h>

#pragma GCC visibility push(default) /* exported: libsinga is built hidden */

#define SINGA_ERR_LEN 1024

typedef struct singa_err {
    char msg[SINGA_ERR_LEN];
} singa_err;

/* Formats into err (when not NULL) and returns -1, so callers can `return singa_err_set(...)`. */
int singa_err_set(singa_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends formatted text to the NUL-terminated string in buf (capacity cap), truncating safely. */
void singa_appendf(char *buf, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Prepends a context such as "layer 'fc1' (kInnerProduct): " to an existing message. */
int singa_err_prefix(singa_err *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#pragma GCC visibility pop

#endif

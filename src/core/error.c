#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "singa/error.h"

int singa_err_set(singa_err *err, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return -1;
}

void singa_appendf(char *buf, size_t cap, const char *fmt, ...)
{
    size_t used = strnlen(buf, cap);
    if (used + 1 >= cap)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + used, cap - used, fmt, ap);
    va_end(ap);
}

int singa_err_prefix(singa_err *err, const char *fmt, ...)
{
    if (err) {
        char head[SINGA_ERR_LEN], old[SINGA_ERR_LEN];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(head, sizeof head, fmt, ap);
        va_end(ap);
        memcpy(old, err->msg, sizeof old);
        snprintf(err->msg, sizeof err->msg, "%s%s", head, old);
    }
    return -1;
}

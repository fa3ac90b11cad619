/* A ring of fixed-size lines under a mutex.  Writers are the capture thread (everything the job
 * prints), the script thread and the UI thread, never the engine's training threads, so a
 * mutex costs nothing that matters; readers copy the few lines they show. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tui/log.h"

typedef struct line {
    unsigned char kind;
    char text[TUI_LINE_MAX];
} line;

struct tui_log {
    pthread_mutex_t lock;
    line *lines;
    int capacity;
    uint64_t total;
};

tui_log *tui_log_new(int capacity)
{
    tui_log *log = calloc(1, sizeof *log);
    if (!log || !(log->lines = calloc((size_t)capacity, sizeof *log->lines))) {
        free(log);
        return NULL;
    }
    log->capacity = capacity;
    pthread_mutex_init(&log->lock, NULL);
    return log;
}

void tui_log_free(tui_log *log)
{
    if (!log)
        return;
    pthread_mutex_destroy(&log->lock);
    free(log->lines);
    free(log);
}

static int contains(const char *s, const char *word)
{
    return strstr(s, word) != NULL;
}

tui_line_kind tui_log_classify(const char *t)
{
    if (contains(t, "error") || contains(t, "Error") || contains(t, "ERROR") || contains(t, "refused") ||
        contains(t, "failed") || contains(t, "stack traceback") || contains(t, "cannot ") ||
        contains(t, "not found"))
        return TUI_LINE_ERROR;
    if (contains(t, "warning") || contains(t, "Warning") || contains(t, "WARNING"))
        return TUI_LINE_WARN;
    return TUI_LINE_PLAIN;
}

/* Appends one cleaned line (under the lock), continuing it on further lines when too long; the
 * split never falls inside a UTF-8 sequence. */
static void put(tui_log *log, tui_line_kind kind, const char *s, size_t n)
{
    do {
        size_t take = n;
        if (take > TUI_LINE_MAX - 1) {
            take = TUI_LINE_MAX - 1;
            while (take > 0 && ((unsigned char)s[take] & 0xC0) == 0x80)
                take--;
        }
        line *l = &log->lines[log->total % (uint64_t)log->capacity];
        memcpy(l->text, s, take);
        l->text[take] = 0;
        l->kind = (unsigned char)kind;
        log->total++;
        s += take;
        n -= take;
    } while (n > 0);
}

/* Cleans one raw line into out: drops escape sequences and control characters, keeps the text
 * after the last carriage return, expands tabs to 8 columns. */
static size_t clean(const char *s, size_t n, char *out, size_t cap)
{
    size_t o = 0;
    for (size_t i = 0; i < n && o + 8 < cap; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == 0x1b) { /* CSI: ESC [ params final; other escapes: ESC and one byte */
            if (i + 1 < n && s[i + 1] == '[') {
                i += 2;
                while (i < n && !((unsigned char)s[i] >= 0x40 && (unsigned char)s[i] <= 0x7e))
                    i++;
            } else {
                i++;
            }
        } else if (c == '\r') {
            o = 0;
        } else if (c == '\t') {
            do
                out[o++] = ' ';
            while (o % 8 && o + 1 < cap);
        } else if (c >= 0x20 && c != 0x7f) {
            out[o++] = (char)c;
        }
    }
    out[o] = 0;
    return o;
}

void tui_log_add(tui_log *log, tui_line_kind kind, const char *text)
{
    if (kind == TUI_LINE_AUTO)
        kind = tui_log_classify(text);
    char buf[4096];
    pthread_mutex_lock(&log->lock);
    for (const char *s = text;;) {
        const char *nl = strchr(s, '\n');
        size_t n = nl ? (size_t)(nl - s) : strlen(s);
        put(log, kind, buf, clean(s, n, buf, sizeof buf));
        if (!nl || !nl[1])
            break;
        s = nl + 1;
    }
    pthread_mutex_unlock(&log->lock);
}

void tui_log_addf(tui_log *log, tui_line_kind kind, const char *fmt, ...)
{
    char buf[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    tui_log_add(log, kind, buf);
}

uint64_t tui_log_total(tui_log *log)
{
    pthread_mutex_lock(&log->lock);
    uint64_t t = log->total;
    pthread_mutex_unlock(&log->lock);
    return t;
}

uint64_t tui_log_first(tui_log *log)
{
    pthread_mutex_lock(&log->lock);
    uint64_t t = log->total, cap = (uint64_t)log->capacity;
    pthread_mutex_unlock(&log->lock);
    return t > cap ? t - cap : 0;
}

int tui_log_get(tui_log *log, uint64_t i, char *buf, size_t len)
{
    int kind = -1;
    pthread_mutex_lock(&log->lock);
    uint64_t cap = (uint64_t)log->capacity;
    if (i < log->total && i + cap >= log->total) {
        const line *l = &log->lines[i % cap];
        snprintf(buf, len, "%s", l->text);
        kind = l->kind;
    }
    pthread_mutex_unlock(&log->lock);
    return kind;
}

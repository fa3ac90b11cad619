/* Trace buffers: each thread registers once (under the trace's lock) and then owns its buffer,
 * a fixed array of events it alone writes, so recording a span is a bounds check and a copy.
 * The ring keeps the newest SINGA_TRACE_EVENTS events of a thread and the writer keeps those of
 * the last SINGA_TRACE_RING steps; with a step range, events outside it are not recorded and a
 * full buffer records no more.  The file is written after the threads are joined. */
#include <errno.h>
#include <libgen.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/trace.h"

typedef struct event {
    double t0;
    float dur;
    int step;
    const char *cat; /* a string literal */
    char name[28];
} event;

struct singa_trace_buf {
    char name[32];
    int step;
    long n; /* events recorded; the newest SINGA_TRACE_EVENTS are kept */
    int from, to; /* the steps to record (from < 0: every step, in a ring) */
    event ev[SINGA_TRACE_EVENTS];
};

struct singa_trace {
    char *path;
    int from, to;
    pthread_mutex_t lock;
    singa_trace_buf **bufs;
    int n;
};

double singa_trace_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int singa_trace_check_path(const char *path, singa_err *err)
{
    char dir[4096];
    if (!path || !*path)
        return singa_err_set(err, "trace: the path is empty");
    if (snprintf(dir, sizeof dir, "%s", path) >= (int)sizeof dir)
        return singa_err_set(err, "trace: %s: the path is too long", path);
    const char *folder = dirname(dir);
    if (access(folder, W_OK) < 0)
        return singa_err_set(err, "trace: cannot write %s: %s (its folder %s)", path, strerror(errno), folder);
    if (access(path, F_OK) == 0 && access(path, W_OK) < 0)
        return singa_err_set(err, "trace: cannot write %s: %s", path, strerror(errno));
    return 0;
}

int singa_trace_parse_steps(const char *text, int *from, int *to, singa_err *err)
{
    int a, b, used = 0;
    if (!text || sscanf(text, "%d:%d%n", &a, &b, &used) != 2 || text[used] || a < 0 || b < a)
        return singa_err_set(err, "trace_steps: '%s' is not A:B with 0 <= A <= B", text ? text : "");
    *from = a, *to = b;
    return 0;
}

singa_trace *singa_trace_new(const char *path, int from, int to)
{
    singa_trace *t = calloc(1, sizeof *t);
    if (!t || !(t->path = strdup(path))) {
        free(t);
        return NULL;
    }
    t->from = from, t->to = to;
    pthread_mutex_init(&t->lock, NULL);
    return t;
}

void singa_trace_free(singa_trace *t)
{
    if (!t)
        return;
    for (int i = 0; i < t->n; i++)
        free(t->bufs[i]);
    free(t->bufs);
    free(t->path);
    pthread_mutex_destroy(&t->lock);
    free(t);
}

singa_trace_buf *singa_trace_thread(singa_trace *t, const char *name)
{
    if (!t)
        return NULL;
    singa_trace_buf *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    snprintf(b->name, sizeof b->name, "%s", name);
    b->from = t->from, b->to = t->to;
    pthread_mutex_lock(&t->lock);
    singa_trace_buf **grown = realloc(t->bufs, (size_t)(t->n + 1) * sizeof *grown);
    if (grown) {
        t->bufs = grown;
        t->bufs[t->n++] = b;
    }
    pthread_mutex_unlock(&t->lock);
    if (!grown) {
        free(b);
        return NULL;
    }
    return b;
}

void singa_trace_step(singa_trace_buf *b, int step)
{
    if (b)
        b->step = step;
}

void singa_trace_span(singa_trace_buf *b, const char *cat, const char *name, double t0, double t1)
{
    if (!b)
        return;
    if (b->from >= 0 && (b->step < b->from || b->step > b->to || b->n >= SINGA_TRACE_EVENTS))
        return;
    event *e = &b->ev[b->n++ % SINGA_TRACE_EVENTS];
    e->t0 = t0, e->dur = (float)(t1 - t0), e->step = b->step, e->cat = cat;
    size_t len = strnlen(name, sizeof e->name - 1);
    memcpy(e->name, name, len);
    e->name[len] = 0;
}

/* A JSON string's characters (names are layer and param names: escape quotes and controls). */
static void json_text(FILE *f, const char *s)
{
    for (; *s; s++)
        if (*s == '"' || *s == '\\')
            fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s < 32)
            fprintf(f, "\\u%04x", *s);
        else
            fputc(*s, f);
}

/* This process's events, each line ",\n" + an object; pid = rank, tid = the buffer's index + 1. */
static void write_events(const singa_trace *t, FILE *f, int rank, double offset)
{
    int last = -1;
    for (int i = 0; i < t->n; i++)
        last = t->bufs[i]->step > last ? t->bufs[i]->step : last;
    fprintf(f, ",\n{\"ph\": \"M\", \"pid\": %d, \"name\": \"process_name\", \"args\": {\"name\": \"rank %d\"}}", rank, rank);
    for (int i = 0; i < t->n; i++) {
        const singa_trace_buf *b = t->bufs[i];
        fprintf(f, ",\n{\"ph\": \"M\", \"pid\": %d, \"tid\": %d, \"name\": \"thread_name\", \"args\": {\"name\": \"", rank,
                i + 1);
        json_text(f, b->name);
        fputs("\"}}", f);
        long first = b->n > SINGA_TRACE_EVENTS ? b->n - SINGA_TRACE_EVENTS : 0;
        for (long k = first; k < b->n; k++) {
            const event *e = &b->ev[k % SINGA_TRACE_EVENTS];
            if (t->from < 0 && e->step <= last - SINGA_TRACE_RING)
                continue;
            fprintf(f, ",\n{\"ph\": \"X\", \"pid\": %d, \"tid\": %d, \"cat\": \"%s\", \"name\": \"", rank, i + 1, e->cat);
            json_text(f, e->name);
            fprintf(f, "\", \"ts\": %.3f, \"dur\": %.3f, \"args\": {\"step\": %d}}", 1e6 * (e->t0 + offset),
                    1e6 * (double)e->dur, e->step);
        }
    }
}

void singa_trace_clear_ranks(const singa_trace *t, int nprocs)
{
    char part[4200];
    for (int r = 1; r < nprocs; r++) {
        snprintf(part, sizeof part, "%s.rank%d", t->path, r);
        unlink(part);
    }
}

/* Appends the file a rank wrote (its events), waiting for it up to `until`; 0, or -1 when it
 * never came. */
static int merge_rank(FILE *out, const char *path, int r, double until)
{
    char part[4200];
    snprintf(part, sizeof part, "%s.rank%d", path, r);
    FILE *in;
    while (!(in = fopen(part, "r")) && singa_trace_now() < until)
        nanosleep(&(struct timespec){.tv_nsec = 20000000}, NULL);
    if (!in)
        return -1;
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        fwrite(buf, 1, n, out);
    fclose(in);
    unlink(part);
    return 0;
}

int singa_trace_write(const singa_trace *t, int rank, int nprocs, double offset, double wait, singa_err *err)
{
    char final[4200], tmp[4300];
    if (rank == 0)
        snprintf(final, sizeof final, "%s", t->path);
    else
        snprintf(final, sizeof final, "%s.rank%d", t->path, rank);
    snprintf(tmp, sizeof tmp, "%s.tmp%ld", final, (long)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f)
        return singa_err_set(err, "trace: cannot write %s: %s", final, strerror(errno));
    if (rank == 0) /* the first event is a no-op, so every other begins with a comma */
        fputs("{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n{\"ph\": \"M\", \"pid\": 0, \"name\": \"process_sort_index\", "
              "\"args\": {\"sort_index\": 0}}", f);
    write_events(t, f, rank, offset);
    int missing = 0;
    double until = singa_trace_now() + wait;
    for (int r = 1; rank == 0 && r < nprocs; r++)
        missing += merge_rank(f, t->path, r, until) < 0;
    if (rank == 0)
        fputs("\n]}\n", f);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad || rename(tmp, final) < 0) {
        int e = errno;
        unlink(tmp);
        return singa_err_set(err, "trace: cannot write %s: %s", final, strerror(e));
    }
    if (missing)
        return singa_err_set(err, "trace: %s lacks %d process%s events: their files did not come within %g s", final,
                             missing, missing > 1 ? "es'" : "'s", wait);
    return 0;
}

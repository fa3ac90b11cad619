/* The pipe's reader thread never touches the screen: it only appends to the log, which the UI
 * thread draws from.  It polls with a timeout so that stopping does not depend on every writer
 * having closed the pipe (a child process of the job may still hold it). */
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tui/capture.h"
#include "tui/term.h"

struct tui_capture {
    tui_log *log;
    int saved[3]; /* the program's own 0, 1 and 2 */
    int rd, wr;
    pthread_t thread;
    atomic_bool stop;
};

static void *reader(void *arg)
{
    tui_capture *c = arg;
    char line[4096], buf[4096];
    size_t n = 0;
    for (;;) {
        struct pollfd p = {.fd = c->rd, .events = POLLIN};
        int ready = poll(&p, 1, 100);
        if (ready == 0) {
            if (atomic_load(&c->stop))
                break;
            continue;
        }
        if (ready < 0)
            continue; /* EINTR */
        ssize_t got = read(c->rd, buf, sizeof buf);
        if (got <= 0)
            break;
        for (ssize_t i = 0; i < got; i++) {
            if (buf[i] == '\n' || n == sizeof line - 1) {
                line[n] = 0;
                tui_log_add(c->log, TUI_LINE_AUTO, line);
                n = 0;
                if (buf[i] == '\n')
                    continue;
            }
            line[n++] = buf[i];
        }
    }
    if (n > 0) {
        line[n] = 0;
        tui_log_add(c->log, TUI_LINE_AUTO, line);
    }
    return NULL;
}

int tui_capture_start(tui_capture **out, tui_log *log, singa_err *err)
{
    *out = NULL;
    tui_capture *c = calloc(1, sizeof *c);
    int p[2];
    if (!c)
        return singa_err_set(err, "out of memory");
    if (pipe(p) < 0) {
        free(c);
        return singa_err_set(err, "cannot create a pipe for the job's output");
    }
    c->log = log;
    c->rd = p[0];
    c->wr = p[1];
    atomic_init(&c->stop, false);
    fcntl(c->rd, F_SETFD, FD_CLOEXEC);
    fcntl(c->wr, F_SETFD, FD_CLOEXEC);
    fflush(stdout);
    fflush(stderr);
    for (int i = 0; i < 3; i++)
        c->saved[i] = fcntl(i, F_DUPFD_CLOEXEC, 3);
    int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (null >= 0) {
        dup2(null, 0);
        close(null);
    }
    dup2(c->wr, 1);
    dup2(c->wr, 2);
    setvbuf(stdout, NULL, _IOLBF, 0); /* a pipe would make it fully buffered */
    int rc = tui_term_thread(&c->thread, reader, c);
    if (rc != 0) {
        c->thread = pthread_self();
        tui_capture_stop(c);
        return singa_err_set(err, "cannot start a thread");
    }
    *out = c;
    return 0;
}

void tui_capture_stop(tui_capture *c)
{
    if (!c)
        return;
    fflush(stdout);
    fflush(stderr);
    for (int i = 0; i < 3; i++)
        if (c->saved[i] >= 0) {
            dup2(c->saved[i], i);
            close(c->saved[i]);
        }
    close(c->wr);
    atomic_store(&c->stop, true);
    if (!pthread_equal(c->thread, pthread_self()))
        pthread_join(c->thread, NULL);
    close(c->rd);
    free(c);
}

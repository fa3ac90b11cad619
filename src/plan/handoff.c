/* cluster.plan = "auto" over several processes: rank 0's choice handed to the others at the job's
 * coordinator address, before the runtime meets there.  Rank 0 listens there briefly and answers
 * each process's ask with its choice (a configuration's name and a pipeline's stage starts, which
 * depend on its timings, or none); each process acknowledges the answer, and rank 0 closes
 * (linger 0) once all did, so that the runtime's ROUTER binds the same port right after.  A
 * process goes on to the meeting only once its connection is gone, lest its join reach the
 * hand-off.  An ask names the job (its digest and size, and the launcher's run id): a rank 0 of
 * another run or job answers "other", is not followed, and is asked again until the deadline. */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "plan/plan.h"
#include "runtime/runtime.h"

#define TAG "singa-plan "
enum { TEXT = 512, MONITORED = ZMQ_EVENT_DISCONNECTED | ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL |
                                   ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL };

typedef struct {
    void *ctx, *sock, *monitor;
} handoff;

/* A context of its own: terminating it closes the listener before the runtime binds the port. */
static int open_handoff(handoff *h, int type, const char *at, singa_err *err)
{
    int zero = 0;
    if (!(h->ctx = zmq_ctx_new()) || !(h->sock = zmq_socket(h->ctx, type)) ||
        zmq_setsockopt(h->sock, ZMQ_LINGER, &zero, sizeof zero) < 0)
        return singa_err_set(err, "cannot open a ZeroMQ socket: %s", zmq_strerror(zmq_errno()));
    if (type == ZMQ_ROUTER)
        return zmq_bind(h->sock, at) < 0 ? singa_err_set(err, "cannot listen on %s: %s", at, zmq_strerror(zmq_errno()))
                                         : 0;
    if (zmq_socket_monitor(h->sock, "inproc://singa-plan-handoff", MONITORED) < 0 ||
        !(h->monitor = zmq_socket(h->ctx, ZMQ_PAIR)) || zmq_connect(h->monitor, "inproc://singa-plan-handoff") < 0 ||
        zmq_connect(h->sock, at) < 0)
        return singa_err_set(err, "cannot connect to %s: %s", at, zmq_strerror(zmq_errno()));
    return 0;
}

static void close_handoff(handoff *h)
{
    if (h->monitor) {
        zmq_socket_monitor(h->sock, NULL, 0);
        zmq_close(h->monitor);
    }
    if (h->sock)
        zmq_close(h->sock);
    if (h->ctx)
        zmq_ctx_term(h->ctx);
}

/* One message's last frame as text (a ROUTER's first, the sender's id, in id); -1 when none came. */
static int recv_text(void *sock, char *id, size_t idlen, size_t *idn, char *text)
{
    int n = 0, frames = 0, more = 1;
    size_t len = sizeof more;
    while (more) {
        char buf[TEXT];
        int got = zmq_recv(sock, buf, sizeof buf - 1, ZMQ_DONTWAIT);
        if (got < 0 || zmq_getsockopt(sock, ZMQ_RCVMORE, &more, &len) < 0)
            return -1;
        n = got < TEXT - 1 ? got : TEXT - 1;
        if (id && frames++ == 0) {
            *idn = (size_t)n < idlen ? (size_t)n : idlen;
            memcpy(id, buf, *idn);
        }
        memcpy(text, buf, (size_t)n);
        text[n] = 0;
    }
    return n;
}

/* Waits until sock has a message or until: 1, 0, -1 on failure. */
static int wait_in(void *sock, void *monitor, double until)
{
    zmq_pollitem_t it[2] = {{sock, 0, ZMQ_POLLIN, 0}, {monitor, 0, ZMQ_POLLIN, 0}};
    double left = until - rt_now();
    int rc = zmq_poll(it, monitor ? 2 : 1, left > 0 ? (long)(left * 1000) + 1 : 0);
    return rc < 0 ? (zmq_errno() == EINTR ? 0 : -1) : (it[0].revents & ZMQ_POLLIN) != 0;
}

/* Rank 0: one message read; an ask of this job answered (or told it is another's), an ack
 * counted: returns 1 for a rank's first ack. */
static int answer_one(void *sock, const char *key, const char *choice, bool *acked, int size)
{
    char id[256], text[TEXT], theirs[TEXT], other[TEXT];
    size_t idn = 0;
    int rank;
    if (recv_text(sock, id, sizeof id, &idn, text) < 0 || idn == 0)
        return 0;
    if (sscanf(text, TAG "ask %d %511[^\n]", &rank, theirs) == 2 && rank > 0 && rank < size) {
        snprintf(other, sizeof other, TAG "other %s", key);
        const char *a = strcmp(theirs, key) == 0 ? choice : other;
        if (zmq_send(sock, id, idn, ZMQ_SNDMORE | ZMQ_DONTWAIT) >= 0)
            zmq_send(sock, a, strlen(a), ZMQ_DONTWAIT);
        return 0;
    }
    if (sscanf(text, TAG "ack %d %511[^\n]", &rank, theirs) == 2 && rank > 0 && rank < size &&
        strcmp(theirs, key) == 0 && !acked[rank])
        return acked[rank] = true;
    return 0; /* anything else is not for the hand-off */
}

/* The ranks in 1..size-1 that did not acknowledge, as "1, 3". */
static void missing(const bool *acked, int size, char *buf, size_t len)
{
    int at = 0;
    buf[0] = 0;
    for (int r = 1; r < size && at < (int)len - 16; r++)
        if (!acked[r])
            at += snprintf(buf + at, len - (size_t)at, "%s%d", at ? ", " : "", r);
}

int plan_handoff_give(const char *at, const char *key, int size, const singa_plan_config *c, double wait,
                      singa_err *err)
{
    char choice[TEXT];
    int n = snprintf(choice, sizeof choice, TAG "choice %s\n%s\n", key, c ? c->name : "-");
    for (int s = 0; s < SINGA_PLAN_MAX_STAGES; s++)
        n += snprintf(choice + n, sizeof choice - (size_t)n, "%d ", c ? c->stage_start[s] : 0);
    bool *acked = calloc((size_t)size, sizeof *acked);
    handoff h = {0};
    int rc = acked ? open_handoff(&h, ZMQ_ROUTER, at, err) : singa_err_set(err, "out of memory");
    double deadline = rt_now() + wait;
    for (int left = size - 1; rc == 0 && left > 0;) {
        int ready = wait_in(h.sock, NULL, deadline);
        if (ready > 0) {
            left -= answer_one(h.sock, key, choice, acked, size);
            continue;
        }
        char list[256];
        missing(acked, size, list, sizeof list);
        rc = ready < 0 ? singa_err_set(err, "the socket at %s failed: %s", at, zmq_strerror(zmq_errno()))
                       : singa_err_set(err, "rank(s) %s did not take it at %s within %g s", list, at, wait);
    }
    close_handoff(&h);
    free(acked);
    return rc;
}

/* An answer to this process's ask: 1 a choice of this job (name "-": none), 0 another run's or
 * job's (both keys in other), -1 not one. */
static int parse_choice(const char *text, const char *key, char *name, size_t len, int *starts, char *other)
{
    char theirs[TEXT];
    if (sscanf(text, TAG "other %511[^\n]", theirs) == 1) {
        snprintf(other, TEXT, "%s, this one's %s", theirs, key);
        return 0;
    }
    size_t k = strlen(TAG "choice "), klen = strlen(key);
    if (strncmp(text, TAG "choice ", k) != 0 || strncmp(text + k, key, klen) != 0 || text[k + klen] != '\n')
        return -1;
    const char *nm = text + k + klen + 1, *nl = strchr(nm, '\n');
    if (!nl || nl == nm || (size_t)(nl - nm) >= len)
        return -1;
    snprintf(name, len, "%.*s", (int)(nl - nm), nm);
    int used = 0;
    for (int s = 0; s < SINGA_PLAN_MAX_STAGES; s++, nl += used)
        if (sscanf(nl, "%d%n", &starts[s], &used) != 1 || starts[s] < 0)
            return -1;
    return 1;
}

/* The monitor's events: -1 (err set) when the address does not speak ZeroMQ, 1 when the
 * connection closed, else 0. */
static int events(void *monitor, const char *at, singa_err *err)
{
    int closed = 0;
    for (char ev[64]; zmq_recv(monitor, ev, sizeof ev, ZMQ_DONTWAIT) >= 0;) {
        uint16_t e;
        memcpy(&e, ev, sizeof e);
        int more = 0;
        size_t len = sizeof more;
        while (zmq_getsockopt(monitor, ZMQ_RCVMORE, &more, &len) == 0 && more) /* the address */
            zmq_recv(monitor, ev, sizeof ev, ZMQ_DONTWAIT);
        if (e == ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL || e == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL)
            return singa_err_set(err, "rank 0's choice did not arrive: the coordinator's address %s answers, but "
                                      "not in ZeroMQ (is the port another program's?)", at);
        closed |= e == ZMQ_EVENT_DISCONNECTED;
    }
    return closed;
}

/* The others: asks (again every second: a rank 0 may not listen yet, or one of another run still
 * may) until an answer of this job or the deadline. */
static int ask(handoff *h, const char *at, const char *key, int rank, double wait, char *name, size_t len,
               int *starts, singa_err *err)
{
    char text[TEXT], other[TEXT] = "", asking[TEXT];
    snprintf(asking, sizeof asking, TAG "ask %d %s", rank, key);
    double deadline = rt_now() + wait, again = 0;
    for (;;) {
        if (rt_now() >= again) {
            zmq_send(h->sock, asking, strlen(asking), ZMQ_DONTWAIT);
            again = rt_now() + 1;
        }
        int ready = wait_in(h->sock, h->monitor, again < deadline ? again : deadline);
        if (events(h->monitor, at, err) < 0)
            return -1;
        int got = ready > 0 && recv_text(h->sock, NULL, 0, NULL, text) >= 0 ?
                      parse_choice(text, key, name, len, starts, other) : -2;
        if (got == 1)
            return 0;
        if (got == -1) {
            for (char *c = text; *c; c++)
                *c = *c < ' ' || *c == 127 ? '?' : *c;
            return singa_err_set(err, "rank 0's answer at %s is not a choice: '%.80s'", at, text);
        }
        if ((ready < 0 || rt_now() >= deadline) && *other)
            return singa_err_set(err, "rank 0's choice did not arrive within %g s: only a process of another run or "
                                      "job answered at %s (its key %s)", wait, at, other);
        if (ready < 0 || rt_now() >= deadline)
            return singa_err_set(err, "rank 0's choice did not arrive within %g s: no answer at %s", wait, at);
    }
}

int plan_handoff_take(const char *at, const char *key, int rank, double wait, char *name, size_t len, int *starts,
                      singa_err *err)
{
    handoff h = {0};
    int rc = open_handoff(&h, ZMQ_DEALER, at, err);
    if (rc == 0)
        rc = ask(&h, at, key, rank, wait, name, len, starts, err);
    if (rc == 0) { /* events before the answer are the connections before rank 0's */
        events(h.monitor, at, err);
        char ack[TEXT];
        snprintf(ack, sizeof ack, TAG "ack %d %s", rank, key);
        zmq_send(h.sock, ack, strlen(ack), ZMQ_DONTWAIT);
        for (double deadline = rt_now() + wait; events(h.monitor, at, err) == 0 && rt_now() < deadline;)
            wait_in(h.monitor, NULL, deadline);
    }
    close_handoff(&h);
    return rc;
}

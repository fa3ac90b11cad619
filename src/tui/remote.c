/* The wire's rows and helpers, shared by the job's monitor and the attached workbench. */
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "tui/remote.h"

static void tidy_hello(void *msg, size_t len)
{
    tui_remote_hello *h = msg;
    h->refused[sizeof h->refused - 1] = 0;
}

static void tidy_status(void *msg, size_t len)
{
    tui_remote_status *rs = msg;
    rs->st.error[sizeof rs->st.error - 1] = 0;
}

/* Only the first nodes travel: the count is what the length holds. */
static void tidy_stats(void *msg, size_t len)
{
    tui_remote_stats *st = msg;
    int nodes = (int)((len - offsetof(tui_remote_stats, nodes)) / sizeof(tui_node));
    for (int i = 0; i < TUI_STATS_ROWS; i++) {
        st->traffic[i].type[sizeof st->traffic[i].type - 1] = 0;
        st->traffic[i].peer[sizeof st->traffic[i].peer - 1] = 0;
    }
    for (int i = 0; i < nodes; i++) {
        st->nodes[i].host[sizeof st->nodes[i].host - 1] = 0;
        st->nodes[i].role[sizeof st->nodes[i].role - 1] = 0;
    }
    st->nnodes = st->nnodes < nodes ? st->nnodes : nodes;
    st->nworkers = st->nworkers < 0 ? 0 : st->nworkers < TUI_MAX_WORKERS ? st->nworkers : TUI_MAX_WORKERS;
    for (int i = 0; i < st->nworkers; i++) {
        singa_worker_time *w = &st->workers[i];
        uint8_t flag; /* a bool off the wire may hold any byte */
        memcpy(&flag, &w->straggler, 1);
        w->straggler = flag != 0;
        w->host[sizeof w->host - 1] = 0;
    }
    st->nlinks = st->nlinks < 0 ? 0 : st->nlinks < TUI_MAX_LINKS ? st->nlinks : TUI_MAX_LINKS;
    st->rejoins.lost[sizeof st->rejoins.lost - 1] = 0;
    st->rejoins.group[sizeof st->rejoins.group - 1] = 0;
}

typedef struct row {
    size_t min, max, unit;
    void (*tidy)(void *msg, size_t len);
} row;

#define ROW(name, min, max, unit, tidy, at_attach, at_job) [TUI_REMOTE_##name] = {min, max, unit, tidy},
static const row rows[TUI_REMOTE_COUNT] = {TUI_REMOTE_MESSAGES(ROW)};
#undef ROW

int tui_remote_decode(const void *frame, size_t len, tui_remote_msg *out)
{
    const unsigned char *b = frame;
    *out = (tui_remote_msg){0};
    if (len < 1 || b[0] == TUI_REMOTE_NONE || b[0] >= TUI_REMOTE_COUNT)
        return -1;
    const row *r = &rows[b[0]];
    size_t n = len - 1;
    if (n < r->min || n > r->max || n % r->unit)
        return -1;
    /* zeroed up to the largest the row allows, so a short STATS reads as no more nodes */
    if (!(out->data = calloc(1, (r->max != TUI_REMOTE_ANY ? r->max : n) + 1)))
        return -1;
    memcpy(out->data, b + 1, n);
    out->type = b[0];
    out->len = n;
    if (r->tidy)
        r->tidy(out->data, n);
    return 0;
}

void tui_remote_msg_free(tui_remote_msg *m)
{
    free(m->data);
    m->data = NULL;
}

uint32_t tui_remote_sizes(void)
{
    return (uint32_t)(sizeof(tui_remote_status) * 31u + sizeof(tui_sample) * 7u + sizeof(tui_remote_stats));
}

int tui_remote_send(void *sock, const void *to, size_t to_len, int type, const void *payload, size_t len)
{
    zmq_msg_t m;
    if (zmq_msg_init_size(&m, len + 1) < 0)
        return -1;
    unsigned char *p = zmq_msg_data(&m);
    p[0] = (unsigned char)type;
    if (len)
        memcpy(p + 1, payload, len);
    if (to_len && zmq_send(sock, to, to_len, ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0) {
        zmq_msg_close(&m);
        return -1;
    }
    int rc = zmq_msg_send(&m, sock, ZMQ_DONTWAIT);
    if (rc < 0)
        zmq_msg_close(&m);
    return rc < 0 ? -1 : 0;
}

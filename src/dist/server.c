/* A server: holds its slices of every param, sums the updates of a worker group's step until
 * all of its workers have contributed, applies the job's updater (any of the catalog's, kLua
 * included) with scale 1 / contributions, and answers every process of the group.  Worker groups
 * sharing a server group are not waited for by each other (Downpour).
 *
 * Server groups (Hogwild) keep their own copies: a server that is not a slice's master sends the
 * master its delta since the last sync every sync_freq updates and merges the master's answer as
 * value = master + (value - value when the delta left).  Values a worker group here reads in
 * place change only while that group waits for its update, so a delta or an answer that arrives
 * in between waits for the slice's next update. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dist/dist.h"
#include "singa/updater.h"

/* A worker group's contributions to the current step of a slice. */
typedef struct pending {
    int step, count;
    float *direct; /* the only contribution, used in place */
    bool summed;   /* contributions summed into the slice's buffer */
} pending;

typedef struct srv_slice {
    int slice;          /* global index */
    int store;          /* its param in the server's store */
    float *data;
    int shared_group;   /* the worker group whose copy here `data` is, or -1 */
    bool ready;         /* its values are in */
    int version;
    float *acc;         /* summed contributions */
    pending *pend;      /* per worker group served */
    uint64_t get_from;  /* groups (bit g - first group) whose GET waits for the values */
    /* Server-group sync. */
    int since;          /* updates since the last delta left */
    float *last, *snap, *master;
    bool out, answered; /* a delta is out; its answer waits to be merged */
    float *delta;       /* master: deltas received and not yet added */
    uint64_t delta_from; /* master: server groups to answer */
} srv_slice;

struct dist_server {
    dist_rt *rt;
    int group, id;
    int first_group, ngroups; /* the worker groups it serves */
    singa_params store;       /* one param per slice, for the updater */
    singa_updater *upd;
    srv_slice *sl;
    int nsl;
    int *local;               /* global slice -> index in sl, or -1 */
    void *sock;
};

size_t dist_server_size(void) { return sizeof(dist_server); }

dist_server *dist_server_at(dist_rt *rt, int i) { return &rt->servers[i]; }

/* The one worker group here this server group serves, whose values it may then update in place;
 * -1 when there is none or several. */
static int sole_local_group(const dist_server *s)
{
    const dist_rt *rt = s->rt;
    int found = -1;
    for (int g = s->first_group; g < s->first_group + s->ngroups; g++) {
        if (!rt->replica || !rt->replica[g])
            continue;
        if (found >= 0)
            return -1;
        found = g;
    }
    return rt->c->share_memory ? found : -1;
}

int dist_server_create(dist_rt *rt, dist_server *s, int group, int id, singa_err *err)
{
    const singa_cluster *c = rt->c;
    *s = (dist_server){.rt = rt, .group = group, .id = id};
    s->ngroups = c->nworker_groups / c->nserver_groups;
    s->first_group = group * s->ngroups;
    singa_params_init(&s->store);
    if (s->ngroups > 64 || c->nserver_groups > 64)
        return singa_err_set(err, "cluster: a server group serves at most 64 worker groups, and at most 64 server groups sync");
    if (!(s->sl = calloc((size_t)rt->nslices, sizeof *s->sl)) || !(s->local = malloc((size_t)rt->nslices * sizeof *s->local)))
        return singa_err_set(err, "out of memory");
    int shared = sole_local_group(s);
    for (int k = 0; k < rt->nslices; k++) {
        const dist_slice *d = &rt->slices[k];
        s->local[k] = -1;
        if (d->server != id)
            continue;
        const dist_param *dp = &rt->params[d->param];
        int len = (int)d->len;
        singa_param *p = singa_params_declare(&s->store, dp->name, dp->layer, 1, &len, err);
        if (!p)
            return -1;
        p->trained = true;
        p->lr_scale = dp->lr_scale;
        p->wd_scale = dp->wd_scale;
        singa_tensor_free(&p->grad);
        srv_slice *x = &s->sl[s->nsl];
        *x = (srv_slice){.slice = k, .store = p->id, .shared_group = shared};
        if (shared >= 0) { /* update the group's values in place */
            singa_tensor view = p->data;
            singa_tensor_free(&p->data);
            view.data = rt->replica[shared][d->param]->data.data + d->offset;
            view.owns = false;
            p->data = view;
        }
        x->data = p->data.data;
        if (!(x->pend = calloc((size_t)s->ngroups, sizeof *x->pend)))
            return singa_err_set(err, "out of memory");
        s->local[k] = s->nsl++;
    }
    return singa_updater_create_ex(&s->upd, singa_conf_get(rt->conf, "updater"), &s->store,
                                   SINGA_UPDATER_SEPARATE_GRAD, err);
}

void dist_server_free(dist_server *s)
{
    if (!s->rt)
        return;
    singa_updater_free(s->upd);
    for (int i = 0; i < s->nsl; i++) {
        srv_slice *x = &s->sl[i];
        free(x->acc);
        free(x->pend);
        free(x->last);
        free(x->snap);
        free(x->master);
        free(x->delta);
    }
    singa_params_free(&s->store);
    free(s->sl);
    free(s->local);
}

static msg_addr self(const dist_server *s)
{
    return (msg_addr){ENT_SERVER, (uint16_t)s->group, (uint16_t)s->id, (uint16_t)s->rt->rank};
}

static void fail(dist_server *s, const singa_err *err)
{
    msg m = {.type = MSG_ABORT, .src = self(s)};
    dist_send(s->sock, &m, err->msg, strlen(err->msg));
}

/* Answers every process with workers of group g: values unless they read this very memory. */
static void answer_group(dist_server *s, srv_slice *x, int type, int g, int version)
{
    const dist_rt *rt = s->rt;
    for (int j = 0; j < rt->c->nworkers_per_group; j++) {
        int p = dist_worker_proc(rt, g, j);
        if (j > 0 && dist_worker_proc(rt, g, j - 1) == p) /* a process holds consecutive workers */
            continue;
        msg m = {.type = (uint8_t)type, .src = self(s), .dst = {ENT_STUB, (uint16_t)g, 0, (uint16_t)p},
                 .slice = x->slice, .step = version};
        bool in_place = p == rt->rank && x->shared_group == g;
        if (!in_place)
            m.flags = MSG_F_VALUES;
        dist_send(s->sock, &m, in_place ? NULL : x->data, in_place ? 0 : rt->slices[x->slice].len * sizeof(float));
    }
}

static float *copy_of(const float *src, float **dst, size_t n)
{
    if (!*dst && !(*dst = malloc(n * sizeof(float))))
        return NULL;
    memcpy(*dst, src, n * sizeof(float));
    return *dst;
}

/* After an update, while the group that reads the values in place waits: deltas from other
 * server groups are added and answered (master), the master's answer is merged (others), and a
 * new delta leaves every sync_freq updates. */
static int sync_groups(dist_server *s, srv_slice *x)
{
    const dist_rt *rt = s->rt;
    size_t n = rt->slices[x->slice].len;
    int nsg = rt->c->nserver_groups, master = x->slice % nsg;
    if (nsg == 1)
        return 0;
    if (s->group == master) {
        if (!x->delta_from)
            return 0;
        for (size_t i = 0; i < n; i++)
            x->data[i] += x->delta[i];
        memset(x->delta, 0, n * sizeof(float));
        for (int g = 0; g < nsg; g++)
            if (x->delta_from >> g & 1) {
                msg m = {.type = MSG_SYNC_REPLY, .flags = MSG_F_VALUES, .src = self(s),
                         .dst = {ENT_SERVER, (uint16_t)g, (uint16_t)s->id, (uint16_t)dist_server_proc(rt, g, s->id)},
                         .slice = x->slice};
                dist_send(s->sock, &m, x->data, n * sizeof(float));
            }
        x->delta_from = 0;
        return 0;
    }
    if (x->answered) {
        for (size_t i = 0; i < n; i++) {
            x->data[i] = x->master[i] + (x->data[i] - x->snap[i]);
            x->last[i] = x->master[i];
        }
        x->answered = x->out = false;
    }
    if (x->out || ++x->since < rt->c->sync_freq)
        return 0;
    if (!copy_of(x->data, &x->snap, n) || (!x->master && !(x->master = malloc(n * sizeof(float)))))
        return -1;
    for (size_t i = 0; i < n; i++) /* the delta, built in `master` until the answer overwrites it */
        x->master[i] = x->data[i] - x->last[i];
    msg m = {.type = MSG_SYNC, .flags = MSG_F_VALUES, .src = self(s),
             .dst = {ENT_SERVER, (uint16_t)master, (uint16_t)s->id, (uint16_t)dist_server_proc(rt, master, s->id)},
             .slice = x->slice};
    dist_send(s->sock, &m, x->master, n * sizeof(float));
    x->since = 0;
    x->out = true;
    return 0;
}

/* Adds one contribution; once the group's every worker is in, updates and answers. */
static int on_update(dist_server *s, srv_slice *x, const msg *m, zmq_msg_t *payload, singa_err *err)
{
    const dist_rt *rt = s->rt;
    size_t n = rt->slices[x->slice].len;
    int g = m->src.group;
    pending *p = &x->pend[g - s->first_group];
    const float *grad;
    if (m->flags & MSG_F_PTR)
        grad = (const float *)(uintptr_t)m->ptr;
    else if ((m->flags & MSG_F_VALUES) && zmq_msg_size(payload) == n * sizeof(float))
        grad = zmq_msg_data(payload);
    else
        return 1;
    int need = rt->c->nworkers_per_group;
    if ((int)m->count < 1 || p->count + (int)m->count > need || (p->count && m->step != p->step))
        return 1;
    if (p->count == 0) {
        p->step = m->step;
        p->summed = false;
        p->direct = (m->flags & MSG_F_PTR) && (int)m->count == need ? (float *)grad : NULL;
    }
    if (!p->direct) {
        if (!x->acc && !(x->acc = malloc(n * sizeof(float))))
            return singa_err_set(err, "server %d.%d: out of memory", s->group, s->id);
        if (!p->summed)
            memcpy(x->acc, grad, n * sizeof(float));
        else
            for (size_t i = 0; i < n; i++)
                x->acc[i] += grad[i];
        p->summed = true;
    }
    p->count += (int)m->count;
    if (p->count < need)
        return 0;
    p->count = 0;
    if (singa_updater_apply_one(s->upd, x->store, p->step, p->direct ? p->direct : x->acc, 1.0f / (float)need, err) < 0)
        return singa_err_prefix(err, "server %d.%d: ", s->group, s->id);
    x->version++;
    if (sync_groups(s, x) < 0)
        return singa_err_set(err, "server %d.%d: out of memory", s->group, s->id);
    answer_group(s, x, MSG_UPDATE_REPLY, g, p->step + 1);
    return 0;
}

static int on_put(dist_server *s, srv_slice *x, const msg *m)
{
    if (x->ready || !(m->flags & MSG_F_PTR) || !m->ptr)
        return 1;
    size_t n = s->rt->slices[x->slice].len;
    if (x->shared_group < 0)
        memcpy(x->data, (const float *)(uintptr_t)m->ptr, n * sizeof(float));
    if (s->rt->c->nserver_groups > 1 && !copy_of(x->data, &x->last, n)) /* deltas count from here */
        return -1;
    x->ready = true;
    for (int g = s->first_group; g < s->first_group + s->ngroups; g++)
        if (x->get_from >> (g - s->first_group) & 1)
            answer_group(s, x, MSG_GET_REPLY, g, x->version);
    x->get_from = 0;
    return 0;
}

static int on_sync(dist_server *s, srv_slice *x, const msg *m, zmq_msg_t *payload)
{
    size_t n = s->rt->slices[x->slice].len;
    const float *v = zmq_msg_data(payload);
    if (!(m->flags & MSG_F_VALUES) || zmq_msg_size(payload) != n * sizeof(float) ||
        m->src.group >= s->rt->c->nserver_groups)
        return 1;
    if (m->type == MSG_SYNC) {
        if (x->slice % s->rt->c->nserver_groups != s->group ||
            (!x->delta && !(x->delta = calloc(n, sizeof(float)))))
            return 1;
        for (size_t i = 0; i < n; i++)
            x->delta[i] += v[i];
        x->delta_from |= 1ull << m->src.group;
        return 0;
    }
    if (!x->out || x->answered)
        return 1;
    memcpy(x->master, v, n * sizeof(float));
    x->answered = true;
    return 0;
}

/* Acts on one message: 0, 1 for a message dropped, -1 on failure (err set). */
static int handle(dist_server *s, const msg *m, zmq_msg_t *payload, singa_err *err)
{
    if (m->slice < 0 || m->slice >= s->rt->nslices || s->local[m->slice] < 0)
        return 1;
    srv_slice *x = &s->sl[s->local[m->slice]];
    bool from_group = m->src.group >= s->first_group && m->src.group < s->first_group + s->ngroups;
    switch (m->type) {
    case MSG_PUT:
        if (!from_group)
            return 1;
        if (on_put(s, x, m) < 0)
            return singa_err_set(err, "server %d.%d: out of memory", s->group, s->id);
        return 0;
    case MSG_GET:
        if (!from_group)
            return 1;
        if (x->ready)
            answer_group(s, x, MSG_GET_REPLY, m->src.group, x->version);
        else
            x->get_from |= 1ull << (m->src.group - s->first_group);
        return 0;
    case MSG_UPDATE:
        return from_group && x->ready ? on_update(s, x, m, payload, err) : 1;
    case MSG_SYNC:
    case MSG_SYNC_REPLY:
        return on_sync(s, x, m, payload);
    default:
        return 1;
    }
}

void *dist_server_main(void *arg)
{
    dist_server *s = arg;
    dist_rt *rt = s->rt;
    char id[32];
    int linger = 0;
    dist_identity(id, sizeof id, ENT_SERVER, s->group, s->id);
    s->sock = zmq_socket(rt->zmq, ZMQ_DEALER);
    if (!s->sock)
        return NULL;
    zmq_setsockopt(s->sock, ZMQ_ROUTING_ID, id, strlen(id));
    zmq_setsockopt(s->sock, ZMQ_LINGER, &linger, sizeof linger);
    zmq_connect(s->sock, rt->endpoint);
    msg hello = {.type = MSG_HELLO, .src = self(s), .dst = {ENT_STUB, 0, 0, (uint16_t)rt->rank}};
    dist_send(s->sock, &hello, NULL, 0);
    bool failed = false;
    for (;;) {
        msg m;
        zmq_msg_t payload;
        int rc = msg_recv(s->sock, false, NULL, 0, &m, &payload);
        if (rc < 0 || (rc == 0 && m.type == MSG_STOP)) {
            zmq_msg_close(&payload);
            break;
        }
        singa_err err;
        if (rc == 0 && !failed && handle(s, &m, &payload, &err) < 0) {
            failed = true; /* stays to drain until the stub stops everyone */
            fail(s, &err);
        }
        zmq_msg_close(&payload);
    }
    zmq_close(s->sock);
    return NULL;
}

/* cluster.outer: local SGD with an outer optimizer (DiLoCo, Douillard et al. 2023) on the server
 * groups' sync.  Each server group trains its own copy (server.h); every sync_freq updates of a
 * slice, and at its group's last update, the slice's round r = ceil(version / sync_freq) starts:
 * its delta since the last sync, last - value, goes to every other server group, and its worker
 * group's answer waits.  Once every group's delta of the round is in (or the group left the rounds
 * at its last step), each group sums them in the order of the groups, so that every group gets the
 * same bits, and applies the outer updater to `last` with that sum times 1 / groups as its
 * gradient at step r - 1: value = last = the result, and the answer leaves.  So every group
 * continues from the same values, whatever the timing, and the final flush finds nothing to add.
 *
 * Between processes the deltas travel as compress.values says (fp16 or bf16); every group rounds
 * its own the same way before it counts, so the groups still agree bit for bit.
 *
 * A group sends round r's delta only after round r - 1 ended here, which needed the delta of every
 * group still in the rounds, so a delta is of the open round or the next: two buffers, by parity.
 * Checkpoints hold `last` and the outer updater's state ("outer/<slice>/last", "outer/<slice>/<slot>"),
 * resharded with the params (ckpt/set.c); a job without cluster.outer ignores them. */
#include <stdlib.h>
#include <string.h>

#include "runtime/compress.h"
#include "runtime/server.h"
#include "singa/updater.h"

/* The deltas' codec: compress.values' fp16 or bf16 when the job spans processes, else none. */
static singa_compress codec(const rt_ctx *rt)
{
    singa_compress v = rt_compress_of_values(&rt->c->compress);
    if (rt->nprocs == 1 || (v.kind != SINGA_COMPRESS_FP16 && v.kind != SINGA_COMPRESS_BF16))
        v.kind = v.values = SINGA_COMPRESS_NONE;
    return v;
}

/* Group g's delta of the round of parity par (NULL: out of memory). */
static float *delta_of(rt_server *s, srv_slice *x, int par, int g)
{
    float **in = x->round_in[par];
    if (!in && !(in = x->round_in[par] = calloc((size_t)s->rt->c->nserver_groups, sizeof *in)))
        return NULL;
    if (!in[g])
        in[g] = malloc(s->rt->slices[x->slice].len * sizeof(float));
    return in[g];
}

/* To every other server group still in the rounds: this group's delta d (packed: its encoding,
 * for other processes), or with d NULL that it leaves from round r on. */
static void send_round(rt_server *s, srv_slice *x, int r, const float *d, const uint8_t *packed, size_t bytes)
{
    const rt_ctx *rt = s->rt;
    size_t n = rt->slices[x->slice].len;
    for (int h = 0; h < rt->c->nserver_groups; h++) {
        int p = rt_server_proc(rt, h, s->id);
        if (h == s->group || (x->round_left >> h & 1))
            continue;
        msg m = {.type = MSG_SYNC, .flags = d ? MSG_F_VALUES : MSG_F_LAST, .src = srv_self(s),
                 .dst = {ENT_SERVER, (uint16_t)h, (uint16_t)s->id, (uint16_t)p}, .slice = x->slice, .step = r};
        if (d && packed && p != rt->rank) {
            m.flags |= MSG_F_PACKED;
            rt_send(s->sock, &m, packed, bytes);
        } else {
            rt_send(s->sock, &m, d, d ? n * sizeof(float) : 0);
        }
    }
}

/* The open round ends once every other group's delta is in or it left: the outer update, then the
 * waiting answer. */
static int try_end(rt_server *s, srv_slice *x, singa_err *err)
{
    const rt_ctx *rt = s->rt;
    size_t n = rt->slices[x->slice].len;
    int nsg = rt->c->nserver_groups, r = x->round_open, par = r & 1, count = 0;
    uint64_t others = (nsg == 64 ? ~0ull : (1ull << nsg) - 1) & ~(1ull << s->group);
    if (!r || (others & ~(x->round_got[par] | x->round_left)))
        return 0;
    for (int h = 0; h < nsg; h++)
        if (x->round_got[par] >> h & 1) {
            const float *d = x->round_in[par][h];
            if (count++ == 0)
                memcpy(s->round_sum, d, n * sizeof(float));
            else
                for (size_t i = 0; i < n; i++)
                    s->round_sum[i] += d[i];
        }
    memcpy(x->data, x->last, n * sizeof(float));
    if (singa_updater_apply_one(s->outer, x->store, r - 1, s->round_sum, 1.0f / (float)count, err) < 0)
        return singa_err_prefix(err, "server %d.%d: cluster.outer: ", s->group, s->id);
    memcpy(x->last, x->data, n * sizeof(float));
    x->round_got[par] = 0;
    x->round_open = 0;
    if (x->round_final) {
        send_round(s, x, r + 1, NULL, NULL, 0);
        x->round_left |= 1ull << s->group;
    }
    srv_answer_update(s, x, x->round_group);
    return 0;
}

int srv_outer_sync(rt_server *s, srv_slice *x, int g, bool last, singa_err *err)
{
    const rt_ctx *rt = s->rt;
    size_t n = rt->slices[x->slice].len;
    int f = rt->c->sync_freq, r = (x->version + f - 1) / f, par = r & 1;
    if ((x->version % f && !last) || (x->round_left >> s->group & 1))
        return 0;
    float *d = delta_of(s, x, par, s->group);
    if (!d)
        return singa_err_set(err, "server %d.%d: out of memory", s->group, s->id);
    for (size_t i = 0; i < n; i++)
        d[i] = x->last[i] - x->data[i];
    singa_compress v = codec(rt);
    size_t bytes = rt_compress_bytes(&v, n);
    if (v.kind != SINGA_COMPRESS_NONE) { /* rounded here as the others will have it */
        rt_compress_encode(&v, d, n, NULL, NULL, s->round_packed);
        rt_compress_decode(&v, s->round_packed, bytes, d, n);
    }
    send_round(s, x, r, d, v.kind != SINGA_COMPRESS_NONE ? s->round_packed : NULL, bytes);
    x->round_got[par] |= 1ull << s->group;
    x->round_open = r;
    x->round_group = g;
    x->round_final = last;
    return try_end(s, x, err) < 0 ? -1 : 1;
}

/* Another group's delta of round m->step, or its word that it leaves the rounds. */
int srv_outer_on_sync(rt_server *s, srv_slice *x, const msg *m, zmq_msg_t *payload, singa_err *err)
{
    const rt_ctx *rt = s->rt;
    size_t n = rt->slices[x->slice].len, size = zmq_msg_size(payload);
    int h = m->src.group, par = m->step & 1;
    if (m->type != MSG_SYNC || h >= rt->c->nserver_groups || h == s->group || m->step < 1 ||
        (x->round_left >> h & 1))
        return 1;
    if (!(m->flags & MSG_F_VALUES)) {
        if (!(m->flags & MSG_F_LAST))
            return 1;
        x->round_left |= 1ull << h;
        return try_end(s, x, err);
    }
    singa_compress v = codec(rt);
    float *d = delta_of(s, x, par, h);
    if (!d)
        return singa_err_set(err, "server %d.%d: out of memory", s->group, s->id);
    if (m->flags & MSG_F_PACKED) {
        if (v.kind == SINGA_COMPRESS_NONE || rt_compress_decode(&v, zmq_msg_data(payload), size, d, n) < 0)
            return 1;
    } else if (size == n * sizeof(float)) {
        memcpy(d, zmq_msg_data(payload), size);
    } else {
        return 1;
    }
    x->round_got[par] |= 1ull << h;
    return try_end(s, x, err);
}

/* The name of slot k's entry ("last" for k < 0) of slice `param`. */
static void entry_name(const rt_server *s, char *buf, size_t len, const char *param, int k)
{
    snprintf(buf, len, "outer/%s/%s", param, k < 0 ? "last" : singa_updater_slot_name(s->outer, k));
}

int srv_outer_shard(rt_server *s, srv_slice *x, singa_ckpt *c, const char *param, singa_err *err)
{
    int len = (int)s->rt->slices[x->slice].len;
    char name[600];
    for (int k = -1; s->outer && k < singa_updater_nslots(s->outer); k++) {
        singa_tensor *t = k < 0 ? NULL : singa_updater_slot(s->outer, x->store, k);
        if (k >= 0 && !t)
            continue;
        entry_name(s, name, sizeof name, param, k);
        if (singa_ckpt_add(c, name, SINGA_CKPT_F32, 1, &len, k < 0 ? x->last : t->data, err) < 0)
            return -1;
    }
    return 0;
}

/* `last` and the outer state from the whole model, where it has them (a checkpoint of a job without
 * cluster.outer has not: then the values loaded are the last synced, and the state starts at 0). */
int srv_outer_load(rt_server *s, srv_slice *x, const singa_ckpt_set *set, bool copy, singa_err *err)
{
    const rt_ctx *rt = s->rt;
    const rt_slice *d = &rt->slices[x->slice];
    const rt_param *dp = &rt->params[d->param];
    char name[600];
    for (int k = -1; s->outer && k < singa_updater_nslots(s->outer); k++) {
        singa_tensor *t = k < 0 ? NULL : singa_updater_slot(s->outer, x->store, k);
        entry_name(s, name, sizeof name, dp->name, k);
        const singa_ckpt_entry *e = singa_ckpt_find(&set->model, name);
        if ((k >= 0 && !t) || !e)
            continue;
        if (e->dtype != SINGA_CKPT_F32 || e->bytes != dp->size * sizeof(float))
            return singa_err_set(err, "resume: checkpoint '%s': tensor '%s' is not of the param's size", set->where,
                                 name);
        if (!copy)
            continue;
        float *to = t ? t->data : (x->last ? x->last : (x->last = malloc(d->len * sizeof(float))));
        if (!to)
            return singa_err_set(err, "out of memory");
        memcpy(to, (const float *)e->data + d->offset, d->len * sizeof(float));
    }
    return 0;
}

void srv_outer_free(rt_server *s, srv_slice *x)
{
    for (int par = 0; par < 2; par++) {
        for (int g = 0; x->round_in[par] && g < s->rt->c->nserver_groups; g++)
            free(x->round_in[par][g]);
        free(x->round_in[par]);
    }
}

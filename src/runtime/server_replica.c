/* A server's side of an update every replica applies itself (replica_update.h): it sums a round's
 * contributions to a slice as it sums gradients; a sum of P is orthogonalised (in this one place)
 * and P-hat goes back; a sum of Q' (or a dense sum, rounded to fp16 first when it came so) is
 * the update (top-k's: the sum of the processes' pairs, sent back as the pairs of its nonzero
 * values), which the server applies to its slice with the job's updater, then sends the sum, not
 * the values, back with the lr scale it used, so that every replica applies the same. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/compress.h"
#include "runtime/replica_update.h"
#include "runtime/server.h"

static const singa_compress fp16 = {SINGA_COMPRESS_FP16, 0, false, SINGA_COMPRESS_FP16};

/* The bytes a message of `round` (msg_round; -1: none) brings for a slice of geometry ge (0: it does not go so). */
static size_t expected(const rt_ctx *rt, const rt_psgd_geom *ge, int round, bool half)
{
    if (round < 0)
        return 0;
    if (ge->mode == RT_PSGD_SPARSE)
        return round == MSG_ROUND_SUM && half ? rt_compress_bytes(&rt->c->compress, ge->n) : 0;
    if (round != MSG_ROUND_SUM)
        return ge->mode != RT_PSGD_LOWRANK || half ? 0
               : (round == MSG_ROUND_P ? rt_psgd_p_len(ge) : rt_psgd_q_len(ge)) * sizeof(float);
    return half != (ge->mode == RT_PSGD_F16) ? 0 : (half ? 2 : sizeof(float)) * ge->n;
}

static int buffers(srv_slice *x, const rt_ctx *rt)
{
    if (x->psum)
        return 0;
    rt_psgd_geom ge = rt_replica_mode_at(rt, x->slice, INT_MAX);
    size_t most = ge.n;
    if (ge.mode == RT_PSGD_LOWRANK) { /* pin is also rt_replica_expand_apply's scratch */
        size_t expand = rt_psgd_q_len(&ge) + ge.cols, p = rt_psgd_p_len(&ge);
        most = p > most ? p : most;
        most = expand > most ? expand : most;
        if (!(x->phat = malloc(rt_psgd_p_len(&ge) * sizeof(float))))
            return -1;
    }
    x->psum = malloc((most + 1) * sizeof(float));
    x->pin = malloc((most + 1) * sizeof(float));
    return x->psum && x->pin ? 0 : -1;
}

/* Adds a contribution of `floats` values to the round's sum (the first is the sum), packed by
 * codec c. */
static int take(srv_slice *x, const msg *m, zmq_msg_t *payload, size_t floats, const singa_compress *c)
{
    float *to = x->pcount ? x->pin : x->psum;
    if (m->flags & MSG_F_PACKED) {
        if (rt_compress_decode(c, zmq_msg_data(payload), zmq_msg_size(payload), to, floats) < 0)
            return -1;
    } else {
        memcpy(to, zmq_msg_data(payload), floats * sizeof(float));
    }
    for (size_t i = 0; x->pcount && i < floats; i++)
        x->psum[i] += x->pin[i];
    return 0;
}

/* To every process with workers of group g. */
static void answer(rt_server *s, srv_slice *x, int g, uint8_t flags, const void *body, size_t bytes)
{
    const rt_ctx *rt = s->rt;
    for (int j = 0; j < rt->c->nworkers_per_group; j++) {
        int p = rt_worker_proc(rt, g, j);
        if (j > 0 && rt_worker_proc(rt, g, j - 1) == p)
            continue;
        msg m = {.type = MSG_UPDATE_REPLY, .flags = flags, .src = srv_self(s),
                 .dst = {ENT_STUB, (uint16_t)g, 0, (uint16_t)p}, .slice = x->slice, .step = x->pstep + 1,
                 .offset = x->pround, .len = bytes / sizeof(float)};
        rt_send(s->sock, &m, body, bytes);
    }
}

/* The round is summed: P-hat goes back; or the update is applied here and its sum goes back. */
static int complete(rt_server *s, srv_slice *x, const rt_psgd_geom *ge, int g, int need, singa_err *err)
{
    uint8_t flags = MSG_F_APPLY | MSG_F_VALUES;
    float *grad = s->unpacked, lr_scale;
    size_t n = ge->n, bytes;
    void *body = x->psum;
    rt_psgd_update f = {x->phat, x->psum, ge, x->pin}, *factors = NULL;
    if (x->pround == MSG_ROUND_P) {
        rt_psgd_orthogonalise(x->psum, ge);
        memcpy(x->phat, x->psum, rt_psgd_p_len(ge) * sizeof(float));
        answer(s, x, g, flags, x->psum, rt_psgd_p_len(ge) * sizeof(float));
        return 0;
    }
    if (x->pround == MSG_ROUND_Q) {
        factors = &f;
        bytes = rt_psgd_q_len(ge) * sizeof(float);
    } else if (ge->mode == RT_PSGD_SPARSE) { /* the pairs of the sum's nonzero values, and they apply */
        bytes = rt_compress_pairs(x->psum, n, s->packed);
        rt_compress_from_pairs(s->packed, bytes, grad, n);
        body = s->packed;
        flags |= MSG_F_PACKED;
    } else if (ge->mode == RT_PSGD_F16) { /* what goes back is what applies */
        rt_compress_encode(&fp16, x->psum, n, NULL, NULL, s->packed);
        rt_compress_decode(&fp16, s->packed, 2 * n, grad, n);
        body = s->packed;
        bytes = 2 * n;
        flags |= MSG_F_PACKED;
    } else {
        memcpy(grad, x->psum, n * sizeof(float)); /* the updater may write its gradient */
        bytes = n * sizeof(float);
    }
    float scale = s->rt->cut ? 1.0f : 1.0f / (float)need;
    if (srv_apply_grad(s, x, x->pstep, grad, factors, scale, &lr_scale, err) < 0)
        return -1;
    x->version++;
    memcpy((uint8_t *)body + bytes, &lr_scale, sizeof lr_scale);
    answer(s, x, g, (uint8_t)(flags | (x->pflags & MSG_F_STEP)), body, bytes + sizeof lr_scale);
    return 0;
}

int srv_on_replica_update(rt_server *s, srv_slice *x, const msg *m, zmq_msg_t *payload, singa_err *err)
{
    rt_ctx *rt = s->rt;
    int g = m->src.group, round = m->offset <= MSG_ROUND_Q ? (int)m->offset : -1;
    bool half = m->flags & MSG_F_PACKED;
    if (!rt->self_update || !srv_from_group(s, m) || !x->ready || m->src.proc >= rt->nprocs)
        return 1;
    int need = rt_senders(rt, g);
    rt_psgd_geom ge = rt_replica_mode_at(rt, x->slice, m->step);
    size_t bytes = expected(rt, &ge, round, half);
    if (!bytes || zmq_msg_size(payload) != bytes || (int)m->count < 1 || x->pcount + (int)m->count > need ||
        (x->pcount && (m->step != x->pstep || round != x->pround)) ||
        (round == MSG_ROUND_Q && !x->pcount && (x->pround != MSG_ROUND_P || m->step != x->pstep)))
        return 1;
    if (buffers(x, rt) < 0)
        return singa_err_set(err, "server %d.%d: out of memory", s->group, s->id);
    if (x->pcount == 0) {
        if (round != MSG_ROUND_Q) /* a step's first round */
            x->pflags = 0;
        x->pstep = m->step;
        x->pround = (uint8_t)round;
    }
    bool sparse = ge.mode == RT_PSGD_SPARSE;
    size_t floats = sparse ? ge.n : half ? bytes / 2 : bytes / sizeof(float);
    if (take(x, m, payload, floats, sparse ? &rt->c->compress : &fp16) < 0)
        return 1;
    x->pflags |= m->flags & MSG_F_STEP;
    x->pcount += (int)m->count;
    if (x->pcount < need)
        return 0;
    x->pcount = 0;
    if (x->pflags & MSG_F_LAST)
        rt_stop_before(rt, g, x->pstep + 1);
    return complete(s, x, &ge, g, need, err);
}

/* The stub's side of an update every replica applies itself (replica_update.h): a group's summed
 * gradient leaves as each slice's P (or dense, fp16 for 1-D params, float32 for those too small
 * for the rank and before powersgd_start; or, with top-k, as its pairs); the servers' P-hat comes
 * back, Q' = M^T P-hat leaves; the summed Q' (or the sum, or its pairs) comes back with the
 * server's lr scale, and the replica here applies P-hat Q'^T (or the sum) with its own updater,
 * unless a server here updated it in place. */
#include <string.h>

#include "runtime/compress.h"
#include "runtime/replica_update.h"
#include "runtime/stub.h"

static const singa_compress fp16 = {SINGA_COMPRESS_FP16, 0, false, SINGA_COMPRESS_FP16};

/* One message of `round` of group g's update of slice k to its server: len values in bytes. */
static void send_part(rt_stub *s, int g, int k, msg_round round, uint8_t flags, int step, const void *data,
                      size_t bytes, size_t len)
{
    const rt_slice *sl = &s->rt->slices[k];
    msg u = {.type = MSG_UPDATE, .flags = (uint8_t)(flags | MSG_F_APPLY | MSG_F_VALUES), .src = stub_addr(s, g),
             .dst = stub_server_addr(s->rt, s->groups[g].server_group, sl->server), .slice = k, .step = step,
             .count = (uint32_t)s->groups[g].nlocal, .offset = round, .len = len};
    stub_route(s, &u, data, bytes);
}

void stub_replica_send(rt_stub *s, int g, int param, const float *agg, int step, uint8_t flags)
{
    rt_ctx *rt = s->rt;
    for (int i = 0; i < rt->params[param].nslices; i++) {
        int k = rt->params[param].first_slice + i;
        const rt_slice *sl = &rt->slices[k];
        rt_replica_slice *x = &rt->self_update->groups[g].sl[k];
        rt_psgd_geom ge = rt_replica_mode_at(rt, k, step);
        const float *grad = agg + sl->offset;
        x->flags = flags;
        if (ge.mode == RT_PSGD_LOWRANK) {
            rt_psgd_take_left(x->m, grad, x->q, x->p, x->owes ? x->qloc : NULL, rt->self_update->scratch, &ge,
                              rt->self_update->feedback);
            x->owes = false;
            send_part(s, g, k, MSG_ROUND_P, flags, step, x->p, rt_psgd_p_len(&ge) * sizeof(float),
                      rt_psgd_p_len(&ge));
        } else if (ge.mode == RT_PSGD_SPARSE) { /* top-k of gradient + residual, which keeps the rest */
            const singa_compress *c = &rt->c->compress;
            float *const *residual = rt->residual ? rt->residual[g] : NULL;
            rt_compress_encode(c, grad, sl->len, residual ? residual[k] : NULL, s->unpacked, s->packed);
            send_part(s, g, k, MSG_ROUND_SUM, flags | MSG_F_PACKED, step, s->packed, rt_compress_bytes(c, sl->len),
                      sl->len);
        } else if (ge.mode == RT_PSGD_F16) {
            rt_compress_encode(&fp16, grad, sl->len, NULL, NULL, s->packed);
            send_part(s, g, k, MSG_ROUND_SUM, flags | MSG_F_PACKED, step, s->packed, 2 * sl->len, sl->len);
        } else {
            send_part(s, g, k, MSG_ROUND_SUM, flags, step, grad, sl->len * sizeof(float), sl->len);
        }
    }
}

/* P-hat is in: Q' = M^T P-hat leaves; with error feedback M is to keep what the update will not
 * carry of it, which the next step's first pass over M settles (rt_psgd_take_left's owed). */
static int on_phat(rt_stub *s, int g, int k, int step, const rt_psgd_geom *ge, const uint8_t *in, size_t bytes)
{
    rt_replica_slice *x = &s->rt->self_update->groups[g].sl[k];
    if (ge->mode != RT_PSGD_LOWRANK || bytes != rt_psgd_p_len(ge) * sizeof(float))
        return -1;
    memcpy(x->p, in, bytes);
    rt_psgd_right(x->m, x->p, x->qloc, s->rt->self_update->scratch, ge);
    x->owes = s->rt->self_update->feedback;
    send_part(s, g, k, MSG_ROUND_Q, x->flags, step, x->qloc, rt_psgd_q_len(ge) * sizeof(float),
              rt_psgd_q_len(ge));
    return 0;
}

/* The update of slice k into s->unpacked from the answer's body (all but its last float, the lr
 * scale), or its summed Q' into Q (the factors apply as they are, then Q warm-starts from it). */
static int take_update(rt_stub *s, int g, int k, const rt_psgd_geom *ge, const msg *m, const uint8_t *in, size_t body)
{
    rt_replica_slice *x = &s->rt->self_update->groups[g].sl[k];
    size_t n = s->rt->slices[k].len;
    bool half = m->flags & MSG_F_PACKED;
    if (m->offset == MSG_ROUND_Q) {
        if (ge->mode != RT_PSGD_LOWRANK || body != rt_psgd_q_len(ge) * sizeof(float))
            return -1;
        memcpy(x->q, in, body);
        return 0;
    }
    if (ge->mode == RT_PSGD_SPARSE)
        return m->offset == MSG_ROUND_SUM && half ? rt_compress_from_pairs(in, body, s->unpacked, n) : -1;
    if (m->offset != MSG_ROUND_SUM || half != (ge->mode == RT_PSGD_F16) ||
        body != (half ? 2 : sizeof(float)) * n)
        return -1;
    if (half)
        return rt_compress_decode(&fp16, in, body, s->unpacked, n);
    memcpy(s->unpacked, in, body);
    return 0;
}

int stub_replica_reply(rt_stub *s, int g, const msg *m, zmq_msg_t *payload)
{
    rt_ctx *rt = s->rt;
    int k = m->slice, step = s->groups[g].step[rt->slices[k].param];
    rt_psgd_geom ge = rt_replica_mode_at(rt, k, step);
    const uint8_t *in = zmq_msg_data(payload);
    size_t bytes = zmq_msg_size(payload);
    if (m->offset == MSG_ROUND_P)
        return on_phat(s, g, k, step, &ge, in, bytes);
    float lr_scale;
    if (bytes < sizeof lr_scale || take_update(s, g, k, &ge, m, in, bytes - sizeof lr_scale) < 0)
        return -1;
    memcpy(&lr_scale, in + bytes - sizeof lr_scale, sizeof lr_scale);
    singa_err err;
    float scale = rt->cut ? 1.0f : 1.0f / (float)rt_senders(rt, g);
    rt_replica_slice *x = &rt->self_update->groups[g].sl[k];
    rt_psgd_update f = {x->p, x->q, &ge, rt->self_update->scratch};
    bool factors = m->offset == MSG_ROUND_Q;
    if (x->applies && rt_replica_apply(rt, g, k, step, s->unpacked, factors ? &f : NULL, scale, lr_scale, &err) < 0) {
        stub_fail_everywhere(s, &err, false);
        return -1;
    }
    if (factors)
        rt_psgd_warm_q(x->q, x->q, &ge, (unsigned)k);
    return 1;
}

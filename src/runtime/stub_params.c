/* The stub's traffic of params (stub.h): the puts and gets before training, a group's gradients
 * summed here into one update per slice, and the servers' answers taken into the group's copy.
 *
 * A group's fetch (stub_fetch), what its gets are for; one at a time:
 *   NONE --every thread said hello----------------> START  READY to every worker of the group here
 *   NONE --worker 0.0's GET (a test, cut net)-----> TEST   READY to worker 0.0 alone
 *   NONE --rank 0 enters FETCHING (group 0)-------> FINAL  READY to worker 0.0 alone
 *   any  --the last slice's reply-----------------> NONE */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/compress.h"
#include "runtime/stub.h"

/* A slice's values in group g's copy here. */
float *stub_replica_at(rt_ctx *rt, int g, const rt_slice *sl)
{
    return rt->replica[g][sl->param]->data.data + sl->offset;
}

/* Asks group g's servers for every slice. */
void stub_get_all(rt_stub *s, int g, stub_fetch why)
{
    rt_ctx *rt = s->rt;
    for (int k = 0; k < rt->nslices; k++) {
        msg m = {.type = MSG_GET, .src = stub_addr(s, g),
                 .dst = stub_server_addr(rt, s->groups[g].server_group, rt->slices[k].server), .slice = k,
                 .step = rt->resume_step};
        stub_route(s, &m, NULL, 0);
    }
    s->groups[g].gets_left = rt->nslices;
    s->groups[g].fetch = why;
}

/* A put or an update to a server: the values' address when it is here, else the values (none
 * when len is 0), lent from `loan` when one is given (else copied). */
static void send_slice(rt_stub *s, msg *m, float *values, size_t len, msg_loan *loan)
{
    bool here = m->dst.proc == s->rt->rank;
    const singa_compress *c = &s->rt->c->compress;
    if (!here && len && m->type == MSG_UPDATE && c->kind != SINGA_COMPRESS_NONE) { /* encoded, then copied */
        float *const *residual = s->rt->residual ? s->rt->residual[m->src.group] : NULL;
        m->flags |= MSG_F_VALUES | MSG_F_PACKED;
        rt_compress_encode(c, values, len, residual ? residual[m->slice] + m->offset : NULL, s->unpacked, s->packed);
        stub_route(s, m, s->packed, rt_compress_bytes(c, len));
        return;
    }
    m->flags |= here ? MSG_F_PTR : MSG_F_VALUES;
    m->ptr = here ? (uint64_t)(uintptr_t)values : 0;
    m->loan = here || !len ? NULL : loan;
    stub_route(s, m, here || !len ? NULL : values, here ? 0 : len * sizeof(float));
}

/* Puts (the first group of each server group) and gets every slice, once every thread is here. */
void stub_start(rt_stub *s)
{
    rt_ctx *rt = s->rt;
    int per = rt->c->nworker_groups / rt->c->nserver_groups;
    for (int g = 0; g < rt->c->nworker_groups; g++) {
        stub_group *sg = &s->groups[g];
        if (!sg->nlocal)
            continue;
        for (int k = 0; k < rt->nslices; k++) {
            const rt_slice *sl = &rt->slices[k];
            msg m = {.type = MSG_PUT, .src = stub_addr(s, g), .dst = stub_server_addr(rt, sg->server_group, sl->server), .slice = k,
                     .step = rt->resume_step};
            /* Sharded, a process holds the initial values of its own servers' slices only. */
            if (g % per == 0 && (!rt->c->shard_params || m.dst.proc == rt->rank))
                send_slice(s, &m, stub_replica_at(rt, g, sl), sl->len, NULL);
        }
        stub_get_all(s, g, FETCH_START);
    }
}

/* A value reply for group g: copies its values (those of [offset, offset + len) of the slice)
 * unless they are already in place; sharded, only those of the elements its workers here hold.
 * Halves decode straight into place; int8 changes (in blocks) are decoded whole, then added. */
static int take_values(rt_stub *s, int g, const msg *m, zmq_msg_t *payload)
{
    const rt_slice *sl = &s->rt->slices[m->slice];
    singa_compress c = rt_compress_of_values(&s->rt->c->compress);
    const uint8_t *in = zmq_msg_data(payload);
    bool packed = m->flags & MSG_F_PACKED;
    if (!(m->flags & MSG_F_VALUES))
        return 0;
    if (m->offset > sl->len || m->len > sl->len - m->offset ||
        zmq_msg_size(payload) != (packed ? rt_compress_bytes(&c, m->len) : m->len * sizeof(float)))
        return -1;
    size_t a = sl->offset + m->offset, b = a + m->len;
    if (s->rt->c->shard_params) {
        const size_t *span = s->groups[g].span[sl->param];
        a = a > span[0] ? a : span[0];
        b = b < span[1] ? b : span[1];
    }
    if (a >= b) /* an empty payload's data may be NULL */
        return 0;
    float *to = stub_replica_at(s->rt, g, sl) + (a - sl->offset);
    size_t skip = a - sl->offset - m->offset, n = b - a;
    if (!packed) {
        memcpy(to, (const float *)(const void *)in + skip, n * sizeof(float));
        return 0;
    }
    if (c.kind != SINGA_COMPRESS_INT8)
        return rt_compress_decode(&c, in + rt_compress_bytes(&c, skip), rt_compress_bytes(&c, n), to, n);
    if (!s->unpacked || rt_compress_decode(&c, in, zmq_msg_size(payload), s->unpacked, m->len) < 0)
        return -1;
    rt_compress_add(to, s->unpacked + skip, n); /* changes to what it holds */
    return 0;
}

/* What group g's updates of `step` tell the other processes: it is the group's last, or the
 * host asked for a checkpoint at the start of the next; and the servers: a checkpoint starts the
 * next step, so the values go back exact. */
static uint8_t step_flags(const rt_stub *s, int g, int step)
{
    const rt_ctx *rt = s->rt;
    int next = step + 1;
    bool asked = rt_ckpt_due(rt, next);
    bool ckpt = rt->c->nworker_groups == 1 && asked; /* several: on_ckpt_word */
    bool fires = s->ckpt_freq > 0 && next >= s->ckpt_after && (next - s->ckpt_after) % s->ckpt_freq == 0;
    bool exact = asked || fires;
    return (rt_last_step(rt, g, step) ? MSG_F_LAST : 0) | (ckpt ? MSG_F_CKPT : 0) | (exact ? MSG_F_EXACT : 0);
}

/* A local worker's gradient of param k: summed with the others of its group here; once all are
 * in, one update per slice goes to the group's servers, with the part of the slice computed here
 * (of a cut group's net, the rest of this process's gradient is zero; it may be nothing, and
 * the server still waits for that word).  Those in other processes get the sum lent, not
 * copied: its workers write it again only in their next backward pass, after they hear the
 * param is fresh, which on_update_reply tells them once ZeroMQ has given it back. */
void stub_on_worker_update(rt_stub *s, const msg *m, zmq_msg_t *payload, bool remote)
{
    rt_ctx *rt = s->rt;
    int g = m->src.group, k = m->param;
    stub_group *sg = &s->groups[g];
    float *grad = (float *)(uintptr_t)m->ptr;
    size_t n = rt->params[k].size;
    sg->shares[k] = (sg->arrived[k] ? sg->shares[k] : 0) + (int)m->count;
    if (sg->arrived[k]++ == 0) {
        sg->agg[k] = grad;
        sg->step[k] = m->step;
    } else if (!rt->params[k].hist) { /* else every worker added its own (history.c) */
        cblas_saxpy((int)n, 1.0f, grad, 1, sg->agg[k], 1);
    }
    if (sg->arrived[k] < sg->nlocal)
        return;
    sg->arrived[k] = 0;
    sg->slices_left[k] = rt->params[k].nslices;
    if (rt->self_update) {
        stub_replica_send(s, g, k, sg->agg[k], sg->step[k], step_flags(s, g, sg->step[k]));
        return;
    }
    for (int i = 0; i < rt->params[k].nslices; i++)
        stub_send_update(s, g, rt->params[k].first_slice + i);
}

void stub_send_update(rt_stub *s, int g, int idx)
{
    rt_ctx *rt = s->rt;
    stub_group *sg = &s->groups[g];
    const rt_slice *sl = &rt->slices[idx];
    int k = sl->param;
    size_t a = sl->offset > sg->span[k][0] ? sl->offset : sg->span[k][0];
    size_t b = sl->offset + sl->len < sg->span[k][1] ? sl->offset + sl->len : sg->span[k][1];
    if (b < a)
        a = b = sl->offset;
    msg u = {.type = MSG_UPDATE, .flags = step_flags(s, g, sg->step[k]),
             .src = stub_addr(s, g), .dst = stub_server_addr(rt, sg->server_group, sl->server), .slice = idx,
             .step = sg->step[k], .count = (uint32_t)sg->shares[k], .offset = a - sl->offset, .len = b - a};
    sg->open[idx] = true;
    send_slice(s, &u, sg->agg[k] + a, b - a, &sg->lent[k]);
}

void stub_on_update_reply(rt_stub *s, const msg *m, zmq_msg_t *payload, bool remote)
{
    rt_ctx *rt = s->rt;
    int g = m->dst.group;
    const rt_slice *sl = &rt->slices[m->slice];
    stub_group *sg = &s->groups[g];
    int taken = sg->slices_left[sl->param] <= 0 || (rt->holder && !sg->open[m->slice]) ? -1 /* twice: lost, asked again */
                : (m->flags & MSG_F_APPLY) && rt->self_update ? stub_replica_reply(s, g, m, payload)
                : take_values(s, g, m, payload) < 0           ? -1
                                                              : 1;
    if (taken < 0) {
        singa_stats_drop(rt->stats);
        return;
    }
    if (taken == 0) /* P-hat: Q' is on its way */
        return;
    if (m->flags & MSG_F_LAST) /* another process of the group stops after this step */
        rt_stop_before(rt, g, m->step);
    if (m->flags & MSG_F_CKPT) /* or checkpoints before the next */
        rt_ckpt_at(rt, m->step);
    sg->open[m->slice] = false;
    if (--sg->slices_left[sl->param] > 0)
        return;
    /* Every slice's answer is in, so each server had the last byte of its update: the frames
     * lent are closed or about to be. */
    msg_loan_wait(&sg->lent[sl->param]);
    stub_to_workers(s, g, (msg){.type = MSG_UPDATE_REPLY, .src = stub_addr(s, g), .param = sl->param,
                           .step = sg->step[sl->param]});
}

void stub_on_get_reply(rt_stub *s, const msg *m, zmq_msg_t *payload, bool remote)
{
    int g = m->dst.group;
    stub_group *sg = &s->groups[g];
    if (sg->fetch == FETCH_FINAL && s->rt->c->nserver_groups > 1) { /* each slice once, from where it was asked */
        if (s->fetch_from[m->slice] != m->src.group) {
            singa_stats_drop(s->rt->stats);
            return;
        }
        s->fetch_from[m->slice] = -1;
    }
    if (sg->gets_left <= 0 || take_values(s, g, m, payload) < 0) { /* nothing asked for: no write */
        singa_stats_drop(s->rt->stats);
        return;
    }
    if (--sg->gets_left > 0)
        return;
    msg ready = {.type = MSG_READY, .src = stub_addr(s, g),
                 .dst = {ENT_WORKER, (uint16_t)g, (uint16_t)rt_lead_id(s->rt, g), (uint16_t)s->rt->rank}};
    if (sg->fetch == FETCH_START)
        stub_to_workers(s, g, ready);
    else
        stub_route(s, &ready, NULL, 0);
    sg->fetch = FETCH_NONE;
}

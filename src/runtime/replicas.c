/* Replicated slices (cluster.replicas = R > 1): every server's slices and their updater state are
 * held by it, the primary, and by R - 1 backups, each in another process (topology.h: backup r of
 * server j is server id r * nservers_per_group + j, r processes after the primary's).
 *
 * The primary sends each backup the step's summed gradient, its scale and the lr scale it applies
 * with, before it applies it itself; a backup applies the same with the same updater code, so its
 * values and updater state stay bitwise the primary's.  It acks the step on receipt, before it
 * applies it, and the primary answers the step's workers only once every backup acked: no worker
 * reads a step's values that a backup does not hold, as a backup's thread applies what it acked
 * before it handles anything else (a takeover among them).  The gradient, not the new values and
 * state, crosses: one slice's floats a step, where values and momentum would be two or more.  A
 * backup's first values are its primary's, sent once they are in (from the put, or the checkpoint
 * resumed, which every holder loads alike).
 *
 * With two replicas, in a synchronous group whose values go back whole (no codec, no cut, no
 * shards), the backup's own process hears of the step from the backup once it applied it, not
 * from the primary: the values it copies are bitwise the primary's, and one slice's values a step
 * no longer cross to it.  That process's next contribution reaches the primary after the ack
 * (its stub sends both, in that order, over its one connection to the primary's process), so the
 * primary has answered the step before the next begins.  With three, one backup's process could
 * run ahead of the other backup's ack, so the primary answers all.  A loss changes nothing: what
 * the backup answered it holds, and as a holder it answers a step asked again from what it
 * applied (srv_answer_again). */
#include <string.h>

#include "runtime/rejoin_sync.h"
#include "runtime/runtime.h"
#include "runtime/server.h"

/* A backup message's scale and lr scale, in its `offset` (the payload is the gradient alone). */
static uint64_t pack_scales(float scale, float lr)
{
    uint32_t a, b;
    memcpy(&a, &scale, sizeof a);
    memcpy(&b, &lr, sizeof b);
    return (uint64_t)a | (uint64_t)b << 32;
}

static void unpack_scales(uint64_t v, float *scale, float *lr)
{
    uint32_t a = (uint32_t)v, b = (uint32_t)(v >> 32);
    memcpy(scale, &a, sizeof a);
    memcpy(lr, &b, sizeof b);
}

static msg_addr holder(const rt_server *s, int id)
{
    return (msg_addr){ENT_SERVER, (uint16_t)s->group, (uint16_t)id, (uint16_t)rt_server_proc(s->rt, s->group, id)};
}

/* Sends m (its type, flags, step, count and offset set) about slice x to every live replica of
 * s's server but s; returns them (bit r: replica r). */
static uint32_t to_backups(rt_server *s, srv_slice *x, msg m, const float *data)
{
    const rt_ctx *rt = s->rt;
    int per = rt->c->nservers_per_group, j = s->id % per;
    size_t n = rt->slices[x->slice].len;
    uint32_t sent = 0;
    m.src = srv_self(s);
    m.slice = x->slice;
    m.len = n;
    m.flags |= MSG_F_VALUES;
    for (int r = 0; r < rt->c->replicas; r++) {
        m.dst = holder(s, r * per + j);
        if (r * per + j == s->id || rt_absent(rt, m.dst.proc, m.step)) /* lost, or rejoins later */
            continue;
        rt_send(s->sock, &m, data, n * sizeof(float));
        sent |= 1u << r;
    }
    return sent;
}

/* Whether a backup answers its own process (see above): the same in every process. */
static bool answers_here(const rt_ctx *rt)
{
    const singa_cluster *c = rt->c;
    return c->replicas == 2 && c->nworker_groups == 1 && c->compress.kind == SINGA_COMPRESS_NONE &&
           !rt->self_update && !rt->cut && !c->shard_params;
}

bool srv_backup_answers(const rt_server *s, const pending *pd, int p)
{
    const rt_ctx *rt = s->rt;
    int per = rt->c->nservers_per_group;
    for (int r = 0; pd->backed && answers_here(rt) && r < rt->c->replicas; r++)
        if ((pd->backed >> r & 1) && rt_server_proc(rt, s->group, r * per + s->id % per) == p)
            return true;
    return false;
}

void srv_backup_values(rt_server *s, srv_slice *x)
{
    to_backups(s, x, (msg){.type = MSG_BACKUP, .flags = MSG_F_EXACT, .step = x->version}, x->data);
}

/* The sum buffer is lent, not copied, when the updater only reads its gradient: the buffer is
 * written again only by the group's next step (sum_buffer waits for the loan first). */
void srv_backup_step(rt_server *s, srv_slice *x, int g, const float *grad, float scale, float lr)
{
    pending *p = &x->pend[g - s->first_group];
    bool lend = grad == p->acc && singa_updater_elementwise(s->upd);
    p->acks = to_backups(s, x, (msg){.type = MSG_BACKUP, .flags = p->flags & MSG_F_STEP, .step = p->step,
                                     .count = (uint32_t)g, .offset = pack_scales(scale, lr),
                                     .loan = lend ? &p->lent : NULL}, grad);
    p->backed = p->acks;
}

/* Whether m comes from another replica of backup s's server: its primary, or the one that holds
 * it after a loss (only the holder sends). */
static bool from_holder(const rt_server *s, const msg *m)
{
    int per = s->rt->c->nservers_per_group;
    return s->backup && m->src.group == s->group && m->src.id % per == s->id % per && m->src.id != s->id &&
           m->src.id < per * s->rt->c->replicas && m->src.proc == rt_server_proc(s->rt, s->group, m->src.id);
}

/* A holder's state sent whole (MSG_F_EXACT): count 0 the values at version `step`, k + 1 the
 * updater's slot k. */
static int take_state(rt_server *s, srv_slice *x, const msg *m, const float *data, size_t n)
{
    if (m->count == 0) {
        msg_loan_wait(&x->lent); /* its answer here may still be read */
        memcpy(x->data, data, n * sizeof(float));
        x->version = m->step;
        x->ready = true;
        return 0;
    }
    singa_tensor *t = (int)m->count <= singa_updater_nslots(s->upd) ? singa_updater_slot(s->upd, x->store, (int)m->count - 1)
                                                                      : NULL;
    if (!t)
        return 1;
    memcpy(t->data, data, n * sizeof(float));
    return 0;
}

int srv_on_backup(rt_server *s, srv_slice *x, const msg *m, zmq_msg_t *payload, singa_err *err)
{
    size_t n = s->rt->slices[x->slice].len;
    int g = (int)m->count;
    if (!from_holder(s, m) || !(m->flags & MSG_F_VALUES) || m->len != n || zmq_msg_size(payload) != n * sizeof(float))
        return 1;
    if (m->flags & MSG_F_EXACT) /* its start, or a new holder's state */
        return take_state(s, x, m, zmq_msg_data(payload), n);
    if (!x->ready || g < s->first_group || g >= s->first_group + s->ngroups)
        return 1;
    float scale, lr;
    unpack_scales(m->offset, &scale, &lr);
    /* Acked on receipt, then applied: this thread applies it before it handles anything else
     * (a takeover, a worker's message), so the primary's answer need not wait for the apply. */
    msg ack = {.type = MSG_BACKUP_ACK, .src = srv_self(s), .dst = m->src, .slice = x->slice, .step = m->step,
               .count = (uint32_t)g};
    rt_send(s->sock, &ack, NULL, 0);
    if (srv_apply_grad_as(s, x, m->step, zmq_msg_data(payload), NULL, scale, lr, err) < 0)
        return -1;
    x->version++;
    if (answers_here(s->rt) && s->rt->replica && s->rt->replica[g]) /* group g has workers here */
        srv_answer(s, x, MSG_UPDATE_REPLY, g, s->rt->rank, x->version, 0, n, m->flags & MSG_F_STEP);
    return 0;
}

int srv_on_backup_ack(rt_server *s, srv_slice *x, const msg *m, zmq_msg_t *payload, singa_err *err)
{
    const rt_ctx *rt = s->rt;
    int per = rt->c->nservers_per_group, g = (int)m->count;
    if (s->backup || m->src.group != s->group || m->src.id % per != s->id % per || m->src.id == s->id ||
        m->src.id / per >= rt->c->replicas || m->src.proc != rt_server_proc(rt, s->group, m->src.id) ||
        g < s->first_group || g >= s->first_group + s->ngroups)
        return 1;
    pending *p = &x->pend[g - s->first_group];
    uint32_t bit = 1u << (m->src.id / per);
    if (!(p->acks & bit) || m->step != p->step)
        return 1;
    p->acks &= ~bit;
    if (p->acks == 0)
        srv_answer_update(s, x, g);
    return 0;
}

int srv_answer_again(rt_server *s, srv_slice *x, const msg *m)
{
    if (m->step + 1 != x->version) /* only the step it applied last can be asked again */
        return 1;
    srv_answer(s, x, MSG_UPDATE_REPLY, m->src.group, m->src.proc, x->version, m->offset, m->len,
               m->flags & (MSG_F_STEP | MSG_F_EXACT));
    return 0;
}

void srv_take_over(rt_server *s)
{
    const rt_ctx *rt = s->rt;
    int per = rt->c->nservers_per_group;
    if (!s->backup)
        return;
    s->backup = false;
    s->took_over = true;
    for (int i = 0; i < s->nsl; i++) { /* its primary sent the values first */
        srv_slice *x = &s->sl[i];
        x->ready = true;
        /* The other backups left get its whole state: the lost primary may have sent the last
         * step to some of them only. */
        srv_backup_values(s, x);
        for (int k = 0; k < singa_updater_nslots(s->upd); k++) {
            singa_tensor *t = singa_updater_slot(s->upd, x->store, k);
            if (t)
                to_backups(s, x, (msg){.type = MSG_BACKUP, .flags = MSG_F_EXACT, .step = x->version,
                                       .count = (uint32_t)k + 1}, t->data);
        }
    }
    rt_log(s->rt, "replica %d of server %d.%d (rank %d) holds its slices now, at version %d", s->id / per, s->group,
           s->id % per, rt->rank, s->nsl ? s->sl[0].version : 0);
}

/* The steps a lost process's acks or contributions held: answered, or applied without it. */
static int settle(rt_server *s, srv_slice *x, singa_err *err)
{
    const rt_ctx *rt = s->rt;
    int per = rt->c->nservers_per_group;
    for (int g = s->first_group; g < s->first_group + s->ngroups; g++) {
        pending *p = &x->pend[g - s->first_group];
        if (p->acks) {
            for (int r = 0; r < rt->c->replicas; r++)
                if (rt_shrunk(rt, rt_server_proc(rt, s->group, r * per + s->id % per)))
                    p->acks &= ~(1u << r);
            if (p->acks == 0)
                srv_answer_update(s, x, g);
        } else if (p->count > 0 && srv_step_complete(s, g, p) && srv_finish_step(s, x, g, err) < 0) {
            return -1;
        }
    }
    return 0;
}

int srv_on_shrink(rt_server *s, srv_slice *unused, const msg *m, zmq_msg_t *payload, singa_err *err)
{
    if (m->src.proc != s->rt->rank)
        return 1;
    if (s->backup && rt_holder_id(s->rt, s->id % s->rt->c->nservers_per_group) == s->id)
        srv_take_over(s);
    for (int i = 0; !s->backup && i < s->nsl; i++)
        if (settle(s, &s->sl[i], err) < 0)
            return -1;
    return 0;
}

/* FNV-1a over bytes, continued from h. */
static uint64_t fnv(uint64_t h, const void *data, size_t n)
{
    const unsigned char *b = data;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ULL;
    return h;
}

void srv_log_digest(rt_server *s)
{
    const rt_ctx *rt = s->rt;
    int per = rt->c->nservers_per_group, version = 0;
    uint64_t h = 14695981039346656037ULL;
    for (int i = 0; i < s->nsl; i++) {
        const srv_slice *x = &s->sl[i];
        size_t n = rt->slices[x->slice].len;
        h = fnv(h, x->data, n * sizeof(float));
        for (int k = 0; k < singa_updater_nslots(s->upd); k++) {
            singa_tensor *t = singa_updater_slot(s->upd, x->store, k);
            if (t)
                h = fnv(h, t->data, n * sizeof(float));
        }
        version = x->version > version ? x->version : version;
    }
    rt_log(s->rt, "replica %d of server %d.%d (rank %d): %d slice%s at version %d, digest %016llx (values and updater "
                  "state)", s->id / per, s->group, s->id % per, rt->rank, s->nsl, s->nsl == 1 ? "" : "s", version,
           (unsigned long long)h);
}

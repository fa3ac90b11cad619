/* A server: holds its slices of every param, sums the updates of a worker group's step until
 * all of its workers have contributed, applies the job's updater (any of the catalog's, kLua
 * included) with scale 1 / contributions, and answers every process of the group.  Where the
 * workers wrote h = m h - lr g into its momentum history themselves (history.c), the update is
 * w += h, and the server hands them the next step's rate.  Worker groups sharing a server group
 * are not waited for by each other (Downpour).
 *
 * Server groups (Hogwild) keep their own copies, synced by server_sync.c; the final flush once
 * every worker is done is server_flush.c's.  server.h is what they share.
 *
 * Checkpoints: asked by worker 0.0, a server writes its shard of the step, "param/<name>" (its
 * slice's values), "updater/<name>/<slot>" (their updater state), "slice/<name>" (the slice's
 * index, offset, length and version) and "shape/<name>" (the param's) for each of its slices, and
 * answers.  Resumed, it takes its slices from the whole model (ckpt_set.h) before any thread
 * starts, whatever topology wrote it, and a put marks the slice ready without taking its values.  A
 * server group's sync state is not kept: it starts afresh from the values loaded.  A process
 * that rejoins (SINGA_REJOIN) takes each slice's newest values from a live group instead
 * (srv_fetch_newest). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/compress.h"
#include "runtime/protocol.h"
#include "runtime/rejoin_sync.h"
#include "runtime/replica_update.h"
#include "runtime/runtime.h"
#include "runtime/server.h"
#include "singa/checkpoint.h"
#include "singa/ckpt_set.h"
#include "singa/updater.h"


size_t rt_server_size(void) { return sizeof(rt_server); }

rt_server *rt_server_at(rt_ctx *rt, int i) { return &rt->servers[i]; }

singa_updater *rt_server_updater(rt_server *s) { return s->upd; }

void rt_server_share_history(rt_server *s)
{
    for (int i = 0; i < s->nsl; i++) {
        const rt_slice *d = &s->rt->slices[s->sl[i].slice];
        float *hist = s->rt->params[d->param].hist;
        if (hist)
            singa_updater_adopt_slot(s->upd, s->sl[i].store, 0, hist + d->offset);
    }
}

/* The one worker group here this server group serves, whose values it may then update in place;
 * -1 when there is none or several. */
static int sole_local_group(const rt_server *s)
{
    const rt_ctx *rt = s->rt;
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

/* A slice's name in the server's store and shard: its param's, with its offset when the server
 * holds an earlier slice of the same param (big params are cut into several). */
singa_param *rt_slice_param(const rt_ctx *rt, singa_params *store, int k, const char *name, singa_err *err)
{
    const rt_slice *d = &rt->slices[k];
    const rt_param *dp = &rt->params[d->param];
    int len = (int)d->len;
    singa_param *p = singa_params_declare(store, name, dp->layer, 1, &len, err);
    if (!p)
        return NULL;
    p->trained = true;
    p->lr_scale = dp->lr_scale;
    p->wd_scale = dp->wd_scale;
    singa_tensor_free(&p->grad);
    return p;
}

static const char *slice_name(const rt_ctx *rt, int k, char *buf, size_t len)
{
    const rt_slice *d = &rt->slices[k];
    const rt_param *dp = &rt->params[d->param];
    if (k == dp->first_slice || rt->slices[k - 1].server != d->server)
        return dp->name;
    snprintf(buf, len, "%s@%zu", dp->name, d->offset);
    return buf;
}

int rt_server_create(rt_ctx *rt, rt_server *s, int group, int id, singa_err *err)
{
    const singa_cluster *c = rt->c;
    *s = (rt_server){.rt = rt, .group = group, .id = id, .last_step = singa_conf_int(rt->conf, "train_steps", 0) - 1,
                       .published = -1, .backup = id >= c->nservers_per_group || rt_rejoin_sync(rt)};
    s->ngroups = c->nworker_groups / c->nserver_groups;
    s->first_group = group * s->ngroups;
    s->lend = c->nworker_groups == 1;
    singa_params_init(&s->store);
    if (s->ngroups > 64 || c->nserver_groups > 64)
        return singa_err_set(err, "cluster: a server group serves at most 64 worker groups, and at most 64 server groups sync");
    if (!(s->sl = calloc((size_t)rt->nslices, sizeof *s->sl)) || !(s->local = malloc((size_t)rt->nslices * sizeof *s->local)))
        return singa_err_set(err, "out of memory");
    int shared = s->backup ? -1 : sole_local_group(s); /* a backup's copy is its own */
    for (int k = 0; k < rt->nslices; k++) {
        const rt_slice *d = &rt->slices[k];
        s->local[k] = -1;
        if (d->server != id % c->nservers_per_group)
            continue;
        char buf[512];
        singa_param *p = rt_slice_param(rt, &s->store, k, slice_name(rt, k, buf, sizeof buf), err);
        if (!p)
            return -1;
        srv_slice *x = &s->sl[s->nsl];
        *x = (srv_slice){.slice = k, .store = p->id, .shared_group = shared};
        if (shared >= 0) /* update the group's values in place */
            singa_tensor_rebind(&p->data, rt->replica[shared][d->param]->data.data + d->offset);
        x->data = p->data.data;
        if (!(x->pend = calloc((size_t)s->ngroups, sizeof *x->pend)))
            return singa_err_set(err, "out of memory");
        for (int g = 0; g < s->ngroups; g++)
            if (!(x->pend[g].span = calloc((size_t)rt->nprocs, sizeof *x->pend[g].span)))
                return singa_err_set(err, "out of memory");
        s->local[k] = s->nsl++;
    }
    if (c->compress.kind != SINGA_COMPRESS_NONE &&
        rt_compress_buffers(rt, &s->unpacked, &s->packed) < 0)
        return singa_err_set(err, "out of memory");
    if (singa_updater_create_ex(&s->upd, singa_conf_get(rt->conf, "updater"), &s->store, SINGA_UPDATER_SEPARATE_GRAD,
                                err) < 0)
        return -1;
    if (c->outer && singa_updater_create_ex(&s->outer, c->outer, &s->store, SINGA_UPDATER_SEPARATE_GRAD, err) < 0)
        return singa_err_prefix(err, "cluster.outer: ");
    if (c->outer && rt_compress_buffers(rt, &s->round_sum, &s->round_packed) < 0)
        return singa_err_set(err, "out of memory");
    return 0;
}

/* The names of a slice's entries in a shard. */
static void entry_name(char *buf, size_t len, const char *what, const char *param, const char *slot)
{
    snprintf(buf, len, slot ? "%s/%s/%s" : "%s/%s", what, param, slot);
}

/* Adds this server's entries to c: per slice where it lies (`where`, 4 per slice, filled here:
 * index, offset, length, version), its values and updater state, and with a param's first slice
 * here the param's shape (`shape`, 4 per slice). */
static int add_shard_entries(rt_server *s, singa_ckpt *c, int64_t *where, int64_t *shape, singa_err *err)
{
    const rt_ctx *rt = s->rt;
    char name[512];
    for (int i = 0; i < s->nsl; i++) {
        srv_slice *x = &s->sl[i];
        const rt_slice *d = &rt->slices[x->slice];
        char buf[512];
        const char *param = slice_name(rt, x->slice, buf, sizeof buf);
        const singa_tensor *whole = &rt->final_params[d->param]->data;
        int64_t *w = where + 4 * i, *sh = shape + 4 * i;
        int len = (int)d->len, four = 4;
        w[0] = x->slice;
        w[1] = (int64_t)d->offset;
        w[2] = (int64_t)d->len;
        w[3] = x->version;
        for (int k = 0; k < whole->ndim; k++)
            sh[k] = whole->shape[k];
        entry_name(name, sizeof name, "slice", param, NULL);
        if (singa_ckpt_add(c, name, SINGA_CKPT_I64, 1, &four, w, err) < 0)
            return -1;
        entry_name(name, sizeof name, "shape", param, NULL);
        if (param != buf && singa_ckpt_add(c, name, SINGA_CKPT_I64, 1, &whole->ndim, sh, err) < 0)
            return -1;
        entry_name(name, sizeof name, "param", param, NULL);
        if (singa_ckpt_add(c, name, SINGA_CKPT_F32, 1, &len, x->data, err) < 0)
            return -1;
        for (int k = 0; k < singa_updater_nslots(s->upd); k++) {
            singa_tensor *t = singa_updater_slot(s->upd, x->store, k);
            if (!t)
                continue;
            entry_name(name, sizeof name, "updater", param, singa_updater_slot_name(s->upd, k));
            if (singa_ckpt_add(c, name, SINGA_CKPT_F32, 1, &len, t->data, err) < 0)
                return -1;
        }
        if (srv_outer_shard(s, x, c, param, err) < 0)
            return -1;
    }
    return 0;
}

/* Writes this server's shard of checkpoint `step` (temp file, fsync, rename: see checkpoint.h). */
static int write_shard(rt_server *s, int step, singa_err *err)
{
    singa_ckpt c;
    singa_ckpt_init(&c, (uint64_t)step);
    int64_t *where = malloc((size_t)(s->nsl ? s->nsl : 1) * 8 * sizeof *where);
    int rc = where ? add_shard_entries(s, &c, where, where + 4 * s->nsl, err) : singa_err_set(err, "out of memory");
    if (rc == 0)
        rc = rt_ckpt_write(s->rt, &c, SINGA_CKPT_SERVER, s->group, s->id % s->rt->c->nservers_per_group, err);
    singa_ckpt_free(&c, 0);
    free(where);
    return rc < 0 ? singa_err_prefix(err, "server %d.%d: ", s->group, s->id) : 0;
}

/* Every slice takes its values and updater state from the whole model, at its offset, whatever
 * slicing wrote it (the runtime checked the params' names and shapes): every slot is checked
 * before any value is copied. */
int rt_server_load(rt_server *s, const singa_ckpt_set *set, singa_err *err)
{
    const rt_ctx *rt = s->rt;
    char name[600];
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < s->nsl; i++) {
            srv_slice *x = &s->sl[i];
            const rt_slice *d = &rt->slices[x->slice];
            const char *param = rt->params[d->param].name;
            for (int k = -1; k < singa_updater_nslots(s->upd); k++) {
                singa_tensor *t = k < 0 ? NULL : singa_updater_slot(s->upd, x->store, k);
                if (k >= 0 && !t)
                    continue;
                entry_name(name, sizeof name, k < 0 ? "param" : "updater", param,
                           k < 0 ? NULL : singa_updater_slot_name(s->upd, k));
                const singa_ckpt_entry *e = singa_ckpt_find(&set->model, name);
                if (!e || e->dtype != SINGA_CKPT_F32 || e->bytes != rt->params[d->param].size * sizeof(float))
                    return singa_err_set(err, "resume: checkpoint '%s': tensor '%s' is %s (the checkpoint was written "
                                              "with another updater or net)", set->where, name,
                                         e ? "not of the param's size" : "missing");
                if (pass == 1)
                    memcpy(k < 0 ? x->data : t->data, (const float *)e->data + d->offset, d->len * sizeof(float));
            }
            if (srv_outer_load(s, x, set, pass == 1, err) < 0)
                return -1;
            if (pass == 1) {
                x->version = (int)singa_ckpt_set_version(set, param, d->offset);
                x->loaded = true;
            }
        }
    return 0;
}

void rt_server_free(rt_server *s)
{
    if (!s->rt)
        return;
    singa_updater_free(s->upd);
    singa_updater_free(s->outer);
    for (int i = 0; i < s->nsl; i++) {
        srv_slice *x = &s->sl[i];
        srv_outer_free(s, x);
        free(x->asked);
        for (int g = 0; x->pend && g < s->ngroups; g++) {
            free(x->pend[g].acc);
            free(x->pend[g].span);
        }
        free(x->pend);
        free(x->last);
        free(x->snap);
        free(x->master);
        free(x->delta);
        free(x->psum);
        free(x->pin);
        free(x->phat);
        for (int p = 0; x->base && p < s->rt->nprocs; p++)
            free(x->base[p]);
        free(x->base);
    }
    singa_params_free(&s->store);
    free(s->unpacked);
    free(s->packed);
    free(s->round_sum);
    free(s->round_packed);
    free(s->sl);
    free(s->local);
}

/* To this process's stub, which stops the job everywhere. */
static void fail(rt_server *s, const singa_err *err)
{
    msg m = {.type = MSG_ABORT, .src = srv_self(s), .dst = {ENT_STUB, 0, 0, (uint16_t)s->rt->rank}};
    rt_send(s->sock, &m, err->msg, strlen(err->msg));
}

/* values = "int8": process p's base for slice x, made when `make` (NULL: none yet, or out of
 * memory, when the values go exact). */
static float *base_of(rt_server *s, srv_slice *x, int p, bool make)
{
    if (!x->base && make)
        x->base = calloc((size_t)s->rt->nprocs, sizeof *x->base);
    if (x->base && !x->base[p] && make)
        x->base[p] = malloc(s->rt->slices[x->slice].len * sizeof(float));
    return x->base ? x->base[p] : NULL;
}

/* Answers the stub of process p for group g: values [at, at + len) unless it reads this very
 * memory.
 *
 * With a single worker group the values are lent, not copied: `data` changes only by that
 * group's next update (nothing else writes it: no other group, no server-group sync, no flush),
 * which needs gradients from every process of the group, each sent only after its stub had its
 * every answer, whose last byte ZeroMQ had then read.  on_update waits for the loan all the same
 * before it writes, as ZeroMQ may hold the frame a moment longer.  With more groups an update may
 * come while an answer is still on its way (or stuck to a lost process), so answers are copied. */
void srv_answer(rt_server *s, srv_slice *x, int type, int g, int p, int version, size_t at, size_t len,
                   uint8_t flags)
{
    const rt_ctx *rt = s->rt;
    msg m = {.type = (uint8_t)type, .flags = flags, .src = srv_self(s),
             .dst = {ENT_STUB, (uint16_t)g, 0, (uint16_t)p}, .slice = x->slice, .step = version, .offset = at,
             .len = len};
    bool values = !(p == rt->rank && x->shared_group == g);
    singa_compress v = rt_compress_of_values(&rt->c->compress);
    bool deltas = v.kind == SINGA_COMPRESS_INT8 && values && len && p != rt->rank;
    float *base = deltas ? base_of(s, x, p, false) : NULL;
    if (values)
        m.flags |= MSG_F_VALUES;
    if (values && len && rt_compress_values(rt, type, p) && !(flags & MSG_F_EXACT) && (!deltas || base)) {
        m.flags |= MSG_F_PACKED;
        if (deltas)
            rt_compress_delta(x->data + at, base + at, len, s->unpacked, s->packed);
        else
            rt_compress_encode(&v, x->data + at, len, NULL, NULL, s->packed);
        rt_send(s->sock, &m, s->packed, rt_compress_bytes(&v, len));
        return;
    }
    if (deltas && (base || (at == 0 && len == rt->slices[x->slice].len && (base = base_of(s, x, p, true)))))
        memcpy(base + at, x->data + at, len * sizeof(float)); /* exact values: the base is what they are */
    if (values && len && s->lend)
        m.loan = &x->lent;
    rt_send(s->sock, &m, values && len ? x->data + at : NULL, values ? len * sizeof(float) : 0);
}

/* Answers every process with workers of group g: the values its contribution covered (all of
 * them when the group trains whole copies; worker 0.0 fetches the rest for its tests). */
void srv_answer_update(rt_server *s, srv_slice *x, int g)
{
    const rt_ctx *rt = s->rt;
    const pending *pd = &x->pend[g - s->first_group];
    for (int j = 0; j < rt->c->nworkers_per_group; j++) {
        int p = rt_worker_proc(rt, g, j);
        const size_t *span = pd->span[p];
        if (j > 0 && rt_worker_proc(rt, g, j - 1) == p) /* a process holds consecutive workers */
            continue;
        if (!srv_backup_answers(s, pd, p))
            srv_answer(s, x, MSG_UPDATE_REPLY, g, p, pd->step + 1, span[0], span[1] - span[0], pd->flags);
    }
}

/* Whether group g's update of `step` is its last: the job's last step, or the host stopped the
 * group before the next (the update said so, or the stop was set before it left). */
static bool last_update(const rt_server *s, int g, int step)
{
    return step >= s->last_step || rt_last_step(s->rt, g, step);
}

/* The step's sum buffer, once no message to a backup still reads it. */
static float *sum_buffer(pending *p, size_t n)
{
    msg_loan_wait(&p->lent);
    return p->acc ? p->acc : (p->acc = malloc(n * sizeof(float)));
}

/* The step's contributions are summed in the group's buffer from now on: it starts from the one
 * held in place, or from zero. */
static int start_sum(pending *p, size_t n)
{
    if (p->summed)
        return 0;
    if (!sum_buffer(p, n))
        return -1;
    if (p->direct)
        memcpy(p->acc, p->direct, n * sizeof(float));
    else
        memset(p->acc, 0, n * sizeof(float));
    p->direct = NULL;
    p->summed = true;
    return 0;
}

/* Adds contribution grad, elements [at, at + len) of the slice (zero elsewhere), to the step's
 * sum.  One that covers the slice and lives until the update (a worker's buffer, or a frame that
 * completes the step) is used in place while the others are empty, as a cut group's processes
 * send when a slice lies within one process's elements: no sum buffer, so a process of a
 * sharded group holds no more than its part of the model. */
static int add_contribution(pending *p, size_t n, const float *grad, size_t at, size_t len, bool lives)
{
    if (len == 0)
        return 0;
    if (!p->summed && !p->direct && len == n) {
        if (lives) {
            p->direct = grad;
            return 0;
        }
        if (!sum_buffer(p, n)) /* the first with anything: copied, not added to zeros */
            return -1;
        memcpy(p->acc, grad, n * sizeof(float));
        p->summed = true;
        return 0;
    }
    if (start_sum(p, n) < 0)
        return -1;
    for (size_t i = 0; i < len; i++)
        p->acc[at + i] += grad[i];
    return 0;
}

/* Whether m comes from a worker group this server serves. */
bool srv_from_group(const rt_server *s, const msg *m)
{
    return m->src.group >= s->first_group && m->src.group < s->first_group + s->ngroups;
}

static int apply_slice(rt_server *s, srv_slice *x, int g, int need, float lr, singa_err *err);

/* Every contribution to group g's step of the slice is in: the updater applies their sum, or the
 * momentum history the workers wrote (history.c); a span of the server's trace. */
static int apply_step(rt_server *s, srv_slice *x, int g, int need, singa_err *err)
{
    const rt_ctx *rt = s->rt;
    const singa_job_control *ctl = s->rt->control; /* the host's lr scale, as in a local job */
    float lr = ctl ? (float)atomic_load(&ctl->lr_scale) : 1.0f; /* read once: the backups apply the same */
    if (ctl)
        singa_updater_set_lr_scale(s->upd, lr);
    msg_loan_wait(&x->lent);
    double t0 = rt_now();
    singa_trace_step(s->trace, x->pend[g - s->first_group].step);
    int rc = apply_slice(s, x, g, need, lr, err);
    singa_trace_span(s->trace, "update", rt->params[rt->slices[x->slice].param].name, t0, rt_now());
    return rc;
}

int srv_apply_grad_as(rt_server *s, srv_slice *x, int step, float *grad, const rt_psgd_update *f, float scale,
                      float lr, singa_err *err)
{
    singa_updater_set_lr_scale(s->upd, lr);
    msg_loan_wait(&x->lent); /* a get's answer may still read the values */
    double t0 = rt_now();
    singa_trace_step(s->trace, step);
    int rc = f ? rt_replica_expand_apply(s->upd, x->store, step, f, scale, grad, err)
               : singa_updater_apply_one(s->upd, x->store, step, grad, scale, err);
    singa_trace_span(s->trace, "update", s->rt->params[s->rt->slices[x->slice].param].name, t0, rt_now());
    return rc < 0 ? singa_err_prefix(err, "server %d.%d: ", s->group, s->id) : 0;
}

int srv_apply_grad(rt_server *s, srv_slice *x, int step, float *grad, const rt_psgd_update *f, float scale,
                   float *lr_scale, singa_err *err)
{
    const singa_job_control *ctl = s->rt->control;
    *lr_scale = ctl ? (float)atomic_load(&ctl->lr_scale) : 1.0f;
    return srv_apply_grad_as(s, x, step, grad, f, scale, *lr_scale, err);
}

static int apply_slice(rt_server *s, srv_slice *x, int g, int need, float lr, singa_err *err)
{
    const rt_ctx *rt = s->rt;
    pending *p = &x->pend[g - s->first_group];
    size_t n = rt->slices[x->slice].len;
    if (rt->params[rt->slices[x->slice].param].hist) { /* the workers wrote h = m h - lr g */
        if (singa_updater_apply_history(s->upd, x->store, p->step, err) < 0)
            return singa_err_prefix(err, "server %d.%d: ", s->group, s->id);
        if (s->published != p->step + 1) { /* once a step: a kLua schedule is a call */
            float next = singa_updater_lr(s->upd, p->step + 1);
            if (!isfinite(next))
                return singa_err_set(err, "server %d.%d: updater.learning_rate (kLua) at step %d failed", s->group,
                                     s->id, p->step + 1);
            rt_history_publish(s->rt, p->step + 1, next);
            s->published = p->step + 1;
        }
    } else {
        float scale = rt->cut ? 1.0f : 1.0f / (float)need; /* parts of the group's gradient, or replicas' */
        if (!p->direct && start_sum(p, n) < 0) /* no contribution held anything: a zero gradient */
            return singa_err_set(err, "server %d.%d: out of memory", s->group, s->id);
        float *grad = p->direct ? (float *)p->direct : p->acc;
        if (rt->c->replicas > 1) /* before this applies it: the backups' update overlaps its own */
            srv_backup_step(s, x, g, grad, scale, lr);
        if (singa_updater_apply_one(s->upd, x->store, p->step, grad, scale, err) < 0)
            return singa_err_prefix(err, "server %d.%d: ", s->group, s->id);
    }
    return 0;
}

/* Adds one contribution; once the group's every worker is in, updates and answers. */
static int on_update(rt_server *s, srv_slice *x, const msg *m, zmq_msg_t *payload, singa_err *err)
{
    const rt_ctx *rt = s->rt;
    size_t n = rt->slices[x->slice].len, at = m->offset, len = m->len;
    int g = m->src.group;
    const float *grad; /* the worker's buffer, or the payload frame, alive until this returns */
    if (m->flags & MSG_F_APPLY)
        return srv_on_replica_update(s, x, m, payload, err);
    if (!srv_from_group(s, m) || !x->ready || m->offset > n || m->len > n - m->offset)
        return 1;
    pending *p = &x->pend[g - s->first_group];
    if (m->flags & MSG_F_PTR)
        grad = (const float *)(uintptr_t)m->ptr;
    else if ((m->flags & MSG_F_PACKED) && s->unpacked &&
             rt_compress_decode(&rt->c->compress, zmq_msg_data(payload), zmq_msg_size(payload), s->unpacked, len) == 0)
        grad = s->unpacked;
    else if ((m->flags & MSG_F_VALUES) && !(m->flags & MSG_F_PACKED) && zmq_msg_size(payload) == len * sizeof(float))
        grad = zmq_msg_data(payload);
    else
        return 1;
    if (s->took_over && x->version > m->step) /* a backup that holds it now applied that step already */
        return srv_answer_again(s, x, m);
    int need = rt_senders(rt, g);
    if ((int)m->count < 1 || p->count + (int)m->count > need || (p->count && m->step != p->step) ||
        m->src.proc >= rt->nprocs)
        return 1;
    p->span[m->src.proc][0] = at;
    p->span[m->src.proc][1] = at + len;
    if (p->count == 0) {
        p->step = m->step;
        p->summed = false;
        p->flags = 0;
        p->direct = NULL;
        p->from = 0;
    }
    bool lives = (m->flags & MSG_F_PTR) || p->count + (int)m->count == need;
    if (add_contribution(p, n, grad, at, len, lives) < 0)
        return singa_err_set(err, "server %d.%d: out of memory", s->group, s->id);
    p->count += (int)m->count;
    p->from |= m->src.proc < 64 ? 1ULL << m->src.proc : 0;
    p->flags |= m->flags & (MSG_F_STEP | MSG_F_EXACT);
    return srv_step_complete(s, g, p) ? srv_finish_step(s, x, g, err) : 0;
}

bool srv_step_complete(const rt_server *s, int g, const pending *p)
{
    const rt_ctx *rt = s->rt;
    if (p->count >= rt_senders(rt, g))
        return true;
    if ((!atomic_load(&rt->shrunk) && !atomic_load(&rt->grow_rank)) || p->count == 0)
        return false;
    for (int j = 0; j < rt->c->nworkers_per_group; j++) { /* every live process's in (a group that shrank) */
        int q = rt_worker_proc(rt, g, j);
        if (rt_sends(rt, g, j) && !rt_absent(rt, q, p->step) && !(p->from >> q & 1))
            return false;
    }
    return true;
}

/* Group g's step of slice x is in: applied with the average over the contributions (every
 * sender's, but in a group that shrank), then answered. */
int srv_finish_step(rt_server *s, srv_slice *x, int g, singa_err *err)
{
    pending *p = &x->pend[g - s->first_group];
    int got = p->count;
    p->count = 0;
    if (p->flags & MSG_F_LAST)
        rt_stop_before(s->rt, g, p->step + 1);
    if (apply_step(s, x, g, got, err) < 0)
        return -1;
    x->version++;
    srv_grow_push(s, x, g, p->step); /* a process rejoins at the next step (rejoin_sync.c) */
    if (g == x->shared_group && last_update(s, g, p->step))
        s->reader_done = true;
    if (s->outer) { /* the answer may wait for the round */
        int rc = srv_outer_sync(s, x, g, last_update(s, g, p->step), err);
        if (rc != 0)
            return rc < 0 ? -1 : 0;
    } else if (srv_sync_groups(s, x) < 0) {
        return singa_err_set(err, "server %d.%d: out of memory", s->group, s->id);
    }
    if (p->acks == 0) /* else the backups' last ack answers */
        srv_answer_update(s, x, g);
    return 0;
}

/* The values are in: every GET waiting for them is answered. */
void srv_serve_asked(rt_server *s, srv_slice *x)
{
    x->ready = true;
    for (int i = 0; i < x->nasked; i++)
        srv_answer(s, x, MSG_GET_REPLY, x->asked[i].group, x->asked[i].proc, x->version, 0,
               s->rt->slices[x->slice].len, 0);
    free(x->asked);
    x->asked = NULL;
    x->nasked = 0;
}

/* The initial values: from a group here by address (nothing to copy when it is the very memory
 * this server updates), from another process as values. */
static int on_put(rt_server *s, srv_slice *x, const msg *m, zmq_msg_t *payload)
{
    size_t n = s->rt->slices[x->slice].len;
    bool by_ptr = (m->flags & MSG_F_PTR) && m->ptr;
    if (x->ready || (!by_ptr && (!(m->flags & MSG_F_VALUES) || zmq_msg_size(payload) != n * sizeof(float))))
        return 1;
    if (x->loaded) /* from the checkpoint resumed */
        ;
    else if (!by_ptr)
        memcpy(x->data, zmq_msg_data(payload), n * sizeof(float));
    else if (x->shared_group < 0)
        memcpy(x->data, (const float *)(uintptr_t)m->ptr, n * sizeof(float));
    if (s->rt->c->nserver_groups > 1 && !(x->loaded && s->outer && x->last) && /* cluster.outer's own, resumed */
        !srv_copy_of(x->data, &x->last, n)) /* deltas count from here */
        return -1;
    if (s->rt->c->replicas > 1)
        srv_backup_values(s, x);
    if (s->rt->launch.rejoin && s->rt->c->nserver_groups > 1)
        srv_fetch_newest(s, x);
    else
        srv_serve_asked(s, x);
    return 0;
}

/* The message handlers: 0, 1 for a message dropped, -1 on failure (err set).  x is the slice of
 * this server a message is about, for the legs that have one. */

/* Worker 0.0 asks for this server's shard of checkpoint m->step. */
static int on_checkpoint(rt_server *s, srv_slice *x, const msg *m, zmq_msg_t *payload, singa_err *err)
{
    const rt_ctx *rt = s->rt;
    if (m->src.group != 0 || !rt_leads(rt, 0, m->src.id) || m->src.proc != rt_coordinator(rt) || !rt->ckpt_dir || m->step < 0 ||
        m->step > s->last_step + 1)
        return 1;
    double t0 = rt_now();
    int written = write_shard(s, m->step, err);
    singa_trace_span(s->trace, "checkpoint", "checkpoint shard", t0, rt_now());
    if (written < 0)
        return -1;
    msg r = {.type = MSG_CKPT_REPLY, .src = srv_self(s), .dst = m->src, .step = m->step,
             .server = s->group * rt->c->nservers_per_group + s->id % rt->c->nservers_per_group};
    rt_send(s->sock, &r, NULL, 0);
    return 0;
}

static int on_put_msg(rt_server *s, srv_slice *x, const msg *m, zmq_msg_t *payload, singa_err *err)
{
    int rc = srv_from_group(s, m) ? on_put(s, x, m, payload) : 1;
    return rc < 0 ? singa_err_set(err, "server %d.%d: out of memory", s->group, s->id) : rc;
}

/* A group's fetch; after the flush, worker 0.0's final values from any group. */
static int on_get(rt_server *s, srv_slice *x, const msg *m, zmq_msg_t *payload, singa_err *err)
{
    if (!srv_from_group(s, m) && s->flush != SRV_FLUSHED)
        return 1;
    if (x->ready || s->flush == SRV_FLUSHED) { /* only the asker: every process of the group asks for itself */
        srv_answer(s, x, MSG_GET_REPLY, m->src.group, m->src.proc, x->version, 0, s->rt->slices[x->slice].len, 0);
        return 0;
    }
    msg_addr *grown = realloc(x->asked, (size_t)(x->nasked + 1) * sizeof *grown);
    if (!grown)
        return singa_err_set(err, "server %d.%d: out of memory", s->group, s->id);
    x->asked = grown;
    x->asked[x->nasked++] = m->src;
    return 0;
}

/* The server's protocol: a message of `type` from one of `from` (RT_STUBS ...), carrying the
 * step every process starts from (`starts`), about one of its slices (`sliced`).  The first row
 * that matches takes it; one no row takes is dropped. */
typedef struct srv_leg {
    uint8_t type, from;
    bool starts, sliced;
    int (*handle)(rt_server *s, srv_slice *x, const msg *m, zmq_msg_t *payload, singa_err *err);
} srv_leg;

static const srv_leg legs[] = {
    {MSG_PUT, RT_STUBS, true, true, on_put_msg},
    {MSG_GET, RT_STUBS, true, true, on_get},
    {MSG_UPDATE, RT_STUBS, false, true, on_update},
    {MSG_SYNC, RT_SERVERS, false, true, srv_on_sync_msg},
    {MSG_SYNC_REPLY, RT_SERVERS, false, true, srv_on_sync_msg},
    {MSG_FLUSH, RT_STUBS, false, false, srv_on_flush_word},
    {MSG_FLUSH, RT_SERVERS, false, true, srv_on_final_delta},
    {MSG_CKPT, RT_WORKERS, false, false, on_checkpoint},
    {MSG_LOST, RT_STUBS, false, false, srv_on_lost_word},
    {MSG_BACKUP, RT_SERVERS, false, true, srv_on_backup},
    {MSG_BACKUP_ACK, RT_SERVERS, false, true, srv_on_backup_ack},
    {MSG_SHRINK, RT_STUBS, false, false, srv_on_shrink},
};

/* Every process starts from the step its checkpoint gave; they share checkpoint_path, so they
 * agree, unless they do not see the same files. */
static int same_start(const rt_server *s, const msg *m, singa_err *err)
{
    const rt_ctx *rt = s->rt;
    if (m->step == rt->resume_step)
        return 0;
    return singa_err_set(err, "server %d.%d (rank %d) starts from step %d, but rank %d from step %d: the processes "
                              "see different checkpoints in '%s' (checkpoint_path must be a folder every process "
                              "shares)", s->group, s->id, rt->rank, rt->resume_step, m->src.proc, m->step,
                         rt->ckpt_dir ? rt->ckpt_dir : "-");
}

/* Acts on one message: 0, 1 for a message dropped, -1 on failure (err set). */
static int handle(rt_server *s, const msg *m, zmq_msg_t *payload, singa_err *err)
{
    for (size_t i = 0; i < sizeof legs / sizeof *legs; i++) {
        const srv_leg *l = &legs[i];
        if (l->type != m->type || !(l->from >> m->src.kind & 1))
            continue;
        if (s->backup && l->handle != srv_on_backup && l->handle != srv_on_shrink) {
            if (m->type != MSG_UPDATE && m->type != MSG_GET && m->type != MSG_CKPT)
                return 1; /* a backup hears its primary alone, */
            srv_take_over(s); /* until a survivor's stub finds it holds the slices (membership.c) */
        }
        if (l->starts && same_start(s, m, err) < 0)
            return -1;
        if (!l->sliced)
            return l->handle(s, NULL, m, payload, err);
        if (m->slice < 0 || m->slice >= s->rt->nslices || s->local[m->slice] < 0)
            return 1;
        return l->handle(s, &s->sl[s->local[m->slice]], m, payload, err);
    }
    return 1;
}

void *rt_server_main(void *arg)
{
    rt_server *s = arg;
    rt_ctx *rt = s->rt;
    singa_err err;
    if (!(s->sock = rt_connect(rt, ENT_SERVER, s->group, s->id, &err)))
        return NULL;
    char track[32];
    snprintf(track, sizeof track, "server %d.%d", s->group, s->id);
    s->trace = singa_trace_thread(rt->trace, track);
    bool failed = false;
    for (;;) {
        msg m;
        zmq_msg_t payload;
        int rc = rt_recv(rt, s->sock, &m, &payload);
        if (rc < 0 || (rc == 0 && m.type == MSG_STOP)) {
            zmq_msg_close(&payload);
            break;
        }
        if (rc == 0 && !failed && handle(s, &m, &payload, &err) < 0) {
            failed = true; /* stays to drain until the stub stops everyone */
            fail(s, &err);
        }
        zmq_msg_close(&payload);
    }
    if (!failed && !rt_failed(rt) && rt->c->replicas > 1) /* a run that ended well */
        srv_log_digest(s);
    zmq_close(s->sock);
    return NULL;
}

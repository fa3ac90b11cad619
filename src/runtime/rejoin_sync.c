/* A lost process that rejoins a synchronous job (SINGA_REJOIN, one worker group): the group grows
 * back.
 *
 * Only a job with cluster.replicas >= 2, whose group shrinks, goes on without a lost process
 * (membership.c); any other ended when it lost one, and no live process holds the lost one's
 * state, so a process of such a job is refused before it meets (rt_rejoin_check).  With
 * replicas it reads no checkpoint: it meets rank 0, whose peers.c checks that it runs the same
 * job (the configuration's digest, its net included, and the plugins), as for any rejoin.  Then:
 * - rank 0 picks the step S it trains from, three after the newest its stub took from its
 *   worker 0.0 (which may be a step further, waiting for that step's values, but not at S: its
 *   state of S is still to come): no holder can have applied step S - 1 yet, as that waits for
 *   rank 0's gradients, which leave after its word (MSG_GROW: the rank, S, the holder map) on
 *   every connection;
 * - every process clears the rank's shrunk bit at the word, but counts it absent for the steps
 *   before S (rt_absent): a step before S neither waits for its gradients or metrics nor is sent
 *   to its replicas; S and later do;
 * - the holders keep the servers they took over (the same map everywhere); the rejoined process's
 *   servers all start as backups; each holder, once it applied step S - 1, sends each replica in
 *   that process its values and updater state, then (as answers to gets it never sent) its
 *   stub the values of step S, and, from step S on, the steps as to any backup, so every replica
 *   stays bitwise its holder's;
 * - rank 0's worker 0.0 sends its state of step S (data cursor, RNG, step: a group's workers read
 *   the same batches) to the rejoined workers before it trains S; they take it, and train S.
 * The process logs its heal time, from its meeting to its first step trained. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/peers.h"
#include "runtime/rejoin_sync.h"
#include "runtime/server.h"
#include "runtime/stub.h"
#include "singa/checkpoint.h"

bool rt_rejoin_sync(const rt_ctx *rt) { return rt->launch.rejoin && rt->c->nworker_groups == 1; }

bool rt_absent(const rt_ctx *rt, int q, int step)
{
    return rt_shrunk(rt, q) || (q == atomic_load(&rt->grow_rank) && step < atomic_load(&rt->grow_step));
}

int rt_rejoin_sync_check(const rt_ctx *rt, singa_err *err)
{
    const singa_cluster *c = rt->c;
    if (c->replicas < 2)
        return singa_err_set(err, "SINGA_REJOIN: the job is synchronous (one worker group) without cluster.replicas: "
                                  "losing a process ended it, and no live process holds the lost one's state, so no "
                                  "process can rejoin it (resume it from its checkpoint instead)");
    if (rt->cut || c->shard_params)
        return singa_err_set(err, "SINGA_REJOIN: the job is synchronous and %s: losing a process ended it, though it "
                                  "has cluster.replicas, so no process can rejoin it (resume it from its checkpoint "
                                  "instead)", rt->cut ? "its net is cut among the workers" : "shards its params");
    return 0;
}

/* Rank 0: why rank r cannot rejoin now (NULL: it can), S the step it would train from. */
static const char *refusal(const rt_stub *s, int r, int *S, char *buf, size_t len)
{
    const rt_ctx *rt = s->rt;
    const stub_group *sg = &s->groups[0];
    int last = singa_conf_int(rt->conf, "train_steps", 0) - 1;
    if (!rt_shrunk(rt, r))
        return "the synchronous group did not go on without it";
    if (atomic_load(&rt->shrunk) != 1ULL << r) /* its backups must not take over for another lost one */
        return "another process is lost too: the synchronous group takes back one lost process only when it is the "
               "only one";
    if (!sg->nlocal || rt->c->compress.kind != SINGA_COMPRESS_NONE || rt->self_update || rt->history)
        return "the synchronous group takes a lost process back only when rank 0 has a worker, and without "
               "cluster.compress";
    *S = 0; /* its worker may be past the newest step it sent that this stub took, but not by two */
    for (int k = 0; k < rt->nparams; k++)
        *S = sg->step[k] + 3 > *S ? sg->step[k] + 3 : *S;
    if (*S >= last) {
        snprintf(buf, len, "the job is too near its end (step %d of %d) to take it back", *S - 3, last + 1);
        return buf;
    }
    int stop = atomic_load(&rt->stop_step[0]);
    if (stop <= *S) { /* stopped (the workbench, early_stop): it would train no step */
        snprintf(buf, len, "the job stops before step %d", stop);
        return buf;
    }
    return NULL;
}

int rt_rejoin_sync_missed(rt_ctx *rt)
{
    int r = atomic_load(&rt->grow_rank), stop = atomic_load(&rt->stop_step[0]);
    if (!r || rt_shrunk(rt, r) || stop > atomic_load(&rt->grow_step))
        return 0;
    char line[200];
    snprintf(line, sizeof line, "rank %d rejoined for step %d, but the group stopped before it (after step %d): it "
             "trained no step, and ends with the job", r, atomic_load(&rt->grow_step), stop - 1);
    rt_log_line(rt, line, true, true);
    return r;
}


int rt_rejoin_sync_admit(rt_stub *s, int r, singa_err *err)
{
    rt_ctx *rt = s->rt;
    char buf[256];
    int S = 0;
    const char *why = refusal(s, r, &S, buf, sizeof buf);
    if (why) {
        snprintf(buf, sizeof buf, "the job is synchronous: %s", why);
        rt_peers_refuse(s->peers, buf);
        return 1;
    }
    s->peers->joining_step = S; /* what the Topology panel says it rejoined at */
    if (rt_peers_admit(s->peers, err) < 0)
        return -1;
    int per = rt->c->nservers_per_group;
    size_t n = (size_t)per * sizeof(int32_t);
    uint8_t *word = malloc(n); /* the word every process takes: each server's holder (its id) */
    if (!word)
        return singa_err_set(err, "out of memory");
    for (int j = 0; j < per; j++) {
        int32_t id = rt_holder_id(rt, j);
        memcpy(word + (size_t)j * sizeof id, &id, sizeof id);
    }
    msg m = {.type = MSG_GROW, .src = stub_addr(s, 0), .step = S, .count = (uint32_t)r};
    stub_to_peers(s, m, word, n);
    zmq_msg_t here;
    zmq_msg_init_data(&here, word, n, NULL, NULL);
    stub_on_grow(s, &m, &here, false);
    zmq_msg_close(&here);
    free(word);
    return 0;
}

/* The log's line and the Topology panel's: who rejoined, from which step, and the group then. */
static void log_grown(rt_ctx *rt, int r, int S)
{
    char line[1200], role[160], group[768];
    rt_role(rt, r, role, sizeof role);
    rt_group_describe(rt, NULL, group, sizeof group);
    snprintf(line, sizeof line, "rank %d (%s) rejoins the synchronous group: from step %d the group is %s, each with "
             "its replicas in rank %d again", r, role, S, group, r);
    rt_log_line(rt, line, true, true);
    snprintf(line, sizeof line, "rank %d rejoined at step %d; the group: %s", r, S, group);
    singa_stats_set_group(rt->stats, line);
}

/* The rejoined process takes the word: the holders the others went on with (no other process is
 * lost: refusal); false when it is malformed. */
static bool take_word(rt_ctx *rt, const uint8_t *word)
{
    int per = rt->c->nservers_per_group;
    int32_t id;
    for (int j = 0; j < per; j++) {
        memcpy(&id, word + (size_t)j * sizeof id, sizeof id);
        if (id < 0 || id % per != j || id / per >= rt->c->replicas)
            return false;
    }
    for (int j = 0; j < per; j++) {
        memcpy(&id, word + (size_t)j * sizeof id, sizeof id);
        atomic_store(&rt->holder[j], id / per);
    }
    atomic_store(&rt->shrunk, 0);
    return true;
}

void stub_on_grow(rt_stub *s, const msg *m, zmq_msg_t *payload, bool remote)
{
    rt_ctx *rt = s->rt;
    int per = rt->c->nservers_per_group, r = (int)m->count;
    size_t n = (size_t)per * sizeof(int32_t);
    if (r < 1 || r >= rt->nprocs || r >= 64 || zmq_msg_size(payload) != n || m->step < 1 || !rt->holder ||
        (rt->rank == r && !take_word(rt, zmq_msg_data(payload)))) {
        singa_stats_drop(rt->stats);
        return;
    }
    atomic_store(&rt->grow_step, m->step);
    atomic_store(&rt->grow_rank, r);
    if (rt->rank != r)
        atomic_fetch_and(&rt->shrunk, ~(1ULL << r));
    log_grown(rt, r, m->step);
}

void stub_rejoin_start(rt_stub *s)
{
    rt_ctx *rt = s->rt;
    rt->grow_began = rt_now();
    if (s->groups[0].nlocal) { /* a holder's values may come before rank 0's word: another connection */
        s->groups[0].gets_left = rt->nslices;
        s->groups[0].fetch = FETCH_START;
    }
}

/* Sends replica `id` (in the rejoined process) slice x's values (count 0) or updater slot k (k + 1), whole. */
static void send_state(rt_server *s, srv_slice *x, int id, uint32_t count, const float *data)
{
    size_t n = s->rt->slices[x->slice].len;
    msg m = {.type = MSG_BACKUP, .flags = MSG_F_VALUES | MSG_F_EXACT, .src = srv_self(s),
             .dst = {ENT_SERVER, (uint16_t)s->group, (uint16_t)id, (uint16_t)rt_server_proc(s->rt, s->group, id)},
             .slice = x->slice, .len = n, .step = x->version, .count = count};
    rt_send(s->sock, &m, data, n * sizeof(float));
}

void srv_grow_push(rt_server *s, srv_slice *x, int g, int step)
{
    const rt_ctx *rt = s->rt;
    int r = atomic_load(&rt->grow_rank), per = rt->c->nservers_per_group;
    if (!r || step + 1 != atomic_load(&rt->grow_step) || s->backup || s->group != 0)
        return;
    for (int k = 0; k < rt->c->replicas; k++) {
        int id = k * per + s->id % per;
        if (id == s->id || rt_server_proc(rt, s->group, id) != r)
            continue;
        send_state(s, x, id, 0, x->data);
        for (int i = 0; i < singa_updater_nslots(s->upd); i++) {
            singa_tensor *t = singa_updater_slot(s->upd, x->store, i);
            if (t)
                send_state(s, x, id, (uint32_t)i + 1, t->data);
        }
    }
    for (int j = 0; j < rt->c->nworkers_per_group; j++)
        if (rt_worker_proc(rt, g, j) == r) { /* its stub's fetch, unasked */
            srv_answer(s, x, MSG_GET_REPLY, g, r, x->version, 0, rt->slices[x->slice].len, 0);
            break;
        }
}

/* The whole file at path, in *bytes (the caller frees it). */
static int read_bytes(const char *path, uint8_t **bytes, size_t *n, singa_err *err)
{
    FILE *f = fopen(path, "rb");
    long len = -1;
    if (f && fseek(f, 0, SEEK_END) == 0)
        len = ftell(f);
    *bytes = len >= 0 ? malloc((size_t)len + 1) : NULL;
    *n = 0;
    if (*bytes && fseek(f, 0, SEEK_SET) == 0)
        *n = fread(*bytes, 1, (size_t)len, f);
    if (f)
        fclose(f);
    if (!*bytes || *n != (size_t)len)
        return singa_err_set(err, "rejoin: cannot read back %s", path);
    return 0;
}

/* Rank 0's worker 0.0: its state of step S, as a checkpoint file's bytes, to the rejoined workers. */
static int send_worker_state(rt_worker *w, int step, singa_err *err)
{
    rt_ctx *rt = w->rt;
    char path[] = "/tmp/singa-rejoin-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return singa_err_set(err, "rejoin: cannot make a temporary file for worker %d.%d's state", w->group, w->id);
    close(fd);
    singa_ckpt c;
    size_t n = 0;
    uint8_t *bytes = NULL;
    int rc = singa_job_ckpt_fill(w->job, &c, step, err);
    if (rc == 0) {
        if ((rc = singa_ckpt_write(&c, path, err)) == 0)
            rc = read_bytes(path, &bytes, &n, err);
        singa_ckpt_free(&c, 0);
    }
    unlink(path);
    int r = atomic_load(&rt->grow_rank);
    for (int j = 0; rc == 0 && j < rt->c->nworkers_per_group; j++)
        if (rt_worker_proc(rt, w->group, j) == r) {
            msg m = {.type = MSG_WORKER_STATE, .flags = MSG_F_VALUES, .src = {ENT_WORKER, (uint16_t)w->group,
                     (uint16_t)w->id, 0}, .dst = {ENT_WORKER, (uint16_t)w->group, (uint16_t)j, (uint16_t)r},
                     .step = step};
            rt_send(w->sock, &m, bytes, n);
        }
    free(bytes);
    return rc;
}

int rt_rejoin_sync_step(rt_worker *w, int step, singa_err *err)
{
    rt_ctx *rt = w->rt;
    int S = atomic_load(&rt->grow_step);
    if (!atomic_load(&rt->grow_rank) || step < S || step > S + 1)
        return 0;
    if (step == S && rt->rank == 0 && w->group == 0 && w->id == 0)
        return send_worker_state(w, step, err);
    if (step == S + 1 && rt_rejoin_sync(rt) && rt->grow_began > 0) {
        char line[200];
        snprintf(line, sizeof line, "rejoined the synchronous group at step %d: healed in %.3f s (from its meeting "
                                    "to its first step trained)", S, rt_now() - rt->grow_began);
        rt_log_line(rt, line, true, true);
        rt->grow_began = 0;
    }
    return 0;
}

int rt_rejoin_sync_take_state(rt_worker *w, const msg *m, zmq_msg_t *payload, singa_err *err)
{
    rt_ctx *rt = w->rt;
    if (!rt_rejoin_sync(rt) || m->src.proc != 0 || m->step < 1 || singa_job_step(w->job) != 0) /* taken already */
        return 0;
    char path[] = "/tmp/singa-rejoin-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return singa_err_set(err, "rejoin: cannot make a temporary file for worker %d.%d's state", w->group, w->id);
    size_t n = zmq_msg_size(payload);
    bool whole = write(fd, zmq_msg_data(payload), n) == (ssize_t)n;
    close(fd);
    singa_ckpt c;
    int rc = whole ? singa_ckpt_read(&c, path, err) : singa_err_set(err, "rejoin: cannot write %s", path);
    unlink(path);
    if (rc == 0) {
        rc = singa_job_load_state(w->job, &c, "rank 0's worker 0.0's state", err);
        singa_ckpt_free(&c, 1);
    }
    if (rc < 0)
        return singa_err_prefix(err, "rejoin: worker %d.%d: ", w->group, w->id);
    w->step_sent = singa_job_step(w->job);
    return 1;
}

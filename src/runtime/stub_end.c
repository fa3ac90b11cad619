/* The end of a job: each process tells rank 0 once its workers are done; rank 0 then fetches the
 * newest values for worker 0.0's final test and hands its result to every process with the
 * stop.  A failure anywhere, or a process gone silent in a synchronous job, stops every process
 * with the reason; an asynchronous job goes on without a lost worker group.
 *
 * With several server groups (Hogwild) no group alone holds the model, so before that fetch rank
 * 0 runs the final flush (server.c): every server still alive sends its slices' outstanding
 * changes to their masters, which report once all are in; worker 0.0 then reads each slice from
 * its master.  A server group lost with its process cannot flush: it is left out (its changes
 * since its last sync are lost), its slices gathered by a stand-in, and a loss during the flush
 * only narrows whom the masters wait for, so nothing hangs on it.
 *
 * Rank 0's end of the job (stub_end), a machine of its own:
 *   TRAINING --every process done, one server group-------> FETCHING  stub_get_all(0)
 *   TRAINING --every process done, several server groups--> FLUSHING  flush_begin: a flush word
 *                                                                      to every server alive
 *   FLUSHING --a server's report, or its process lost-----> FLUSHING  (narrowed; flush_lost)
 *   FLUSHING --the last report------------------------------> FETCHING each slice from its flush
 *                                                                      master (fetch_flushed)
 *   FETCHING --worker 0.0's FINISHED-------------------------> the stop of every thread
 * A process other than rank 0 stays in TRAINING until rank 0's FINISHED or a STOP. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/peers.h"
#include "runtime/rejoin_sync.h"
#include "runtime/stub.h"

bool stub_proc_lost(const rt_stub *s, int r)
{
    return s->peers && rt_peers_dead(s->peers, r);
}

/* Asks for slice k's final values from the group that gathered its final deltas. */
static void fetch_flushed(rt_stub *s, int k)
{
    rt_ctx *rt = s->rt;
    int j = rt->slices[k].server;
    s->fetch_from[k] = msg_flush_master(k, rt->c->nserver_groups, s->flush_live[j]);
    msg m = {.type = MSG_GET, .src = stub_addr(s, 0), .dst = stub_server_addr(rt, s->fetch_from[k], j), .slice = k,
             .step = rt->resume_step};
    stub_route(s, &m, NULL, 0);
}

/* Every report is in: worker 0.0's final values come from each slice's flush master. */
static void flush_done(rt_stub *s)
{
    s->end = END_FETCHING;
    s->groups[0].gets_left = s->rt->nslices;
    s->groups[0].fetch = FETCH_FINAL;
    for (int k = 0; k < s->rt->nslices; k++)
        fetch_flushed(s, k);
}

static void send_flush(rt_stub *s, int g, int j)
{
    uint8_t mask[MSG_FLUSH_MASK_BYTES];
    msg_flush_mask_encode(s->flush_live[j], mask);
    msg m = {.type = MSG_FLUSH, .src = stub_addr(s, 0), .dst = stub_server_addr(s->rt, g, j)};
    stub_route(s, &m, mask, sizeof mask);
}

/* Every server whose process lives flushes; a lost one is left out, and the others learn so. */
static void flush_begin(rt_stub *s)
{
    rt_ctx *rt = s->rt;
    int nsg = rt->c->nserver_groups, per = rt->c->nservers_per_group;
    s->end = END_FLUSHING;
    for (int j = 0; j < per; j++)
        for (int g = 0; g < nsg; g++) {
            int r = rt_server_proc(rt, g, j);
            if (stub_proc_lost(s, r)) {
                rt_log(rt, "the final flush goes on without server %d.%d (rank %d, lost): its changes since its "
                             "last sync are lost", g, j, r);
                continue;
            }
            s->flush_live[j] |= 1ull << g;
            s->flush_wait[g * per + j] = true;
            s->flush_left++;
        }
    for (int j = 0; j < per; j++)
        for (int g = 0; g < nsg; g++)
            if (s->flush_wait[g * per + j])
                send_flush(s, g, j);
    if (s->flush_left == 0)
        flush_done(s);
}

/* A server's report: its final deltas are all in. */
void stub_on_flush_report(rt_stub *s, const msg *m, zmq_msg_t *payload, bool remote)
{
    int i = m->src.group * s->rt->c->nservers_per_group + m->src.id;
    if (!s->flush_wait[i]) {
        singa_stats_drop(s->rt->stats);
        return;
    }
    s->flush_wait[i] = false;
    if (--s->flush_left == 0)
        flush_done(s);
}

/* Process r was lost during the flush: its servers are waited for no more, the masters still
 * waiting hear whom they wait for, and a final value asked of it is asked of a stand-in. */
void stub_flush_lost(rt_stub *s, int r)
{
    rt_ctx *rt = s->rt;
    int nsg = rt->c->nserver_groups, per = rt->c->nservers_per_group;
    if (!s->flush_live || s->end == END_TRAINING) /* no flush, or not yet */
        return;
    for (int j = 0; j < per; j++) {
        bool narrowed = false;
        for (int g = 0; g < nsg; g++)
            if ((s->flush_live[j] >> g & 1) && rt_server_proc(rt, g, j) == r) {
                s->flush_live[j] &= ~(1ull << g);
                narrowed = true;
                if (s->flush_wait[g * per + j]) {
                    s->flush_wait[g * per + j] = false;
                    s->flush_left--;
                }
                rt_log(rt, "server %d.%d (rank %d) was lost during the final flush: what it had not sent is lost", g,
                         j, r);
            }
        for (int g = 0; narrowed && s->end == END_FLUSHING && g < nsg; g++)
            if (s->flush_wait[g * per + j])
                send_flush(s, g, j);
    }
    if (s->end == END_FETCHING) {
        for (int k = 0; k < rt->nslices; k++)
            if (s->fetch_from[k] >= 0 && rt_server_proc(rt, s->fetch_from[k], rt->slices[k].server) == r)
                fetch_flushed(s, k);
    } else if (s->flush_left == 0) {
        flush_done(s);
    }
}

/* Rank 0: process r's workers are done (or lost); once every process's are, worker 0.0 (always
 * here) gets the newest values for its final test, after the flush when there is one. */
void stub_proc_done(rt_stub *s, int r)
{
    if (s->proc_done[r])
        return;
    s->proc_done[r] = true;
    if (++s->procs_done < s->rt->nprocs)
        return;
    if (s->rt->c->nserver_groups > 1) {
        flush_begin(s);
        return;
    }
    s->end = END_FETCHING;
    stub_get_all(s, 0, FETCH_FINAL);
}

/* Every worker here trained (or none lives here). */
void stub_local_done(rt_stub *s)
{
    int to = rt_coordinator(s->rt);
    if (s->rt->rank == to) {
        int missed = rt_rejoin_sync_missed(s->rt);
        if (missed)
            stub_proc_done(s, missed);
        stub_proc_done(s, to);
    } else {
        stub_route(s, &(msg){.type = MSG_DONE, .src = stub_addr(s, 0), .dst = {ENT_STUB, 0, 0, (uint16_t)to}}, NULL, 0);
    }
}

void stub_on_worker_done(rt_stub *s, const msg *m, zmq_msg_t *payload, bool remote)
{
    if (++s->done == s->rt->nworkers)
        stub_local_done(s);
}

void stub_on_proc_done(rt_stub *s, const msg *m, zmq_msg_t *payload, bool remote)
{
    stub_proc_done(s, m->src.proc);
}

/* The coordinator's threads stop, and it stays until every live process said its FINISHED came
 * (MSG_BYE): closing at once, it would cut off the final values still on a slow link, and a
 * process found lost meanwhile counts as reached (stub_loss.c). */
static void await_byes(rt_stub *s)
{
    s->ending = true;
    s->ender = s->rt->rank;
    s->byes_due = 0;
    for (int r = 0; s->peers && r < s->rt->nprocs; r++)
        s->byes_due += r != s->rt->rank && !s->peers->dead[r];
    stub_stop_threads(s, NULL);
    s->stop = s->byes_due == 0;
}

/* The job ended well: rank 0 hands the final values, slice by slice, and its result (the
 * payload) to every other process, whose script then sees what rank 0's sees. */
void stub_on_finished(rt_stub *s, const msg *m, zmq_msg_t *payload, bool remote)
{
    rt_ctx *rt = s->rt;
    const void *result = zmq_msg_data(payload);
    size_t len = zmq_msg_size(payload);
    for (int k = 0; !remote && !rt->c->shard_params && k < rt->nslices; k++) /* sharded: no process holds them all */
        stub_to_peers(s, (msg){.type = MSG_FINAL_VALUES, .flags = MSG_F_VALUES, .src = stub_addr(s, 0), .slice = k},
                 stub_replica_at(rt, 0, &rt->slices[k]), rt->slices[k].len * sizeof(float));
    if (!remote) {
        stub_final_here(s);
        stub_to_peers(s, (msg){.type = MSG_FINISHED, .src = stub_addr(s, 0)}, result, len);
        await_byes(s);
        return;
    }
    if (msg_result_decode(&s->rt->final, result, len) < 0) {
        singa_err e;
        singa_err_set(&e, "rank 0 sent a malformed result at the end of the job");
        rt_fail(s->rt, &e);
    }
    stub_route(s, &(msg){.type = MSG_BYE, .src = stub_addr(s, 0), .dst = {ENT_STUB, 0, 0, (uint16_t)m->src.proc}}, NULL, 0);
    stub_stop_all(s, NULL);
}

void stub_on_bye(rt_stub *s, const msg *m, zmq_msg_t *payload, bool remote)
{
    int r = m->src.proc;
    if (!s->ending || s->peers->dead[r])
        return;
    s->peers->dead[r] = true; /* gone by design: its connection's close is no loss */
    if (--s->byes_due <= 0)
        s->stop = true;
}

void stub_on_final_values(rt_stub *s, const msg *m, zmq_msg_t *payload, bool remote)
{
    const rt_slice *sl = &s->rt->slices[m->slice];
    s->ending = true;
    s->ender = m->src.proc;
    size_t len = zmq_msg_size(payload);
    if (len == sl->len * sizeof(float))
        memcpy(s->rt->final_params[sl->param]->data.data + sl->offset, zmq_msg_data(payload), len);
    else
        singa_stats_drop(s->rt->stats);
}

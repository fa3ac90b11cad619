/* Which process of the job this is and which threads it holds (topology.h): the rank and size a
 * launcher gave it (singa_launch_rank, since an elastic job's topology follows the size),
 * whether `--procs` restarted an elastic job, where each worker and server lives (the cluster's
 * placement), which workers send gradients, which answers travel encoded (cluster.compress)
 * and which losses end the job.  Where rank 0 listens and where the others do may come from the
 * environment too, since they differ per machine while the job's configuration must not. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime/runtime.h"

int rt_launch_read(rt_launch *l, const singa_cluster *c, bool alone, singa_err *err)
{
    *l = (rt_launch){.rank = 0, .size = 1, .from = "no launcher", .lost = ""};
    if (!alone && (singa_launch_rank(&l->rank, &l->size, &l->from, err) < 0 ||
                   singa_launch_restart(&l->restart, &l->lost, err) < 0))
        return -1;
    l->bind = c->bind ? c->bind : getenv("SINGA_BIND") ? getenv("SINGA_BIND") : "127.0.0.1";
    if (l->size == 1)
        return 0;
    if (c->nprocs != l->size)
        return singa_err_set(err, "cluster: the topology places its workers and servers in %d process%s, but %d "
                                  "were launched ($%s); set nworkers_per_procs/nservers_per_procs (or a preset's "
                                  "procs) to match",
                             c->nprocs, c->nprocs == 1 ? "" : "es", l->size, l->from);
    const char *coord = c->coordinator ? c->coordinator : getenv("SINGA_COORDINATOR");
    if (!coord)
        return singa_err_set(err, "cluster: process %d of %d needs the coordinator's address: set cluster.coordinator "
                                  "or $SINGA_COORDINATOR to \"tcp://host:port\" (rank 0 listens there)",
                             l->rank, l->size);
    if (strncmp(coord, "tcp://", 6) != 0 || !strchr(coord + 6, ':') || strlen(coord) >= sizeof l->coordinator)
        return singa_err_set(err, "cluster: coordinator '%s' is not an address like \"tcp://127.0.0.1:5555\"", coord);
    snprintf(l->coordinator, sizeof l->coordinator, "%s", coord);
    const char *rejoin = getenv("SINGA_REJOIN");
    l->rejoin = rejoin && *rejoin && strcmp(rejoin, "0") != 0;
    if (l->rejoin && l->rank == 0)
        return singa_err_set(err, "SINGA_REJOIN: rank 0 is the coordinator, whose loss ends the job: it cannot rejoin");
    return 0;
}

int rt_worker_proc(const rt_ctx *rt, int group, int id)
{
    return singa_cluster_worker_proc(rt->c, group, id, rt->nprocs);
}

bool rt_sends(const rt_ctx *rt, int group, int id)
{
    return !rt->cut || id == 0 || rt_worker_proc(rt, group, id) != rt_worker_proc(rt, group, id - 1);
}

int rt_senders(const rt_ctx *rt, int group)
{
    int n = 0;
    for (int j = 0; j < rt->c->nworkers_per_group; j++)
        n += rt_sends(rt, group, j);
    return n;
}

int rt_sender_of(const rt_ctx *rt, int group, int id)
{
    while (!rt_sends(rt, group, id))
        id--;
    return id;
}

int rt_server_proc(const rt_ctx *rt, int group, int id)
{
    int per = rt->c->nservers_per_group, r = id / per; /* replica r of server id % per: the processes after its primary's */
    return (singa_cluster_server_proc(rt->c, group, id % per, rt->nprocs) + r) % rt->nprocs;
}

int rt_holder_id(const rt_ctx *rt, int j)
{
    return rt->holder ? atomic_load(&rt->holder[j]) * rt->c->nservers_per_group + j : j;
}

bool rt_shrunk(const rt_ctx *rt, int r)
{
    return r < 64 && (atomic_load(&rt->shrunk) >> r & 1);
}

void rt_identity(char *buf, size_t len, int kind, int group, int id)
{
    snprintf(buf, len, "%c%d.%d", kind == ENT_WORKER ? 'w' : kind == ENT_SERVER ? 's' : 'p', group, id);
}

/* Appends "workers 0.0-0.1, 1.0" for the threads of one kind in process `rank`. */
static size_t role_part(const rt_ctx *rt, int rank, bool workers, char *buf, size_t len, size_t at)
{
    const singa_cluster *c = rt->c;
    int ngroups = workers ? c->nworker_groups : c->nserver_groups, per = workers ? c->nworkers_per_group : c->nservers_per_group;
    bool listed = false;
    for (int g = 0; g < ngroups && at < len; g++) {
        int first = -1, last = -1;
        for (int j = 0; j < per; j++)
            if ((workers ? rt_worker_proc(rt, g, j) : rt_server_proc(rt, g, j)) == rank)
                last = first < 0 ? (first = j) : j;
        if (first < 0)
            continue;
        const char *lead = listed ? ", " : workers ? "workers " : at ? "; servers " : "servers ";
        at += (size_t)snprintf(buf + at, len - at, "%s%d.%d", lead, g, first);
        if (at < len && last > first)
            at += (size_t)snprintf(buf + at, len - at, "-%d.%d", g, last);
        listed = true;
    }
    return at < len ? at : len - 1;
}

/* Appends "; backups of servers 0.2" (cluster.replicas) for the backups in process `rank`. */
static void role_backups(const rt_ctx *rt, int rank, char *buf, size_t len, size_t at)
{
    int per = rt->c->nservers_per_group;
    bool listed = false;
    for (int id = per; id < per * rt->c->replicas && at < len; id++)
        if (rt_server_proc(rt, 0, id) == rank) {
            at += (size_t)snprintf(buf + at, len - at, "%s0.%d", listed ? ", " : at ? "; backups of servers " :
                                   "backups of servers ", id % per);
            listed = true;
        }
}

void rt_role(const rt_ctx *rt, int rank, char *buf, size_t len)
{
    buf[0] = 0;
    size_t at = role_part(rt, rank, false, buf, len, role_part(rt, rank, true, buf, len, 0));
    role_backups(rt, rank, buf, len, at);
}

void rt_announce(rt_ctx *rt, const char *endpoint)
{
    char line[512];
    int n = snprintf(line, sizeof line, "rank %d of %d (pid %d, %s)%s%s: ", rt->rank, rt->nprocs, (int)getpid(),
                     rt->launch.from, endpoint ? " at " : "", endpoint ? endpoint : "");
    rt_role(rt, rt->rank, line + n, sizeof line - (size_t)n);
    if (rt->rejoined_at >= 0 && rt->c->nworker_groups == 1) /* rank 0 says the step (rejoin_sync.c) */
        singa_appendf(line, sizeof line, "; rejoined the job, its group taking it back at a step rank 0 picks");
    else if (rt->rejoined_at >= 0)
        singa_appendf(line, sizeof line, "; rejoined the job, its groups going on from step %d", rt->rejoined_at);
    rt_log_line(rt, line, rt->nprocs > 1, true);
}

bool rt_loss_ends_job(const rt_ctx *rt, int r)
{
    const singa_cluster *c = rt->c;
    if (r == 0 || c->nworker_groups == 1 || c->outer) /* cluster.outer's rounds wait for every group */
        return true;
    for (int j = c->nservers_per_group; j < c->nservers_per_group * c->replicas; j++)
        if (rt_server_proc(rt, 0, j) == r) /* a backup: its primary's answers wait for its acks */
            return true;
    for (int g = 0; g < c->nworker_groups; g++) {
        bool there = false, elsewhere = false, served_there = false;
        for (int j = 0; j < c->nworkers_per_group; j++) {
            int p = rt_worker_proc(rt, g, j);
            there |= p == r;
            elsewhere |= p != r;
        }
        for (int j = 0; j < c->nservers_per_group; j++)
            served_there |= rt_server_proc(rt, singa_cluster_server_group(c, g), j) == r;
        if ((there && elsewhere) || (elsewhere && served_there))
            return true;
    }
    return false;
}

bool rt_compress_values(const rt_ctx *rt, int type, int proc)
{
    return type == MSG_UPDATE_REPLY && proc != rt->rank && rt->c->compress.values != SINGA_COMPRESS_NONE;
}

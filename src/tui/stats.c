/* The job's topology is laid out once, when the job is attached: a cluster does not change while
 * it runs.  Its traffic is read on every call, from the runtime's own counters while the job
 * runs and from the copy detach made after. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tui/stats.h"

/* The processes the job runs in: the workbench is rank 0 of `singa-tui --procs N FILE`, or the
 * only one. */
static int nprocs(void)
{
    int rank, size;
    const char *from;
    return singa_launch_rank(&rank, &size, &from, NULL) == 0 ? size : 1;
}

void tui_stats_init(tui_stats *s)
{
    memset(s, 0, sizeof *s);
    pthread_mutex_init(&s->mu, NULL);
}

void tui_stats_destroy(tui_stats *s) { pthread_mutex_destroy(&s->mu); }

static void add_node(tui_stats *s, const char *host, int process, const char *role, int group, int id)
{
    if (s->nnodes < TUI_MAX_NODES) {
        tui_node *n = &s->nodes[s->nnodes];
        *n = (tui_node){.process = process, .group = group, .id = id};
        snprintf(n->host, sizeof n->host, "%s", host);
        snprintf(n->role, sizeof n->role, "%s", role);
    }
    s->nnodes++;
}

/* Every server and worker, process by process (the panel heads each process once), servers
 * first in each. */
static void lay_out(tui_stats *s, const singa_cluster *c)
{
    char host[32] = "localhost";
    gethostname(host, sizeof host - 1);
    int n = nprocs();
    s->nnodes = 0;
    for (int p = 0; p < n; p++) {
        for (int g = 0; g < c->nserver_groups; g++)
            for (int j = 0; j < c->nservers_per_group; j++)
                if (singa_cluster_server_proc(c, g, j, n) == p)
                    add_node(s, host, p, "server", g, j);
        for (int g = 0; g < c->nworker_groups; g++)
            for (int j = 0; j < c->nworkers_per_group; j++)
                if (singa_cluster_worker_proc(c, g, j, n) == p)
                    add_node(s, host, p, "worker", g, j);
    }
}

static void to_row(const singa_traffic *t, tui_traffic_row *r)
{
    *r = (tui_traffic_row){.process = t->rank, .msgs_sent = t->sent, .msgs_recv = t->received,
                           .bytes_sent = t->bytes_sent, .bytes_recv = t->bytes_received,
                           .queue = t->pending > 0 ? (int)t->pending : 0};
    snprintf(r->type, sizeof r->type, "%s", t->type);
    snprintf(r->peer, sizeof r->peer, "%s", t->peer);
}

static int min(int a, int b) { return a < b ? a : b; }

/* The live counters as at most max rows; returns how many there are.  Called locked. */
static int snapshot(const singa_stats *st, tui_traffic_row *rows, int max)
{
    singa_traffic t[TUI_STATS_ROWS];
    int n = singa_stats_snapshot(st, t, min(max, TUI_STATS_ROWS));
    for (int i = 0; i < min(n, min(max, TUI_STATS_ROWS)); i++)
        to_row(&t[i], &rows[i]);
    return n;
}

void tui_stats_attach(tui_stats *s, const singa_job *job)
{
    pthread_mutex_lock(&s->mu);
    s->has_job = true;
    s->live = singa_job_stats(job);
    s->distributed = s->live != NULL;
    s->nlast = 0;
    s->nlast_workers = 0;
    s->nlast_links = 0;
    s->last_dropped = 0;
    s->last_predicted = 0;
    s->rejoins = (tui_rejoins){0};
    lay_out(s, singa_job_cluster(job));
    pthread_mutex_unlock(&s->mu);
}

/* The live counters' lost ranks and rejoins.  Called locked. */
static tui_rejoins read_rejoins(const singa_stats *st)
{
    tui_rejoins r = {0};
    r.count = singa_stats_rejoins(st, &r.rank, &r.step);
    singa_stats_group(st, r.group, sizeof r.group);
    for (int p = 1, n = nprocs(); p < n; p++)
        if (singa_stats_rank_lost(st, p))
            singa_appendf(r.lost, sizeof r.lost, "%s%d", r.lost[0] ? ", " : "", p);
    return r;
}

void tui_stats_detach(tui_stats *s)
{
    pthread_mutex_lock(&s->mu);
    if (s->live) {
        s->rejoins = read_rejoins(s->live);
        s->nlast = snapshot(s->live, s->last, TUI_STATS_ROWS);
        s->last_dropped = singa_stats_dropped(s->live);
        s->last_predicted = singa_stats_predicted(s->live);
        s->nlast_workers = min(singa_stats_workers(s->live, s->last_workers, TUI_MAX_WORKERS), TUI_MAX_WORKERS);
        s->nlast_links = min(singa_stats_links(s->live, s->last_links, TUI_MAX_LINKS), TUI_MAX_LINKS);
    }
    s->live = NULL;
    pthread_mutex_unlock(&s->mu);
}

int tui_stats_traffic(tui_stats *s, tui_traffic_row *rows, int max, uint64_t *dropped)
{
    pthread_mutex_lock(&s->mu);
    int n = -1;
    *dropped = 0;
    if (s->live) {
        n = snapshot(s->live, rows, max);
        *dropped = singa_stats_dropped(s->live);
    } else if (s->distributed) {
        n = s->nlast;
        memcpy(rows, s->last, (size_t)min(n, min(max, TUI_STATS_ROWS)) * sizeof *rows);
        *dropped = s->last_dropped;
    }
    pthread_mutex_unlock(&s->mu);
    return n;
}

int tui_stats_workers(tui_stats *s, singa_worker_time *rows, int max)
{
    pthread_mutex_lock(&s->mu);
    int n = s->nlast_workers;
    if (s->live)
        n = singa_stats_workers(s->live, rows, max);
    else
        memcpy(rows, s->last_workers, (size_t)min(n, max) * sizeof *rows);
    pthread_mutex_unlock(&s->mu);
    return n;
}

double tui_stats_predicted(tui_stats *s)
{
    pthread_mutex_lock(&s->mu);
    double p = s->live ? singa_stats_predicted(s->live) : s->last_predicted;
    pthread_mutex_unlock(&s->mu);
    return p;
}

int tui_stats_links(tui_stats *s, singa_link *rows, int max)
{
    pthread_mutex_lock(&s->mu);
    int n = s->nlast_links;
    if (s->live)
        n = singa_stats_links(s->live, rows, max);
    else
        memcpy(rows, s->last_links, (size_t)min(n, max) * sizeof *rows);
    pthread_mutex_unlock(&s->mu);
    return n;
}

int tui_stats_topology(tui_stats *s, tui_node_state state, tui_node *nodes, int max)
{
    pthread_mutex_lock(&s->mu);
    int n = s->has_job ? s->nnodes : 0;
    for (int i = 0; i < min(n, min(max, TUI_MAX_NODES)); i++) {
        nodes[i] = s->nodes[i];
        if (!s->remote)
            nodes[i].state = s->live && singa_stats_rank_lost(s->live, nodes[i].process) ? TUI_NODE_DEAD : state;
    }
    pthread_mutex_unlock(&s->mu);
    return n;
}

tui_rejoins tui_stats_rejoins(tui_stats *s)
{
    pthread_mutex_lock(&s->mu);
    tui_rejoins r = s->live ? read_rejoins(s->live) : s->rejoins;
    pthread_mutex_unlock(&s->mu);
    return r;
}

void tui_stats_set_rejoins(tui_stats *s, const tui_rejoins *r)
{
    pthread_mutex_lock(&s->mu);
    s->rejoins = *r;
    pthread_mutex_unlock(&s->mu);
}

void tui_stats_set(tui_stats *s, const tui_traffic_row *rows, int n, uint64_t dropped, const singa_worker_time *workers,
                   int nworkers, const singa_link *links, int nlinks, const tui_node *nodes, int nnodes)
{
    pthread_mutex_lock(&s->mu);
    s->has_job = s->remote = true;
    s->distributed = n >= 0;
    s->nlast = n;
    if (n > 0)
        memcpy(s->last, rows, (size_t)min(n, TUI_STATS_ROWS) * sizeof *rows);
    s->last_dropped = dropped;
    s->nlast_workers = min(nworkers, TUI_MAX_WORKERS);
    memcpy(s->last_workers, workers, (size_t)s->nlast_workers * sizeof *workers);
    s->nlast_links = min(nlinks, TUI_MAX_LINKS);
    memcpy(s->last_links, links, (size_t)s->nlast_links * sizeof *links);
    s->nnodes = nnodes;
    if (nnodes > 0)
        memcpy(s->nodes, nodes, (size_t)min(nnodes, TUI_MAX_NODES) * sizeof *nodes);
    pthread_mutex_unlock(&s->mu);
}

const char *tui_node_state_name(tui_node_state s)
{
    static const char *const names[] = {"waiting", "running", "paused", "finished", "dead"};
    return s <= TUI_NODE_DEAD ? names[s] : "?";
}

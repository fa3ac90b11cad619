/* What the traffic and topology panels show, and where it comes from: the job singa.train runs
 * (or ran last).  The script thread attaches a job when singa.train has built it and detaches
 * it when the run ends, before the job is freed, keeping its final counters; the UI thread
 * reads about once a second.  Reading never waits for training: the runtime's counters are a
 * snapshot behind their own short lock (singa/stats.h), and this module's lock is only held
 * by attach, detach and the reads. */
#ifndef SINGA_TUI_STATS_H
#define SINGA_TUI_STATS_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "singa/job.h"

#define TUI_STATS_ROWS 64 /* traffic rows kept (the panel shows fewer) */
#define TUI_MAX_NODES 64  /* nodes kept (a larger cluster is cut, and says so) */
#define TUI_MAX_WORKERS 64 /* workers' step times kept */
#define TUI_MAX_LINKS 16   /* links to other processes kept */

typedef struct tui_traffic_row {
    char type[24];      /* message type, e.g. "update", "get-reply" */
    char peer[32];      /* the other end, e.g. "server 0.0", "worker 1.0" */
    int process;        /* the process (rank) whose counters these are */
    uint64_t msgs_sent, msgs_recv, bytes_sent, bytes_recv; /* totals since the job started */
    int queue;          /* requests sent and not yet answered */
} tui_traffic_row;

typedef enum tui_node_state {
    TUI_NODE_WAITING, /* created, not started (or waiting for peers) */
    TUI_NODE_RUNNING,
    TUI_NODE_PAUSED,
    TUI_NODE_FINISHED,
    TUI_NODE_DEAD,    /* failed or lost */
} tui_node_state;

typedef struct tui_node {
    int process;
    char host[32];   /* where the process runs */
    char role[8];    /* "server" or "worker" */
    int group, id;   /* its group, and its index in the group */
    tui_node_state state;
} tui_node;

/* An asynchronous job's lost processes and the rejoins of lost ones (SINGA_REJOIN), as rank 0
 * knows them. */
typedef struct tui_rejoins {
    char lost[48];   /* the ranks lost now, "1" or "1, 2" ("" when none is) */
    int count;       /* rejoins so far */
    int rank, step;  /* the newest: the rank, and the step its groups went on from */
    char group[SINGA_STATS_GROUP]; /* a synchronous group's newest change (singa_stats_group) */
} tui_rejoins;

typedef struct tui_stats {
    pthread_mutex_t mu;       /* guards the fields below */
    bool has_job;             /* a job was attached (it may have ended since) */
    const singa_stats *live;  /* the running job's counters; NULL for a plain job or once it ended */
    bool distributed;         /* the job has a runtime that counts messages */
    tui_traffic_row last[TUI_STATS_ROWS]; /* its final counters, once it ended */
    int nlast;                /* how many there were (at most TUI_STATS_ROWS kept) */
    singa_worker_time last_workers[TUI_MAX_WORKERS]; /* its workers' final step times */
    int nlast_workers;
    singa_link last_links[TUI_MAX_LINKS]; /* its bytes to and from the other processes */
    int nlast_links;
    uint64_t last_dropped;
    double last_predicted;    /* cluster.plan = "auto"'s predicted step, seconds (0: none) */
    tui_node nodes[TUI_MAX_NODES]; /* every worker and server, ordered by process */
    int nnodes;               /* how many there are (at most TUI_MAX_NODES kept) */
    tui_rejoins rejoins;      /* an attached job's, or the job's last once it ended */
    bool remote;              /* an attached job's (tui_stats_set): its nodes keep their states */
} tui_stats;

void tui_stats_init(tui_stats *s);
void tui_stats_destroy(tui_stats *s);
/* Script thread: singa.train built `job`; its topology and counters are read from now on. */
void tui_stats_attach(tui_stats *s, const singa_job *job);
/* Script thread: the run ended and `job` is about to be freed; its final counters are kept. */
void tui_stats_detach(tui_stats *s);
/* The workers' step times, flagged (singa/stats.h): at most max copied; returns how many the
 * job has (0 for a job without a runtime). */
int tui_stats_workers(tui_stats *s, singa_worker_time *rows, int max);
/* The step cluster.plan = "auto" predicted (seconds), or 0. */
double tui_stats_predicted(tui_stats *s);
/* This process's links to the others (singa/stats.h), likewise. */
int tui_stats_links(tui_stats *s, singa_link *rows, int max);
/* Copies at most max rows of the job's counters into rows, returns how many there are, and
 * sets *dropped to the messages the runtime dropped (undecodable, from a stranger, out of
 * place); -1 when there is no job yet or the job has no distributed runtime (a plain job
 * exchanges no messages). */
int tui_stats_traffic(tui_stats *s, tui_traffic_row *rows, int max, uint64_t *dropped);
/* Copies at most max nodes into nodes, each in `state`, and returns how many there are (0 when
 * there is no job yet).  The runtime keeps no state per thread, so every node shows the job's. */
int tui_stats_topology(tui_stats *s, tui_node_state state, tui_node *nodes, int max);

/* The job's lost processes and rejoins (all empty for a job without a runtime). */
tui_rejoins tui_stats_rejoins(tui_stats *s);

/* An attached workbench: the job's counters (n < 0: it has no distributed runtime), its
 * workers' step times, its links and its nodes with their states, as the job's monitor sent them. */
void tui_stats_set(tui_stats *s, const tui_traffic_row *rows, int n, uint64_t dropped, const singa_worker_time *workers,
                   int nworkers, const singa_link *links, int nlinks, const tui_node *nodes, int nnodes);
/* An attached workbench: the job's lost processes and rejoins, as its monitor sent them. */
void tui_stats_set_rejoins(tui_stats *s, const tui_rejoins *r);

const char *tui_node_state_name(tui_node_state s);

#endif

/* Traffic of the distributed runtime, per process: for each message type and peer the messages
 * and bytes sent and received, the requests still waiting for their reply, and how long workers
 * waited for fresh params.  Written by the runtime's threads, read at any time (by singa.stats()
 * and the workbench) through a snapshot.  Rank 0's also holds every other process's rows, as of
 * its last heartbeat (each row names its rank), the ranks found dead and those that rejoined. */
#ifndef SINGA_STATS_H
#define SINGA_STATS_H

#include <stdbool.h>
#include <stdint.h>

#pragma GCC visibility push(default) /* exported: libsinga is built hidden */

typedef struct singa_stats singa_stats;

typedef struct singa_traffic {
    int rank;              /* the process that counted it */
    char type[24];         /* message type: "update", "checkpoint-reply", ... */
    char peer[24];         /* "worker 0.1", "server 0.0", "rank 2" */
    uint64_t sent, received, bytes_sent, bytes_received;
    int64_t pending;       /* requests sent and not yet answered */
    double wait_seconds;   /* time spent waiting for the answers */
} singa_traffic;

/* A worker's step, as it timed it: means over its last SINGA_STEP_WINDOW steps.  Its own work is
 * compute (forward and backward, without the bridges' waits and the sends) and send; the rest is
 * waiting, for values (the servers' answers) and at bridges (a cut net's other parts).  In a
 * synchronous group every worker's whole step lasts as long as the slowest's work, so stragglers
 * are found by work: a worker whose work is at least SINGA_STRAGGLER times its group's median,
 * and SINGA_STRAGGLER_MIN seconds more (microsecond steps are all noise), is flagged, and
 * `share` says what part of the group's step (the longest whole step of the group) its excess
 * over the median costs. */
enum { SINGA_STEP_WINDOW = 20 };
#define SINGA_STRAGGLER 1.5
#define SINGA_STRAGGLER_MIN 0.001
typedef struct singa_worker_time {
    int rank, group, id;   /* the process that runs it, and the worker */
    char host[32];         /* that process's host */
    uint64_t steps;        /* steps timed since the job started */
    int window;            /* steps in the means (at most SINGA_STEP_WINDOW) */
    double compute, send, wait, bridge; /* mean seconds a step */
    double work, step;     /* compute + send; the whole step */
    bool straggler;        /* see above (groups of 2 or more) */
    double share;          /* (work - median) / the group's step, when flagged; else 0 */
} singa_worker_time;

/* What this process sent to and received from process `peer`, as it went on the wire (headers
 * and payloads of the stub's messages), and the steps it is spread over: the most any worker of
 * this process has finished (in a process without workers, any worker it heard of). */
typedef struct singa_link {
    int rank, peer;
    uint64_t bytes_sent, bytes_received;
    uint64_t steps;
} singa_link;

singa_stats *singa_stats_new(int rank);
void singa_stats_free(singa_stats *s);
/* Copies up to max rows into rows; returns how many there are. */
int singa_stats_snapshot(const singa_stats *s, singa_traffic *rows, int max);
/* Messages dropped because they did not decode, came from a stranger or were out of place. */
uint64_t singa_stats_dropped(const singa_stats *s);
int singa_stats_rank(const singa_stats *s);
/* The step time cluster.plan = "auto" predicted for the job (seconds; 0: none), shown beside the
 * workers' measured steps. */
void singa_stats_set_predicted(singa_stats *s, double step_seconds);
double singa_stats_predicted(const singa_stats *s);
/* Copies up to max workers' times (this process's, and in rank 0 every process's as their
 * heartbeats tell), flagged; returns how many there are. */
int singa_stats_workers(const singa_stats *s, singa_worker_time *rows, int max);
/* Copies up to max of this process's links to the others (those that carried anything);
 * returns how many there are. */
int singa_stats_links(const singa_stats *s, singa_link *rows, int max);
/* Whether process `rank` was found dead (silent for heartbeat_timeout). */
bool singa_stats_rank_lost(const singa_stats *s, int rank);
/* Rank 0: how many times a lost process rejoined the job (SINGA_REJOIN), and the newest rejoin's
 * rank and the step its groups went on from (both -1 before the first). */
int singa_stats_rejoins(const singa_stats *s, int *rank, int *step);
/* The newest change of a synchronous group (cluster.replicas), e.g. "rank 2 lost at step 209;
 * the group: workers 0.0, 0.1; servers 0.0 in rank 0, ..." ("" when none). */
enum { SINGA_STATS_GROUP = 256 };
void singa_stats_group(const singa_stats *s, char *buf, size_t len);

#pragma GCC visibility pop

#endif

/* Traffic of the distributed runtime, per process: for each message type and peer the messages
 * and bytes sent and received, the requests still waiting for their reply, and how long workers
 * waited for fresh params.  Written by the runtime's threads, read at any time (by singa.stats()
 * and the workbench) through a snapshot.  Rank 0's also holds every other process's rows, as of
 * its last heartbeat (each row names its rank), and the ranks found dead. */
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

singa_stats *singa_stats_new(int rank);
void singa_stats_free(singa_stats *s);
/* Copies up to max rows into rows; returns how many there are. */
int singa_stats_snapshot(const singa_stats *s, singa_traffic *rows, int max);
/* Messages dropped because they did not decode, came from a stranger or were out of place. */
uint64_t singa_stats_dropped(const singa_stats *s);
int singa_stats_rank(const singa_stats *s);
/* Whether process `rank` was found dead (silent for heartbeat_timeout). */
bool singa_stats_rank_lost(const singa_stats *s, int rank);

#pragma GCC visibility pop

#endif

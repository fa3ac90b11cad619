/* What the runtime does to the traffic counters (singa/stats.h), beside what hosts read. */
#ifndef SINGA_CORE_STATS_H
#define SINGA_CORE_STATS_H

#include <stdbool.h>
#include <stddef.h>

#include "singa/stats.h"

/* Counts a message of `bytes` (0: none, only pending and wait change) on the row (type, peer). */
void singa_stats_count(singa_stats *s, const char *type, const char *peer, bool sent, size_t bytes, int pending,
                       double wait);
/* Counts `bytes` on the wire to (sent) or from process `peer`. */
void singa_stats_link(singa_stats *s, int peer, bool sent, size_t bytes);
void singa_stats_drop(singa_stats *s);
void singa_stats_set_rank(singa_stats *s, int rank);
/* This process's own rows (what its heartbeats tell rank 0); returns how many were copied. */
int singa_stats_own(const singa_stats *s, singa_traffic *rows, int max);
/* Replaces process `rank`'s rows with these. */
void singa_stats_put(singa_stats *s, int rank, const singa_traffic *rows, int n);
void singa_stats_lost(singa_stats *s, int rank);
/* A lost rank rejoined the job: it counts as lost no more.  Rank 0, which admitted it, says the
 * step its groups go on from and counts the rejoin; the others pass -1. */
void singa_stats_rejoined(singa_stats *s, int rank, int step);
/* A synchronous group went on without a lost process, or took one back (cluster.replicas): who,
 * at which step, and what the group is now, for the Topology panel. */
void singa_stats_set_group(singa_stats *s, const char *text);
/* Worker group.id of this process finished a step: its seconds of compute (the passes, bridge
 * waits included: they are taken out here), of sending and of waiting for values. */
void singa_stats_step(singa_stats *s, int group, int id, double compute, double send, double wait);
/* A bridge of worker group.id's part waited this long for a blob (counted in its next step). */
void singa_stats_bridge_wait(singa_stats *s, int group, int id, double seconds);
/* This process's workers' times (what its heartbeats tell rank 0); returns how many were copied. */
int singa_stats_own_workers(const singa_stats *s, singa_worker_time *rows, int max);
/* Replaces process `rank`'s workers' times with these. */
void singa_stats_put_workers(singa_stats *s, int rank, const singa_worker_time *rows, int n);

#endif

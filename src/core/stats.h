/* What the runtime does to the traffic counters (singa/stats.h), beside what hosts read. */
#ifndef SINGA_CORE_STATS_H
#define SINGA_CORE_STATS_H

#include <stdbool.h>
#include <stddef.h>

#include "singa/stats.h"

/* Counts a message of `bytes` (0: none, only pending and wait change) on the row (type, peer). */
void singa_stats_count(singa_stats *s, const char *type, const char *peer, bool sent, size_t bytes, int pending,
                       double wait);
void singa_stats_drop(singa_stats *s);
void singa_stats_set_rank(singa_stats *s, int rank);
/* This process's own rows (what its heartbeats tell rank 0); returns how many were copied. */
int singa_stats_own(const singa_stats *s, singa_traffic *rows, int max);
/* Replaces process `rank`'s rows with these. */
void singa_stats_put(singa_stats *s, int rank, const singa_traffic *rows, int n);
void singa_stats_lost(singa_stats *s, int rank);
/* A lost rank rejoined the job: it counts as lost no more. */
void singa_stats_rejoined(singa_stats *s, int rank);

#endif

/* A metrics file (singa-tui --metrics FILE): JSON lines or CSV, one result per record.  Its
 * format lives here alone: the writer singa.train reports through (write.c) and the one reader
 * (read.c) of singa.plot, the workbench's `w` and singa-tui --open.  Below lua/ and tui/, which
 * both use it; it makes no Lua call. */
#ifndef SINGA_METRICSFILE_METRICSFILE_H
#define SINGA_METRICSFILE_METRICSFILE_H

#include <stdbool.h>
#include <stdio.h>

#include "singa/error.h"
#include "singa/job.h"
#include "singa/layer.h"
#include "singa/stats.h"

typedef struct singa_metrics_record {
    int step, group;
    singa_phase phase;
    double loss, accuracy; /* NAN: not reported */
    double images_per_sec, seconds; /* NAN: not in the file (older files have no seconds) */
} singa_metrics_record;

/* Hands each result of path to record, in file order; record returns -1 with *why (a static
 * text) to stop.  Lines without a "phase" (the workers' step times) are skipped.  -1 with err
 * naming the file, and the line with the reason, when it cannot be read, a line is not a
 * record, or it holds no result. */
int singa_metrics_file_read(const char *path, int (*record)(void *ud, const singa_metrics_record *r, const char **why),
                            void *ud, singa_err *err);

/* The first line of a CSV metrics file (a JSON lines file has none). */
void singa_metrics_file_header(FILE *f, bool csv);
/* One result r of `phase` ("train", "test", "validation") with its loss and accuracy (NAN: none,
 * written empty in CSV, null in JSON). */
void singa_metrics_file_record(FILE *f, bool csv, const singa_record *r, const char *phase, double loss, double acc);
/* A JSON line of the workers' step times of stats at `step` (none when it has no workers):
 * {"step": s, "workers": [{rank, host, group, id, compute, send, wait, bridge, straggler, share}, ...]},
 * at most 64. */
void singa_metrics_file_workers(FILE *f, int step, const singa_stats *stats);

#endif

/* Reading back a metrics file (singa-tui --metrics FILE): JSON lines or CSV, one result per
 * record.  The one reader of singa.plot, the workbench's `w` and singa-tui --open. */
#ifndef SINGA_LUA_METRICSFILE_H
#define SINGA_LUA_METRICSFILE_H

#include "singa/error.h"
#include "singa/layer.h"

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

#endif

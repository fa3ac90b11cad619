/* Reporting while a job runs (singa.train, singa.test): its lines on stdout, a progress line
 * redrawn on a terminal, its records in the --metrics file, each passed on to the host. */
#ifndef SINGA_LUA_LREPORT_H
#define SINGA_LUA_LREPORT_H

#include "lua/lsinga.h"

typedef struct singa_lua_reporter {
    const singa_lua_opts *opts;
    int groups; /* worker groups: with several, each line says whose it is */
    const singa_stats *stats; /* a distributed job's: its workers' times go to the metrics file */
    double last_draw;
    double t0;     /* when training started: records carry the seconds since */
    int line_open; /* a progress line is on screen */
    int others_next; /* another process wrote the training steps before it to the metrics file */
} singa_lua_reporter;

/* When training started (now, again after the workbench's start) for the records' seconds. */
double singa_lua_now(void);
/* The job hooks, ud a singa_lua_reporter. */
void singa_lua_report_log(void *ud, const char *line);
void singa_lua_report_record(void *ud, const singa_record *rec);
void singa_lua_report_step(void *ud, const singa_record *r);
void singa_lua_report_checkpoint(void *ud, int step, const char *path);
/* Clears the progress line when one is on screen. */
void singa_lua_report_clear(singa_lua_reporter *rp);

#endif

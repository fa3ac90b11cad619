/* A headless job's side of attaching: singa-tui -e FILE with --listen ADDR, or a job with
 * cluster.monitor, listens for workbenches (singa-tui --attach ADDR) and streams them what the
 * workbench's state is fed from (remote.h), the run's history first. */
#ifndef SINGA_TUI_MONITOR_H
#define SINGA_TUI_MONITOR_H

#include <stdbool.h>

#include "lua/lsinga.h"

typedef struct tui_monitor tui_monitor;

/* Becomes the host singa.train reports to (opts->host), for every job of the script: a job
 * listens when `listen` is given (from now on, workbenches steering it when `control`), else
 * when its cluster.monitor asks.  In a distributed job only rank 0 listens.  The caller holds
 * opts->lock.  -1 with err when `listen` cannot be bound. */
int tui_monitor_new(tui_monitor **out, lua_State *L, singa_lua_opts *opts, const char *listen, bool control,
                    singa_err *err);
/* The script ended (failed when `failed`): tells the attached workbenches, stops listening. */
void tui_monitor_free(tui_monitor *m, bool failed);

#endif

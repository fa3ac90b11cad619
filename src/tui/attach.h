/* The workbench's side of attaching (singa-tui --attach ADDR): a thread that receives what a
 * listening job's monitor sends (remote.h) and feeds the workbench's state with it, as the
 * script thread's hooks do when the workbench runs the job itself. */
#ifndef SINGA_TUI_ATTACH_H
#define SINGA_TUI_ATTACH_H

#include <stdbool.h>

#include "tui/log.h"
#include "tui/remote.h"
#include "tui/ring.h"
#include "tui/script.h"

typedef struct tui_attach tui_attach;

/* Connects to the job listening at addr and says hello, asking to steer it when `control`, with
 * CURVE when curve_key (the secret key file of the job's pair) is given; -1 with err when
 * nothing answers within TUI_ATTACH_WAIT_S seconds (a CURVE job does not answer a stranger) or
 * the job refuses. */
#define TUI_ATTACH_WAIT_S 1.0
int tui_attach_open(tui_attach **out, const char *addr, bool control, const char *curve_key, singa_err *err);
const char *tui_attach_addr(const tui_attach *c);
/* Whether the job lets this workbench steer it (asked for, and allowed by the job). */
bool tui_attach_control(const tui_attach *c);
/* Starts feeding s (its status, snapshots and stats), ring and log. */
int tui_attach_start(tui_attach *c, tui_script *s, tui_ring *ring, tui_log *log, singa_err *err);
/* UI thread: asks the job to pause, resume, ... or to scale its learning rate by lr_scale (only
 * with tui_attach_control). */
void tui_attach_request(tui_attach *c, tui_remote_what what, double lr_scale);
/* Detaches (the job goes on) and frees c. */
void tui_attach_close(tui_attach *c);

#endif

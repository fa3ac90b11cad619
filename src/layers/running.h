/* Which layer this thread runs, for the report of a fault (running.c): a signal handler gets no
 * context, so the net and the plugins' types leave it here, in a thread-local record, around
 * each layer's setup, forward and backward.  A few stores around each call: nothing a layer's
 * work could notice.  This record is the library's one mutable global, since the handler has
 * no other way to find it. */
#ifndef SINGA_LAYERS_RUNNING_H
#define SINGA_LAYERS_RUNNING_H

#include "singa/layer.h"

typedef struct singa_running {
    const singa_layer *layer; /* NULL: none */
    const char *stage;        /* "setup", "forward" or "backward" */
    const char *plugin;       /* the plugin's file for a plugin's type; NULL for a built-in */
} singa_running;

/* Initial-exec: a plain %fs-relative access, no __tls_get_addr call on the hot path and none in
 * the signal handler (libsinga is loaded with the program, never dlopen'ed late). */
extern __thread singa_running singa_running_now __attribute__((tls_model("initial-exec")));

/* Records l as running `stage`; returns what ran before, for singa_running_leave. */
static inline singa_running singa_running_enter(const singa_layer *l, const char *stage, const char *plugin)
{
    singa_running before = singa_running_now;
    singa_running_now = (singa_running){l, stage, plugin};
    return before;
}

static inline void singa_running_leave(singa_running before) { singa_running_now = before; }

#endif

/* A plugin's layer types run behind the host's functions, which record the running layer as the
 * plugin's (layers/running.h) so that a fault in the plugin's code is reported with the layer, the
 * stage and the plugin's file, whoever calls the type: the net, kCD's negative phases, the
 * gradient check, predict.  Built-in types pay nothing for it. */
#include "layers/running.h"
#include "plugin/internal.h"

/* A layer's type is the host's copy, the first member of its singa_plugin_type. */
static const singa_plugin_type *of(const singa_layer *l) { return (const singa_plugin_type *)l->type; }

static int guard_setup(singa_layer *l, singa_err *err)
{
    const singa_plugin_type *pt = of(l);
    singa_running before = singa_running_enter(l, "setup", pt->file);
    int rc = pt->own.setup(l, err);
    singa_running_leave(before);
    return rc;
}

static int guard_forward(singa_layer *l, singa_phase phase, singa_err *err)
{
    const singa_plugin_type *pt = of(l);
    singa_running before = singa_running_enter(l, "forward", pt->file);
    int rc = pt->own.forward(l, phase, err);
    singa_running_leave(before);
    return rc;
}

static void guard_backward(singa_layer *l)
{
    const singa_plugin_type *pt = of(l);
    singa_running before = singa_running_enter(l, "backward", pt->file);
    pt->own.backward(l);
    singa_running_leave(before);
}

void singa_plugin_guard(singa_plugin_type *pt, const char *file)
{
    pt->own = pt->type;
    pt->file = file;
    pt->type.setup = guard_setup;
    pt->type.forward = guard_forward;
    pt->type.backward = pt->own.backward ? guard_backward : NULL; /* NULL: no gradient passes */
}

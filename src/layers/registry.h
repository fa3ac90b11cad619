/* The registry's insides, shared with the plugin loader (src/plugin/loader.c): it adds types
 * on a plugin's behalf, takes them back when the plugin fails, and keeps the plugins here so
 * they live exactly as long as the registry whose types point into them. */
#ifndef SINGA_LAYERS_REGISTRY_H
#define SINGA_LAYERS_REGISTRY_H

#include "singa/layer.h"
#include "singa/plugin.h"

/* What the host knows of a type beyond its singa_layer_type, which is no part of the plugin ABI. */
enum {
    /* Writes each param's gradient only through singa_param_grad_gemm or between
     * singa_param_grad_begin and singa_param_grad_done, so a gradient sink may have several
     * threads add into one buffer in turns (layers/param_state.h, runtime/history.c). */
    SINGA_TYPE_GRAD_TURNS = 1,
};

struct singa_registry {
    const singa_layer_type **types;
    unsigned *traits; /* per type: SINGA_TYPE_* */
    size_t n;
    singa_plugin **plugins; /* in load order */
    size_t nplugins;
};

/* singa_registry_add with the host's traits of the type. */
int singa_registry_add_traits(singa_registry *reg, const singa_layer_type *type, unsigned traits, singa_err *err);
/* The traits of a type of reg's (0 for one it does not hold). */
unsigned singa_registry_traits(const singa_registry *reg, const singa_layer_type *type);

/* Drops reg's plugins and dlcloses them (loader.c); their types must be gone from reg. */
void singa_registry_unload_plugins(singa_registry *reg);

#endif

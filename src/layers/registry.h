/* The registry's insides, shared with the plugin loader (src/plugin/loader.c): it adds types
 * on a plugin's behalf, takes them back when the plugin fails, and keeps the plugins here so
 * they live exactly as long as the registry whose types point into them. */
#ifndef SINGA_LAYERS_REGISTRY_H
#define SINGA_LAYERS_REGISTRY_H

#include "singa/layer.h"
#include "singa/plugin.h"

struct singa_registry {
    const singa_layer_type **types;
    size_t n;
    singa_plugin **plugins; /* in load order */
    size_t nplugins;
};

/* Drops reg's plugins and dlcloses them (loader.c); their types must be gone from reg. */
void singa_registry_unload_plugins(singa_registry *reg);

#endif

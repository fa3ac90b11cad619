/* What the plugin files share: a loaded plugin and its registered types. */
#ifndef SINGA_PLUGIN_INTERNAL_H
#define SINGA_PLUGIN_INTERNAL_H

#include "singa/plugin.h"

/* A registered type: the host's copy of the plugin's structs (see type_size in loader.c).  Its
 * setup, forward and backward are guard.c's, which call the plugin's (`own`). */
typedef struct singa_plugin_type {
    singa_layer_type type; /* first: a layer's type points here */
    singa_plugin_example example;
    singa_layer_type own;  /* as the plugin registered it */
    const char *file;      /* the plugin's path, for a fault's report */
} singa_plugin_type;

/* Makes pt's setup, forward and backward record the layer they run as the plugin's (layers/running.h)
 * around the plugin's own, wherever they are called (guard.c). */
void singa_plugin_guard(singa_plugin_type *pt, const char *file);

struct singa_plugin {
    char *path;     /* as given */
    char *real;     /* realpath, to see one file loaded twice */
    void *handle;
    const singa_plugin_def *def;
    singa_plugin_type **types; /* each its own allocation: the registry points into them */
    size_t ntypes;
};

#endif

/* The plugin ABI: layer types in a shared object loaded at run time (dlopen), named in a job
 * like any built-in type, with no rebuild of the host.
 *
 * A plugin defines one exported object, `singa_plugin_entry` (write SINGA_PLUGIN(...) below).
 * The host reads its ABI version before anything else and calls nothing of the plugin (beyond
 * the constructors the dynamic loader runs) unless the major versions are equal and the
 * plugin's minor is not newer than the host's.  Then it
 * calls the entry's `init`, which registers the plugin's layer types with
 * singa_plugin_add_layer.  A layer type is the very singa_layer_type the built-in layers are
 * (singa/layer.h) and goes through singa_registry_add, so the host validates its fields
 * (unknown field, "did you mean") and calls its vtable exactly as a built-in's.
 *
 * Plugins call libsinga's public API directly (tensors, BLAS through singa_tensor_gemm, params,
 * conf), not a table of function pointers.  Why: the vtable works on singa_layer, whose tensors
 * and params are libsinga's own structs, so their layout is part of the ABI either way; a
 * table would repeat every public function and drift from them; and with the API a plugin
 * layer is written exactly as a built-in one (moving a layer in or out of the core is a copy).
 * The plugin's undefined symbols resolve at dlopen to the libsinga the host has loaded, so a
 * process holds one engine.  `cc -shared -fPIC $(pkg-config --cflags singa)` is enough; adding
 * `$(pkg-config --libs singa)` is harmless and needed where undefined symbols are refused (as
 * libtool's -no-undefined).  The host must use the shared libsinga (the default build).
 *
 * Versions.  SINGA_PLUGIN_ABI_MAJOR changes when a plugin built before could misbehave: a
 * member of a public struct moves or changes type, singa_tensor changes size (plugins embed
 * it), a function changes meaning or signature or goes away.  SINGA_PLUGIN_ABI_MINOR grows for
 * additions older plugins cannot notice: new functions, new flags, members appended to
 * singa_layer, singa_param, singa_layer_type or singa_plugin_example.  The loader copies a
 * plugin's singa_layer_type and singa_plugin_example into zeroed host structs up to the size
 * they had at the plugin's minor (src/plugin/loader.c), so an appended member reads as 0 for
 * an older plugin.  A plugin built with minor m loads on hosts of the same major and minor >= m.
 * History: 1.1 added the partitioning flags SINGA_LAYER_FEATURE_WISE, _FEATURE_PARTS and
 * _WHOLE_BATCH (a 1.0 plugin sets none: its layers read one-to-all and stay whole on dim 1).
 * 1.2 added SINGA_LAYER_GRAD_TURNS (flag 256) with singa_param_grad_begin and singa_param's
 * grad_turn, grad_parts and turn_held (a 1.1 plugin sets no such flag: its params' gradients are
 * its workers' own, summed by the stub).  1.3 added singa_layer_param_value (a layer's default init
 * value) and singa_param's default_value, and singa_layer_param and singa_layer_param_split
 * became macros over it that give kConstant the documented value 1; the functions of those names
 * remain for older plugins and give 0, as before.  The same release appended singa_func's
 * call_text, SINGA_VALUE_FIELDS, singa_net's progress and singa_result's early-stop members,
 * none of which a layer reads.  Later, within 1.3 (nothing was added that a plugin could
 * use): the host's state of a param (partitions' views, where its gradient goes, grad_turn and
 * the like) left singa_param, whose bytes there stay reserved so that every other member keeps
 * its offset; and SINGA_LAYER_GRAD_TURNS left the headers: writing gradients in turns is the
 * runtime's business, and the host knows which of its own types allow it.  Flag 256 stays
 * taken: a 1.2 or 1.3 plugin's type that sets it still has its gradients written in turns.
 * 1.4 appended singa_layer_type's export_onnx, with which a type writes itself into an ONNX
 * export, and the functions of singa/onnx.h it calls (an older plugin's types have none, so an
 * export through them is refused, as before).
 *
 * Ownership.  A plugin is loaded into a registry (in singa-tui, the one of the Lua state) and
 * belongs to it: singa_registry_free drops its types and then dlcloses it.  Nothing is global,
 * so two registries may hold different plugins. */
#ifndef SINGA_PLUGIN_H
#define SINGA_PLUGIN_H

#include "singa/conf.h"
#include "singa/gradcheck.h"
#include "singa/layer.h"
#include "singa/onnx.h"

#pragma GCC visibility push(default) /* exported: libsinga is built hidden */

#define SINGA_PLUGIN_ABI_MAJOR 1
#define SINGA_PLUGIN_ABI_MINOR 4

/* The name of the exported entry object, for dlsym. */
#define SINGA_PLUGIN_ENTRY_SYMBOL "singa_plugin_entry"

/* Where --check-plugin (singa_plugin_gradcheck) draws the line: the worst relative error. */
#define SINGA_PLUGIN_CHECK_TOL 2e-2

typedef struct singa_plugin singa_plugin;         /* a loaded plugin, owned by its registry */
typedef struct singa_plugin_ctx singa_plugin_ctx; /* given to init for its registrations */

typedef struct singa_plugin_def {
    /* These two members come first in every ABI version: the host reads only them before it
     * knows the plugin can be trusted. */
    int abi_major, abi_minor;
    const char *name;        /* letters, digits, '_', '-', '.'; unique among loaded plugins */
    const char *version;     /* the plugin's own version, e.g. "1.0.0" */
    const char *description; /* one line, or NULL */
    /* Registers the layer types; returns 0, or -1 with a message in err.  Called once for each
     * registry the plugin is loaded into (each Lua state has one), with a ctx valid during
     * the call only; so keep no state of your own outside the layers' l->state. */
    int (*init)(singa_plugin_ctx *ctx, singa_err *err);
} singa_plugin_def;

/* How --check-plugin checks a layer type: a layer with these fields, fed these inputs, through
 * the finite-difference check of singa/gradcheck.h (objective sum(out * R), or a loss layer's
 * loss).  Without an example: no fields and one input of shape 4 x 6 (a batch of 4 rows of 6
 * features), which suits element-wise and row-wise layers. */
typedef struct singa_plugin_example {
    /* The layer's fields in Lua table syntax, as a job would give them:
     * "{ beta = 1.5, param = { { init = { type = \"kConstant\", value = 0.3 } } } }".
     * Numbers, strings, true/false and nested tables; `name` and `type` are filled in. */
    const char *conf;
    int ninputs; /* 0: the default input above */
    singa_gradcheck_input inputs[SINGA_MAX_DIMS];
    int ndst;    /* readers of the output, for layers with several outputs (see gradcheck.h) */
} singa_plugin_example;

/* Called by a plugin's init: adds `type` to the registry through singa_registry_add.  The
 * loader keeps its own copy of *type and *example (the strings and functions they point to
 * stay in the plugin), so both may live on init's stack.  `example` may be NULL.  Fails when
 * the name is taken (by a built-in type or another plugin's) or the type is malformed; the
 * whole plugin then fails to load, whatever init returns. */
int singa_plugin_add_layer(singa_plugin_ctx *ctx, const singa_layer_type *type,
                           const singa_plugin_example *example, singa_err *err);

/* Exports the entry; put it once in a plugin, at file scope. */
#define SINGA_PLUGIN(name_, version_, description_, init_)                                     \
    __attribute__((visibility("default"))) const singa_plugin_def singa_plugin_entry = {      \
        .abi_major = SINGA_PLUGIN_ABI_MAJOR, .abi_minor = SINGA_PLUGIN_ABI_MINOR,              \
        .name = (name_), .version = (version_), .description = (description_), .init = (init_), \
    }
/* Defined by plugins only. */
extern __attribute__((visibility("default"))) const singa_plugin_def singa_plugin_entry;

/* ---- the host side ---- */

/* Loads the plugin at `path` into reg (dlopen with RTLD_NOW | RTLD_LOCAL, then the checks
 * above).  A file already loaded (the same file by any path) is not loaded again: *out is the
 * loaded one.  Errors name the file and the reason: not found, what dlopen says (not an ELF
 * file, a missing symbol), no entry symbol, an ABI mismatch with both versions, a plugin or
 * layer type name already taken, a registration error.  A failed load leaves reg unchanged.
 * out may be NULL. */
int singa_plugin_load(singa_registry *reg, const char *path, const singa_plugin **out,
                      singa_err *err);
/* Reports a plugin that failed to load while scanning (the message names the file). */
typedef void (*singa_plugin_warn_fn)(void *ud, const char *msg);
/* Loads every "*.so" file of each folder of a colon-separated list, folder by folder and each
 * folder's files in name order (byte order), so every process that scans the same folders
 * loads the same plugins in the same order.  Folders that do not exist are skipped, and so is
 * a file whose name appeared in an earlier folder (earlier folders win, as in $PATH).  A
 * plugin that fails is reported through warn and skipped.  Returns how many were loaded. */
int singa_plugin_load_path(singa_registry *reg, const char *folders, singa_plugin_warn_fn warn,
                           void *ud);

/* The loaded plugins in load order (how many there are when cap is too small). */
size_t singa_registry_plugins(const singa_registry *reg, const singa_plugin **plugins, size_t cap);
const char *singa_plugin_name(const singa_plugin *p);
const char *singa_plugin_version(const singa_plugin *p);
const char *singa_plugin_description(const singa_plugin *p); /* "" when it has none */
const char *singa_plugin_path(const singa_plugin *p);        /* as it was loaded */
void singa_plugin_abi(const singa_plugin *p, int *major, int *minor);
/* Its layer types in registration order (how many there are when cap is too small). */
size_t singa_plugin_types(const singa_plugin *p, const singa_layer_type **types, size_t cap);
/* The type's check example (a default one when the plugin gave none), or NULL when `type` is
 * not one of p's. */
const singa_plugin_example *singa_plugin_type_example(const singa_plugin *p,
                                                      const singa_layer_type *type);
/* "name version" of every loaded plugin, sorted by name and joined by ", " ("" for none): the
 * same text in every process that loaded the same plugins, whatever the load order.  Returns
 * the length, or -1 when it does not fit in cap (buf then holds a truncated prefix). */
int singa_registry_plugin_ids(const singa_registry *reg, char *buf, size_t cap);

/* The finite-difference check of p's index-th layer type on its example (seed 7).  Fails (-1)
 * when the layer cannot be built or run with the example; a check that runs fills rep, and
 * passes when rep->max_rel_err < SINGA_PLUGIN_CHECK_TOL.  A type without backward, or one that
 * takes no sources (an input layer), has nothing to check: rep->checked stays 0. */
int singa_plugin_gradcheck(const singa_registry *reg, const singa_plugin *p, size_t index,
                           singa_gradcheck_report *rep, singa_err *err);

#pragma GCC visibility pop

#endif

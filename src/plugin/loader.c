/* Loading plugins (singa/plugin.h): dlopen, the entry and its ABI version, then the plugin's
 * registrations, each through singa_registry_add.  A load either succeeds whole or leaves the
 * registry as it was: the types a failed plugin registered are taken back before dlclose, since
 * they point into its memory.  Plugins belong to the registry (layers/registry.h) and are
 * unloaded with it, last plugin first. */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "layers/registry.h"
#include "plugin/internal.h"

struct singa_plugin_ctx {
    singa_registry *reg;
    singa_plugin *p;
    int failed;    /* an add_layer failed: the load fails whatever init returns */
    singa_err err; /* the first such failure */
};

/* Bytes of singa_layer_type and singa_plugin_example in a plugin built with ABI minor m: a
 * minor that appends a member must return the old sizes (offsetof that member) for older m, so
 * the loader zero-fills what those plugins do not have. */
static size_t type_size(int minor) { return minor < 4 ? offsetof(singa_layer_type, export_onnx) : sizeof(singa_layer_type); }
static size_t example_size(int minor) { return sizeof(singa_plugin_example); }

/* The flag with which ABI 1.2 and 1.3 plugins said a type writes its params' gradients in turns
 * (SINGA_LAYER_GRAD_TURNS then): now the host's trait of the type, not a flag. */
enum { OLD_GRAD_TURNS = 256 };

/* Takes the traits out of a plugin's flags. */
static unsigned take_traits(singa_layer_type *type, int minor)
{
    if (minor < 2 || minor > 3 || !(type->flags & OLD_GRAD_TURNS))
        return 0;
    type->flags &= ~(unsigned)OLD_GRAD_TURNS;
    return SINGA_TYPE_GRAD_TURNS;
}

static void plugin_free(singa_plugin *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->ntypes; i++)
        free(p->types[i]);
    free(p->types);
    if (p->handle)
        dlclose(p->handle);
    free(p->path);
    free(p->real);
    free(p);
}

void singa_registry_unload_plugins(singa_registry *reg)
{
    while (reg->nplugins > 0)
        plugin_free(reg->plugins[--reg->nplugins]);
    free(reg->plugins);
    reg->plugins = NULL;
}

/* Who registered `type`, for duplicate-name messages: a plugin, or NULL for a built-in. */
static const singa_plugin *owner_of(const singa_registry *reg, const singa_plugin *loading,
                                    const singa_layer_type *type)
{
    for (size_t i = 0; i <= reg->nplugins; i++) {
        const singa_plugin *p = i < reg->nplugins ? reg->plugins[i] : loading;
        for (size_t k = 0; p && k < p->ntypes; k++)
            if (&p->types[k]->type == type)
                return p;
    }
    return NULL;
}

static int add_layer(singa_plugin_ctx *ctx, const singa_layer_type *type,
                     const singa_plugin_example *example, singa_err *err)
{
    singa_plugin *p = ctx->p;
    if (!type || !type->name || !*type->name)
        return singa_err_set(err, "a layer type needs a name");
    const char *name = type->name;
    if (!type->setup || !type->forward)
        return singa_err_set(err, "layer type '%s' needs setup and forward", name);
    if (type->min_src < 0 || (type->max_src >= 0 && type->max_src < type->min_src))
        return singa_err_set(err, "layer type '%s': min_src %d and max_src %d make no range (max_src -1: no limit)",
                             name, type->min_src, type->max_src);
    if (example && (example->ninputs < 0 || example->ninputs > SINGA_MAX_DIMS ||
                    example->ndst < 0 || example->ndst > SINGA_GRADCHECK_MAX_DSTS))
        return singa_err_set(err, "layer type '%s': its example needs 0 to %d inputs and 0 to %d destinations",
                             name, SINGA_MAX_DIMS, SINGA_GRADCHECK_MAX_DSTS);
    const singa_layer_type *had = singa_registry_find(ctx->reg, name);
    if (had) {
        const singa_plugin *o = owner_of(ctx->reg, p, had);
        if (o == p)
            return singa_err_set(err, "layer type '%s' is registered twice by this plugin", name);
        if (o)
            return singa_err_set(err, "layer type '%s' is already registered by plugin '%s' (%s)", name,
                                 o->def->name, o->path);
        return singa_err_set(err, "layer type '%s' is already registered: it is a built-in type", name);
    }
    singa_plugin_type **types = realloc(p->types, (p->ntypes + 1) * sizeof *types);
    singa_plugin_type *pt = calloc(1, sizeof *pt);
    if (types)
        p->types = types;
    if (!types || !pt) {
        free(pt);
        return singa_err_set(err, "out of memory");
    }
    memcpy(&pt->type, type, type_size(p->def->abi_minor));
    if (example)
        memcpy(&pt->example, example, example_size(p->def->abi_minor));
    if (pt->example.ninputs == 0) { /* the documented default: one input of 4 x 6 */
        pt->example.ninputs = 1;
        pt->example.inputs[0] = (singa_gradcheck_input){.ndim = 2, .shape = {4, 6}};
    }
    unsigned traits = take_traits(&pt->type, p->def->abi_minor);
    singa_plugin_guard(pt, p->path);
    if (singa_registry_add_traits(ctx->reg, &pt->type, traits, err) < 0) {
        free(pt);
        return -1;
    }
    p->types[p->ntypes++] = pt;
    return 0;
}

int singa_plugin_add_layer(singa_plugin_ctx *ctx, const singa_layer_type *type,
                           const singa_plugin_example *example, singa_err *err)
{
    singa_err mine = {{0}};
    if (add_layer(ctx, type, example, &mine) == 0)
        return 0;
    if (!ctx->failed) {
        ctx->failed = 1;
        ctx->err = mine;
    }
    if (err)
        *err = mine;
    return -1;
}

static bool valid_name(const char *s)
{
    if (!s || !*s)
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '_' || *s == '-' || *s == '.'))
            return false;
    return true;
}

/* The checks between dlopen and init; the plugin's code has not run yet. */
static int check_entry(const singa_registry *reg, const char *path, const singa_plugin_def *def,
                       singa_err *err)
{
    if (!def)
        return singa_err_set(err, "plugin '%s': no entry symbol '%s' (a plugin defines it with SINGA_PLUGIN(...) from singa/plugin.h)",
                             path, SINGA_PLUGIN_ENTRY_SYMBOL);
    if (def->abi_major != SINGA_PLUGIN_ABI_MAJOR)
        return singa_err_set(err, "plugin '%s': built for plugin ABI %d.%d, but this libsinga has ABI %d.%d (the major versions must be equal: rebuild the plugin against this version's singa/plugin.h)",
                             path, def->abi_major, def->abi_minor, SINGA_PLUGIN_ABI_MAJOR,
                             SINGA_PLUGIN_ABI_MINOR);
    if (def->abi_minor > SINGA_PLUGIN_ABI_MINOR)
        return singa_err_set(err, "plugin '%s': built for plugin ABI %d.%d, newer than this libsinga's ABI %d.%d (a plugin may be older than its host, not newer: update singa-tui or rebuild the plugin against its singa/plugin.h)",
                             path, def->abi_major, def->abi_minor, SINGA_PLUGIN_ABI_MAJOR,
                             SINGA_PLUGIN_ABI_MINOR);
    if (!valid_name(def->name))
        return singa_err_set(err, "plugin '%s': its name must be letters, digits, '_', '-' or '.'", path);
    if (!def->init)
        return singa_err_set(err, "plugin '%s': its entry has no init function", path);
    for (size_t i = 0; i < reg->nplugins; i++)
        if (strcmp(reg->plugins[i]->def->name, def->name) == 0)
            return singa_err_set(err, "plugin '%s': a plugin named '%s' is already loaded, from '%s'", path,
                                 def->name, reg->plugins[i]->path);
    return 0;
}

/* The loaded plugin of this file or library handle, if any. */
static singa_plugin *find_loaded(const singa_registry *reg, const char *real, const void *handle)
{
    for (size_t i = 0; i < reg->nplugins; i++)
        if ((real && strcmp(reg->plugins[i]->real, real) == 0) || reg->plugins[i]->handle == handle)
            return reg->plugins[i];
    return NULL;
}

/* Calls the plugin's init, which registers its types; on failure takes them back and says why. */
static int register_types(singa_registry *reg, singa_plugin *p, const char *path, singa_err *err)
{
    size_t mark = reg->n;
    singa_plugin_ctx ctx = {.reg = reg, .p = p};
    singa_err perr = {{0}};
    int rc = p->def->init(&ctx, &perr);
    if (ctx.failed)
        rc = singa_err_set(err, "plugin '%s': %s", path, ctx.err.msg);
    else if (rc != 0 && perr.msg[0])
        rc = singa_err_set(err, "plugin '%s': its registration failed: %s", path, perr.msg);
    else if (rc != 0)
        rc = singa_err_set(err, "plugin '%s': its registration failed (init returned %d without a message)", path, rc);
    else if (p->ntypes == 0)
        rc = singa_err_set(err, "plugin '%s': it registers no layer types", path);
    if (rc != 0)
        reg->n = mark; /* take its types back before its memory goes */
    return rc != 0 ? -1 : 0;
}

/* A new plugin record for the file at path (real: its resolved name, taken), dlopen'd; NULL
 * with err set. */
static singa_plugin *open_plugin(const char *path, char *real, singa_err *err)
{
    singa_plugin *p = calloc(1, sizeof *p);
    if (!p || !(p->path = strdup(path)) || !(p->real = real ? real : strdup(path))) {
        free(real);
        plugin_free(p);
        singa_err_set(err, "out of memory");
        return NULL;
    }
    /* dlopen searches the library path for a name without a slash: this is a file name. */
    char local[PATH_MAX + 2];
    snprintf(local, sizeof local, "%s%s", strchr(path, '/') ? "" : "./", path);
    dlerror();
    if (!(p->handle = dlopen(local, RTLD_NOW | RTLD_LOCAL))) {
        const char *why = dlerror();
        singa_err_set(err, "plugin '%s': cannot load it: %s", path, why ? why : "dlopen failed");
        plugin_free(p);
        return NULL;
    }
    return p;
}

int singa_plugin_load(singa_registry *reg, const char *path, const singa_plugin **out,
                      singa_err *err)
{
    struct stat st;
    if (stat(path, &st) < 0)
        return singa_err_set(err, "plugin '%s': %s", path, errno == ENOENT ? "not found" : strerror(errno));
    if (!S_ISREG(st.st_mode))
        return singa_err_set(err, "plugin '%s': not a regular file", path);
    char *real = realpath(path, NULL);
    singa_plugin *p = find_loaded(reg, real, NULL);
    if (p) {
        free(real);
        if (out)
            *out = p;
        return 0;
    }
    if (!(p = open_plugin(path, real, err)))
        return -1;
    singa_plugin *same = find_loaded(reg, NULL, p->handle); /* the same library by another name */
    if (same) {
        plugin_free(p); /* drops the reference this dlopen added */
        if (out)
            *out = same;
        return 0;
    }
    p->def = dlsym(p->handle, SINGA_PLUGIN_ENTRY_SYMBOL);
    if (check_entry(reg, path, p->def, err) < 0) {
        plugin_free(p);
        return -1;
    }
    singa_plugin **grown = realloc(reg->plugins, (reg->nplugins + 1) * sizeof *grown);
    if (!grown) {
        plugin_free(p);
        return singa_err_set(err, "out of memory");
    }
    reg->plugins = grown;
    if (register_types(reg, p, path, err) < 0) {
        plugin_free(p);
        return -1;
    }
    reg->plugins[reg->nplugins++] = p;
    if (out)
        *out = p;
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static bool has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n > k && strcmp(s + n - k, suffix) == 0;
}

/* Whether `name` is in list[0..n), and if not, adds a copy of it there. */
static bool seen_before(char ***list, size_t *n, const char *name)
{
    for (size_t k = 0; k < *n; k++)
        if (strcmp((*list)[k], name) == 0)
            return true;
    char **grown = realloc(*list, (*n + 1) * sizeof *grown);
    if (grown && (grown[*n] = strdup(name)))
        (*n)++;
    if (grown)
        *list = grown;
    return false;
}

/* Loads one folder's "*.so" files in name order, but not those whose name is in seen. */
static int load_folder(singa_registry *reg, const char *dir, char ***seen, size_t *nseen,
                       singa_plugin_warn_fn warn, void *ud)
{
    DIR *d = opendir(dir);
    if (!d) {
        if (errno != ENOENT && errno != ENOTDIR && warn) {
            char msg[SINGA_ERR_LEN];
            snprintf(msg, sizeof msg, "plugin folder '%s': %s", dir, strerror(errno));
            warn(ud, msg);
        }
        return 0;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.' || !has_suffix(e->d_name, ".so"))
            continue;
        if (n == cap) {
            char **grown = realloc(names, (cap = cap ? 2 * cap : 16) * sizeof *grown);
            if (!grown)
                break;
            names = grown;
        }
        if (!(names[n] = strdup(e->d_name)))
            break;
        n++;
    }
    closedir(d);
    if (n)
        qsort(names, n, sizeof *names, cmp_str);
    int loaded = 0;
    for (size_t i = 0; i < n; i++) {
        if (seen_before(seen, nseen, names[i]))
            continue;
        char path[PATH_MAX];
        singa_err err = {{0}};
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (singa_plugin_load(reg, path, NULL, &err) == 0)
            loaded++;
        else if (warn)
            warn(ud, err.msg);
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    return loaded;
}

int singa_plugin_load_path(singa_registry *reg, const char *folders, singa_plugin_warn_fn warn,
                           void *ud)
{
    char **seen = NULL;
    size_t nseen = 0;
    int loaded = 0;
    for (const char *s = folders; s && *s;) {
        const char *colon = strchr(s, ':');
        size_t len = colon ? (size_t)(colon - s) : strlen(s);
        if (len > 0 && len < PATH_MAX) {
            char dir[PATH_MAX];
            memcpy(dir, s, len);
            dir[len] = 0;
            loaded += load_folder(reg, dir, &seen, &nseen, warn, ud);
        }
        s += len + (colon ? 1 : 0);
    }
    for (size_t i = 0; i < nseen; i++)
        free(seen[i]);
    free(seen);
    return loaded;
}

size_t singa_registry_plugins(const singa_registry *reg, const singa_plugin **plugins, size_t cap)
{
    for (size_t i = 0; i < reg->nplugins && i < cap; i++)
        plugins[i] = reg->plugins[i];
    return reg->nplugins;
}

const char *singa_plugin_name(const singa_plugin *p) { return p->def->name; }
const char *singa_plugin_version(const singa_plugin *p) { return p->def->version ? p->def->version : ""; }
const char *singa_plugin_path(const singa_plugin *p) { return p->path; }

const char *singa_plugin_description(const singa_plugin *p)
{
    return p->def->description ? p->def->description : "";
}

void singa_plugin_abi(const singa_plugin *p, int *major, int *minor)
{
    *major = p->def->abi_major;
    *minor = p->def->abi_minor;
}

size_t singa_plugin_types(const singa_plugin *p, const singa_layer_type **types, size_t cap)
{
    for (size_t i = 0; i < p->ntypes && i < cap; i++)
        types[i] = &p->types[i]->type;
    return p->ntypes;
}

const singa_plugin_example *singa_plugin_type_example(const singa_plugin *p,
                                                      const singa_layer_type *type)
{
    for (size_t i = 0; i < p->ntypes; i++)
        if (&p->types[i]->type == type)
            return &p->types[i]->example;
    return NULL;
}

static int cmp_plugin(const void *a, const void *b)
{
    return strcmp((*(singa_plugin *const *)a)->def->name, (*(singa_plugin *const *)b)->def->name);
}

int singa_registry_plugin_ids(const singa_registry *reg, char *buf, size_t cap)
{
    singa_plugin **sorted = reg->nplugins ? malloc(reg->nplugins * sizeof *sorted) : NULL;
    if (cap)
        buf[0] = 0;
    if (reg->nplugins && !sorted)
        return -1;
    if (sorted) {
        memcpy(sorted, reg->plugins, reg->nplugins * sizeof *sorted);
        qsort(sorted, reg->nplugins, sizeof *sorted, cmp_plugin);
    }
    size_t len = 0;
    for (size_t i = 0; i < reg->nplugins; i++) {
        int k = snprintf(cap > len ? buf + len : NULL, cap > len ? cap - len : 0, "%s%s %s",
                         i ? ", " : "", sorted[i]->def->name, singa_plugin_version(sorted[i]));
        len += (size_t)(k > 0 ? k : 0);
    }
    free(sorted);
    return len < cap && len <= INT_MAX ? (int)len : -1;
}

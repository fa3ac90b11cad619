/* The gradient check of a plugin's layer types (singa-tui --check-plugin): the harness of
 * singa/gradcheck.h on the example each type registered with (or the default one). */
#include <string.h>

#include "plugin/internal.h"

static int add_str(singa_conf *c, const char *key, const char *s)
{
    singa_conf *v = singa_conf_new_str(s);
    if (v && singa_conf_add(c, key, v) == 0)
        return 0;
    singa_conf_free(v);
    return -1;
}

/* The example's fields plus name and type: a layer table as a job would give it. */
static singa_conf *example_conf(const singa_plugin_type *pt, singa_err *err)
{
    const char *type = pt->type.name;
    singa_conf *c;
    if (pt->example.conf) {
        if (!(c = singa_conf_parse_text(pt->example.conf, err))) {
            singa_err_prefix(err, "layer type '%s': its example's conf: ", type);
            return NULL;
        }
        if (c->kind != SINGA_CONF_TABLE) {
            singa_conf_free(c);
            singa_err_set(err, "layer type '%s': its example's conf is a list, not a table of fields", type);
            return NULL;
        }
    } else if (!(c = singa_conf_new(SINGA_CONF_TABLE))) {
        singa_err_set(err, "out of memory");
        return NULL;
    }
    const char *given = singa_conf_str(c, "type", NULL);
    if (given && strcmp(given, type) != 0) {
        singa_conf_free(c);
        singa_err_set(err, "layer type '%s': its example's conf names type '%s'", type, given);
        return NULL;
    }
    if ((!given && add_str(c, "type", type) < 0) ||
        (!singa_conf_get(c, "name") && add_str(c, "name", "check") < 0)) {
        singa_conf_free(c);
        singa_err_set(err, "out of memory");
        return NULL;
    }
    return c;
}

int singa_plugin_gradcheck(const singa_registry *reg, const singa_plugin *p, size_t index,
                           singa_gradcheck_report *rep, singa_err *err)
{
    memset(rep, 0, sizeof *rep);
    if (index >= p->ntypes)
        return singa_err_set(err, "plugin '%s' has %zu layer types, not %zu", p->def->name, p->ntypes, index + 1);
    const singa_plugin_type *pt = p->types[index];
    if (!pt->type.backward || pt->type.max_src == 0)
        return 0; /* no gradient passes through it, or it has no inputs: nothing to check */
    singa_conf *conf = example_conf(pt, err);
    if (!conf)
        return -1;
    const singa_plugin_example *ex = &pt->example;
    int rc = singa_gradcheck(reg, conf, ex->inputs, ex->ninputs, ex->ndst, 7, rep, err);
    singa_conf_free(conf);
    return rc;
}

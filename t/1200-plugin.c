/* The plugin host API in C: listing, the ids string processes compare (the same whatever the
 * load order), folder scanning in name order, registries that hold plugins independently, the
 * check examples, and the parser of their conf text.  Runs in the build tree, where the plugins
 * of plugins/ are in plugins/.libs/. */
#include <string.h>

#include "singa/singa.h"
#include "tap.h"

#define SWISH "plugins/.libs/swish.so"
#define PRELU "plugins/.libs/prelu.so"

static singa_registry *load_two(const char *first, const char *second)
{
    singa_registry *reg = singa_registry_new();
    singa_err err = {{0}};
    if (singa_plugin_load(reg, first, NULL, &err) < 0 || singa_plugin_load(reg, second, NULL, &err) < 0)
        printf("# %s\n", err.msg);
    return reg;
}

static void test_ids(void)
{
    singa_registry *a = load_two(SWISH, PRELU), *b = load_two(PRELU, SWISH), *none = singa_registry_new();
    char ia[128], ib[128], small[10];
    int na = singa_registry_plugin_ids(a, ia, sizeof ia), nb = singa_registry_plugin_ids(b, ib, sizeof ib);
    ok(na > 0 && strcmp(ia, "prelu 1.0.0, swish 1.0.0") == 0, "ids: '%s'", ia);
    ok(na == nb && strcmp(ia, ib) == 0, "the same ids whatever the load order");
    ok(singa_registry_plugin_ids(a, small, sizeof small) == -1 && strcmp(small, "prelu 1.0") == 0,
       "ids that do not fit: -1 and a truncated prefix ('%s')", small);
    ok(singa_registry_plugin_ids(none, ia, sizeof ia) == 0 && ia[0] == 0, "no plugins: empty ids");

    const singa_plugin *ps[4];
    ok(singa_registry_plugins(a, ps, 4) == 2 && strcmp(singa_plugin_name(ps[0]), "swish") == 0 &&
       strcmp(singa_plugin_name(ps[1]), "prelu") == 0, "singa_registry_plugins lists in load order");
    ok(singa_registry_plugins(a, ps, 1) == 2, "and gives the count when cap is too small");
    const singa_layer_type *t[2];
    ok(singa_plugin_types(ps[0], t, 2) == 1 && strcmp(t[0]->name, "kSwish") == 0 &&
       singa_registry_find(a, "kSwish") == t[0], "a plugin's type is the registry's type");
    const singa_plugin_example *ex = singa_plugin_type_example(ps[0], t[0]);
    ok(ex && strcmp(ex->conf, "{ beta = 1.5 }") == 0 && ex->ninputs == 1 && ex->inputs[0].ndim == 2 &&
       ex->inputs[0].shape[0] == 4 && ex->inputs[0].shape[1] == 6,
       "swish's example: its conf and the default input of 4 x 6");
    ok(singa_plugin_type_example(ps[1], t[0]) == NULL, "no example for another plugin's type");

    /* The registries own their plugins: freeing one leaves the other's working. */
    singa_registry_free(b);
    singa_gradcheck_report rep;
    singa_err err = {{0}};
    ok(singa_plugin_gradcheck(a, ps[0], 0, &rep, &err) == 0 && rep.checked > 0 &&
       rep.max_rel_err < SINGA_PLUGIN_CHECK_TOL, "kSwish checks after another registry unloaded it (%.2g) %s",
       rep.max_rel_err, err.msg);
    ok(singa_plugin_gradcheck(a, ps[0], 1, &rep, &err) == -1 && strstr(err.msg, "has 1 layer types"),
       "a type index out of range: %s", err.msg);
    singa_registry_free(a);
    singa_registry_free(none);
}

static int nwarn;
static void count_warn(void *ud, const char *msg)
{
    nwarn++;
    printf("# warned: %s\n", msg);
}

static void test_scan(void)
{
    singa_registry *reg = singa_registry_new();
    const singa_plugin *ps[4];
    nwarn = 0;
    int n = singa_plugin_load_path(reg, "/no/such/folder::plugins/.libs:plugins/.libs", count_warn, NULL);
    ok(n == 2 && nwarn == 0, "scanning loads the folder's 2 plugins once; missing folders and empty entries are skipped quietly");
    ok(singa_registry_plugins(reg, ps, 4) == 2 && strcmp(singa_plugin_name(ps[0]), "prelu") == 0 &&
       strcmp(singa_plugin_name(ps[1]), "swish") == 0, "in file name order");
    ok(singa_plugin_load_path(reg, "t/plugins/.libs", count_warn, NULL) >= 1 && nwarn >= 8,
       "a folder of broken plugins: each is reported (%d), the good ones load", nwarn);
    ok(singa_registry_find(reg, "kDouble") != NULL, "the good one's type is there");
    singa_registry_free(reg);
}

static void test_conf_text(void)
{
    singa_err err = {{0}};
    singa_conf *c = singa_conf_parse_text(
        "{ beta = 1.5, name = 'x', on = true, off = false, -- a comment\n"
        "  param = { { init = { type = \"kConstant\", value = -2e-1 } }, {} }, s = \"a\\\"b\" }", &err);
    ok(c && c->kind == SINGA_CONF_TABLE && singa_conf_num(c, "beta", 0) == 1.5 &&
       strcmp(singa_conf_str(c, "name", ""), "x") == 0 && singa_conf_bool(c, "on", false) &&
       !singa_conf_bool(c, "off", true) && strcmp(singa_conf_str(c, "s", ""), "a\"b") == 0,
       "fields: numbers, strings, booleans, escapes, comments %s", err.msg);
    const singa_conf *param = singa_conf_get(c, "param");
    ok(param && param->kind == SINGA_CONF_LIST && param->n == 2 &&
       singa_conf_num(singa_conf_get(param->items[0], "init"), "value", 0) == -0.2 &&
       param->items[1]->kind == SINGA_CONF_TABLE && param->items[1]->n == 0,
       "nested lists and tables; {} is an empty table");
    singa_conf_free(c);
    c = singa_conf_parse_text("{ 1, 2; 3, }", &err);
    ok(c && c->kind == SINGA_CONF_LIST && c->n == 3 && c->items[2]->num == 3, "a list with ',' and ';' and a trailing separator");
    singa_conf_free(c);

    static const struct {
        const char *text, *want;
    } bad[] = {
        {"beta = 1", "at character 1: expected a table"},
        {"{ a = 1, 2 }", "at character 10: a table mixes list items and named fields"},
        {"{ a = }", "at character 7: expected a value"},
        {"{ a = 1 b = 2 }", "at character 9: expected ',' or '}'"},
        {"{ a = \"x }", "unfinished string"},
        {"{ a = 1e }", "not a number"},
        {"{ a = -inf }", "not a number"},
        {"{ a = inf }", "expected a value"},
        {"{ a = 1, a = 2 }", "a field given twice"},
        {"{ a = '\\q' }", "unknown escape"},
        {"{ } x", "at character 5: text after the table"},
        {"{ a = { b = 1 }", "at character 16: unexpected end: a table lacks its '}'"},
        {"{ 1,", "unexpected end"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err.msg[0] = 0;
        c = singa_conf_parse_text(bad[i].text, &err);
        ok(!c && strstr(err.msg, bad[i].want), "'%s' is refused: %s", bad[i].text, err.msg);
        singa_conf_free(c);
    }
}

int main(void)
{
    test_ids();
    test_scan();
    test_conf_text();
    return done_testing();
}

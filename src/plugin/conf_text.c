/* Conf trees from text in Lua's table syntax, so a plugin writes the example --check-plugin
 * uses as a job would write the layer: "{ beta = 1.5, param = { { init = { value = 2 } } } }".
 * The subset: tables with `name = value` fields or list items (',' or ';' between, one may
 * trail), numbers, strings in "" or '' with \\ \" \' \n \t escapes, true, false and -- comments.
 * As luaconf.c does for Lua tables, {} is an empty table and a table may not mix names and
 * items. */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plugin/internal.h"

#define MAX_DEPTH 32

typedef struct parser {
    const char *text, *p;
    singa_err *err;
} parser;

static singa_conf *fail(parser *ps, const char *what)
{
    singa_err_set(ps->err, "at character %d: %s", (int)(ps->p - ps->text) + 1, what);
    return NULL;
}

static void skip_space(parser *ps)
{
    for (;;) {
        while (isspace((unsigned char)*ps->p))
            ps->p++;
        if (ps->p[0] != '-' || ps->p[1] != '-')
            return;
        while (*ps->p && *ps->p != '\n')
            ps->p++;
    }
}

/* An identifier's length at p (0 when there is none). */
static size_t name_len(const char *p)
{
    size_t n = 0;
    if (!isalpha((unsigned char)*p) && *p != '_')
        return 0;
    while (isalnum((unsigned char)p[n]) || p[n] == '_')
        n++;
    return n;
}

static singa_conf *parse_string(parser *ps)
{
    char quote = *ps->p++;
    size_t cap = strlen(ps->p) + 1, n = 0;
    char *buf = malloc(cap);
    if (!buf)
        return fail(ps, "out of memory");
    for (; *ps->p != quote; ps->p++) {
        char c = *ps->p;
        if (!c || c == '\n') {
            free(buf);
            return fail(ps, "unfinished string");
        }
        if (c == '\\') {
            c = *++ps->p;
            c = c == 'n' ? '\n' : c == 't' ? '\t' : c;
            if (!strchr("\\\"'\n\t", c)) {
                free(buf);
                return fail(ps, "unknown escape in a string (\\\\ \\\" \\' \\n \\t are known)");
            }
        }
        buf[n++] = c;
    }
    ps->p++;
    buf[n] = 0;
    singa_conf *c = singa_conf_new_str(buf);
    free(buf);
    return c ? c : fail(ps, "out of memory");
}

static singa_conf *parse_value(parser *ps, int depth);

static singa_conf *parse_table(parser *ps, int depth)
{
    if (depth > MAX_DEPTH)
        return fail(ps, "tables nested too deeply");
    ps->p++; /* '{' */
    singa_conf *t = singa_conf_new(SINGA_CONF_TABLE);
    if (!t)
        return fail(ps, "out of memory");
    int named = -1; /* unknown until the first entry */
    for (;;) {
        skip_space(ps);
        if (!*ps->p) {
            singa_conf_free(t);
            return fail(ps, "unexpected end: a table lacks its '}'");
        }
        if (*ps->p == '}') {
            ps->p++;
            return t;
        }
        char key[128] = "";
        size_t klen = name_len(ps->p);
        const char *after = ps->p + klen;
        while (klen && isspace((unsigned char)*after))
            after++;
        bool is_field = klen > 0 && *after == '=' && after[1] != '=';
        if (named >= 0 && named != is_field) {
            singa_conf_free(t);
            return fail(ps, "a table mixes list items and named fields");
        }
        named = is_field;
        if (is_field) {
            if (klen >= sizeof key) {
                singa_conf_free(t);
                return fail(ps, "field name too long");
            }
            memcpy(key, ps->p, klen);
            if (singa_conf_get(t, key)) {
                singa_conf_free(t);
                return fail(ps, "a field given twice");
            }
            ps->p = after + 1;
        } else if (t->kind != SINGA_CONF_LIST) {
            t->kind = SINGA_CONF_LIST;
        }
        singa_conf *v = parse_value(ps, depth + 1);
        if (!v || singa_conf_add(t, is_field ? key : NULL, v) < 0) {
            if (v) {
                singa_conf_free(v);
                fail(ps, "out of memory");
            }
            singa_conf_free(t);
            return NULL;
        }
        skip_space(ps);
        if (*ps->p == ',' || *ps->p == ';')
            ps->p++;
        else if (*ps->p != '}') {
            singa_conf_free(t);
            return fail(ps, *ps->p ? "expected ',' or '}'" : "unexpected end: a table lacks its '}'");
        }
    }
}

static singa_conf *parse_value(parser *ps, int depth)
{
    skip_space(ps);
    char c = *ps->p;
    if (c == '{')
        return parse_table(ps, depth);
    if (c == '"' || c == '\'')
        return parse_string(ps);
    size_t n = name_len(ps->p);
    if ((n == 4 && strncmp(ps->p, "true", 4) == 0) || (n == 5 && strncmp(ps->p, "false", 5) == 0)) {
        ps->p += n;
        singa_conf *b = singa_conf_new_bool(n == 4);
        return b ? b : fail(ps, "out of memory");
    }
    if (isdigit((unsigned char)c) || c == '-' || c == '+' || c == '.') {
        char *end;
        double v = strtod(ps->p, &end);
        if (end == ps->p || !isfinite(v) || name_len(end) > 0)
            return fail(ps, "not a number");
        ps->p = end;
        singa_conf *num = singa_conf_new_num(v);
        return num ? num : fail(ps, "out of memory");
    }
    return fail(ps, c ? "expected a value: a number, a string, true, false or a table" : "unexpected end");
}

singa_conf *singa_conf_parse_text(const char *text, singa_err *err)
{
    parser ps = {.text = text, .p = text, .err = err};
    skip_space(&ps);
    if (*ps.p != '{')
        return fail(&ps, "expected a table ({ ... })");
    singa_conf *c = parse_value(&ps, 0);
    skip_space(&ps);
    if (c && *ps.p) {
        singa_conf_free(c);
        return fail(&ps, "text after the table");
    }
    return c;
}

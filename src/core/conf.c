/* Configuration trees and their validation against field schemas. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "singa/conf.h"

singa_conf *singa_conf_new(singa_conf_kind kind)
{
    singa_conf *c = calloc(1, sizeof *c);
    if (c)
        c->kind = kind;
    return c;
}

singa_conf *singa_conf_new_num(double v)
{
    singa_conf *c = singa_conf_new(SINGA_CONF_NUM);
    if (c)
        c->num = v;
    return c;
}

singa_conf *singa_conf_new_bool(bool v)
{
    singa_conf *c = singa_conf_new(SINGA_CONF_BOOL);
    if (c)
        c->b = v;
    return c;
}

singa_conf *singa_conf_new_str(const char *s)
{
    singa_conf *c = singa_conf_new(SINGA_CONF_STR);
    if (c && !(c->str = strdup(s))) {
        free(c);
        return NULL;
    }
    return c;
}

singa_func *singa_func_retain(singa_func *f)
{
    if (f)
        f->refs++;
    return f;
}

void singa_func_release(singa_func *f)
{
    if (f && --f->refs == 0)
        f->destroy(f);
}

singa_conf *singa_conf_new_func(singa_func *f)
{
    singa_conf *c = singa_conf_new(SINGA_CONF_FUNC);
    if (c)
        c->func = f;
    else
        singa_func_release(f);
    return c;
}

void singa_conf_free(singa_conf *c)
{
    if (!c)
        return;
    singa_func_release(c->func);
    for (size_t i = 0; i < c->n; i++) {
        singa_conf_free(c->items[i]);
        if (c->keys)
            free(c->keys[i]);
    }
    free(c->items);
    free(c->keys);
    free(c->str);
    free(c);
}

int singa_conf_add(singa_conf *c, const char *key, singa_conf *item)
{
    singa_conf **items = realloc(c->items, (c->n + 1) * sizeof *items);
    if (!items)
        return -1;
    c->items = items;
    if (c->kind == SINGA_CONF_TABLE) {
        char **keys = realloc(c->keys, (c->n + 1) * sizeof *keys);
        if (!keys)
            return -1;
        c->keys = keys;
        if (!(keys[c->n] = strdup(key)))
            return -1;
    }
    items[c->n++] = item;
    return 0;
}

singa_conf *singa_conf_clone(const singa_conf *c)
{
    singa_conf *d = singa_conf_new(c->kind);
    if (!d)
        return NULL;
    d->b = c->b;
    d->num = c->num;
    d->func = singa_func_retain(c->func);
    if (c->str && !(d->str = strdup(c->str)))
        goto fail;
    for (size_t i = 0; i < c->n; i++) {
        singa_conf *item = singa_conf_clone(c->items[i]);
        if (!item || singa_conf_add(d, c->keys ? c->keys[i] : NULL, item) < 0) {
            singa_conf_free(item);
            goto fail;
        }
    }
    return d;
fail:
    singa_conf_free(d);
    return NULL;
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ ((const unsigned char *)p)[i]) * 0x100000001b3ull;
    return h;
}

/* A table's fields are combined by a sum, since a Lua table's order of keys differs from one
 * process to the next; a list's items are hashed in order. */
uint64_t singa_conf_hash(const singa_conf *c)
{
    uint64_t h = fnv(0xcbf29ce484222325ull, &(uint8_t){(uint8_t)c->kind}, 1), sum = 0;
    if (c->kind == SINGA_CONF_BOOL)
        h = fnv(h, &(uint8_t){c->b}, 1);
    else if (c->kind == SINGA_CONF_NUM)
        h = fnv(h, &c->num, sizeof c->num);
    else if (c->kind == SINGA_CONF_STR)
        h = fnv(h, c->str, strlen(c->str));
    for (size_t i = 0; i < c->n; i++) {
        uint64_t item = singa_conf_hash(c->items[i]);
        if (c->kind == SINGA_CONF_TABLE)
            sum += fnv(item, c->keys[i], strlen(c->keys[i])) * 0x9e3779b97f4a7c15ull;
        else
            h = fnv(h, &item, sizeof item);
    }
    return fnv(h, &sum, sizeof sum);
}

const singa_conf *singa_conf_get(const singa_conf *t, const char *key)
{
    if (!t || t->kind != SINGA_CONF_TABLE)
        return NULL;
    for (size_t i = 0; i < t->n; i++)
        if (strcmp(t->keys[i], key) == 0)
            return t->items[i];
    return NULL;
}

double singa_conf_num(const singa_conf *t, const char *key, double def)
{
    const singa_conf *v = singa_conf_get(t, key);
    return v && v->kind == SINGA_CONF_NUM ? v->num : def;
}

int singa_conf_int(const singa_conf *t, const char *key, int def)
{
    const singa_conf *v = singa_conf_get(t, key);
    return v && v->kind == SINGA_CONF_NUM ? (int)v->num : def;
}

bool singa_conf_bool(const singa_conf *t, const char *key, bool def)
{
    const singa_conf *v = singa_conf_get(t, key);
    return v && v->kind == SINGA_CONF_BOOL ? v->b : def;
}

const char *singa_conf_str(const singa_conf *t, const char *key, const char *def)
{
    const singa_conf *v = singa_conf_get(t, key);
    return v && v->kind == SINGA_CONF_STR ? v->str : def;
}

size_t singa_conf_strs_len(const singa_conf *t, const char *key)
{
    const singa_conf *v = singa_conf_get(t, key);
    if (!v)
        return 0;
    return v->kind == SINGA_CONF_STR ? 1 : v->n;
}

singa_func *singa_conf_func(const singa_conf *t, const char *key)
{
    const singa_conf *v = singa_conf_get(t, key);
    return v && v->kind == SINGA_CONF_FUNC ? v->func : NULL;
}

const char *singa_conf_strs_at(const singa_conf *t, const char *key, size_t i)
{
    const singa_conf *v = singa_conf_get(t, key);
    if (!v)
        return NULL;
    return v->kind == SINGA_CONF_STR ? v->str : v->items[i]->str;
}

const char *singa_conf_kind_name(singa_conf_kind kind)
{
    static const char *const names[] = {"boolean", "number", "string", "list", "table", "function"};
    return names[kind];
}

static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b), row[64];
    if (la >= 63 || lb >= 63)
        return 99;
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j], best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best)
                best = up + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            diag = up;
            row[j] = best;
        }
    }
    return row[lb];
}

const char *singa_suggest(const char *name, const char *const *cands, size_t n)
{
    const char *best = NULL;
    size_t best_d = strlen(name) / 3 + 2; /* allow about one typo per three characters, 2 or more */
    for (size_t i = 0; i < n; i++) {
        size_t d = edit_distance(name, cands[i]);
        if (d < best_d || (d == best_d && !best && d <= 2)) {
            best = cands[i];
            best_d = d;
        }
    }
    return best;
}

int singa_err_unknown(singa_err *err, const char *what, const char *kind, const char *value,
                      const char *const *candidates, size_t n)
{
    const char *hint = singa_suggest(value, candidates, n);
    return singa_err_set(err, "%s%sunknown %s '%s'%s%s%s", what ? what : "", what ? ": " : "", kind,
                         value, hint ? " (did you mean '" : "", hint ? hint : "", hint ? "'?)" : "");
}

static bool is_list_of(const singa_conf *v, singa_conf_kind kind)
{
    if (v->kind == SINGA_CONF_TABLE && v->n == 0) /* {} is an empty list too */
        return true;
    if (v->kind != SINGA_CONF_LIST)
        return false;
    for (size_t i = 0; i < v->n; i++)
        if (v->items[i]->kind != kind)
            return false;
    return true;
}

static const char *type_want(singa_field_type t)
{
    static const char *const want[] = {
        [SINGA_FIELD_INT] = "an integer",         [SINGA_FIELD_NUM] = "a number",
        [SINGA_FIELD_BOOL] = "a boolean",         [SINGA_FIELD_STR] = "a string",
        [SINGA_FIELD_STRS] = "a string or a list of strings",
        [SINGA_FIELD_TABLE] = "a table",          [SINGA_FIELD_TABLES] = "a list of tables",
        [SINGA_FIELD_NUMS] = "a number or a list of numbers",
        [SINGA_FIELD_FUNC] = "a function",
        [SINGA_FIELD_TABLE_OR_FUNC] = "a table or a function",
        [SINGA_FIELD_STR_OR_TABLE] = "a string or a table",
    };
    return want[t];
}

static bool type_ok(const singa_conf *v, singa_field_type t)
{
    switch (t) {
    case SINGA_FIELD_INT:
        return v->kind == SINGA_CONF_NUM && v->num == floor(v->num) && fabs(v->num) < 2e9;
    case SINGA_FIELD_NUM:
        return v->kind == SINGA_CONF_NUM;
    case SINGA_FIELD_BOOL:
        return v->kind == SINGA_CONF_BOOL;
    case SINGA_FIELD_STR:
        return v->kind == SINGA_CONF_STR;
    case SINGA_FIELD_STRS:
        return v->kind == SINGA_CONF_STR || is_list_of(v, SINGA_CONF_STR);
    case SINGA_FIELD_TABLE:
        return v->kind == SINGA_CONF_TABLE;
    case SINGA_FIELD_TABLES:
        return is_list_of(v, SINGA_CONF_TABLE);
    case SINGA_FIELD_NUMS:
        return v->kind == SINGA_CONF_NUM || is_list_of(v, SINGA_CONF_NUM);
    case SINGA_FIELD_FUNC:
        return v->kind == SINGA_CONF_FUNC;
    case SINGA_FIELD_TABLE_OR_FUNC:
        return v->kind == SINGA_CONF_TABLE || v->kind == SINGA_CONF_FUNC;
    case SINGA_FIELD_STR_OR_TABLE:
        return v->kind == SINGA_CONF_STR || v->kind == SINGA_CONF_TABLE;
    }
    return false;
}

static const char *describe(const singa_conf *v, char *buf, size_t len)
{
    switch (v->kind) {
    case SINGA_CONF_STR:
        snprintf(buf, len, "string \"%.40s\"", v->str);
        break;
    case SINGA_CONF_NUM:
        snprintf(buf, len, "number %g", v->num);
        break;
    default:
        snprintf(buf, len, "%s", singa_conf_kind_name(v->kind));
    }
    return buf;
}

int singa_conf_check(const singa_conf *t, const singa_field *const *schemas, const char *what,
                     singa_err *err)
{
    if (!t || t->kind != SINGA_CONF_TABLE)
        return singa_err_set(err, "%s: expected a table with named fields", what);
    for (size_t i = 0; i < t->n; i++) {
        const char *key = t->keys[i];
        const singa_field *found = NULL;
        for (const singa_field *const *s = schemas; *s && !found; s++)
            for (const singa_field *f = *s; f->name; f++)
                if (strcmp(f->name, key) == 0) {
                    found = f;
                    break;
                }
        if (!found) {
            const char *names[256];
            size_t n = 0;
            for (const singa_field *const *s = schemas; *s; s++)
                for (const singa_field *f = *s; f->name && n < 256; f++)
                    names[n++] = f->name;
            return singa_err_unknown(err, what, "field", key, names, n);
        }
        if (!type_ok(t->items[i], found->type)) {
            char buf[64];
            return singa_err_set(err, "%s: field '%s' must be %s, got %s", what, key,
                                 type_want(found->type), describe(t->items[i], buf, sizeof buf));
        }
    }
    return 0;
}

/* Editing a conf tree in place (conf_edit.h). */
#include <stdlib.h>
#include <string.h>

#include "plan/conf_edit.h"

static long find(const singa_conf *t, const char *key)
{
    for (size_t i = 0; t->keys && i < t->n; i++)
        if (t->keys[i] && strcmp(t->keys[i], key) == 0)
            return (long)i;
    return -1;
}

int plan_conf_set(singa_conf *table, const char *key, singa_conf *item)
{
    if (!item)
        return -1;
    long i = find(table, key);
    if (i >= 0) {
        singa_conf_free(table->items[i]);
        table->items[i] = item;
        return 0;
    }
    if (singa_conf_add(table, key, item) < 0) {
        singa_conf_free(item);
        return -1;
    }
    return 0;
}

void plan_conf_del(singa_conf *table, const char *key)
{
    long i = find(table, key);
    if (i < 0)
        return;
    singa_conf_free(table->items[i]);
    free(table->keys[i]);
    memmove(table->items + i, table->items + i + 1, (table->n - (size_t)i - 1) * sizeof *table->items);
    memmove(table->keys + i, table->keys + i + 1, (table->n - (size_t)i - 1) * sizeof *table->keys);
    table->n--;
}

singa_conf *plan_conf_table(singa_conf *table, const char *key)
{
    long i = find(table, key);
    if (i >= 0 && table->items[i]->kind == SINGA_CONF_TABLE)
        return table->items[i];
    singa_conf *t = singa_conf_new(SINGA_CONF_TABLE);
    return plan_conf_set(table, key, t) < 0 ? NULL : t;
}

/* Checkpoint folders: the names of a step's files, listing them newest first, pruning. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "singa/checkpoint.h"

void singa_ckpt_path(char *buf, size_t len, const char *dir, uint64_t step)
{
    snprintf(buf, len, "%s/step%09llu.ckpt", dir, (unsigned long long)step);
}

static int cmp_desc(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* The entries of dir whose names `parse` takes (each filling a `size`-byte item), sorted by cmp;
 * none when dir does not exist. */
static int list_dir(const char *dir, size_t size, int (*parse)(const char *name, void *item),
                    int (*cmp)(const void *, const void *), void **items, size_t *n, singa_err *err)
{
    *items = NULL;
    *n = 0;
    DIR *d = opendir(dir);
    if (!d)
        return errno == ENOENT ? 0 : singa_err_set(err, "checkpoint directory '%s': %s", dir, strerror(errno));
    size_t cap = 0;
    int rc = 0;
    for (struct dirent *e; rc == 0 && (e = readdir(d));) {
        if (*n == cap) {
            void *t = realloc(*items, (cap = cap ? 2 * cap : 16) * size);
            if (!t) {
                rc = singa_err_set(err, "out of memory");
                break;
            }
            *items = t;
        }
        if (parse(e->d_name, (char *)*items + *n * size) == 0)
            (*n)++;
    }
    closedir(d);
    if (rc < 0) {
        free(*items);
        *items = NULL;
        *n = 0;
        return rc;
    }
    if (*n > 1)
        qsort(*items, *n, size, cmp);
    return 0;
}

static int parse_step(const char *name, void *step)
{
    unsigned long long s;
    char tail[8];
    if (sscanf(name, "step%llu.ck%7s", &s, tail) != 2 || strcmp(tail, "pt") != 0)
        return -1;
    *(uint64_t *)step = s;
    return 0;
}

int singa_ckpt_dir_list(const char *dir, uint64_t **steps, size_t *n, singa_err *err)
{
    void *items;
    int rc = list_dir(dir, sizeof **steps, parse_step, cmp_desc, &items, n, err);
    *steps = items;
    return rc;
}

int singa_ckpt_dir_prune(const char *dir, int keep, int64_t spare, singa_err *err)
{
    uint64_t *steps;
    size_t n;
    if (singa_ckpt_dir_list(dir, &steps, &n, err) < 0)
        return -1;
    for (size_t i = (size_t)(keep > 0 ? keep : 1); i < n; i++) {
        if (spare >= 0 && steps[i] == (uint64_t)spare)
            continue;
        char path[4096];
        singa_ckpt_path(path, sizeof path, dir, steps[i]);
        unlink(path);
    }
    free(steps);
    singa_ckpt_dir_clean(dir);
    return 0;
}

void singa_ckpt_dir_clean(const char *dir) { singa_ckpt_dir_drop_tmp(dir, NULL, NULL); }

void singa_ckpt_part_path(char *buf, size_t len, const char *dir, uint64_t step, int kind, int group, int id)
{
    if (kind == SINGA_CKPT_LOCAL)
        singa_ckpt_path(buf, len, dir, step);
    else
        snprintf(buf, len, "%s/step%09llu.%c%d.%d.ckpt", dir, (unsigned long long)step, kind, group, id);
}

/* Parses "stepS.ckpt" or "stepS.[sw]G.J.ckpt", S of at least 9 digits; 0 when it is one. */
static int parse_name(const char *name, void *item)
{
    singa_ckpt_file *f = item;
    unsigned long long step;
    int at = 0, group, id;
    char kind;
    if (strncmp(name, "step", 4) != 0 || strspn(name + 4, "0123456789") < 9)
        return -1;
    if (sscanf(name, "step%llu%n", &step, &at) != 1)
        return -1;
    *f = (singa_ckpt_file){.step = step, .kind = SINGA_CKPT_LOCAL};
    if (strcmp(name + at, ".ckpt") == 0)
        return 0;
    int end = 0;
    if (sscanf(name + at, ".%c%d.%d.ckpt%n", &kind, &group, &id, &end) != 3 || name[at + end] != 0 ||
        (kind != SINGA_CKPT_SERVER && kind != SINGA_CKPT_WORKER) || group < 0 || id < 0 ||
        !isdigit((unsigned char)name[at + 2]))
        return -1;
    f->kind = kind;
    f->group = group;
    f->id = id;
    return 0;
}

void singa_ckpt_dir_drop_tmp(const char *dir, bool (*which)(const singa_ckpt_file *f, void *ud), void *ud)
{
    /* A "*.ckpt.tmp" left by a crash mid-write is garbage: the rename never happened. */
    DIR *d = opendir(dir);
    for (struct dirent *e; d && (e = readdir(d));) {
        size_t len = strlen(e->d_name);
        char name[256], path[4096];
        singa_ckpt_file f;
        if (strncmp(e->d_name, "step", 4) != 0 || len <= 9 || strcmp(e->d_name + len - 9, ".ckpt.tmp") != 0)
            continue;
        snprintf(name, sizeof name, "%.*s", (int)(len - 4), e->d_name); /* without ".tmp" */
        if (which && (parse_name(name, &f) != 0 || !which(&f, ud)))
            continue;
        if (snprintf(path, sizeof path, "%s/%s", dir, e->d_name) < (int)sizeof path)
            unlink(path);
    }
    if (d)
        closedir(d);
}

static int cmp_files(const void *a, const void *b)
{
    const singa_ckpt_file *x = a, *y = b;
    if (x->step != y->step)
        return x->step < y->step ? 1 : -1;
    if (x->kind != y->kind)
        return x->kind < y->kind ? -1 : 1;
    if (x->group != y->group)
        return x->group < y->group ? -1 : 1;
    return x->id < y->id ? -1 : x->id > y->id;
}

int singa_ckpt_dir_files(const char *dir, singa_ckpt_file **files, size_t *n, singa_err *err)
{
    void *items;
    int rc = list_dir(dir, sizeof **files, parse_name, cmp_files, &items, n, err);
    *files = items;
    return rc;
}

int singa_mkdirs(const char *dir, singa_err *err)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", dir);
    for (char *p = buf + 1;; p++) {
        if (*p == '/' || *p == 0) {
            char c = *p;
            *p = 0;
            if (mkdir(buf, 0755) != 0 && errno != EEXIST)
                return singa_err_set(err, "cannot create directory '%s': %s", buf, strerror(errno));
            if (!(*p = c))
                break;
        }
    }
    return 0;
}

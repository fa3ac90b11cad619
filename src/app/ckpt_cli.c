/* singa-tui --ckpt-info and --ckpt-gather: see ckpt_cli.h. */
#include <stdio.h>
#include <string.h>

#include "app/ckpt_cli.h"
#include "singa/singa.h"

/* Every step refused on the way is named on stderr; the exit status says one was. */
static void on_refused(void *ud, uint64_t step, bool incomplete, const char *reason)
{
    (void)step, (void)incomplete;
    *(int *)ud = 1;
    fprintf(stderr, "singa-tui: refused %s\n", reason);
}

static void shape(const singa_ckpt_entry *e, char *buf, size_t len)
{
    buf[0] = 0;
    for (int d = 0; d < e->ndim; d++)
        singa_appendf(buf, len, d ? "x%u" : "%u", e->dims[d]);
}

int singa_tui_ckpt_info(const char *path)
{
    singa_ckpt_set s;
    singa_err err = {{0}};
    int bad = 0;
    if (singa_ckpt_set_open(&s, path, NULL, on_refused, &bad, &err) != 0) {
        fprintf(stderr, "singa-tui: --ckpt-info: %s\n", err.msg);
        return 1;
    }
    char buf[5000];
    singa_ckpt_topology_describe(s.topology, buf, sizeof buf);
    printf("checkpoint %s\nstep %llu\ntopology %s\n", s.where, (unsigned long long)s.step, buf);
    for (int updater = 0; updater < 2; updater++) {
        printf("%s:\n", updater ? "updater slots" : "params");
        for (size_t i = 0; i < s.model.n; i++) {
            const singa_ckpt_entry *e = &s.model.entries[i];
            if (strncmp(e->name, updater ? "updater/" : "param/", updater ? 8 : 6) != 0)
                continue;
            shape(e, buf, sizeof buf);
            printf("  %-40s %s\n", e->name + (updater ? 8 : 6), buf);
        }
    }
    printf("workers' states:");
    for (size_t i = 0; i < s.nworkers; i++)
        printf(" %d.%d (%zu entries)", s.workers[i].group, s.workers[i].id, s.workers[i].state.n);
    printf("\n");
    if (singa_ckpt_set_lacks(&s, buf, sizeof buf))
        printf("%s\n", buf);
    printf("files:\n");
    for (size_t i = 0; i < s.nfiles; i++)
        printf("  %s: CRC ok\n", s.files[i].path);
    singa_ckpt_set_free(&s);
    return bad;
}

int singa_tui_ckpt_gather(const char *path, const char *out)
{
    singa_ckpt_set s;
    singa_err err = {{0}};
    int bad = 0;
    if (singa_ckpt_set_open(&s, path, NULL, on_refused, &bad, &err) != 0) {
        fprintf(stderr, "singa-tui: --ckpt-gather: %s\n", err.msg);
        return 1;
    }
    int rc = singa_ckpt_set_gather(&s, out, &err);
    if (rc < 0)
        fprintf(stderr, "singa-tui: --ckpt-gather: %s\n", err.msg);
    else
        printf("wrote %s: step %llu of %s, %zu files gathered\n", out, (unsigned long long)s.step, s.where, s.nfiles);
    singa_ckpt_set_free(&s);
    return rc < 0;
}

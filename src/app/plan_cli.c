/* singa-tui --plan (plan_cli.h): the job's net profiled on this machine, the configurations of
 * --procs N processes (or one per --hosts host, or N spread over the hosts) ranked, the table printed and --plan-out
 * written; --simulate N ranks them again for N processes on the same measurements. */
#include <lauxlib.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/plan_cli.h"
#include "lua/lcore.h"
#include "singa/singa.h"

/* The hosts of a comma-separated list. */
static int count_hosts(const char *hosts)
{
    int n = 1;
    for (const char *s = hosts; *s; s++)
        n += *s == ',';
    return n;
}

int singa_tui_plan_check(const singa_tui_plan_args *a)
{
    if (!a->hosts)
        return 0;
    char *list = strdup(a->hosts), *save = NULL;
    int rc = list ? 0 : 2;
    for (char *h = list ? strtok_r(list, ",", &save) : NULL; h && rc == 0; h = strtok_r(NULL, ",", &save)) {
        const char *again = strstr(a->hosts, h);
        size_t len = strlen(h);
        for (again = strstr(again + len, h); again; again = strstr(again + 1, h))
            if ((again == a->hosts || again[-1] == ',') && (again[len] == ',' || !again[len])) {
                fprintf(stderr, "singa-tui: --hosts names '%s' twice: name a host once (--procs N spreads N "
                                "processes over the hosts)\n", h);
                rc = 2;
                break;
            }
        struct addrinfo *ai = NULL;
        if (rc == 0 && getaddrinfo(h, NULL, NULL, &ai) != 0) {
            fprintf(stderr, "singa-tui: --hosts: host '%s' is unreachable (its name does not resolve)\n", h);
            rc = 2;
        }
        if (ai)
            freeaddrinfo(ai);
    }
    if (rc == 0 && (strstr(a->hosts, ",,") || a->hosts[0] == ',' || !a->hosts[0] ||
                    a->hosts[strlen(a->hosts) - 1] == ',')) {
        fprintf(stderr, "singa-tui: --hosts '%s': an empty host name\n", a->hosts);
        rc = 2;
    }
    free(list);
    if (rc == 0 && a->procs && a->procs < count_hosts(a->hosts)) {
        fprintf(stderr, "singa-tui: --plan --procs %d over %d hosts (--hosts '%s'): fewer processes than hosts\n",
                a->procs, count_hosts(a->hosts), a->hosts);
        rc = 2;
    }
    return rc;
}

static void write_out(lua_State *L, const singa_plan *plan, const char *path)
{
    FILE *f = fopen(path, "w");
    int rc = f ? singa_plan_write_jsonl(plan, f) : -1;
    if (f && fclose(f) != 0)
        rc = -1;
    if (rc < 0)
        luaL_error(L, "singa-tui --plan-out: cannot write '%s'", path);
}

void singa_tui_mode_plan(lua_State *L, const char *arg)
{
    const singa_tui_plan_args *a = (const singa_tui_plan_args *)(const void *)arg;
    singa_registry *reg;
    singa_conf *conf = singa_lua_job_conf(L, 1, &reg);
    int hosts = a->hosts ? count_hosts(a->hosts) : 0, n = a->procs ? a->procs : hosts ? hosts : 2;
    singa_plan_link link;
    singa_plan plan = {0};
    singa_err err = {{0}};
    int rc = singa_plan_link_parse(&link, a->link ? a->link : a->hosts ? "1gbit" : "local", &err);
    link.per_host = hosts ? (n + hosts - 1) / hosts : n; /* --procs alone: all on this machine */
    link.cores = a->cores;
    if (hosts && rc == 0)
        singa_plan_link_hosts(&link, link.per_host);
    pthread_mutex_t *lock = singa_lua_get_opts(L)->lock; /* the profile is a job: a kLua updater takes it */
    if (lock)
        pthread_mutex_unlock(lock);
    if (rc == 0 && (rc = singa_plan_make(&plan, conf, reg, n, &link, true, &err)) < 0)
        singa_appendf(err.msg, sizeof err.msg, " (the profile trains a few steps of the job on its data)");
    if (rc == 0 && a->simulate)
        rc = singa_plan_rank(&plan, conf, reg, a->simulate, &err);
    if (lock)
        pthread_mutex_lock(lock);
    singa_conf_free(conf);
    if (rc < 0) {
        singa_plan_free(&plan);
        luaL_error(L, "singa-tui --plan: %s", err.msg);
    }
    if (singa_plan_print(&plan, stdout) < 0) {
        singa_plan_free(&plan);
        luaL_error(L, "singa-tui --plan: cannot write to standard output");
    }
    if (a->out)
        write_out(L, &plan, a->out);
    char why[sizeof plan.why_none];
    snprintf(why, sizeof why, "%s", plan.why_none);
    int nprocs = plan.nprocs, none = plan.nrows < 2 && nprocs > 1;
    singa_plan_free(&plan);
    if (none)
        luaL_error(L, "singa-tui --plan: the job's net admits no distributed configuration over %d processes: %s",
                   nprocs, why);
}

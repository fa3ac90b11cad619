/* The topology's fields, its rules and SINGA's placement of threads in processes; the rank and
 * size a launcher gave this process, and an elastic job's topology fitted to that size. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "singa/cluster.h"
#include "singa/updater.h"
#include "core/launch.h"

const singa_field singa_cluster_fields[] = {
    {"nworker_groups", SINGA_FIELD_INT},      {"nserver_groups", SINGA_FIELD_INT},
    {"nworkers_per_group", SINGA_FIELD_INT},  {"nservers_per_group", SINGA_FIELD_INT},
    {"nworkers_per_procs", SINGA_FIELD_INT},  {"nservers_per_procs", SINGA_FIELD_INT},
    {"server_worker_separate", SINGA_FIELD_BOOL}, {"sync_freq", SINGA_FIELD_INT},
    {"share_memory", SINGA_FIELD_BOOL},       {"workspace", SINGA_FIELD_STR},
    {"coordinator", SINGA_FIELD_STR},         {"bind", SINGA_FIELD_STR},
    {"heartbeat_timeout", SINGA_FIELD_NUM},   {"framework", SINGA_FIELD_STR},
    {"join_timeout", SINGA_FIELD_NUM},        {"curve", SINGA_FIELD_TABLE},
    {"shard_params", SINGA_FIELD_BOOL},       {"elastic", SINGA_FIELD_TABLE},
    {"monitor", SINGA_FIELD_TABLE},          {"staleness", SINGA_FIELD_INT},
    {"compress", SINGA_FIELD_STR_OR_TABLE},  {"momentum_compensation", SINGA_FIELD_BOOL},
    {"outer", SINGA_FIELD_TABLE},             {"plan", SINGA_FIELD_STR},
    {"replicas", SINGA_FIELD_INT},           {"shrink", SINGA_FIELD_STR},
    {NULL, 0},
};

static const singa_field compress_fields[] = {
    {"topk", SINGA_FIELD_NUM},
    {"error_feedback", SINGA_FIELD_BOOL},
    {"values", SINGA_FIELD_STR},
    {"powersgd", SINGA_FIELD_NUM},
    {"start", SINGA_FIELD_NUM},
    {NULL, 0},
};

/* A whole number in [lo, hi] read from a number field, or -1 (the caller names the field). */
static int whole_number(const singa_conf *conf, const char *name, double lo, double hi, double dflt, int *out)
{
    double v = singa_conf_num(conf, name, dflt);
    if (!(v >= lo && v <= hi && v == floor(v)))
        return -1;
    *out = (int)v;
    return 0;
}

/* { powersgd = R [, start = S] [, error_feedback = bool] }: R a positive integer (the rank of
 * each 2-D gradient's factors), S the first steps that go uncompressed; error feedback is on
 * unless told otherwise.  Neither top-k nor `values` go with it: no values come back. */
static int read_powersgd(singa_cluster *cl, const singa_conf *conf, singa_err *err)
{
    singa_compress *c = &cl->compress;
    c->kind = SINGA_COMPRESS_POWERSGD;
    c->error_feedback = singa_conf_bool(conf, "error_feedback", true);
    if (whole_number(conf, "powersgd", 1, 65536, NAN, &cl->powersgd) < 0)
        return singa_err_set(err, "cluster.compress: field 'powersgd' (the rank of each gradient's factors) must be a "
                                  "positive integer, got %g", singa_conf_num(conf, "powersgd", NAN));
    if (whole_number(conf, "start", 0, 1e9, 0, &cl->powersgd_start) < 0)
        return singa_err_set(err, "cluster.compress: field 'start' (the first steps that go uncompressed) must be an "
                                  "integer >= 0, got %g", singa_conf_num(conf, "start", NAN));
    if (singa_conf_get(conf, "topk") || singa_conf_get(conf, "values"))
        return singa_err_set(err, "cluster.compress: powersgd takes neither 'topk' nor 'values' (every process applies "
                                  "the low-rank update itself: no values come back); give { powersgd = R [, start = S] "
                                  "[, error_feedback = true|false] }");
    return 0;
}

/* cluster.compress: "fp16", "bf16", { topk = ratio, error_feedback = bool, values = "fp16" |
 * "bf16" | "int8" | "fp32" | "update" } or { powersgd = rank, start = steps, error_feedback = bool }; absent:
 * none.  Top-k's values come back in fp16 unless told
 * otherwise: they are dense, and the servers keep them whole. */
static int read_compress(singa_cluster *cl, const singa_conf *conf, singa_err *err)
{
    singa_compress *c = &cl->compress;
    cl->powersgd = cl->powersgd_start = 0;
    static const char *const names[] = {"fp16", "bf16", "int8", "fp32", "update"};
    static const singa_compress_kind kinds[] = {SINGA_COMPRESS_FP16, SINGA_COMPRESS_BF16, SINGA_COMPRESS_INT8,
                                                SINGA_COMPRESS_NONE, SINGA_COMPRESS_UPDATE};
    *c = (singa_compress){SINGA_COMPRESS_NONE, 0, false, SINGA_COMPRESS_NONE};
    if (!conf)
        return 0;
    if (conf->kind == SINGA_CONF_STR) {
        for (int i = 0; i < 2; i++)
            if (strcmp(conf->str, names[i]) == 0) {
                c->kind = c->values = kinds[i];
                return 0;
            }
        return singa_err_set(err, "cluster: field 'compress' must be \"fp16\", \"bf16\", { topk = ratio, "
                                  "error_feedback = true|false, values = \"fp16\"|\"bf16\"|\"int8\"|\"fp32\"|"
                                  "\"update\" } or { powersgd = rank [, start = steps] [, error_feedback = true|false] }, "
                                  "got \"%.40s\"",
                             conf->str);
    }
    const singa_field *const schemas[] = {compress_fields, NULL};
    if (singa_conf_check(conf, schemas, "cluster.compress", err) < 0)
        return -1;
    if (singa_conf_get(conf, "powersgd"))
        return read_powersgd(cl, conf, err);
    if (singa_conf_get(conf, "start"))
        return singa_err_set(err, "cluster.compress: field 'start' goes with powersgd only");
    c->kind = SINGA_COMPRESS_TOPK;
    c->topk = singa_conf_num(conf, "topk", NAN);
    c->error_feedback = singa_conf_bool(conf, "error_feedback", false);
    if (!(c->topk > 0 && c->topk <= 1))
        return singa_err_set(err, "cluster.compress: field 'topk' (the share of values sent) must be in (0, 1], "
                                  "got %g", c->topk);
    const char *values = singa_conf_str(conf, "values", "fp16");
    for (int i = 0; i < 5; i++)
        if (strcmp(values, names[i]) == 0) {
            c->values = kinds[i];
            return 0;
        }
    return singa_err_set(err, "cluster.compress: field 'values' (how the values come back) must be \"fp16\", "
                              "\"bf16\", \"int8\", \"fp32\" or \"update\" (none: every process applies the "
                              "summed update itself), got \"%.40s\"", values);
}

/* values = "int8" sends each process the change from what it holds, which only a synchronous
 * job's answers (every one taken, in order) keep in step; the replicas of powersgd and of values =
 * "update" stay equal only when every process applies every step's update, and hold the whole
 * model. */
static int check_compress(const singa_cluster *c, singa_err *err)
{
    const char *self = c->compress.kind == SINGA_COMPRESS_POWERSGD ? "powersgd"
                       : c->compress.values == SINGA_COMPRESS_UPDATE ? "values = \"update\""
                                                                    : NULL;
    if (self && c->nworker_groups > 1)
        return singa_err_set(err, "cluster.compress: %s needs a synchronous job (one worker group: Sandblaster, "
                                  "AllReduce), as every process applies each step's update to its own copy; this one "
                                  "has %d asynchronous worker groups (Downpour, Hogwild): use fp16, bf16 or topk",
                             self, c->nworker_groups);
    if (self && c->shard_params)
        return singa_err_set(err, "cluster.compress: %s needs every process to hold the whole model, which "
                                  "shard_params = true does not", self);
    if (c->compress.values == SINGA_COMPRESS_INT8 && c->nworker_groups > 1)
        return singa_err_set(err, "cluster.compress: values = \"int8\" (changes to what each process holds) needs "
                                  "a synchronous job of one worker group; this one has %d", c->nworker_groups);
    return 0;
}

/* cluster.outer: an updater's conf, checked as the job's updater is (its errors say
 * "cluster.outer" where the job's say "updater"), for server groups that each train alone between
 * syncs: the rounds wait for every group, and a server group shared by several worker groups
 * would interleave their updates by timing. */
static int read_outer(singa_cluster *c, const singa_conf *conf, singa_err *err)
{
    c->outer = conf;
    if (!conf)
        return 0;
    if (c->nserver_groups < 2)
        return singa_err_set(err, "cluster: field 'outer' (an outer optimizer over the server groups' averaged "
                                  "changes) needs several server groups that sync (Hogwild, or nserver_groups > 1); "
                                  "this job has 1");
    if (c->nworker_groups != c->nserver_groups)
        return singa_err_set(err, "cluster: field 'outer' needs one worker group per server group (each group's "
                                  "own updates between syncs); got nworker_groups = %d, nserver_groups = %d",
                             c->nworker_groups, c->nserver_groups);
    singa_updater *u;
    if (singa_updater_create(&u, conf, NULL, err) < 0) {
        char msg[sizeof err->msg];
        const char *rest = strncmp(err->msg, "updater", 7) == 0 ? err->msg + 7 : err->msg;
        snprintf(msg, sizeof msg, "cluster.outer%s%s", rest == err->msg ? ": " : "", rest);
        return singa_err_set(err, "%s", msg);
    }
    singa_updater_free(u);
    return 0;
}

static const singa_field elastic_fields[] = {
    {"min", SINGA_FIELD_INT},
    {"max_restarts", SINGA_FIELD_INT},
    {NULL, 0},
};

static const singa_field curve_fields[] = {
    {"secret_key_file", SINGA_FIELD_STR},
    {"public_keys_dir", SINGA_FIELD_STR},
    {"coordinator_key_file", SINGA_FIELD_STR},
    {NULL, 0},
};

/* cluster.curve: this process's secret key, the folder of public keys allowed in, and the
 * coordinator's public key (default: this process's own, when every rank shares one pair). */
static int read_curve(singa_cluster *c, const singa_conf *conf, singa_err *err)
{
    const singa_field *const schemas[] = {curve_fields, NULL};
    c->curve_secret_key_file = c->curve_public_keys_dir = c->curve_coordinator_key_file = NULL;
    if (!conf)
        return 0;
    if (singa_conf_check(conf, schemas, "cluster.curve", err) < 0)
        return -1;
    c->curve_secret_key_file = singa_conf_str(conf, "secret_key_file", NULL);
    c->curve_public_keys_dir = singa_conf_str(conf, "public_keys_dir", NULL);
    c->curve_coordinator_key_file = singa_conf_str(conf, "coordinator_key_file", NULL);
    if (!c->curve_secret_key_file || !c->curve_public_keys_dir)
        return singa_err_set(err, "cluster.curve: needs both 'secret_key_file' (this process's key) and "
                                  "'public_keys_dir' (the public keys allowed to connect)");
    return 0;
}

/* Threads of a kind spread over processes: a process holds whole groups, or a group spans
 * whole processes, so that no process holds a fraction of two groups. */
static int check_per_procs(const char *what, int per_group, int ngroups, int per_procs, int *nprocs,
                           singa_err *err)
{
    if (per_procs % per_group != 0 && per_group % per_procs != 0)
        return singa_err_set(err, "cluster: n%ss_per_procs = %d must divide n%ss_per_group = %d or be a multiple of it "
                                  "(a process holds whole groups, or a group spans whole processes)",
                              what, per_procs, what, per_group);
    int total = per_group * ngroups;
    if (total % per_procs != 0)
        return singa_err_set(err, "cluster: the %d %ss (n%s_groups x n%ss_per_group) do not fill processes of "
                                  "n%ss_per_procs = %d evenly", total, what, what, what, what, per_procs);
    *nprocs = total / per_procs;
    return 0;
}

/* cluster.elastic, and `--elastic MIN` ($SINGA_ELASTIC), which sets its min. */
static int read_elastic(singa_cluster *c, const singa_conf *conf, singa_err *err)
{
    const singa_field *const schemas[] = {elastic_fields, NULL};
    c->elastic_min = 0;
    c->max_restarts = 3;
    if (conf) {
        if (singa_conf_check(conf, schemas, "cluster.elastic", err) < 0)
            return -1;
        if (!singa_conf_get(conf, "min"))
            return singa_err_set(err, "cluster.elastic: needs 'min', the fewest processes the job goes on with");
        c->elastic_min = singa_conf_int(conf, "min", 0);
        c->max_restarts = singa_conf_int(conf, "max_restarts", 3);
        if (c->elastic_min < 1)
            return singa_err_set(err, "cluster.elastic: 'min' must be at least 1, got %d", c->elastic_min);
        if (c->max_restarts < 0)
            return singa_err_set(err, "cluster.elastic: 'max_restarts' must not be negative, got %d", c->max_restarts);
    }
    long min = 0;
    if (getenv("SINGA_ELASTIC")) {
        if (singa_launch_count("SINGA_ELASTIC", 1, &min, err) < 0)
            return -1;
        c->elastic_min = (int)min;
    }
    return 0;
}

/* cluster.staleness bounds how far asynchronous groups drift apart; one group (Sandblaster,
 * AllReduce) has nothing to drift from, so a bound there is a mistake worth naming. */
static int read_staleness(singa_cluster *c, const singa_conf *conf, singa_err *err)
{
    c->staleness = -1;
    if (!singa_conf_get(conf, "staleness"))
        return 0;
    c->staleness = singa_conf_int(conf, "staleness", -1);
    if (c->staleness < 0)
        return singa_err_set(err, "cluster: field 'staleness' must be an integer >= 0 (steps a worker group may run "
                                  "ahead of the slowest), got %d", c->staleness);
    if (c->nworker_groups == 1)
        return singa_err_set(err, "cluster: field 'staleness' bounds asynchronous worker groups (Downpour, Hogwild: "
                                  "nworker_groups > 1); this %s job has one worker group, whose workers already "
                                  "step together", singa_conf_str(conf, "framework", "synchronous"));
    return 0;
}

/* A sharded group's processes put their servers' slices from their own workers' memory. */
static int check_shards(const singa_cluster *c, singa_err *err)
{
    if (c->nworker_groups > 1 || c->nserver_groups > 1)
        return singa_err_set(err, "cluster: shard_params holds the params of one worker group among its processes: "
                                  "nworker_groups and nserver_groups must be 1, got %d and %d",
                             c->nworker_groups, c->nserver_groups);
    for (int j = 0; j < c->nservers_per_group; j++) {
        int r = singa_cluster_server_proc(c, 0, j, c->nprocs);
        bool with_worker = false;
        for (int i = 0; i < c->nworkers_per_group && !with_worker; i++)
            with_worker = singa_cluster_worker_proc(c, 0, i, c->nprocs) == r;
        if (!with_worker)
            return singa_err_set(err, "cluster: shard_params needs a worker in every server's process, but server "
                                      "0.%d is alone in process %d (server_worker_separate, or more server than "
                                      "worker processes)", j, r);
    }
    return 0;
}

/* The processes the threads take, by SINGA's placement, and the rules they must keep. */
static int place(singa_cluster *c, singa_err *err)
{
    if (check_per_procs("worker", c->nworkers_per_group, c->nworker_groups, c->nworkers_per_procs,
                        &c->nworker_procs, err) < 0 ||
        check_per_procs("server", c->nservers_per_group, c->nserver_groups, c->nservers_per_procs,
                        &c->nserver_procs, err) < 0)
        return -1;
    c->nprocs = c->server_worker_separate ? c->nworker_procs + c->nserver_procs
                                          : (c->nworker_procs > c->nserver_procs ? c->nworker_procs : c->nserver_procs);
    return c->shard_params ? check_shards(c, err) : 0;
}

/* `count` threads of a kind on `procs` processes: as many as before when they fill the
 * processes evenly, else the most that do (at least one per process). */
static void spread(int *count, int *per_procs, int procs)
{
    int per = *count / procs > 0 ? *count / procs : 1;
    *count = per * procs;
    *per_procs = per;
}

/* The topology on n processes (n > 1), as an elastic restart fits it: a kind of thread that spans every process spans all n,
 * the other keeps its processes (servers apart from the workers keep theirs, the workers take
 * the rest); each kind keeps its number of threads where they fill its processes evenly. */
int singa_cluster_fit(singa_cluster *c, int n, singa_err *err)
{
    int was = c->nprocs, wp = c->nworker_procs, sp = c->nserver_procs;
    if (c->server_worker_separate) {
        if (n <= sp)
            return singa_err_set(err, "no process is left for the workers (the servers take %d)", sp);
        wp = n - sp;
    } else {
        wp = wp == was ? n : (wp < n ? wp : n);
        sp = sp == was ? n : (sp < n ? sp : n);
    }
    spread(&c->nworkers_per_group, &c->nworkers_per_procs, wp);
    spread(&c->nservers_per_group, &c->nservers_per_procs, sp);
    return place(c, err);
}

/* An elastic job: a synchronous one, whose topology is fitted to the processes launched (when
 * they differ from its own: a restart on the processes left, or a launcher's other size), and
 * can be built on every number of processes a restart may leave, down to min. */
static int fit_launched(singa_cluster *c, singa_err *err)
{
    int rank, size;
    const char *from;
    if (c->nworker_groups != 1)
        return singa_err_set(err, "cluster.elastic: an elastic job is synchronous (one worker group); this one has %d "
                                  "worker groups, and an asynchronous job goes on without a lost group by itself",
                             c->nworker_groups);
    if (singa_launch_rank(&rank, &size, &from, err) < 0)
        return -1;
    bool launched = strcmp(from, "no launcher") != 0;
    int n = launched ? size : c->nprocs;
    if (c->elastic_min > n)
        return singa_err_set(err, "cluster.elastic: min = %d is above the %d process%s the job %s", c->elastic_min, n,
                             n == 1 ? "" : "es", launched ? "was launched on" : "runs in");
    if (size > 1 && size != c->nprocs && singa_cluster_fit(c, size, err) < 0)
        return singa_err_prefix(err, "cluster.elastic: the topology cannot be built on the %d processes launched: ", size);
    for (int k = c->elastic_min > 2 ? c->elastic_min : 2; k < n; k++) { /* one process holds any topology */
        singa_cluster left = *c;
        if (singa_cluster_fit(&left, k, err) < 0)
            return singa_err_prefix(err, "cluster.elastic: min = %d lets the job restart on %d processes, where its "
                                         "topology cannot be built: ", c->elastic_min, k);
    }
    return 0;
}

/* cluster.shrink: only where a group can shrink, a synchronous one that outlives a loss. */
static int read_shrink(singa_cluster *c, const singa_conf *conf, singa_err *err)
{
    const char *v = singa_conf_str(conf, "shrink", NULL);
    c->shrink = SINGA_SHRINK_SHARE;
    if (!v)
        return 0;
    if (strcmp(v, "share") != 0 && strcmp(v, "batch") != 0)
        return singa_err_set(err, "cluster: field 'shrink' must be \"share\" (the survivors train a lost worker's rows "
                                  "too) or \"batch\" (they are left out), got \"%s\"", v);
    if (c->replicas < 2 || c->nworker_groups > 1)
        return singa_err_set(err, "cluster: field 'shrink' = \"%s\" is for a synchronous group that goes on without a "
                                  "lost process: it needs replicas >= 2 and one worker group (this job has %s)", v,
                             c->replicas < 2 ? "replicas = 1" : "several worker groups");
    c->shrink = strcmp(v, "batch") == 0 ? SINGA_SHRINK_BATCH : SINGA_SHRINK_SHARE;
    return 0;
}

/* cluster.replicas, once the processes are known: each holder of a slice in a process of its own. */
static int read_replicas(singa_cluster *c, const singa_conf *conf, singa_err *err)
{
    c->replicas = singa_conf_int(conf, "replicas", 1);
    if (c->replicas < 1 || c->replicas > c->nprocs)
        return singa_err_set(err, "cluster: field 'replicas' must be from 1 to the job's %d process%s (each holder of a "
                                  "slice in a process of its own), got %d", c->nprocs, c->nprocs == 1 ? "" : "es",
                             c->replicas);
    const char *with = c->nserver_groups > 1 ? "several server groups (Hogwild)"
                       : c->outer          ? "cluster.outer"
                       : c->compress.kind == SINGA_COMPRESS_POWERSGD ? "cluster.compress.powersgd"
                                                                     : NULL;
    if (c->replicas > 1 && with)
        return singa_err_set(err, "cluster: field 'replicas' = %d does not go with %s: the backups apply the "
                                  "servers' updates, and those change the values otherwise too", c->replicas, with);
    return read_shrink(c, conf, err);
}

int singa_cluster_read(singa_cluster *c, const singa_conf *conf, singa_err *err)
{
    const singa_field *const schemas[] = {singa_cluster_fields, NULL};
    if (conf && singa_conf_check(conf, schemas, "cluster", err) < 0)
        return -1;
    int *const counts[] = {&c->nworker_groups, &c->nserver_groups, &c->nworkers_per_group,
                           &c->nservers_per_group, &c->nworkers_per_procs, &c->nservers_per_procs,
                           &c->sync_freq};
    static const char *const names[] = {"nworker_groups", "nserver_groups", "nworkers_per_group",
                                        "nservers_per_group", "nworkers_per_procs", "nservers_per_procs",
                                        "sync_freq"};
    for (int i = 0; i < 7; i++) {
        *counts[i] = singa_conf_int(conf, names[i], 1);
        if (*counts[i] < 1 || *counts[i] > 4096)
            return singa_err_set(err, "cluster: field '%s' must be in 1..4096, got %d", names[i], *counts[i]);
    }
    c->server_worker_separate = singa_conf_bool(conf, "server_worker_separate", false);
    c->share_memory = singa_conf_bool(conf, "share_memory", true);
    c->workspace = singa_conf_str(conf, "workspace", NULL);
    c->coordinator = singa_conf_str(conf, "coordinator", NULL);
    c->bind = singa_conf_str(conf, "bind", NULL);
    c->heartbeat_timeout = singa_conf_num(conf, "heartbeat_timeout", 5.0);
    if (!(c->heartbeat_timeout >= 0.2 && c->heartbeat_timeout <= 3600))
        return singa_err_set(err, "cluster: field 'heartbeat_timeout' must be in 0.2..3600 seconds, got %g",
                             c->heartbeat_timeout);
    if (read_curve(c, singa_conf_get(conf, "curve"), err) < 0)
        return -1;
    c->join_timeout = singa_conf_num(conf, "join_timeout", 30.0);
    if (!(c->join_timeout >= 0.1 && c->join_timeout <= 86400))
        return singa_err_set(err, "cluster: field 'join_timeout' must be in 0.1..86400 seconds, got %g",
                             c->join_timeout);
    if (c->nworker_groups % c->nserver_groups != 0)
        return singa_err_set(err, "cluster: nworker_groups = %d must be a multiple of nserver_groups = %d "
                                  "(every server group serves the same number of worker groups)",
                             c->nworker_groups, c->nserver_groups);
    c->shard_params = singa_conf_bool(conf, "shard_params", false);
    c->momentum_compensation = singa_conf_bool(conf, "momentum_compensation", true);
    if (read_staleness(c, conf, err) < 0 || read_compress(c, singa_conf_get(conf, "compress"), err) < 0 ||
        check_compress(c, err) < 0 || read_outer(c, singa_conf_get(conf, "outer"), err) < 0)
        return -1;
    if (place(c, err) < 0 || read_elastic(c, singa_conf_get(conf, "elastic"), err) < 0)
        return -1;
    if (c->elastic_min && fit_launched(c, err) < 0)
        return -1;
    return read_replicas(c, conf, err);
}

bool singa_cluster_distributed(const singa_cluster *c)
{
    return c->nworker_groups * c->nworkers_per_group > 1 || c->nserver_groups * c->nservers_per_group > 1 ||
           c->nprocs > 1;
}

int singa_cluster_worker_proc(const singa_cluster *c, int group, int id, int nprocs)
{
    return nprocs == 1 ? 0 : (group * c->nworkers_per_group + id) / c->nworkers_per_procs;
}

int singa_cluster_server_proc(const singa_cluster *c, int group, int id, int nprocs)
{
    if (nprocs == 1)
        return 0;
    return (group * c->nservers_per_group + id) / c->nservers_per_procs +
           (c->server_worker_separate ? c->nworker_procs : 0);
}

int singa_cluster_server_group(const singa_cluster *c, int worker_group)
{
    return worker_group / (c->nworker_groups / c->nserver_groups);
}

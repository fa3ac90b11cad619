/* A checkpoint asked for by the host (the workbench's `c`, singa.checkpoint()) in a job of two
 * asynchronous worker groups: written at the step after worker 0.0's, with every group's state
 * and every server's shard, and resumed from; in one process, and over three processes (this
 * program again as ranks 1 and 2, rank 0 steered here), where every process hears of it. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "singa/singa.h"
#include "jobconf.h"
#include "tap.h"

#define DIR "t/8630-host-ckpt.tmp"

/* Two groups of two workers in one process, or (procs) of one worker each in ranks 0 and 1
 * with the server in rank 2, as singa.cluster.downpour{ groups = 2, procs = 3 }. */
static singa_conf *job_conf(const char *ckpt, bool resume, bool procs)
{
    singa_conf *job = singa_conf_new(SINGA_CONF_TABLE), *cluster = singa_conf_new(SINGA_CONF_TABLE);
    singa_conf_add(job, "name", str("hostckpt"));
    singa_conf_add(job, "seed", num(1));
    singa_conf_add(job, "train_steps", num(60));
    singa_conf_add(job, "disp_freq", num(100));
    singa_conf_add(job, "checkpoint_path", str(ckpt));
    singa_conf_add(job, "resume", singa_conf_new_bool(resume));
    singa_conf_add(job, "updater", fixed_updater("kSGD", 0.1));
    singa_conf_add(job, "neuralnet", softmax_net(DIR));
    singa_conf_add(cluster, "nworker_groups", num(2));
    singa_conf_add(cluster, "nworkers_per_group", num(procs ? 1 : 2));
    singa_conf_add(cluster, "nservers_per_group", num(procs ? 1 : 2));
    /* The groups stay within 5 steps of each other: a group that had already trained all its
     * steps when the checkpoint is asked for could no longer write its state into it. */
    singa_conf_add(cluster, "staleness", num(5));
    if (procs) {
        singa_conf_add(cluster, "nworkers_per_procs", num(1));
        singa_conf_add(cluster, "nservers_per_procs", num(1));
        singa_conf_add(cluster, "server_worker_separate", singa_conf_new_bool(true));
        singa_conf_add(cluster, "heartbeat_timeout", num(10));
    }
    singa_conf_add(job, "cluster", cluster);
    return job;
}

typedef struct watch {
    singa_job_control *ctl;
    int ckpt_at, stop_at;
    int first_step, ckpt_calls, ckpt_step;
    bool resumed_at_ckpt;
} watch;

static void on_step(void *ud, const singa_record *r)
{
    watch *w = ud;
    if (w->first_step < 0 && r->group == 0)
        w->first_step = r->step;
    if (!w->ctl || r->group != 0)
        return;
    if (r->step == w->ckpt_at)
        atomic_store(&w->ctl->checkpoint, true);
    if (r->step == w->stop_at)
        atomic_store(&w->ctl->stop, true);
}

static void on_checkpoint(void *ud, int step, const char *path)
{
    watch *w = ud;
    w->ckpt_calls++;
    w->ckpt_step = step;
}

static void on_log(void *ud, const char *line)
{
    watch *w = ud;
    char want[64];
    snprintf(want, sizeof want, "(step %d)", w->ckpt_at + 1);
    if (strstr(line, "resumed from") && strstr(line, want))
        w->resumed_at_ckpt = true;
}

static int run(const char *ckpt, bool resume, bool procs, watch *w, singa_result *res)
{
    singa_conf *conf = job_conf(ckpt, resume, procs);
    singa_registry *reg = singa_registry_new();
    singa_job *job;
    singa_err err = {{0}};
    int rc = singa_job_create(&job, conf, reg, &err);
    if (rc == 0) {
        singa_job_hooks hooks = {.ud = w, .step = on_step, .checkpoint = on_checkpoint, .log = on_log,
                                 .control = w ? w->ctl : NULL};
        rc = singa_job_run(job, w ? &hooks : NULL, res, &err);
        singa_job_free(job);
    }
    if (rc < 0)
        printf("# %s\n", err.msg);
    singa_registry_free(reg);
    singa_conf_free(conf);
    return rc;
}

/* Whether every file of checkpoint `step` in dir is there: each worker's and each server's. */
static bool whole(const char *dir, int step, int workers_per_group, int servers)
{
    char path[512];
    for (int g = 0; g < 2; g++)
        for (int i = 0; i < workers_per_group; i++) {
            singa_ckpt_part_path(path, sizeof path, dir, (uint64_t)step, SINGA_CKPT_WORKER, g, i);
            if (access(path, R_OK) != 0) {
                printf("# missing %s\n", path);
                return false;
            }
        }
    for (int j = 0; j < servers; j++) {
        singa_ckpt_part_path(path, sizeof path, dir, (uint64_t)step, SINGA_CKPT_SERVER, 0, j);
        if (access(path, R_OK) != 0) {
            printf("# missing %s\n", path);
            return false;
        }
    }
    return true;
}

static int free_port(void)
{
    int fd = socket(AF_INET, SOCK_STREAM, 0), port = 0;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 && getsockname(fd, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    if (fd >= 0)
        close(fd);
    return port;
}

/* Runs ranks 1 and 2 (this program with "rank"), then rank 0 here; 0 when all three succeed. */
static int run_procs(bool resume, watch *w, singa_result *res)
{
    char addr[64];
    snprintf(addr, sizeof addr, "tcp://127.0.0.1:%d", free_port());
    setenv("SINGA_COORDINATOR", addr, 1);
    setenv("SINGA_SIZE", "3", 1);
    pid_t kids[2];
    for (int r = 1; r <= 2; r++) {
        char rank[4];
        snprintf(rank, sizeof rank, "%d", r);
        setenv("SINGA_RANK", rank, 1);
        if ((kids[r - 1] = fork()) == 0) {
            execl("/proc/self/exe", "8630-host-ckpt", resume ? "resume" : "fresh", (char *)NULL);
            _exit(127);
        }
    }
    setenv("SINGA_RANK", "0", 1);
    int rc = run(DIR "/procs", resume, true, w, res);
    for (int i = 0; i < 2; i++) {
        int status = 0;
        waitpid(kids[i], &status, 0);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            rc = -1;
    }
    unsetenv("SINGA_RANK");
    unsetenv("SINGA_SIZE");
    return rc;
}

int main(int argc, char **argv)
{
    singa_result res;
    if (argc > 1) /* rank 1 or 2 of run_procs */
        return run(DIR "/procs", strcmp(argv[1], "resume") == 0, true, NULL, &res) == 0 ? 0 : 1;
    if (system("rm -rf " DIR " && mkdir -p " DIR) != 0)
        return 1;
    write_data(DIR);
    alarm(120); /* a group waiting forever */
    singa_job_control ctl;

    singa_job_control_init(&ctl);
    watch w = {.ctl = &ctl, .ckpt_at = 20, .stop_at = 40, .first_step = -1};
    ok(run(DIR "/one", false, false, &w, &res) == 0, "one process, 2 groups of 2 workers: a job asked for a checkpoint runs");
    ok(w.ckpt_calls == 1 && w.ckpt_step == 21, "the checkpoint is written at the step after worker 0.0's (%d, %d calls)",
       w.ckpt_step, w.ckpt_calls);
    ok(whole(DIR "/one", 21, 2, 2), "... with every worker's state and every server's shard");
    watch r = {.ckpt_at = 20, .first_step = -1};
    ok(run(DIR "/one", true, false, &r, &res) == 0 && res.steps == 60, "resumed, it trains to train_steps (%d)", res.steps);
    ok(r.resumed_at_ckpt && r.first_step > 21 && r.first_step <= 31, "... from step 21 (first record %d)", r.first_step);

    singa_job_control_init(&ctl);
    watch p = {.ctl = &ctl, .ckpt_at = 20, .stop_at = 40, .first_step = -1};
    ok(run_procs(false, &p, &res) == 0, "three processes (Downpour, 2 groups): a job asked for a checkpoint runs");
    ok(p.ckpt_calls == 1 && p.ckpt_step == 21 && whole(DIR "/procs", 21, 1, 1),
       "the checkpoint of step 21 is written, with rank 1's group's state (%d, %d calls)", p.ckpt_step, p.ckpt_calls);
    watch pr = {.ckpt_at = 20, .first_step = -1};
    ok(run_procs(true, &pr, &res) == 0 && res.steps == 60 && pr.resumed_at_ckpt,
       "three processes resume from it and train to train_steps (%d)", res.steps);
    alarm(0);

    if (tap_failed == 0 && system("rm -rf " DIR) != 0)
        return 1;
    return done_testing();
}

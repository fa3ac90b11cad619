/* cluster.outer and the host's stop (the workbench's `s`): each group stops at the step it sees
 * the request, at most a round apart, so one may end its rounds before the other's next; the group
 * that stopped leaves the rounds (server_outer.c), and the other neither waits for it nor hangs. */
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "singa/singa.h"
#include "jobconf.h"
#include "tap.h"

#define DIR "t/8752-outer-stop.tmp"

static singa_conf *job_conf(int sync_freq)
{
    singa_conf *job = singa_conf_new(SINGA_CONF_TABLE), *cluster = singa_conf_new(SINGA_CONF_TABLE);
    singa_conf_add(job, "name", str("outer-stop"));
    singa_conf_add(job, "seed", num(1));
    singa_conf_add(job, "train_steps", num(2000));
    singa_conf_add(job, "disp_freq", num(0));
    singa_conf_add(job, "updater", fixed_updater("kSGD", 0.05));
    singa_conf_add(job, "neuralnet", softmax_net(DIR));
    singa_conf_add(cluster, "nworker_groups", num(2));
    singa_conf_add(cluster, "nserver_groups", num(2));
    singa_conf_add(cluster, "sync_freq", num(sync_freq));
    singa_conf_add(cluster, "outer", fixed_updater("kNesterov", 0.7));
    singa_conf_add(job, "cluster", cluster);
    return job;
}

/* Group 0 dawdles from step 25, so that group 1 waits at its next round ahead, then asks for the
 * stop at step 30: group 1 sees it a round later than group 0, which leaves the rounds before. */
static void on_step(void *ud, const singa_record *r)
{
    singa_job_control *ctl = ud;
    if (r->group != 0 || r->step < 25 || r->step > 30)
        return;
    nanosleep(&(struct timespec){.tv_nsec = 20 * 1000000}, NULL);
    if (r->step == 30)
        atomic_store(&ctl->stop, true);
}

int main(void)
{
    if (system("rm -rf " DIR " && mkdir -p " DIR) != 0)
        return 1;
    write_data(DIR);
    alarm(120); /* a group waiting forever for a round */
    for (int f = 2; f <= 5; f++)
        for (int k = 0; k < 3; k++) {
            singa_job_control ctl;
            singa_job_control_init(&ctl);
            singa_conf *conf = job_conf(f);
            singa_registry *reg = singa_registry_new();
            singa_job *job;
            singa_result res;
            singa_err err = {{0}};
            int rc = singa_job_create(&job, conf, reg, &err);
            if (rc == 0) {
                singa_job_hooks hooks = {.ud = &ctl, .step = on_step, .control = &ctl};
                rc = singa_job_run(job, &hooks, &res, &err);
                singa_job_free(job);
            }
            if (rc < 0)
                printf("# %s\n", err.msg);
            ok(rc == 0 && res.steps >= 30 && res.steps <= 40, "sync_freq %d, run %d: stopped at step %d of 2000",
               f, k + 1, rc == 0 ? res.steps : -1);
            singa_registry_free(reg);
            singa_conf_free(conf);
        }
    if (system("rm -rf " DIR) != 0)
        return 1;
    return done_testing();
}

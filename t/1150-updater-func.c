/* kLua at the engine's level: updaters and schedules that are host functions (singa_func), here
 * written in C, so the callback interface is tested without Lua: the arguments it gets, its
 * named state slots, errors coming back from it, and the references the configuration and the
 * updater hold. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "singa/singa.h"
#include "tap.h"

typedef struct test_func {
    singa_func base;
    int calls, destroyed;
    int fail_at;  /* step at which the call fails, or -1 */
    bool args_ok; /* every call had the documented arguments */
    double last_lr;
} test_func;

/* update(step, param, grad, state, lr, name): SGD with momentum 0.5 in state "h". */
static int sgd_call(singa_func *f, const singa_value *a, int nargs, double *result, singa_err *err)
{
    test_func *tf = (test_func *)f;
    tf->calls++;
    tf->args_ok = tf->args_ok && nargs == 6 && !result && a[0].kind == SINGA_VALUE_INT &&
                  a[1].kind == SINGA_VALUE_TENSOR && a[2].kind == SINGA_VALUE_TENSOR &&
                  a[3].kind == SINGA_VALUE_TENSORS && a[3].n == 1 && strcmp(a[3].names[0], "h") == 0 &&
                  a[4].kind == SINGA_VALUE_NUM && a[5].kind == SINGA_VALUE_STR && strcmp(a[5].str, "w") == 0 &&
                  a[1].tensor->size == a[2].tensor->size && a[3].tensors[0]->size == a[1].tensor->size;
    if ((int)a[0].num == tf->fail_at)
        return singa_err_set(err, "host says no at step %d", (int)a[0].num);
    float lr = (float)a[4].num, *w = a[1].tensor->data, *g = a[2].tensor->data, *h = a[3].tensors[0]->data;
    tf->last_lr = a[4].num;
    for (size_t k = 0; k < a[1].tensor->size; k++) {
        h[k] = 0.5f * h[k] - lr * g[k];
        w[k] += h[k];
    }
    return 0;
}

/* schedule(step) = 0.1 (step + 1) */
static int sched_call(singa_func *f, const singa_value *a, int nargs, double *result, singa_err *err)
{
    test_func *tf = (test_func *)f;
    tf->calls++;
    tf->args_ok = tf->args_ok && nargs == 1 && result && a[0].kind == SINGA_VALUE_INT;
    if ((int)a[0].num == tf->fail_at)
        return singa_err_set(err, "no rate at step %d", (int)a[0].num);
    *result = 0.1 * (a[0].num + 1);
    return 0;
}

static void destroy(singa_func *f) { ((test_func *)f)->destroyed++; }

static singa_conf *updater_conf(test_func *upd, test_func *sched, const char *state)
{
    singa_conf *c = singa_conf_new(SINGA_CONF_TABLE), *lr = singa_conf_new(SINGA_CONF_TABLE);
    singa_conf_add(c, "type", singa_conf_new_str("kLua"));
    singa_conf_add(c, "update", singa_conf_new_func(singa_func_retain(&upd->base)));
    singa_conf_add(c, "state", singa_conf_new_str(state));
    singa_conf_add(lr, "type", singa_conf_new_str("kLua"));
    singa_conf_add(lr, "schedule", singa_conf_new_func(singa_func_retain(&sched->base)));
    singa_conf_add(c, "learning_rate", lr);
    return c;
}

static singa_param *make_param(singa_params *ps)
{
    singa_err err;
    int shape[2] = {2, 3};
    singa_param *p = singa_params_declare(ps, "w", "fc", 2, shape, &err);
    p->trained = true;
    for (int k = 0; k < 6; k++)
        p->data.data[k] = (float)k;
    return p;
}

int main(void)
{
    test_func upd = {{sgd_call, destroy, 1, NULL}, 0, 0, -1, true, 0};
    test_func sched = {{sched_call, destroy, 1, NULL}, 0, 0, -1, true, 0};
    singa_params ps;
    singa_params_init(&ps);
    singa_param *p = make_param(&ps);
    singa_conf *conf = updater_conf(&upd, &sched, "h");
    singa_conf *copy = singa_conf_clone(conf);
    ok(upd.base.refs == 3 && sched.base.refs == 3, "a tree and its clone each hold a reference to the functions");
    singa_conf_free(copy);
    ok(upd.base.refs == 2 && !upd.destroyed, "freeing the clone releases its references only");

    singa_updater *u;
    singa_err err;
    int rc = singa_updater_create(&u, conf, &ps, &err);
    ok(rc == 0, "a kLua updater with a kLua schedule is created (%s)", rc ? err.msg : "");
    if (rc < 0)
        return done_testing();
    ok(singa_updater_nslots(u) == 1 && strcmp(singa_updater_slot_name(u, 0), "h") == 0 && singa_updater_slot(u, p->id, 0),
       "its state slot is named by the configuration");
    singa_conf_free(conf);
    ok(upd.base.refs == 2 && sched.base.refs == 2, "the updater keeps its own references");

    float w[6], h[6] = {0};
    for (int k = 0; k < 6; k++)
        w[k] = (float)k;
    for (int step = 0; step < 4; step++) {
        rc |= singa_updater_prepare(u, step, &err);
        for (int k = 0; k < 6; k++)
            p->grad.data[k] = (float)(k + step) * 0.25f;
        rc |= singa_updater_apply(u, step, &err);
        float lr = (float)(0.1 * (step + 1));
        for (int k = 0; k < 6; k++) {
            h[k] = 0.5f * h[k] - lr * ((float)(k + step) * 0.25f);
            w[k] += h[k];
        }
    }
    ok(rc == 0 && memcmp(w, p->data.data, sizeof w) == 0 && memcmp(h, singa_updater_slot(u, p->id, 0)->data, sizeof h) == 0,
       "4 steps: the function's rule changed the param and its state in place");
    ok(upd.calls == 4 && upd.args_ok, "update was called once per step with (step, param, grad, state, lr, name)");
    ok(sched.calls == 4 && sched.args_ok, "the schedule was called once per step (prepare and apply share it)");
    ok(fabs(upd.last_lr - (double)(float)0.4) < 1e-12, "lr is the schedule's rate (as a float)");
    ok(fabsf(singa_updater_lr(u, 3) - 0.4f) < 1e-7f && fabsf(singa_updater_lr(u, 9) - 1.0f) < 1e-6f,
       "singa_updater_lr gives the schedule's rate");

    upd.fail_at = 4;
    err.msg[0] = 0;
    rc = singa_updater_prepare(u, 4, &err) < 0 || singa_updater_apply(u, 4, &err) < 0;
    ok(rc && strcmp(err.msg, "updater kLua, param 'w': host says no at step 4") == 0,
       "a failing update returns -1 with its message, naming the param (%s)", err.msg);
    sched.fail_at = 5;
    err.msg[0] = 0;
    rc = singa_updater_prepare(u, 5, &err);
    ok(rc < 0 && strcmp(err.msg, "updater.learning_rate (kLua) at step 5: no rate at step 5") == 0,
       "a failing schedule makes prepare fail (%s)", err.msg);
    ok(isnan(singa_updater_lr(u, 5)), "and singa_updater_lr gives NAN for that step");

    singa_updater_free(u);
    ok(upd.base.refs == 1 && sched.base.refs == 1 && !upd.destroyed, "freeing the updater releases its references");
    singa_func_release(&upd.base);
    singa_func_release(&sched.base);
    ok(upd.destroyed == 1 && sched.destroyed == 1, "the last release destroys each function once");

    /* Errors in the configuration. */
    test_func f2 = {{sgd_call, destroy, 1, NULL}, 0, 0, -1, true, 0};
    singa_conf *bad = updater_conf(&f2, &f2, "h");
    singa_conf_free(bad);
    bad = singa_conf_new(SINGA_CONF_TABLE);
    singa_conf *lr = singa_conf_new(SINGA_CONF_TABLE);
    singa_conf_add(lr, "base_lr", singa_conf_new_num(0.1));
    singa_conf_add(bad, "type", singa_conf_new_str("kLua"));
    singa_conf_add(bad, "learning_rate", lr);
    rc = singa_updater_create(&u, bad, &ps, &err);
    ok(rc < 0 && strstr(err.msg, "field 'update' is required for kLua"), "kLua without a function is refused (%s)", err.msg);
    singa_conf_add(bad, "update", singa_conf_new_num(1));
    rc = singa_updater_create(&u, bad, &ps, &err);
    ok(rc < 0 && strstr(err.msg, "field 'update' must be a function"), "a number as the function is refused (%s)", err.msg);
    singa_conf_free(bad);
    singa_func_release(&f2.base);
    ok(f2.destroyed == 1, "a function only in freed trees is destroyed");
    singa_params_free(&ps);
    return done_testing();
}

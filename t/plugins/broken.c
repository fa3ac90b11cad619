/* Test-only plugins, each broken in one way, built once per BROKEN_* macro (t/tests.am), and one
 * good one (no macro).  t/3400-plugin-errors.lua and t/3410-plugin-cli.sh assert what the loader
 * and --check-plugin say about them.  The layer: kDouble, y = 2 x. */
#include <singa/plugin.h>

static const singa_field fields[] = {{"gain", SINGA_FIELD_NUM}, {NULL, 0}};

static int setup(singa_layer *l, singa_err *err)
{
    const singa_tensor *x = &l->src[0]->data;
    return singa_layer_shape(l, x->ndim, x->shape, err);
}

static int forward(singa_layer *l, singa_phase phase, singa_err *err)
{
    singa_tensor_copy(&l->data, &l->src[0]->data);
    singa_tensor_scale(&l->data, 2.0f);
    return 0;
}

static void add_grad(singa_layer *l, float scale)
{
    singa_layer *src = l->src[0];
    if (!src->needs_grad)
        return;
    if (singa_layer_grad_beta(src) == 0.0f)
        singa_tensor_fill(&src->grad, 0.0f);
    singa_tensor_axpy(scale, &l->grad, &src->grad);
}

static void backward(singa_layer *l) { add_grad(l, 2.0f); }
#ifdef BROKEN_GRAD
static void wrong_backward(singa_layer *l) { add_grad(l, 1.0f); } /* should be 2 */
#endif

static const singa_layer_type doubler = {
    .name = "kDouble", .fields = fields, .min_src = 1, .max_src = 1, .setup = setup,
    .forward = forward, .backward = backward,
};

#if defined BROKEN_NO_ENTRY
int broken_not_an_entry(void);
int broken_not_an_entry(void) { return doubler.min_src; }
#elif defined BROKEN_ABI_MAJOR
static int init(singa_plugin_ctx *ctx, singa_err *err)
{
    return singa_plugin_add_layer(ctx, &doubler, NULL, err);
}
__attribute__((visibility("default"))) const singa_plugin_def singa_plugin_entry = {
    .abi_major = SINGA_PLUGIN_ABI_MAJOR + 1, .abi_minor = 0, .name = "abi-major", .version = "1",
    .init = init,
};
#elif defined BROKEN_ABI_MINOR
static int init(singa_plugin_ctx *ctx, singa_err *err)
{
    return singa_plugin_add_layer(ctx, &doubler, NULL, err);
}
__attribute__((visibility("default"))) const singa_plugin_def singa_plugin_entry = {
    .abi_major = SINGA_PLUGIN_ABI_MAJOR, .abi_minor = SINGA_PLUGIN_ABI_MINOR + 1,
    .name = "abi-minor", .version = "1", .init = init,
};
#elif defined BROKEN_DUP_CORE
static int init(singa_plugin_ctx *ctx, singa_err *err)
{
    singa_layer_type relu = doubler;
    relu.name = "kReLU"; /* a built-in type */
    singa_plugin_add_layer(ctx, &relu, NULL, err);
    return 0; /* ignores the failure: the loader must not */
}
SINGA_PLUGIN("dup-core", "1", NULL, init);
#elif defined BROKEN_DUP_PLUGIN
static int init(singa_plugin_ctx *ctx, singa_err *err)
{
    singa_layer_type swish = doubler;
    swish.name = "kSwish"; /* plugins/swish.c's */
    return singa_plugin_add_layer(ctx, &swish, NULL, err);
}
SINGA_PLUGIN("dup-plugin", "1", NULL, init);
#elif defined BROKEN_INIT
static int init(singa_plugin_ctx *ctx, singa_err *err)
{
    /* Registers kDouble, then fails: the loader must take kDouble back. */
    if (singa_plugin_add_layer(ctx, &doubler, NULL, err) < 0)
        return -1;
    return singa_err_set(err, "no licence for this layer on this machine");
}
SINGA_PLUGIN("init-fails", "1", NULL, init);
#elif defined BROKEN_BAD_TYPE
static int init(singa_plugin_ctx *ctx, singa_err *err)
{
    singa_layer_type bad = doubler;
    bad.min_src = 2; /* more than max_src */
    return singa_plugin_add_layer(ctx, &bad, NULL, err);
}
SINGA_PLUGIN("bad-type", "1", NULL, init);
#elif defined BROKEN_NO_TYPES
static int init(singa_plugin_ctx *ctx, singa_err *err)
{
    return doubler.name ? 0 : -1; /* registers nothing */
}
SINGA_PLUGIN("no-types", "1", NULL, init);
#elif defined BROKEN_GRAD
/* kDouble (right, on its default example), kWrongGrad (a wrong backward, on an example with a
 * field and its own input) and kNoGrad (no backward: nothing to check). */
static int init(singa_plugin_ctx *ctx, singa_err *err)
{
    singa_layer_type wrong = doubler, nograd = doubler;
    wrong.name = "kWrongGrad";
    wrong.backward = wrong_backward;
    nograd.name = "kNoGrad";
    nograd.backward = NULL;
    const singa_plugin_example example = {
        .conf = "{ gain = 3 }", .ninputs = 1, .inputs = {{.ndim = 2, .shape = {3, 5}}},
    };
    if (singa_plugin_add_layer(ctx, &doubler, NULL, err) < 0 ||
        singa_plugin_add_layer(ctx, &wrong, &example, err) < 0)
        return -1;
    return singa_plugin_add_layer(ctx, &nograd, NULL, err);
}
SINGA_PLUGIN("wrong-grad", "0.1", "kDouble, kWrongGrad with a wrong backward, kNoGrad", init);
#elif defined BROKEN_SEGV
/* kSegv: kDouble that writes to a page it may not touch in the stage its field `at` names
 * ("setup", "forward", "backward"), or, with at = "source", takes its source's feature blob away
 * in forward so that the built-in source layer faults in its next forward.  A PROT_NONE page,
 * not NULL: a sanitizer build (check-asan) checks stores to NULL itself, before any fault. */
#include <string.h>
#include <sys/mman.h>

static const singa_field segv_fields[] = {{"at", SINGA_FIELD_STR}, {NULL, 0}};

static float *forbidden_page(void)
{
    void *page = mmap(NULL, 1 << 20, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return page == MAP_FAILED ? NULL : page;
}

static void crash_if(const singa_layer *l, const char *stage)
{
    if (strcmp(singa_conf_str(l->conf, "at", "forward"), stage) == 0) {
        volatile float *volatile nowhere = forbidden_page(); /* volatile: the store stays */
        *nowhere = 1;
    }
}

static int segv_setup(singa_layer *l, singa_err *err)
{
    crash_if(l, "setup");
    return setup(l, err);
}

static int segv_forward(singa_layer *l, singa_phase phase, singa_err *err)
{
    crash_if(l, "forward");
    forward(l, phase, err);
    if (strcmp(singa_conf_str(l->conf, "at", "forward"), "source") == 0)
        l->src[0]->data.data = forbidden_page();
    return 0;
}

static void segv_backward(singa_layer *l)
{
    crash_if(l, "backward");
    backward(l);
}

static int init(singa_plugin_ctx *ctx, singa_err *err)
{
    singa_layer_type segv = doubler;
    segv.name = "kSegv";
    segv.fields = segv_fields;
    segv.setup = segv_setup;
    segv.forward = segv_forward;
    segv.backward = segv_backward;
    return singa_plugin_add_layer(ctx, &segv, NULL, err);
}
SINGA_PLUGIN("segv", "1", "kSegv: kDouble that faults where it is told", init);
#else
static int init(singa_plugin_ctx *ctx, singa_err *err)
{
    return singa_plugin_add_layer(ctx, &doubler, NULL, err);
}
SINGA_PLUGIN("double", "2.1", "kDouble: y = 2 x", init);
#endif

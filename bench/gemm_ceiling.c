/* gemm_ceiling: the images/s that the sgemm calls of one training step alone would allow.
 *
 * usage: bench/gemm_ceiling MODEL THREADS [SECONDS]
 *   MODEL    smallmlp (784-512-256-10, batch 128) or bigmlp (784-2500-2000-1500-1000-500-10,
 *            batch 64), or a custom "BATCH:D0-D1-...-Dn" such as "64:784-2500-10"
 *   THREADS  OpenBLAS threads (openblas_set_num_threads)
 *   SECONDS  timed seconds (default 3), split into 5 chunks; the median chunk is reported
 *
 * Per training step it makes exactly the cblas_sgemm calls of src/layers/inner_product.c with
 * SGD momentum (the updater has the backward pass write the weight gradient straight into the
 * momentum buffer), for every layer l with W of shape out x in (row-major):
 *   forward   Y  = X W^T + Y      NoTrans/Trans    M=batch N=out K=in    alpha=1    beta=1 (bias pre-filled)
 *   backward  H  = -lr dY^T X + m H  Trans/NoTrans M=out   N=in  K=batch alpha=-lr  beta=momentum
 *             dX = dY W           NoTrans/NoTrans  M=batch N=in  K=out   alpha=1    beta=0 (not layer 1)
 * Nothing else (bias, activations, loss, weight update) is timed.  Prints one line
 *   RESULT images_per_sec=<n> ms_per_step=<t> model=<m> threads=<t> core=<OpenBLAS core>
 */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_LAYERS 32
#define CHUNKS 5

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static float *alloc_fill(size_t n, unsigned *seed)
{
    float *p = malloc(n * sizeof *p);
    if (!p) {
        fprintf(stderr, "gemm_ceiling: out of memory\n");
        exit(1);
    }
    for (size_t i = 0; i < n; i++) {
        *seed = *seed * 1664525u + 1013904223u;
        p[i] = ((float)(*seed >> 8) / 16777216.0f - 0.5f) * 0.1f; /* [-0.05, 0.05), no denormals */
    }
    return p;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Parses "smallmlp", "bigmlp" or "BATCH:D0-D1-...". Returns the number of dims, or -1. */
static int parse_model(const char *s, int *batch, int *dims)
{
    if (strcmp(s, "smallmlp") == 0)
        s = "128:784-512-256-10";
    else if (strcmp(s, "bigmlp") == 0)
        s = "64:784-2500-2000-1500-1000-500-10";
    char *end;
    long b = strtol(s, &end, 10);
    if (*end != ':' || b <= 0)
        return -1;
    *batch = (int)b;
    int n = 0;
    s = end + 1;
    for (;;) {
        long d = strtol(s, &end, 10);
        if (end == s || d <= 0 || n >= MAX_LAYERS + 1)
            return -1;
        dims[n++] = (int)d;
        if (*end == 0)
            break;
        if (*end != '-')
            return -1;
        s = end + 1;
    }
    return n >= 2 ? n : -1;
}

int main(int argc, char **argv)
{
    int batch = 0, dims[MAX_LAYERS + 1] = {0};
    int ndims = argc >= 3 ? parse_model(argv[1], &batch, dims) : -1;
    int threads = argc >= 3 ? atoi(argv[2]) : 0;
    double seconds = argc >= 4 ? atof(argv[3]) : 3.0;
    if (ndims < 0 || threads < 1 || seconds <= 0) {
        fprintf(stderr, "usage: %s {smallmlp|bigmlp|BATCH:D0-D1-...} THREADS [SECONDS]\n", argv[0]);
        return 2;
    }
    int nl = ndims - 1;
    const float lr = 0.01f, momentum = 0.9f;
    openblas_set_num_threads(threads);

    unsigned seed = 12345;
    float *act[MAX_LAYERS + 1], *grad[MAX_LAYERS + 1], *w[MAX_LAYERS], *h[MAX_LAYERS];
    for (int i = 0; i <= nl; i++) {
        act[i] = alloc_fill((size_t)batch * (size_t)dims[i], &seed);  /* layer i's input / output */
        grad[i] = alloc_fill((size_t)batch * (size_t)dims[i], &seed); /* d loss / d act[i] */
    }
    for (int l = 0; l < nl; l++) {
        w[l] = alloc_fill((size_t)dims[l + 1] * (size_t)dims[l], &seed);
        h[l] = alloc_fill((size_t)dims[l + 1] * (size_t)dims[l], &seed);
    }

#define STEP()                                                                                     \
    do {                                                                                           \
        for (int l = 0; l < nl; l++)                                                               \
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, batch, dims[l + 1], dims[l], 1.0f, \
                        act[l], dims[l], w[l], dims[l], 1.0f, act[l + 1], dims[l + 1]);            \
        for (int l = nl - 1; l >= 0; l--) {                                                        \
            cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, dims[l + 1], dims[l], batch, -lr,  \
                        grad[l + 1], dims[l + 1], act[l], dims[l], momentum, h[l], dims[l]);       \
            if (l > 0)                                                                             \
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, batch, dims[l], dims[l + 1], \
                            1.0f, grad[l + 1], dims[l + 1], w[l], dims[l], 0.0f, grad[l], dims[l]); \
        }                                                                                          \
    } while (0)

    /* Warm up (thread pool, page faults, caches) and estimate the time of one step. */
    double t0 = now();
    int warm = 0;
    do {
        STEP();
        warm++;
    } while (warm < 3 || now() - t0 < 0.3);
    double per_step = (now() - t0) / warm;
    int steps = (int)(seconds / CHUNKS / per_step);
    if (steps < 1)
        steps = 1;

    double ms[CHUNKS];
    for (int c = 0; c < CHUNKS; c++) {
        double ts = now();
        for (int s = 0; s < steps; s++)
            STEP();
        ms[c] = (now() - ts) / steps * 1e3;
        /* Y accumulates with beta = 1 as in the engine (where the bias is re-filled each step):
         * reset it now and then so the values stay finite. */
        for (int i = 1; i <= nl; i++)
            memset(act[i], 0, (size_t)batch * (size_t)dims[i] * sizeof(float));
    }
    qsort(ms, CHUNKS, sizeof ms[0], cmp_double);
    double med = ms[CHUNKS / 2];
    char *core = openblas_get_corename();
    printf("RESULT images_per_sec=%.0f ms_per_step=%.3f best_images_per_sec=%.0f model=%s threads=%d "
           "steps=%d core=%s\n",
           batch / (med * 1e-3), med, batch / (ms[0] * 1e-3), argv[1], threads, steps * CHUNKS,
           core ? core : "?");
    for (int i = 0; i <= nl; i++) {
        free(act[i]);
        free(grad[i]);
    }
    for (int l = 0; l < nl; l++) {
        free(w[l]);
        free(h[l]);
    }
    return 0;
}

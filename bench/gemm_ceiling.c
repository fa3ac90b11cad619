/* gemm_ceiling: the images/s that the sgemm calls of one training step alone would allow.
 *
 * usage: bench/gemm_ceiling MODEL THREADS [SECONDS [WORKERS [MICRO]]]
 *   MODEL    smallmlp (784-512-256-10, batch 128) or bigmlp (784-2500-2000-1500-1000-500-10,
 *            batch 64), or a custom "BATCH:D0-D1-...-Dn" such as "64:784-2500-10"
 *   THREADS  OpenBLAS threads (openblas_set_num_threads), each worker's
 *   SECONDS  timed seconds (default 3), split into 5 chunks; the median chunk is reported
 *   WORKERS  data parallelism (default 1): so many threads, each with BATCH / WORKERS rows of
 *            its own and the weights shared, meet at every step, as Sandblaster's workers of one
 *            process do; each writes its weight gradient into a buffer of its own (beta = 0)
 *
 * Per training step it makes exactly the cblas_sgemm calls of src/layers/inner_product.c with
 * SGD momentum (the updater has the backward pass write the weight gradient straight into the
 * momentum buffer), for every layer l with W of shape out x in (row-major):
 *   forward   Y  = X W^T + Y      NoTrans/Trans    M=batch N=out K=in    alpha=1    beta=1 (bias pre-filled)
 *   backward  H  = -lr dY^T X + m H  Trans/NoTrans M=out   N=in  K=batch alpha=-lr  beta=momentum
 *             dX = dY W           NoTrans/NoTrans  M=batch N=in  K=out   alpha=1    beta=0 (not layer 1)
 * Nothing else (bias, activations, loss, weight update, summing the workers' gradients) is
 * timed.  Prints one line
 *   RESULT images_per_sec=<n> ms_per_step=<t> model=<m> threads=<t> workers=<w> micro=<m> core=<OpenBLAS core>
 */
#include <cblas.h>
#include <pthread.h>
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
static int parse_model(const char *s, int *batch, int *out)
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
        out[n++] = (int)d;
        if (*end == 0)
            break;
        if (*end != '-')
            return -1;
        s = end + 1;
    }
    return n >= 2 ? n : -1;
}

/* One worker's share of a step: its rows' activations and gradients, its weight gradients (the
 * momentum history when it is the only worker). */
typedef struct ceiling_worker {
    int batch;
    float beta; /* of the weight gradient: momentum alone, 0 with several workers */
    float *act[MAX_LAYERS + 1], *grad[MAX_LAYERS + 1], *h[MAX_LAYERS];
} ceiling_worker;

static int nl, dims[MAX_LAYERS + 1], micro = 1;
static float *w[MAX_LAYERS];
static const float lr = 0.01f, momentum = 0.9f;

static void weight_grad(ceiling_worker *k, int l)
{
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, dims[l + 1], dims[l], k->batch, -lr, k->grad[l + 1],
                dims[l + 1], k->act[l], dims[l], k->beta, k->h[l], dims[l]);
}

static void step(ceiling_worker *k)
{
    int rows = k->batch / micro;
    for (int j = 0; j < micro; j++)
        for (int l = 0; l < nl; l++)
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, dims[l + 1], dims[l], 1.0f,
                        k->act[l] + (size_t)j * rows * dims[l], dims[l], w[l], dims[l], 1.0f,
                        k->act[l + 1] + (size_t)j * rows * dims[l + 1], dims[l + 1]);
    for (int j = 0; j < micro; j++)
        for (int l = nl - 1; l >= 0; l--) {
            if (micro == 1)
                weight_grad(k, l);
            if (l > 0)
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, dims[l], dims[l + 1], 1.0f,
                            k->grad[l + 1] + (size_t)j * rows * dims[l + 1], dims[l + 1], w[l], dims[l], 0.0f,
                            k->grad[l] + (size_t)j * rows * dims[l], dims[l]);
        }
    for (int l = nl - 1; l >= 0 && micro > 1; l--)
        weight_grad(k, l);
}

/* Y accumulates with beta = 1 as in the engine (where the bias is re-filled each step): reset it
 * now and then so the values stay finite. */
static void reset_outputs(ceiling_worker *k)
{
    for (int i = 1; i <= nl; i++)
        memset(k->act[i], 0, (size_t)k->batch * (size_t)dims[i] * sizeof(float));
}

/* The other workers follow worker 0 (the main thread) step by step: before each meeting it says
 * what comes after it (1 a step, 2 a reset, 3 nothing: the meeting only, 0 the end), in a slot
 * per parity of the meeting so that a late reader never sees the next one's word. */
static pthread_barrier_t meet;
static int word[2];

static void *follow(void *arg)
{
    ceiling_worker *k = arg;
    for (unsigned r = 0;; r++) {
        pthread_barrier_wait(&meet);
        int what = word[r & 1];
        if (what == 0)
            return NULL;
        if (what == 1)
            step(k);
        else if (what == 2)
            reset_outputs(k);
    }
}

static unsigned meetings;

static void lead(ceiling_worker *k, int nworkers, int what)
{
    if (nworkers > 1) {
        word[meetings++ & 1] = what;
        pthread_barrier_wait(&meet);
    }
    if (what == 1)
        step(k);
    else if (what == 2)
        reset_outputs(k);
}

/* Steps all workers n times and waits for the last of them. */
static double timed_steps(ceiling_worker *k, int nworkers, int n)
{
    double t0 = now();
    for (int s = 0; s < n; s++)
        lead(k, nworkers, 1);
    lead(k, nworkers, 3); /* a meeting only: every worker has finished its steps */
    return now() - t0;
}

int main(int argc, char **argv)
{
    int batch = 0;
    int ndims = argc >= 3 ? parse_model(argv[1], &batch, dims) : -1;
    int threads = argc >= 3 ? atoi(argv[2]) : 0;
    double seconds = argc >= 4 ? atof(argv[3]) : 3.0;
    int nworkers = argc >= 5 ? atoi(argv[4]) : 1;
    micro = argc >= 6 ? atoi(argv[5]) : 1;
    if (ndims < 0 || threads < 1 || seconds <= 0 || nworkers < 1 || nworkers > batch || micro < 1 ||
        batch % micro != 0 || (micro > 1 && nworkers > 1)) {
        fprintf(stderr, "usage: %s {smallmlp|bigmlp|BATCH:D0-D1-...} THREADS [SECONDS [WORKERS [MICRO]]]\n"
                        "(MICRO divides BATCH, with WORKERS 1)\n", argv[0]);
        return 2;
    }
    nl = ndims - 1;
    openblas_set_num_threads(threads);

    unsigned seed = 12345;
    ceiling_worker *ks = calloc((size_t)nworkers, sizeof *ks);
    pthread_t *tids = calloc((size_t)nworkers, sizeof *tids);
    if (!ks || !tids) {
        fprintf(stderr, "gemm_ceiling: out of memory\n");
        return 1;
    }
    for (int l = 0; l < nl; l++)
        w[l] = alloc_fill((size_t)dims[l + 1] * (size_t)dims[l], &seed);
    for (int j = 0; j < nworkers; j++) {
        ceiling_worker *k = &ks[j];
        k->batch = batch * (j + 1) / nworkers - batch * j / nworkers;
        k->beta = nworkers == 1 ? momentum : 0.0f;
        for (int i = 0; i <= nl; i++) {
            k->act[i] = alloc_fill((size_t)k->batch * (size_t)dims[i], &seed);  /* layer i's input / output */
            k->grad[i] = alloc_fill((size_t)k->batch * (size_t)dims[i], &seed); /* d loss / d act[i] */
        }
        for (int l = 0; l < nl; l++)
            k->h[l] = alloc_fill((size_t)dims[l + 1] * (size_t)dims[l], &seed);
    }
    if (nworkers > 1) {
        pthread_barrier_init(&meet, NULL, (unsigned)nworkers);
        for (int j = 1; j < nworkers; j++)
            pthread_create(&tids[j], NULL, follow, &ks[j]);
    }

    /* Warm up (thread pool, page faults, caches) and estimate the time of one step. */
    int warm = 0;
    double spent = 0;
    do {
        spent += timed_steps(&ks[0], nworkers, 1);
        warm++;
    } while (warm < 3 || spent < 0.3);
    int steps = (int)(seconds / CHUNKS / (spent / warm));
    if (steps < 1)
        steps = 1;

    double ms[CHUNKS];
    for (int c = 0; c < CHUNKS; c++) {
        ms[c] = timed_steps(&ks[0], nworkers, steps) / steps * 1e3;
        lead(&ks[0], nworkers, 2);
    }
    lead(&ks[0], nworkers, 0);
    for (int j = 1; j < nworkers; j++)
        pthread_join(tids[j], NULL);
    qsort(ms, CHUNKS, sizeof ms[0], cmp_double);
    double med = ms[CHUNKS / 2];
    char *core = openblas_get_corename();
    printf("RESULT images_per_sec=%.0f ms_per_step=%.3f best_images_per_sec=%.0f model=%s threads=%d workers=%d "
           "micro=%d steps=%d core=%s\n",
           batch / (med * 1e-3), med, batch / (ms[0] * 1e-3), argv[1], threads, nworkers, micro, steps * CHUNKS,
           core ? core : "?");
    for (int j = 0; j < nworkers; j++) {
        for (int i = 0; i <= nl; i++) {
            free(ks[j].act[i]);
            free(ks[j].grad[i]);
        }
        for (int l = 0; l < nl; l++)
            free(ks[j].h[l]);
    }
    for (int l = 0; l < nl; l++)
        free(w[l]);
    free(ks);
    free(tids);
    return 0;
}

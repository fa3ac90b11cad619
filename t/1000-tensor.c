/* Tensor operations and vectorised kernels against naive loops. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/vmath.h"
#include "singa/singa.h"
#include "tap.h"

static singa_rng rng;

static void randomize(singa_tensor *t)
{
    for (size_t i = 0; i < t->size; i++)
        t->data[i] = singa_rng_uniform(&rng) * 2 - 1;
}

static float at(const singa_tensor *t, int r, int c) { return t->data[(size_t)r * (size_t)t->ld + (size_t)c]; }

/* C = alpha op(A) op(B) + beta C computed naively, compared with the BLAS path. */
static double gemm_error(bool ta, bool tb, int m, int n, int k, bool col_views)
{
    singa_tensor a, b, c, ref, aw, bw;
    int ar = ta ? k : m, ac = ta ? m : k, br = tb ? n : k, bc = tb ? k : n;
    /* With col_views the operands are column ranges of wider matrices (ld > cols). */
    singa_tensor_init2(&aw, ar, ac + 3, NULL);
    singa_tensor_init2(&bw, br, bc + 2, NULL);
    randomize(&aw);
    randomize(&bw);
    a = col_views ? singa_tensor_view_cols(&aw, 2, ac) : singa_tensor_view_cols(&aw, 0, ac);
    b = col_views ? singa_tensor_view_cols(&bw, 1, bc) : singa_tensor_view_cols(&bw, 0, bc);
    singa_tensor_init2(&c, m, n, NULL);
    singa_tensor_init2(&ref, m, n, NULL);
    randomize(&c);
    singa_tensor_copy(&ref, &c);
    float alpha = 0.7f, beta = 0.3f;
    singa_tensor_gemm(ta, tb, alpha, &a, &b, beta, &c);
    double worst = 0;
    for (int i = 0; i < m; i++)
        for (int j = 0; j < n; j++) {
            double s = 0;
            for (int p = 0; p < k; p++)
                s += (double)(ta ? at(&a, p, i) : at(&a, i, p)) * (tb ? at(&b, j, p) : at(&b, p, j));
            double want = alpha * s + beta * at(&ref, i, j);
            worst = fmax(worst, fabs(want - at(&c, i, j)));
        }
    singa_tensor_free(&aw);
    singa_tensor_free(&bw);
    singa_tensor_free(&c);
    singa_tensor_free(&ref);
    return worst;
}

int main(void)
{
    singa_rng_seed(&rng, 42, 0);
    singa_err err;

    singa_tensor t;
    int shape[4] = {2, 3, 4, 5};
    ok(singa_tensor_init(&t, 4, shape, &err) == 0 && t.size == 120 && t.ld == 60, "4-d tensor: size and row stride");
    ok(((uintptr_t)t.data & 63) == 0, "storage is 64-byte aligned");
    ok(singa_tensor_rows(&t) == 2 && singa_tensor_cols(&t) == 60, "matrix view: 2 rows of 60");
    singa_tensor_free(&t);
    int bad[2] = {3, 0};
    ok(singa_tensor_init(&t, 2, bad, &err) < 0 && strstr(err.msg, "dimension 1 is 0"), "zero dimension refused: %s", err.msg);
    ok(singa_tensor_init(&t, 5, shape, &err) < 0, "five dimensions refused");

    for (int v = 0; v < 2; v++)
        for (int ta = 0; ta < 2; ta++)
            for (int tb = 0; tb < 2; tb++) {
                double e = gemm_error(ta, tb, 7, 5, 9, v);
                ok(e < 1e-4, "gemm trans_a=%d trans_b=%d%s: max error %.2g", ta, tb, v ? " on column views" : "", e);
            }

    singa_tensor m, rows, cols;
    singa_tensor_init2(&m, 4, 6, NULL);
    for (size_t i = 0; i < m.size; i++)
        m.data[i] = (float)i;
    rows = singa_tensor_view_rows(&m, 1, 2);
    ok(rows.data[0] == 6 && rows.size == 12 && singa_tensor_rows(&rows) == 2, "row view starts at row 1 and has 2 rows");
    cols = singa_tensor_view_cols(&m, 2, 3);
    ok(at(&cols, 0, 0) == 2 && at(&cols, 3, 2) == 22 && cols.size == 12 && !singa_tensor_contiguous(&cols),
       "column view: element (3,2) is m[3][4], not contiguous");
    singa_tensor_fill(&cols, -1);
    double s = singa_tensor_sum(&m);
    ok(s == 276 - (2 + 3 + 4 + 8 + 9 + 10 + 14 + 15 + 16 + 20 + 21 + 22) - 12, "fill on a column view touches only its columns (sum %g)", s);
    singa_tensor sub;
    singa_tensor_init2(&sub, 4, 3, NULL);
    singa_tensor_fill(&sub, 2);
    singa_tensor_axpy(0.5f, &sub, &cols);
    ok(at(&m, 2, 3) == 0 && at(&m, 2, 5) == 17, "axpy on a column view");
    singa_tensor_copy(&cols, &sub);
    ok(at(&m, 1, 4) == 2 && at(&m, 1, 5) == 11, "copy into a column view");
    ok(singa_tensor_sumsq(&sub) == 48, "sum of squares");

    float bias[3] = {1, 2, 3}, colsum[3] = {100, 100, 100};
    singa_tensor_add_row(&sub, bias);
    ok(sub.data[0] == 3 && sub.data[11] == 5, "add_row adds the vector to every row");
    singa_tensor_sum_rows(&sub, 2.0f, 0.5f, colsum);
    ok(colsum[0] == 50 + 2 * 12 && colsum[2] == 50 + 2 * 20, "sum_rows with alpha and beta");
    float x[6] = {1, 2, 3, 4, 5, 6}, y[4] = {1, 1, 1, 1};
    singa_tensor_gemv(false, 1.0f, &m, x, 2.0f, y);
    double want0 = 0;
    for (int j = 0; j < 6; j++)
        want0 += at(&m, 0, j) * x[j];
    ok(fabs(y[0] - (want0 + 2)) < 1e-4, "gemv row 0");
    singa_tensor_free(&m);
    singa_tensor_free(&sub);

    enum { N = 4096 };
    static float in[N], out[N], dx[N], dy[N];
    for (int i = 0; i < N; i++) {
        in[i] = (float)(i - N / 2) / 200.0f; /* -10.24 .. 10.24 */
        dy[i] = 1;
    }
    double et = 0, es = 0, ee = 0;
    singa_vtanh(out, in, N, 1, 1);
    for (int i = 0; i < N; i++)
        et = fmax(et, fabs(out[i] - tanh(in[i])));
    singa_vtanh(out, in, N, 0.6666667f, 1.7159047f);
    for (int i = 0; i < N; i++)
        es = fmax(es, fabs(out[i] - 1.7159047 * tanh(0.6666667 * in[i])));
    singa_vsigmoid(out, in, N);
    for (int i = 0; i < N; i++)
        ee = fmax(ee, fabs(out[i] - 1 / (1 + exp(-in[i]))));
    ok(et < 1e-6 && es < 2e-6 && ee < 1e-6, "tanh, stanh, sigmoid within 2e-6 of libm (%.1e %.1e %.1e)", et, es, ee);
    singa_vtanh(out, in, N, 1, 1);
    singa_vtanh_grad(dx, dy, out, N, 1, 1, 0);
    double eg = 0;
    for (int i = 0; i < N; i++)
        eg = fmax(eg, fabs(dx[i] - (1 - tanh(in[i]) * tanh(in[i]))));
    ok(eg < 2e-6, "tanh gradient from outputs (%.1e)", eg);
    float e[5], ein[5] = {0, 1, 2, -3, 4};
    float sum = singa_vexp_shift(e, ein, 5, 4);
    ok(fabs(e[4] - 1) < 1e-6 && fabs(e[3] - exp(-7)) < 1e-7 && fabs(sum - (exp(-4) + exp(-3) + exp(-2) + exp(-7) + 1)) < 1e-6,
       "exp with shift");
    singa_vrelu(out, in, N, 0.1f);
    ok(out[0] == in[0] * 0.1f && out[N - 1] == in[N - 1], "leaky relu");

    singa_rng a, b;
    singa_rng_seed(&a, 5, 1);
    singa_rng_seed(&b, 5, 1);
    int same = 1;
    for (int i = 0; i < 100; i++)
        same &= singa_rng_next(&a) == singa_rng_next(&b);
    singa_rng_seed(&b, 5, 2);
    ok(same && singa_rng_next(&a) != singa_rng_next(&b), "rng: same seed and stream repeat, other streams differ");
    double mean = 0, var = 0;
    for (int i = 0; i < 20000; i++) {
        double g = singa_rng_gaussian(&a);
        mean += g;
        var += g * g;
    }
    mean /= 20000;
    var = var / 20000 - mean * mean;
    ok(fabs(mean) < 0.03 && fabs(var - 1) < 0.05, "gaussian: mean %.3f, variance %.3f", mean, var);
    return done_testing();
}

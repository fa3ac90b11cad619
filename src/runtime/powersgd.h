/* PowerSGD's arithmetic (cluster.compress = { powersgd = R }; Vogels et al. 2019), pure functions
 * on caller buffers, so that the stub, the servers and t/8703 run the same code.
 *
 * A slice [offset, offset + n) of a param of `cols` columns (its size over its first dimension)
 * is the matrix M of the rows it touches, `rows` of them, row-major, with the `pad` elements of
 * its first row before the slice and those of its last row after it taken as zero.  Each process
 * sends P = M Q (rows x R), Q (cols x R) warm-started from the previous step; the servers sum P
 * over processes and orthonormalise its columns (P-hat); each process sends Q' = M^T P-hat; the
 * servers sum Q'; the update is P-hat Q'^T over the slice's elements, computed by
 * rt_psgd_expand_each alone, so that a server and every replica get the same bits. */
#ifndef SINGA_RUNTIME_POWERSGD_H
#define SINGA_RUNTIME_POWERSGD_H

#include <stdbool.h>
#include <stddef.h>

/* How a slice's gradients travel to servers whose summed update every replica applies
 * (replica_update.h): as factors, or summed by the servers and the sum sent back: as fp16 (1-D
 * params), float32 (params too small for the rank, and the first steps), or (SPARSE, not
 * PowerSGD's) as top-k's pairs, the sum as the pairs of its nonzero values. */
typedef enum { RT_PSGD_F32, RT_PSGD_F16, RT_PSGD_LOWRANK, RT_PSGD_SPARSE } rt_psgd_mode;

typedef struct rt_psgd_geom {
    rt_psgd_mode mode;
    size_t n, rows, cols, pad; /* the slice's elements; its matrix (LOWRANK only) */
    int rank;
} rt_psgd_geom;

/* The geometry of slice [offset, offset + n) of a param of shape[0..ndim) under rank R: LOWRANK
 * when the param is 2-D or more and R is below both the param's sides and the slice's rows. */
rt_psgd_geom rt_psgd_geom_of(const int *shape, int ndim, size_t offset, size_t n, int rank);
/* Floats of each factor: P (rows x R) and Q (cols x R); the padded matrix (rows x cols). */
static inline size_t rt_psgd_p_len(const rt_psgd_geom *g) { return g->rows * (size_t)g->rank; }
static inline size_t rt_psgd_q_len(const rt_psgd_geom *g) { return g->cols * (size_t)g->rank; }
static inline size_t rt_psgd_m_len(const rt_psgd_geom *g) { return g->rows * g->cols; }

/* Q's start, the same in every process: values of a generator seeded by `seed` (the slice). */
void rt_psgd_init_q(float *q, const rt_psgd_geom *g, unsigned seed);
/* Q for the next step from the summed Q' (cols x R); a column that is all zero (a gradient
 * that was zero) starts again from rt_psgd_init_q's, so the rank does not collapse; q may be qsum. */
void rt_psgd_warm_q(float *q, const float *qsum, const rt_psgd_geom *g, unsigned seed);
/* M = grad (the slice's n elements) + M when `keep` (error feedback: M holds the residual), else
 * grad, the padding zero; then P = M Q, in one pass over M.  With `owed` (the last step's own Q',
 * P holding its P-hat) M first gives up P-hat owed^T, the feedback rt_psgd_right's step left to
 * this pass.  scratch holds (2 R + 1) x cols floats. */
void rt_psgd_take_left(float *m, const float *grad, const float *q, float *p, const float *owed, float *scratch,
                       const rt_psgd_geom *g, bool keep);
/* P's columns made orthonormal in place (Gram-Schmidt, in order; a column with nothing left
 * becomes zero). */
void rt_psgd_orthogonalise(float *p, const rt_psgd_geom *g);
/* Q' = M^T P-hat; scratch holds R x cols floats. */
void rt_psgd_right(const float *m, const float *phat, float *q, float *scratch, const rt_psgd_geom *g);
/* Error feedback: M -= P-hat Q'^T (this process's share of the update), the padding kept zero:
 * what stays in M is the residual; bit for bit what rt_psgd_take_left's `owed` takes off.
 * scratch holds (R + 1) x cols floats. */
void rt_psgd_feedback(float *m, const float *phat, const float *q, float *scratch, const rt_psgd_geom *g);
/* The slice's elements of P-hat Q'^T, row by row: sink(ctx, offset in the slice, values, count)
 * for each of the matrix's rows (a nonzero return stops and is returned); scratch holds
 * (R + 1) x cols floats.  The same values as rt_psgd_expand's, never all in memory at once. */
typedef int (*rt_psgd_sink)(void *ctx, size_t offset, const float *vals, size_t n);
int rt_psgd_expand_each(const float *phat, const float *q, float *scratch, const rt_psgd_geom *g, rt_psgd_sink sink,
                        void *ctx);
/* out[0, n) = the slice's elements of P-hat Q'^T; scratch holds (R + 1) x cols floats. */
void rt_psgd_expand(const float *phat, const float *q, float *out, float *scratch, const rt_psgd_geom *g);

#endif

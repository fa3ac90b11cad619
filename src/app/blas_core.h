/* OpenBLAS's kernels on a CPU newer than its tables (blas_core.c). */
#ifndef SINGA_APP_BLAS_CORE_H
#define SINGA_APP_BLAS_CORE_H

/* Starts the program again (argv) with OPENBLAS_CORETYPE set where OpenBLAS fell back to its
 * generic kernels on a CPU with AVX2 or AVX-512; returns where nothing is to be done. */
void singa_tui_blas_core(char **argv);

#endif

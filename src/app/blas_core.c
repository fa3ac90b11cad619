/* OpenBLAS picks its kernels from the CPU's model when it loads. A CPU newer than its tables gets
 * the generic SSE3 ones (Prescott): a third of the speed on the big MLP on such a machine. Where
 * that happened and the CPU has AVX2 or AVX-512, the program starts again with OPENBLAS_CORETYPE
 * naming the kernels the CPU can run, as a user who knew would have set it; a value the user set
 * is left alone. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "app/blas_core.h"
#include "singa/tensor.h"

/* OpenBLAS's x86-64 kernels without AVX2 (its fallbacks for a model it does not know). */
static const char *const generic_cores[] = {"prescott", "core2",     "penryn",    "dunnington", "nehalem",
                                            "atom",     "sandybridge", "barcelona", "bobcat",     "bulldozer",
                                            "piledriver", "steamroller", "opteron", "nano",       "katmai",
                                            "coppermine", "northwood", "banias",    "unknown",    NULL};

static bool generic(const char *core)
{
    for (int i = 0; generic_cores[i]; i++)
        if (core && strcasecmp(core, generic_cores[i]) == 0)
            return true;
    return false;
}

/* The kernels this CPU runs best of those OpenBLAS has for every x86-64 build, or NULL. */
static const char *better_core(void)
{
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512cd"))
        return "SkylakeX";
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return "Haswell";
    return NULL;
}

void singa_tui_blas_core(char **argv)
{
#if defined(__x86_64__)
    if (getenv("OPENBLAS_CORETYPE") || !generic(singa_blas_core()))
        return;
    const char *core = better_core();
    if (!core || setenv("OPENBLAS_CORETYPE", core, 1) != 0)
        return;
    execv("/proc/self/exe", argv); /* on failure this run goes on with the kernels it has */
    unsetenv("OPENBLAS_CORETYPE");
#else
    (void)argv;
#endif
}

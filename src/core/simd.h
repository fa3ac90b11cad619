/* SINGA_KERNEL marks a hot loop function to be compiled for several x86-64 levels (baseline,
 * v3 = AVX2 + FMA, v4 = AVX-512), the best picked at load time; one binary runs everywhere and
 * is fast where the CPU allows.  Elsewhere it expands to nothing, as under ThreadSanitizer, whose
 * runtime is not up yet when the clones' resolvers run (during relocation). */
#ifndef SINGA_CORE_SIMD_H
#define SINGA_CORE_SIMD_H

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(SINGA_NO_CLONES) && \
    !defined(__SANITIZE_THREAD__)
#define SINGA_KERNEL __attribute__((target_clones("default", "arch=x86-64-v3", "arch=x86-64-v4")))
#else
#define SINGA_KERNEL
#endif

#endif

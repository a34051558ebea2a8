/* A counter-based stream of uniforms (sklearn_clda), for the kernels
   that fill a document's uniforms at once: the MH kernels (_mh_kernel.h)
   and the dense one (_gibbs_kernel.h, through gibbs_sweep and
   _partition_kernel.h).

   Uniform c of key is the top 53 bits of SplitMix64 (Steele, Lea and
   Flood 2014; the generator of Java's SplittableRandom, which passes
   BigCrush) at state key + (c + 1) gamma, times 2^-53, the conversion of
   NumPy's Generator.random. In NumPy, with x uint64 arrays (arithmetic mod
   2^64):

       x = key + (c + 1) * 0x9e3779b97f4a7c15
       x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
       x = (x ^ (x >> 27)) * 0x94d049bb133111eb
       u = ((x ^ (x >> 31)) >> 11).astype(float64) * 2.0**-53

   The callers take the key from their NumPy bit generator (next_uint64),
   so a seeded chain stays reproducible, and the counter from the token's
   place. The fill is a loop without calls: 0.8 ns a uniform, 0.13 ns
   compiled for AVX-512 (AMD EPYC), against about 2-3 ns for a call of a
   bit generator's next_double. The uniforms have the 53 bits of
   Generator.random, so no choice is coarser than with it. Within a call
   the counters, hence the generator's states, are distinct. */
#ifndef SKLEARN_CLDA_UNIFORMS_H
#define SKLEARN_CLDA_UNIFORMS_H

#include <stdint.h>

/* Uniforms c0, c0 + 1, ..., c0 + n - 1 of the stream of key (see the
   top of this file) into u. Integer operations and an exact conversion
   only, so every vectorization of the loop gives the same doubles. */
#define CLDA_FILL_UNIFORMS_BODY                                             \
    {                                                                       \
        const uint64_t gamma = UINT64_C(0x9e3779b97f4a7c15);                \
        const uint64_t base = key + c0 * gamma;                             \
        int64_t k;                                                          \
        for (k = 0; k < n; k++) {                                           \
            uint64_t x = base + (uint64_t)(k + 1) * gamma;                  \
            x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);             \
            x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);             \
            x ^= x >> 31;                                                   \
            u[k] = (double)(int64_t)(x >> 11) * (1.0 / 9007199254740992.0); \
        }                                                                   \
    }

static void clda_fill_uniforms_portable(double *u, int64_t n, uint64_t key, uint64_t c0)
CLDA_FILL_UNIFORMS_BODY

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
/* The same loop compiled for AVX-512 (64-bit multiplies and int64 to
   double conversions in vector registers): 0.13 ns a uniform against 0.8
   on the test machine (AMD EPYC). */
__attribute__((target("avx512f,avx512dq,avx512vl")))
static void clda_fill_uniforms_avx512(double *u, int64_t n, uint64_t key, uint64_t c0)
CLDA_FILL_UNIFORMS_BODY

#if defined(__APPLE__)
#include <sys/sysctl.h>
static int clda_uniforms_sysctl_flag(const char *name)
{
    int value = 0;
    size_t size = sizeof(value);
    return sysctlbyname(name, &value, &size, NULL, 0) == 0 && value != 0;
}
/* (Apple's toolchain may not provide __builtin_cpu_supports' runtime symbol.) */
static int clda_uniforms_cpu_has_avx512(void)
{
    return clda_uniforms_sysctl_flag("hw.optional.avx512f")
        && clda_uniforms_sysctl_flag("hw.optional.avx512dq")
        && clda_uniforms_sysctl_flag("hw.optional.avx512vl");
}
#else
static int clda_uniforms_cpu_has_avx512(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq")
        && __builtin_cpu_supports("avx512vl");
}
#endif
#else  /* no AVX-512 version on this compiler / architecture */
static int clda_uniforms_cpu_has_avx512(void) { return 0; }
#define clda_fill_uniforms_avx512 clda_fill_uniforms_portable
#endif

/* clda_fill_uniforms_avx512 when wide is non-zero (only where
   clda_uniforms_cpu_has_avx512), else the portable loop. */
static inline void clda_fill_uniforms(double *u, int64_t n, uint64_t key, uint64_t c0,
                                      int wide)
{
    if (wide)
        clda_fill_uniforms_avx512(u, n, key, c0);
    else
        clda_fill_uniforms_portable(u, n, key, c0);
}

#endif  /* SKLEARN_CLDA_UNIFORMS_H */

/* The z-step of the collapsed Gibbs sweep for one document (sklearn_clda).

   Three implementations of the same arithmetic, chosen at run time by
   ``gibbs_sweep``:

   - ``clda_sweep_document_portable``: plain C, any compiler and CPU, any
     row stride of the word-topic table;
   - ``clda_sweep_document_avx2``: AVX2 intrinsics (x86-64 with GCC or
     Clang, used when the CPU has AVX2), for word-topic rows padded to a
     multiple of eight topics with zeros;
   - ``clda_sweep_document_avx512``: AVX-512 intrinsics, one block of
     eight topics per vector, same rows (used from
     ``_sampling.AVX512_MIN_COMPONENTS`` topics on when the CPU has
     AVX-512F).

   Per token ``i`` of the document (word ``w``, topic ``k_old``), the
   unnormalized full conditional with the token left out is

       p[k] = r[k] * (nw[k] + eta),     r[k] = (ndk[k] + prior[k]) * inv[k],
       p[k_old] = (ndk[k_old] - 1 + prior[k_old]) * invm[k_old] * (nw[k_old] - 1 + eta),

   with ``inv[k] = 1 / (nk[k] + V eta)``, ``invm[k] = 1 / (nk[k] - 1 + V eta)``
   (kept up to date, so that nothing is divided unless a topic moves). The
   topics are grouped in blocks of eight, ``p`` zero-padded to ``8 *
   n_blocks``; each block total is ``((q0 + q1) + (q2 + q3)) + ((q4 + q5) +
   (q6 + q7))`` and ``cum[b]`` the running sum of the totals, ``cum[-1] =
   0``. With ``u = u_buf[i - i0] * cum[n_blocks - 1]``, the block is the
   number of ``cum[0 .. n_blocks - 2]`` that are ``<= u``, then the topic
   inside it the number of running sums ``cum[b - 1] + p[8b] + ... +
   p[8b + j]`` (``j = 0..6``, added left to right) that are ``<= u``, capped
   at ``K - 1``: inversion of ``p / sum(p)``. Counts change only when the
   topic moves. All implementations evaluate exactly these expressions in
   this order (no FMA contraction: the module is compiled with
   ``-ffp-contract=off``), so they give bit-identical draws.

   The AVX2 version stores into ``r`` and into the count row in the same
   aligned groups of four lanes that the next token loads, so the loads
   are served from the store buffer instead of waiting for the stores. */
#ifndef SKLEARN_CLDA_GIBBS_KERNEL_H
#define SKLEARN_CLDA_GIBBS_KERNEL_H

#include <stdint.h>

#if defined(__GNUC__) || defined(__clang__)
#define CLDA_PREFETCH(addr) __builtin_prefetch((const void *)(addr), 1, 3)
#else
#define CLDA_PREFETCH(addr) ((void)0)
#endif

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#define CLDA_HAVE_AVX2_KERNEL 1
#include <immintrin.h>
#else
#define CLDA_HAVE_AVX2_KERNEL 0
#endif

/* Everything one sweep of one shard shares between its documents: the
   tables and constants (read or updated by every document) and the
   thread's scratch buffers. ``gibbs_sweep`` fills one per call; a kernel
   copies the fields it needs into locals, so that its stores into the
   double scratch arrays cannot be taken to alias ``eta``/``veta``. */
typedef struct {
    Py_ssize_t K;            /* topics */
    Py_ssize_t n_blocks;     /* blocks of eight topics, ceil(K / 8) */
    int64_t n_tokens;        /* length of words and z */
    const int32_t *words;    /* word of each token */
    int32_t *z;              /* topic of each token, updated */
    int32_t *nwk;            /* word-topic counts, rows of nwk_stride, updated */
    Py_ssize_t nwk_stride;   /* K, or 8 * n_blocks for padded rows */
    int32_t *nk;             /* topic totals, updated */
    double eta;              /* topic-word prior */
    double veta;             /* V * eta */
    double *inv;             /* 1 / (nk + V eta), kept current */
    double *invm;            /* 1 / (nk - 1 + V eta), kept current */
    double *r;               /* (ndk[d] + prior[g]) * inv, per document */
    double *p;               /* weights of the current token */
    double *cum;             /* running block sums; cum[-1] == 0 */
} clda_sweep_ctx;

/* The z-step of the tokens i0:i1 of one document: its topic counts ndk_d,
   its collection's prior prior_g, its uniforms u_buf (one per token) and
   the word of the token after it (-1 at the end), for prefetching. */
typedef void (*clda_sweep_document_fn)(
    const clda_sweep_ctx *ctx, int64_t i0, int64_t i1, int32_t *ndk_d,
    const double *prior_g, const double *u_buf, int64_t next_word);

/* Unpack the context into locals with the names the kernels use. */
#define CLDA_UNPACK_CTX(ctx)                                                    \
    const Py_ssize_t K = (ctx)->K, n_blocks = (ctx)->n_blocks;                  \
    const int32_t *const words = (ctx)->words;                                  \
    int32_t *const z = (ctx)->z;                                                \
    int32_t *const nwk = (ctx)->nwk;                                            \
    const Py_ssize_t nwk_stride = (ctx)->nwk_stride;                            \
    int32_t *const nk = (ctx)->nk;                                              \
    const double eta = (ctx)->eta, veta = (ctx)->veta;                          \
    double *const inv = (ctx)->inv, *const invm = (ctx)->invm;                  \
    double *const r = (ctx)->r, *const p = (ctx)->p, *const cum = (ctx)->cum

/* Prefetch the count row of the word of the next token: its first and
   last bytes (the whole row when it spans at most two cache lines, as at
   K <= 32 with 64-byte aligned rows; longer rows are left to the hardware
   prefetcher, which measured no slower than prefetching every line). */
#define CLDA_PREFETCH_ROW(nwk, stride, word) do {                              \
        const char *row_ = (const char *)((nwk) + (Py_ssize_t)(word) * (stride)); \
        CLDA_PREFETCH(row_);                                                    \
        CLDA_PREFETCH(row_ + (stride) * 4 - 1);                                 \
    } while (0)

/* Add delta (+1 or -1) to the counts of topic k and refresh its cached
   reciprocals and r[k]. */
static inline void clda_move_count(
    int32_t k, int32_t delta, int32_t *ndk_d, int32_t *nk, int32_t *nw,
    const double *prior_g, double veta, double *inv, double *invm, double *r)
{
    ndk_d[k] += delta;
    nw[k] += delta;
    nk[k] += delta;
    inv[k] = 1.0 / (nk[k] + veta);
    invm[k] = 1.0 / (nk[k] - 1 + veta);
    r[k] = (ndk_d[k] + prior_g[k]) * inv[k];
}

/* The topic that u (uniform times the total) falls on: the block is the
   number of cum[0 .. n_blocks - 2] that are <= u, the topic inside it the
   number of running sums cum[b - 1] + p[8b] + ... + p[8b + j] (j = 0..6,
   added left to right) that are <= u, capped at K - 1 (cum[-1] == 0). */
static inline int32_t clda_draw_topic(const double *p, const double *cum, Py_ssize_t n_blocks,
                                      Py_ssize_t K, double u)
{
    Py_ssize_t b = 0, j, count = 0, k;
    const double *q;
    double s;
    for (j = 0; j < n_blocks - 1; j++)
        b += (cum[j] <= u);
    q = p + 8 * b;
    s = cum[b - 1];
    s += q[0]; count += (s <= u);
    s += q[1]; count += (s <= u);
    s += q[2]; count += (s <= u);
    s += q[3]; count += (s <= u);
    s += q[4]; count += (s <= u);
    s += q[5]; count += (s <= u);
    s += q[6]; count += (s <= u);
    k = 8 * b + count;
    return (int32_t)(k < K - 1 ? k : K - 1);
}

static void clda_sweep_document_portable(
    const clda_sweep_ctx *ctx, int64_t i0, int64_t i1, int32_t *ndk_d,
    const double *prior_g, const double *u_buf, int64_t next_word)
{
    CLDA_UNPACK_CTX(ctx);
    Py_ssize_t k, b;
    int64_t i;
    double total;
    for (k = 0; k < K; k++)
        r[k] = (ndk_d[k] + prior_g[k]) * inv[k];
    for (i = i0; i < i1; i++) {
        const int32_t w = words[i];
        int32_t *nw = nwk + (Py_ssize_t)w * nwk_stride;
        const int32_t k_old = z[i];
        int32_t k_new;
        const int64_t w_next = i + 1 < i1 ? words[i + 1] : next_word;
        if (w_next >= 0)
            CLDA_PREFETCH_ROW(nwk, nwk_stride, w_next);
        for (k = 0; k < K; k++)
            p[k] = r[k] * (nw[k] + eta);
        p[k_old] = (ndk_d[k_old] - 1 + prior_g[k_old]) * invm[k_old]
                   * (nw[k_old] - 1 + eta);
        total = 0.0;
        for (b = 0; b < n_blocks; b++) {
            const double *q = p + 8 * b;
            total += ((q[0] + q[1]) + (q[2] + q[3])) + ((q[4] + q[5]) + (q[6] + q[7]));
            cum[b] = total;
        }
        k_new = clda_draw_topic(p, cum, n_blocks, K, u_buf[i - i0] * total);
        if (k_new == k_old)
            continue;
        z[i] = k_new;
        clda_move_count(k_old, -1, ndk_d, nk, nw, prior_g, veta, inv, invm, r);
        clda_move_count(k_new, 1, ndk_d, nk, nw, prior_g, veta, inv, invm, r);
    }
}

#if CLDA_HAVE_AVX2_KERNEL

#if defined(__APPLE__)
#include <sys/sysctl.h>
/* Apple's toolchain may not provide the runtime symbol behind
   __builtin_cpu_supports (an import-time failure on macOS x86_64); ask the
   kernel instead. */
static int clda_cpu_has_avx2(void)
{
    int value = 0;
    size_t size = sizeof(value);
    return sysctlbyname("hw.optional.avx2_0", &value, &size, NULL, 0) == 0 && value != 0;
}
static int clda_cpu_has_avx512(void)
{
    int value = 0;
    size_t size = sizeof(value);
    return sysctlbyname("hw.optional.avx512f", &value, &size, NULL, 0) == 0 && value != 0;
}
#else
static int clda_cpu_has_avx2(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") ? 1 : 0;
}
static int clda_cpu_has_avx512(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") ? 1 : 0;
}
#endif

/* The unnormalized weights of four topics starting at o, with the token's
   own topic replaced by p_old (lanes whose id equals k_old). */
#define CLDA_WEIGHTS4(o, ids)                                                    \
    _mm256_blendv_pd(                                                            \
        _mm256_mul_pd(_mm256_load_pd(r + (o)),                                   \
                      _mm256_add_pd(_mm256_cvtepi32_pd(                          \
                          _mm_loadu_si128((const __m128i *)(nw + (o)))), etav)), \
        poldv, _mm256_castsi256_pd(_mm256_cmpeq_epi64((ids), kov)))

/* Add delta (+1 or -1) to the counts of topic k and refresh its cached
   reciprocals and r[k]; the count row and r are written as the aligned
   group of four lanes that holds k, the unit the next token loads. */
__attribute__((target("avx2")))
static inline void clda_move_count_avx2(
    int32_t k, int32_t delta, int32_t *ndk_d, int32_t *nk, int32_t *nw,
    const double *prior_g, double veta, double *inv, double *invm, double *r)
{
    __m128i *cg = (__m128i *)(nw + (k & ~3));
    double *rg = r + (k & ~3);
    const __m128i one_hot = _mm_cmpeq_epi32(_mm_setr_epi32(0, 1, 2, 3), _mm_set1_epi32(k & 3));
    const __m256i sel = _mm256_cmpeq_epi64(_mm256_setr_epi64x(0, 1, 2, 3),
                                           _mm256_set1_epi64x(k & 3));
    ndk_d[k] += delta;
    nk[k] += delta;
    _mm_storeu_si128(cg, _mm_add_epi32(_mm_loadu_si128(cg),
                                       _mm_and_si128(one_hot, _mm_set1_epi32(delta))));
    inv[k] = 1.0 / (nk[k] + veta);
    invm[k] = 1.0 / (nk[k] - 1 + veta);
    _mm256_store_pd(rg, _mm256_blendv_pd(_mm256_load_pd(rg),
                                         _mm256_set1_pd((ndk_d[k] + prior_g[k]) * inv[k]),
                                         _mm256_castsi256_pd(sel)));
}

__attribute__((target("avx2")))
static void clda_sweep_document_avx2(
    const clda_sweep_ctx *ctx, int64_t i0, int64_t i1, int32_t *ndk_d,
    const double *prior_g, const double *u_buf, int64_t next_word)
{
    CLDA_UNPACK_CTX(ctx);
    /* Requires: nwk_stride == 8 * n_blocks (rows zero-padded), r and p of
       length 8 * n_blocks, 32-byte aligned, r zero beyond K. */
    const __m256d etav = _mm256_set1_pd(eta);
    const __m256i lane64 = _mm256_setr_epi64x(0, 1, 2, 3);
    const __m256i four64 = _mm256_set1_epi64x(4);
    Py_ssize_t k, b;
    int64_t i;
    for (k = 0; k < K; k++)
        r[k] = (ndk_d[k] + prior_g[k]) * inv[k];
    for (i = i0; i < i1; i++) {
        const int32_t w = words[i];
        int32_t *nw = nwk + (Py_ssize_t)w * nwk_stride;
        const int32_t k_old = z[i];
        int32_t k_new;
        const int64_t w_next = i + 1 < i1 ? words[i + 1] : next_word;
        double total = 0.0, p_old;
        __m256d poldv;
        __m256i kov, ids = lane64;
        if (w_next >= 0)
            CLDA_PREFETCH_ROW(nwk, nwk_stride, w_next);
        p_old = (ndk_d[k_old] - 1 + prior_g[k_old]) * invm[k_old]
                * (nw[k_old] - 1 + eta);
        poldv = _mm256_set1_pd(p_old);
        kov = _mm256_set1_epi64x(k_old);
        /* Two blocks of eight at a time: block totals in vector registers. */
        for (b = 0; b + 1 < n_blocks; b += 2) {
            const Py_ssize_t o = 8 * b;
            __m256d a0, c0, a1, c1, h0, h1, sv, tv;
            a0 = CLDA_WEIGHTS4(o, ids);
            ids = _mm256_add_epi64(ids, four64);
            c0 = CLDA_WEIGHTS4(o + 4, ids);
            ids = _mm256_add_epi64(ids, four64);
            a1 = CLDA_WEIGHTS4(o + 8, ids);
            ids = _mm256_add_epi64(ids, four64);
            c1 = CLDA_WEIGHTS4(o + 12, ids);
            ids = _mm256_add_epi64(ids, four64);
            _mm256_store_pd(p + o, a0);
            _mm256_store_pd(p + o + 4, c0);
            _mm256_store_pd(p + o + 8, a1);
            _mm256_store_pd(p + o + 12, c1);
            /* h = [q0+q1, q4+q5, q2+q3, q6+q7] per block */
            h0 = _mm256_hadd_pd(a0, c0);
            h1 = _mm256_hadd_pd(a1, c1);
            /* sv = [(q0+q1)+(q2+q3), (q4+q5)+(q6+q7)] of both blocks */
            sv = _mm256_add_pd(_mm256_permute2f128_pd(h0, h1, 0x20),
                               _mm256_permute2f128_pd(h0, h1, 0x31));
            tv = _mm256_hadd_pd(sv, sv);
            total += _mm256_cvtsd_f64(tv);
            cum[b] = total;
            total += _mm_cvtsd_f64(_mm256_extractf128_pd(tv, 1));
            cum[b + 1] = total;
        }
        if (b < n_blocks) {
            const Py_ssize_t o = 8 * b;
            __m256d a0, c0, h0;
            __m128d sv;
            a0 = CLDA_WEIGHTS4(o, ids);
            ids = _mm256_add_epi64(ids, four64);
            c0 = CLDA_WEIGHTS4(o + 4, ids);
            _mm256_store_pd(p + o, a0);
            _mm256_store_pd(p + o + 4, c0);
            h0 = _mm256_hadd_pd(a0, c0);
            sv = _mm_add_pd(_mm256_castpd256_pd128(h0), _mm256_extractf128_pd(h0, 1));
            total += _mm_cvtsd_f64(_mm_hadd_pd(sv, sv));
            cum[b] = total;
        }
        k_new = clda_draw_topic(p, cum, n_blocks, K, u_buf[i - i0] * total);
        if (k_new == k_old)
            continue;
        z[i] = k_new;
        clda_move_count_avx2(k_old, -1, ndk_d, nk, nw, prior_g, veta, inv, invm, r);
        clda_move_count_avx2(k_new, 1, ndk_d, nk, nw, prior_g, veta, inv, invm, r);
    }
}

#undef CLDA_WEIGHTS4

/* Add delta (+1 or -1) to the counts of topic k and refresh its cached
   reciprocals and r[k]; the count row and r are written as the aligned
   group of eight lanes that holds k, the unit the AVX-512 kernel loads
   (a narrower store inside a wider load would keep the load from being
   served by the store buffer). */
__attribute__((target("avx512f")))
static inline void clda_move_count_avx512(
    int32_t k, int32_t delta, int32_t *ndk_d, int32_t *nk, int32_t *nw,
    const double *prior_g, double veta, double *inv, double *invm, double *r)
{
    __m256i *cg = (__m256i *)(nw + (k & ~7));
    double *rg = r + (k & ~7);
    const __mmask8 bit = (__mmask8)(1u << (k & 7));
    ndk_d[k] += delta;
    nk[k] += delta;
    _mm256_storeu_si256(cg, _mm512_castsi512_si256(_mm512_mask_add_epi32(
        _mm512_castsi256_si512(_mm256_loadu_si256(cg)), (__mmask16)bit,
        _mm512_castsi256_si512(_mm256_loadu_si256(cg)), _mm512_set1_epi32(delta))));
    inv[k] = 1.0 / (nk[k] + veta);
    invm[k] = 1.0 / (nk[k] - 1 + veta);
    _mm512_storeu_pd(rg, _mm512_mask_mov_pd(_mm512_loadu_pd(rg), bit,
                                           _mm512_set1_pd((ndk_d[k] + prior_g[k]) * inv[k])));
}

/* The unnormalized weights of block b (topics 8b .. 8b + 7), the token's
   own topic (block bo, lane bit) replaced by poldv. */
#define CLDA_WEIGHTS8(b)                                                           \
    _mm512_mask_mov_pd(                                                            \
        _mm512_mul_pd(_mm512_loadu_pd(r + 8 * (b)),                                 \
                      _mm512_add_pd(_mm512_cvtepi32_pd(                            \
                          _mm256_loadu_si256((const __m256i *)(nw + 8 * (b)))), etav)), \
        (__mmask8)((b) == bo ? bit : 0), poldv)

/* The totals ((q0 + q1) + (q2 + q3)) + ((q4 + q5) + (q6 + q7)) of one block. */
__attribute__((target("avx512f")))
static inline double clda_block_total_avx512(__m512d a)
{
    const __m512d x = _mm512_add_pd(a, _mm512_permute_pd(a, 0x55));        /* q0+q1 in 0, q2+q3 in 2 */
    const __m512d y = _mm512_add_pd(x, _mm512_permutex_pd(x, 0x4e));       /* (..)+(..) in 0 and 4 */
    const __m512d t = _mm512_add_pd(y, _mm512_shuffle_f64x2(y, y, 0x4e));  /* block total in 0 */
    return _mm512_cvtsd_f64(t);
}

/* The kernel of clda_sweep_document_avx2 with AVX-512: one block of eight
   topics per vector, four blocks' totals formed side by side (same
   additions in the same order as the other kernels, so the same draws). */
__attribute__((target("avx512f")))
static void clda_sweep_document_avx512(
    const clda_sweep_ctx *ctx, int64_t i0, int64_t i1, int32_t *ndk_d,
    const double *prior_g, const double *u_buf, int64_t next_word)
{
    CLDA_UNPACK_CTX(ctx);
    /* Requires: nwk_stride == 8 * n_blocks (rows zero-padded), r and p of
       length 8 * n_blocks, r zero beyond K. */
    const __m512d etav = _mm512_set1_pd(eta);
    const __m512i lo_idx = _mm512_setr_epi64(0, 1, 8, 9, 4, 5, 12, 13);
    const __m512i hi_idx = _mm512_setr_epi64(2, 3, 10, 11, 6, 7, 14, 15);
    Py_ssize_t k, b;
    int64_t i;
    for (k = 0; k < K; k++)
        r[k] = (ndk_d[k] + prior_g[k]) * inv[k];
    for (i = i0; i < i1; i++) {
        const int32_t w = words[i];
        int32_t *nw = nwk + (Py_ssize_t)w * nwk_stride;
        const int32_t k_old = z[i];
        const Py_ssize_t bo = k_old >> 3;
        const unsigned bit = 1u << (k_old & 7);
        int32_t k_new;
        const int64_t w_next = i + 1 < i1 ? words[i + 1] : next_word;
        double total = 0.0;
        __m512d poldv;
        if (w_next >= 0)
            CLDA_PREFETCH_ROW(nwk, nwk_stride, w_next);
        poldv = _mm512_set1_pd((ndk_d[k_old] - 1 + prior_g[k_old]) * invm[k_old]
                               * (nw[k_old] - 1 + eta));
        for (b = 0; b + 3 < n_blocks; b += 4) {
            const __m512d a0 = CLDA_WEIGHTS8(b), a1 = CLDA_WEIGHTS8(b + 1);
            const __m512d a2 = CLDA_WEIGHTS8(b + 2), a3 = CLDA_WEIGHTS8(b + 3);
            __m512d x0, x1, y;
            __m256d t;
            _mm512_storeu_pd(p + 8 * b, a0);
            _mm512_storeu_pd(p + 8 * b + 8, a1);
            _mm512_storeu_pd(p + 8 * b + 16, a2);
            _mm512_storeu_pd(p + 8 * b + 24, a3);
            /* pair sums [a01, a101, a23, a123, ...] of blocks b, b + 1 and b + 2, b + 3 */
            x0 = _mm512_add_pd(_mm512_unpacklo_pd(a0, a1), _mm512_unpackhi_pd(a0, a1));
            x1 = _mm512_add_pd(_mm512_unpacklo_pd(a2, a3), _mm512_unpackhi_pd(a2, a3));
            /* (q0+q1)+(q2+q3) of the four blocks in lanes 0-3, (q4+q5)+(q6+q7) in 4-7 */
            y = _mm512_add_pd(_mm512_permutex2var_pd(x0, lo_idx, x1),
                              _mm512_permutex2var_pd(x0, hi_idx, x1));
            t = _mm256_add_pd(_mm512_castpd512_pd256(y), _mm512_extractf64x4_pd(y, 1));
            {
                const __m128d t01 = _mm256_castpd256_pd128(t), t23 = _mm256_extractf128_pd(t, 1);
                total += _mm_cvtsd_f64(t01);
                cum[b] = total;
                total += _mm_cvtsd_f64(_mm_unpackhi_pd(t01, t01));
                cum[b + 1] = total;
                total += _mm_cvtsd_f64(t23);
                cum[b + 2] = total;
                total += _mm_cvtsd_f64(_mm_unpackhi_pd(t23, t23));
                cum[b + 3] = total;
            }
        }
        for (; b < n_blocks; b++) {
            const __m512d a0 = CLDA_WEIGHTS8(b);
            _mm512_storeu_pd(p + 8 * b, a0);
            total += clda_block_total_avx512(a0);
            cum[b] = total;
        }
        k_new = clda_draw_topic(p, cum, n_blocks, K, u_buf[i - i0] * total);
        if (k_new == k_old)
            continue;
        z[i] = k_new;
        clda_move_count_avx512(k_old, -1, ndk_d, nk, nw, prior_g, veta, inv, invm, r);
        clda_move_count_avx512(k_new, 1, ndk_d, nk, nw, prior_g, veta, inv, invm, r);
    }
}

#undef CLDA_WEIGHTS8

#else  /* no AVX2 kernel on this compiler / architecture */

static int clda_cpu_has_avx2(void) { return 0; }
static int clda_cpu_has_avx512(void) { return 0; }
#define clda_sweep_document_avx2 clda_sweep_document_portable
#define clda_sweep_document_avx512 clda_sweep_document_portable

#endif
#endif  /* SKLEARN_CLDA_GIBBS_KERNEL_H */

/* The z-step of the collapsed Gibbs sweep for one document (sklearn_clda).

   Two implementations of the same arithmetic, chosen at run time by
   ``gibbs_sweep``:

   - ``clda_sweep_document_portable``: plain C, any compiler and CPU, any
     row stride of the word-topic table;
   - ``clda_sweep_document_avx2``: AVX2 intrinsics (x86-64 with GCC or
     Clang, used when the CPU has AVX2), one block of eight topics per
     vector, for word-topic rows padded to a multiple of eight topics with
     zeros.

   The weights are single precision (float32): eight topics per AVX2
   vector instead of four. What can lose precision
   there stays double: the reciprocals of the totals and the
   document-and-topic factor, rounded once to float32.

   Per token ``i`` of the document (word ``w``, topic ``k_old``), the
   unnormalized full conditional with the token left out is, with
   ``f(x)`` the rounding of a double to float32 and float32 arithmetic
   otherwise,

       p[k] = r[k] * (f(nw[k]) + f(eta)),     r[k] = f((ndk[k] + prior[k]) * inv[k]),
       p[k_old] = f((ndk[k_old] - 1 + prior[k_old]) * invm[k_old]) * (f(nw[k_old] - 1) + f(eta)),

   with ``inv[k] = 1 / (nk[k] + V eta)``, ``invm[k] = 1 / (nk[k] - 1 + V
   eta)`` in double. These and ``invp[k] = 1 / (nk[k] + 1 + V eta)`` are
   kept up to date: when a topic's total moves by one, two of its new
   reciprocals are two of its old ones (the same numbers bit for bit), so
   ``r`` of the moved topics is ready without waiting for a division; the
   one division per moved topic fills the third. The topics are grouped in
   blocks of eight, ``p`` zero-padded to ``8 * n_blocks``; each block total
   is ``T[b] = ((q0 + q1) + (q2 + q3)) + ((q4 + q5) + (q6 + q7))``. Running sums come from
   ``scan8``, the prefix sums of eight values ``x`` in three vector steps:

       x[j] += x[j - 1] for j % 4 >= 1;  x[j] += x[j - 2] for j % 4 >= 2;
       x[j] += x[3] for j >= 4           (each step from the previous one)

   The block totals are taken eight blocks at a time (zeros past the last
   block): ``cum[8g:8g + 8] = scan8(T[8g:8g + 8]) + cum[8g - 1]`` (``cum[-1]
   = 0``), and the total is ``cum[8 n_groups - 1]``. With ``u = f(u_buf[i
   - i0]) * total``, the block ``b`` is the number of ``cum[0 .. 8 n_groups -
   1]`` that are ``<= u``, capped at ``n_blocks - 1``, then the topic
   inside it the number of ``scan8(p[8b:8b + 8])[0 .. 6]`` that are ``<= u
   - cum[b - 1]``, capped at ``K - 1``: inversion of ``p / sum(p)``,
   counting instead of searching, so that it takes a compare and a
   population count per eight values. (The uniform is rounded to float32
   before the product, and ``cum[b - 1]`` taken from ``u`` rather than
   added to the block's sums, so that neither a conversion nor an add
   lies between the total and the draw: a token's draw waits on its
   weights, and the next token's weights on its draw.) Counts change only
   when the topic moves. Both implementations evaluate exactly these
   expressions in this order (no FMA contraction: the module is compiled
   with ``-ffp-contract=off``), so they give bit-identical draws.

   Both skip the weights of a token that repeats the one before it (the
   same word and topic) when that one stayed: no count has changed, so
   ``p``, ``cum`` and the total are the same numbers (tokens come grouped
   by word within a document, so a word used several times in a document
   gives such runs).

   The AVX2 version stores into ``r`` and into the count row in the same
   aligned groups of eight lanes that the next token loads, so the loads
   are served from the store buffer instead of waiting for the stores. */
#ifndef SKLEARN_CLDA_GIBBS_KERNEL_H
#define SKLEARN_CLDA_GIBBS_KERNEL_H

#include <stdint.h>

#if defined(__GNUC__) || defined(__clang__)
#define CLDA_PREFETCH(addr) __builtin_prefetch((const void *)(addr), 1, 3)
#define CLDA_POPCOUNT(x) __builtin_popcount(x)
#else
#define CLDA_PREFETCH(addr) ((void)0)
static int clda_popcount(unsigned x)
{
    int n = 0;
    for (; x; x &= x - 1)
        n++;
    return n;
}
#define CLDA_POPCOUNT(x) clda_popcount(x)
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
   scratch arrays cannot be taken to alias ``eta``/``veta``. */
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
    double *invp;            /* 1 / (nk + 1 + V eta), kept current */
    float *r;                /* f((ndk[d] + prior[g]) * inv), per document; 8 * n_blocks */
    float *p;                /* weights of the current token; 8 * n_blocks */
    float *cum;              /* running block sums, 8 * ceil(n_blocks / 8); cum[-1] == 0 */
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
    const float eta = (float)(ctx)->eta;                                        \
    const double veta = (ctx)->veta;                                            \
    double *const inv = (ctx)->inv, *const invm = (ctx)->invm;                  \
    double *const invp = (ctx)->invp;                                           \
    float *const r = (ctx)->r, *const p = (ctx)->p, *const cum = (ctx)->cum

/* Prefetch the count row of the word of the next token: its first and
   last bytes (the whole row when it spans at most two cache lines, as at
   K <= 32 with 64-byte aligned rows; longer rows are left to the hardware
   prefetcher, which measured no slower than prefetching every line). */
#define CLDA_PREFETCH_ROW(nwk, stride, word) do {                              \
        const char *row_ = (const char *)((nwk) + (Py_ssize_t)(word) * (stride)); \
        CLDA_PREFETCH(row_);                                                    \
        CLDA_PREFETCH(row_ + (stride) * 4 - 1);                                 \
    } while (0)

/* The document-and-topic factor r[k] = f((ndk[k] + prior[k]) * inv[k]). */
#define CLDA_R(ndk_d, prior_g, inv, k) ((float)(((ndk_d)[k] + (prior_g)[k]) * (inv)[k]))

/* p[k_old]: the weight of the token's own topic with the token left out. */
#define CLDA_P_OLD(ndk_d, prior_g, invm, nw, eta, k)                            \
    ((float)(((ndk_d)[k] - 1 + (prior_g)[k]) * (invm)[k]) * ((float)((nw)[k] - 1) + (eta)))

/* inv, invm and invp of every topic, from the totals nk. */
static inline void clda_set_reciprocals(const int32_t *nk, Py_ssize_t K, double veta,
                                        double *inv, double *invm, double *invp)
{
    Py_ssize_t k;
    for (k = 0; k < K; k++) {
        inv[k] = 1.0 / (nk[k] + veta);
        invm[k] = 1.0 / (nk[k] - 1 + veta);
        invp[k] = 1.0 / (nk[k] + 1 + veta);
    }
}

/* Add delta (+1 or -1) to the total of topic k and shift its cached
   reciprocals: after a -1, inv is the old invm and invp the old inv; after
   a +1, inv is the old invp and invm the old inv; one division fills the
   third. */
static inline void clda_shift_reciprocals(int32_t k, int32_t delta, int32_t *nk, double veta,
                                          double *inv, double *invm, double *invp)
{
    const double old = inv[k];
    nk[k] += delta;
    if (delta < 0) {
        inv[k] = invm[k];
        invp[k] = old;
        invm[k] = 1.0 / (nk[k] - 1 + veta);
    } else {
        inv[k] = invp[k];
        invm[k] = old;
        invp[k] = 1.0 / (nk[k] + 1 + veta);
    }
}

/* Add delta (+1 or -1) to the counts of topic k and refresh its cached
   reciprocals and r[k]. */
static inline void clda_move_count(
    int32_t k, int32_t delta, int32_t *ndk_d, int32_t *nk, int32_t *nw,
    const double *prior_g, double veta, double *inv, double *invm, double *invp, float *r)
{
    ndk_d[k] += delta;
    nw[k] += delta;
    clda_shift_reciprocals(k, delta, nk, veta, inv, invm, invp);
    r[k] = CLDA_R(ndk_d, prior_g, inv, k);
}

/* out = scan8(x) + base (see the top of this file). */
static inline void clda_scan8(const float *x, float base, float *out)
{
    float s1[8], s2[8];
    int j;
    for (j = 0; j < 8; j++)
        s1[j] = (j & 3) >= 1 ? x[j] + x[j - 1] : x[j];
    for (j = 0; j < 8; j++)
        s2[j] = (j & 3) >= 2 ? s1[j] + s1[j - 2] : s1[j];
    for (j = 0; j < 8; j++)
        out[j] = (j >= 4 ? s2[j] + s2[3] : s2[j]) + base;
}

/* The total of one block of eight weights. */
static inline float clda_block_total(const float *q)
{
    return ((q[0] + q[1]) + (q[2] + q[3])) + ((q[4] + q[5]) + (q[6] + q[7]));
}

static void clda_sweep_document_portable(
    const clda_sweep_ctx *ctx, int64_t i0, int64_t i1, int32_t *ndk_d,
    const double *prior_g, const double *u_buf, int64_t next_word)
{
    CLDA_UNPACK_CTX(ctx);
    const Py_ssize_t n_groups = (n_blocks + 7) / 8;
    Py_ssize_t k, b, g;
    int64_t i;
    int32_t last_w = -1, last_k = -1;  /* the token before, if it stayed */
    for (k = 0; k < K; k++)
        r[k] = CLDA_R(ndk_d, prior_g, inv, k);
    for (k = K; k < 8 * n_blocks; k++)
        p[k] = 0.0f;
    for (i = i0; i < i1; i++) {
        const int32_t w = words[i];
        int32_t *nw = nwk + (Py_ssize_t)w * nwk_stride;
        const int32_t k_old = z[i];
        int32_t k_new;
        const int64_t w_next = i + 1 < i1 ? words[i + 1] : next_word;
        float totals[8], run[8], u;
        int count = 0;
        if (w_next >= 0)
            CLDA_PREFETCH_ROW(nwk, nwk_stride, w_next);
        if (w != last_w || k_old != last_k) {  /* else p and cum are the last token's */
            for (k = 0; k < K; k++)
                p[k] = r[k] * ((float)nw[k] + eta);
            p[k_old] = CLDA_P_OLD(ndk_d, prior_g, invm, nw, eta, k_old);
            for (g = 0; g < n_groups; g++) {
                for (b = 0; b < 8; b++)
                    totals[b] =
                        8 * g + b < n_blocks ? clda_block_total(p + 8 * (8 * g + b)) : 0.0f;
                clda_scan8(totals, cum[8 * g - 1], cum + 8 * g);
            }
        }
        u = (float)u_buf[i - i0] * cum[8 * n_groups - 1];
        for (k = 0; k < 8 * n_groups; k++)
            count += cum[k] <= u;
        b = count < n_blocks - 1 ? count : n_blocks - 1;
        clda_scan8(p + 8 * b, 0.0f, run);
        u -= cum[b - 1];
        count = 0;
        for (k = 0; k < 7; k++)
            count += run[k] <= u;
        k = 8 * b + count;
        k_new = (int32_t)(k < K - 1 ? k : K - 1);
        last_w = k_new == k_old ? w : -1;
        last_k = k_old;
        if (k_new == k_old)
            continue;
        z[i] = k_new;
        clda_move_count(k_old, -1, ndk_d, nk, nw, prior_g, veta, inv, invm, invp, r);
        clda_move_count(k_new, 1, ndk_d, nk, nw, prior_g, veta, inv, invm, invp, r);
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
#else
static int clda_cpu_has_avx2(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") ? 1 : 0;
}
#endif

/* scan8(x) (see the top of this file): two shifts inside each 128-bit
   half, then the low half's last sum added to the high half. */
__attribute__((target("avx2")))
static inline __m256 clda_scan8_avx2(__m256 x)
{
    __m256 last;
    x = _mm256_add_ps(x, _mm256_castsi256_ps(_mm256_slli_si256(_mm256_castps_si256(x), 4)));
    x = _mm256_add_ps(x, _mm256_castsi256_ps(_mm256_slli_si256(_mm256_castps_si256(x), 8)));
    last = _mm256_permute_ps(x, 0xFF);                               /* x[3] / x[7] per half */
    return _mm256_add_ps(x, _mm256_permute2f128_ps(last, last, 0x08)); /* [0, x[3]] */
}

/* The totals of eight blocks of weights, in lane order. */
__attribute__((target("avx2")))
static inline __m256 clda_block_totals_avx2(const __m256 *a)
{
    const __m256 h0 = _mm256_hadd_ps(_mm256_hadd_ps(a[0], a[1]), _mm256_hadd_ps(a[2], a[3]));
    const __m256 h1 = _mm256_hadd_ps(_mm256_hadd_ps(a[4], a[5]), _mm256_hadd_ps(a[6], a[7]));
    /* low halves: (q0+q1)+(q2+q3) of each block; high halves: (q4+q5)+(q6+q7) */
    return _mm256_add_ps(_mm256_permute2f128_ps(h0, h1, 0x20),
                         _mm256_permute2f128_ps(h0, h1, 0x31));
}

/* How many of the eight values are <= u (u in every lane). */
__attribute__((target("avx2")))
static inline int clda_count_le_avx2(__m256 x, __m256 uv, int lanes)
{
    return CLDA_POPCOUNT(_mm256_movemask_ps(_mm256_cmp_ps(x, uv, _CMP_LE_OQ)) & lanes);
}

/* Add delta (+1 or -1) to the counts of topic k and refresh its cached
   reciprocals and r[k]; the count row and r are written as the aligned
   group of eight lanes that holds k, the unit the next token loads. */
__attribute__((target("avx2")))
static inline void clda_move_count_avx2(
    int32_t k, int32_t delta, int32_t *ndk_d, int32_t *nk, int32_t *nw,
    const double *prior_g, double veta, double *inv, double *invm, double *invp, float *r)
{
    __m256i *cg = (__m256i *)(nw + (k & ~7));
    float *rg = r + (k & ~7);
    const __m256i sel = _mm256_cmpeq_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
                                           _mm256_set1_epi32(k & 7));
    ndk_d[k] += delta;
    _mm256_storeu_si256(cg, _mm256_add_epi32(_mm256_loadu_si256(cg),
                                             _mm256_and_si256(sel, _mm256_set1_epi32(delta))));
    clda_shift_reciprocals(k, delta, nk, veta, inv, invm, invp);
    _mm256_store_ps(rg, _mm256_blendv_ps(_mm256_load_ps(rg),
                                         _mm256_set1_ps(CLDA_R(ndk_d, prior_g, inv, k)),
                                         _mm256_castsi256_ps(sel)));
}

/* The weights of block b (topics 8b .. 8b + 7), as for a token of
   another topic. */
__attribute__((target("avx2")))
static inline __m256 clda_weights8_avx2(const float *r, const int32_t *nw, Py_ssize_t b,
                                        __m256 etav)
{
    return _mm256_mul_ps(
        _mm256_load_ps(r + 8 * b),
        _mm256_add_ps(_mm256_cvtepi32_ps(_mm256_loadu_si256((const __m256i *)(nw + 8 * b))), etav));
}

/* x with the token's own topic's lane (8b + lane == k_old, i.e. 8b ==
   kov) replaced by poldv. */
__attribute__((target("avx2")))
static inline __m256 clda_own_lane_avx2(__m256 x, Py_ssize_t b, __m256 poldv, __m256i kov)
{
    return _mm256_blendv_ps(x, poldv, _mm256_castsi256_ps(
        _mm256_cmpeq_epi32(_mm256_set1_epi32(8 * (int32_t)b), kov)));
}

/* The total of one block of eight weights, in every lane: the same sums
   in the same order as clda_block_totals_avx2's lane for it. */
__attribute__((target("avx2")))
static inline __m256 clda_block_total_avx2(__m256 x)
{
    __m256 h = _mm256_hadd_ps(x, x);
    h = _mm256_hadd_ps(h, h);  /* (q0+q1)+(q2+q3) low, (q4+q5)+(q6+q7) high */
    return _mm256_add_ps(_mm256_permute2f128_ps(h, h, 0x00), _mm256_permute2f128_ps(h, h, 0x11));
}

/* The weights of one token into p and the running block sums into cum,
   eight blocks at a time; returns the total in every lane. Every block is
   stored and summed as for a token of another topic; only the token's own
   block (b_old) has one weight that differs (poldv), so its total is made
   once from its blended weights and put into its lane of the block totals
   (p keeps its unblended weights: the draw blends them again). */
__attribute__((target("avx2")))
static inline __m256 clda_running_sums_avx2(const float *r, const int32_t *nw, float *p, float *cum,
                                           Py_ssize_t n_blocks, __m256 etav, __m256 poldv,
                                           __m256i kov, int32_t b_old)
{
    const __m256 zero = _mm256_setzero_ps();
    const __m256 own_total = clda_block_total_avx2(
        clda_own_lane_avx2(clda_weights8_avx2(r, nw, b_old, etav), b_old, poldv, kov));
    const __m256i own_lane = _mm256_sub_epi32(
        _mm256_set1_epi32(b_old), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    __m256 carry = zero, a[8];
    Py_ssize_t g, b;
    for (g = 0; 8 * g < n_blocks; g++) {
        __m256 run, totals;
        for (b = 0; b < 8; b++) {
            if (8 * g + b < n_blocks) {
                a[b] = clda_weights8_avx2(r, nw, 8 * g + b, etav);
                _mm256_store_ps(p + 8 * (8 * g + b), a[b]);
            } else {
                a[b] = zero;
            }
        }
        totals = _mm256_blendv_ps(clda_block_totals_avx2(a), own_total, _mm256_castsi256_ps(
            _mm256_cmpeq_epi32(_mm256_set1_epi32(8 * (int32_t)g), own_lane)));
        run = _mm256_add_ps(clda_scan8_avx2(totals), carry);
        _mm256_store_ps(cum + 8 * g, run);
        carry = _mm256_permute_ps(_mm256_permute2f128_ps(run, run, 0x11), 0xFF);
    }
    return carry;
}

__attribute__((target("avx2")))
static void clda_sweep_document_avx2(
    const clda_sweep_ctx *ctx, int64_t i0, int64_t i1, int32_t *ndk_d,
    const double *prior_g, const double *u_buf, int64_t next_word)
{
    CLDA_UNPACK_CTX(ctx);
    /* Requires: nwk_stride == 8 * n_blocks (rows zero-padded), r and p of
       length 8 * n_blocks, r and cum 32-byte aligned, r zero beyond K. */
    const __m256 etav = _mm256_set1_ps(eta);
    const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const Py_ssize_t n_groups = (n_blocks + 7) / 8;
    Py_ssize_t k, b, g;
    int64_t i;
    int32_t last_w = -1, last_k = -1;  /* the token before, if it stayed */
    __m256 totalv = _mm256_setzero_ps(), poldv = totalv;
    __m256i kov = _mm256_setzero_si256();
    for (k = 0; k < K; k++)
        r[k] = CLDA_R(ndk_d, prior_g, inv, k);
    for (i = i0; i < i1; i++) {
        const int32_t w = words[i];
        int32_t *nw = nwk + (Py_ssize_t)w * nwk_stride;
        const int32_t k_old = z[i];
        int32_t k_new;
        const int64_t w_next = i + 1 < i1 ? words[i + 1] : next_word;
        __m256 uv;
        float u;
        int count = 0;
        if (w_next >= 0)
            CLDA_PREFETCH_ROW(nwk, nwk_stride, w_next);
        /* A repeat of the token before (same word and topic; it stayed, so
           no count changed) has its weights: p, cum, total, poldv and kov
           are kept. */
        if (w != last_w || k_old != last_k) {
            poldv = _mm256_set1_ps(CLDA_P_OLD(ndk_d, prior_g, invm, nw, eta, k_old));
            kov = _mm256_sub_epi32(_mm256_set1_epi32(k_old), lanes);
            totalv = clda_running_sums_avx2(r, nw, p, cum, n_blocks, etav, poldv, kov,
                                            k_old >> 3);
        }
        uv = _mm256_mul_ps(_mm256_set1_ps((float)u_buf[i - i0]), totalv);
        u = _mm256_cvtss_f32(uv);
        for (g = 0; g < n_groups; g++)
            count += clda_count_le_avx2(_mm256_load_ps(cum + 8 * g), uv, 0xFF);
        b = count < n_blocks - 1 ? count : n_blocks - 1;
        k = 8 * b + clda_count_le_avx2(
            clda_scan8_avx2(clda_own_lane_avx2(_mm256_load_ps(p + 8 * b), b, poldv, kov)),
            _mm256_set1_ps(u - cum[b - 1]), 0x7F);
        k_new = (int32_t)(k < K - 1 ? k : K - 1);
        last_w = k_new == k_old ? w : -1;
        last_k = k_old;
        if (k_new == k_old)
            continue;
        z[i] = k_new;
        clda_move_count_avx2(k_old, -1, ndk_d, nk, nw, prior_g, veta, inv, invm, invp, r);
        clda_move_count_avx2(k_new, 1, ndk_d, nk, nw, prior_g, veta, inv, invm, invp, r);
    }
}

#else  /* no AVX2 kernel on this compiler / architecture */

static int clda_cpu_has_avx2(void) { return 0; }
#define clda_sweep_document_avx2 clda_sweep_document_portable

#endif
#endif  /* SKLEARN_CLDA_GIBBS_KERNEL_H */

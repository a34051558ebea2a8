/* The z-step of the sparse Metropolis-Hastings sampler for one document
   (sklearn_clda): ``sampler="sparse"``.

   The same collapsed conditional as the dense kernel and the O(1) MH
   kernel of _mh_kernel.h,

       p[k] = (ndk[k] + prior[k]) * (nw[k] + eta) * inv[k],
       inv[k] = 1 / (nk[k] + V eta),

   with the token left out of the counts, left invariant by ``mh_steps``
   Metropolis-Hastings steps from one proposal that is exact over the
   topics present in the document (AliasLDA-like; Li et al. 2014) and
   approximates the prior part by a word proposal:

       q(t | s) proportional to (nw[t] + eta) * ndk[t] * inv[t]
                                + c * (nw[t] + [t == s] + eta),

   s the token's current topic, c > 0 a constant of the collection fixed
   for the sweep (``sparse_weights``: the mean of prior[k] * inv[k] at the
   sweep's start, so that c * (nw[k] + eta) stands in for
   prior[k] * (nw[k] + eta) * inv[k]). Its first part has mass
   A = sum over the document's topics (those with ndk > 0) of
   (nw[k] + eta) rd[k], rd[k] = ndk[k] inv[k], drawn by running sums over
   the document's topic list (clda_smh_running_sums); its second part, of
   mass c (n_w + K eta) (n_w the word's tokens, the token itself
   included), is the word proposal of _mh_kernel.h: the topic of a
   uniformly chosen token of the word (the token itself included; read
   from zw, the topics in word order, kept current) or, with probability
   K eta / (n_w + K eta), a uniform topic. Neither part depends on s except through the token's own
   topic, and the normaliser A + c (n_w + K eta) does not depend on s. For
   t != s the factors (nw + eta) cancel in the Hastings ratio:

       ratio = (ndk[t] + prior[t]) inv[t] (ndk[s] inv[s] + c)
               / ((ndk[s] + prior[s]) inv[s] (ndk[t] inv[t] + c)),

   accepted with probability min(1, ratio) (t == s is always accepted and
   changes nothing). The left-out counts do not change during a token's
   steps, so the running sums are built once per token: O(K_d) per token,
   K_d the document's distinct topics, independent of K.

   The document's topic list (topics with ndk > 0, in increasing order, so
   that the word row is read in address order; ``mark`` flags the listed
   topics) is built at the start of each document (or piece of one) from
   its tokens' topics, kept sorted by removing a topic when its count
   reaches 0 and inserting it when the count leaves 0, and cleared at the
   end (O(document length + K_d^2), not O(K)).

   Each step uses three uniforms (u0: the part and the list topic, u1: the
   word part's token or uniform topic, u2: the acceptance), drawn whether
   used or not, as in _mh_kernel.h. The expressions below are evaluated
   exactly in this order (no FMA contraction: the module is compiled with
   -ffp-contract=off), as in the NumPy reference of ``sparse_mh_sweep``. */
#ifndef SKLEARN_CLDA_SPARSE_MH_KERNEL_H
#define SKLEARN_CLDA_SPARSE_MH_KERNEL_H

#include <stdint.h>

#include "_mh_kernel.h"

/* The working arrays of one thread (each of K entries). */
typedef struct {
    double *inv;       /* 1 / (nk + V eta), kept current */
    int32_t *mark;     /* 1 for a listed topic, else -1 */
    int32_t *topics;   /* the document's topics with ndk > 0 */
    double *rd;        /* ndk[k] * inv[k] of the listed topics k, kept current */
    double *cum;       /* running sums of the list part, per list position */
    int32_t n_topics;  /* length of the list */
} clda_smh_scratch;

/* inv[k] = 1 / (nk[k] + V eta) for all k, from the context's totals. */
static void clda_smh_fill_inv(const clda_mh_ctx *ctx, clda_smh_scratch *sc)
{
    Py_ssize_t k;
    for (k = 0; k < ctx->K; k++)
        sc->inv[k] = 1.0 / (ctx->nk[k] + ctx->veta);
}

/* The first list position whose topic is at least k (the list is sorted). */
static inline int32_t clda_smh_list_find(const clda_smh_scratch *sc, int32_t k)
{
    int32_t lo = 0, hi = sc->n_topics;
    while (lo < hi) {
        const int32_t mid = lo + (hi - lo) / 2;
        if (sc->topics[mid] < k)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Insert topic k (absent) in sorted place. */
static inline void clda_smh_list_add(clda_smh_scratch *sc, int32_t k)
{
    int32_t m;
    for (m = sc->n_topics; m > 0 && sc->topics[m - 1] > k; m--)
        sc->topics[m] = sc->topics[m - 1];
    sc->topics[m] = k;
    sc->n_topics += 1;
    sc->mark[k] = 1;
}

/* Remove topic k (present), keeping the order. */
static inline void clda_smh_list_remove(clda_smh_scratch *sc, int32_t k)
{
    int32_t m;
    sc->n_topics -= 1;
    for (m = clda_smh_list_find(sc, k); m < sc->n_topics; m++)
        sc->topics[m] = sc->topics[m + 1];
    sc->mark[k] = -1;
}

/* The sorted list of the topics of the document's tokens (doc_len tokens
   from doc_i0, or doc_tok[0 .. doc_len - 1] when doc_tok is not NULL).
   mark is all -1 on entry. */
static void clda_smh_list_build(clda_smh_scratch *sc, const int32_t *z,
                                const int64_t *doc_tok, int64_t doc_i0, int64_t doc_len)
{
    int64_t m;
    sc->n_topics = 0;
    for (m = 0; m < doc_len; m++) {
        const int32_t k = z[doc_tok != NULL ? doc_tok[m] : doc_i0 + m];
        if (sc->mark[k] < 0)
            clda_smh_list_add(sc, k);
    }
}

/* mark back to all -1 (touching only the listed topics). */
static void clda_smh_list_clear(clda_smh_scratch *sc)
{
    int32_t m;
    for (m = 0; m < sc->n_topics; m++)
        sc->mark[sc->topics[m]] = -1;
    sc->n_topics = 0;
}

/* The number of list positions whose running sum is at most x (x <
   cum[n - 1]): the first position whose sum exceeds x,
   numpy.searchsorted(cum[:n], x, side="right") (the sums do not
   decrease). Branch-free. */
static inline int32_t clda_smh_search(const double *cum, int32_t n, double x)
{
    int32_t m, count = 0;
    for (m = 0; m < n; m++)
        count += cum[m] <= x;
    return count;
}

/* The running sums of the list part, cum[m] = the sum of
   p[k] = (nw[k] + eta) * rd[k] over the first m + 1 listed topics k,
   added in blocks of four so that the additions do not form one chain
   of length n: with the list cut into blocks of four topics (the last one
   shorter), s_r the sum of the first r + 1 terms of a block added left to
   right, and off the sum of the earlier blocks' totals (their s_3, added
   left to right from 0.0), cum at place r of the block is off + s_r.
   Returns A = cum[n - 1] (0 for an empty list). NumPy equivalent (P the
   terms padded with zeros to a multiple of 4)::

       S = np.cumsum(P.reshape(-1, 4), axis=1)
       off = np.r_[0.0, np.cumsum(S[:, 3])[:-1]]
       cum = (off[:, None] + S).ravel()[:n]
*/
static inline double clda_smh_running_sums(clda_smh_scratch *sc, const int32_t *nw, double eta)
{
    const int32_t *const topics = sc->topics;
    const double *const rd = sc->rd;
    double *const cum = sc->cum;
    const int32_t n = sc->n_topics;
    double off = 0.0, s0, s1, s2, s3;
    int32_t m;
    for (m = 0; m < n; m++) {
        const int32_t k = topics[m];
        cum[m] = (nw[k] + eta) * rd[k];
    }
    for (m = 0; m + 4 <= n; m += 4) {
        s0 = cum[m];
        s1 = s0 + cum[m + 1];
        s2 = s1 + cum[m + 2];
        s3 = s2 + cum[m + 3];
        cum[m] = off + s0;
        cum[m + 1] = off + s1;
        cum[m + 2] = off + s2;
        cum[m + 3] = off + s3;
        off = off + s3;
    }
    if (m < n) {
        s0 = cum[m];
        cum[m] = off + s0;
        if (m + 1 < n) {
            s0 = s0 + cum[m + 1];
            cum[m + 1] = off + s0;
            if (m + 2 < n) {
                s0 = s0 + cum[m + 2];
                cum[m + 2] = off + s0;
            }
        }
    }
    return n > 0 ? cum[n - 1] : 0.0;
}

/* Memory hints for token i (no effect on the result): its word row's
   entries of the listed topics, and the topics of the word tokens that
   its first two steps' word part would pick. The sweep is latency-bound
   on these random reads otherwise. */
static inline void clda_smh_prefetch(const clda_mh_ctx *ctx, const clda_smh_scratch *sc,
                                     int64_t i, const double *u)
{
    const int32_t w = ctx->words[i];
    const int32_t *const nw = ctx->nwk + (Py_ssize_t)w * ctx->nwk_stride;
    const int32_t *const zw = ctx->zw + ctx->word_ptr[w];
    const int64_t n_w = ctx->word_ptr[w + 1] - ctx->word_ptr[w];
    const double word_mass = (double)n_w + ctx->keta;
    int32_t m, j;
    for (m = 0; m < sc->n_topics; m++)
        __builtin_prefetch(nw + sc->topics[m]);
    for (j = 0; j < ctx->mh_steps && j < 2; j++) {
        const double y = u[3 * j + 1] * word_mass;
        if (y < (double)n_w)
            __builtin_prefetch(zw + (int64_t)y);
    }
}

/* The MH steps of the tokens i0:i1 of one document, whose counts are
   ndk_d, with 3 * mh_steps uniforms per token in u_buf (token order);
   prior and c are its collection's. The document's tokens (for its topic
   list) are as in clda_mh_sweep_document. sc->inv is current on entry and
   on exit; sc->mark is all -1 on entry and on exit. */
static void clda_smh_sweep_document(
    const clda_mh_ctx *ctx, clda_smh_scratch *sc, int64_t i0, int64_t i1,
    int32_t *ndk_d, const double *prior, double c, const double *u_buf,
    const int64_t *doc_tok, int64_t doc_i0, int64_t doc_len)
{
    const Py_ssize_t K = ctx->K;
    const int32_t mh_steps = ctx->mh_steps;
    int32_t *const z = ctx->z;
    int32_t *const nk = ctx->nk;
    const double eta = ctx->eta, veta = ctx->veta, keta = ctx->keta;
    double *const inv = sc->inv;
    int64_t i;
    int32_t j;
    clda_smh_list_build(sc, z, doc_tok, doc_i0, doc_len);
    for (j = 0; j < sc->n_topics; j++) {
        const int32_t k = sc->topics[j];
        sc->rd[k] = ndk_d[k] * inv[k];
    }
    for (i = i0; i < i1; i++) {
        const int32_t w = ctx->words[i];
        int32_t *const nw = ctx->nwk + (Py_ssize_t)w * ctx->nwk_stride;
        const int32_t *const zw = ctx->zw + ctx->word_ptr[w];
        const int64_t n_w = ctx->word_ptr[w + 1] - ctx->word_ptr[w];
        const double word_mass = (double)n_w + keta;
        const double *u = u_buf + (i - i0) * 3 * (int64_t)mh_steps;
        double A, total, ps, qs;
        int32_t s = z[i];
        if (i + 2 < i1)
            clda_smh_prefetch(ctx, sc, i + 2, u + 6 * (int64_t)mh_steps);
        ndk_d[s] -= 1;
        nw[s] -= 1;
        nk[s] -= 1;
        inv[s] = 1.0 / (nk[s] + veta);
        sc->rd[s] = ndk_d[s] * inv[s];
        if (ndk_d[s] == 0)
            clda_smh_list_remove(sc, s);
        A = clda_smh_running_sums(sc, nw, eta);
        total = A + c * word_mass;
        ps = (ndk_d[s] + prior[s]) * inv[s];
        qs = sc->rd[s] + c;
        for (j = 0; j < mh_steps; j++, u += 3) {
            const double x = u[0] * total;
            double pt, qt;
            int32_t t;
            if (x < A) {
                t = sc->topics[clda_smh_search(sc->cum, sc->n_topics, x)];
            } else {
                const double y = u[1] * word_mass;
                if (y < (double)n_w)
                    t = zw[(int64_t)y];  /* z[word_tokens[word_ptr[w] + y]] */
                else
                    t = (int32_t)clda_mh_floor_index((y - (double)n_w) / eta, K);
            }
            if (t == s)
                continue;
            pt = (ndk_d[t] + prior[t]) * inv[t];
            qt = ndk_d[t] * inv[t] + c;
            if (u[2] * (ps * qt) < pt * qs) {
                s = t;
                z[i] = s;
                ctx->zw[ctx->word_pos[i]] = s;
                ps = pt;
                qs = qt;
            }
        }
        if (ndk_d[s] == 0)
            clda_smh_list_add(sc, s);
        ndk_d[s] += 1;
        nw[s] += 1;
        nk[s] += 1;
        inv[s] = 1.0 / (nk[s] + veta);
        sc->rd[s] = ndk_d[s] * inv[s];
    }
    clda_smh_list_clear(sc);
}

#endif  /* SKLEARN_CLDA_SPARSE_MH_KERNEL_H */

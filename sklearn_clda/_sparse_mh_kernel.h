/* The z-step of the sparse Metropolis-Hastings sampler (sklearn_clda):
   ``sampler="sparse"``, tokens taken word by word.

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
   A = sum over the document's topics (its topic list) of
   (nw[k] + eta) ndk[k] inv[k], drawn by running sums over the list
   (clda_smw_leave_out); its second part, of mass c (n_w + K eta) (n_w
   the word's tokens, the token itself included), is the word proposal of
   _mh_kernel.h: the topic of a uniformly chosen token of the word (the
   token itself included, at its current topic; read from zw, the topics
   in word order, kept current) or, with probability
   K eta / (n_w + K eta), a uniform topic. Neither part depends on s except
   through the token's own topic, and the normaliser A + c (n_w + K eta)
   does not depend on s. For t != s the factors (nw + eta) cancel in the
   Hastings ratio:

       ratio = (ndk[t] + prior[t]) inv[t] (ndk[s] inv[s] + c)
               / ((ndk[s] + prior[s]) inv[s] (ndk[t] inv[t] + c)),

   accepted with probability min(1, ratio) (t == s is always accepted and
   changes nothing). The left-out counts do not change during a token's
   steps, so the running sums are built once per token: O(K_d) per token,
   K_d the document's distinct topics, independent of K. A token of the
   same document, word and topic as the one before, when that one stayed,
   finds the same counts and so reuses its sums (clda_smw_enter).

   Word-major order: the tokens are taken grouped by word (the word order
   of ``word_index``: zw's order), so that the word's row of the
   word-topic table and inv (K entries each) stay in cache over all its
   tokens, and the only memory a token reads at random is its document's
   topic list, a short run of consecutive entries. Each document's list
   (its topics and their counts) sits in an array of n_tokens entries at
   the document's own token offsets (capacity: its length), one uint32 per
   listed topic, count << shift | topic (shift: the bits of K - 1, at least
   1; so a document may have up to 2^(32 - shift) - 1 tokens, which the
   Python side checks): half the bytes of two int32 arrays, and the list
   is what a token reads at random. Built from z
   at the start of the sweep (clda_smw_build_lists: topics in the order of
   their first token) and updated on every move: a token's own topic s0
   keeps its place during its steps (with count 0 if it was its only
   token: mass 0, never drawn from the list part); when the token moves to
   s, s0 is removed if its count is 0 (the list's last entry takes its
   place), then s is appended if it is not listed, and its count goes up.
   Without a word-topic table (ctx->nwk NULL, the estimators' case) the
   word's row of counts is made from its tokens' topics in zw when the
   sweep reaches the word (clda_smw_word_counts: O(n_w), into a K-sized
   row of the thread's scratch, cleared by the same tokens afterwards), and
   kept current by the moves: the same counts as the table's, so the same
   chain, with no V x K table to hold or to read at random.
   The topics are kept in word order only (zw; the caller writes them
   back into z afterwards: one pass, not a random write per move), and
   the dense D x K counts are not touched while sampling (a random write
   per moved token into a table too large for the cache):
   clda_smw_store_lists writes the lists' counts back at the end, a
   document's row at a time, after setting to 0 the entries of the topics
   its tokens had when the lists were built (from z, not yet rewritten),
   which were the row's only nonzero entries. Zeroing them there rather
   than when the lists are built brings each cache line of the row in
   once for both writes.

   Each step uses two uniforms, drawn whether used or not: u0 picks the
   part and, in the list part, the topic (x = u0 (A + c (n_w + K eta)),
   the list position whose running sum first exceeds x when x < A); in
   the word part, y = (x - A) / c, uniform on [0, n_w + K eta), picks the
   token floor(y) of the word when y < n_w, else the topic
   floor((y - n_w) / eta) (at most K - 1); u1 is the acceptance's. The
   expressions below are evaluated exactly in this order (no FMA contraction: the module is compiled with
   -ffp-contract=off), as in the NumPy reference of ``sparse_mh_sweep``. */
#ifndef SKLEARN_CLDA_SPARSE_MH_KERNEL_H
#define SKLEARN_CLDA_SPARSE_MH_KERNEL_H

#include <stdint.h>

#include "_mh_kernel.h"

#if defined(__SSE2__) && defined(__GNUC__)
#include <emmintrin.h>
#endif

/* The documents' side of a word-major sweep. */
typedef struct {
    uint32_t *entries;          /* document d's list at off[d] .. off[d] + n[d] - 1:
                                   count << shift | topic */
    int32_t shift;              /* the bits of a topic */
    int32_t *n;                 /* list length of each document */
    const int64_t *off;         /* doc_ptr: d's list starts at off[d],
                                   capacity off[d + 1] - off[d] */
    const int32_t *wword;       /* word of each word position j (zw's order) */
    const int32_t *wdoc;        /* document of each word position j */
    int32_t *ndk;               /* dense document-topic counts, D rows of ndk_stride
                                   (NULL where the lists are only built) */
    Py_ssize_t ndk_stride;
    const int32_t *doc_group;   /* collection of each document */
    const double *prior;        /* collections' prior rows, G x K */
    const double *c;            /* each collection's word-part constant */
} clda_smw_docs;

/* The working arrays of one thread (each of K entries). */
typedef struct {
    double *inv;                /* 1 / (nk + V eta), kept current */
    double *cum;                /* running sums of the list part, per list position */
    int32_t *mark;              /* list building: a topic's list position, else -1 */
    double *wr;                 /* (nw[k] + eta) * inv[k] of word wr_word, kept current */
    int32_t wr_word;            /* the word of wr, or -1 */
    int32_t *row;               /* without a word-topic table: word row_word's counts by
                                   topic, kept current; all 0 when row_word is -1 */
    int32_t row_word;
} clda_smw_scratch;

/* Words with at least K / CLDA_SMW_ROW_FACTOR tokens get their row of
   (nw[k] + eta) * inv[k] computed once (O(K)) for all their tokens; the
   others compute the entries they read (the same values). */
#define CLDA_SMW_ROW_FACTOR 1024

/* The topic and the count of a list entry. */
static inline int32_t clda_smw_topic(uint32_t e, int32_t shift)
{
    return (int32_t)(e & ((1u << shift) - 1u));
}

static inline int32_t clda_smw_count_of(uint32_t e, int32_t shift)
{
    return (int32_t)(e >> shift);
}

/* inv[k] = 1 / (nk[k] + V eta) for all k, from the context's totals. */
static void clda_smw_fill_inv(const clda_mh_ctx *ctx, clda_smw_scratch *sc)
{
    Py_ssize_t k;
    for (k = 0; k < ctx->K; k++)
        sc->inv[k] = 1.0 / (ctx->nk[k] + ctx->veta);
    sc->wr_word = -1;
}

/* Back to all zeros: sc->row's entries are the counts of the current
   topics of word row_word's tokens (each call that changes them keeps the
   row current), so clearing those entries clears it. */
static void clda_smw_release_row(const clda_mh_ctx *ctx, clda_smw_scratch *sc)
{
    int64_t j;
    if (sc->row_word >= 0)
        for (j = ctx->word_ptr[sc->row_word]; j < ctx->word_ptr[sc->row_word + 1]; j++)
            sc->row[ctx->zw[j]] = 0;
    sc->row_word = -1;
}

/* The row (nw[k] + eta) * inv[k] of word w (its counts nw) into sc->wr,
   when the word has enough tokens to pay for it (else wr_word is -1). */
static void clda_smw_word_row(const clda_mh_ctx *ctx, clda_smw_scratch *sc, int32_t w,
                              const int32_t *nw, int64_t n_w)
{
    Py_ssize_t k;
    if (n_w * CLDA_SMW_ROW_FACTOR < ctx->K) {
        sc->wr_word = -1;
        return;
    }
    for (k = 0; k < ctx->K; k++)
        sc->wr[k] = (nw[k] + ctx->eta) * sc->inv[k];
    sc->wr_word = w;
}

/* Without a word-topic table (ctx->nwk NULL): the counts by topic of word
   w, from its tokens' topics in zw (all of them: the word's tokens
   outside the caller's cell belong to no other thread meanwhile), into
   sc->row, which held word sc->row_word's (cleared first). O(n_w) per
   word, in cache, against a random read per token of a V x K table. */
static int32_t *clda_smw_word_counts(const clda_mh_ctx *ctx, clda_smw_scratch *sc, int32_t w)
{
    int64_t j;
    if (sc->row_word != w) {
        clda_smw_release_row(ctx, sc);
        for (j = ctx->word_ptr[w]; j < ctx->word_ptr[w + 1]; j++)
            sc->row[ctx->zw[j]] += 1;
        sc->row_word = w;
    }
    return sc->row;
}

/* The topic lists of documents d0:d1 from their tokens' topics: document
   d's tokens are off[d]:off[d + 1], or doc_tok[off[d] .. off[d + 1] - 1]
   when doc_tok is not NULL; topics in the order of their first token.
   (The counts are in the lists until clda_smw_store_lists; the dense rows
   are left as they are until then.) sc->mark is all -1 on entry and on
   exit. */
static void clda_smw_build_lists(clda_smw_docs *dl, clda_smw_scratch *sc, const int32_t *z,
                                 const int32_t *doc_tok, int64_t d0, int64_t d1)
{
    int32_t *const mark = sc->mark;
    const uint32_t one = 1u << dl->shift;
    int64_t d, m;
    for (d = d0; d < d1; d++) {
        const int64_t off = dl->off[d], len = dl->off[d + 1] - off;
        uint32_t *const entries = dl->entries + off;
        int32_t n = 0, r;
        for (m = 0; m < len; m++) {
            const int32_t k = z[doc_tok != NULL ? doc_tok[off + m] : off + m];
            if (mark[k] < 0) {
                mark[k] = n;
                entries[n] = (uint32_t)k;
                n++;
            }
            entries[mark[k]] += one;
        }
        for (r = 0; r < n; r++)
            mark[clda_smw_topic(entries[r], dl->shift)] = -1;
        dl->n[d] = n;
    }
}

/* The lists' counts of documents d0:d1 into their rows of the dense
   counts, which hold the counts of the topics in z (the documents'
   tokens as in clda_smw_build_lists), those the lists were built from:
   those entries are set to 0 first. */
static void clda_smw_store_lists(const clda_smw_docs *dl, const int32_t *z,
                                 const int32_t *doc_tok, int64_t d0, int64_t d1)
{
    int64_t d, i;
    int32_t m;
    for (d = d0; d < d1; d++) {
        const uint32_t *const entries = dl->entries + dl->off[d];
        int32_t *const ndk_d = dl->ndk + (Py_ssize_t)d * dl->ndk_stride;
        for (i = dl->off[d]; i < dl->off[d + 1]; i++)
            ndk_d[z[doc_tok != NULL ? doc_tok[i] : i]] = 0;
        for (m = 0; m < dl->n[d]; m++)
            ndk_d[clda_smw_topic(entries[m], dl->shift)] = clda_smw_count_of(entries[m], dl->shift);
    }
}

/* The list position of topic k, or -1 when it is not listed (eight
   entries at a time where SSE2 is there). */
static inline int32_t clda_smw_find(const uint32_t *entries, int32_t n, int32_t shift,
                                    int32_t k)
{
    int32_t m = 0;
#if defined(__SSE2__) && defined(__GNUC__)
    const __m128i key = _mm_set1_epi32(k);
    const __m128i tmask = _mm_set1_epi32((int32_t)((1u << shift) - 1u));
    for (; m + 8 <= n; m += 8) {
        const __m128i a = _mm_cmpeq_epi32(
            _mm_and_si128(_mm_loadu_si128((const __m128i *)(entries + m)), tmask), key);
        const __m128i b = _mm_cmpeq_epi32(
            _mm_and_si128(_mm_loadu_si128((const __m128i *)(entries + m + 4)), tmask), key);
        const int mask = _mm_movemask_ps(_mm_castsi128_ps(a))
                         | (_mm_movemask_ps(_mm_castsi128_ps(b)) << 4);
        if (mask != 0)
            return m + __builtin_ctz((unsigned)mask);
    }
#endif
    for (; m < n; m++)
        if (clda_smw_topic(entries[m], shift) == k)
            return m;
    return -1;
}

/* The first list position whose running sum exceeds x (in
   [0, cum[n - 1]) ): numpy.searchsorted(cum[:n], x, side="right") (the
   sums do not decrease), by a branch-free binary search. */
static inline int32_t clda_smw_search(const double *cum, int32_t n, double x)
{
    int32_t b = 0, len = n;
    while (len > 1) {
        const int32_t half = len / 2;
        b = cum[b + half - 1] <= x ? b + half : b;
        len -= half;
    }
    return b;
}

/* clda_smw_search for x0 and x1, the two searches side by side (their
   loads overlap). */
static inline void clda_smw_search2(const double *cum, int32_t n, double x0, double x1,
                                    int32_t *m0, int32_t *m1)
{
    int32_t b0 = 0, b1 = 0, len = n;
    while (len > 1) {
        const int32_t half = len / 2;
        b0 = cum[b0 + half - 1] <= x0 ? b0 + half : b0;
        b1 = cum[b1 + half - 1] <= x1 ? b1 + half : b1;
        len -= half;
    }
    *m0 = b0;
    *m1 = b1;
}

/* The list positions of the draws x0 and x1 of the list part (those
   < A, the part's mass); a draw >= A leaves its pick as it is. */
static inline void clda_smw_picks(const double *cum, int32_t n, double A, double x0,
                                  double x1, int32_t *pick0, int32_t *pick1)
{
    if (x1 < A)
        clda_smw_search2(cum, n, x0, x1, pick0, pick1);
    else if (x0 < A)
        *pick0 = clda_smw_search(cum, n, x0);
}

/* The running sums of the list part with the token (topic s0, listed)
   left out, for clda_smw_leave_out: the rate of list entry r is
   rates[topic r] when gather is set, else rates[r] (rates may then be
   cum: each block reads its rates before it writes). Returns A; the
   position of s0 goes to *m0. Called with a constant gather, so each
   caller gets its own loop. */
static inline double clda_smw_block_sums(double *cum, const uint32_t *entries, int32_t n,
                                         int32_t shift, int32_t s0, const double *rates,
                                         int gather, int32_t *m0)
{
    const uint32_t tm = (1u << shift) - 1u;
    double off = 0.0, s_0, s_1, s_2, s_3;
    int32_t m = 0;
#if defined(__SSE2__) && defined(__GNUC__)
    const __m128i key = _mm_set1_epi32(s0);
    const __m128i tmask = _mm_set1_epi32((int32_t)tm);
    const __m128i bits = _mm_cvtsi32_si128(shift);
    for (; m + 4 <= n; m += 4) {
        const __m128i e = _mm_loadu_si128((const __m128i *)(entries + m));
        const __m128i eq = _mm_cmpeq_epi32(_mm_and_si128(e, tmask), key);
        const int mask = _mm_movemask_ps(_mm_castsi128_ps(eq));
        /* eq is -1 at s0: its count less the token */
        const __m128i cn = _mm_add_epi32(_mm_srl_epi32(e, bits), eq);
        const __m128d r01 = gather ? _mm_loadh_pd(_mm_load_sd(rates + (entries[m] & tm)),
                                                  rates + (entries[m + 1] & tm))
                                   : _mm_loadu_pd(rates + m);
        const __m128d r23 = gather ? _mm_loadh_pd(_mm_load_sd(rates + (entries[m + 2] & tm)),
                                                  rates + (entries[m + 3] & tm))
                                   : _mm_loadu_pd(rates + m + 2);
        const __m128d p01 = _mm_mul_pd(r01, _mm_cvtepi32_pd(cn));
        const __m128d p23 = _mm_mul_pd(
            r23, _mm_cvtepi32_pd(_mm_shuffle_epi32(cn, _MM_SHUFFLE(3, 2, 3, 2))));
        const __m128d offs = _mm_set1_pd(off);
        s_0 = _mm_cvtsd_f64(p01);
        s_1 = s_0 + _mm_cvtsd_f64(_mm_unpackhi_pd(p01, p01));
        s_2 = s_1 + _mm_cvtsd_f64(p23);
        s_3 = s_2 + _mm_cvtsd_f64(_mm_unpackhi_pd(p23, p23));
        _mm_storeu_pd(cum + m, _mm_add_pd(offs, _mm_set_pd(s_1, s_0)));
        _mm_storeu_pd(cum + m + 2, _mm_add_pd(offs, _mm_set_pd(s_3, s_2)));
        off = off + s_3;
        *m0 = mask != 0 ? m + __builtin_ctz((unsigned)mask) : *m0;
    }
#else
    for (; m + 4 <= n; m += 4) {
        const int32_t t0 = (int32_t)(entries[m] & tm), t1 = (int32_t)(entries[m + 1] & tm);
        const int32_t t2 = (int32_t)(entries[m + 2] & tm), t3 = (int32_t)(entries[m + 3] & tm);
        const double r0 = gather ? rates[t0] : rates[m];
        const double r1 = gather ? rates[t1] : rates[m + 1];
        const double r2 = gather ? rates[t2] : rates[m + 2];
        const double r3 = gather ? rates[t3] : rates[m + 3];
        const int32_t c0 = clda_smw_count_of(entries[m], shift) - (t0 == s0);
        const int32_t c1 = clda_smw_count_of(entries[m + 1], shift) - (t1 == s0);
        const int32_t c2 = clda_smw_count_of(entries[m + 2], shift) - (t2 == s0);
        const int32_t c3 = clda_smw_count_of(entries[m + 3], shift) - (t3 == s0);
        *m0 = t0 == s0 ? m : t1 == s0 ? m + 1 : t2 == s0 ? m + 2 : t3 == s0 ? m + 3 : *m0;
        s_0 = r0 * c0;
        s_1 = s_0 + r1 * c1;
        s_2 = s_1 + r2 * c2;
        s_3 = s_2 + r3 * c3;
        cum[m] = off + s_0;
        cum[m + 1] = off + s_1;
        cum[m + 2] = off + s_2;
        cum[m + 3] = off + s_3;
        off = off + s_3;
    }
#endif
    for (s_0 = 0.0; m < n; m++) {  /* the last, shorter block */
        const int32_t t = (int32_t)(entries[m] & tm);
        const double r = gather ? rates[t] : rates[m];
        const int32_t count = clda_smw_count_of(entries[m], shift) - (t == s0);
        *m0 = t == s0 ? m : *m0;
        s_0 = s_0 + r * count;
        cum[m] = off + s_0;
    }
    return n > 0 ? cum[n - 1] : 0.0;
}

/* Takes a token of topic s0 out of its document's list of n entries
   (the count of entry m0 less 1, m0 the position of s0, which is listed;
   returned in *m0_out) and returns A, the list part's mass without it,
   with its running sums in cum: cum[m] = the sum of the terms
   p[r] = ((nw[k] + eta) * inv[k]) * counts[r] (k = topics[r], the
   entries' topics and counts, the count of m0 after the decrement) over
   r <= m, the first factor read from wr when it
   is not NULL. The terms are added in blocks of four so that the
   additions do not form one chain of length n: with the list cut into
   blocks of four entries (the last one shorter), s_r the sum of the first
   r + 1 terms of a block added left to right, and off the sum of the
   earlier blocks' totals (their s_3, added left to right from 0.0), cum
   at place r of the block is off + s_r; A = cum[n - 1] (0 for an empty
   list). One pass finds s0 and adds. NumPy equivalent (P the terms
   padded with zeros to a multiple of 4)::

       topics, counts = entries[:n] & (2**shift - 1), entries[:n] >> shift
       m0 = np.flatnonzero(topics == s0)[0]
       counts[m0] -= 1
       S = np.cumsum(P.reshape(-1, 4), axis=1)
       off = np.r_[0.0, np.cumsum(S[:, 3])[:-1]]
       cum = (off[:, None] + S).ravel()[:n]
*/
static inline double clda_smw_leave_out(double *cum, uint32_t *entries, int32_t n,
                                        int32_t shift, int32_t s0, const double *wr,
                                        const int32_t *nw, const double *inv, double eta,
                                        int32_t *m0_out)
{
    double A;
    int32_t m, m0 = 0;
    if (wr != NULL) {
        A = clda_smw_block_sums(cum, entries, n, shift, s0, wr, 1, &m0);
    } else {
        for (m = 0; m < n; m++) {
            const int32_t k = clda_smw_topic(entries[m], shift);
            cum[m] = (nw[k] + eta) * inv[k];
        }
        A = clda_smw_block_sums(cum, entries, n, shift, s0, cum, 0, &m0);
    }
    entries[m0] -= 1u << shift;
    *m0_out = m0;
    return A;
}

/* What a token that stayed at its topic leaves for the next one: its
   document, word and topic, its topic's list position and the list
   part's mass A (d = -1: nothing). */
typedef struct {
    int32_t d, w, s, m0;
    double A;
} clda_smw_last;

/* clda_smw_leave_out, or its result again for a token of the same
   document, word and topic as the last one when that one stayed (a
   repeated word: the counts, inv and the list are then what they were
   for it, so cum, A and m0 are the same numbers; only the leave-out's
   decrement is redone). */
static inline double clda_smw_enter(const clda_smw_last *last, double *cum, uint32_t *entries,
                                    int32_t n, int32_t shift, int32_t d, int32_t w,
                                    int32_t s0, const double *wr, const int32_t *nw,
                                    const double *inv, double eta, int32_t *m0_out)
{
    if (d == last->d && w == last->w && s0 == last->s) {
        entries[last->m0] -= 1u << shift;
        *m0_out = last->m0;
        return last->A;
    }
    return clda_smw_leave_out(cum, entries, n, shift, s0, wr, nw, inv, eta, m0_out);
}

/* Memory hint for the token at word position j (no effect on the
   result): the first 64 entries of its document's topic list (a fixed
   number of hints, no loop to mispredict; the hardware follows longer
   lists). */
static inline void clda_smw_prefetch(const clda_smw_docs *dl, int64_t j)
{
    const int64_t off = dl->off[dl->wdoc[j]];
    __builtin_prefetch(dl->entries + off, 1);
    __builtin_prefetch(dl->entries + off + 16, 1);
    __builtin_prefetch(dl->entries + off + 32, 1);
    __builtin_prefetch(dl->entries + off + 48, 1);
}

/* How far ahead (in tokens) the document lists are prefetched. */
#define CLDA_SMW_LOOKAHEAD 3

/* Removes the listed topic at m0 (count 0) from a list of n entries (the
   last entry takes its place); returns where the entry at mt is now. */
static inline int32_t clda_smw_remove(uint32_t *entries, int32_t n, int32_t m0, int32_t mt)
{
    entries[m0] = entries[n - 1];
    return mt == n - 1 ? m0 : mt;
}

/* A token that moved from the topic listed at m0 to topic s (listed at
   ms, or -1 when not listed), its count not yet added: drops the old topic
   from the list of *n entries when its count is 0, appends s (count 0)
   when it is not listed; returns s's list position. */
static inline int32_t clda_smw_relist(uint32_t *entries, int32_t shift, int32_t *n_ptr,
                                      int32_t m0, int32_t ms, int32_t s)
{
    int32_t n = *n_ptr;
    if (clda_smw_count_of(entries[m0], shift) == 0) {
        ms = clda_smw_remove(entries, n, m0, ms);
        n -= 1;
    }
    if (ms < 0) {
        ms = n;
        entries[n] = (uint32_t)s;
        n += 1;
    }
    *n_ptr = n;
    return ms;
}

/* Adds delta (+1 or -1) to the word-topic and topic counts of a token of
   word w (row nw) at topic k, and updates inv[k] and, when the word has
   its row of rates, wr[k] (the document's list count is the caller's). */
static inline void clda_smw_count(const clda_mh_ctx *ctx, clda_smw_scratch *sc, int32_t *nw,
                                  int32_t w, int32_t k, int32_t delta)
{
    nw[k] += delta;
    ctx->nk[k] += delta;
    sc->inv[k] = 1.0 / (ctx->nk[k] + ctx->veta);
    if (sc->wr_word == w)
        sc->wr[k] = (nw[k] + ctx->eta) * sc->inv[k];
}

/* The MH steps of the tokens at word positions pos[p0 .. p1 - 1] (or
   p0 .. p1 - 1 when pos is NULL), in that order, with 2 * mh_steps
   uniforms per token in u (token order). sc->inv is current on entry and
   on exit; the lists of the tokens' documents are current on entry (and
   kept so). */
static void clda_smw_sweep_tokens(const clda_mh_ctx *ctx, clda_smw_docs *dl,
                                  clda_smw_scratch *sc, const int32_t *pos, int64_t p0,
                                  int64_t p1, const double *u)
{
    const Py_ssize_t K = ctx->K;
    const int32_t mh_steps = ctx->mh_steps;
    int32_t *const zw_all = ctx->zw;
    const double eta = ctx->eta, keta = ctx->keta;
    const int32_t shift = dl->shift;
    double *const inv = sc->inv;
    double *const cum = sc->cum;
    clda_smw_last last = {-1, -1, -1, 0, 0.0};
    int64_t p;
    int32_t j;
    for (p = p0; p < p1; p++) {
        const int64_t jw = pos != NULL ? pos[p] : p;
        const int32_t w = dl->wword[jw], d = dl->wdoc[jw], g = dl->doc_group[d];
        int32_t *const nw = ctx->nwk != NULL ? ctx->nwk + (Py_ssize_t)w * ctx->nwk_stride
                                             : clda_smw_word_counts(ctx, sc, w);
        const int32_t *const zw = zw_all + ctx->word_ptr[w];
        const int64_t n_w = ctx->word_ptr[w + 1] - ctx->word_ptr[w];
        const double word_mass = (double)n_w + keta;
        const double *const prior = dl->prior + (Py_ssize_t)g * K;
        const double c = dl->c[g];
        uint32_t *const entries = dl->entries + dl->off[d];
        int32_t n = dl->n[d];
        const int32_t s0 = zw_all[jw];
        int32_t m0, s, ms, nt, pick0 = 0, pick1 = 0;
        double A, total, ps, qs;
        if (p + CLDA_SMW_LOOKAHEAD < p1)
            clda_smw_prefetch(dl, pos != NULL ? pos[p + CLDA_SMW_LOOKAHEAD]
                                              : p + CLDA_SMW_LOOKAHEAD);
        if (w != sc->wr_word)
            clda_smw_word_row(ctx, sc, w, nw, n_w);
        clda_smw_count(ctx, sc, nw, w, s0, -1);
        A = clda_smw_enter(&last, cum, entries, n, shift, d, w, s0,
                           sc->wr_word == w ? sc->wr : NULL, nw, inv, eta, &m0);
        s = s0;
        ms = m0;
        total = A + c * word_mass;
        nt = clda_smw_count_of(entries[m0], shift);
        ps = (nt + prior[s0]) * inv[s0];
        qs = nt * inv[s0] + c;
        for (j = 0; j < mh_steps; j++, u += 2) {
            const double x = u[0] * total;
            double pt, qt;
            int32_t t, mt;
            if ((j & 1) == 0)  /* the list picks of this step and the next */
                clda_smw_picks(cum, n, A, x, j + 1 < mh_steps ? u[2] * total : A, &pick0,
                               &pick1);
            if (x < A) {
                mt = (j & 1) == 0 ? pick0 : pick1;
                t = clda_smw_topic(entries[mt], shift);
            } else {
                const double y = (x - A) / c;
                if (y < (double)n_w)
                    t = zw[(int64_t)y];  /* z[word_tokens[word_ptr[w] + y]] */
                else
                    t = (int32_t)clda_mh_floor_index((y - (double)n_w) / eta, K);
                mt = t == s ? ms : clda_smw_find(entries, n, shift, t);
            }
            /* accepted (t == s changes nothing) without a branch */
            nt = clda_smw_count_of(entries[mt < 0 ? m0 : mt], shift) & -(int32_t)(mt >= 0);
            pt = (nt + prior[t]) * inv[t];
            qt = nt * inv[t] + c;
            {
                const int acc = (t != s) & (u[1] * (ps * qt) < pt * qs);
                s = acc ? t : s;
                ms = acc ? mt : ms;
                ps = acc ? pt : ps;
                qs = acc ? qt : qs;
            }
            zw_all[jw] = s;
        }
        if (s != s0)
            ms = clda_smw_relist(entries, shift, &dl->n[d], m0, ms, s);
        last = (clda_smw_last){s == s0 ? d : -1, w, s0, m0, A};
        entries[ms] += 1u << shift;
        clda_smw_count(ctx, sc, nw, w, s, 1);
    }
}

#endif  /* SKLEARN_CLDA_SPARSE_MH_KERNEL_H */

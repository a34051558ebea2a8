/* The z-step of the Metropolis-Hastings sampler for one document (sklearn_clda).

   An O(1)-per-token alternative to the dense kernel of _gibbs_kernel.h,
   for many topics. It leaves the same collapsed conditional invariant,

       p[k] = (ndk[k] + prior[k]) * (nw[k] + eta) / (nk[k] + V eta),

   with the token left out of the counts (ndk: its document's counts,
   nw: its word's row, nk: the topic totals, prior: its collection's row),
   by ``mh_steps`` Metropolis-Hastings steps that alternate two proposals
   (word, doc, word, ...), each a mixture that costs O(1) to draw from
   (WarpLDA, Chen et al. 2016):

   - word proposal, q(t) proportional to nw[t] + [t == s] + eta (s the
     token's current topic): with probability n_w / (n_w + K eta) the topic
     of a uniformly chosen token of the word (the token itself included),
     else a uniform topic;
   - doc proposal, q(t) proportional to ndk[t] + [t == s] + prior[t]: with
     probability L_d / (L_d + A_g) the topic of a uniformly chosen token of
     the document (itself included), else a draw from the alias table of
     the collection's prior row (A_g its total).

   Both are drawn from the *current* assignments, so they depend on the
   current state only through s, and in the Hastings ratio the counts that
   the proposal shares with the target cancel. For t != s the move is
   accepted with probability min(1, ratio):

       word step: ratio = (ndk[t] + prior[t]) * (nk[s] + V eta)
                          / ((ndk[s] + prior[s]) * (nk[t] + V eta))
       doc step:  ratio = (nw[t] + eta) * (nk[s] + V eta)
                          / ((nw[s] + eta) * (nk[t] + V eta))

   (t == s is always accepted and changes nothing). Each step is a
   Metropolis-Hastings kernel of the exact conditional, so the chain is
   exact, with no stale tables: the alias tables are of the prior, which is
   fixed during a sweep.

   Each step uses three uniforms (u0: the proposal's component and token,
   u1: the uniform topic or the alias column, u2: the acceptance), drawn
   whether used or not, so the stream is easy to reproduce. The expressions
   below are evaluated exactly in this order (no FMA contraction: the
   module is compiled with -ffp-contract=off), as in the NumPy reference of
   ``mh_sweep``.

   The uniforms. Step j of token i (i its index in the call's token
   arrays) reads uniforms c = 3 (i mh_steps + j) + 0, 1, 2 of the
   counter-based stream of _uniforms.h, whose key is one 64-bit draw
   (next_uint64) of the caller's NumPy bit generator per call (per sweep,
   or per cell of the partitioned sweep), so a seeded chain stays
   reproducible. Why not NumPy's stream itself: its next_double costs
   about 2 ns a call through bitgen_t's function pointer, 6 calls a token
   at mh_steps = 2 (12 of 72 ns/token at K = 1000 on news16), where
   clda_fill_uniforms fills a document's uniforms in a loop without calls
   (benchmarks/README.md has the A/B of the sweeps). Drawing them in the
   token loop instead, from NumPy's stream or from this one, was slower:
   the loop's instructions bound how far the CPU runs ahead of its cache
   misses. Two calls with keys a and b share a generator state only if (a
   - b) / gamma mod 2^64 falls within the counters' span n = 3 mh_steps
   (tokens): over a fit of S calls, with probability at most S^2 n / 2^64
   (1000 sweeps of 16 cells on news16: below 1e-4). */
#ifndef SKLEARN_CLDA_MH_KERNEL_H
#define SKLEARN_CLDA_MH_KERNEL_H

#include <stdint.h>

#include "_uniforms.h"

/* Everything one MH sweep shares between its documents. */
typedef struct {
    Py_ssize_t K;               /* topics */
    int32_t mh_steps;           /* MH steps per token, alternating word, doc */
    const int32_t *words;       /* word of each token */
    int32_t *z;                 /* topic of each token, updated */
    int32_t *nwk;               /* word-topic counts, rows of nwk_stride, updated */
    Py_ssize_t nwk_stride;      /* row length of nwk (>= K) */
    int32_t *nk;                /* topic totals, updated */
    double eta;                 /* topic-word prior */
    double veta;                /* V * eta */
    double keta;                /* K * eta */
    const int64_t *word_ptr;    /* tokens of word w: word_tokens[word_ptr[w]:word_ptr[w + 1]] */
    const int32_t *word_tokens; /* token positions, grouped by word */
    /* z in word order, zw[j] = z[word_tokens[j]], kept current (the word
       proposal reads one entry instead of word_tokens and then z), and
       each token's place in it, word_pos[word_tokens[j]] = j. */
    int32_t *zw;
    const int32_t *word_pos;
    /* The partitioned sweep's z in document order, zd[doc_pos[i]] = z[i],
       kept current: a document's tokens lie in P cells far apart, and the
       doc proposal reads its topics here instead, in one short run. NULL
       in the serial sweep, whose z is in document order. */
    int32_t *zd;
    const int32_t *doc_pos;
} clda_mh_ctx;

/* The prior part of the doc proposal for one collection: its row, its
   total and its alias table (column c is kept with probability prob[c],
   else replaced by alias[c]). */
typedef struct {
    const double *prior;
    double total;
    const double *prob;
    const int32_t *alias;
} clda_mh_prior;

/* Index floor(y) of y in [0, n], capped at n - 1. */
static inline Py_ssize_t clda_mh_floor_index(double y, Py_ssize_t n)
{
    Py_ssize_t c = (Py_ssize_t)y;
    return c < n - 1 ? c : n - 1;
}

/* What the steps of token i read that stays fixed while they run: its
   document's counts and proposal, its word's row of counts and topics in
   word order, and its own place there. */
typedef struct {
    int64_t i;
    int32_t *ndk_d;
    int32_t *nw;
    const int32_t *zw;         /* the word's topics in word order */
    int64_t n_w;               /* the word's number of tokens */
    double word_mass;          /* n_w + K eta */
    const int32_t *doc_z;      /* the document's topics, in document order */
    double doc_len;            /* L, as a double */
    double doc_mass;           /* L + A */
} clda_mh_token;

/* A move of the token from s to t: its topic in z, in word order and (in
   the partitioned sweep) in document order. */
static inline int32_t clda_mh_accept(const clda_mh_ctx *ctx, const clda_mh_token *tk,
                                     int32_t t)
{
    ctx->z[tk->i] = t;
    ctx->zw[ctx->word_pos[tk->i]] = t;
    if (ctx->zd != NULL)
        ctx->zd[ctx->doc_pos[tk->i]] = t;
    return t;
}

/* One word step from topic s, with uniforms u[0:3]; returns the new topic. */
static inline int32_t clda_mh_word_step(const clda_mh_ctx *ctx, const clda_mh_token *tk,
                                        const double *prior, int32_t s, const double *u)
{
    const int32_t *const nk = ctx->nk;
    const double x = u[0] * tk->word_mass;
    int32_t t;
    double num, den;
    if (x < (double)tk->n_w)
        t = tk->zw[(int64_t)x];  /* z[word_tokens[word_ptr[w] + x]] */
    else
        t = (int32_t)clda_mh_floor_index(u[1] * (double)ctx->K, ctx->K);
    if (t == s)
        return s;
    num = (tk->ndk_d[t] + prior[t]) * (nk[s] + ctx->veta);
    den = (tk->ndk_d[s] + prior[s]) * (nk[t] + ctx->veta);
    return u[2] * den < num ? clda_mh_accept(ctx, tk, t) : s;
}

/* One doc step from topic s, with uniforms u[0:3]; returns the new topic. */
static inline int32_t clda_mh_doc_step(const clda_mh_ctx *ctx, const clda_mh_token *tk,
                                       const clda_mh_prior *pg, int32_t s, const double *u)
{
    const int32_t *const nk = ctx->nk, *const nw = tk->nw;
    const double x = u[0] * tk->doc_mass;
    int32_t t;
    double num, den;
    if (x < tk->doc_len) {
        t = tk->doc_z[(int64_t)x];
    } else {
        const double y = u[1] * (double)ctx->K;
        const Py_ssize_t c = clda_mh_floor_index(y, ctx->K);
        t = (y - (double)c < pg->prob[c]) ? (int32_t)c : pg->alias[c];
    }
    if (t == s)
        return s;
    num = (nw[t] + ctx->eta) * (nk[s] + ctx->veta);
    den = (nw[s] + ctx->eta) * (nk[t] + ctx->veta);
    return u[2] * den < num ? clda_mh_accept(ctx, tk, t) : s;
}

/* The MH steps of the tokens i0:i1 of one document, whose counts are
   ndk_d, with 3 * mh_steps uniforms per token in u_buf (token order:
   clda_fill_uniforms from counter 3 * mh_steps * i0).
   The document's topics (for its proposal) are doc_z[0 .. doc_len - 1]:
   z + the document's first token in the serial sweep, or its run of
   ctx->zd in the partitioned one, where i0:i1 are a piece of the
   document (some of its tokens, in cell order). No prefetches: the loads of the next token
   issue early anyway, and prefetching them cost 4-6% (A/B, news16). */
static void clda_mh_sweep_document(
    const clda_mh_ctx *ctx, int64_t i0, int64_t i1, int32_t *ndk_d,
    const clda_mh_prior *pg, const double *u_buf, const int32_t *doc_z, int64_t doc_len)
{
    const int32_t mh_steps = ctx->mh_steps;
    int32_t *const nk = ctx->nk;
    clda_mh_token tk;
    int32_t j;
    tk.ndk_d = ndk_d;
    tk.doc_z = doc_z;
    tk.doc_len = (double)doc_len;
    tk.doc_mass = (double)doc_len + pg->total;
    for (tk.i = i0; tk.i < i1; tk.i++) {
        const int32_t w = ctx->words[tk.i];
        const double *u = u_buf + (tk.i - i0) * 3 * (int64_t)mh_steps;
        int32_t s = ctx->z[tk.i];
        tk.nw = ctx->nwk + (Py_ssize_t)w * ctx->nwk_stride;
        tk.zw = ctx->zw + ctx->word_ptr[w];
        tk.n_w = ctx->word_ptr[w + 1] - ctx->word_ptr[w];
        tk.word_mass = (double)tk.n_w + ctx->keta;
        ndk_d[s] -= 1;
        tk.nw[s] -= 1;
        nk[s] -= 1;
        for (j = 0; j < mh_steps; j += 2, u += 6) {  /* word, doc, word, ... */
            s = clda_mh_word_step(ctx, &tk, pg->prior, s, u);
            if (j + 1 < mh_steps)
                s = clda_mh_doc_step(ctx, &tk, pg, s, u + 3);
        }
        ndk_d[s] += 1;
        tk.nw[s] += 1;
        nk[s] += 1;
    }
}

#endif  /* SKLEARN_CLDA_MH_KERNEL_H */

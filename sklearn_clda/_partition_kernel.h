/* The partitioned parallel sweep (sklearn_clda): P threads' worth of the
   collapsed Gibbs z-step with no copies of the word-topic table.

   The scheme (cells, sub-steps, the totals' copies, the threads claiming
   cells) is _substeps.h's. The tokens are stored cell by cell
   (cell-major, then document, then position), and a cell as a list of
   pieces: runs of tokens of one document. Every piece is swept by the
   document kernel of _gibbs_kernel.h (portable or AVX2) with the
   document's counts and its collection's prior, after filling its
   uniforms (one per token): uniforms i0:i1 (the piece's tokens' places
   in cell order) of the _uniforms.h stream whose key is one next_uint64
   of the document block's bit generator, drawn when the cell starts.

   Requires _gibbs_kernel.h and numpy/random/bitgen.h to be included
   first. */
#ifndef SKLEARN_CLDA_PARTITION_KERNEL_H
#define SKLEARN_CLDA_PARTITION_KERNEL_H

#include "_substeps.h"
#include "_uniforms.h"

/* Everything the threads of one partitioned dense sweep share. */
typedef struct {
    clda_substeps steps;           /* P, the threads, the totals and their copies */
    Py_ssize_t n_blocks, nwk_stride;
    const int32_t *words;          /* tokens in cell order */
    int32_t *z;                    /* their topics, updated */
    const int64_t *piece_start;    /* piece j = tokens piece_start[j]:piece_start[j + 1] */
    const int32_t *piece_doc;      /* document of piece j */
    const int64_t *cell_piece;     /* cell c = pieces cell_piece[c]:cell_piece[c + 1], c = p * P + q */
    const int32_t *doc_group;      /* collection of each document */
    int32_t *nwk;                  /* word-topic counts, rows of nwk_stride, updated */
    int32_t *ndk;                  /* document-topic counts (n_docs, K), updated */
    const double *prior;           /* (G, K) document-topic prior of each collection */
    double eta, veta;
    bitgen_t **bitgen;             /* random stream of each document block */
    int wide_fill;                 /* clda_fill_uniforms' AVX-512 loop */
    clda_sweep_document_fn sweep_document;
} clda_partition_ctx;

/* One thread's cell function argument: the shared context, the thread's
   scratch (its nk is set per cell) and its uniforms' buffer. */
typedef struct {
    const clda_partition_ctx *c;
    clda_sweep_ctx *local;
    double *u_buf;
} clda_partition_thread;

/* Sweep cell (p, q) against nk, block p's copy of the totals (a
   clda_cell_fn). */
static void clda_sweep_cell(void *arg, Py_ssize_t p, Py_ssize_t q, int32_t *nk)
{
    const clda_partition_thread *th = (const clda_partition_thread *)arg;
    const clda_partition_ctx *c = th->c;
    clda_sweep_ctx *local = th->local;
    double *u_buf = th->u_buf;
    const Py_ssize_t K = c->steps.K;
    bitgen_t *rng = c->bitgen[p];
    const int64_t j0 = c->cell_piece[p * c->steps.P + q];
    const int64_t j1 = c->cell_piece[p * c->steps.P + q + 1];
    const uint64_t key = rng->next_uint64(rng->state);
    int64_t j;
    local->nk = nk;
    clda_set_reciprocals(nk, K, c->veta, local->inv, local->invm, local->invp);
    for (j = j0; j < j1; j++) {
        const int64_t i0 = c->piece_start[j], i1 = c->piece_start[j + 1];
        const int32_t d = c->piece_doc[j];
        const int64_t next_word = j + 1 < j1 ? c->words[i1] : -1;
        clda_fill_uniforms(u_buf, i1 - i0, key, (uint64_t)i0, c->wide_fill);
        c->sweep_document(local, i0, i1, c->ndk + (Py_ssize_t)d * K,
                          c->prior + (Py_ssize_t)c->doc_group[d] * K, u_buf, next_word);
    }
}

/* Thread t's part of one sweep. ``local`` holds the thread's scratch
   buffers (inv, invm, invp, r, p, cum) and the table fields copied from ``c``;
   ``u_buf`` has room for the longest piece. See clda_substeps_run. */
static int clda_partition_worker(clda_partition_ctx *c, Py_ssize_t t,
                                 clda_sweep_ctx *local, double *u_buf)
{
    clda_partition_thread th;
    th.c = c;
    th.local = local;
    th.u_buf = u_buf;
    return clda_substeps_run(&c->steps, t, clda_sweep_cell, &th);
}

#endif  /* SKLEARN_CLDA_PARTITION_KERNEL_H */

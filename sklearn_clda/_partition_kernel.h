/* The partitioned parallel sweep (sklearn_clda): P threads' worth of the
   collapsed Gibbs z-step with no copies of the word-topic table.

   Documents are cut into P blocks and words into P blocks; cell (p, q)
   holds the tokens of document block p whose word is in word block q.
   A sweep is P sub-steps; in sub-step s, cell (p, (p + s) mod P) is swept
   for every p at once. The P cells of a sub-step touch P different
   document blocks (rows of ndk) and P different word blocks (rows of
   nwk), so they share no counts but the topic totals nk. Each cell works
   on a copy of nk taken at the start of the sub-step (its own changes
   only), and the copies' changes are added up after it: the totals are
   stale only within a sub-step, and the word-topic table never.

   The tokens are stored cell by cell (cell-major, then document, then
   position), and a cell as a list of pieces: runs of tokens of one
   document. Every piece is swept by the document kernel of
   _gibbs_kernel.h (portable or AVX2) with the document's counts and its
   collection's prior, after drawing its uniforms (one per token) from the
   random stream of its document block. The result depends on P but not
   on the number of threads T <= P that run the cells: in every sub-step
   the threads claim its cells one at a time, in document-block order,
   from a shared counter (a thread that finishes a small cell takes the
   next one, so P > T blocks even out cells of unequal cost), and they
   meet at a barrier after each sub-step, where thread 0 adds up the
   totals. Each thread adds the seconds it spends in its cells to its
   counter in ``busy`` (the rest of a sweep it waits at the barriers).

   Requires _gibbs_kernel.h and numpy/random/bitgen.h to be included
   first. */
#ifndef SKLEARN_CLDA_PARTITION_KERNEL_H
#define SKLEARN_CLDA_PARTITION_KERNEL_H

#include <stdint.h>
#include <string.h>

#if defined(_MSC_VER)
#include <intrin.h>
#include <windows.h>
#define CLDA_LOAD(ptr) _InterlockedCompareExchange64((volatile long long *)(ptr), 0, 0)
#define CLDA_FETCH_ADD(ptr, v) _InterlockedExchangeAdd64((volatile long long *)(ptr), (v))
#define CLDA_STORE(ptr, v) _InterlockedExchange64((volatile long long *)(ptr), (v))
#define CLDA_PAUSE() YieldProcessor()
#define CLDA_YIELD() SwitchToThread()
/* Seconds on a monotonic clock. */
static inline double clda_now(void)
{
    LARGE_INTEGER freq, count;
    QueryPerformanceFrequency(&freq);
    QueryPerformanceCounter(&count);
    return (double)count.QuadPart / (double)freq.QuadPart;
}
#else
#include <time.h>
#include <sched.h>
#define CLDA_LOAD(ptr) __atomic_load_n((ptr), __ATOMIC_ACQUIRE)
#define CLDA_FETCH_ADD(ptr, v) __atomic_fetch_add((ptr), (v), __ATOMIC_ACQ_REL)
#define CLDA_STORE(ptr, v) __atomic_store_n((ptr), (v), __ATOMIC_RELEASE)
#if defined(__x86_64__) || defined(__i386__)
#define CLDA_PAUSE() __builtin_ia32_pause()
#else
#define CLDA_PAUSE() ((void)0)
#endif
#define CLDA_YIELD() sched_yield()
static inline double clda_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
#endif

/* Spins before a waiting thread starts yielding its core (about 10-50 us). */
#define CLDA_SPINS_BEFORE_YIELD 4096

/* A reusable barrier for a fixed number of threads. ``stop`` points to a
   flag that another thread may set; a waiting thread that sees it set
   gives up (returns -1) instead of waiting for threads that may never
   arrive. */
typedef struct {
    int64_t n_threads;
    int64_t arrived;
    int64_t generation;
    const volatile int32_t *stop;
} clda_barrier;

static int clda_barrier_wait(clda_barrier *b)
{
    const int64_t gen = CLDA_LOAD(&b->generation);
    int64_t spins = 0;
    if (CLDA_FETCH_ADD(&b->arrived, 1) == b->n_threads - 1) {
        CLDA_STORE(&b->arrived, 0);
        CLDA_FETCH_ADD(&b->generation, 1);
        return 0;
    }
    while (CLDA_LOAD(&b->generation) == gen) {
        if (*b->stop)
            return -1;
        if (++spins < CLDA_SPINS_BEFORE_YIELD)
            CLDA_PAUSE();
        else
            CLDA_YIELD();
    }
    return 0;
}

/* Everything the threads of one partitioned sweep share. */
typedef struct {
    Py_ssize_t P;                  /* blocks of documents and of words */
    Py_ssize_t n_threads;          /* T <= P */
    Py_ssize_t K, n_blocks, nwk_stride;
    Py_ssize_t nk_stride;          /* row stride of nk_cell: whole cache lines */
    const int32_t *words;          /* tokens in cell order */
    int32_t *z;                    /* their topics, updated */
    const int64_t *piece_start;    /* piece j = tokens piece_start[j]:piece_start[j + 1] */
    const int32_t *piece_doc;      /* document of piece j */
    const int64_t *cell_piece;     /* cell c = pieces cell_piece[c]:cell_piece[c + 1], c = p * P + q */
    const int32_t *doc_group;      /* collection of each document */
    int32_t *nwk;                  /* word-topic counts, rows of nwk_stride, updated */
    int32_t *ndk;                  /* document-topic counts (n_docs, K), updated */
    int32_t *nk;                   /* topic totals, updated after each sub-step */
    int32_t *nk_cell;              /* (P, nk_stride): each document block's copy of nk */
    const double *prior;           /* (G, K) document-topic prior of each collection */
    double eta, veta;
    bitgen_t **bitgen;             /* random stream of each document block */
    clda_sweep_document_fn sweep_document;
    clda_barrier barrier;
    volatile int32_t *stop;        /* set by another thread to abandon the sweep */
    volatile int32_t aborted;      /* thread 0's decision, read after the barrier */
    double *busy;                  /* seconds each thread spent sweeping its cells,
                                      thread t at busy[t * CLDA_BUSY_STRIDE] */
    int64_t *claimed;              /* cells of sub-step s claimed so far, at
                                      claimed[s * CLDA_BUSY_STRIDE]; zeroed
                                      before each sweep */
} clda_partition_ctx;

/* Eight-byte items between two threads' (or sub-steps') counters: a cache
   line each. */
#define CLDA_BUSY_STRIDE 8

/* Sweep cell (p, q) with the thread's scratch in ``local`` (its nk is set
   here to the block's copy). */
static void clda_sweep_cell(const clda_partition_ctx *c, clda_sweep_ctx *local,
                            double *u_buf, Py_ssize_t p, Py_ssize_t q)
{
    const Py_ssize_t K = c->K;
    int32_t *nk = c->nk_cell + p * c->nk_stride;
    bitgen_t *rng = c->bitgen[p];
    const int64_t j0 = c->cell_piece[p * c->P + q], j1 = c->cell_piece[p * c->P + q + 1];
    int64_t j, t;
    Py_ssize_t k;
    memcpy(nk, c->nk, (size_t)K * sizeof(int32_t));
    local->nk = nk;
    for (k = 0; k < K; k++) {
        local->inv[k] = 1.0 / (nk[k] + c->veta);
        local->invm[k] = 1.0 / (nk[k] - 1 + c->veta);
    }
    for (j = j0; j < j1; j++) {
        const int64_t i0 = c->piece_start[j], i1 = c->piece_start[j + 1];
        const int32_t d = c->piece_doc[j];
        const int64_t next_word = j + 1 < j1 ? c->words[i1] : -1;
        for (t = 0; t < i1 - i0; t++)
            u_buf[t] = rng->next_double(rng->state);
        c->sweep_document(local, i0, i1, c->ndk + (Py_ssize_t)d * K,
                          c->prior + (Py_ssize_t)c->doc_group[d] * K, u_buf, next_word);
    }
}

/* nk += the sum of the document blocks' changes to their copies. */
static void clda_merge_totals(clda_partition_ctx *c)
{
    Py_ssize_t k, p;
    for (k = 0; k < c->K; k++) {
        const int64_t old = c->nk[k];
        int64_t acc = old;
        for (p = 0; p < c->P; p++)
            acc += c->nk_cell[p * c->nk_stride + k] - old;
        c->nk[k] = (int32_t)acc;
    }
}

/* Thread t's part of one sweep. ``local`` holds the thread's scratch
   buffers (inv, invm, r, p, cum) and the table fields copied from ``c``;
   ``u_buf`` has room for the longest piece. Returns 0, or -1 when the
   sweep was abandoned (stop flag): the counts are then consistent with z
   within each cell swept, but nk may miss the last sub-step's changes. */
static int clda_partition_worker(clda_partition_ctx *c, Py_ssize_t t,
                                 clda_sweep_ctx *local, double *u_buf)
{
    Py_ssize_t s, p;
    double start;
    for (s = 0; s < c->P; s++) {
        int64_t *claimed = c->claimed + s * CLDA_BUSY_STRIDE;
        start = clda_now();
        while ((p = (Py_ssize_t)CLDA_FETCH_ADD(claimed, 1)) < c->P)
            clda_sweep_cell(c, local, u_buf, p, (p + s) % c->P);
        c->busy[t * CLDA_BUSY_STRIDE] += clda_now() - start;
        if (clda_barrier_wait(&c->barrier) != 0)
            return -1;
        if (t == 0) {
            clda_merge_totals(c);
            c->aborted = *c->stop != 0;
        }
        if (clda_barrier_wait(&c->barrier) != 0 || c->aborted)
            return -1;
    }
    return 0;
}

#endif  /* SKLEARN_CLDA_PARTITION_KERNEL_H */

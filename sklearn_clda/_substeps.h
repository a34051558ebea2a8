/* The sub-steps of a partitioned sweep (sklearn_clda), whatever sweeps
   its cells: P x P cells, P diagonal sub-steps, threads that claim cells
   in order and wait only for the cells each one depends on.

   Documents are cut into P blocks and words into P blocks; cell (p, q)
   holds the tokens of document block p whose word is in word block q. In
   sub-step s the cells (p, (p + s) mod P) are swept for every p: they
   touch P different document blocks and P different word blocks, so they
   share no counts but the K topic totals nk. Each document block works
   on its own copy of nk, taken at the start of the sweep (on cache lines
   of its own), and the copies' changes are added up after the sweep: the
   totals a cell sees are those of the sweep's start plus its own block's
   changes (as in AD-LDA; the word and document counts are exact).

   So cell (p, s) needs only the two cells before it that touch its rows:
   (p, s - 1), its document block's previous cell, and (p + 1, s - 1),
   the previous cell of its word block (p + s) mod P. The threads claim
   the cells one at a time in the order s * P + p from a shared counter,
   and a thread waits only until those two are done (each block's count
   of finished sub-steps), not for the whole sub-step: a slow cell holds
   up the cells that depend on it, not every thread. Claiming in order
   keeps it free of deadlock (a cell's two are claimed before it), and
   the result depends on P but not on the number of threads T <= P,
   provided each cell draws from its document block's random stream.
   Each thread adds the seconds it spends in its cells to its counter in
   ``busy`` (the rest of a sweep it waits).

   clda_substeps_run is the driver; the caller's cell function sweeps one
   cell (_partition_kernel.h: the dense Gibbs kernel; _mh_sampling.pyx:
   the MH kernel). */
#ifndef SKLEARN_CLDA_SUBSTEPS_H
#define SKLEARN_CLDA_SUBSTEPS_H

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
#elif defined(__aarch64__)
/* ARM's "yield" hint does nothing on cores without SMT, so the spins
   before yielding would pass in a few microseconds; an instruction barrier
   stalls the core briefly, as x86's pause does (Rust's spin-loop hint
   makes the same choice on aarch64). */
#define CLDA_PAUSE() __asm__ __volatile__("isb" ::: "memory")
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

/* One round of a waiting thread's loop: a pause for its first
   CLDA_SPINS_BEFORE_YIELD rounds, then its core handed to another thread. */
static inline void clda_backoff(int64_t *spins)
{
    if (++*spins < CLDA_SPINS_BEFORE_YIELD)
        CLDA_PAUSE();
    else
        CLDA_YIELD();
}

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
        clda_backoff(&spins);
    }
    return 0;
}

/* Sweeps cell (p, q) against nk, document block p's copy of the totals
   (taken at the start of the sweep); arg is the calling thread's. */
typedef void (*clda_cell_fn)(void *arg, Py_ssize_t p, Py_ssize_t q, int32_t *nk);

/* What the threads of one partitioned sweep share, whatever sweeps the cells. */
typedef struct {
    Py_ssize_t P;                  /* blocks of documents and of words */
    Py_ssize_t n_threads;          /* T <= P */
    Py_ssize_t K;                  /* topics */
    Py_ssize_t nk_stride;          /* row stride of nk_cell: whole cache lines */
    int32_t *nk;                   /* topic totals, updated after each sweep */
    int32_t *nk_cell;              /* (P, nk_stride): each document block's copy of nk */
    clda_barrier barrier;
    volatile int32_t *stop;        /* set by another thread to abandon the sweep */
    volatile int32_t aborted;      /* thread 0's decision, read after the barrier */
    double *busy;                  /* seconds each thread spent sweeping its cells,
                                      thread t at busy[t * CLDA_BUSY_STRIDE] */
    int64_t *counters;             /* (P + 1) * CLDA_BUSY_STRIDE: the cells claimed
                                      so far at counters[0], and the sub-steps
                                      document block p has finished at
                                      counters[(p + 1) * CLDA_BUSY_STRIDE]; zeroed
                                      before each sweep */
} clda_substeps;

/* Eight-byte items between two threads' (or blocks') counters: a cache
   line each. */
#define CLDA_BUSY_STRIDE 8

/* c set up for P blocks on n_threads threads over K topics: the totals
   nk, the blocks' copies nk_cell (rows of nk_stride on whole cache
   lines), the stop flag, the threads' busy seconds and the sweep's
   counters (P + 1 of them; all CLDA_BUSY_STRIDE apart). */
static void clda_substeps_init(clda_substeps *c, Py_ssize_t P, Py_ssize_t n_threads,
                               Py_ssize_t K, int32_t *nk, int32_t *nk_cell,
                               Py_ssize_t nk_stride, volatile int32_t *stop, double *busy,
                               int64_t *counters)
{
    memset(c, 0, sizeof(*c));
    c->P = P;
    c->n_threads = n_threads;
    c->K = K;
    c->nk = nk;
    c->nk_cell = nk_cell;
    c->nk_stride = nk_stride;
    c->stop = stop;
    c->barrier.n_threads = n_threads;
    c->barrier.stop = stop;
    c->busy = busy;
    c->counters = counters;
}

/* Readies c for the next sweep: the barrier, the abort decision and the
   counters. */
static void clda_substeps_ready(clda_substeps *c)
{
    c->barrier.arrived = 0;
    c->aborted = 0;
    memset(c->counters, 0, (size_t)((c->P + 1) * CLDA_BUSY_STRIDE) * sizeof(int64_t));
}

/* nk += the sum of the document blocks' changes to their copies. */
static void clda_merge_totals(clda_substeps *c)
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

/* Where document block p's count of finished sub-steps is kept. */
static inline int64_t *clda_block_done(const clda_substeps *c, Py_ssize_t p)
{
    return c->counters + (p + 1) * CLDA_BUSY_STRIDE;
}

/* Waits until cells (p, s - 1) and (p + 1 mod P, s - 1) are done: 0, or
   -1 once the stop flag is set. */
static int clda_wait_for_cell(const clda_substeps *c, Py_ssize_t p, Py_ssize_t s)
{
    const int64_t *mine = clda_block_done(c, p);
    const int64_t *next = clda_block_done(c, (p + 1) % c->P);
    int64_t spins = 0;
    while (CLDA_LOAD(mine) < s || CLDA_LOAD(next) < s) {
        if (*c->stop)
            return -1;
        clda_backoff(&spins);
    }
    return 0;
}

/* Thread t's part of one sweep: the cells it claims, each swept by
   cell(arg, p, q, nk) on block p's copy of the totals once the two cells
   it depends on are done; then, with the other threads, the copies'
   changes added to nk. Returns 0, or -1 when the sweep was abandoned
   (stop flag): the counts are then consistent within each cell swept,
   but nk misses the sweep's changes. */
static int clda_substeps_run(clda_substeps *c, Py_ssize_t t, clda_cell_fn cell, void *arg)
{
    const Py_ssize_t P = c->P;
    Py_ssize_t i, s, p;
    double start;
    while ((i = (Py_ssize_t)CLDA_FETCH_ADD(c->counters, 1)) < P * P) {
        int32_t *nk;
        s = i / P;
        p = i % P;
        if (*c->stop || (s > 0 && clda_wait_for_cell(c, p, s) != 0))
            return -1;
        nk = c->nk_cell + p * c->nk_stride;
        start = clda_now();
        if (s == 0)
            memcpy(nk, c->nk, (size_t)c->K * sizeof(int32_t));
        cell(arg, p, (p + s) % P, nk);
        c->busy[t * CLDA_BUSY_STRIDE] += clda_now() - start;
        CLDA_STORE(clda_block_done(c, p), (int64_t)(s + 1));
    }
    if (clda_barrier_wait(&c->barrier) != 0)
        return -1;
    if (t == 0) {
        clda_merge_totals(c);
        c->aborted = *c->stop != 0;
    }
    if (clda_barrier_wait(&c->barrier) != 0 || c->aborted)
        return -1;
    return 0;
}

#endif  /* SKLEARN_CLDA_SUBSTEPS_H */

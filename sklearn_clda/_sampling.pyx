# cython: freethreading_compatible = True
"""Cython kernels for the Gibbs samplers and for fold-in inference.

Every kernel does one bounded unit of work (one sweep, one batch of
documents) with the GIL released; the iteration loop lives in Python.
Each docstring states the NumPy computation the kernel is equivalent to,
and ``tests/test_sampling.py`` holds the kernel to it.

Layouts: the word-topic table ``nwk`` is word-major ``(n_features,
n_components)`` and the document-topic table ``ndk`` is ``(n_docs,
n_components)``, both C-contiguous, so the inner loop over topics reads
contiguous memory. Randomness comes only from the NumPy bit generator
passed in (its ``next_double``, and NumPy's own distributions on it, linked
from NumPy's ``npyrandom`` library), never from a global or recycled
source.
"""

from cpython.exc cimport PyErr_CheckSignals
from cpython.pycapsule cimport PyCapsule_GetPointer
from libc.math cimport fabs, isfinite, log
from libc.stdint cimport int32_t, int64_t, uint8_t, uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc, realloc
from libc.string cimport memset
from numpy.random cimport bitgen_t
from numpy.random.c_distributions cimport binomial_t, random_binomial

from sklearn_clda._substeps cimport (
    CLDA_BUSY_STRIDE,
    clda_substeps,
    clda_substeps_init,
    clda_substeps_ready,
)

cdef extern from "_gibbs_kernel.h":
    ctypedef struct clda_sweep_ctx:
        Py_ssize_t K
        Py_ssize_t n_blocks
        int64_t n_tokens
        const int32_t* words
        int32_t* z
        int32_t* nwk
        Py_ssize_t nwk_stride
        int32_t* nk
        double eta
        double veta
        double* inv
        double* invm
        double* invp
        float* r
        float* p
        float* cum
    ctypedef void (*clda_sweep_document_fn)(
        const clda_sweep_ctx* ctx, int64_t i0, int64_t i1, int32_t* ndk_d,
        const double* prior_g, const double* u_buf, int64_t next_word) noexcept nogil
    void clda_sweep_document_portable(
        const clda_sweep_ctx* ctx, int64_t i0, int64_t i1, int32_t* ndk_d,
        const double* prior_g, const double* u_buf, int64_t next_word) noexcept nogil
    void clda_sweep_document_avx2(
        const clda_sweep_ctx* ctx, int64_t i0, int64_t i1, int32_t* ndk_d,
        const double* prior_g, const double* u_buf, int64_t next_word) noexcept nogil
    int clda_cpu_has_avx2() noexcept nogil
    void clda_set_reciprocals(const int32_t* nk, Py_ssize_t K, double veta, double* inv,
                              double* invm, double* invp) noexcept nogil

cdef extern from "_uniforms.h":
    void clda_fill_uniforms(double* u, int64_t n, uint64_t key, uint64_t c0,
                            int wide) noexcept nogil
    int clda_uniforms_cpu_has_avx512() noexcept nogil

cdef extern from "_partition_kernel.h":
    ctypedef struct clda_partition_ctx:
        clda_substeps steps
        Py_ssize_t n_blocks
        Py_ssize_t nwk_stride
        const int32_t* words
        int32_t* z
        const int64_t* piece_start
        const int32_t* piece_doc
        const int64_t* cell_piece
        const int32_t* doc_group
        int32_t* nwk
        int32_t* ndk
        const double* prior
        double eta
        double veta
        bitgen_t** bitgen
        int wide_fill
        clda_sweep_document_fn sweep_document
    int clda_partition_worker(
        clda_partition_ctx* c, Py_ssize_t t, clda_sweep_ctx* local, double* u_buf
    ) noexcept nogil

import numpy as np
import scipy.sparse as sp
cimport numpy as np

np.import_array()

cdef enum:
    _BLOCK = 8  # topics per block of the inversion search
    _CRP_HIST = 64  # Antoniak draws: counts below this are drawn in aggregate after the sweep


cdef enum:
    # Work (nonzeros x topics) of a fold-in between two checks for Ctrl-C
    # or a stop request: a few milliseconds.
    _SIGNAL_CHECK_WORK = 1 << 22


cdef int _check_signals() except -1 with gil:
    """Run Python's signal handlers (they run in the main thread only); a
    KeyboardInterrupt they raise propagates out of the calling kernel."""
    return PyErr_CheckSignals()


cdef inline bitgen_t* _get_bitgen(object bit_generator) except NULL:
    return <bitgen_t*> PyCapsule_GetPointer(bit_generator.capsule, "BitGenerator")


cdef inline int64_t _crp_tables(int64_t n, double a, bitgen_t* rng) noexcept nogil:
    """Exact number of occupied tables after ``n`` customers of a CRP(a).

    Customer ``l + 1`` (after ``l`` others) opens a new table with
    probability ``a / (a + l)``, independently. Instead of one Bernoulli
    draw per customer, the waiting time to the next new table is drawn by
    inversion with one uniform ``u``: starting after the last table at
    ``l0``, the next one is at the first ``m`` where the survival
    ``prod_{l=l0..m} l / (a + l)`` falls below ``u``. One uniform per table
    (about ``1 + a log n``) instead of one per customer.
    """
    cdef int64_t s, l
    cdef double u, surv
    if n <= 0:
        return 0
    s = 1
    l = 1
    while l < n:
        u = rng.next_double(rng.state)
        surv = 1.0
        while l < n:
            surv *= l / (a + l)
            l += 1
            if surv < u:
                s += 1
                break
    return s


def crp_tables(const int64_t[::1] n, const double[::1] a, object bit_generator):
    """Draw Antoniak table counts, one per ``(n[i], a[i])`` pair.

    Equivalent to (drawing the uniforms in the same order)::

        def tables(n, a, u=Generator(bit_generator).random):
            s, l = int(n > 0), 1
            while l < n:             # waiting time to the next new table
                v, surv = u(), 1.0
                while l < n:
                    surv *= l / (a + l)
                    l += 1
                    if surv < v:
                        s += 1
                        break
            return s

    (the same law as ``1 + sum(Bernoulli(a / (a + l)) for l in 1..n-1)``)
    which has the law ``P(s = m) = |S(n, m)| a**m Gamma(a) / Gamma(a + n)``
    with ``S`` the Stirling numbers of the first kind. This is the same
    routine the AGS sweep uses for the auxiliary variables ``s_jdk`` of
    documents with 64 or more tokens of a topic (the others are drawn in
    aggregate, see :func:`gibbs_sweep`).

    Parameters
    ----------
    n : ndarray of shape (n_draws,), dtype int64
        Number of customers (non-negative).
    a : ndarray of shape (n_draws,), dtype float64
        Concentration (positive).
    bit_generator : numpy.random.BitGenerator

    Returns
    -------
    s : ndarray of shape (n_draws,), dtype int64
    """
    if n.shape[0] != a.shape[0]:
        raise ValueError("n and a must have the same length")
    out_arr = np.zeros(n.shape[0], dtype=np.int64)
    cdef int64_t[::1] out = out_arr
    cdef Py_ssize_t i
    cdef bitgen_t* rng = _get_bitgen(bit_generator)
    with bit_generator.lock, nogil:
        for i in range(n.shape[0]):
            out[i] = _crp_tables(n[i], a[i], rng)
    return out_arr


def _line_buffer(Py_ssize_t n, dtype=np.float64):
    """Zeroed 1-D buffer of ``n`` items on whole 64-byte cache lines of its own.

    It starts on a line boundary and its last line is not shared with any
    other object: a thread writing to it never invalidates a line that
    another thread writes (false sharing between the shards of ``n_jobs``).
    """
    itemsize = np.dtype(dtype).itemsize
    per_line = 64 // itemsize
    n_lines = max(1, (n + per_line - 1) // per_line)
    raw = np.zeros((n_lines + 1) * per_line, dtype=dtype)
    off = (-raw.ctypes.data % 64) // itemsize
    return raw[off:off + n]


def _substeps_buffers(Py_ssize_t P, Py_ssize_t n_threads, Py_ssize_t K):
    """The arrays of a partitioned sweep's ``clda_substeps``: ``(nk_cell,
    nk_stride, busy, counters)``, each block's copy of the totals on cache
    lines of its own (the threads update their copies at every token, and
    rows sharing a line would bounce it between cores), and the threads'
    seconds and the sweep's counters (cells claimed, each block's finished
    sub-steps) a line apart."""
    nk_stride = 16 * ((K + 15) // 16)
    return (_line_buffer(P * nk_stride, np.int32), nk_stride,
            _line_buffer(n_threads * CLDA_BUSY_STRIDE),
            _line_buffer((P + 1) * CLDA_BUSY_STRIDE, np.int64))


cdef bint _AVX2 = clda_cpu_has_avx2() != 0
# The uniforms' AVX-512 fill (the same doubles as the portable loop, which
# the MH module's tests hold it to).
cdef bint _WIDE_FILL = clda_uniforms_cpu_has_avx512() != 0
_KERNELS = ("auto", "avx2", "portable")
# The document kernels this CPU runs, widest first.
CPU_KERNELS = ("avx2",) * _AVX2 + ("portable",)
cdef str _KERNEL_SETTING = "auto"


def _set_kernel(str name):
    """Select the z-step kernel: ``"auto"`` or ``"avx2"`` (AVX2 as far as
    the CPU has it) or ``"portable"``.

    Returns the name of the previous setting. Both kernels give identical
    draws (tests hold them to that); the switch exists so that each one can
    be tested on a CPU that would pick the other.
    """
    global _KERNEL_SETTING
    if name not in _KERNELS:
        raise ValueError(f"unknown kernel {name!r}; use one of {', '.join(_KERNELS)}")
    old, _KERNEL_SETTING = _KERNEL_SETTING, name
    return old


def _kernel_name(Py_ssize_t row_length, Py_ssize_t n_components):
    """Name of the kernel ``gibbs_sweep`` uses for count rows of this length:
    ``"avx2"`` or ``"portable"``."""
    cdef Py_ssize_t K_pad = _BLOCK * ((n_components + _BLOCK - 1) // _BLOCK)
    if _KERNEL_SETTING == "portable" or row_length != K_pad or not _AVX2:
        return "portable"
    return "avx2"


cdef clda_sweep_document_fn _document_kernel(Py_ssize_t row_length, Py_ssize_t n_components):
    """The document z-step that :func:`_kernel_name` names."""
    if _kernel_name(row_length, n_components) == "avx2":
        return clda_sweep_document_avx2
    return clda_sweep_document_portable


def _sweep_scratch(Py_ssize_t n_blocks):
    """One thread's scratch buffers of the document kernel, as
    ``_set_scratch`` hands them to it: inv, invm and invp (float64, one per
    padded topic), r and p (float32, the same) and the running block sums
    (float32, eight per group of eight blocks, after eight leading zeros
    so that ``cum[-1] == 0`` and ``cum`` stays 32-byte aligned). Each on
    cache lines of its own (aligned for the vector loads, and no false
    sharing between the threads of n_jobs)."""
    cdef Py_ssize_t K_pad = _BLOCK * n_blocks
    cdef Py_ssize_t n_groups = (n_blocks + _BLOCK - 1) // _BLOCK
    return [_line_buffer(K_pad), _line_buffer(K_pad), _line_buffer(K_pad),
            _line_buffer(K_pad, np.float32), _line_buffer(K_pad, np.float32),
            _line_buffer(_BLOCK * (n_groups + 1), np.float32)]


cdef void _set_scratch(clda_sweep_ctx* ctx, list buf):
    """Point ``ctx``'s scratch fields at the buffers of ``_sweep_scratch``."""
    ctx.inv = <double*> np.PyArray_DATA(buf[0])
    ctx.invm = <double*> np.PyArray_DATA(buf[1])
    ctx.invp = <double*> np.PyArray_DATA(buf[2])
    ctx.r = <float*> np.PyArray_DATA(buf[3])
    ctx.p = <float*> np.PyArray_DATA(buf[4])
    ctx.cum = (<float*> np.PyArray_DATA(buf[5])) + _BLOCK


def padded_n_components(Py_ssize_t n_components):
    """Row length of a padded word-topic table: ``8 * ceil(n_components / 8)``."""
    return _BLOCK * ((n_components + _BLOCK - 1) // _BLOCK)


def gibbs_sweep(
    const int32_t[::1] words,
    const int64_t[::1] doc_ptr,
    const int32_t[::1] doc_group,
    int32_t[::1] z,
    int32_t[:, ::1] nwk,
    int32_t[:, ::1] ndk,
    int32_t[::1] nk,
    const double[:, ::1] prior,
    double eta,
    int64_t[:, ::1] tables,
    object bit_generator,
):
    """One systematic-scan collapsed Gibbs sweep over all tokens, in place.

    For each document ``d`` (with collection ``g = doc_group[d]``) and each
    of its tokens ``i`` in ``doc_ptr[d]:doc_ptr[d + 1]`` (word ``w``, topic
    ``z[i]``), the token is removed from the counts and its topic redrawn
    from the exact full conditional (the paper's eq. posterior-z; LDA is
    the case of a single row ``prior = alpha``)::

        f = np.float32                            # the weights are single precision
        r = f((ndk[d] + prior[g]) * (1.0 / (nk + V * eta)))
        p = np.zeros(8 * n_blocks, f)             # n_blocks = ceil(K / 8)
        p[:K] = r * (f(nwk[w, :K]) + f(eta))
        B = p.reshape(-1, 8)                      # blocks of eight topics
        T = ((B[:, 0] + B[:, 1]) + (B[:, 2] + B[:, 3])) + ((B[:, 4] + B[:, 5]) + (B[:, 6] + B[:, 7]))
        T = np.r_[T, np.zeros(-n_blocks % 8, f)].reshape(-1, 8)
        c, carry = [], f(0)                       # running block sums, eight at a time
        for t in T:
            c.append(scan8(t) + carry); carry = c[-1][7]
        c = np.concatenate(c)
        u = f(U[i]) * c[-1]
        b = min(np.count_nonzero(c <= u), n_blocks - 1)
        s = scan8(B[b])                           # running sums inside block b
        z[i] = min(8 * b + np.count_nonzero(s[:7] <= u - (c[b - 1] if b else f(0))), K - 1)

    with the prefix sums of eight values taken in three vector steps::

        def scan8(x):
            j = np.arange(8)
            x = x + np.where(j % 4 >= 1, np.roll(x, 1), 0)
            x = x + np.where(j % 4 >= 2, np.roll(x, 2), 0)
            return x + np.where(j >= 4, x[3], 0)

    that is, a draw from ``p / p.sum()`` by inversion, summed in blocks of
    eight topics so that the sums vectorize and the search is two counts
    of a compare's lanes, and the counts are restored with the new topic.
    The weights are float32 (eight per AVX2 instruction); the reciprocals
    of the totals and ``r`` are made in float64 and rounded once. The
    uniforms are those of the counter-based stream of ``_uniforms.h``,
    keyed by one draw of ``bit_generator`` when the sweep starts (a
    document's filled at once before its tokens, without a call per
    uniform)::

        key = bit_generator.random_raw()          # before any other draw
        U = mh_uniforms(key, 0, len(words))       # sklearn_clda._mh_sampling

    If ``tables`` has rows, AGS's ``sum_d s_jdk`` (eq. aux-pi) is added to
    ``tables[g, k]``: the sum over the collection's documents of Antoniak
    table counts ``s_jdk = 1 + sum_{l=1}^{n-1} Bernoulli(a / (a + l))`` for
    ``n = ndk[d, k] > 0`` and ``a = prior[g, k]``, each document's counts
    taken when its tokens are done. Only the sum is needed, and a sum of
    independent Bernoullis with the same ``l`` is a binomial, so it is
    drawn exactly as (``M = 64``)::

        # after each document d: n = ndk[d], topic order
        big = (n >= M)                  # rare: drawn right away, in topic order
        tables[g, big] += crp_tables(n[big], prior[g, big], bit_generator)
        # after the sweep (a document's row does not change once its tokens
        # are done, so the final ndk holds the counts of every document):
        hist = np.zeros((G, K, M), dtype=np.int64)  # docs of g with ndk[d, k] = n < M
        np.add.at(hist, (doc_group[:, None], np.arange(K), np.minimum(ndk, M - 1)), ndk < M)
        tail = np.cumsum(hist[:, :, ::-1], axis=2)[:, :, ::-1]  # docs with n' >= n
        c = tail[:, :, 2:]                    # docs with n' > l, for l = 1..M-2
        p = prior[:, :, None] / (prior[:, :, None] + np.arange(1, M - 1))
        cells = c > 0
        extra = np.zeros(c.shape, dtype=np.int64)
        extra[cells] = Generator(bit_generator).binomial(c[cells], p[cells])
        tables += tail[:, :, 1] + extra.sum(axis=2)

    The kernel never builds ``hist``: the cells with ``c > 0`` of a
    ``(g, k)`` are exactly ``l = 1 .. max_n - 1``, with ``max_n`` the
    largest count below ``M`` of the collection's documents, so it lays
    them out compactly in the same (C) order and draws them as the same
    single binomial call would (see ``_add_small_tables``); each
    document's counts are read once, when its tokens are done (the draws
    ``>= M`` then, the others noted for the binomial step). Time and memory are
    ``O(n_tokens + n_docs * K + G * K)``, whatever the number of
    collections.

    ``nwk`` has ``K`` columns, or ``padded_n_components(K)`` columns whose
    extra ones are zero (they stay zero). The padded layout lets the AVX2
    kernel load every row in whole groups of eight topics; with ``K``
    columns (``K`` not a multiple of 8) the portable kernel runs. Both give
    identical draws.

    The arrays are trusted to be consistent (the estimators build them):
    ``0 <= words < V``, ``0 <= z < K``, ``0 <= doc_group < G``, counts equal
    to the tallies of ``z``, ``prior > 0`` and ``eta > 0``.

    Parameters
    ----------
    words : ndarray of shape (n_tokens,), int32
    doc_ptr : ndarray of shape (n_docs + 1,), int64
    doc_group : ndarray of shape (n_docs,), int32
    z : ndarray of shape (n_tokens,), int32, modified
    nwk : ndarray of shape (V, K) or (V, padded_n_components(K)), int32, modified
    ndk : ndarray of shape (n_docs, K), int32, modified
    nk : ndarray of shape (K,), int32, modified
    prior : ndarray of shape (G, K), float64
        Document-topic Dirichlet parameter of each collection
        (``gamma * pi_j`` for cLDA, ``alpha`` for LDA).
    eta : float
        Symmetric topic-word prior.
    tables : ndarray of shape (G, K) or (0, K), int64, modified
        Accumulator for the Antoniak table counts; no draws if it has no rows.
    bit_generator : numpy.random.BitGenerator
    """
    cdef Py_ssize_t n_docs = doc_ptr.shape[0] - 1
    cdef Py_ssize_t K = nk.shape[0]
    cdef Py_ssize_t V = nwk.shape[0]
    cdef Py_ssize_t n_blocks = (K + _BLOCK - 1) // _BLOCK
    cdef Py_ssize_t K_pad = n_blocks * _BLOCK
    if ((nwk.shape[1] != K and nwk.shape[1] != K_pad) or ndk.shape[1] != K
            or prior.shape[1] != K or ndk.shape[0] != n_docs
            or doc_group.shape[0] != n_docs or z.shape[0] != words.shape[0]
            or tables.shape[1] != K
            or (tables.shape[0] > 0 and tables.shape[0] != prior.shape[0])):
        raise ValueError("inconsistent array shapes passed to gibbs_sweep")
    if n_docs > 0 and doc_ptr[n_docs] != words.shape[0]:
        raise ValueError("doc_ptr does not cover the token arrays")
    if not _padding_is_zero(nwk, K):
        raise ValueError("the padding columns of nwk must be zero")
    cdef bint draw_tables = tables.shape[0] > 0
    cdef double veta = V * eta
    cdef int64_t n_tokens = words.shape[0]
    cdef clda_sweep_document_fn sweep_document = _document_kernel(nwk.shape[1], K)
    # inv[k] = 1 / (nk + V eta); invm[k] = 1 / (nk - 1 + V eta), the value
    # when a token of topic k is left out; invp[k] = 1 / (nk + 1 + V eta);
    # r[k] = (ndk[d, k] + prior[g, k]) * inv[k], the document-and-topic part
    # of the weights; p the weights; cum[-1] = 0 and cum[b] the running
    # block sums; u_buf a document's uniforms.
    scratch = _sweep_scratch(n_blocks)
    max_len = _longest_document(doc_ptr)
    u_arr = _line_buffer(max(max_len, 1))
    cdef double* u_buf = <double*> np.PyArray_DATA(u_arr)
    cdef bitgen_t* rng = _get_bitgen(bit_generator)
    cdef uint64_t key
    cdef Py_ssize_t d, k
    cdef int64_t i0, i1, next_word
    cdef int32_t g
    cdef int32_t* ndk_d
    cdef const double* prior_g
    cdef clda_sweep_ctx ctx
    cdef _Tables td
    cdef int status = 0
    if n_tokens == 0:  # nothing to move and no tables to draw
        return
    ctx.K = K
    ctx.n_blocks = n_blocks
    ctx.n_tokens = n_tokens
    ctx.words = &words[0]
    ctx.z = &z[0]
    ctx.nwk = &nwk[0, 0]
    ctx.nwk_stride = nwk.strides[0] // sizeof(int32_t)
    ctx.nk = &nk[0]
    ctx.eta = eta
    ctx.veta = veta
    _set_scratch(&ctx, scratch)
    with bit_generator.lock, nogil:
        key = rng.next_uint64(rng.state)
        if draw_tables:
            status = _tables_start(&td, prior.shape[0] * K)
        clda_set_reciprocals(&nk[0], K, veta, ctx.inv, ctx.invm, ctx.invp)
        for d in range(n_docs):
            g = doc_group[d]
            ndk_d = &ndk[d, 0]
            prior_g = &prior[g, 0]
            i0 = doc_ptr[d]
            i1 = doc_ptr[d + 1]
            clda_fill_uniforms(u_buf, i1 - i0, key, i0, _WIDE_FILL)
            next_word = ctx.words[i1] if i1 < n_tokens else -1
            sweep_document(&ctx, i0, i1, ndk_d, prior_g, u_buf, next_word)
            if draw_tables and status == 0:  # its row final and in cache: draw the
                # counts >= _CRP_HIST, note the others for the binomial step
                status = _scan_row(ndk_d, K, g, prior_g, tables, td.top, rng, &td.kept)
        if draw_tables:
            status = _tables_finish(&td, status, prior, tables, rng)
    if status != 0:
        raise MemoryError()


cdef bint _padding_is_zero(const int32_t[:, ::1] nwk, Py_ssize_t K) noexcept nogil:
    """``not np.any(nwk[:, K:])``, without a temporary: ``gibbs_sweep``
    checks it on every call, and the padded table is ``V`` rows."""
    cdef Py_ssize_t w, k
    cdef int32_t seen = 0
    for w in range(nwk.shape[0]):
        for k in range(K, nwk.shape[1]):
            seen |= nwk[w, k]
    return seen == 0


cdef int64_t _longest_document(const int64_t[::1] doc_ptr) noexcept nogil:
    """``np.max(np.diff(doc_ptr))``, 0 without documents."""
    cdef Py_ssize_t d
    cdef int64_t longest = 0
    for d in range(doc_ptr.shape[0] - 1):
        longest = max(longest, doc_ptr[d + 1] - doc_ptr[d])
    return longest


def count_assignments(
    const int32_t[::1] words,
    const int64_t[::1] doc_ptr,
    const int32_t[::1] z,
    int32_t[:, :] nwk,
    int32_t[:, ::1] ndk,
    int32_t[::1] nk,
    Py_ssize_t n_features=-1,
):
    """Add the count tables of the assignments ``z`` to ``nwk``, ``ndk`` and ``nk``.

    Equivalent to::

        doc = np.repeat(np.arange(n_docs), np.diff(doc_ptr))
        np.add.at(nwk, (words, z), 1)
        np.add.at(ndk, (doc, z), 1)
        nk += np.bincount(z, minlength=K)

    in place, with no temporary the size of a table (``nwk`` may be a view
    of padded rows). ``nwk`` may be None (a state without a word-topic
    table), with ``n_features`` the range of ``words``. Raises
    ``ValueError`` if a word or topic is out of range, before any count
    changes.
    """
    cdef Py_ssize_t n_docs = doc_ptr.shape[0] - 1, K = nk.shape[0]
    cdef Py_ssize_t V = n_features if nwk is None else nwk.shape[0]
    cdef bint table = nwk is not None
    cdef int64_t n_tokens = words.shape[0], i
    cdef Py_ssize_t d
    if (z.shape[0] != n_tokens or (table and nwk.shape[1] != K) or ndk.shape[1] != K
            or ndk.shape[0] != n_docs or n_docs < 0 or V < 0
            or (n_docs > 0 and (doc_ptr[0] != 0 or doc_ptr[n_docs] != n_tokens))):
        raise ValueError("inconsistent array shapes passed to count_assignments")
    if n_docs > 0 and np.any(np.diff(np.asarray(doc_ptr)) < 0):
        raise ValueError("doc_ptr must be non-decreasing")
    if n_tokens > 0:
        if np.asarray(words).min() < 0 or np.asarray(words).max() >= V:
            raise ValueError("a word index is out of range of nwk's rows")
        if np.asarray(z).min() < 0 or np.asarray(z).max() >= K:
            raise ValueError("a topic in z is out of range of the tables' columns")
    with nogil:
        for d in range(n_docs):
            for i in range(doc_ptr[d], doc_ptr[d + 1]):
                if table:
                    nwk[words[i], z[i]] += 1
                ndk[d, z[i]] += 1
                nk[z[i]] += 1


def document_tables(
    const int32_t[:, ::1] ndk,
    const int32_t[::1] doc_group,
    const double[:, ::1] prior,
    int64_t[:, ::1] tables,
    object bit_generator,
):
    """AGS's Antoniak table counts of documents, drawn from their final counts.

    The draws of ``gibbs_sweep`` with ``tables`` (see there), made after a
    sweep instead of during it: every document's counts ``>= M`` first, in
    document and topic order, then the aggregate step of the smaller ones::

        for d in range(n_docs):
            g = doc_group[d]; big = ndk[d] >= M
            tables[g, big] += crp_tables(ndk[d, big], prior[g, big], bit_generator)
        # then the binomial step of gibbs_sweep's docstring on ndk < M

    Both steps come from one pass over the counts (see
    :func:`_add_small_tables`). The partitioned sweep uses it once per
    document block, whose counts are final only when every sub-step is
    done.
    """
    _check_table_shapes(ndk, doc_group, prior, tables, "document_tables")
    _draw_tables(ndk, doc_group, prior, tables, bit_generator, True)


def _add_small_tables(
    const int32_t[:, ::1] ndk,
    const int32_t[::1] doc_group,
    const double[:, ::1] prior,
    int64_t[:, ::1] tables,
    object bit_generator,
):
    """Add the Antoniak sums of the counts ``0 < ndk[d, k] < 64`` to ``tables``.

    The step after the sweep in ``gibbs_sweep``'s NumPy equivalent, with the
    histogram's cells laid out compactly: for each ``(g, k)`` in C order,
    the cells ``l = 1 .. max_n - 1`` (``max_n`` the largest count below 64
    of the collection's documents), ``c = #docs with l < n < 64`` and ``p
    = a / (a + l)``. These are the cells with ``c > 0`` of the dense
    histogram, in its order, and drawn in that order by NumPy's binomial
    (``_draw_cells``), so the values are the same. There are at most
    ``n_tokens`` of them.

    One pass reads the counts (:func:`_scan_counts`, which skips runs of
    zeros a block at a time: at many topics nearly all of a document's
    counts are zero) and keeps each count ``2 <= n < 64`` with its
    ``(g, k)``; the cells are then filled from those, so the time is
    ``O(n_docs * K)`` for the pass, at memory speed, plus ``O(nonzeros +
    G * K * 64)``.
    """
    _check_table_shapes(ndk, doc_group, prior, tables, "_add_small_tables")
    _draw_tables(ndk, doc_group, prior, tables, bit_generator, False)


def list_tables(
    const uint32_t[::1] entries,
    int shift,
    const int32_t[::1] n,
    const int64_t[::1] off,
    int64_t d0,
    int64_t d1,
    const int32_t[::1] doc_group,
    const double[:, ::1] prior,
    int64_t[:, ::1] tables,
    object bit_generator,
):
    """:func:`document_tables` of documents ``d0:d1`` from their topic lists
    (the sparse kernel's): document ``d``'s list is ``entries[off[d]:
    off[d] + n[d]]``, each entry ``count << shift | topic`` (the topics
    distinct, in any order, the counts positive). The same draws, bit for
    bit, as::

        document_tables(ndk[d0:d1], doc_group[d0:d1], prior, tables, bit_generator)

    with ``ndk`` the dense counts of the lists, in ``O(list entries)``
    instead of a pass over ``(d1 - d0) * K`` counts: the counts ``>= 64``
    of a document are drawn in topic order (sorted, they are few), the
    smaller ones only enter the histogram of the binomial step, whose order
    does not matter. Raises ``ValueError`` on lists out of range.
    """
    cdef Py_ssize_t K = prior.shape[1], G = prior.shape[0]
    if (tables.shape[0] != G or tables.shape[1] != K or not 1 <= shift <= 31
            or K > (1 << shift) or not 0 <= d0 <= d1 <= n.shape[0] or d1 > off.shape[0] - 1
            or d1 > doc_group.shape[0]):
        raise ValueError("inconsistent array shapes passed to list_tables")
    if d0 == d1:
        return
    cdef int bad
    with nogil:
        bad = _check_lists(entries, shift, n, off, d0, d1, doc_group, K, G)
    if bad:
        raise ValueError(("a topic list runs past its document's entries",
                          "a topic list holds a topic out of range or a count below 1",
                          "a document's collection has no row in prior")[bad - 1])
    cdef _ListCounts lists
    lists.entries, lists.shift, lists.n, lists.off = &entries[0], shift, &n[0], &off[0]
    lists.d0, lists.d1 = d0, d1
    _draw_tables(None, doc_group, prior, tables, bit_generator, True, &lists)


def _check_table_shapes(ndk, doc_group, prior, tables, str name):
    if (ndk.shape[1] != prior.shape[1] or doc_group.shape[0] != ndk.shape[0]
            or tables.shape[0] != prior.shape[0] or tables.shape[1] != prior.shape[1]):
        raise ValueError(f"inconsistent array shapes passed to {name}")


cdef struct _Kept:
    # The counts 2 <= n < _CRP_HIST of a pass, each as (g * K + k) *
    # _CRP_HIST + n, in a buffer that doubles when full.
    int64_t* code
    int64_t n
    int64_t cap


cdef int _reserve(_Kept* kept, int64_t more) noexcept nogil:
    """Room for ``more`` codes after the kept ones (the buffer doubles until
    it has it); returns -1 (and keeps the buffer) when memory runs out."""
    cdef int64_t cap = kept.cap
    cdef int64_t* grown
    while kept.n + more > cap:
        cap *= 2
    if cap != kept.cap:
        grown = <int64_t*> realloc(kept.code, cap * sizeof(int64_t))
        if grown == NULL:
            return -1
        kept.code = grown
        kept.cap = cap
    return 0


cdef int _keep(_Kept* kept, int64_t code) noexcept nogil:
    """Append ``code``; returns -1 (and keeps nothing) when memory runs out."""
    if _reserve(kept, 1) != 0:
        return -1
    kept.code[kept.n] = code
    kept.n += 1
    return 0


cdef int _check_lists(
    const uint32_t[::1] entries, int shift, const int32_t[::1] n,
    const int64_t[::1] off, int64_t d0, int64_t d1, const int32_t[::1] doc_group,
    Py_ssize_t K, Py_ssize_t G,
) noexcept nogil:
    """0 when the lists of documents ``d0:d1`` are in range; else 1 (a list
    past its entries), 2 (a topic or count) or 3 (a collection)."""
    cdef int64_t d, m
    for d in range(d0, d1):
        if n[d] < 0 or off[d] < 0 or off[d] + n[d] > off[d + 1] or off[d + 1] > entries.shape[0]:
            return 1
        for m in range(off[d], off[d] + n[d]):
            if (entries[m] & ((1u << shift) - 1u)) >= <uint32_t> K or entries[m] >> shift == 0:
                return 2
        if doc_group[d] < 0 or doc_group[d] >= G:
            return 3
    return 0


cdef struct _ListCounts:
    # The documents d0:d1 of the sparse kernel's topic lists (list_tables):
    # entries count << shift | topic.
    const uint32_t* entries
    int shift
    const int32_t* n
    const int64_t* off
    int64_t d0
    int64_t d1


cdef void _draw_tables(
    const int32_t[:, ::1] ndk, const int32_t[::1] doc_group, const double[:, ::1] prior,
    int64_t[:, ::1] tables, object bit_generator, bint big, const _ListCounts* lists=NULL,
) except *:
    """The table draws of :func:`document_tables` (``big``: the counts
    ``>= 64`` too, by ``_crp_tables`` in document and topic order) or of
    :func:`_add_small_tables` (those counts skipped); of :func:`list_tables`
    when ``lists`` is not NULL (``ndk`` unused). One release of the GIL,
    under the generator's lock (:func:`_table_draws`)."""
    cdef bitgen_t* rng = _get_bitgen(bit_generator)
    cdef int status
    with bit_generator.lock, nogil:
        status = _table_draws(ndk, doc_group, prior, tables, rng, big, lists)
    if status != 0:
        raise MemoryError()


cdef int _table_draws(
    const int32_t[:, ::1] ndk, const int32_t[::1] doc_group, const double[:, ::1] prior,
    int64_t[:, ::1] tables, bitgen_t* rng, bint big, const _ListCounts* lists,
) noexcept nogil:
    """:func:`_draw_tables` without the GIL: one pass over the counts
    (``_scan_counts``, or ``_scan_lists`` when ``lists`` is not NULL), then
    the binomial step on the cells it found (``_draw_cells``). Returns 0,
    or -1 when memory runs out (``tables`` may then hold part of the
    draws)."""
    cdef _Tables td
    cdef int status = _tables_start(&td, prior.shape[0] * prior.shape[1])
    if status == 0:
        if lists != NULL:
            status = _scan_lists(lists, doc_group, prior, tables, td.top, rng if big else NULL,
                                 &td.kept)
        else:
            status = _scan_counts(ndk, doc_group, prior, tables, td.top, rng if big else NULL,
                                  &td.kept)
    return _tables_finish(&td, status, prior, tables, rng)


cdef struct _Tables:
    # What a pass over the counts leaves for the binomial step: the largest
    # count below _CRP_HIST of each (g, k) (top, G * K entries) and the
    # kept counts 2 <= n < _CRP_HIST.
    uint8_t* top
    _Kept kept


cdef int _tables_start(_Tables* td, Py_ssize_t GK) noexcept nogil:
    """Empty ``top`` and kept counts for ``GK`` cells; -1 when memory runs
    out (``_tables_finish`` then frees what was allocated)."""
    td.top = <uint8_t*> calloc(GK if GK > 0 else 1, sizeof(uint8_t))
    td.kept.n, td.kept.cap = 0, 4096
    td.kept.code = <int64_t*> malloc(td.kept.cap * sizeof(int64_t))
    return 0 if td.top != NULL and td.kept.code != NULL else -1


cdef int _tables_finish(
    _Tables* td, int status, const double[:, ::1] prior, int64_t[:, ::1] tables,
    bitgen_t* rng,
) noexcept nogil:
    """The binomial step on the cells of the pass (``status`` 0: it
    completed), then the buffers freed. Returns 0, or -1 when memory ran
    out, in the pass or here."""
    cdef Py_ssize_t GK = prior.shape[0] * prior.shape[1]
    cdef int64_t n_cells
    cdef int64_t* counts = NULL
    cdef int64_t* offsets = NULL
    if status == 0:
        status = -1
        offsets = <int64_t*> malloc((GK + 1) * sizeof(int64_t))
        if offsets != NULL:
            n_cells = _cell_offsets(td.top, GK, offsets)
            counts = <int64_t*> calloc(n_cells if n_cells > 0 else 1, sizeof(int64_t))
            if counts != NULL:
                _draw_cells(&td.kept, prior, offsets, counts, tables, rng)
                status = 0
    free(counts)
    free(offsets)
    free(td.kept.code)
    free(td.top)
    return status


cdef inline bint _zeros16(const int32_t* c) noexcept nogil:
    """Whether ``c[0:16]`` are all zero (one OR, which compilers vectorize)."""
    return (c[0] | c[1] | c[2] | c[3] | c[4] | c[5] | c[6] | c[7] | c[8] | c[9] | c[10]
            | c[11] | c[12] | c[13] | c[14] | c[15]) == 0


def doc_proportions(
    const int32_t[:, ::1] ndk,
    const int32_t[::1] doc_group,
    const double[:, ::1] prior,
    double[:, ::1] out,
    bint add=False,
):
    """Posterior mean topic proportions of documents given their topic
    counts, into ``out`` (``add``: added to it), one pass with no
    temporaries. Equivalent, bit for bit, to::

        total = ndk.sum(axis=1) + prior.sum(axis=1)[doc_group]
        theta = (ndk + prior[doc_group]) / total[:, None]
        out[...] = theta            # or: out += theta

    (the row sum of ``ndk + prior[g]``, taken as the document's length plus
    the collection's prior mass).
    """
    cdef Py_ssize_t n_docs = ndk.shape[0], K = ndk.shape[1], d, k
    if (doc_group.shape[0] != n_docs or prior.shape[1] != K or out.shape[0] != n_docs
            or out.shape[1] != K):
        raise ValueError("inconsistent array shapes passed to doc_proportions")
    if n_docs and not (0 <= np.min(doc_group) and np.max(doc_group) < prior.shape[0]):
        raise ValueError("a document's collection has no row in prior")
    cdef const double[::1] mass = np.asarray(prior).sum(axis=1)
    cdef int64_t length
    cdef int32_t g
    cdef double total
    with nogil:
        for d in range(n_docs):
            g = doc_group[d]
            length = 0
            for k in range(K):
                length += ndk[d, k]
            total = <double> length + mass[g]
            if add:
                for k in range(K):
                    out[d, k] += (ndk[d, k] + prior[g, k]) / total
            else:
                for k in range(K):
                    out[d, k] = (ndk[d, k] + prior[g, k]) / total


def positive_cells(const int32_t[:, :] table):
    """``np.nonzero(table > 0)`` of an int32 table whose rows are contiguous
    (any row stride: a view of padded rows), as int64 arrays in row-major
    order: a counting pass, then a filling one, each skipping runs of 16
    zeros with one OR (at many topics nearly all counts are zero)."""
    if table.shape[1] > 1 and table.strides[1] != sizeof(int32_t):
        raise ValueError("positive_cells needs rows of contiguous int32")
    cdef int64_t n
    with nogil:
        n = _positive_scan(table, NULL, NULL)
    rows_arr = np.empty(n, dtype=np.int64)
    cols_arr = np.empty(n, dtype=np.int64)
    cdef int64_t[::1] rows = rows_arr, cols = cols_arr
    if n:
        with nogil:
            _positive_scan(table, &rows[0], &cols[0])
    return rows_arr, cols_arr


cdef int64_t _positive_scan(const int32_t[:, :] table, int64_t* rows,
                            int64_t* cols) noexcept nogil:
    """The number of positive cells of ``table``, row by row, blocks of 16
    zeros skipped; also their row and column when ``rows`` is not NULL."""
    cdef Py_ssize_t K = table.shape[1], i, k, k0
    cdef int64_t n = 0
    for i in range(table.shape[0]):
        for k0 in range(0, K, 16):
            if k0 + 16 <= K and _zeros16(&table[i, k0]):
                continue
            for k in range(k0, min(k0 + 16, K)):
                if table[i, k] > 0:
                    if rows != NULL:
                        rows[n] = i
                        cols[n] = k
                    n += 1
    return n


cdef int _scan_counts(
    const int32_t[:, ::1] ndk, const int32_t[::1] doc_group, const double[:, ::1] prior,
    int64_t[:, ::1] tables, uint8_t* top, bitgen_t* rng, _Kept* kept,
) noexcept nogil:
    """The counts in document and topic order (``_scan_row`` of each
    document). Returns -1 when memory runs out."""
    cdef Py_ssize_t d, K = ndk.shape[1]
    cdef int32_t g
    for d in range(ndk.shape[0]):
        g = doc_group[d]
        if _scan_row(&ndk[d, 0], K, g, &prior[g, 0], tables, top, rng, kept) != 0:
            return -1
    return 0


cdef int _scan_row(
    const int32_t* row, Py_ssize_t K, int32_t g, const double* prior_g,
    int64_t[:, ::1] tables, uint8_t* top, bitgen_t* rng, _Kept* kept,
) noexcept nogil:
    """One document's counts (of collection ``g``) in topic order, blocks of
    16 zeros skipped: ``n >= 64`` drawn by ``_crp_tables`` (unless ``rng``
    is NULL); for ``1 <= n < 64``, ``tables[g, k] += 1`` and ``top[g * K +
    k]`` the largest such ``n``, and ``2 <= n < 64`` kept. Returns -1 when
    memory runs out.

    A block with a count in it is read once without branches into the
    positions of its nonzero counts (``_nonzero_positions``), and each of
    those is handled without a branch on its value (``_small_count``): a
    branch per count (zero or not, kept or not, a new ``top`` or not) is
    mispredicted often, since the values are random."""
    cdef Py_ssize_t k, k0, k1
    cdef int32_t n
    cdef int32_t pos[16]
    cdef int i, m
    for k0 in range(0, K, 16):
        k1 = min(k0 + 16, K)
        if k1 == k0 + 16 and _zeros16(row + k0):
            continue
        m = _nonzero_positions(row + k0, k1 - k0, pos)
        if _reserve(kept, m) != 0:
            return -1
        for i in range(m):
            k = k0 + pos[i]
            n = row[k]
            if n >= _CRP_HIST:
                if rng != NULL:
                    tables[g, k] += _crp_tables(n, prior_g[k], rng)
                continue
            _small_count(g, k, n, K, tables, top, kept)
    return 0


cdef inline int _nonzero_positions(const int32_t* c, Py_ssize_t n, int32_t* pos) noexcept nogil:
    """The positions ``j < n`` of ``c[j] != 0``, in order, into ``pos``;
    returns how many: ``np.flatnonzero(c[:n])``. Every position is stored
    and the count advances past the nonzero ones only, so there is no
    branch on the values."""
    cdef int m = 0
    cdef Py_ssize_t j
    for j in range(n):
        pos[m] = <int32_t> j
        m += c[j] != 0
    return m


cdef inline void _small_count(int32_t g, Py_ssize_t k, int32_t n, Py_ssize_t K,
                              int64_t[:, ::1] tables, uint8_t* top,
                              _Kept* kept) noexcept nogil:
    """A count ``1 <= n < 64``: its first table, ``top``, and kept when ``n >= 2``
    (the caller has reserved the room). No branch on ``n``: the code is
    stored either way and counted only when ``n >= 2``, and ``top`` takes
    the larger value."""
    tables[g, k] += 1
    cdef uint8_t* t = &top[g * K + k]
    t[0] = <uint8_t> n if n > t[0] else t[0]
    kept.code[kept.n] = (g * K + k) * _CRP_HIST + n
    kept.n += n >= 2


cdef int _scan_lists(
    const _ListCounts* lists, const int32_t[::1] doc_group, const double[:, ::1] prior,
    int64_t[:, ::1] tables, uint8_t* top, bitgen_t* rng, _Kept* kept,
) noexcept nogil:
    """:func:`_scan_counts` of topic lists: the same draws, a document's
    counts ``>= 64`` taken in topic order (gathered, then sorted by
    insertion: a document has at most length / 64 of them)."""
    cdef Py_ssize_t K = prior.shape[1]
    cdef int64_t d, m, i, j
    cdef int32_t g, k, c
    cdef const uint32_t* entries
    cdef uint32_t tmask = (1u << lists.shift) - 1u
    cdef _Kept big
    big.n, big.cap = 0, 16
    big.code = <int64_t*> malloc(big.cap * sizeof(int64_t))
    if big.code == NULL:
        return -1
    for d in range(lists.d0, lists.d1):
        g = doc_group[d]
        entries = lists.entries + lists.off[d]
        big.n = 0
        if _reserve(kept, lists.n[d]) != 0:
            free(big.code)
            return -1
        for m in range(lists.n[d]):
            k, c = <int32_t> (entries[m] & tmask), <int32_t> (entries[m] >> lists.shift)
            if c >= _CRP_HIST:
                if _keep(&big, ((<int64_t> k) << 31) | c) != 0:
                    free(big.code)
                    return -1
            else:
                _small_count(g, k, c, K, tables, top, kept)
        for i in range(1, big.n):  # topic order (the codes order by topic first)
            j = i
            while j > 0 and big.code[j - 1] > big.code[j]:
                big.code[j - 1], big.code[j] = big.code[j], big.code[j - 1]
                j -= 1
        if rng != NULL:
            for i in range(big.n):
                k, c = <int32_t> (big.code[i] >> 31), <int32_t> (big.code[i] & 0x7fffffff)
                tables[g, k] += _crp_tables(c, prior[g, k], rng)
    free(big.code)
    return 0


cdef int64_t _cell_offsets(const uint8_t* top, Py_ssize_t GK, int64_t* offsets) noexcept nogil:
    """Start of each ``(g, k)``'s ``top - 1`` cells in C order; returns their total."""
    cdef Py_ssize_t i
    offsets[0] = 0
    for i in range(GK):
        offsets[i + 1] = offsets[i] + (top[i] - 1 if top[i] > 1 else 0)
    return offsets[GK]


cdef void _draw_cells(
    const _Kept* kept, const double[:, ::1] prior, const int64_t* offsets,
    int64_t* counts, int64_t[:, ::1] tables, bitgen_t* rng,
) noexcept nogil:
    """The binomial step: ``counts`` (zeroed) becomes the documents with
    ``l < n < 64`` of each cell, and ``tables[g, k]`` gets the sum of its
    cells' ``Binomial(counts[j], a / (a + l))`` draws, ``a = prior[g, k]``.
    The cells are drawn in their (C) order by NumPy's own binomial
    (``random_binomial``), so the values are those of
    ``Generator(rng).binomial(counts, p)`` on all the cells at once."""
    cdef Py_ssize_t k, g, K = prior.shape[1]
    cdef int64_t i, j, lo, hi, acc, code
    cdef double a
    cdef binomial_t binomial
    memset(&binomial, 0, sizeof(binomial))
    for i in range(kept.n):  # one at l = n - 1 per kept count ...
        code = kept.code[i]
        counts[offsets[code // _CRP_HIST] + code % _CRP_HIST - 2] += 1
    for g in range(prior.shape[0]):
        for k in range(K):
            lo, hi = offsets[g * K + k], offsets[g * K + k + 1]
            acc = 0
            for j in range(hi - 1, lo - 1, -1):  # ... then sums from the top down
                acc += counts[j]
                counts[j] = acc
            a = prior[g, k]
            acc = 0
            for j in range(lo, hi):
                acc += random_binomial(rng, a / (a + <double> (j - lo + 1)), counts[j],
                                       &binomial)
            tables[g, k] += acc


def fold_in(
    const int64_t[::1] indptr,
    const int32_t[::1] indices,
    const double[::1] counts,
    const int32_t[::1] doc_group,
    const double[:, ::1] prior,
    const double[::1] floor,
    const int64_t[::1] word_ptr,
    const int32_t[::1] word_topic,
    const double[::1] word_val,
    int max_iter,
    double tol,
    double[:, ::1] theta,
    int32_t[::1] stop=None,
):
    """Deterministic doc-topic inference with the topics held fixed.

    The topics come as a floor per topic and each word's part above it
    (:func:`topic_word_parts`): ``phi[w, k] = floor[k] + v`` for the pairs
    ``(k, v)`` of ``word_topic[word_ptr[w]:word_ptr[w + 1]]`` and
    ``word_val[...]``, ``floor[k]`` elsewhere. For each document ``d`` (CSR
    row), starting from the prior mean, iterate the fixed point of the
    expected topic counts until the mean absolute change of ``theta[d]`` is
    below ``tol`` or ``max_iter`` is reached; equal, up to rounding, to::

        t = prior[g] / prior[g].sum()
        for _ in range(max_iter):
            r = t * phi[w_d]                  # (n_words_d, K)
            r /= r.sum(axis=1, keepdims=True)
            new = prior[g] + c_d @ r
            new /= new.sum()
            done = np.abs(new - t).mean() < tol
            t = new
            if done: break
        theta[d] = t

    Each iteration costs ``O(K + sum of the document's words' parts)``
    instead of ``O(n_words_d * K)``: ``t . phi[w]`` is ``t . floor`` (once
    per iteration) plus the word's part, and ``c_d @ r`` is ``floor`` times
    the sum of ``c / (t . phi[w])`` plus the parts, scattered. A word whose
    ``t . phi[w]`` is not positive is skipped. An empty document gets the
    prior mean. Documents are independent, so a batch gives the same rows
    as one document at a time.

    Every few milliseconds of work the kernel runs Python's signal
    handlers (so Ctrl-C raises ``KeyboardInterrupt`` from here, in the
    main thread) and reads ``stop[0]``: when another thread has set it to
    a nonzero value, the kernel returns at once, leaving the rows it did
    not finish undefined.

    Parameters
    ----------
    indptr, indices, counts : CSR arrays of the count matrix
        (int64, int32, float64), ``n_docs = len(indptr) - 1``.
    doc_group : ndarray of shape (n_docs,), int32
        Row of ``prior`` for each document.
    prior : ndarray of shape (G, K), float64, positive
    floor, word_ptr, word_topic, word_val : the topics, from
        :func:`topic_word_parts` (``V = len(word_ptr) - 1`` words).
    max_iter : int
    tol : float
    theta : ndarray of shape (n_docs, K), float64, written
    stop : ndarray of shape (1,), int32, optional
        Set to nonzero by another thread to abandon the call.
    """
    cdef Py_ssize_t n_docs = indptr.shape[0] - 1
    cdef Py_ssize_t K = floor.shape[0]
    if (theta.shape[0] != n_docs or theta.shape[1] != K or prior.shape[1] != K
            or doc_group.shape[0] != n_docs):
        raise ValueError("inconsistent array shapes passed to fold_in")
    _check_word_parts(indices, K, word_ptr, word_topic, word_val)
    new_arr = np.empty(K, dtype=np.float64)
    cdef double[::1] new = new_arr
    cdef int32_t no_stop = 0
    cdef int32_t* stop_p = &stop[0] if stop is not None else &no_stop
    with nogil:
        _fold_in(indptr, indices, counts, doc_group, prior, floor, word_ptr, word_topic,
                 word_val, max_iter, tol, theta, new, stop_p)


ctypedef fused _real:
    float
    double


cdef inline void _row_lowest_total(const _real* row, Py_ssize_t V, double* lowest,
                                   double* total) noexcept nogil:
    """A row's smallest entry and its sum in eight interleaved partial sums
    (``s[j] = row[j] + row[j + 8] + ...`` from the left, then
    ``((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))``), in one pass."""
    cdef double s[8]
    cdef double m[8]
    cdef double x
    cdef Py_ssize_t w, j, V8 = V - V % 8
    for j in range(8):
        s[j] = 0.0
        m[j] = <double> row[0]
    for w in range(0, V8, 8):
        for j in range(8):
            x = <double> row[w + j]
            s[j] += x
            m[j] = x if x < m[j] else m[j]
    for w in range(V8, V):
        x = <double> row[w]
        s[w - V8] += x
        m[w - V8] = x if x < m[w - V8] else m[w - V8]
    total[0] = ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]))
    x = m[0]
    for j in range(1, 8):
        x = m[j] if m[j] < x else x
    lowest[0] = x


cdef int _list_row(const _real* row, const int32_t* ids, Py_ssize_t n_ids, double lowest,
                   double total, double floor, int64_t* n, int64_t* cap, int32_t** words,
                   double** vals) noexcept nogil:
    """Append the row's entries above ``lowest`` among the words ``ids``
    (each ``row[w] / total - floor``) to the growing lists; -1 when memory
    runs out."""
    cdef Py_ssize_t j
    cdef int32_t w
    cdef void* grown
    for j in range(n_ids):
        w = ids[j]
        if row[w] > lowest:
            if n[0] == cap[0]:
                cap[0] = 2 * cap[0]
                grown = realloc(words[0], cap[0] * sizeof(int32_t))
                if grown == NULL:
                    return -1
                words[0] = <int32_t*> grown
                grown = realloc(vals[0], cap[0] * sizeof(double))
                if grown == NULL:
                    return -1
                vals[0] = <double*> grown
            words[0][n[0]] = w
            vals[0][n[0]] = <double> row[w] / total - floor
            n[0] += 1
    return 0


def _checked_words(words, Py_ssize_t V):
    """``words`` as sorted distinct int32 ids in ``[0, V)`` (``None``: all)."""
    if words is None:
        return np.arange(V, dtype=np.int32)
    ids = np.asarray(words)
    if ids.ndim != 1 or (len(ids) and (ids.dtype.kind not in "iu" or ids[0] < 0
                                       or ids[len(ids) - 1] >= V or np.any(np.diff(ids) <= 0))):
        raise ValueError(f"topic_word_parts takes sorted distinct word ids in [0, {V})")
    return np.ascontiguousarray(ids, dtype=np.int32)


def topic_word_parts(const _real[:, ::1] components, totals=None, words=None):
    """The topics as :func:`fold_in` takes them, from a fitted model's
    ``components`` (``(K, V)``, float32 or float64), without the ``(V, K)``
    table of probabilities ``phi[w, k] = components[k, w] / totals[k]``:
    ``floor[k]``, the smallest ``phi[:, k]``, and each word's entries above
    it as ``phi[w, k] - floor[k]`` in CSR form by word, topics increasing
    (``word_ptr`` of ``V + 1`` offsets into ``word_topic``, int32, and
    ``word_val``). ``totals`` (float64, one per topic; ``None``: each row's
    sum in eight interleaved partial sums, as below) divide the rows;
    ``words`` (sorted distinct word ids, int32; ``None``: all ``V``) limits
    the lists to the words a fold-in will read, every other word's range
    empty. The same as::

        c = components.astype(np.float64)
        if totals is None:
            lanes = np.cumsum(np.pad(c, ((0, 0), (0, -V % 8))).reshape(K, -1, 8),
                              axis=1)[:, -1]
            totals = ((lanes[:, 0] + lanes[:, 1]) + (lanes[:, 2] + lanes[:, 3])) + (
                (lanes[:, 4] + lanes[:, 5]) + (lanes[:, 6] + lanes[:, 7]))
        lowest = c.min(axis=1)
        floor = lowest / totals
        k, w = np.nonzero(c > lowest[:, None])
        keep = np.isin(w, words)  # words=None: every entry kept
        order = np.argsort(w[keep], kind="stable")
        k, w = k[keep][order], w[keep][order]
        word_ptr = np.r_[0, np.cumsum(np.bincount(w, minlength=V))]
        word_topic, word_val = k, c[k, w] / totals[k] - floor[k]

    A fitted model's topics are ``(counts + eta) / total``, so only the
    topics with a count of the word are above the floor. One pass over
    ``components``, each row's words looked up while the row is in cache,
    and ``O(V + entries)`` besides: folding in a few documents costs
    little more than reading the topics once. Raises ``ValueError`` for a
    row with an entry below 0, NaN or infinite, or a total that is not
    positive and finite (``components`` or ``totals``).
    """
    cdef Py_ssize_t K = components.shape[0], V = components.shape[1], k
    if totals is not None and np.shape(totals) != (K,):
        raise ValueError("inconsistent array shapes passed to topic_word_parts")
    ids_arr = _checked_words(words, V)
    cdef const int32_t[::1] ids = ids_arr
    cdef Py_ssize_t n_ids = ids.shape[0]
    cdef bint given = totals is not None
    totals_arr = (np.ascontiguousarray(totals, dtype=np.float64).copy() if given
                  else np.zeros(K))
    lowest_arr, floor_arr, sums_arr = np.zeros(K), np.zeros(K), np.zeros(K)
    row_end_arr = np.zeros(K, dtype=np.int64)
    cdef double[::1] tot = totals_arr, lowest = lowest_arr, floor = floor_arr, sums = sums_arr
    cdef int64_t[::1] row_end = row_end_arr
    cdef int64_t n = 0, cap = 1024
    cdef Py_ssize_t bad = -1
    cdef int32_t* found_w = <int32_t*> malloc(cap * sizeof(int32_t))
    cdef double* found_v = <double*> malloc(cap * sizeof(double))
    cdef int failed = found_w == NULL or found_v == NULL
    try:
        with nogil:
            for k in range(K):
                if failed or V == 0:
                    break
                _row_lowest_total(&components[k, 0], V, &lowest[k], &sums[k])
                if not given:
                    tot[k] = sums[k]
                if not (lowest[k] >= 0 and isfinite(sums[k]) and sums[k] > 0
                        and isfinite(tot[k]) and tot[k] > 0):
                    bad = k
                    break
                floor[k] = lowest[k] / tot[k]
                failed = _list_row(&components[k, 0], &ids[0] if n_ids else NULL, n_ids,
                                   lowest[k], tot[k], floor[k], &n, &cap, &found_w, &found_v)
                row_end[k] = n
        if failed:
            raise MemoryError("topic_word_parts ran out of memory")
        if bad >= 0:
            raise ValueError(
                f"the topics (components_) must be finite and non-negative with a positive "
                f"total, and topic {bad} is not (smallest entry {lowest[bad]}, total "
                f"{sums[bad]}); set components_ to such a table or refit")
        return floor_arr, *_by_word(found_w, found_v, n, row_end, V)
    finally:
        free(found_w)
        free(found_v)


cdef tuple _by_word(const int32_t* found_w, const double* found_v, int64_t n,
                    const int64_t[::1] row_end, Py_ssize_t V):
    """The entries found topic by topic, regrouped by word (a counting sort,
    so each word's topics stay increasing)."""
    cdef Py_ssize_t K = row_end.shape[0], k, w
    cdef int64_t i, lo = 0
    word_ptr_arr = np.zeros(V + 1, dtype=np.int64)
    word_topic_arr = np.empty(n, dtype=np.int32)
    word_val_arr = np.empty(n, dtype=np.float64)
    cdef int64_t[::1] ptr = word_ptr_arr
    cdef int32_t[::1] topic = word_topic_arr
    cdef double[::1] val = word_val_arr
    fill_arr = np.empty(V, dtype=np.int64)
    cdef int64_t[::1] fill = fill_arr
    with nogil:
        for i in range(n):
            ptr[found_w[i] + 1] += 1
        for w in range(V):
            ptr[w + 1] += ptr[w]
            fill[w] = ptr[w]
        for k in range(K):
            for i in range(lo, row_end[k]):
                w = found_w[i]
                topic[fill[w]] = <int32_t> k
                val[fill[w]] = found_v[i]
                fill[w] += 1
            lo = row_end[k]
    return word_ptr_arr, word_topic_arr, word_val_arr


def fixed_topics_sweep(
    const int64_t[::1] doc_ptr,
    const int32_t[::1] words,
    const double[:, ::1] phi_t,
    const double[:, ::1] prior,
    const int64_t[::1] doc_prior,
    int64_t[::1] z,
    int64_t[:, ::1] ndk,
    const double[::1] u,
):
    """One Gibbs sweep over documents' tokens with the topics held fixed.

    Document ``d``'s tokens are ``doc_ptr[d]:doc_ptr[d + 1]``; token ``t``
    has word ``words[t]`` and topic ``z[t]``, ``ndk[d]`` holds the
    document's topic counts and ``prior[doc_prior[d]]`` its prior. Each
    token's topic is drawn from ``(ndk[d] without it + prior[doc_prior[d]])
    * phi_t[w]`` with the uniform ``u[t]``, document by document, in token
    order. Equal, bit for bit, to::

        for d in range(len(doc_ptr) - 1):
            for t in range(doc_ptr[d], doc_ptr[d + 1]):
                ndk[d, z[t]] -= 1
                c = np.cumsum((ndk[d] + prior[doc_prior[d]]) * phi_t[words[t]])
                z[t] = min((c <= u[t] * c[-1]).sum(), K - 1)
                ndk[d, z[t]] += 1

    The caller builds the arrays from a checked count matrix: ``words``
    index rows of ``phi_t``, ``z`` holds topics below ``K`` and ``doc_ptr``
    is non-decreasing from 0 to ``len(words)``. The shapes and the rows of
    ``doc_prior`` are checked here.

    Parameters
    ----------
    doc_ptr : ndarray of shape (n_docs + 1,), int64
    words : ndarray of shape (n_tokens,), int32
    phi_t : ndarray of shape (V, K), float64
    prior : ndarray of shape (n_priors, K), float64, positive
    doc_prior : ndarray of shape (n_docs,), int64, rows of ``prior``
    z : ndarray of shape (n_tokens,), int64, updated
    ndk : ndarray of shape (n_docs, K), int64, updated
    u : ndarray of shape (n_tokens,), float64 in [0, 1)
    """
    cdef Py_ssize_t K = phi_t.shape[1], n_docs = ndk.shape[0]
    cdef Py_ssize_t d, k
    cdef int64_t t, new
    cdef double acc, target
    cdef const double* phi
    cdef const double* alpha
    cdef int64_t* counts
    if (prior.shape[1] != K or ndk.shape[1] != K or doc_ptr.shape[0] != n_docs + 1
            or doc_prior.shape[0] != n_docs
            or words.shape[0] != z.shape[0] or u.shape[0] != z.shape[0] or K < 1
            or doc_ptr[0] != 0 or doc_ptr[n_docs] != z.shape[0]):
        raise ValueError("inconsistent array shapes passed to fixed_topics_sweep")
    for d in range(n_docs):
        if doc_prior[d] < 0 or doc_prior[d] >= prior.shape[0]:
            raise ValueError("doc_prior passed to fixed_topics_sweep names a row "
                             "prior does not have")
    cum_arr = np.empty(K, dtype=np.float64)
    cdef double[::1] cum = cum_arr
    with nogil:
        for d in range(n_docs):
            counts = &ndk[d, 0]
            alpha = &prior[doc_prior[d], 0]
            for t in range(doc_ptr[d], doc_ptr[d + 1]):
                phi = &phi_t[words[t], 0]
                counts[z[t]] -= 1
                acc = 0.0
                for k in range(K):
                    acc = acc + (<double>counts[k] + alpha[k]) * phi[k]
                    cum[k] = acc
                target = u[t] * acc
                new = 0
                for k in range(K):
                    if cum[k] <= target:
                        new += 1
                if new > K - 1:
                    new = K - 1
                z[t] = new
                counts[new] += 1


def parts_log_likelihood(
    const int64_t[::1] indptr,
    const int32_t[::1] indices,
    const double[::1] counts,
    const double[:, ::1] theta,
    const double[::1] floor,
    const int64_t[::1] word_ptr,
    const int32_t[::1] word_topic,
    const double[::1] word_val,
    double[::1] out,
):
    """:func:`doc_log_likelihood` with the topics as :func:`topic_word_parts`
    gives them: ``out[d] = sum_w counts[d, w] * log(theta[d] . phi[w])``,
    ``theta[d] . phi[w]`` taken as ``theta[d] . floor`` (once per document)
    plus the word's part; equal to ``doc_log_likelihood`` up to rounding."""
    cdef Py_ssize_t n_docs = indptr.shape[0] - 1, K = floor.shape[0], d, k
    if theta.shape[0] != n_docs or theta.shape[1] != K or out.shape[0] != n_docs:
        raise ValueError("inconsistent array shapes passed to parts_log_likelihood")
    _check_word_parts(indices, K, word_ptr, word_topic, word_val)
    cdef int64_t j, m
    cdef int32_t w
    cdef double base, dot, acc
    with nogil:
        for d in range(n_docs):
            base = 0.0
            for k in range(K):
                base = base + theta[d, k] * floor[k]
            acc = 0.0
            for j in range(indptr[d], indptr[d + 1]):
                w = indices[j]
                dot = base
                for m in range(word_ptr[w], word_ptr[w + 1]):
                    dot = dot + theta[d, word_topic[m]] * word_val[m]
                acc = acc + counts[j] * log(dot)
            out[d] = acc


def _check_word_parts(const int32_t[::1] indices, Py_ssize_t K, const int64_t[::1] word_ptr,
                      const int32_t[::1] word_topic, const double[::1] word_val):
    """ValueError unless the parts are a CSR of V = len(word_ptr) - 1 words
    over K topics that covers the words of ``indices``."""
    V = word_ptr.shape[0] - 1
    ptr = np.asarray(word_ptr)
    if (V < 0 or word_topic.shape[0] != word_val.shape[0] or ptr[0] != 0
            or ptr[V] != word_topic.shape[0] or np.any(np.diff(ptr) < 0)):
        raise ValueError("the topics' word parts are not a CSR table")
    if word_topic.shape[0] and not (0 <= np.min(word_topic) and np.max(word_topic) < K):
        raise ValueError("a topic of the word parts is out of range")
    if indices.shape[0] and not (0 <= np.min(indices) and np.max(indices) < V):
        raise ValueError("a word index is out of range of the topics")


cdef int _fold_in(
    const int64_t[::1] indptr, const int32_t[::1] indices, const double[::1] counts,
    const int32_t[::1] doc_group, const double[:, ::1] prior, const double[::1] floor,
    const int64_t[::1] word_ptr, const int32_t[::1] word_topic, const double[::1] word_val,
    int max_iter, double tol, double[:, ::1] theta, double[::1] new, int32_t* stop_p,
) except -1 nogil:
    """The loops of :func:`fold_in` (a KeyboardInterrupt of the signal
    handlers propagates)."""
    cdef Py_ssize_t d, k, it, K = floor.shape[0]
    cdef int64_t j, m, work = 0, doc_work
    cdef int32_t g, w
    cdef double s, dot, c, change, psum, base, mass
    cdef double* t
    for d in range(indptr.shape[0] - 1):
        g = doc_group[d]
        t = &theta[d, 0]
        psum = 0.0
        for k in range(K):
            psum += prior[g, k]
        for k in range(K):
            t[k] = prior[g, k] / psum
        if indptr[d + 1] == indptr[d]:
            continue
        doc_work = K
        for j in range(indptr[d], indptr[d + 1]):
            doc_work += word_ptr[indices[j] + 1] - word_ptr[indices[j]]
        for it in range(max_iter):
            work += doc_work
            if work > _SIGNAL_CHECK_WORK:
                work = 0
                _check_signals()
                if stop_p[0] != 0:
                    break
            base = 0.0
            for k in range(K):
                new[k] = 0.0
                base = base + t[k] * floor[k]
            mass = 0.0  # sum over the words of c / (t . phi[w])
            for j in range(indptr[d], indptr[d + 1]):
                w = indices[j]
                dot = base
                for m in range(word_ptr[w], word_ptr[w + 1]):
                    dot = dot + t[word_topic[m]] * word_val[m]
                if dot <= 0.0:
                    continue
                c = counts[j] / dot
                mass = mass + c
                for m in range(word_ptr[w], word_ptr[w + 1]):
                    new[word_topic[m]] += c * word_val[m]
            s = 0.0
            for k in range(K):
                new[k] = prior[g, k] + t[k] * (new[k] + mass * floor[k])
                s += new[k]
            change = 0.0
            for k in range(K):
                new[k] = new[k] / s
                change += fabs(new[k] - t[k])
                t[k] = new[k]
            if change / K < tol:
                break
        if stop_p[0] != 0:
            break
    return 0


def doc_log_likelihood(
    const int64_t[::1] indptr,
    const int32_t[::1] indices,
    const double[::1] counts,
    const double[:, ::1] theta,
    const double[:, ::1] phi,
    double[::1] out,
):
    """Per-document log-likelihood of counts under a mixture of topics.

    Equivalent to ``out[d] = sum_j counts_dj * log(theta[d] @ phi[w_dj])``
    over the CSR entries of row ``d``, with ``phi`` word-major ``(V, K)``.
    """
    cdef Py_ssize_t n_docs = indptr.shape[0] - 1
    cdef Py_ssize_t K = phi.shape[1]
    if theta.shape[0] != n_docs or theta.shape[1] != K or out.shape[0] != n_docs:
        raise ValueError("inconsistent array shapes passed to doc_log_likelihood")
    cdef Py_ssize_t d, k
    cdef int64_t j
    cdef double dot, acc
    with nogil:
        for d in range(n_docs):
            acc = 0.0
            for j in range(indptr[d], indptr[d + 1]):
                dot = 0.0
                for k in range(K):
                    dot = dot + theta[d, k] * phi[indices[j], k]
                acc = acc + counts[j] * log(dot)
            out[d] = acc


def state_log_likelihood(
    const int64_t[::1] indptr,
    const int32_t[::1] indices,
    const double[::1] counts,
    const int32_t[:, ::1] ndk,
    const int32_t[::1] doc_group,
    const double[:, ::1] prior,
    const double[::1] doc_total,
    const int64_t[::1] word_ptr,
    const int32_t[::1] word_topic,
    const int32_t[::1] word_count,
    double eta,
    const double[::1] topic_mass,
    double[::1] out,
):
    """``doc_log_likelihood`` with the proportions and topics of a sampler
    state, made from its counts without a table of either.

    The word-topic counts come as CSR arrays (``word_ptr``, ``word_topic``,
    ``word_count``: word ``w``'s positive counts (int32) and their topics, a
    ``(V, K)`` CSR matrix with ``V = len(word_ptr) - 1``), so that a state
    without a dense word-topic table has its bound too. Equal, up to
    rounding (the sums run in another order), to (``K =
    topic_mass.shape[0]``, ``nwk`` the dense counts)::

        theta = (ndk + prior[doc_group]) / doc_total[:, None]
        phi = (nwk + eta) / topic_mass
        doc_log_likelihood(indptr, indices, counts, theta, phi, out)

    with ``doc_total`` the row sums of ``ndk + prior[doc_group]`` and
    ``topic_mass`` the ``nk + V * eta`` of the state. Each ``doc_total[d]
    * theta_d . phi_w`` is taken as four sums (``M = topic_mass``)::

        sum(ndk[d, k] / M[k] * nwk[w, k] for the document's topics k)
        + eta * sum(ndk[d, k] / M[k] for the document's topics k)
        + sum(prior[g, k] / M[k] * nwk[w, k] for the word's topics k)
        + eta * sum(prior[g, :] / M)

    document by document within blocks of words, each block's rows of
    counts spread over a dense buffer of at most ``_chunking.CHUNK_BYTES``
    (so each document's sum runs in its words' order, over its topics in
    increasing order, as over a dense table), the third sum once per
    collection and word. The time is ``O(nnz(X) * K_d + G * nnz(nwk) +
    n_docs * (K + n_blocks))``, ``K_d`` a document's topics, instead of
    ``O(nnz(X) * K)``: at many topics the terms of absent topics are most
    of the dense sum. X's indices must be sorted within each row (a
    canonical CSR matrix).
    """
    from ._chunking import budget_pieces

    cdef Py_ssize_t n_docs = indptr.shape[0] - 1, K = topic_mass.shape[0]
    cdef Py_ssize_t V = word_ptr.shape[0] - 1, G = prior.shape[0]
    if (ndk.shape[0] != n_docs or ndk.shape[1] != K or doc_group.shape[0] != n_docs
            or prior.shape[1] != K or doc_total.shape[0] != n_docs or V < 0
            or out.shape[0] != n_docs or counts.shape[0] != indices.shape[0]
            or word_topic.shape[0] != word_count.shape[0]
            or word_ptr[0] != 0 or word_ptr[V] != word_topic.shape[0]
            or (n_docs > 0 and indptr[n_docs] != indices.shape[0])):
        raise ValueError("inconsistent array shapes passed to state_log_likelihood")
    if np.any(np.diff(np.asarray(word_ptr)) < 0) or np.any(np.diff(np.asarray(indptr)) < 0):
        raise ValueError("word_ptr and indptr must be non-decreasing")
    if word_topic.shape[0] and not (0 <= np.min(word_topic) and np.max(word_topic) < K):
        raise ValueError("a topic of the word-topic counts is out of range")
    if indices.shape[0] and not (0 <= np.min(indices) and np.max(indices) < V):
        raise ValueError("a word index is out of range of the word-topic counts' rows")
    row_start = np.zeros(indices.shape[0] + 1, dtype=bool)
    row_start[np.asarray(indptr)] = True
    if np.any((np.diff(np.asarray(indices)) <= 0) & ~row_start[1:indices.shape[0]]):
        raise ValueError("X's indices must be sorted (and distinct) within each row")
    if n_docs and not (0 <= np.min(doc_group) and np.max(doc_group) < G):
        raise ValueError("a document's collection has no row in prior")
    inv = 1.0 / np.asarray(topic_mass)
    prior_inv = np.asarray(prior) * inv
    rows, cols = positive_cells(np.asarray(ndk))
    doc_ptr = np.zeros(n_docs + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n_docs), out=doc_ptr[1:])
    doc_coef = np.asarray(ndk)[rows, cols] * inv[cols]
    doc_topic = cols.astype(np.int32)
    del rows, cols
    blocks = budget_pieces(np.arange(V + 1), 8 * K + 16 * G)
    width = max([hi - lo for lo, hi in blocks], default=1)
    _state_log_likelihood(
        indptr, indices, counts, doc_group, doc_total, eta, doc_ptr, doc_topic, doc_coef,
        prior_inv, eta * prior_inv.sum(axis=1), word_ptr, word_topic, word_count,
        np.asarray([lo for lo, _ in blocks] + [V], dtype=np.int64), np.zeros(width * K),
        np.empty(width * G), np.full(width * G, -1, dtype=np.int64), np.empty(max(n_docs, 1)),
        np.array(indptr[:n_docs], dtype=np.int64), out,
    )


cdef void _state_log_likelihood(
    const int64_t[::1] indptr, const int32_t[::1] indices, const double[::1] counts,
    const int32_t[::1] doc_group, const double[::1] doc_total, double eta,
    const int64_t[::1] doc_ptr, const int32_t[::1] doc_topic, const double[::1] doc_coef,
    const double[:, ::1] prior_inv, const double[::1] per_group,
    const int64_t[::1] word_ptr, const int32_t[::1] word_topic, const int32_t[::1] word_count,
    const int64_t[::1] block_start, double[::1] rows, double[::1] word_part,
    int64_t[::1] part_word, double[::1] own, int64_t[::1] cursor, double[::1] out,
) noexcept:
    """The loops of :func:`state_log_likelihood`: blocks of words
    ``block_start[b]:block_start[b + 1]``, their counts spread over
    ``rows`` (word ``w0 + r``'s row at ``r * K``; all 0 between blocks),
    then each document's words in the block (from ``cursor[d]``, X's
    indices being sorted), its collection's part of the word cached in
    ``word_part[r * G + g]`` (valid where ``part_word`` is the word); the
    documents' topics and count / mass by ``doc_ptr`` (``doc_topic``,
    ``doc_coef``; their eta parts in ``own``)."""
    cdef Py_ssize_t d, g, r, b, K = prior_inv.shape[1], G = prior_inv.shape[0]
    cdef Py_ssize_t n_docs = doc_ptr.shape[0] - 1
    cdef int64_t j, m, t, w, w0, w1, end
    cdef double part, dot, acc
    with nogil:
        for d in range(n_docs):
            acc = 0.0
            for t in range(doc_ptr[d], doc_ptr[d + 1]):
                acc = acc + doc_coef[t]
            own[d] = eta * acc
            out[d] = 0.0
        for b in range(block_start.shape[0] - 1):
            w0, w1 = block_start[b], block_start[b + 1]
            for w in range(w0, w1):
                for m in range(word_ptr[w], word_ptr[w + 1]):
                    rows[(w - w0) * K + word_topic[m]] = word_count[m]
            for d in range(n_docs):
                j, end = cursor[d], indptr[d + 1]
                if j == end or indices[j] >= w1:
                    continue
                g = doc_group[d]
                acc = out[d]
                while j < end and indices[j] < w1:
                    w = indices[j]
                    r = w - w0
                    if part_word[r * G + g] != w:  # the collection's part of the word, once
                        part = 0.0
                        for m in range(word_ptr[w], word_ptr[w + 1]):
                            part = part + prior_inv[g, word_topic[m]] * word_count[m]
                        word_part[r * G + g] = part + per_group[g]
                        part_word[r * G + g] = w
                    dot = 0.0
                    for t in range(doc_ptr[d], doc_ptr[d + 1]):
                        dot = dot + doc_coef[t] * rows[r * K + doc_topic[t]]
                    acc = acc + counts[j] * log((dot + own[d] + word_part[r * G + g])
                                                / doc_total[d])
                    j += 1
                cursor[d] = j
                out[d] = acc
            for w in range(w0, w1):
                for m in range(word_ptr[w], word_ptr[w + 1]):
                    rows[(w - w0) * K + word_topic[m]] = 0.0


ctypedef fused _perm_t:
    int32_t
    int64_t


def cell_order(const int32_t[::1] words, const int64_t[::1] doc_ptr,
               const int64_t[::1] doc_bounds, const int32_t[::1] word_block,
               perm_dtype=None):
    """The tokens in the cells of :class:`PartitionedSweep`, and their pieces.

    Token ``i`` of document ``d`` is in cell ``p * P + q``, ``p`` the block
    of ``d`` (``doc_bounds[p] <= d < doc_bounds[p + 1]``) and ``q =
    word_block[words[i]]``. Two passes over the tokens (a counting sort,
    stable) and nothing per token but the result. NumPy equivalent::

        doc_of = np.repeat(np.arange(n_docs), np.diff(doc_ptr))
        block_of = np.repeat(np.arange(P), np.diff(doc_bounds))
        cell = block_of[doc_of] * P + word_block[words]
        perm = np.argsort(cell, kind="stable")
        new = np.r_[True, (cell[perm][1:] != cell[perm][:-1])
                    | (doc_of[perm][1:] != doc_of[perm][:-1])]
        starts = np.flatnonzero(new)
        piece_start, piece_doc = np.r_[starts, n_tokens], doc_of[perm][starts]
        cell_piece = np.r_[0, np.cumsum(np.bincount(cell[perm][starts],
                                                    minlength=P * P))]

    Returns ``perm`` (int32 below 2**31 tokens, else int64; ``perm_dtype``
    forces one, for tests), ``piece_start``
    (int64), ``piece_doc`` (int32) and ``cell_piece`` (int64). Raises
    ``ValueError`` on arrays that do not fit together (a word outside
    ``word_block``, a block outside ``0 .. P - 1``, bounds that do not
    cover the documents, pointers that do not cover the tokens).
    """
    cdef Py_ssize_t P = doc_bounds.shape[0] - 1
    cdef int64_t n = words.shape[0]
    fill_arr, cell_piece = _cell_counts(words, doc_ptr, doc_bounds, word_block)
    seen_arr = np.full(P, -1, dtype=np.int64)
    cdef int64_t[::1] fill = fill_arr, seen = seen_arr
    np.cumsum(fill_arr, out=fill_arr)
    np.cumsum(cell_piece, out=cell_piece)
    n_pieces = int(cell_piece[P * P])
    piece_start = np.empty(n_pieces + 1, dtype=np.int64)
    piece_doc = np.empty(n_pieces, dtype=np.int32)
    piece_start[n_pieces] = n
    next_piece = cell_piece[:P * P].copy()
    if perm_dtype is None:
        perm_dtype = np.int32 if n < 2**31 else np.int64
    if np.dtype(perm_dtype) not in (np.dtype(np.int32), np.dtype(np.int64)) or (
            np.dtype(perm_dtype) == np.int32 and n >= 2**31):
        raise ValueError(f"cell_order: perm_dtype {perm_dtype!r} cannot index {n} tokens")
    perm = np.empty(n, dtype=perm_dtype)
    cdef int64_t[::1] nxt = next_piece, starts = piece_start
    cdef int32_t[::1] docs = piece_doc
    cdef int32_t[::1] perm32
    cdef int64_t[::1] perm64
    if perm.dtype == np.int32:
        perm32 = perm
        with nogil:
            _place_cells[int32_t](words, doc_ptr, doc_bounds, word_block, fill, nxt, seen,
                                  perm32, starts, docs)
    else:
        perm64 = perm
        with nogil:
            _place_cells[int64_t](words, doc_ptr, doc_bounds, word_block, fill, nxt, seen,
                                  perm64, starts, docs)
    return perm, piece_start, piece_doc, cell_piece


def cell_restore(const int32_t[::1] values, const int32_t[::1] words,
                 const int64_t[::1] doc_ptr, const int64_t[::1] doc_bounds,
                 const int32_t[::1] word_block):
    """Per-token values in :func:`cell_order`'s order (topics, say) put back
    in document order, with no permutation array: the same checks, a pass
    to count each cell's tokens, then one over the tokens in document
    order, each taking the next value of its cell. NumPy equivalent::

        perm = cell_order(words, doc_ptr, doc_bounds, word_block)[0]
        out = np.empty_like(values)
        out[perm] = values
    """
    if values.shape[0] != words.shape[0]:
        raise ValueError("cell_restore: values and words must have the same length")
    fill_arr, _ = _cell_counts(words, doc_ptr, doc_bounds, word_block)
    np.cumsum(fill_arr, out=fill_arr)
    out_arr = np.empty(words.shape[0], dtype=np.int32)
    cdef int64_t[::1] fill = fill_arr
    cdef int32_t[::1] out = out_arr
    with nogil:
        _take_cells(values, words, doc_ptr, doc_bounds, word_block, fill, out)
    return out_arr


cdef void _take_cells(const int32_t[::1] values, const int32_t[::1] words,
                      const int64_t[::1] doc_ptr, const int64_t[::1] doc_bounds,
                      const int32_t[::1] word_block, int64_t[::1] fill,
                      int32_t[::1] out) noexcept nogil:
    """``cell_restore``'s second pass (``fill`` holds each cell's first place)."""
    cdef Py_ssize_t P = doc_bounds.shape[0] - 1, p
    cdef int64_t d, i, c
    for p in range(P):
        for d in range(doc_bounds[p], doc_bounds[p + 1]):
            for i in range(doc_ptr[d], doc_ptr[d + 1]):
                c = p * P + word_block[words[i]]
                out[i] = values[fill[c]]
                fill[c] += 1


def row_changes(const int32_t[:, :] table, const int64_t[::1] rows,
                const int32_t[:, ::1] before, index_dtype):
    """The nonzero cells of ``table[rows] - before`` as flat indices
    ``rows[r] * K + k`` (``K = before.shape[1]``, of ``index_dtype``, int32
    or int64) and int32 values, in row-major order: a Dask shard's change
    of its rows of the word-topic table over a round. Two passes (count,
    then fill) reading the table in place, with no temporaries. NumPy
    equivalent::

        diff = table[rows, :K] - before
        r, k = np.nonzero(diff)
        idx = (rows[r] * K + k).astype(index_dtype)
        vals = diff[r, k].astype(np.int32)

    ``table`` may have more columns than ``K`` (padding) and rows further
    apart than their length. ``ValueError`` on a row outside the table or
    shapes that do not fit.
    """
    cdef Py_ssize_t n_rows = rows.shape[0], K = before.shape[1], r
    cdef int64_t n = 0
    if before.shape[0] != n_rows or table.shape[1] < K:
        raise ValueError("row_changes: before must have a row for each of rows, and the "
                         "table at least its columns")
    for r in range(n_rows):
        if not 0 <= rows[r] < table.shape[0]:
            raise ValueError("row_changes: a row is outside the table")
    if np.dtype(index_dtype) not in (np.dtype(np.int32), np.dtype(np.int64)):
        raise ValueError(f"row_changes: index_dtype {index_dtype!r} is not int32 or int64")
    if np.dtype(index_dtype) == np.int32 and table.shape[0] * K > 2**31 - 1:
        raise ValueError("row_changes: int32 cannot index this table")
    with nogil:
        n = _count_changes(table, rows, before)
    # (one spare entry: the fill writes every cell's entry, then keeps it
    # by moving on only if the cell changed, with no branch to mispredict)
    idx = np.empty(n + 1, dtype=index_dtype)
    vals = np.empty(n + 1, dtype=np.int32)
    cdef int32_t[::1] idx32
    cdef int64_t[::1] idx64
    cdef int32_t[::1] v = vals
    if idx.dtype == np.int32:
        idx32 = idx
        with nogil:
            _fill_changes[int32_t](table, rows, before, idx32, v)
    else:
        idx64 = idx
        with nogil:
            _fill_changes[int64_t](table, rows, before, idx64, v)
    return idx[:n], vals[:n]


cdef int64_t _count_changes(const int32_t[:, :] table, const int64_t[::1] rows,
                            const int32_t[:, ::1] before) noexcept nogil:
    """Pass 1 of ``row_changes``: how many cells differ."""
    cdef Py_ssize_t r, k, K = before.shape[1]
    cdef int64_t n = 0
    for r in range(rows.shape[0]):
        for k in range(K):
            n += table[rows[r], k] != before[r, k]
    return n


cdef void _fill_changes(const int32_t[:, :] table, const int64_t[::1] rows,
                        const int32_t[:, ::1] before, _perm_t[::1] idx,
                        int32_t[::1] vals) noexcept nogil:
    """Pass 2 of ``row_changes``: the differing cells, row-major (``idx``
    and ``vals`` have one entry more than there are)."""
    cdef Py_ssize_t r, k, K = before.shape[1]
    cdef int64_t j = 0
    cdef int32_t d
    for r in range(rows.shape[0]):
        for k in range(K):
            d = table[rows[r], k] - before[r, k]
            idx[j] = <_perm_t> (rows[r] * K + k)
            vals[j] = d
            j += d != 0


cdef bint _cells_in_range(const _perm_t[::1] idx, int64_t size) noexcept nogil:
    """Whether every flat cell of ``idx`` is in ``[0, size)``."""
    cdef Py_ssize_t i
    for i in range(idx.shape[0]):
        if not 0 <= idx[i] < size:
            return False
    return True


def add_cells(int32_t[:, :] table, const _perm_t[::1] idx, const int32_t[::1] vals,
              Py_ssize_t K):
    """Add ``vals`` to the cells of ``table`` at the flat indices ``idx``
    (``w * K + k``), in place, with no temporaries: a Dask shard's sync of
    the other shards' changes (:func:`row_changes`' format). NumPy
    equivalent (the cells may repeat)::

        np.add.at(table, (idx // K, idx % K), vals)

    ``table`` may have more columns than ``K`` (padding) and rows further
    apart than their length. ``ValueError`` when a cell is outside the
    table's first ``K`` columns or the shapes do not fit. (NumPy's
    fancy-indexed add makes three arrays the size of ``idx``, and a Dask
    worker's allocator, started with ``MALLOC_TRIM_THRESHOLD_``, maps fresh
    pages for each: 2-3 times the time of the add itself.)
    """
    cdef Py_ssize_t n = idx.shape[0], i
    cdef int64_t limit = <int64_t> table.shape[0] * K
    cdef bint bad = False
    if vals.shape[0] != n or not 0 < K <= table.shape[1]:
        raise ValueError("add_cells: idx and vals must have the same length, and K fit "
                         "the table's columns")
    with nogil:
        bad = not _cells_in_range(idx, limit)
        if not bad:
            for i in range(n):
                table[idx[i] // K, idx[i] % K] += vals[i]
    if bad:
        raise ValueError("add_cells: a cell is outside the table")


def mark_cells(int32_t[::1] acc, uint8_t[::1] touched, const _perm_t[::1] idx,
               const int32_t[::1] vals):
    """Add ``vals`` into ``acc`` at the flat cells ``idx`` and mark those
    cells in ``touched``, in place with no temporaries: the first half of
    the Dask client's merge of the shards' changes (``DeltaMerger``; the
    second is :func:`drain_cells`). NumPy equivalent (the cells may
    repeat)::

        np.add.at(acc, idx, vals)
        touched[idx] = 1

    ``ValueError`` when a cell is outside ``acc`` or the arrays do not fit.
    """
    cdef Py_ssize_t n = idx.shape[0], i
    cdef int64_t size = acc.shape[0]
    cdef bint bad = False
    if vals.shape[0] != n or touched.shape[0] != size:
        raise ValueError("mark_cells: idx and vals must have the same length, and touched "
                         "the length of acc")
    with nogil:
        bad = not _cells_in_range(idx, size)
        if not bad:
            for i in range(n):
                acc[idx[i]] += vals[i]
                touched[idx[i]] = 1
    if bad:
        raise ValueError("mark_cells: a cell is outside the table")


def drain_cells(int32_t[::1] acc, uint8_t[::1] touched, index_dtype,
                int64_t[::1] column_sums=None):
    """The cells marked in ``touched`` whose sum in ``acc`` is not zero, as
    ascending flat indices (of ``index_dtype``, int32 or int64) and int32
    values, with ``acc`` and ``touched`` set back to zero at the marked
    cells: the second half of the Dask client's merge (see
    :func:`mark_cells`). Two passes over ``touched`` (count, then fill and
    reset), no temporaries. With ``column_sums`` (length ``K``, the table's
    columns), each value is also added to its column, ``cell % K``. NumPy
    equivalent::

        cells = np.flatnonzero(touched)
        vals = acc[cells]
        acc[cells] = 0
        touched[cells] = 0
        keep = vals != 0
        idx, vals = cells[keep].astype(index_dtype), vals[keep]
        if column_sums is not None:
            np.add.at(column_sums, idx % column_sums.shape[0], vals)
    """
    cdef int64_t size = acc.shape[0], n = 0
    # (without column sums, rows of one cell, summed into a scratch entry)
    cdef Py_ssize_t K = 1 if column_sums is None else column_sums.shape[0]
    if touched.shape[0] != size:
        raise ValueError("drain_cells: touched must have the length of acc")
    if column_sums is not None and (K == 0 or size % K != 0):
        raise ValueError("drain_cells: the table's length must be a multiple of "
                         "column_sums' length")
    if np.dtype(index_dtype) not in (np.dtype(np.int32), np.dtype(np.int64)):
        raise ValueError(f"drain_cells: index_dtype {index_dtype!r} is not int32 or int64")
    if np.dtype(index_dtype) == np.int32 and size > 2**31:
        raise ValueError("drain_cells: int32 cannot index this table")
    with nogil:
        n = _count_marked(acc, touched)
    idx = np.empty(n, dtype=index_dtype)
    vals = np.empty(n, dtype=np.int32)
    cdef int32_t[::1] idx32
    cdef int64_t[::1] idx64
    cdef int32_t[::1] v = vals
    cdef int64_t[::1] sums = column_sums if column_sums is not None else np.zeros(1, np.int64)
    if idx.dtype == np.int32:
        idx32 = idx
        with nogil:
            _drain[int32_t](acc, touched, idx32, v, sums, K)
    else:
        idx64 = idx
        with nogil:
            _drain[int64_t](acc, touched, idx64, v, sums, K)
    return idx, vals


cdef int64_t _count_marked(const int32_t[::1] acc, const uint8_t[::1] touched) noexcept nogil:
    """Pass 1 of ``drain_cells``: the marked cells whose sum is not zero."""
    cdef int64_t c, n = 0
    for c in range(acc.shape[0]):
        n += (touched[c] != 0) & (acc[c] != 0)
    return n


cdef void _drain(int32_t[::1] acc, uint8_t[::1] touched, _perm_t[::1] idx,
                 int32_t[::1] vals, int64_t[::1] column_sums, Py_ssize_t K) noexcept nogil:
    """Pass 2 of ``drain_cells``: the kept cells in order, the marks reset;
    the table's rows of ``K`` cells one after the other, so that a cell's
    column needs no division."""
    cdef int64_t r, c, j = 0, n_rows = acc.shape[0] // K
    cdef Py_ssize_t k
    cdef int32_t a
    for r in range(n_rows):
        for k in range(K):
            c = r * K + k
            if touched[c]:
                a = acc[c]
                if a != 0:
                    idx[j] = <_perm_t> c
                    vals[j] = a
                    column_sums[k] += a
                    j += 1
                acc[c] = 0
                touched[c] = 0


def take_rows(const int32_t[:, :] table, const int64_t[::1] rows, int32_t[:, ::1] out):
    """Rows ``rows`` of ``table`` into ``out``, in place with no temporaries
    (a Dask shard's snapshot of its rows of the word-topic table before its
    sweeps). NumPy equivalent (``table`` may have more columns than ``K =
    out.shape[1]``, and rows further apart than their length)::

        out[:] = table[rows, :K]

    ``ValueError`` on a row outside ``table`` or shapes that do not fit.
    """
    _check_rows(table, rows, out, "take_rows")
    cdef Py_ssize_t r, k
    with nogil:
        for r in range(rows.shape[0]):
            for k in range(out.shape[1]):
                out[r, k] = table[rows[r], k]


def put_rows(int32_t[:, :] table, const int64_t[::1] rows, const int32_t[:, ::1] values):
    """The inverse of :func:`take_rows`: ``table[rows, :K] = values``, in
    place with no temporaries (the shard's rows restored after its
    sweeps). ``ValueError`` as for :func:`take_rows`."""
    _check_rows(table, rows, values, "put_rows")
    cdef Py_ssize_t r, k
    with nogil:
        for r in range(rows.shape[0]):
            for k in range(values.shape[1]):
                table[rows[r], k] = values[r, k]


cdef int _check_rows(const int32_t[:, :] table, const int64_t[::1] rows,
                     const int32_t[:, ::1] compact, str name) except -1:
    """take_rows' and put_rows' checks."""
    cdef Py_ssize_t r
    if compact.shape[0] != rows.shape[0] or table.shape[1] < compact.shape[1]:
        raise ValueError(f"{name}: the compact rows must be one per row of rows, and the "
                         "table at least as wide")
    for r in range(rows.shape[0]):
        if not 0 <= rows[r] < table.shape[0]:
            raise ValueError(f"{name}: a row is outside the table")
    return 0


def cell_token_counts(const int32_t[::1] words, const int64_t[::1] doc_ptr,
                      const int64_t[::1] doc_bounds, const int32_t[::1] word_block):
    """Tokens of each cell of :func:`cell_order`'s layout, shape (P, P) (the
    same checks; one pass, nothing per token). NumPy equivalent::

        np.bincount(cell, minlength=P * P).reshape(P, P)   # cell as in cell_order
    """
    cdef Py_ssize_t P = doc_bounds.shape[0] - 1
    fill_arr, _ = _cell_counts(words, doc_ptr, doc_bounds, word_block)
    return fill_arr[1:].reshape(P, P)


def _cell_counts(const int32_t[::1] words, const int64_t[::1] doc_ptr,
                 const int64_t[::1] doc_bounds, const int32_t[::1] word_block):
    """Checks, then pass 1 of ``cell_order``: ``(tokens, pieces)`` of each
    cell ``c`` at ``c + 1`` of two arrays of P * P + 1 (the first entry 0)."""
    cdef Py_ssize_t n_docs = doc_ptr.shape[0] - 1, P = doc_bounds.shape[0] - 1, p, d
    cdef int64_t n = words.shape[0]
    cdef int bad
    if (n_docs < 0 or P < 1 or doc_ptr[0] != 0 or doc_ptr[n_docs] != n
            or doc_bounds[0] != 0 or doc_bounds[P] != n_docs):
        raise ValueError("cell_order: doc_ptr must cover the tokens and doc_bounds the documents")
    for p in range(P):
        if doc_bounds[p] > doc_bounds[p + 1]:
            raise ValueError("cell_order: doc_bounds must not decrease")
    for d in range(n_docs):
        if doc_ptr[d] > doc_ptr[d + 1]:
            raise ValueError("cell_order: doc_ptr must not decrease")
    fill_arr = np.zeros(P * P + 1, dtype=np.int64)
    npiece_arr = np.zeros(P * P + 1, dtype=np.int64)
    seen_arr = np.full(P, -1, dtype=np.int64)
    cdef int64_t[::1] fill = fill_arr, npiece = npiece_arr, seen = seen_arr
    with nogil:
        bad = _count_cells(words, doc_ptr, doc_bounds, word_block, fill, npiece, seen)
    if bad:
        raise ValueError("cell_order: a word has no block in word_block, or a block is "
                         "outside 0 .. P - 1")
    return fill_arr, npiece_arr


cdef int _count_cells(const int32_t[::1] words, const int64_t[::1] doc_ptr,
                      const int64_t[::1] doc_bounds, const int32_t[::1] word_block,
                      int64_t[::1] fill, int64_t[::1] npiece, int64_t[::1] seen) noexcept nogil:
    """Pass 1 of ``cell_order``: tokens (``fill[c + 1]``) and pieces
    (``npiece[c + 1]``) of each cell ``c``; 1 on a word or block out of range."""
    cdef Py_ssize_t P = doc_bounds.shape[0] - 1, V = word_block.shape[0], p
    cdef int64_t d, i, c
    cdef int32_t w, q
    for p in range(P):
        for d in range(doc_bounds[p], doc_bounds[p + 1]):
            for i in range(doc_ptr[d], doc_ptr[d + 1]):
                w = words[i]
                if w < 0 or w >= V:
                    return 1
                q = word_block[w]
                if q < 0 or q >= P:
                    return 1
                c = p * P + q
                fill[c + 1] += 1
                if seen[q] != d:
                    seen[q] = d
                    npiece[c + 1] += 1
    return 0


cdef void _place_cells(const int32_t[::1] words, const int64_t[::1] doc_ptr,
                       const int64_t[::1] doc_bounds, const int32_t[::1] word_block,
                       int64_t[::1] fill, int64_t[::1] next_piece, int64_t[::1] seen,
                       _perm_t[::1] perm, int64_t[::1] piece_start,
                       int32_t[::1] piece_doc) noexcept nogil:
    """Pass 2 of ``cell_order`` (``fill`` holds each cell's first place,
    ``next_piece`` its first piece): each token to the next place of its
    cell, a piece opened at a document's first token in a cell."""
    cdef Py_ssize_t P = doc_bounds.shape[0] - 1, p
    cdef int64_t d, i, c, j
    cdef int32_t q
    for p in range(P):
        for d in range(doc_bounds[p], doc_bounds[p + 1]):
            for i in range(doc_ptr[d], doc_ptr[d + 1]):
                q = word_block[words[i]]
                c = p * P + q
                if seen[q] != d:
                    seen[q] = d
                    j = next_piece[c]
                    next_piece[c] = j + 1
                    piece_start[j] = fill[c]
                    piece_doc[j] = <int32_t> d
                perm[fill[c]] = <_perm_t> i
                fill[c] += 1


cdef class PartitionedSweep:
    """The z-step of a sweep split into ``P`` x ``P`` cells, for ``n_threads`` threads.

    Documents and words are each cut into ``P`` blocks; the tokens are
    stored cell by cell (``words``, ``z`` in that order), each cell as a
    list of pieces, runs of tokens of one document: piece ``j`` is tokens
    ``piece_start[j]:piece_start[j + 1]`` of document ``piece_doc[j]``, and
    cell ``(p, q)`` (documents of block ``p``, words of block ``q``) is
    pieces ``cell_piece[p * P + q]:cell_piece[p * P + q + 1]``. A sweep is
    ``P`` sub-steps; in sub-step ``s`` the cells ``(p, (p + s) % P)`` are
    swept, each document block ``p`` against its own copy of ``nk`` taken
    at the start of the sweep, and ``nk`` then gets the sum of the copies'
    changes. As NumPy (``sweep_piece`` the z-step of ``gibbs_sweep`` on one
    document's run of tokens ``i0:i1`` in cell order, with the uniforms
    ``U``)::

        copies = [nk.copy() for p in range(P)]
        for s in range(P):
            for p in range(P):
                q = (p + s) % P
                key = bitgens[p].random_raw()     # one key per cell
                for j in range(cell_piece[p * P + q], cell_piece[p * P + q + 1]):
                    i0, i1 = piece_start[j], piece_start[j + 1]
                    U = mh_uniforms(key, i0, i1 - i0)
                    sweep_piece(words, z, i0, i1, nwk, ndk[piece_doc[j]], copies[p],
                                prior[doc_group[piece_doc[j]]], eta, U)
        nk += sum(c - nk for c in copies)

    Cell ``(p, s)`` shares rows of ``nwk`` or ``ndk`` only with the cells
    of its document block and of its word block, so ``run_thread(t)`` for
    ``t = 0 .. n_threads - 1``, called at the same time from ``n_threads``
    threads, computes exactly this: the threads claim the cells one by one
    in the order above from a shared counter (whichever thread is free
    takes the next), and each waits only for ``(p, s - 1)`` and ``(p + 1,
    s - 1)``, the cells before it in its two blocks (_substeps.h). The
    result does not depend on ``n_threads`` or on which thread sweeps a
    cell (each cell uses its document block's stream and copy of ``nk``).
    Every thread must call ``run_thread`` once per sweep (after
    ``set_prior``), or the others wait until ``stop[0]`` is set: ``stop``
    is polled between cells and while waiting, and a nonzero value
    abandons the sweep (``run_thread`` returns -1).
    ``busy_seconds()`` gives the time each thread has spent in its cells
    (the rest it waited for other cells, or at the end of the sweep).
    ``nwk``'s rows (``K`` or ``K`` padded to a multiple of 8 columns) may
    lie further apart than their length (a row stride of any multiple of 8
    counts), so that a table can keep each row on whole cache lines.

    After :meth:`set_tables`, each thread then draws the AGS table counts
    of document blocks ``t, t + n_threads, ...`` from their final counts,
    in the same release of the GIL, so that no thread waits for the GIL
    between the z-step and its tables::

        for p in range(P):
            lo, hi = doc_bounds[p], doc_bounds[p + 1]
            tables[p] = 0
            document_tables(ndk[lo:hi], doc_group[lo:hi], prior, tables[p], bitgens[p])

    The arrays are trusted to be consistent (the sweeper builds them):
    words, documents and collections in range, the cells' pieces disjoint
    and covering the tokens, the counts the tallies of ``z``. The bit
    generators are used without their locks: they must be private to this
    object.
    """
    cdef clda_partition_ctx c
    cdef object _arrays
    cdef object _bitgens
    cdef object _bitgen_ptrs
    cdef object _stop
    cdef object _prior
    cdef list _scratch
    cdef object _busy
    cdef object _counters
    cdef readonly Py_ssize_t n_threads
    # the AGS table draws after the z-step (set_tables; none until then)
    cdef int32_t[:, ::1] _ndk
    cdef const int32_t[::1] _doc_group
    cdef const double[:, ::1] _prior_rows
    cdef const int64_t[::1] _doc_bounds
    cdef int64_t[:, :, ::1] _tables
    cdef bint _has_tables

    def __init__(
        self,
        const int32_t[::1] words,
        int32_t[::1] z,
        const int64_t[::1] piece_start,
        const int32_t[::1] piece_doc,
        const int64_t[::1] cell_piece,
        const int32_t[::1] doc_group,
        int32_t[:, :] nwk,
        int32_t[:, ::1] ndk,
        int32_t[::1] nk,
        Py_ssize_t n_threads,
        list bitgens,
        int32_t[::1] stop,
    ):
        cdef Py_ssize_t K = nk.shape[0], P = len(bitgens)
        cdef Py_ssize_t n_blocks = (K + _BLOCK - 1) // _BLOCK
        cdef Py_ssize_t K_pad = n_blocks * _BLOCK
        cdef Py_ssize_t i, nk_stride
        if (P < 1 or not 1 <= n_threads <= P or cell_piece.shape[0] != P * P + 1
                or z.shape[0] != words.shape[0] or piece_doc.shape[0] + 1 != piece_start.shape[0]
                or (nwk.shape[1] != K and nwk.shape[1] != K_pad) or ndk.shape[1] != K
                or doc_group.shape[0] != ndk.shape[0] or stop.shape[0] != 1 or K < 1
                or nwk.strides[1] != sizeof(int32_t)
                or nwk.strides[0] < nwk.shape[1] * <Py_ssize_t> sizeof(int32_t)
                or nwk.strides[0] % (8 * sizeof(int32_t)) != 0):
            raise ValueError("inconsistent arrays passed to PartitionedSweep")
        if (piece_start[0] != 0 or piece_start[piece_start.shape[0] - 1] != words.shape[0]
                or cell_piece[0] != 0 or cell_piece[P * P] != piece_doc.shape[0]):
            raise ValueError("the pieces of PartitionedSweep do not cover the tokens")
        self.n_threads = n_threads
        self._arrays = (words, z, piece_start, piece_doc, cell_piece, doc_group, nwk, ndk, nk)
        self._bitgens = bitgens
        self._bitgen_ptrs = np.array(
            [<Py_ssize_t> _get_bitgen(b) for b in bitgens], dtype=np.intp)
        self._stop = stop
        nk_cell, nk_stride, self._busy, self._counters = _substeps_buffers(P, n_threads, K)
        longest = int(np.max(np.diff(np.asarray(piece_start)), initial=1))
        self._scratch = [_sweep_scratch(n_blocks) + [_line_buffer(max(longest, 1))]
                         for i in range(n_threads)]
        self._arrays += (nk_cell,)
        clda_substeps_init(&self.c.steps, P, n_threads, K, &nk[0],
                           <int32_t*> np.PyArray_DATA(nk_cell), nk_stride, &stop[0],
                           <double*> np.PyArray_DATA(self._busy),
                           <int64_t*> np.PyArray_DATA(self._counters))
        self.c.n_blocks = n_blocks
        self.c.nwk_stride = nwk.strides[0] // sizeof(int32_t)
        self.c.words = &words[0] if words.shape[0] else NULL
        self.c.z = &z[0] if z.shape[0] else NULL
        self.c.piece_start = &piece_start[0]
        self.c.piece_doc = &piece_doc[0] if piece_doc.shape[0] else NULL
        self.c.cell_piece = &cell_piece[0]
        self.c.doc_group = &doc_group[0] if doc_group.shape[0] else NULL
        self.c.nwk = &nwk[0, 0]
        self.c.ndk = &ndk[0, 0] if ndk.shape[0] else NULL
        self.c.bitgen = <bitgen_t**> np.PyArray_DATA(self._bitgen_ptrs)
        self.c.sweep_document = _document_kernel(nwk.shape[1], K)
        self.c.wide_fill = _WIDE_FILL
        self.c.prior = NULL
        self._ndk = ndk
        self._doc_group = doc_group

    def set_tables(self, const int64_t[::1] doc_bounds, int64_t[:, :, ::1] tables):
        """Draw the AGS table counts of document block ``p`` (documents
        ``doc_bounds[p]:doc_bounds[p + 1]``) into ``tables[p]``, shape
        ``(P, G, K)``, after every sweep (see the class docstring)."""
        cdef Py_ssize_t P = self.c.steps.P, p
        if (doc_bounds.shape[0] != P + 1 or tables.shape[0] != P
                or tables.shape[2] != self.c.steps.K
                or doc_bounds[0] != 0 or doc_bounds[P] != self._ndk.shape[0]):
            raise ValueError("inconsistent arrays passed to PartitionedSweep.set_tables")
        for p in range(P):
            if doc_bounds[p] > doc_bounds[p + 1]:
                raise ValueError("the document blocks' bounds must not decrease")
        self._doc_bounds = doc_bounds
        self._tables = tables
        self._has_tables = True

    def busy_seconds(self):
        """Seconds each thread has spent sweeping its cells so far (the rest
        of its sweeps it waited at the barriers), shape ``(n_threads,)``."""
        return np.asarray(self._busy)[::CLDA_BUSY_STRIDE].copy()

    def set_prior(self, const double[:, ::1] prior, double eta):
        """The document-topic prior rows (one per collection) and eta of the
        next sweep; also readies the barrier and the cell counters for it."""
        if prior.shape[1] != self.c.steps.K:
            raise ValueError("prior has the wrong number of topics")
        doc_group = np.asarray(self._arrays[5])
        if doc_group.size and (doc_group.max() >= prior.shape[0]):
            raise ValueError("a document's collection has no row in prior")
        if self._has_tables and self._tables.shape[1] != prior.shape[0]:
            raise ValueError("the tables of set_tables need a row per row of prior")
        self._prior = prior
        self._prior_rows = prior
        self.c.prior = &prior[0, 0]
        self.c.eta = eta
        self.c.veta = self._arrays[6].shape[0] * eta
        clda_substeps_ready(&self.c.steps)

    def run_thread(self, Py_ssize_t t):
        """Thread ``t``'s part of one sweep, its blocks' table draws
        included (GIL released); 0, or -1 if it was abandoned through
        ``stop``. Raises ``MemoryError`` when the draws run out of memory."""
        if not 0 <= t < self.n_threads or self.c.prior == NULL:
            raise ValueError("run_thread needs 0 <= t < n_threads and set_prior first")
        cdef clda_sweep_ctx local
        cdef list buf = self._scratch[t]
        cdef int rc
        local.K = self.c.steps.K
        local.n_blocks = self.c.n_blocks
        local.n_tokens = self._arrays[0].shape[0]
        local.words = self.c.words
        local.z = self.c.z
        local.nwk = self.c.nwk
        local.nwk_stride = self.c.nwk_stride
        local.nk = NULL
        local.eta = self.c.eta
        local.veta = self.c.veta
        _set_scratch(&local, buf)
        cdef double* u_buf = <double*> np.PyArray_DATA(buf[len(buf) - 1])
        cdef bint draw = self._has_tables and self._tables.shape[1] > 0
        with nogil:
            rc = clda_partition_worker(&self.c, t, &local, u_buf)
            if rc == 0 and draw:
                rc = self._draw_block_tables(t)
        if rc == -2:
            raise MemoryError()
        return rc

    cdef int _draw_block_tables(self, Py_ssize_t t) noexcept nogil:
        """The table draws of thread ``t``'s document blocks; 0, or -2 when
        memory runs out."""
        cdef Py_ssize_t p = t
        cdef int64_t lo, hi
        while p < self.c.steps.P:
            lo, hi = self._doc_bounds[p], self._doc_bounds[p + 1]
            self._tables[p, :, :] = 0
            if _table_draws(self._ndk[lo:hi], self._doc_group[lo:hi], self._prior_rows,
                            self._tables[p], self.c.bitgen[p], True, NULL) != 0:
                return -2
            p += self.n_threads
        return 0

# cython: freethreading_compatible = True
"""Cython kernel of the Metropolis-Hastings sampler for many topics.

``mh_sweep`` is the O(1)-per-token counterpart of
``_sampling.gibbs_sweep``: the same arrays, the same collapsed conditional
left invariant, the same Antoniak table draws, but each token takes
``mh_steps`` Metropolis-Hastings steps instead of one exact O(K) draw (see
``_mh_kernel.h``). Each kernel's docstring states its NumPy equivalent,
and ``tests/test_mh_sampling.py`` and ``tests/test_mh_partition.py`` hold
them to it bit for bit.
"""

from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t
from libc.stdlib cimport qsort
from numpy.random cimport bitgen_t
from cpython.pycapsule cimport PyCapsule_GetPointer

from sklearn_clda._substeps cimport (
    CLDA_BUSY_STRIDE,
    clda_substeps,
    clda_substeps_init,
    clda_substeps_ready,
    clda_substeps_run,
)

cdef extern from "_mh_kernel.h":
    ctypedef struct clda_mh_ctx:
        Py_ssize_t K
        int32_t mh_steps
        const int32_t* words
        int32_t* z
        int32_t* nwk
        Py_ssize_t nwk_stride
        int32_t* nk
        double eta
        double veta
        double keta
        const int64_t* word_ptr
        const int32_t* word_tokens
        int32_t* zw
        const int32_t* word_pos
        int32_t* zd
        const int32_t* doc_pos
    ctypedef struct clda_mh_prior:
        const double* prior
        double total
        const double* prob
        const int32_t* alias
    void clda_mh_sweep_document(
        const clda_mh_ctx* ctx, int64_t i0, int64_t i1, int32_t* ndk_d,
        const clda_mh_prior* pg, const double* u_buf,
        const int32_t* doc_z, int64_t doc_len) noexcept nogil

cdef extern from "_uniforms.h":
    void clda_fill_uniforms(double* u, int64_t n, uint64_t key, uint64_t c0,
                            int wide) noexcept nogil
    int clda_uniforms_cpu_has_avx512() noexcept nogil

cdef extern from "_sparse_mh_kernel.h":
    ctypedef struct clda_smw_docs:
        uint32_t* entries
        int32_t shift
        int32_t* n
        const int64_t* off
        const int32_t* wword
        const int32_t* wdoc
        int32_t* ndk
        Py_ssize_t ndk_stride
        const int32_t* doc_group
        const double* prior
        const double* c
    ctypedef struct clda_smw_scratch:
        double* inv
        double* cum
        int32_t* mark
        double* wr
        int32_t wr_word
        int32_t* row
        int32_t row_word
    void clda_smw_fill_inv(const clda_mh_ctx* ctx, clda_smw_scratch* sc) noexcept nogil
    void clda_smw_build_lists(clda_smw_docs* dl, clda_smw_scratch* sc, const int32_t* z,
                              const int32_t* doc_tok, int64_t d0, int64_t d1) noexcept nogil
    void clda_smw_store_lists(const clda_smw_docs* dl, const int32_t* z, const int32_t* doc_tok,
                              int64_t d0, int64_t d1) noexcept nogil
    void clda_smw_release_row(const clda_mh_ctx* ctx, clda_smw_scratch* sc) noexcept nogil
    void clda_smw_sweep_tokens(const clda_mh_ctx* ctx, clda_smw_docs* dl, clda_smw_scratch* sc,
                               const int32_t* pos, int64_t p0, int64_t p1,
                               const double* u) noexcept nogil

import numpy as np
cimport numpy as np

from . import _sampling

np.import_array()

def build_alias_tables(const double[:, ::1] prior):
    """Walker alias tables of each row of ``prior`` (Vose's construction).

    Equivalent to, for each row ``a`` of length ``K``::

        total = 0.0
        for x in a: total += x                 # left to right
        q = [x * (K / total) for x in a]
        small = [k for k in range(K) if q[k] < 1.0]
        large = [k for k in range(K) if q[k] >= 1.0]
        prob, alias = [1.0] * K, list(range(K))
        while small and large:
            s, l = small.pop(), large.pop()
            prob[s], alias[s] = q[s], l
            q[l] = (q[l] + q[s]) - 1.0
            (small if q[l] < 1.0 else large).append(l)

    A draw is then ``c = min(int(u * K), K - 1)``, ``c if u * K - c <
    prob[c] else alias[c]`` for ``u`` uniform on [0, 1): topic ``k`` with
    probability ``a[k] / total`` (up to rounding).

    Returns
    -------
    prob : ndarray of shape (G, K), float64
    alias : ndarray of shape (G, K), int32
    totals : ndarray of shape (G,), float64
        The row sums, added left to right.
    """
    cdef Py_ssize_t G = prior.shape[0], K = prior.shape[1]
    prob_arr = np.ones((G, K), dtype=np.float64)
    alias_arr = np.empty((G, K), dtype=np.int32)
    totals_arr = np.zeros(G, dtype=np.float64)
    q_arr = np.empty(K, dtype=np.float64)
    small_arr = np.empty(K, dtype=np.int32)
    large_arr = np.empty(K, dtype=np.int32)
    cdef double[:, ::1] prob = prob_arr
    cdef int32_t[:, ::1] alias = alias_arr
    cdef double[::1] totals = totals_arr, q = q_arr
    cdef int32_t[::1] small = small_arr, large = large_arr
    cdef Py_ssize_t g
    with nogil:
        for g in range(G):
            totals[g] = _alias_row(&prior[g, 0], K, &prob[g, 0], &alias[g, 0],
                                   &q[0], &small[0], &large[0])
    return prob_arr, alias_arr, totals_arr


cdef double _alias_row(const double* a, Py_ssize_t K, double* prob, int32_t* alias,
                       double* q, int32_t* small, int32_t* large) noexcept nogil:
    """One row of ``build_alias_tables`` (``prob`` preset to 1); returns its total."""
    cdef double total = 0.0, scale
    cdef Py_ssize_t k, n_small = 0, n_large = 0
    cdef int32_t s, l
    for k in range(K):
        total += a[k]
    scale = K / total
    for k in range(K):
        alias[k] = <int32_t> k
        q[k] = a[k] * scale
        if q[k] < 1.0:
            small[n_small] = <int32_t> k
            n_small += 1
        else:
            large[n_large] = <int32_t> k
            n_large += 1
    while n_small > 0 and n_large > 0:
        n_small -= 1
        n_large -= 1
        s = small[n_small]
        l = large[n_large]
        prob[s] = q[s]
        alias[s] = l
        q[l] = (q[l] + q[s]) - 1.0
        if q[l] < 1.0:
            small[n_small] = l
            n_small += 1
        else:
            large[n_large] = l
            n_large += 1
    return total


cdef bint _AVX512 = clda_uniforms_cpu_has_avx512() != 0
cdef bint _PORTABLE_FILL = False


def _set_fill(str name):
    """Select the loop that fills the MH kernel's uniforms: ``"auto"``
    (AVX-512 when the CPU has it) or ``"portable"``; returns the previous
    setting's name. Both give the same doubles (tests hold them to that);
    the switch exists so that the portable loop is tested everywhere.
    """
    global _PORTABLE_FILL
    if name not in ("auto", "portable"):
        raise ValueError(f"unknown fill {name!r}; use 'auto' or 'portable'")
    old = "portable" if _PORTABLE_FILL else "auto"
    _PORTABLE_FILL = name == "portable"
    return old


cdef inline bint _wide_fill() noexcept nogil:
    """Whether ``clda_fill_uniforms`` takes its AVX-512 loop now."""
    return _AVX512 and not _PORTABLE_FILL


def mh_uniforms(uint64_t key, uint64_t start, int64_t n):
    """Uniforms ``start:start + n`` of the kernels' stream of ``key``.

    The counter-based stream of ``_uniforms.h`` (SplitMix64 outputs' top
    53 bits) that the MH kernels and the dense sweep read, equivalent to,
    with uint64 arithmetic mod 2**64::

        x = key + np.arange(start + 1, start + n + 1, dtype=np.uint64) * GAMMA
        x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9
        x = (x ^ (x >> 27)) * 0x94D049BB133111EB
        u = ((x ^ (x >> 31)) >> 11).astype(np.float64) * 2.0**-53

    with ``GAMMA = 0x9E3779B97F4A7C15``.
    """
    if n < 0:
        raise ValueError(f"n must be non-negative, got {n}")
    u_arr = np.empty(n, dtype=np.float64)
    cdef double[::1] u = u_arr
    if n > 0:
        clda_fill_uniforms(&u[0], n, key, start, _wide_fill())
    return u_arr


def word_index(const int32_t[::1] words, Py_ssize_t n_features):
    """Token positions grouped by word: ``(word_ptr, word_tokens)``.

    Equivalent to ``word_tokens = np.argsort(words, kind="stable")`` and
    ``word_ptr = np.r_[0, np.cumsum(np.bincount(words, minlength=V))]``
    (``word_ptr`` int64, ``word_tokens`` int32: a corpus has fewer than
    2**31 tokens): the tokens of word ``w`` are
    ``word_tokens[word_ptr[w]:word_ptr[w + 1]]``, in token order.
    """
    words_np = np.asarray(words)
    if words_np.size and (words_np.min() < 0 or words_np.max() >= n_features):
        raise ValueError("word ids must lie in [0, n_features)")
    word_ptr = np.zeros(n_features + 1, dtype=np.int64)
    np.cumsum(np.bincount(words_np, minlength=n_features), out=word_ptr[1:])
    word_tokens = np.argsort(words_np, kind="stable").astype(np.int32)
    return word_ptr, word_tokens


def word_positions(const int32_t[::1] word_tokens):
    """Each token's place in the word order of :func:`word_index`:
    ``word_pos[word_tokens] = arange(n_tokens)`` (int32)."""
    cdef Py_ssize_t n = word_tokens.shape[0], j
    word_pos_arr = np.empty(n, dtype=np.int32)
    cdef int32_t[::1] word_pos = word_pos_arr
    cdef int bad = 0
    with nogil:
        for j in range(n):
            if not 0 <= word_tokens[j] < n:
                bad = 1
                break
            word_pos[word_tokens[j]] = <int32_t> j
    if bad:
        raise ValueError("word_positions: a token position is outside 0 .. n_tokens - 1")
    return word_pos_arr


def gather(const int32_t[::1] values, const int32_t[::1] index, int32_t[::1] out):
    """``out[:] = values[index]`` for int32 arrays, with no index array
    converted to intp on the way (NumPy's indexing makes an 8-byte copy of
    an int32 index: a transient of 8 bytes a token). ``ValueError`` on an
    index outside ``values`` or lengths that differ."""
    cdef Py_ssize_t n = index.shape[0], m = values.shape[0], j
    cdef int32_t i
    cdef int bad = 0
    if out.shape[0] != n:
        raise ValueError("gather: out and index must have the same length")
    with nogil:
        for j in range(n):
            i = index[j]
            if not 0 <= i < m:
                bad = 1
                break
            out[j] = values[i]
    if bad:
        raise ValueError("gather: an index is outside the values")


def scatter(int32_t[::1] out, const int32_t[::1] index, const int32_t[::1] values):
    """``out[index] = values`` for int32 arrays, as :func:`gather` (the
    same checks; ``out`` unchanged when an index is out of range)."""
    cdef Py_ssize_t n = index.shape[0], m = out.shape[0], j
    cdef int bad = 0
    if values.shape[0] != n:
        raise ValueError("scatter: values and index must have the same length")
    with nogil:
        for j in range(n):
            if not 0 <= index[j] < m:
                bad = 1
                break
    if bad:
        raise ValueError("scatter: an index is outside out")
    with nogil:
        for j in range(n):
            out[index[j]] = values[j]


cdef inline bitgen_t* _get_bitgen(object bit_generator) except NULL:
    return <bitgen_t*> PyCapsule_GetPointer(bit_generator.capsule, "BitGenerator")


cdef void _fill_ctx(
    clda_mh_ctx* ctx, const int32_t[::1] words, int32_t[::1] z, int32_t[:, ::1] nwk,
    int32_t[::1] nk, double eta, const int64_t[::1] word_ptr,
    const int32_t[::1] word_tokens, int mh_steps,
) noexcept:
    """The sweep context of these (non-empty) arrays, shared by the sweeps;
    ``nwk`` is None (NULL in the context) for the sparse kernel without a
    word-topic table. V is ``len(word_ptr) - 1``."""
    ctx.K = nk.shape[0]
    ctx.mh_steps = mh_steps
    ctx.words = &words[0]
    ctx.z = &z[0]
    if nwk is None:
        ctx.nwk = NULL
        ctx.nwk_stride = 0
    else:
        ctx.nwk = &nwk[0, 0]
        ctx.nwk_stride = nwk.strides[0] // sizeof(int32_t)
    ctx.nk = &nk[0]
    ctx.eta = eta
    ctx.veta = (word_ptr.shape[0] - 1) * eta
    ctx.keta = nk.shape[0] * eta
    ctx.word_ptr = &word_ptr[0]
    ctx.word_tokens = &word_tokens[0]
    ctx.zw = NULL
    ctx.word_pos = NULL
    ctx.zd = NULL
    ctx.doc_pos = NULL


def _check_sweep_args(name, const int32_t[::1] words, const int64_t[::1] doc_ptr,
                      const int32_t[::1] doc_group, const int32_t[::1] z,
                      const int32_t[:, ::1] nwk, const int32_t[:, ::1] ndk,
                      const int32_t[::1] nk, const double[:, ::1] prior,
                      const int64_t[::1] word_ptr, const int32_t[::1] word_tokens,
                      int mh_steps, const int64_t[:, ::1] tables):
    """The shape checks of the serial sweeps ``mh_sweep`` and ``sparse_mh_sweep``
    (``nwk`` None: no word-topic table, V is ``len(word_ptr) - 1``)."""
    cdef Py_ssize_t n_docs = doc_ptr.shape[0] - 1
    cdef Py_ssize_t K = nk.shape[0]
    cdef Py_ssize_t V = word_ptr.shape[0] - 1 if nwk is None else nwk.shape[0]
    cdef int64_t n_tokens = words.shape[0]
    if ((nwk is not None and nwk.shape[1] < K) or ndk.shape[1] != K or prior.shape[1] != K
            or ndk.shape[0] != n_docs or doc_group.shape[0] != n_docs
            or z.shape[0] != n_tokens or tables.shape[1] != K
            or (tables.shape[0] > 0 and tables.shape[0] != prior.shape[0])
            or word_ptr.shape[0] != V + 1 or word_tokens.shape[0] != n_tokens):
        raise ValueError(f"inconsistent array shapes passed to {name}")
    if n_docs > 0 and doc_ptr[n_docs] != n_tokens:
        raise ValueError("doc_ptr does not cover the token arrays")
    if mh_steps < 1:
        raise ValueError(f"mh_steps must be at least 1, got {mh_steps}")


def mh_sweep(
    const int32_t[::1] words,
    const int64_t[::1] doc_ptr,
    const int32_t[::1] doc_group,
    int32_t[::1] z,
    int32_t[:, ::1] nwk not None,
    int32_t[:, ::1] ndk,
    int32_t[::1] nk,
    const double[:, ::1] prior,
    double eta,
    const int64_t[::1] word_ptr,
    const int32_t[::1] word_tokens,
    int mh_steps,
    int64_t[:, ::1] tables,
    object bit_generator,
    word_pos=None,
):
    """One Metropolis-Hastings sweep over all tokens, in place.

    The arguments are those of ``_sampling.gibbs_sweep`` plus the word
    index of :func:`word_index`, the number of MH steps per token and
    optionally ``word_pos``, :func:`word_positions` of ``word_tokens``
    (computed here when not given: the kernel keeps a copy of ``z`` in
    word order for the word proposal).
    Equivalent to (``V, K = nwk.shape[0], nk.shape[0]``, ``u`` the
    uniforms of :func:`mh_uniforms`)::

        key = bit_generator.random_raw()         # one 64-bit draw a sweep
        prob, alias, totals = build_alias_tables(prior)
        for d in range(n_docs):
            g, i0, i1 = doc_group[d], doc_ptr[d], doc_ptr[d + 1]
            U = u(key, 3 * mh_steps * i0, 3 * mh_steps * (i1 - i0))
            for i in range(i0, i1):
                w, s = words[i], z[i]
                ndk[d, s] -= 1; nwk[w, s] -= 1; nk[s] -= 1
                n_w = word_ptr[w + 1] - word_ptr[w]
                for j in range(mh_steps):
                    u0, u1, u2 = U[3 * (mh_steps * (i - i0) + j) + np.arange(3)]
                    if j % 2 == 0:               # word proposal
                        x = u0 * (n_w + K * eta)
                        if x < n_w:
                            t = z[word_tokens[word_ptr[w] + int(x)]]
                        else:
                            t = min(int(u1 * K), K - 1)
                        num = (ndk[d, t] + prior[g, t]) * (nk[s] + V * eta)
                        den = (ndk[d, s] + prior[g, s]) * (nk[t] + V * eta)
                    else:                        # doc proposal
                        x = u0 * ((i1 - i0) + totals[g])
                        if x < i1 - i0:
                            t = z[i0 + int(x)]
                        else:
                            c = min(int(u1 * K), K - 1)
                            t = c if u1 * K - c < prob[g, c] else alias[g, c]
                        num = (nwk[w, t] + eta) * (nk[s] + V * eta)
                        den = (nwk[w, s] + eta) * (nk[t] + V * eta)
                    if t != s and u2 * den < num:
                        s = z[i] = t
                ndk[d, s] += 1; nwk[w, s] += 1; nk[s] += 1

    (see ``_mh_kernel.h`` for why this leaves the collapsed conditional
    invariant). Then, if ``tables`` has rows, the Antoniak table sums of
    the final ``ndk`` are added by ``_sampling.document_tables`` (the draws
    of ``gibbs_sweep``, made after the sweep).

    The arrays are trusted to be consistent (the estimators build them),
    as for ``gibbs_sweep``; ``word_ptr``/``word_tokens`` must be
    ``word_index(words, V)``.
    """
    _check_sweep_args("mh_sweep", words, doc_ptr, doc_group, z, nwk, ndk, nk, prior,
                      word_ptr, word_tokens, mh_steps, tables)
    cdef Py_ssize_t n_docs = doc_ptr.shape[0] - 1
    if words.shape[0] == 0:
        return
    prob_arr, alias_arr, totals_arr = build_alias_tables(prior)
    cdef const double[:, ::1] prob = prob_arr
    cdef const int32_t[:, ::1] alias = alias_arr
    cdef const double[::1] totals = totals_arr
    max_len = int(np.max(np.diff(np.asarray(doc_ptr))))
    u_arr = np.empty(max(3 * mh_steps * max_len, 1), dtype=np.float64)
    cdef double[::1] u_buf = u_arr
    cdef bitgen_t* rng = _get_bitgen(bit_generator)
    cdef clda_mh_ctx ctx
    cdef clda_mh_prior pg
    cdef Py_ssize_t d
    cdef int64_t i0, i1
    cdef int32_t g
    cdef uint64_t key
    _fill_ctx(&ctx, words, z, nwk, nk, eta, word_ptr, word_tokens, mh_steps)
    if word_pos is None:
        word_pos = word_positions(word_tokens)
    cdef const int32_t[::1] wpos = word_pos
    cdef int32_t[::1] zw = np.empty(words.shape[0], dtype=np.int32)
    gather(z, word_tokens, zw)
    if wpos.shape[0] != words.shape[0]:
        raise ValueError("inconsistent array shapes passed to mh_sweep")
    ctx.zw = &zw[0]
    ctx.word_pos = &wpos[0]
    with bit_generator.lock, nogil:
        key = rng.next_uint64(rng.state)
        for d in range(n_docs):
            g = doc_group[d]
            i0 = doc_ptr[d]
            i1 = doc_ptr[d + 1]
            clda_fill_uniforms(&u_buf[0], 3 * mh_steps * (i1 - i0), key, 3 * mh_steps * i0,
                                  _wide_fill())
            pg.prior = &prior[g, 0]
            pg.total = totals[g]
            pg.prob = &prob[g, 0]
            pg.alias = &alias[g, 0]
            clda_mh_sweep_document(&ctx, i0, i1, &ndk[d, 0], &pg, &u_buf[0], ctx.z + i0,
                                   i1 - i0)
    if tables.shape[0] > 0:
        _sampling.document_tables(ndk, doc_group, prior, tables, bit_generator)


cdef struct _MHCells:
    # What the MH steps of a partitioned sweep's pieces read besides the
    # sweep context (MHPartitionedSweep).
    const int64_t* piece_start
    const int32_t* piece_doc
    const int64_t* cell_piece
    Py_ssize_t P
    const int32_t* doc_group
    const int64_t* doc_ptr
    int32_t* ndk
    const double* prior
    const double* prob
    const int32_t* alias
    const double* totals
    bitgen_t** bitgen


cdef void _mh_pieces(const clda_mh_ctx* ctx, const _MHCells* c, int64_t j0, int64_t j1,
                     bitgen_t* rng, double* u) noexcept nogil:
    """The MH steps of pieces ``j0:j1``, one cell's (see
    :class:`MHPartitionedSweep`): one key from ``rng`` first, when there
    are pieces; ``u`` has room for the longest piece's uniforms."""
    cdef Py_ssize_t K = ctx.K
    cdef int64_t j, i0, i1, d
    cdef int32_t g
    cdef int64_t per_token = 3 * ctx.mh_steps
    cdef uint64_t key
    cdef clda_mh_prior pg
    if j0 >= j1:
        return
    key = rng.next_uint64(rng.state)
    for j in range(j0, j1):
        d = c.piece_doc[j]
        g = c.doc_group[d]
        i0 = c.piece_start[j]
        i1 = c.piece_start[j + 1]
        clda_fill_uniforms(u, per_token * (i1 - i0), key, per_token * i0, _wide_fill())
        pg.prior = c.prior + g * K
        pg.total = c.totals[g]
        pg.prob = c.prob + g * K
        pg.alias = c.alias + g * K
        clda_mh_sweep_document(ctx, i0, i1, c.ndk + d * K, &pg, u,
                               ctx.zd + c.doc_ptr[d], c.doc_ptr[d + 1] - c.doc_ptr[d])


cdef struct _MHThread:
    # One thread's argument of _mh_cell: the cells, its own copy of the
    # sweep context (nk set per cell) and its uniforms.
    const _MHCells* cells
    clda_mh_ctx ctx
    double* u


cdef void _mh_cell(void* arg, Py_ssize_t p, Py_ssize_t q, int32_t* nk) noexcept nogil:
    """Cell ``(p, q)`` against ``nk``, document block ``p``'s copy of the
    totals, from block ``p``'s stream (a ``clda_cell_fn`` of _substeps.h)."""
    cdef _MHThread* th = <_MHThread*> arg
    cdef const _MHCells* c = th.cells
    cdef Py_ssize_t cell = p * c.P + q
    th.ctx.nk = nk
    _mh_pieces(&th.ctx, c, c.cell_piece[cell], c.cell_piece[cell + 1], c.bitgen[p], th.u)


cdef class MHPartitionedSweep:
    """The MH steps of a partitioned sweep on ``n_threads`` threads that stay
    in the kernel for the whole sweep: ``_sampling.PartitionedSweep``'s
    scheme (_substeps.h) with MH cells.

    The tokens are in the partitioned sweep's cell order: piece ``j`` is
    the tokens ``piece_start[j]:piece_start[j + 1]`` of document
    ``piece_doc[j]``, cell ``(p, q)`` the pieces ``cell_piece[p * P +
    q]:cell_piece[p * P + q + 1]`` (``P = len(bitgens)``), and document
    ``d``'s tokens (all its pieces) are ``doc_tokens[doc_ptr[d]:doc_ptr[d
    + 1]]`` (``doc_ptr, doc_tokens = word_index(document of each token,
    n_docs)``). A cell, ``cell(lo, hi, nk, bitgen)`` below, is the token
    loop of :func:`mh_sweep` over its pieces ``lo:hi`` with one key drawn
    first (``bitgen.random_raw()``, none for an empty cell), the uniforms
    of piece ``j`` (tokens ``i0:i1``) ``mh_uniforms(key, 3 * mh_steps *
    i0, 3 * mh_steps * (i1 - i0))``, and the document proposal's token
    drawn from all of the document's tokens (``z[doc_tokens[doc_ptr[d] +
    int(x)]]`` with ``x < L_d``, ``L_d`` the document's length), read as
    ``zd[doc_ptr[d] + int(x)]``: ``zd`` is ``z[doc_tokens]`` and
    ``doc_pos`` :func:`word_positions` of ``doc_tokens``, and every move
    keeps ``zd`` current, as it does ``zw`` (``z[word_tokens]``, with
    ``word_pos`` :func:`word_positions` of ``word_tokens``). The prior's
    alias tables (:func:`build_alias_tables`) are made by
    :meth:`set_prior`. A sweep is ``P`` sub-steps; in sub-step ``s`` the
    cells ``(p, (p + s) % P)`` run, each against its document block's copy
    of the totals taken at the start of the sweep, and the copies' changes
    are then added to ``nk``. As NumPy::

        copies = [nk.copy() for p in range(P)]
        for s in range(P):
            for p in range(P):
                c = p * P + (p + s) % P
                cell(cell_piece[c], cell_piece[c + 1], copies[p], bitgens[p])
        nk += sum(c - nk for c in copies)

    ``run_thread(t)`` for ``t = 0 .. n_threads - 1``, called at the same
    time from ``n_threads`` threads after :meth:`set_prior`, computes
    exactly this, whichever thread sweeps which cell: a cell shares counts
    only with the cells of its document block and of its word block, and
    waits for the one before it in each (_substeps.h). With fewer threads than that the
    others wait until ``stop[0]`` is set, and a nonzero ``stop[0]``
    abandons the sweep (``run_thread`` returns -1). The arrays are trusted
    to be consistent beyond the shapes checked here (the sweeper builds
    them); the bit generators are used without their locks, so they must
    be private to this object.
    """
    cdef clda_substeps steps
    cdef _MHCells cells
    cdef clda_mh_ctx ctx
    cdef Py_ssize_t V
    cdef object _arrays
    cdef object _bitgens
    cdef object _bitgen_ptrs
    cdef object _tables
    cdef object _nk_cell
    cdef object _busy
    cdef object _counters
    cdef list _u
    cdef readonly Py_ssize_t n_threads

    def __init__(self, const int32_t[::1] words, int32_t[::1] z,
                 const int64_t[::1] piece_start, const int32_t[::1] piece_doc,
                 const int64_t[::1] cell_piece, const int32_t[::1] doc_group,
                 const int64_t[::1] doc_ptr, int32_t[::1] zd, const int32_t[::1] doc_pos,
                 int32_t[:, ::1] nwk not None, int32_t[:, ::1] ndk, int32_t[::1] nk,
                 const int64_t[::1] word_ptr, const int32_t[::1] word_tokens, int32_t[::1] zw,
                 const int32_t[::1] word_pos, int mh_steps, Py_ssize_t n_threads,
                 list bitgens, int32_t[::1] stop):
        cdef Py_ssize_t P = len(bitgens), K = nk.shape[0], n = words.shape[0], t
        cdef Py_ssize_t n_docs = ndk.shape[0]
        if (P < 1 or not 1 <= n_threads <= P or cell_piece.shape[0] != P * P + 1 or n < 1
                or K < 1 or mh_steps < 1 or stop.shape[0] != 1
                or z.shape[0] != n or zd.shape[0] != n or doc_pos.shape[0] != n
                or word_tokens.shape[0] != n or zw.shape[0] != n or word_pos.shape[0] != n
                or piece_doc.shape[0] + 1 != piece_start.shape[0]
                or doc_ptr.shape[0] != n_docs + 1 or doc_group.shape[0] != n_docs
                or ndk.shape[1] != K or nwk.shape[1] < K
                or word_ptr.shape[0] != nwk.shape[0] + 1):
            raise ValueError("inconsistent arrays passed to MHPartitionedSweep")
        if (piece_start[0] != 0 or piece_start[piece_start.shape[0] - 1] != n
                or cell_piece[0] != 0 or cell_piece[P * P] != piece_doc.shape[0]
                or doc_ptr[0] != 0 or doc_ptr[n_docs] != n or word_ptr[nwk.shape[0]] != n):
            raise ValueError("the pieces of MHPartitionedSweep do not cover the tokens")
        self.n_threads = n_threads
        self.V = nwk.shape[0]
        self._arrays = (words, z, piece_start, piece_doc, cell_piece, doc_group, doc_ptr, zd,
                        doc_pos, nwk, ndk, nk, word_ptr, word_tokens, zw, word_pos, stop)
        self._bitgens = bitgens
        self._bitgen_ptrs = np.array([<Py_ssize_t> _get_bitgen(b) for b in bitgens],
                                     dtype=np.intp)
        _fill_ctx(&self.ctx, words, z, nwk, nk, 1.0, word_ptr, word_tokens, mh_steps)
        self.ctx.zw = &zw[0]
        self.ctx.word_pos = &word_pos[0]
        self.ctx.zd = &zd[0]
        self.ctx.doc_pos = &doc_pos[0]
        self.cells.piece_start = &piece_start[0]
        self.cells.piece_doc = &piece_doc[0] if piece_doc.shape[0] else NULL
        self.cells.cell_piece = &cell_piece[0]
        self.cells.P = P
        self.cells.doc_group = &doc_group[0]
        self.cells.doc_ptr = &doc_ptr[0]
        self.cells.ndk = &ndk[0, 0]
        self.cells.bitgen = <bitgen_t**> np.PyArray_DATA(self._bitgen_ptrs)
        self.cells.prior = NULL
        self._nk_cell, nk_stride, self._busy, self._counters = _sampling._substeps_buffers(
            P, n_threads, K)
        longest = int(np.max(np.diff(np.asarray(piece_start)), initial=1))
        self._u = [_sampling._line_buffer(max(3 * mh_steps * longest, 1))
                   for t in range(n_threads)]
        clda_substeps_init(&self.steps, P, n_threads, K, &nk[0],
                           <int32_t*> np.PyArray_DATA(self._nk_cell), nk_stride, &stop[0],
                           <double*> np.PyArray_DATA(self._busy),
                           <int64_t*> np.PyArray_DATA(self._counters))

    def set_prior(self, prior, double eta):
        """The collections' prior rows and eta of the next sweep (their alias
        tables are built here); also readies the barrier and the cell
        counters for it."""
        prior = np.ascontiguousarray(prior, dtype=np.float64)
        if prior.ndim != 2 or prior.shape[1] != self.steps.K:
            raise ValueError("prior has the wrong number of topics")
        doc_group = np.asarray(self._arrays[5])
        if doc_group.size and doc_group.max() >= prior.shape[0]:
            raise ValueError("a document's collection has no row in prior")
        if not eta > 0:
            raise ValueError("eta must be positive")
        prob, alias, totals = build_alias_tables(prior)
        self._tables = (prior, prob, alias, totals)
        cdef const double[:, ::1] pr = prior, pb = prob
        cdef const int32_t[:, ::1] al = alias
        cdef const double[::1] tot = totals
        self.cells.prior = &pr[0, 0]
        self.cells.prob = &pb[0, 0]
        self.cells.alias = &al[0, 0]
        self.cells.totals = &tot[0]
        self.ctx.eta = eta
        self.ctx.veta = self.V * eta
        self.ctx.keta = self.steps.K * eta
        clda_substeps_ready(&self.steps)

    def run_thread(self, Py_ssize_t t):
        """Thread ``t``'s part of one sweep (GIL released); 0, or -1 if it
        was abandoned through ``stop``."""
        if not 0 <= t < self.n_threads or self.cells.prior == NULL:
            raise ValueError("run_thread needs 0 <= t < n_threads and set_prior first")
        cdef _MHThread th
        cdef int rc
        th.cells = &self.cells
        th.ctx = self.ctx
        th.u = <double*> np.PyArray_DATA(self._u[t])
        with nogil:
            rc = clda_substeps_run(&self.steps, t, _mh_cell, &th)
        return rc

    def busy_seconds(self):
        """Seconds each thread has spent in its cells so far, shape ``(n_threads,)``."""
        return np.asarray(self._busy)[::CLDA_BUSY_STRIDE].copy()


def sparse_weights(prior, nk, double eta, Py_ssize_t n_features):
    """The constant ``c`` of each collection's word part in the sparse sampler.

    Equivalent to ``(prior * (1.0 / (nk + V * eta))).mean(axis=1)`` (what
    this computes): the mean over topics of ``prior[g, k] / (nk[k] + V
    eta)``, so that ``c[g] * (nw[k] + eta)`` stands in for the prior part
    ``prior[g, k] * (nw[k] + eta) / (nk[k] + V eta)`` of the conditional
    (any positive constant leaves the chain exact; this one keeps the
    acceptance rate high).
    """
    return (np.asarray(prior) * (1.0 / (np.asarray(nk) + n_features * eta))).mean(axis=1)




# ------------------------------------------------- the sparse sampler, word-major
from cpython.exc cimport PyErr_CheckSignals

cdef enum:
    _SMW_CHUNK = 256  # tokens whose uniforms are drawn together
    _SMW_SIGNAL_TOKENS = 1 << 16  # tokens between two checks for Ctrl-C (milliseconds)


cdef int _check_signals() except -1 with gil:
    """Run Python's signal handlers (main thread only); a KeyboardInterrupt
    they raise propagates out of the calling sweep, between two tokens."""
    return PyErr_CheckSignals()


def word_major_index(const int32_t[::1] token_doc, const int64_t[::1] word_ptr,
                     const int32_t[::1] word_tokens):
    """The word and the document of each token in word order: ``(word_of,
    word_doc)``, int32, what the sparse sweep reads token by token.

    Equivalent to ``word_of = np.repeat(np.arange(V), np.diff(word_ptr))``
    and ``word_doc = token_doc[word_tokens]`` (``V = len(word_ptr) - 1``,
    ``token_doc`` the document of each token).
    """
    V = word_ptr.shape[0] - 1
    word_of = np.repeat(np.arange(V, dtype=np.int32), np.diff(np.asarray(word_ptr)))
    word_doc = np.empty(word_tokens.shape[0], dtype=np.int32)
    gather(token_doc, word_tokens, word_doc)
    return word_of, word_doc


def token_documents(const int64_t[::1] doc_ptr):
    """The document of each token, ``np.repeat(np.arange(D), np.diff(doc_ptr))`` (int32)."""
    D = doc_ptr.shape[0] - 1
    return np.repeat(np.arange(D, dtype=np.int32), np.diff(np.asarray(doc_ptr)))


cdef class _SparseScratch:
    """The working arrays of ``_sparse_mh_kernel.h`` for one thread (K-sized),
    and the uniforms of one chunk of tokens."""
    cdef object arrays
    cdef clda_smw_scratch sc
    cdef double* u
    cdef readonly Py_ssize_t K
    cdef readonly int mh_steps

    def __cinit__(self, Py_ssize_t K, int mh_steps):
        self.K, self.mh_steps = K, mh_steps
        self.arrays = (np.empty(max(K, 1)), np.empty(max(K, 1)),
                       np.full(max(K, 1), -1, dtype=np.int32),
                       np.empty(2 * max(mh_steps, 1) * _SMW_CHUNK), np.empty(max(K, 1)),
                       np.zeros(max(K, 1), dtype=np.int32))
        cdef double[::1] inv = self.arrays[0], cum = self.arrays[1], u = self.arrays[3]
        cdef double[::1] wr = self.arrays[4]
        cdef int32_t[::1] mark = self.arrays[2], row = self.arrays[5]
        self.sc.inv = &inv[0]
        self.sc.cum = &cum[0]
        self.sc.mark = &mark[0]
        self.sc.wr = &wr[0]
        self.sc.wr_word = -1
        self.sc.row = &row[0]
        self.sc.row_word = -1
        self.u = &u[0]


def sparse_scratch(Py_ssize_t n_components, int mh_steps):
    """Working arrays for ``sparse_mh_sweep_pieces`` (one per thread)."""
    return _SparseScratch(n_components, mh_steps)


def sparse_list_shift(Py_ssize_t n_components):
    """The bits of a topic in an entry of the sparse kernel's topic lists
    (``count << shift | topic``, uint32): those of ``n_components - 1``, at
    least 1."""
    return max(1, int(n_components - 1).bit_length())


def sparse_max_document_length(Py_ssize_t n_components):
    """The longest document the sparse kernel takes at ``n_components``
    topics: a topic's count in a document, at most its length, has the
    ``32 - sparse_list_shift(n_components)`` high bits of a list entry
    (4,194,303 tokens at K = 1000, 262,143 at 10,000, 65,535 at 65,536)."""
    return (1 << (32 - sparse_list_shift(n_components))) - 1


def check_sparse_document_lengths(doc_len, Py_ssize_t n_components):
    """Raise ``ValueError`` when a document (of lengths ``doc_len``) is
    longer than :func:`sparse_max_document_length` allows."""
    doc_len = np.asarray(doc_len)
    longest = int(doc_len.max()) if doc_len.shape[0] > 0 else 0
    limit = sparse_max_document_length(n_components)
    if longest > limit:
        raise ValueError(
            f"the sparse sampler holds a topic's count in a document in "
            f"{32 - sparse_list_shift(n_components)} bits at {n_components} topics, so "
            f"documents of at most {limit} tokens; the longest here has {longest}; "
            "use sampler='mh' or 'dense'")


cdef class _DocLists:
    """The documents' topic lists of a word-major sweep (``clda_smw_docs``):
    document ``d``'s list at ``doc_ptr[d]:doc_ptr[d] + n[d]`` of an array of
    ``n_tokens`` entries, ``count << shift | topic`` (uint32)."""
    cdef readonly object entries, n
    cdef readonly int64_t n_tokens
    cdef readonly Py_ssize_t n_docs
    cdef readonly int shift

    def __cinit__(self, int64_t n_tokens, Py_ssize_t n_docs, int shift):
        self.n_tokens, self.n_docs, self.shift = n_tokens, n_docs, shift
        self.entries = np.empty(max(n_tokens, 1), dtype=np.uint32)
        self.n = np.zeros(max(n_docs, 1), dtype=np.int32)


class SparseWorkspace:
    """What :func:`sparse_mh_sweep` reads besides the state, kept across
    sweeps by a sweeper: :func:`word_major_index` of the corpus
    (``word_of``, ``word_doc``), the documents' topic lists, one thread's
    working arrays and a buffer for ``z`` in word order. Raises
    ``ValueError`` on documents too long for the lists at this K
    (:func:`check_sparse_document_lengths`)."""

    def __init__(self, doc_ptr, word_ptr, word_tokens, n_components, mh_steps):
        n_tokens, n_docs = len(word_tokens), len(doc_ptr) - 1
        check_sparse_document_lengths(np.diff(doc_ptr), n_components)
        self.word_of, self.word_doc = word_major_index(token_documents(doc_ptr), word_ptr,
                                                       word_tokens)
        self.lists = _DocLists(n_tokens, n_docs, sparse_list_shift(n_components))
        self.scratch = _SparseScratch(n_components, mh_steps)
        self.zw = np.empty(n_tokens, dtype=np.int32)


def sparse_workspace(doc_ptr, word_ptr, word_tokens, n_components, mh_steps):
    """A :class:`SparseWorkspace` for sweeps of these token arrays."""
    return SparseWorkspace(doc_ptr, word_ptr, word_tokens, n_components, mh_steps)


def sparse_doc_lists(doc_ptr, Py_ssize_t n_components):
    """Storage for the topic lists of the documents of ``doc_ptr`` for
    ``sparse_mh_sweep_pieces`` at ``n_components`` topics; raises
    ``ValueError`` on documents too long for them
    (:func:`check_sparse_document_lengths`)."""
    check_sparse_document_lengths(np.diff(doc_ptr), n_components)
    return _DocLists(doc_ptr[len(doc_ptr) - 1], len(doc_ptr) - 1, sparse_list_shift(n_components))


cdef void _fill_docs(
    clda_smw_docs* dl, _DocLists lists, const int64_t[::1] doc_ptr,
    const int32_t[::1] word_of, const int32_t[::1] word_doc, int32_t[:, ::1] ndk,
    const int32_t[::1] doc_group, const double[:, ::1] prior, const double[::1] c,
) noexcept:
    """The documents' side of a word-major sweep over these (non-empty) arrays."""
    _fill_lists(dl, lists, doc_ptr, ndk)
    dl.wword = &word_of[0]
    dl.wdoc = &word_doc[0]
    dl.doc_group = &doc_group[0]
    dl.prior = &prior[0, 0]
    dl.c = &c[0]


cdef int _sweep_word_major(const clda_mh_ctx* ctx, clda_smw_docs* dl, clda_smw_scratch* sc,
                           double* u, const int32_t* pos, int64_t p0, int64_t p1,
                           bitgen_t* rng) except -1 nogil:
    """The tokens at word positions ``pos[p0:p1]`` (``p0:p1`` when ``pos`` is
    NULL), in chunks of ``_SMW_CHUNK`` whose uniforms are filled before
    their tokens: uniforms ``2 * mh_steps * (p - p0)`` onwards of the
    counter-based stream of ``_mh_kernel.h`` (:func:`mh_uniforms`) keyed by
    one 64-bit draw of ``rng`` per call; Python's signal handlers run
    between chunks every ``_SMW_SIGNAL_TOKENS`` tokens."""
    cdef int64_t p = p0, m, since = 0
    cdef uint64_t key = rng.next_uint64(rng.state)
    cdef int64_t per_token = 2 * ctx.mh_steps
    clda_smw_fill_inv(ctx, sc)
    while p < p1:
        m = min(p1 - p, <int64_t> _SMW_CHUNK)
        clda_fill_uniforms(u, per_token * m, key, per_token * (p - p0), _wide_fill())
        clda_smw_sweep_tokens(ctx, dl, sc, pos, p, p + m, u)
        p += m
        since += m
        if since >= _SMW_SIGNAL_TOKENS:
            since = 0
            clda_smw_release_row(ctx, sc)  # clean if Ctrl-C ends the sweep here
            _check_signals()
    clda_smw_release_row(ctx, sc)  # other threads may move the word's tokens next
    return 0


def sparse_mh_sweep(
    const int32_t[::1] words,
    const int64_t[::1] doc_ptr,
    const int32_t[::1] doc_group,
    int32_t[::1] z,
    int32_t[:, ::1] nwk,
    int32_t[:, ::1] ndk,
    int32_t[::1] nk,
    const double[:, ::1] prior,
    double eta,
    const int64_t[::1] word_ptr,
    const int32_t[::1] word_tokens,
    int mh_steps,
    int64_t[:, ::1] tables,
    object bit_generator,
    workspace=None,
):
    """One sweep of the sparse MH sampler over all tokens, word by word, in place.

    The arguments are those of :func:`mh_sweep`, and optionally
    ``workspace``, :func:`sparse_workspace` of ``doc_ptr``, ``word_ptr``,
    ``word_tokens``, K and ``mh_steps`` (made here when not given).
    ``nwk`` may be None: then no word-topic table is read or kept, each
    word's counts coming from its tokens' topics (the same values, so the
    same chain; ``V = len(word_ptr) - 1``). The tokens are
    taken in the word order of ``word_tokens``, each with ``mh_steps``
    steps from the proposal of ``_sparse_mh_kernel.h``, exact over its
    document's topics. Equivalent to (``V, K = nwk.shape[0],
    nk.shape[0]``, ``u`` the uniforms of :func:`mh_uniforms`)::

        key = bit_generator.random_raw()         # one 64-bit draw a sweep
        c = sparse_weights(prior, nk, eta, V)    # fixed for the sweep
        inv = 1.0 / (nk + V * eta)               # kept current below
        topics = [list(dict.fromkeys(z[doc_ptr[d]:doc_ptr[d + 1]]))
                  for d in range(n_docs)]        # topics by first token
        U = u(key, 0, 2 * mh_steps * n_tokens)   # filled in chunks, same values
        for j, i in enumerate(word_tokens):
            w, d, s0 = words[i], doc_of[i], z[i]
            g, L = doc_group[d], topics[d]
            ndk[d, s0] -= 1; nwk[w, s0] -= 1; nk[s0] -= 1
            inv[s0] = 1.0 / (nk[s0] + V * eta)
            n_w = word_ptr[w + 1] - word_ptr[w]
            P = ((nwk[w, L] + eta) * inv[L]) * ndk[d, L]
            cum = running_sums(P)                # blocks of 4, see below
            A = cum[-1] if L else 0.0
            total = A + c[g] * (n_w + K * eta)
            s = s0
            for r in range(mh_steps):
                u0, u1 = U[2 * (mh_steps * j + r) + np.arange(2)]
                x = u0 * total
                if x < A:
                    t = L[np.searchsorted(cum, x, side="right")]
                else:
                    y = (x - A) / c[g]
                    if y < n_w:
                        t = z[word_tokens[word_ptr[w] + int(y)]]
                    else:
                        t = min(int((y - n_w) / eta), K - 1)
                ps = (ndk[d, s] + prior[g, s]) * inv[s]
                qs = ndk[d, s] * inv[s] + c[g]
                pt = (ndk[d, t] + prior[g, t]) * inv[t]
                qt = ndk[d, t] * inv[t] + c[g]
                if t != s and u1 * (ps * qt) < pt * qs:
                    s = z[i] = t
            if s != s0:
                if ndk[d, s0] == 0:              # removed: the last one takes its place
                    m = L.index(s0); L[m] = L[-1]; L.pop()
                if s not in L:
                    L.append(s)
            ndk[d, s] += 1; nwk[w, s] += 1; nk[s] += 1
            inv[s] = 1.0 / (nk[s] + V * eta)

    (``doc_of`` the document of each token), with ``running_sums`` the
    blocked running sums of ``clda_smw_leave_out`` in
    ``_sparse_mh_kernel.h`` (P padded with zeros to a multiple of 4)::

        S = np.cumsum(P.reshape(-1, 4), axis=1)
        cum = (np.r_[0.0, np.cumsum(S[:, 3])[:-1]][:, None] + S).ravel()[:len(L)]

    (see ``_sparse_mh_kernel.h`` for why this leaves the collapsed
    conditional invariant). Then, if ``tables`` has rows, the Antoniak
    table sums are added as in :func:`mh_sweep` (the same draws, from the
    documents' topic lists: ``_sampling.list_tables``). Ctrl-C raises
    ``KeyboardInterrupt`` between two tokens, the counts consistent with
    ``z``. Trusted as :func:`mh_sweep` is, except that it raises
    ``ValueError`` on documents longer than its topic lists allow
    (:func:`sparse_max_document_length`).
    """
    _check_sweep_args("sparse_mh_sweep", words, doc_ptr, doc_group, z, nwk, ndk, nk, prior,
                      word_ptr, word_tokens, mh_steps, tables)
    cdef Py_ssize_t n_docs = doc_ptr.shape[0] - 1
    cdef int64_t n_tokens = words.shape[0]
    if n_tokens == 0:
        return
    cdef const double[::1] c = sparse_weights(prior, nk, eta, word_ptr.shape[0] - 1)
    if workspace is None:
        workspace = sparse_workspace(doc_ptr, word_ptr, word_tokens, nk.shape[0], mh_steps)
    cdef const int32_t[::1] word_of = workspace.word_of, word_doc = workspace.word_doc
    cdef int32_t[::1] zw = workspace.zw
    cdef _DocLists lists = workspace.lists
    cdef _SparseScratch scratch = workspace.scratch
    if (word_of.shape[0] != n_tokens or word_doc.shape[0] != n_tokens
            or zw.shape[0] != n_tokens or lists.n_tokens != n_tokens
            or lists.n_docs != n_docs or scratch.K != nk.shape[0]
            or lists.shift != sparse_list_shift(nk.shape[0]) or scratch.mh_steps < mh_steps):
        raise ValueError("inconsistent workspace passed to sparse_mh_sweep")
    check_sparse_document_lengths(np.diff(doc_ptr), nk.shape[0])
    gather(z, word_tokens, zw)
    cdef bitgen_t* rng = _get_bitgen(bit_generator)
    cdef clda_mh_ctx ctx
    cdef clda_smw_docs dl
    _fill_ctx(&ctx, words, z, nwk, nk, eta, word_ptr, word_tokens, mh_steps)
    ctx.zw = &zw[0]
    _fill_docs(&dl, lists, doc_ptr, word_of, word_doc, ndk, doc_group, prior, c)
    with bit_generator.lock:
        with nogil:
            clda_smw_build_lists(&dl, &scratch.sc, &z[0], NULL, 0, n_docs)
        try:
            with nogil:
                _sweep_word_major(&ctx, &dl, &scratch.sc, scratch.u, NULL, 0, n_tokens, rng)
        finally:  # also when interrupted
            with nogil:
                clda_smw_store_lists(&dl, &z[0], NULL, 0, n_docs)
            scatter(z, word_tokens, zw)
    if tables.shape[0] > 0:  # from the lists: no pass over the dense counts
        _sampling.list_tables(lists.entries, lists.shift, lists.n, doc_ptr, 0, n_docs,
                              doc_group, prior, tables, bit_generator)


cdef void _fill_lists(clda_smw_docs* dl, _DocLists lists, const int64_t[::1] doc_ptr,
                      int32_t[:, ::1] ndk) noexcept:
    """The part of ``clda_smw_docs`` that building and storing the lists use
    (``ndk`` None: building only)."""
    cdef uint32_t[::1] entries = lists.entries
    cdef int32_t[::1] n = lists.n
    dl.entries = &entries[0]
    dl.shift = lists.shift
    dl.n = &n[0]
    dl.off = &doc_ptr[0]
    dl.ndk = NULL if ndk is None else &ndk[0, 0]
    dl.ndk_stride = 0 if ndk is None else ndk.strides[0] // sizeof(int32_t)


def sparse_build_lists(_DocLists lists, const int32_t[::1] z, const int64_t[::1] doc_ptr,
                       const int32_t[::1] doc_tokens, _SparseScratch scratch):
    """The documents' topic lists from their tokens' topics, for
    ``sparse_mh_sweep_pieces``: document ``d``'s tokens are
    ``doc_tokens[doc_ptr[d]:doc_ptr[d + 1]]`` and its list their distinct
    topics in the order of their first token, with their counts (the
    counts of the sweep until :func:`sparse_store_lists`). Trusted
    (``_mh_partition._SparsePieces`` builds everything)."""
    cdef clda_smw_docs dl
    cdef Py_ssize_t n_docs = doc_ptr.shape[0] - 1
    if z.shape[0] == 0:
        return
    _fill_lists(&dl, lists, doc_ptr, None)
    with nogil:
        clda_smw_build_lists(&dl, &scratch.sc, &z[0], &doc_tokens[0], 0, n_docs)


def sparse_store_lists(_DocLists lists, const int32_t[::1] z, const int64_t[::1] doc_ptr,
                       const int32_t[::1] doc_tokens, int32_t[:, ::1] ndk, int64_t d0,
                       int64_t d1):
    """The counts of the topic lists of documents ``d0:d1`` back into their
    rows of ``ndk``, whose counts are those of the topics ``z`` that
    :func:`sparse_build_lists` built the lists from: equivalent to
    ``ndk[d, z[doc_tokens[doc_ptr[d]:doc_ptr[d + 1]]]] = 0``, then
    ``ndk[d, topic] = count`` for each entry ``count << lists.shift |
    topic`` of the list. Trusted."""
    cdef clda_smw_docs dl
    if d0 >= d1:
        return
    _fill_lists(&dl, lists, doc_ptr, ndk)
    with nogil:
        clda_smw_store_lists(&dl, &z[0], &doc_tokens[0], d0, d1)


def sparse_mh_sweep_pieces(
    const int32_t[::1] words,
    int32_t[::1] z,
    const int32_t[::1] cell_pos,
    int64_t p0,
    int64_t p1,
    const int32_t[::1] doc_group,
    const int64_t[::1] doc_ptr,
    _DocLists lists,
    int32_t[:, ::1] nwk,
    int32_t[:, ::1] ndk,
    int32_t[::1] nk,
    const double[:, ::1] prior,
    double eta,
    const double[::1] c,
    const int64_t[::1] word_ptr,
    const int32_t[::1] word_tokens,
    int32_t[::1] zw,
    const int32_t[::1] word_of,
    const int32_t[::1] word_doc,
    int mh_steps,
    _SparseScratch scratch,
    object bit_generator,
):
    """The sparse MH steps of one cell of a partitioned sweep, word by word.

    The cell's tokens are those at the word positions
    ``cell_pos[p0:p1]`` (increasing), positions in the word order of
    ``word_tokens`` over the tokens in the partitioned sweep's cell order
    (``words``, ``z``). Equivalent to the token loop of
    :func:`sparse_mh_sweep` over these tokens (``j`` running over
    ``cell_pos[p0:p1]``), with ``inv`` computed from ``nk`` (this cell's
    copy of the totals) at the start of the call, the cell's uniforms
    ``mh_uniforms(key, 0, 2 * mh_steps * (p1 - p0))`` with ``key`` one
    64-bit draw of ``bit_generator`` per call (none for an empty cell),
    and the documents' topic lists ``lists`` as
    :func:`sparse_build_lists` built them at the start of the sweep (and
    the earlier cells of the sweep left them). ``c`` is
    :func:`sparse_weights` (taken once per sweep); ``scratch`` is
    :func:`sparse_scratch`, one per thread; ``zw`` is ``z[word_tokens]``
    (kept current here; ``z`` is not: the caller writes ``zw`` back);
    ``word_of`` and ``word_doc`` are :func:`word_major_index`. ``nwk`` may
    be None, as in :func:`sparse_mh_sweep`: a word's row is then counted
    from all its tokens in ``zw`` (no other cell of the sub-step moves
    them) and dropped at the end of the call (the word's next cell may run
    on another thread).

    Trusted (``_mh_partition._SparsePieces`` builds everything); the GIL
    is released while sampling, so the cells of a sub-step run on threads
    in parallel (they share no counts but ``nk``, of which each gets a
    copy).
    """
    if p0 >= p1:
        return
    cdef bitgen_t* rng = _get_bitgen(bit_generator)
    cdef clda_mh_ctx ctx
    cdef clda_smw_docs dl
    _fill_ctx(&ctx, words, z, nwk, nk, eta, word_ptr, word_tokens, mh_steps)
    ctx.zw = &zw[0]
    _fill_docs(&dl, lists, doc_ptr, word_of, word_doc, ndk, doc_group, prior, c)
    with bit_generator.lock, nogil:
        _sweep_word_major(&ctx, &dl, &scratch.sc, scratch.u, &cell_pos[0], p0, p1, rng)


# ----------------------------------------- word-topic counts from the topics


cdef int _cmp_int32(const void* a, const void* b) noexcept nogil:
    cdef int32_t x = (<const int32_t*> a)[0], y = (<const int32_t*> b)[0]
    return (x > y) - (x < y)


def word_topic_counts(const int64_t[::1] word_ptr, const int32_t[::1] zw,
                      Py_ssize_t n_components):
    """The word-topic counts of the topics in word order, as the arrays
    ``(indptr, indices, data)`` of a ``(V, K)`` CSR matrix with sorted
    indices (int64, int32, int32): what a sampler without a word-topic
    table (the sparse kernel's) reports as its table.

    Word ``w``'s tokens have the topics ``zw[word_ptr[w]:word_ptr[w + 1]]``
    (``word_ptr``: :func:`word_index`). Equivalent to (``V = len(word_ptr)
    - 1``, ``K = n_components``)::

        word = np.repeat(np.arange(V), np.diff(word_ptr))
        nwk = np.zeros((V, K), np.int32)
        np.add.at(nwk, (word, zw), 1)
        m = scipy.sparse.csr_matrix(nwk)
        m.indptr, m.indices, m.data

    in ``O(n_tokens + nnz log)`` time and ``O(K + nnz)`` memory. Raises
    ``ValueError`` if ``word_ptr`` does not cover ``zw`` or a topic is out
    of range.
    """
    cdef Py_ssize_t V = word_ptr.shape[0] - 1, K = n_components
    cdef int64_t n = zw.shape[0]
    if (V < 0 or K < 1 or word_ptr[0] != 0 or word_ptr[V] != n
            or np.any(np.diff(np.asarray(word_ptr)) < 0)):
        raise ValueError("word_ptr does not cover zw in word_topic_counts")
    if n and not (0 <= np.min(zw) and np.max(zw) < K):
        raise ValueError("a topic in zw is out of range of n_components")
    indptr_arr = np.zeros(V + 1, dtype=np.int64)
    cdef int64_t[::1] indptr = indptr_arr
    cdef int32_t[::1] row = np.zeros(K, dtype=np.int32)
    cdef Py_ssize_t w
    cdef int64_t j, m, nnz = 0
    with nogil:  # the distinct topics of each word
        for w in range(V):
            for j in range(word_ptr[w], word_ptr[w + 1]):
                if row[zw[j]] == 0:
                    nnz += 1
                row[zw[j]] += 1
            for j in range(word_ptr[w], word_ptr[w + 1]):
                row[zw[j]] = 0
            indptr[w + 1] = nnz
    indices_arr = np.empty(nnz, dtype=np.int32)
    data_arr = np.empty(nnz, dtype=np.int32)
    cdef int32_t[::1] indices = indices_arr, data = data_arr
    with nogil:  # their topics, sorted, and counts
        for w in range(V):
            m = indptr[w]
            for j in range(word_ptr[w], word_ptr[w + 1]):
                if row[zw[j]] == 0:
                    indices[m] = zw[j]
                    m += 1
                row[zw[j]] += 1
            if m > indptr[w]:
                qsort(&indices[indptr[w]], m - indptr[w], sizeof(int32_t), _cmp_int32)
            for m in range(indptr[w], indptr[w + 1]):
                data[m] = row[indices[m]]
                row[indices[m]] = 0
    return indptr_arr, indices_arr, data_arr

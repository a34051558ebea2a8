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

from libc.stdint cimport int32_t, int64_t, uint64_t
from numpy.random cimport bitgen_t
from cpython.pycapsule cimport PyCapsule_GetPointer

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
        const int64_t* word_tokens
        int32_t* zw
        const int64_t* word_pos
    ctypedef struct clda_mh_prior:
        const double* prior
        double total
        const double* prob
        const int32_t* alias
    void clda_mh_sweep_document(
        const clda_mh_ctx* ctx, int64_t i0, int64_t i1, int32_t* ndk_d,
        const clda_mh_prior* pg, const double* u_buf,
        const int64_t* doc_tok, int64_t doc_i0, int64_t doc_len) noexcept nogil
    void clda_mh_fill_uniforms(double* u, int64_t n, uint64_t key, uint64_t c0,
                               int wide) noexcept nogil
    int clda_mh_cpu_has_avx512() noexcept nogil

cdef extern from "_sparse_mh_kernel.h":
    ctypedef struct clda_smh_scratch:
        double* inv
        int32_t* mark
        int32_t* topics
        double* rd
        double* cum
        int32_t n_topics
    void clda_smh_fill_inv(const clda_mh_ctx* ctx, clda_smh_scratch* sc) noexcept nogil
    void clda_smh_sweep_document(
        const clda_mh_ctx* ctx, clda_smh_scratch* sc, int64_t i0, int64_t i1,
        int32_t* ndk_d, const double* prior, double c, const double* u_buf,
        const int64_t* doc_tok, int64_t doc_i0, int64_t doc_len) noexcept nogil

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


cdef bint _AVX512 = clda_mh_cpu_has_avx512() != 0
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
    """Whether ``clda_mh_fill_uniforms`` takes its AVX-512 loop now."""
    return _AVX512 and not _PORTABLE_FILL


def mh_uniforms(uint64_t key, uint64_t start, int64_t n):
    """Uniforms ``start:start + n`` of the MH kernel's stream of ``key``.

    The counter-based stream of ``_mh_kernel.h`` (SplitMix64 outputs'
    top 53 bits), equivalent to, with uint64 arithmetic mod 2**64::

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
        clda_mh_fill_uniforms(&u[0], n, key, start, _wide_fill())
    return u_arr


def word_index(const int32_t[::1] words, Py_ssize_t n_features):
    """Token positions grouped by word: ``(word_ptr, word_tokens)``.

    Equivalent to ``word_tokens = np.argsort(words, kind="stable")`` and
    ``word_ptr = np.r_[0, np.cumsum(np.bincount(words, minlength=V))]``
    (both int64): the tokens of word ``w`` are
    ``word_tokens[word_ptr[w]:word_ptr[w + 1]]``, in token order.
    """
    words_np = np.asarray(words)
    if words_np.size and (words_np.min() < 0 or words_np.max() >= n_features):
        raise ValueError("word ids must lie in [0, n_features)")
    word_ptr = np.zeros(n_features + 1, dtype=np.int64)
    np.cumsum(np.bincount(words_np, minlength=n_features), out=word_ptr[1:])
    word_tokens = np.argsort(words_np, kind="stable").astype(np.int64)
    return word_ptr, word_tokens


def word_positions(const int64_t[::1] word_tokens):
    """Each token's place in the word order of :func:`word_index`:
    ``word_pos[word_tokens] = arange(n_tokens)`` (int64)."""
    word_tokens_np = np.asarray(word_tokens)
    word_pos = np.empty(word_tokens_np.shape[0], dtype=np.int64)
    word_pos[word_tokens_np] = np.arange(word_tokens_np.shape[0], dtype=np.int64)
    return word_pos


cdef inline bitgen_t* _get_bitgen(object bit_generator) except NULL:
    return <bitgen_t*> PyCapsule_GetPointer(bit_generator.capsule, "BitGenerator")


cdef inline void _draw_uniforms(double* u, int64_t n, bitgen_t* rng) noexcept nogil:
    """The next ``n`` uniforms of the stream into ``u`` (a piece's or a
    document's, drawn together before its tokens)."""
    cdef int64_t t
    for t in range(n):
        u[t] = rng.next_double(rng.state)


cdef void _fill_ctx(
    clda_mh_ctx* ctx, const int32_t[::1] words, int32_t[::1] z, int32_t[:, ::1] nwk,
    int32_t[::1] nk, double eta, const int64_t[::1] word_ptr,
    const int64_t[::1] word_tokens, int mh_steps,
) noexcept:
    """The sweep context of these (non-empty) arrays, shared by ``mh_sweep``
    and ``mh_sweep_pieces``."""
    ctx.K = nk.shape[0]
    ctx.mh_steps = mh_steps
    ctx.words = &words[0]
    ctx.z = &z[0]
    ctx.nwk = &nwk[0, 0]
    ctx.nwk_stride = nwk.strides[0] // sizeof(int32_t)
    ctx.nk = &nk[0]
    ctx.eta = eta
    ctx.veta = nwk.shape[0] * eta
    ctx.keta = nk.shape[0] * eta
    ctx.word_ptr = &word_ptr[0]
    ctx.word_tokens = &word_tokens[0]
    ctx.zw = NULL
    ctx.word_pos = NULL


def _check_sweep_args(name, const int32_t[::1] words, const int64_t[::1] doc_ptr,
                      const int32_t[::1] doc_group, const int32_t[::1] z,
                      const int32_t[:, ::1] nwk, const int32_t[:, ::1] ndk,
                      const int32_t[::1] nk, const double[:, ::1] prior,
                      const int64_t[::1] word_ptr, const int64_t[::1] word_tokens,
                      int mh_steps, const int64_t[:, ::1] tables):
    """The shape checks of the serial sweeps ``mh_sweep`` and ``sparse_mh_sweep``."""
    cdef Py_ssize_t n_docs = doc_ptr.shape[0] - 1
    cdef Py_ssize_t K = nk.shape[0]
    cdef Py_ssize_t V = nwk.shape[0]
    cdef int64_t n_tokens = words.shape[0]
    if (nwk.shape[1] < K or ndk.shape[1] != K or prior.shape[1] != K
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
    int32_t[:, ::1] nwk,
    int32_t[:, ::1] ndk,
    int32_t[::1] nk,
    const double[:, ::1] prior,
    double eta,
    const int64_t[::1] word_ptr,
    const int64_t[::1] word_tokens,
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
    cdef const int64_t[::1] wpos = word_pos
    cdef int32_t[::1] zw = np.asarray(z)[np.asarray(word_tokens)]
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
            clda_mh_fill_uniforms(&u_buf[0], 3 * mh_steps * (i1 - i0), key, 3 * mh_steps * i0,
                                  _wide_fill())
            pg.prior = &prior[g, 0]
            pg.total = totals[g]
            pg.prob = &prob[g, 0]
            pg.alias = &alias[g, 0]
            clda_mh_sweep_document(&ctx, i0, i1, &ndk[d, 0], &pg, &u_buf[0], NULL, i0, i1 - i0)
    if tables.shape[0] > 0:
        _sampling.document_tables(ndk, doc_group, prior, tables, bit_generator)


def mh_sweep_pieces(
    const int32_t[::1] words,
    int32_t[::1] z,
    const int64_t[::1] piece_start,
    const int32_t[::1] piece_doc,
    int64_t piece_lo,
    int64_t piece_hi,
    const int32_t[::1] doc_group,
    const int64_t[::1] doc_ptr,
    const int64_t[::1] doc_tokens,
    int32_t[:, ::1] nwk,
    int32_t[:, ::1] ndk,
    int32_t[::1] nk,
    const double[:, ::1] prior,
    double eta,
    const double[:, ::1] prob,
    const int32_t[:, ::1] alias,
    const double[::1] totals,
    const int64_t[::1] word_ptr,
    const int64_t[::1] word_tokens,
    int32_t[::1] zw,
    const int64_t[::1] word_pos,
    int mh_steps,
    double[::1] u_buf,
    object bit_generator,
):
    """The MH steps of the pieces ``piece_lo:piece_hi`` of a partitioned sweep.

    The tokens are in the partitioned sweep's cell order: piece ``j`` is
    the tokens ``piece_start[j]:piece_start[j + 1]`` of document
    ``piece_doc[j]``, whose tokens (all its pieces) are
    ``doc_tokens[doc_ptr[d]:doc_ptr[d + 1]]``. Equivalent, piece by piece,
    to the token loop of :func:`mh_sweep` with one key drawn per call
    (``bit_generator.random_raw()``, first, when there are pieces), the
    uniforms of piece ``j`` (tokens ``i0:i1``) ``mh_uniforms(key, 3 *
    mh_steps * i0, 3 * mh_steps * (i1 - i0))``, and the document
    proposal's token drawn from all of the document's tokens
    (``z[doc_tokens[doc_ptr[d] + int(x)]]`` with ``x < L_d``, ``L_d`` the
    document's length). ``prob``, ``alias`` and ``totals`` are
    :func:`build_alias_tables` of ``prior``; ``zw`` is ``z[word_tokens]``
    (kept current here) and ``word_pos`` :func:`word_positions` of
    ``word_tokens``; ``u_buf`` (the pieces' uniforms) has room for
    ``3 * mh_steps`` uniforms per token of the longest piece.

    Trusted (``_mh_partition._MHPartitionedSweeper`` builds everything);
    the GIL is released while sampling, so the cells of a sub-step run on
    threads in parallel (they share no counts but ``nk``, of which each
    gets a copy).
    """
    if piece_lo >= piece_hi:
        return
    cdef bitgen_t* rng = _get_bitgen(bit_generator)
    cdef clda_mh_ctx ctx
    cdef clda_mh_prior pg
    cdef int64_t j, i0, i1
    cdef int32_t d, g
    cdef uint64_t key
    _fill_ctx(&ctx, words, z, nwk, nk, eta, word_ptr, word_tokens, mh_steps)
    ctx.zw = &zw[0]
    ctx.word_pos = &word_pos[0]
    with bit_generator.lock, nogil:
        key = rng.next_uint64(rng.state)
        for j in range(piece_lo, piece_hi):
            d = piece_doc[j]
            g = doc_group[d]
            i0 = piece_start[j]
            i1 = piece_start[j + 1]
            clda_mh_fill_uniforms(&u_buf[0], 3 * mh_steps * (i1 - i0), key, 3 * mh_steps * i0,
                                  _wide_fill())
            pg.prior = &prior[g, 0]
            pg.total = totals[g]
            pg.prob = &prob[g, 0]
            pg.alias = &alias[g, 0]
            clda_mh_sweep_document(&ctx, i0, i1, &ndk[d, 0], &pg, &u_buf[0],
                                   &doc_tokens[doc_ptr[d]], 0, doc_ptr[d + 1] - doc_ptr[d])


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


cdef class _SparseScratch:
    """The K-sized working arrays of ``_sparse_mh_kernel.h`` for one thread."""
    cdef object arrays
    cdef clda_smh_scratch sc

    def __cinit__(self, Py_ssize_t K):
        self.arrays = (np.empty(max(K, 1)), np.full(max(K, 1), -1, dtype=np.int32),
                       np.empty(max(K, 1), dtype=np.int32), np.empty(max(K, 1)),
                       np.empty(max(K, 1)))
        cdef double[::1] inv = self.arrays[0], cum = self.arrays[3], rd = self.arrays[4]
        cdef int32_t[::1] mark = self.arrays[1], topics = self.arrays[2]
        self.sc.inv = &inv[0]
        self.sc.mark = &mark[0]
        self.sc.topics = &topics[0]
        self.sc.cum = &cum[0]
        self.sc.rd = &rd[0]
        self.sc.n_topics = 0


def sparse_scratch(Py_ssize_t n_components):
    """Working arrays for ``sparse_mh_sweep_pieces`` (one per thread)."""
    return _SparseScratch(n_components)


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
    const int64_t[::1] word_tokens,
    int mh_steps,
    int64_t[:, ::1] tables,
    object bit_generator,
    word_pos=None,
):
    """One sweep of the sparse MH sampler over all tokens, in place.

    The arguments are those of :func:`mh_sweep` (and optionally
    ``word_pos``, :func:`word_positions` of ``word_tokens``, computed here
    when not given); each token takes
    ``mh_steps`` steps from the proposal of ``_sparse_mh_kernel.h``, exact
    over the document's topics. Equivalent to (``V, K = nwk.shape[0],
    nk.shape[0]``, ``u`` the ``Generator(bit_generator).random`` stream)::

        c = sparse_weights(prior, nk, eta, V)    # fixed for the sweep
        inv = 1.0 / (nk + V * eta)               # kept current below
        for d in range(n_docs):
            g, i0, i1 = doc_group[d], doc_ptr[d], doc_ptr[d + 1]
            U = u(3 * mh_steps * (i1 - i0))      # the document's uniforms
            topics = sorted(set(z[i0:i1]))       # the document's topics
            for i in range(i0, i1):
                w, s = words[i], z[i]
                ndk[d, s] -= 1; nwk[w, s] -= 1; nk[s] -= 1
                inv[s] = 1.0 / (nk[s] + V * eta)
                if ndk[d, s] == 0:
                    topics.remove(s)
                n_w = word_ptr[w + 1] - word_ptr[w]
                P = (nwk[w, topics] + eta) * (ndk[d, topics] * inv[topics])
                cum = running_sums(P)            # blocks of 4, see below
                A = cum[-1] if topics else 0.0
                total = A + c[g] * (n_w + K * eta)
                for j in range(mh_steps):
                    u0, u1, u2 = U[3 * (mh_steps * (i - i0) + j) + np.arange(3)]
                    x = u0 * total
                    if x < A:
                        t = topics[np.searchsorted(cum, x, side="right")]
                    else:
                        y = u1 * (n_w + K * eta)
                        if y < n_w:
                            t = z[word_tokens[word_ptr[w] + int(y)]]
                        else:
                            t = min(int((y - n_w) / eta), K - 1)
                    ps = (ndk[d, s] + prior[g, s]) * inv[s]
                    qs = ndk[d, s] * inv[s] + c[g]
                    pt = (ndk[d, t] + prior[g, t]) * inv[t]
                    qt = ndk[d, t] * inv[t] + c[g]
                    if t != s and u2 * (ps * qt) < pt * qs:
                        s = z[i] = t
                if ndk[d, s] == 0:
                    bisect.insort(topics, s)
                ndk[d, s] += 1; nwk[w, s] += 1; nk[s] += 1
                inv[s] = 1.0 / (nk[s] + V * eta)

    with ``running_sums`` the blocked running sums of
    ``clda_smh_running_sums`` in ``_sparse_mh_kernel.h`` (P padded with
    zeros to a multiple of 4)::

        S = np.cumsum(P.reshape(-1, 4), axis=1)
        cum = (np.r_[0.0, np.cumsum(S[:, 3])[:-1]][:, None] + S).ravel()[:len(topics)]

    (see ``_sparse_mh_kernel.h`` for why this leaves the collapsed
    conditional invariant). Then, if ``tables`` has rows, the Antoniak
    table sums are added as in :func:`mh_sweep`. Trusted as
    :func:`mh_sweep` is.
    """
    _check_sweep_args("sparse_mh_sweep", words, doc_ptr, doc_group, z, nwk, ndk, nk, prior,
                      word_ptr, word_tokens, mh_steps, tables)
    cdef Py_ssize_t n_docs = doc_ptr.shape[0] - 1
    if words.shape[0] == 0:
        return
    cdef const double[::1] c = sparse_weights(prior, nk, eta, nwk.shape[0])
    if word_pos is None:
        word_pos = word_positions(word_tokens)
    cdef const int64_t[::1] wpos = word_pos
    cdef int32_t[::1] zw = np.asarray(z)[np.asarray(word_tokens)]
    if wpos.shape[0] != words.shape[0]:
        raise ValueError("inconsistent array shapes passed to sparse_mh_sweep")
    max_len = int(np.max(np.diff(np.asarray(doc_ptr))))
    u_arr = np.empty(max(3 * mh_steps * max_len, 1), dtype=np.float64)
    cdef double[::1] u_buf = u_arr
    cdef _SparseScratch scratch = _SparseScratch(nk.shape[0])
    cdef bitgen_t* rng = _get_bitgen(bit_generator)
    cdef clda_mh_ctx ctx
    cdef Py_ssize_t d
    cdef int64_t i0, i1
    cdef int32_t g
    _fill_ctx(&ctx, words, z, nwk, nk, eta, word_ptr, word_tokens, mh_steps)
    ctx.zw = &zw[0]
    ctx.word_pos = &wpos[0]
    with bit_generator.lock, nogil:
        clda_smh_fill_inv(&ctx, &scratch.sc)
        for d in range(n_docs):
            g = doc_group[d]
            i0 = doc_ptr[d]
            i1 = doc_ptr[d + 1]
            _draw_uniforms(&u_buf[0], 3 * mh_steps * (i1 - i0), rng)
            clda_smh_sweep_document(&ctx, &scratch.sc, i0, i1, &ndk[d, 0], &prior[g, 0], c[g],
                                    &u_buf[0], NULL, i0, i1 - i0)
    if tables.shape[0] > 0:
        _sampling.document_tables(ndk, doc_group, prior, tables, bit_generator)


def sparse_mh_sweep_pieces(
    const int32_t[::1] words,
    int32_t[::1] z,
    const int64_t[::1] piece_start,
    const int32_t[::1] piece_doc,
    int64_t piece_lo,
    int64_t piece_hi,
    const int32_t[::1] doc_group,
    const int64_t[::1] doc_ptr,
    const int64_t[::1] doc_tokens,
    int32_t[:, ::1] nwk,
    int32_t[:, ::1] ndk,
    int32_t[::1] nk,
    const double[:, ::1] prior,
    double eta,
    const double[::1] c,
    const int64_t[::1] word_ptr,
    const int64_t[::1] word_tokens,
    int32_t[::1] zw,
    const int64_t[::1] word_pos,
    int mh_steps,
    double[::1] u_buf,
    _SparseScratch scratch,
    object bit_generator,
):
    """The sparse MH steps of the pieces ``piece_lo:piece_hi`` of a partitioned sweep.

    The layout is that of :func:`mh_sweep_pieces`. Equivalent, piece by
    piece, to the token loop of :func:`sparse_mh_sweep` with ``inv``
    computed from ``nk`` (this cell's copy of the totals) at the start of
    the call, the piece's uniforms drawn together before its tokens, and
    the document's topic list built at the start of each piece from all of
    the document's tokens (``z[doc_tokens[doc_ptr[d]:doc_ptr[d + 1]]]``).
    ``c`` is :func:`sparse_weights` (taken once per sweep);
    ``scratch`` is :func:`sparse_scratch` of K, one per thread; ``zw`` is
    ``z[word_tokens]`` (kept current here) and ``word_pos``
    :func:`word_positions` of ``word_tokens``.

    Trusted, as :func:`mh_sweep_pieces` is; the GIL is released while
    sampling.
    """
    if piece_lo >= piece_hi:
        return
    cdef bitgen_t* rng = _get_bitgen(bit_generator)
    cdef clda_mh_ctx ctx
    cdef int64_t j, i0, i1
    cdef int32_t d, g
    _fill_ctx(&ctx, words, z, nwk, nk, eta, word_ptr, word_tokens, mh_steps)
    ctx.zw = &zw[0]
    ctx.word_pos = &word_pos[0]
    with bit_generator.lock, nogil:
        clda_smh_fill_inv(&ctx, &scratch.sc)
        for j in range(piece_lo, piece_hi):
            d = piece_doc[j]
            g = doc_group[d]
            i0 = piece_start[j]
            i1 = piece_start[j + 1]
            _draw_uniforms(&u_buf[0], 3 * mh_steps * (i1 - i0), rng)
            clda_smh_sweep_document(&ctx, &scratch.sc, i0, i1, &ndk[d, 0], &prior[g, 0], c[g],
                                    &u_buf[0], &doc_tokens[doc_ptr[d]], 0,
                                    doc_ptr[d + 1] - doc_ptr[d])

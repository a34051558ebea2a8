"""The partitioned MH sweep (``sampler="mh"`` with ``n_jobs > 1``)."""

from types import SimpleNamespace

import numpy as np
import pytest
from test_mh_sampling import (
    _doc_lists,
    _reference_alias,
    _reference_mh_token,
    _reference_sparse_token,
    _reference_tables_of,
)
from test_partition import assert_lone_thread_gives_up
from test_sampling import _random_state, _reference_uniforms

from sklearn_clda import LDAGibbs, _mh_sampling
from sklearn_clda._chunking import balanced_bounds, pieces
from sklearn_clda._mh_partition import _MHPartitionedSweeper
from sklearn_clda._mh_sweeper import _MHSweeper
from sklearn_clda._partition import cell_layout, word_blocks
from sklearn_clda.datasets import make_lda_corpus


def _state(s):
    """The attributes of ``_GibbsState`` that the sweepers read, from ``s``."""
    return SimpleNamespace(
        words=s["words"], doc_ptr=s["doc_ptr"], doc_group=s["doc_group"], z=s["z"],
        nwk_padded=s["nwk"], nwk=s["nwk"], ndk=s["ndk"], nk=s["nk"],
        doc_len=np.diff(s["doc_ptr"]), n_features=s["nwk"].shape[0],
    )


def _reference_partitioned(s, eta, mh_steps, P, tables, gens, kernel="mh"):
    """One partitioned MH sweep, sequentially: the cells of a sub-step one
    after the other, each on its document block's copy of the totals
    (taken at the start of the sweep)."""
    words, doc_ptr = s["words"], s["doc_ptr"]
    V, D = s["nwk"].shape[0], len(doc_ptr) - 1
    bounds = balanced_bounds(doc_ptr, P)
    perm, piece_start, piece_doc, cell_piece = cell_layout(
        words, doc_ptr, bounds, word_blocks(words, V, P))
    doc_of = np.repeat(np.arange(D), np.diff(doc_ptr))[perm]
    cs = dict(s, words=words[perm], z=s["z"][perm])
    index = _mh_sampling.word_index(cs["words"], V)
    start = s["nk"].copy()
    copies = [start.copy() for _ in range(P)]
    for sub in range(P):
        for p in range(P):
            cs["nk"] = copies[p]
            c = p * P + (p + sub) % P
            if kernel == "sparse":
                _reference_sparse_cell(cs, piece_start[cell_piece[c]],
                                       piece_start[cell_piece[c + 1]], doc_of, index, eta,
                                       mh_steps, gens[p], first=sub == 0 and p == 0)
            else:
                _reference_mh_cell(cs, piece_start, piece_doc, cell_piece[c],
                                   cell_piece[c + 1], doc_of, index, eta, mh_steps, gens[p])
            copies[p] = cs["nk"]
    s["nk"][...] = start + sum(c - start for c in copies)
    s["z"][perm] = cs["z"]
    total = np.zeros_like(tables)
    if tables.shape[0]:
        for p, (lo, hi) in enumerate(pieces(bounds)):
            part = np.zeros_like(tables)
            _reference_tables_of(s["ndk"][lo:hi], s["doc_group"][lo:hi], s["prior"], part,
                                 gens[p])
            total += part
    return total


def _reference_mh_cell(cs, piece_start, piece_doc, lo, hi, doc_of, index, eta, mh_steps, gen):
    """The MH kernel's pieces lo:hi of one cell (``MHPartitionedSweep``)."""
    aliases = [_reference_alias(row) for row in cs["prior"]]
    if lo < hi:
        key = int(gen.bit_generator.random_raw())  # one per call
    for j in range(lo, hi):
        d, i0, i1 = piece_doc[j], piece_start[j], piece_start[j + 1]
        U = _reference_uniforms(key, 3 * mh_steps * i0, 3 * mh_steps * (i1 - i0))
        doc_toks = np.flatnonzero(doc_of == d)
        for i in range(i0, i1):
            u = U[3 * mh_steps * (i - i0) :][: 3 * mh_steps]
            _reference_mh_token(cs, i, d, u, doc_toks, index, aliases, eta, mh_steps)


def _reference_sparse_cell(cs, i0, i1, doc_of, index, eta, mh_steps, gen, first):
    """The sparse kernel's cell of tokens i0:i1 (cell order), word by word
    (``sparse_mh_sweep_pieces``); the topic lists and ``c`` are taken at the
    sweep's first cell."""
    V = cs["nwk"].shape[0]
    if first:
        doc_ptr, doc_tokens = _mh_sampling.word_index(doc_of.astype(np.int32), len(cs["ndk"]))
        cs["lists"] = _doc_lists(cs["z"], doc_ptr, doc_tokens)
        cs["c"] = (cs["prior"] * (1.0 / (cs["nk"] + V * eta))).mean(axis=1)
    inv = 1.0 / (cs["nk"] + V * eta)
    word_pos = _mh_sampling.word_positions(index[1])
    order = np.sort(word_pos[i0:i1])
    if len(order):
        key = int(gen.bit_generator.random_raw())  # one per call
        U = _reference_uniforms(key, 0, 2 * mh_steps * len(order))
    for r, j in enumerate(order):
        u = U[2 * mh_steps * r :][: 2 * mh_steps]
        _reference_sparse_token(cs, j, doc_of[index[1][j]], u, cs["lists"], inv, cs["c"],
                                index, eta, mh_steps)


@pytest.mark.parametrize("seed, P, mh_steps, rows", [
    (0, 2, 2, 0), (1, 3, 1, 2), (2, 3, 3, 2), (3, 4, 2, 0),
])
@pytest.mark.parametrize("kernel", ["mh", "sparse"])
def test_partitioned_mh_matches_numpy_reference_for_any_thread_count(seed, P, mh_steps, rows,
                                                                      kernel):
    s0 = _random_state(seed, n_docs=14, n_features=9, K=5, n_groups=2, max_len=14)
    ref = {k: v.copy() for k, v in s0.items()}
    gens = [np.random.Generator(np.random.PCG64(ss))
            for ss in np.random.SeedSequence(seed).spawn(P)]
    ref_tables = [_reference_partitioned(ref, 0.3, mh_steps, P,
                                         np.zeros((rows, 5), dtype=np.int64), gens, kernel)
                  for _ in range(2)]
    for n_threads in sorted({1, 2, P}):
        s = {k: v.copy() for k, v in s0.items()}
        st = _state(s)
        sweeper = _MHPartitionedSweeper(st, P, np.random.SeedSequence(seed), rows,
                                        mh_steps, n_threads, kernel=kernel)
        assert len(sweeper.shards) == P and st.z is None
        with sweeper:
            tables = [sweeper.sweep(s["prior"], 0.3).copy() for _ in range(2)]
        s["z"] = st.z  # the topics in document order, set when the sweeper closes
        for name in ("z", "nwk", "ndk", "nk"):
            np.testing.assert_array_equal(s[name], ref[name], err_msg=f"{name}, {n_threads}")
        for got, want in zip(tables, ref_tables):
            np.testing.assert_array_equal(got, want)
        assert (s["z"] != s0["z"]).any()


@pytest.mark.parametrize("kernel", ["mh", "sparse"])
def test_partitioned_mh_keeps_counts_consistent_and_chains_continue(kernel):
    s = _random_state(7, n_docs=30, n_features=12, K=6, n_groups=3, max_len=20)
    seed = np.random.SeedSequence(3)
    st_a = _state(s)
    a = _MHPartitionedSweeper(st_a, 3, seed, 3, 2, 2, kernel=kernel)
    with a:
        for _ in range(3):
            a.sweep(s["prior"], 0.2)
    s["z"] = st_a.z
    doc_of = np.repeat(np.arange(30), np.diff(s["doc_ptr"]))
    ndk = np.zeros_like(s["ndk"])
    nwk = np.zeros_like(s["nwk"])
    np.add.at(ndk, (doc_of, s["z"]), 1)
    np.add.at(nwk, (s["words"], s["z"]), 1)
    np.testing.assert_array_equal(s["ndk"], ndk)
    np.testing.assert_array_equal(s["nwk"], nwk)
    np.testing.assert_array_equal(s["nk"], np.bincount(s["z"], minlength=6))
    # the streams' states continue a chain: a new sweeper on the same state
    # with them set sweeps as the old one would have
    b_state = {k: v.copy() for k, v in s.items()}
    st_b = _state(b_state)
    more = _MHPartitionedSweeper(st_b, 3, np.random.SeedSequence(0), 3, 2, 1,
                                 kernel=kernel)
    more.set_bit_states(a.bit_states())
    with a, more:
        a.sweep(s["prior"], 0.2)
        more.sweep(b_state["prior"], 0.2)
    np.testing.assert_array_equal(st_a.z, st_b.z)


def _mh_kernel_args(sw):
    """The arguments of ``MHPartitionedSweep`` for an MH sweeper's arrays."""
    st, pieces = sw.state, sw._pieces
    return [sw.words, sw.z, sw.piece_start, sw.piece_doc, sw.cell_piece, st.doc_group,
            sw.doc_ptr, pieces.zd, pieces.doc_pos, st.nwk_padded, st.ndk, st.nk, sw.word_ptr,
            sw.word_tokens, sw.zw, sw.word_pos, sw.mh_steps, sw.n_threads,
            [b["bitgen"] for b in sw.blocks], sw.stop]


def test_mh_kernel_threads_give_up_when_stopped():
    s = _random_state(4, n_docs=20, n_features=10, K=5, n_groups=2, max_len=12)
    sw = _MHPartitionedSweeper(_state(s), 2, np.random.SeedSequence(1), 0, 2, 2)
    kernel = _mh_sampling.MHPartitionedSweep(*_mh_kernel_args(sw))
    kernel.set_prior(s["prior"], 0.3)
    assert_lone_thread_gives_up(kernel, sw.stop)


def test_mh_kernel_refuses_arrays_that_do_not_fit():
    s = _random_state(5, n_docs=20, n_features=10, K=5, n_groups=2, max_len=12)
    sw = _MHPartitionedSweeper(_state(s), 2, np.random.SeedSequence(1), 0, 2, 2)
    good = _mh_kernel_args(sw)
    for i, bad in [(1, good[1][:-1]),                      # z short
                   (4, good[4][:-1]),                      # not P * P + 1 cells
                   (6, good[6][:-1]),                      # a document short
                   (7, good[7][:-1]),                      # zd short
                   (12, good[12][:-1]),                    # the word index short
                   (16, 0),                                # mh_steps
                   (17, 3),                                # more threads than blocks
                   (18, good[18][:1] * 3)]:                # P = 3 against 2 x 2 cells
        args = list(good)
        args[i] = bad
        with pytest.raises(ValueError, match="MHPartitionedSweep"):
            _mh_sampling.MHPartitionedSweep(*args)
    kernel = _mh_sampling.MHPartitionedSweep(*good)
    with pytest.raises(ValueError, match="set_prior first"):
        kernel.run_thread(0)
    with pytest.raises(ValueError, match="number of topics"):
        kernel.set_prior(s["prior"][:, :-1], 0.3)
    with pytest.raises(ValueError, match="no row in prior"):
        kernel.set_prior(s["prior"][:1], 0.3)
    kernel.set_prior(s["prior"], 0.3)
    with pytest.raises(ValueError, match="set_prior first"):
        kernel.run_thread(2)


@pytest.fixture(scope="module")
def corpus():
    return make_lda_corpus(5, 60, 400, 50, random_state=2)


@pytest.mark.parametrize("sampler", ["mh", "sparse"])
def test_n_jobs_mh_fits_are_reproducible_and_partitioned(corpus, sampler):
    X = corpus.data
    kw = dict(sampler=sampler, max_iter=30, burn_in=10, random_state=0)
    a = LDAGibbs(5, n_jobs=3, **kw).fit(X)
    b = LDAGibbs(5, n_jobs=3, **kw).fit(X)
    serial = LDAGibbs(5, n_jobs=1, **kw).fit(X)
    np.testing.assert_array_equal(a.components_, b.components_)
    assert not np.array_equal(a.components_, serial.components_)
    warm = LDAGibbs(5, n_jobs=3, warm_start=True, **dict(kw, max_iter=15)).fit(X)
    warm.fit(X)
    np.testing.assert_array_equal(warm.components_, a.components_)
    # Another n_jobs continues the chain (fresh streams for the new shards).
    warm.set_params(n_jobs=1).fit(X)
    assert warm.n_iter_ == 45


def test_n_jobs_mh_fits_as_well_as_serial(corpus):
    # The stale topic totals within a sub-step cost no measurable quality.
    # Single chains land in different local modes here (training perplexity
    # 2.447 or 2.502 for either n_jobs), so the best of four seeds is compared.
    X = corpus.data

    def best(n_jobs):
        return min(LDAGibbs(5, sampler="mh", n_jobs=n_jobs, max_iter=300,
                            random_state=seed).fit(X).bound_ for seed in range(4))

    assert best(4) < 1.005 * best(1)


def test_one_shard_runs_the_serial_sweeper():
    from sklearn_clda._mh_sweeper import make_mh_sweeper

    s = _random_state(0, K=4)
    assert type(make_mh_sweeper(_state(s), 1, np.random.SeedSequence(0), 0, 2)) is _MHSweeper
    assert type(make_mh_sweeper(_state(s), 2, np.random.SeedSequence(0), 0, 2)) is (
        _MHPartitionedSweeper)
    for n_shards in (1, 2):
        sweeper = make_mh_sweeper(_state(s), n_shards, np.random.SeedSequence(0), 0, 2, "sparse")
        assert sweeper.kernel == "sparse"


def test_partitioned_mh_with_the_portable_fill_matches_numpy_reference():
    # The uniforms' portable loop (not AVX-512) in the pieces' kernel.
    old = _mh_sampling._set_fill("portable")
    try:
        test_partitioned_mh_matches_numpy_reference_for_any_thread_count(2, 3, 3, 2, "mh")
    finally:
        _mh_sampling._set_fill(old)


@pytest.mark.parametrize("kernel", ["dense", "mh", "sparse"])
@pytest.mark.parametrize("n_shards", [1, 2])
def test_sweepers_are_freed_as_soon_as_dropped(corpus, kernel, n_shards):
    """No reference cycle keeps a sweeper (and its token arrays) alive
    after the fit lets it go: the end of a fit relies on that for its
    peak memory."""
    import gc
    import weakref

    from sklearn_clda._mh_sweeper import make_mh_sweeper
    from sklearn_clda._sweeper import _GibbsState, make_sweeper

    X = corpus.data
    state = _GibbsState(X, np.zeros(X.shape[0], dtype=np.int32), 5, np.random.default_rng(0))
    seed = np.random.SeedSequence(0)
    sweeper = (make_sweeper(state, n_shards, seed, 1) if kernel == "dense"
               else make_mh_sweeper(state, n_shards, seed, 1, 2, kernel))
    with sweeper:
        sweeper.sweep(np.full((1, 5), 0.1), 0.1)
    ref = weakref.ref(sweeper)
    enabled = gc.isenabled()
    gc.disable()
    try:
        del sweeper
        assert ref() is None
    finally:
        if enabled:
            gc.enable()
    assert state.z is not None


@pytest.mark.parametrize("seed, P, n_threads", [(0, 2, 2), (4, 3, 3), (5, 4, 2)])
def test_partitioned_sparse_without_word_table_matches_numpy_reference(seed, P, n_threads):
    # The state keeps no word-topic table: each cell counts its words'
    # topics from all their tokens (no other thread moves them meanwhile),
    # and drops the row at its end, since the next cell of the word may run
    # on another thread. The same chain as the reference's with a table;
    # while the sweeper holds the topics, the state counts from its word
    # order.
    from sklearn_clda._sweeper import _GibbsState

    s0 = _random_state(seed, n_docs=20, n_features=9, K=5, n_groups=2, max_len=14)
    ref = {k: v.copy() for k, v in s0.items()}
    gens = [np.random.Generator(np.random.PCG64(ss))
            for ss in np.random.SeedSequence(seed).spawn(P)]
    ref_tables = [_reference_partitioned(ref, 0.3, 2, P, np.zeros((2, 5), dtype=np.int64),
                                         gens, "sparse") for _ in range(3)]
    s = {k: v.copy() for k, v in s0.items()}
    st = _GibbsState.__new__(_GibbsState)  # a table-free state of s's arrays
    st.__dict__.update(vars(_state(s)), nwk_padded=None, nwk=None)
    sweeper = _MHPartitionedSweeper(st, P, np.random.SeedSequence(seed), 2, 2, n_threads,
                                    kernel="sparse")
    with sweeper:
        tables = []
        for _ in range(3):
            tables.append(sweeper.sweep(s["prior"], 0.3).copy())
            assert st.z is None
        np.testing.assert_array_equal(st.word_topic_counts().toarray(), ref["nwk"])
    assert st.held_word_order is None
    np.testing.assert_array_equal(st.word_topic_counts().toarray(), ref["nwk"])
    for name, got in (("z", st.z), ("ndk", s["ndk"]), ("nk", s["nk"])):
        np.testing.assert_array_equal(got, ref[name], err_msg=name)
    for got, want in zip(tables, ref_tables):
        np.testing.assert_array_equal(got, want)

"""A worker's memory in a distributed fit, in process (no cluster).

The shard's build reads its blocks in pieces (no checked copy of a block
next to the token arrays), and a round holds the shard's table, its
snapshot of the shard's rows and the sparse change, nothing table-sized
more. Both are measured with ``tracemalloc`` (NumPy reports its arrays to
it) with small pieces, so that the bounds are tight and the tests fast.
"""

import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp

pytest.importorskip("distributed")

from sklearn_clda import _memory  # noqa: E402
from sklearn_clda._corpus import csr_to_tokens, to_count_csr  # noqa: E402
from sklearn_clda.dask import _blocks, _shard, _state  # noqa: E402
from sklearn_clda.dask._messages import DeltaMerger  # noqa: E402

V, K = 20000, 30  # K padded to 32: the table's rows are strided views
SMALL_PIECE = 1 << 12


@pytest.fixture
def small_pieces(monkeypatch):
    for module in (_blocks, _state, _shard):
        monkeypatch.setattr(module, "PIECE", SMALL_PIECE)


def _counts(n_docs, doc_len, seed=0, dtype=np.int32):
    """Canonical CSR counts of random documents (about ``doc_len`` tokens each)."""
    rng = np.random.default_rng(seed)
    words = rng.integers(0, V, size=(n_docs, doc_len))
    rows = np.repeat(np.arange(n_docs), doc_len)
    X = sp.csr_matrix((np.ones(rows.size), (rows, words.ravel())), shape=(n_docs, V))
    X.sum_duplicates()
    X.data = X.data.astype(dtype)
    return X


def _state_bytes(state):
    """The shard's arrays and its table: what the bound allows, once."""
    arrays = (state.words, state.z, state.doc_ptr, state.doc_len, state.doc_group, state.ndk)
    return sum(a.nbytes for a in arrays) + state.nwk_padded.nbytes


def _messy(X, seed=1):
    """``X`` with its entries split in two (duplicates), shuffled within
    rows, explicit zeros added and float64 counts: not canonical."""
    rng = np.random.default_rng(seed)
    coo = X.tocoo()
    half = np.floor(coo.data / 2)
    rows = np.concatenate([coo.row, coo.row, coo.row[:50]])
    cols = np.concatenate([coo.col, coo.col, coo.col[:50]])
    data = np.concatenate([half, coo.data - half, np.zeros(50)]).astype(np.float64)
    order = rng.permutation(rows.size)
    order = order[np.argsort(rows[order], kind="stable")]
    indptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=X.shape[0]))])
    out = sp.csr_matrix((data[order], cols[order].astype(np.int32), indptr.astype(np.int32)),
                        shape=X.shape)
    assert not out.has_canonical_format
    return out


def test_block_tokens_are_the_canonical_tokens(small_pieces):
    """Tokens read in pieces, from blocks canonical or not, with empty rows
    and an empty block, are ``csr_to_tokens`` of the canonical counts."""
    X = _counts(120, 90, dtype=np.int64)
    X.data[X.indptr[5]:X.indptr[6]] = 0  # an empty row
    X.eliminate_zeros()
    X.data[::7] = 3  # counts above one
    blocks = [X[:30], _messy(X[30:75]), X[75:75], X[75:].astype(np.float32)]
    words, doc_ptr = _blocks.block_tokens(blocks, 0, V, "Test.fit")
    expected = csr_to_tokens(to_count_csr(X, "test"))
    np.testing.assert_array_equal(words, expected[0])
    np.testing.assert_array_equal(doc_ptr, expected[1])
    assert words.dtype == np.int32 and doc_ptr.dtype == np.int64
    # The caller's blocks are untouched.
    assert not blocks[1].has_canonical_format


@pytest.mark.parametrize("value, match", [
    (np.nan, "NaN or infinite"),
    (-1.0, "negative counts"),
    (0.5, "non-integer counts"),
    (2.0**31, "larger than 2\\*\\*31 - 1"),
])
def test_block_checks_read_in_pieces_raise_clear_errors(small_pieces, value, match):
    """A bad count anywhere in a block (here in a late piece) raises the same
    errors as before, naming the block; NaN takes precedence over a
    negative count in an earlier piece."""
    X = _counts(60, 200).astype(np.float64)
    X.data[-3] = value
    with pytest.raises(ValueError, match=f"block 4 of X passed to Test.fit .*{match}"):
        _blocks.block_tokens([X], 4, V, "Test.fit")
    if value != -1.0:
        X.data[1] = -1.0
        first = "NaN or infinite" if np.isnan(value) else "negative counts"
        with pytest.raises(ValueError, match=first):
            _blocks.block_tokens([X], 4, V, "Test.fit")


def test_block_checks_structure():
    X = _counts(10, 20)
    with pytest.raises(ValueError, match="not a scipy.sparse CSR matrix"):
        _blocks.block_tokens([X.toarray()], 0, V, "Test.fit")
    with pytest.raises(ValueError, match=f"expected {V + 1} columns"):
        _blocks.block_tokens([X], 0, V + 1, "Test.fit")
    bad = X.copy()
    bad.indices[3] = V + 5
    with pytest.raises(ValueError, match="column indices outside"):
        _blocks.block_tokens([bad], 0, V, "Test.fit")


def _traced(fn):
    """``(result, peak bytes allocated while fn ran, above what was held before)``."""
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        out = fn()
        return out, tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()


def test_building_a_shard_holds_no_copy_of_its_block(small_pieces):
    """Reading a block allocates its tokens and, building the shard from it,
    the shard's arrays and table; besides them, only piece-sized
    temporaries: no checked copy of the block, no 64-bit copy of the
    tokens."""
    X = _counts(600, 500)  # 300k tokens: words and z are 2.4 MB
    slack = 64 * SMALL_PIECE + (1 << 20)  # a few piece temporaries
    (words, doc_ptr), peak = _traced(lambda: _blocks.block_tokens([X], 0, V, "Test.fit"))
    assert peak <= words.nbytes + doc_ptr.nbytes + slack, (peak, words.nbytes)
    key = "memory-test-build"
    try:
        _, peak = _traced(lambda: _shard.build_shard(
            key, [X], None, V, K, np.random.SeedSequence(0), "Test.fit"))
        state = _shard._SHARDS[key]["state"]
        assert peak <= _state_bytes(state) + slack, (peak, _state_bytes(state))
        # The check before the build leaves out the tokens (not known yet);
        # the build's own check counts them: most of the build's peak.
        before = _memory.largest_phase(_memory.dask_worker_phases(X.shape[0], V, K))[1]
        _, estimate = _memory.largest_phase(_memory.dask_worker_phases(
            X.shape[0], V, K, n_tokens=state.words.shape[0]))
        assert before < estimate <= peak and estimate >= 0.8 * peak, (estimate / peak)
    finally:
        _shard.drop_shard(key)


def test_a_rebuilt_shards_estimate_counts_the_topics_it_draws_from(small_pieces):
    """A shard rebuilt after its worker was lost draws its tokens' topics
    from a (V, K) float64 table of the current topics, more than its own
    int32 table: the build's check counts it, within 0.8 of the traced
    peak and never above it."""
    X = _counts(600, 500)
    table = (np.arange(0, V * K, 7, dtype=np.int64), np.ones((V * K + 6) // 7, np.int32))
    nk = np.bincount(table[0] % K, weights=table[1], minlength=K).astype(np.int32)
    topics = (None, 0, table, nk, 0.01, np.full((1, K), 0.1))
    key = "memory-test-rebuild"
    try:
        _, peak = _traced(lambda: _shard.build_shard(
            key, [X], None, V, K, np.random.SeedSequence(0), "Test.fit", topics=topics))
        n_tokens = _shard._SHARDS[key]["state"].words.shape[0]
        name, estimate = _memory.largest_phase(_memory.dask_worker_phases(
            X.shape[0], V, K, n_tokens=n_tokens, rebuild=True))
        assert name == "drawing a rebuilt shard's topics"
        assert 0.8 * peak <= estimate <= peak, (estimate / peak)
    finally:
        _shard.drop_shard(key)


def test_a_round_holds_one_table_besides_the_shard(small_pieces):
    """A synchronization round allocates, besides the shard's state, its
    snapshot of its rows (the first round), the sparse change it sends and
    (the first kept sample) the running sum of the documents' proportions;
    no table-sized temporaries (``np.take(..., out=snapshot)`` was one)."""
    X = _counts(10000, 30)  # short documents: the running sum is 2.4 MB
    key = "memory-test-round"
    prior = np.full((1, K), 0.3)
    try:
        _shard.build_shard(key, [X], None, V, K, np.random.SeedSequence(0), "Test.fit")
        own = _shard.shard_setup(key, None, 0)
        merger = DeltaMerger(V * K)
        sync = ("delta", *merger.merge([own], np.int32))
        nk = np.bincount(own[0] % K, weights=own[1], minlength=K).astype(np.int32)
        shard = _shard._SHARDS[key]
        for r, keep in enumerate((None, None, prior, prior)):
            out, peak = _traced(lambda keep=keep: _shard.shard_round(
                key, sync, nk, prior, 0.01, 1, keep, False))
            made = sum(a.nbytes for a in out["delta"])
            if r == 0:
                made += shard["snapshot"].nbytes
            if r == 2:
                made += shard["doc_topic"].nbytes
            slack = 16 * SMALL_PIECE * 8  # a few pieces of int64 indices
            assert peak <= made + slack, (r, peak, made)
            sync = ("delta", *merger.merge([out["delta"]], np.int32))
            nk = nk + np.bincount(sync[1] % K, weights=sync[2], minlength=K).astype(np.int32)
    finally:
        _shard.drop_shard(key)


def test_a_partitioned_shard_keeps_one_copy_of_its_tokens(small_pieces, monkeypatch):
    """With two threads the shard's sweeper holds its words and topics in
    cell order instead of the state (no document-order copy, no
    permutation kept), and setting it up holds at most the permutation and
    one token array besides; its tokens still give the shard's counts and
    each document's words."""
    from sklearn_clda import _partition

    monkeypatch.setattr(_partition, "_COUNT_PIECE", SMALL_PIECE)
    X = _counts(2000, 150)  # 300k tokens
    key = "memory-test-partitioned"
    tracemalloc.start()
    try:
        _shard.build_shard(key, [X], None, V, K, np.random.SeedSequence(0), "Test.fit",
                           threads=2)
        shard = _shard._SHARDS[key]
        n = shard["state"].words.shape[0]
        built = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        own = _shard.shard_setup(key, None, 0)
        held, peak = (m - built for m in tracemalloc.get_traced_memory())
        sweeper = shard["sweeper"]
        pieces = sweeper._piece_start.nbytes + sweeper._piece_doc.nbytes
        extra = sum(a.nbytes for a in own) + pieces + (1 << 20)
        assert held <= extra, (held, extra)
        assert peak <= 8 * n + extra, (peak, 8 * n + extra)
    finally:
        tracemalloc.stop()
    try:
        state = shard["state"]
        assert state.words is None and state.z is None and sweeper._layout is None
        words, z = _shard.token_arrays(shard)
        assert words.shape == z.shape == (n,)
        np.testing.assert_array_equal(np.bincount(words, minlength=V),
                                      np.asarray(X.sum(axis=0)).ravel())
        for a, b in [(0, 2000), (3, 17), (1999, 2000), (5, 5)]:
            indptr, doc_words = _shard._doc_words(shard, a, b)
            got = sp.csr_matrix((np.ones(doc_words.shape[0]), doc_words, indptr),
                                shape=(b - a, V))
            got.sum_duplicates()
            np.testing.assert_array_equal(got.toarray(), X[a:b].toarray())
        idx, vals = _shard.shard_counts(key)
        table = np.zeros(V * K, dtype=np.int64)
        table[idx] += vals
        np.testing.assert_array_equal(table.reshape(V, K).sum(axis=1),
                                      np.asarray(X.sum(axis=0)).ravel())
    finally:
        _shard.drop_shard(key)


def test_dask_blocks_are_compacted_to_int32_when_no_value_changes(small_pieces):
    """A dask array's int64 or float64 blocks go to the build as int32 (8
    bytes a stored entry, not 12) with the same counts and tokens; blocks
    that the build must refuse are passed on untouched, so that its checks
    still name the problem."""
    X = _counts(50, 200, dtype=np.int64)
    for block in (X, X.astype(np.float64), _messy(X)):
        small = _blocks.compact_block(block)
        assert small.data.dtype == np.int32 and small.shape == block.shape
        np.testing.assert_array_equal(small.toarray(), block.toarray())
        assert (_blocks.block_tokens([small], 0, V, "T")[0]
                == _blocks.block_tokens([block], 0, V, "T")[0]).all()
    refused = [X.toarray(), X.astype(np.int32)]
    for value in (0.5, np.nan, -np.inf, 2.0**31, -(2.0**31) - 1):
        bad = X.astype(np.float64)
        bad.data[-1] = value
        refused.append(bad)
    for block in refused:
        assert _blocks.compact_block(block) is block


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_row_changes_is_its_numpy_equivalent(index_dtype):
    """A round's change of the shard's rows, read from a padded table in
    place, is the docstring's NumPy computation (and sparse_rows' piecewise
    path), rows in any order, none changed or all."""
    from sklearn_clda import _sampling

    rng = np.random.default_rng(0)
    n_rows, K = 300, 13
    padded = _sampling._line_buffer(n_rows * 16, np.int32).reshape(n_rows, 16)
    padded[:, :K] = rng.integers(0, 9, (n_rows, K))
    table = padded[:, :K]
    for rows in (rng.permutation(n_rows)[:120].astype(np.int64),
                 np.arange(n_rows, dtype=np.int64), np.zeros(0, dtype=np.int64)):
        for frac in (0.0, 0.2, 1.0):
            before = table[rows].copy()
            before[rng.random(before.shape) < frac] -= rng.integers(1, 4)
            idx, vals = _sampling.row_changes(table, rows, before, index_dtype)
            diff = table[rows, :K] - before
            r, k = np.nonzero(diff)
            assert idx.dtype == index_dtype and vals.dtype == np.int32
            np.testing.assert_array_equal(idx, (rows[r] * K + k).astype(index_dtype))
            np.testing.assert_array_equal(vals, diff[r, k])
            # the piecewise path of sparse_rows gives the same
            got = _shard.sparse_rows(padded[rows][:, :K].copy(), np.arange(len(rows)), K,
                                     np.int64, minus=before, compact=True)
            np.testing.assert_array_equal(got[1], vals)


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_sync_and_snapshot_kernels_are_their_numpy_equivalents(index_dtype):
    """add_cells (the sync), take_rows and put_rows (the snapshot and its
    restoring) on a padded table, against their docstrings' NumPy forms:
    cells that repeat, rows in any order, nothing to do."""
    from sklearn_clda import _sampling

    rng = np.random.default_rng(1)
    n_rows, K = 200, 13
    padded = _sampling._line_buffer(n_rows * 16, np.int32).reshape(n_rows, 16)
    padded[...] = rng.integers(0, 9, padded.shape)
    for n in (0, 1, 500, 5000):
        idx = rng.integers(0, n_rows * K, n).astype(index_dtype)
        vals = rng.integers(-5, 6, n).astype(np.int32)
        expected = padded.copy()
        np.add.at(expected, (idx // K, idx % K), vals)
        _sampling.add_cells(padded, idx, vals, K)
        np.testing.assert_array_equal(padded, expected)  # the padding untouched too
    for rows in (rng.permutation(n_rows)[:70].astype(np.int64), np.zeros(0, np.int64)):
        out = np.full((len(rows), K), -1, dtype=np.int32)
        _sampling.take_rows(padded[:, :K], rows, out)
        np.testing.assert_array_equal(out, padded[rows, :K])
        expected = padded.copy()
        expected[rows, :K] = out + 1
        _sampling.put_rows(padded[:, :K], rows, out + 1)
        np.testing.assert_array_equal(padded, expected)


def test_sync_and_snapshot_kernels_refuse_what_does_not_fit():
    from sklearn_clda import _sampling

    table = np.zeros((5, 4), dtype=np.int32)
    one = np.ones(1, dtype=np.int32)
    for cell in (20, -1):
        with pytest.raises(ValueError, match="outside the table"):
            _sampling.add_cells(table, np.array([cell], dtype=np.int64), one, 4)
    assert not table.any()  # checked before anything is added
    with pytest.raises(ValueError, match="same length"):
        _sampling.add_cells(table, np.array([0, 1], dtype=np.int64), one, 4)
    with pytest.raises(ValueError, match="K fit"):
        _sampling.add_cells(table, np.array([0], dtype=np.int64), one, 5)
    out = np.zeros((2, 4), dtype=np.int32)
    for fn in (_sampling.take_rows, _sampling.put_rows):
        with pytest.raises(ValueError, match="outside the table"):
            fn(table, np.array([0, 5], dtype=np.int64), out)
        with pytest.raises(ValueError, match="one per row"):
            fn(table, np.array([0], dtype=np.int64), out)
        with pytest.raises(ValueError, match="at least as wide"):
            fn(table[:, :3], np.array([0, 1], dtype=np.int64), out)


def test_row_changes_refuses_arrays_that_do_not_fit():
    from sklearn_clda import _sampling

    table = np.zeros((5, 4), dtype=np.int32)
    before = np.zeros((2, 4), dtype=np.int32)
    with pytest.raises(ValueError, match="outside the table"):
        _sampling.row_changes(table, np.array([0, 5], dtype=np.int64), before, np.int32)
    with pytest.raises(ValueError, match="outside the table"):
        _sampling.row_changes(table, np.array([-1, 0], dtype=np.int64), before, np.int32)
    with pytest.raises(ValueError, match="a row for each"):
        _sampling.row_changes(table, np.array([0], dtype=np.int64), before, np.int32)
    with pytest.raises(ValueError, match="a row for each"):
        _sampling.row_changes(table[:, :3], np.array([0, 1], dtype=np.int64), before, np.int32)
    with pytest.raises(ValueError, match="not int32 or int64"):
        _sampling.row_changes(table, np.array([0, 1], dtype=np.int64), before, np.float64)


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_merge_kernels_are_their_numpy_equivalents(index_dtype):
    """mark_cells and drain_cells (the client's merge of the shards'
    changes) against their docstrings' NumPy forms: cells that repeat
    within and across changes, sums that cancel to zero, no change at all;
    the scratch arrays come back zero, ready for the next round, and
    DeltaMerger gives the same sum (and merge_deltas' for several changes)."""
    from sklearn_clda import _sampling
    from sklearn_clda.dask._messages import merge_deltas

    rng = np.random.default_rng(2)
    size, K = 600, 12
    acc = np.zeros(size, dtype=np.int32)
    touched = np.zeros(size, dtype=np.uint8)
    merger = DeltaMerger(size)
    for n_parts, n in ((0, 0), (1, 0), (1, 50), (3, 400), (2, 5000)):
        parts = [(rng.integers(0, size, n).astype(index_dtype),
                  rng.integers(-3, 4, n).astype(np.int32)) for _ in range(n_parts)]
        expected_acc = np.zeros(size, dtype=np.int64)
        for idx, vals in parts:
            np.add.at(expected_acc, idx, vals)
            _sampling.mark_cells(acc, touched, idx, vals)
        cells = np.flatnonzero(touched)
        np.testing.assert_array_equal(acc, expected_acc)
        keep = acc[cells] != 0
        expected_idx = cells[keep].astype(index_dtype)
        expected_vals = acc[cells][keep]
        expected_sums = np.full(K, 3, dtype=np.int64)
        np.add.at(expected_sums, expected_idx % K, expected_vals)
        sums = np.full(K, 3, dtype=np.int64)
        idx, vals = _sampling.drain_cells(acc, touched, index_dtype, sums)
        assert idx.dtype == index_dtype and vals.dtype == np.int32
        np.testing.assert_array_equal(idx, expected_idx)
        np.testing.assert_array_equal(vals, expected_vals)
        np.testing.assert_array_equal(sums, expected_sums)
        assert not acc.any() and not touched.any()
        got = merger.merge(parts, index_dtype)
        np.testing.assert_array_equal(got[0], expected_idx)
        np.testing.assert_array_equal(got[1], expected_vals)
        if n_parts > 1:  # (merge_deltas takes a lone change as it is)
            want = merge_deltas(parts, K)
            np.testing.assert_array_equal(got[0], want[0])
            np.testing.assert_array_equal(got[1], want[1])
    # a cell whose changes cancel is left out; the column sums skip it
    cancel = [(np.array([7, 3], index_dtype), np.array([5, 2], np.int32)),
              (np.array([7], index_dtype), np.array([-5], np.int32))]
    sums = np.zeros(K, dtype=np.int64)
    idx, vals = merger.merge(cancel, index_dtype, sums)
    assert idx.tolist() == [3] and vals.tolist() == [2] and sums.tolist() == [0, 0, 0, 2] + [0] * 8


def test_merge_kernels_refuse_what_does_not_fit():
    from sklearn_clda import _sampling

    acc = np.zeros(20, dtype=np.int32)
    touched = np.zeros(20, dtype=np.uint8)
    one = np.ones(1, dtype=np.int32)
    for cell in (20, -1):
        with pytest.raises(ValueError, match="outside the table"):
            _sampling.mark_cells(acc, touched, np.array([cell], dtype=np.int64), one)
    assert not acc.any() and not touched.any()  # checked before anything is added
    with pytest.raises(ValueError, match="same length"):
        _sampling.mark_cells(acc, touched, np.array([0, 1], dtype=np.int64), one)
    with pytest.raises(ValueError, match="length of acc"):
        _sampling.mark_cells(acc, touched[:5], np.array([0], dtype=np.int64), one)
    with pytest.raises(ValueError, match="length of acc"):
        _sampling.drain_cells(acc, touched[:5], np.int32)
    with pytest.raises(ValueError, match="multiple of"):
        _sampling.drain_cells(acc, touched, np.int32, np.zeros(3, dtype=np.int64))
    with pytest.raises(ValueError, match="not int32 or int64"):
        _sampling.drain_cells(acc, touched, np.float64)

"""The word-major sparse sweep (``_sparse_mh_kernel.h``): what the shared
kernel tests of ``test_mh_sampling.py`` do not reach."""

import signal

import numpy as np
import pytest
from test_mh_sampling import _copy, _reference_sparse_sweep
from test_sampling import _random_state

from sklearn_clda import _mh_sampling

# Words with fewer than K / ROW_FACTOR tokens compute their rates entry by
# entry, the others once per word (CLDA_SMW_ROW_FACTOR in the kernel).
ROW_FACTOR = 1024


def _sweep(s, eta, mh_steps, bitgen, workspace=None, tables=None, index=None):
    K = s["nk"].shape[0]
    ptr, tok = index or _mh_sampling.word_index(s["words"], s["nwk"].shape[0])
    tables = np.zeros((0, K), dtype=np.int64) if tables is None else tables
    _mh_sampling.sparse_mh_sweep(s["words"], s["doc_ptr"], s["doc_group"], s["z"], s["nwk"],
                                 s["ndk"], s["nk"], s["prior"], eta, ptr, tok, mh_steps, tables,
                                 bitgen, workspace=workspace)


def _sweep_interrupted(s, mh_steps, workspace, index):
    """A sweep of ``s`` that Ctrl-C (here a KeyboardInterrupt from a timer's
    signal handler, 20 ms in) stops part way."""
    def interrupt(signum, frame):
        raise KeyboardInterrupt

    old = signal.signal(signal.SIGALRM, interrupt)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.02)
        with pytest.raises(KeyboardInterrupt):
            _sweep(s, 0.01, mh_steps, np.random.PCG64(0), workspace=workspace, index=index)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _assert_consistent(s):
    D, K = s["ndk"].shape
    doc_of = np.repeat(np.arange(D), np.diff(s["doc_ptr"]))
    ndk, nwk = np.zeros_like(s["ndk"]), np.zeros_like(s["nwk"])
    np.add.at(ndk, (doc_of, s["z"]), 1)
    np.add.at(nwk, (s["words"], s["z"]), 1)
    np.testing.assert_array_equal(s["ndk"], ndk)
    np.testing.assert_array_equal(s["nwk"], nwk)
    np.testing.assert_array_equal(s["nk"], np.bincount(s["z"], minlength=K))


@pytest.mark.parametrize("seed", range(3))
def test_rates_of_rare_and_frequent_words_match_reference(seed):
    # K = 1500 with 60 words: words of one token have too few for a row of
    # rates, the others enough; both ways give the reference's values.
    K = 1500
    s = _random_state(seed, n_docs=12, n_features=60, K=K, n_groups=2, max_len=16)
    n_w = np.bincount(s["words"], minlength=60)
    n_w = n_w[n_w > 0]
    assert (n_w * ROW_FACTOR < K).any() and (n_w * ROW_FACTOR >= K).any()
    ref = _copy(s)
    bitgen, gen = np.random.PCG64(seed), np.random.Generator(np.random.PCG64(seed))
    tables = np.zeros((0, K), dtype=np.int64)
    for _ in range(3):
        _sweep(s, 0.05, 2, bitgen)
        _reference_sparse_sweep(ref, 0.05, 2, tables, gen)
        for name in ("z", "nwk", "ndk", "nk"):
            np.testing.assert_array_equal(s[name], ref[name], err_msg=name)


def test_workspace_is_reused_and_checked():
    s = _random_state(1, n_docs=10, n_features=8, K=6, max_len=12)
    ref = _copy(s)
    V = s["nwk"].shape[0]
    ptr, tok = _mh_sampling.word_index(s["words"], V)
    ws = _mh_sampling.sparse_workspace(s["doc_ptr"], ptr, tok, 6, 2)
    a, b = np.random.PCG64(0), np.random.PCG64(0)
    for _ in range(3):  # a kept workspace sweeps as a fresh one
        _sweep(s, 0.1, 2, a, workspace=ws)
        _sweep(ref, 0.1, 2, b)
    np.testing.assert_array_equal(s["z"], ref["z"])
    for bad in (_mh_sampling.sparse_workspace(s["doc_ptr"], ptr, tok, 5, 2),  # other K
                _mh_sampling.sparse_workspace(s["doc_ptr"], ptr, tok, 6, 1),  # fewer steps
                _mh_sampling.sparse_workspace(np.delete(s["doc_ptr"], 1), ptr, tok, 6, 2)):
        with pytest.raises(ValueError, match="inconsistent workspace"):
            _sweep(s, 0.1, 2, a, workspace=bad)


def test_word_major_index_matches_numpy():
    s = _random_state(2, n_docs=9, n_features=7, K=3, max_len=10)
    ptr, tok = _mh_sampling.word_index(s["words"], 7)
    token_doc = _mh_sampling.token_documents(s["doc_ptr"])
    np.testing.assert_array_equal(token_doc, np.repeat(np.arange(9), np.diff(s["doc_ptr"])))
    word_of, word_doc = _mh_sampling.word_major_index(token_doc, ptr, tok)
    np.testing.assert_array_equal(word_of, s["words"][tok])
    np.testing.assert_array_equal(word_doc, token_doc[tok])


def test_interrupted_sweep_leaves_counts_consistent():
    # Ctrl-C (here a KeyboardInterrupt from a timer's signal handler) stops
    # the sweep between two tokens; the documents' counts, kept in the topic
    # lists while sampling, are written back, so all counts match z.
    rng = np.random.default_rng(0)
    D, L, V, K = 4000, 100, 500, 50
    doc_ptr = np.arange(D + 1, dtype=np.int64) * L
    words = rng.integers(0, V, D * L).astype(np.int32)
    z = rng.integers(0, K, D * L).astype(np.int32)
    nwk, ndk = np.zeros((V, K), np.int32), np.zeros((D, K), np.int32)
    np.add.at(nwk, (words, z), 1)
    np.add.at(ndk, (np.repeat(np.arange(D), L), z), 1)
    s = dict(words=words, doc_ptr=doc_ptr, doc_group=np.zeros(D, np.int32), z=z, nwk=nwk,
             ndk=ndk, nk=np.bincount(z, minlength=K).astype(np.int32),
             prior=np.full((1, K), 0.1))
    z0 = z.copy()
    ptr, tok = _mh_sampling.word_index(words, V)
    ws = _mh_sampling.sparse_workspace(doc_ptr, ptr, tok, K, 50)
    _sweep_interrupted(s, 50, ws, (ptr, tok))
    moved = (s["z"] != z0)[np.argsort(words, kind="stable")]  # in word order
    assert moved.any() and not moved[-10_000:].any()  # stopped part way
    _assert_consistent(s)


# ------------------------------------------------- without a word-topic table
@pytest.mark.parametrize("seed", range(3))
def test_sweep_without_word_table_is_the_sweep_with_one(seed):
    # The kernel counts each word's topics from its tokens (zw) into a row
    # of K instead of reading the table: the same counts, so the same chain
    # bit for bit, for words with and without a row of rates, with the AGS
    # tables drawn after it.
    K = 1500
    s = _random_state(seed, n_docs=12, n_features=60, K=K, n_groups=2, max_len=16)
    ref = _copy(s)
    ptr, tok = _mh_sampling.word_index(s["words"], 60)
    ws = _mh_sampling.sparse_workspace(s["doc_ptr"], ptr, tok, K, 2)
    a, b = np.random.PCG64(seed), np.random.PCG64(seed)
    for _ in range(3):
        ta, tb = np.zeros((2, K), dtype=np.int64), np.zeros((2, K), dtype=np.int64)
        _mh_sampling.sparse_mh_sweep(s["words"], s["doc_ptr"], s["doc_group"], s["z"], None,
                                     s["ndk"], s["nk"], s["prior"], 0.05, ptr, tok, 2, ta, a,
                                     workspace=ws)
        _sweep(ref, 0.05, 2, b, tables=tb, index=(ptr, tok))
        for name in ("z", "ndk", "nk"):
            np.testing.assert_array_equal(s[name], ref[name], err_msg=name)
        np.testing.assert_array_equal(ta, tb)
    assert (s["z"] != _random_state(seed, n_docs=12, n_features=60, K=K, n_groups=2,
                                    max_len=16)["z"]).any()


def test_interrupted_sweep_without_word_table_leaves_its_row_clean():
    # Ctrl-C between chunks: the word's row of counts is cleared first, so
    # the workspace can sweep another state (here new topics) from zeros, as
    # a sweep with a table of that state does.
    rng = np.random.default_rng(1)
    D, L, V, K = 3000, 100, 30_000, 200  # ten tokens a word: rows differ by z
    doc_ptr = np.arange(D + 1, dtype=np.int64) * L
    words = rng.integers(0, V, D * L).astype(np.int32)

    def state(z):
        ndk, nwk = np.zeros((D, K), np.int32), np.zeros((V, K), np.int32)
        np.add.at(ndk, (np.repeat(np.arange(D), L), z), 1)
        np.add.at(nwk, (words, z), 1)
        return dict(words=words, doc_ptr=doc_ptr, doc_group=np.zeros(D, np.int32), z=z,
                    nwk=nwk, ndk=ndk, nk=np.bincount(z, minlength=K).astype(np.int32),
                    prior=np.full((1, K), 0.1))

    ptr, tok = _mh_sampling.word_index(words, V)
    ws = _mh_sampling.sparse_workspace(doc_ptr, ptr, tok, K, 40)

    _sweep_interrupted({**state(rng.integers(0, K, D * L).astype(np.int32)), "nwk": None}, 40,
                       ws, (ptr, tok))
    z = rng.integers(0, K, D * L).astype(np.int32)
    s, ref = {**state(z.copy()), "nwk": None}, state(z.copy())
    _sweep(s, 0.01, 2, np.random.PCG64(5), workspace=ws, index=(ptr, tok))
    _sweep(ref, 0.01, 2, np.random.PCG64(5), index=(ptr, tok))
    np.testing.assert_array_equal(s["z"], ref["z"])


def test_sweep_without_word_table_checks_word_ptr():
    s = _random_state(3, n_docs=8, n_features=6, K=5)
    ptr, tok = _mh_sampling.word_index(s["words"], 6)
    with pytest.raises(ValueError, match="inconsistent"):
        _mh_sampling.sparse_mh_sweep(s["words"], s["doc_ptr"], s["doc_group"], s["z"], None,
                                     s["ndk"], s["nk"], s["prior"], 0.1, ptr[:-1], tok, 2,
                                     np.zeros((0, 5), np.int64), np.random.PCG64(0))
    # The O(1) MH kernel reads the table at random: it needs one.
    with pytest.raises(TypeError):
        _mh_sampling.mh_sweep(s["words"], s["doc_ptr"], s["doc_group"], s["z"], None,
                              s["ndk"], s["nk"], s["prior"], 0.1, ptr, tok, 2,
                              np.zeros((0, 5), np.int64), np.random.PCG64(0))


@pytest.mark.parametrize("V, K, n", [(50, 7, 1000), (30, 1500, 3000), (5, 1, 10), (4, 3, 0)])
def test_word_topic_counts_is_its_numpy_equivalent(V, K, n):
    import scipy.sparse as sp

    rng = np.random.default_rng(V + K)
    words = rng.integers(0, V, n).astype(np.int32)
    z = rng.integers(0, K, n).astype(np.int32)
    ptr, tok = _mh_sampling.word_index(words, V)
    got = _mh_sampling.word_topic_counts(ptr, z[tok], K)
    nwk = np.zeros((V, K), np.int32)
    np.add.at(nwk, (words, z), 1)
    want = sp.csr_matrix(nwk)
    for a, b in zip(got, (want.indptr, want.indices, want.data)):
        np.testing.assert_array_equal(a, b)
    assert [a.dtype for a in got] == [np.int64, np.int32, np.int32]


def test_word_topic_counts_rejects_bad_input():
    ptr = np.array([0, 2, 3], dtype=np.int64)
    zw = np.array([0, 1, 2], dtype=np.int32)
    for args, match in [((ptr, zw, 2), "out of range"), ((ptr, zw[:2], 3), "cover"),
                        ((ptr[::-1].copy(), zw, 3), "cover"),
                        ((np.array([0, 3, 2, 3]), zw, 3), "cover")]:
        with pytest.raises(ValueError, match=match):
            _mh_sampling.word_topic_counts(*args)


# ----------------------------------------------------- packed list entries
# A list entry is count << shift | topic (uint32), shift the bits of K - 1.
def test_list_entries_leave_room_for_the_longest_document():
    shift = _mh_sampling.sparse_list_shift
    assert [shift(k) for k in (1, 2, 3, 1000, 1024, 1025, 65536)] == [1, 1, 2, 10, 10, 11, 16]
    assert _mh_sampling.sparse_max_document_length(1000) == 2**22 - 1
    assert _mh_sampling.sparse_max_document_length(2) == 2**31 - 1
    K = 2**20 + 1  # 21 bits of topic: documents of up to 2047 tokens
    _mh_sampling.check_sparse_document_lengths([5, 2047], K)
    _mh_sampling.check_sparse_document_lengths([], K)
    with pytest.raises(ValueError, match="at most 2047 tokens; the longest here has 2048"):
        _mh_sampling.check_sparse_document_lengths([5, 2048], K)
    doc_ptr = np.array([0, 2048], np.int64)
    ptr, tok = _mh_sampling.word_index(np.zeros(2048, np.int32), 1)
    with pytest.raises(ValueError, match="sparse sampler"):
        _mh_sampling.sparse_workspace(doc_ptr, ptr, tok, K, 2)
    with pytest.raises(ValueError, match="sparse sampler"):
        _mh_sampling.sparse_doc_lists(doc_ptr, K)
    assert _mh_sampling.sparse_doc_lists(doc_ptr, K - 1).shift == 20  # room for 4095


def test_sweep_refuses_a_workspace_of_shorter_documents():
    # The workspace holds the lists; the sweep checks its own doc_ptr too.
    K, n = 2**20 + 1, 2049
    ptr, tok = _mh_sampling.word_index(np.zeros(n, np.int32), 3)
    ws = _mh_sampling.sparse_workspace(np.array([0, 1025, n]), ptr, tok, K, 2)
    doc_ptr = np.array([0, 1, n], np.int64)  # a document of 2048 tokens
    args = (np.zeros(n, np.int32), doc_ptr, np.zeros(2, np.int32), np.zeros(n, np.int32),
            None, np.zeros((2, K), np.int32), np.zeros(K, np.int32), np.ones((1, K)), 0.1,
            ptr, tok, 2, np.zeros((0, K), np.int64), np.random.PCG64(0))
    with pytest.raises(ValueError, match="at most 2047 tokens"):
        _mh_sampling.sparse_mh_sweep(*args, workspace=ws)


def test_counts_in_the_top_bits_of_the_entries():
    # K = 2**20 + 1 (21 bits of topic) and a document of 2047 tokens, 1600
    # of them on topic 0: that count fills the entry's 11 high bits, the top
    # one included, and must read as a count (unsigned shifts), not a
    # negative number, in the running sums (a block of four entries: the
    # document has eight topics) and elsewhere. Bit for bit the reference.
    K, n = 2**20 + 1, 2047
    rng = np.random.default_rng(0)
    words = rng.integers(0, 3, n + 1).astype(np.int32)
    z = np.r_[np.zeros(1600), rng.integers(1, 8, n + 1 - 1600)].astype(np.int32)
    z[-1] = 0  # the second document's token
    z0 = z.copy()
    s = dict(words=words, doc_ptr=np.array([0, n, n + 1], np.int64),
             doc_group=np.zeros(2, np.int32), z=z, nwk=np.zeros((3, K), np.int32),
             ndk=np.zeros((2, K), np.int32), nk=np.bincount(z, minlength=K).astype(np.int32),
             prior=np.full((1, K), 1e-3))
    np.add.at(s["nwk"], (words, z), 1)
    np.add.at(s["ndk"], (np.r_[np.zeros(n, int), 1], z), 1)
    assert s["ndk"][0, 0] == 1600 and (s["ndk"][0] > 0).sum() == 8
    ref = _copy(s)
    _sweep(s, 0.01, 2, np.random.PCG64(0))
    _reference_sparse_sweep(ref, 0.01, 2, np.zeros((0, K), np.int64),
                            np.random.Generator(np.random.PCG64(0)))
    np.testing.assert_array_equal(s["z"], ref["z"])
    _assert_consistent(s)
    assert not np.array_equal(s["z"], z0)


# ------------------------------------------- AGS tables from the topic lists
def _pack(topics, counts, shift):
    return (counts.astype(np.uint32) << np.uint32(shift)) | topics.astype(np.uint32)


def _lists_of(ndk, rng, spare=3):
    """Topic lists of ``ndk``'s rows, shuffled, with up to ``spare`` unused
    entries after each (the kernel's lists have their document's length),
    as ``list_tables`` takes them: ``(entries, shift, n, off)``."""
    D = ndk.shape[0]
    lens = (ndk > 0).sum(axis=1) + rng.integers(0, spare + 1, D)
    off = np.r_[0, np.cumsum(lens)].astype(np.int64)
    topics = np.full(off[-1], -1, np.int32)
    counts = np.zeros(off[-1], np.int32)
    n = np.zeros(D, np.int32)
    for d in range(D):
        ks = np.flatnonzero(ndk[d])
        rng.shuffle(ks)
        topics[off[d]:off[d] + len(ks)] = ks
        counts[off[d]:off[d] + len(ks)] = ndk[d, ks]
        n[d] = len(ks)
    shift = _mh_sampling.sparse_list_shift(ndk.shape[1])
    return _pack(topics, counts, shift), shift, n, off


@pytest.mark.parametrize("seed", range(3))
def test_list_tables_are_the_document_tables_of_the_dense_counts(seed):
    # Counts >= 64 (several per document, drawn one by one in topic order)
    # and smaller ones (the binomial step), lists in any order.
    from sklearn_clda import _sampling

    rng = np.random.default_rng(seed)
    D, K, G = 40, 300, 3
    ndk = np.zeros((D, K), np.int32)
    for d in range(D):
        ks = rng.choice(K, rng.integers(0, 40), replace=False)
        ndk[d, ks] = rng.choice([1, 2, 5, 63, 64, 100, 700], len(ks))
    assert ((ndk >= 64).sum(axis=1) >= 2).sum() > 10
    doc_group = rng.integers(0, G, D).astype(np.int32)
    prior = rng.gamma(1.0, 0.3, (G, K))
    lists = _lists_of(ndk, rng)
    for d0, d1 in [(0, D), (5, 31), (7, 7)]:
        want, got = np.zeros((G, K), np.int64), np.zeros((G, K), np.int64)
        _sampling.document_tables(ndk[d0:d1], doc_group[d0:d1], prior, want,
                                  np.random.PCG64(seed))
        _sampling.list_tables(*lists, d0, d1, doc_group, prior, got, np.random.PCG64(seed))
        np.testing.assert_array_equal(got, want)
    assert want.sum() == 0 and got.sum() == 0  # the empty range draws nothing


def test_list_tables_keep_many_times_the_first_buffer_of_counts():
    # About 75,000 counts of 2-63 to keep: their buffer (room for 4,096 at
    # first) grows several times, each time for a whole document's list.
    from sklearn_clda import _sampling

    rng = np.random.default_rng(3)
    D, K, G = 3000, 60, 2
    ndk = np.where(rng.random((D, K)) < 0.45, rng.integers(2, 64, (D, K)), 0).astype(np.int32)
    assert (ndk > 0).sum() > 16 * 4096
    doc_group = rng.integers(0, G, D).astype(np.int32)
    prior = rng.gamma(1.0, 0.3, (G, K))
    want, got = np.zeros((G, K), np.int64), np.zeros((G, K), np.int64)
    _sampling.document_tables(ndk, doc_group, prior, want, np.random.PCG64(1))
    _sampling.list_tables(*_lists_of(ndk, rng), 0, D, doc_group, prior, got,
                          np.random.PCG64(1))
    np.testing.assert_array_equal(got, want)


def test_sparse_sweep_tables_of_long_documents_match_reference():
    # Documents of 300 tokens over 3 topics: several counts >= 64 each.
    K = 3
    s = _random_state(4, n_docs=6, n_features=20, K=K, n_groups=2, max_len=300)
    ref = _copy(s)
    t_kernel, t_ref = np.zeros((2, K), np.int64), np.zeros((2, K), np.int64)
    bitgen, gen = np.random.PCG64(4), np.random.Generator(np.random.PCG64(4))
    for _ in range(2):
        _sweep(s, 0.3, 2, bitgen, tables=t_kernel)
        _reference_sparse_sweep(ref, 0.3, 2, t_ref, gen)
        np.testing.assert_array_equal(s["z"], ref["z"])
        np.testing.assert_array_equal(t_kernel, t_ref)
    assert ((s["ndk"] >= 64).sum(axis=1) >= 2).any()


def test_list_tables_reject_bad_lists():
    from sklearn_clda import _sampling

    ndk = np.array([[3, 0, 70], [0, 2, 0]], np.int32)
    entries, shift, n, off = _lists_of(ndk, np.random.default_rng(0), spare=0)
    topics, counts = entries & 3, entries >> 2
    assert shift == 2
    prior, group = np.ones((2, 3)), np.zeros(2, np.int32)

    def call(**change):
        args = dict(entries=entries, shift=shift, n=n, off=off, d0=0, d1=2,
                    doc_group=group, prior=prior, tables=np.zeros((2, 3), np.int64))
        args.update(change)
        _sampling.list_tables(*args.values(), np.random.PCG64(0))

    call()
    for change, match in [
        (dict(entries=_pack(np.where(topics == 2, 3, topics), counts, 2)), "topic out of range"),
        (dict(entries=_pack(topics, np.where(counts == 2, 0, counts), 2)), "count below 1"),
        (dict(shift=1), "inconsistent"),  # no room for topic 2
        (dict(shift=32), "inconsistent"),
        (dict(n=np.array([3, 1], np.int32)), "runs past"),
        (dict(off=np.array([0, 2, 9], np.int64)), "runs past"),
        (dict(doc_group=np.array([0, 2], np.int32)), "collection"),
        (dict(d1=3), "inconsistent"),
        (dict(tables=np.zeros((1, 3), np.int64)), "inconsistent"),
    ]:
        with pytest.raises(ValueError, match=match):
            call(**change)

"""Memory of a fit at many topics, and the chunked computations behind it.

A fit holds the sampler's count tables and, once samples are kept, the
``(n_docs, K)`` float64 sum of the documents' proportions; the averages,
the last-state perplexity, the trace and the Gibbs-EM statistics are made
by pieces of rows (``_chunking.budget_pieces``) or on the fly
(``_sampling.state_log_likelihood``), and the count tables are freed
before ``components_`` is made. The first test bounds a fit's traced
peak by those arrays' sizes (the code before this scheme peaked at twice
the bound); the others hold every chunked computation bit for
bit to the plain NumPy one it replaces. Then the check that refuses,
before any work, a fit that cannot fit in the machine's memory
(``_memory``): its estimates against traced peaks, and its boundary.
"""

import math
import os
import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose, assert_array_equal
from scipy.special import digamma, gammaln

from sklearn_clda import (
    CompoundLDA,
    LDAGibbs,
    _base,
    _chunking,
    _hyper,
    _memory,
    _online,
    _sampling,
)
from sklearn_clda._sweeper import _GibbsState

# A budget small enough that every table below is cut into many pieces.
SMALL_BUDGET = 4096


@pytest.fixture
def small_budget(monkeypatch):
    monkeypatch.setattr(_chunking, "CHUNK_BYTES", SMALL_BUDGET, raising=False)


def _corpus(n_docs, n_features, doc_len, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.csr_matrix(rng.poisson(doc_len / n_features, size=(n_docs, n_features)))
    X[np.asarray(X.sum(axis=1)).ravel() == 0, 0] = 1
    return X.astype(np.int64).tocsr(), rng.integers(0, 3, n_docs)


def _state(K, seed=0, n_docs=40, n_features=30):
    X, groups = _corpus(n_docs, n_features, 60, seed)
    return X, _GibbsState(X, groups, K, np.random.default_rng(seed))


# ----------------------------------------------------------- peak memory
@pytest.mark.parametrize("make, burn_in, K, n_docs, n_features, dtype", [
    (lambda K: LDAGibbs(n_components=K, sampler="mh", max_iter=9, thin=2, random_state=0),
     None, 800, 2000, 1000, np.int64),
    (lambda K: CompoundLDA(n_components=K, sampler="mh", max_iter=9, random_state=0),
     8, 800, 2000, 1000, np.int64),
    # float32 input, more words: the float32 outputs are made by pieces
    # from the float64 means, not as whole float64 tables first.
    (lambda K: LDAGibbs(n_components=K, sampler="mh", max_iter=9, thin=2, random_state=0),
     None, 1600, 1000, 1400, np.float32),
])
def test_fit_peak_stays_within_tables_and_outputs(small_budget, make, burn_in, K, n_docs,
                                                  n_features, dtype):
    """Traced peak of a fit at many topics: at most the count tables plus the
    document sum table, or that sum table plus the topics once the tables
    are freed, plus O(tokens). Measured (first case): 27.5 MiB of a 31 MiB
    bound; the code before the chunked averages peaked at 62 MiB (a
    float64 copy of each table, and the proportions and topics of the
    last-state perplexity, at once). Float32 case: 28.9 of 32.2 MiB;
    38.3 MiB when the float32 outputs were rounded copies of whole float64
    ones."""
    X, groups = _corpus(n_docs, n_features, 30)
    X = X.astype(dtype)
    n_tokens = int(X.sum())
    model = make(K).set_params(burn_in=burn_in)
    fit_kw = {"groups": groups} if isinstance(model, CompoundLDA) else {}
    out_size = 4 if dtype == np.float32 else 8
    tables = 4 * n_features * _sampling.padded_n_components(K) + 4 * n_docs * K
    doc_sums, topics = 8 * n_docs * K, out_size * K * n_features
    # The input's checked copy, the token arrays and the trace's cells are
    # O(tokens): 150 bytes a token covers them (about 100 are used).
    bound = max(tables + doc_sums, doc_sums + topics) + 150 * n_tokens + 2**20
    tracemalloc.start()
    try:
        model.fit(X, **fit_kw)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert model.components_.dtype == (np.float32 if dtype == np.float32 else np.float64)
    assert peak < bound, (peak / 2**20, bound / 2**20)


def test_n_jobs_fit_peak_per_token():
    """A partitioned fit whose tables are small: its traced peak is set by
    the token arrays. Measured: 25.8 bytes a token; 32.0 when the sweeper's
    cell-order tokens lived until the end of the fit, about 36 when it
    also kept the document-order topics and a permutation."""
    from sklearn_clda.datasets import make_compound_corpus

    c = make_compound_corpus(n_topics=5, n_features=2000, n_collections=3,
                             docs_per_collection=500, doc_length=300, random_state=0)
    X = sp.csr_matrix(c.data)
    n_tokens = int(X.sum())
    model = CompoundLDA(n_components=5, max_iter=3, burn_in=1, n_jobs=2, random_state=0)
    tracemalloc.start()
    try:
        model.fit(X, groups=c.groups)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 28 * n_tokens + 2**19, peak / n_tokens


# ------------------------------------------------ chunked = unchunked, bit for bit
@pytest.mark.parametrize("dtype", [np.int32, np.int64])  # compiled scan; NumPy pieces
def test_positive_cells_is_nonzero_of_the_mask(small_budget, dtype):
    rng = np.random.default_rng(0)
    a = rng.integers(-1, 3, size=(57, 300)).astype(dtype)
    sparse = np.where(rng.random((40, 333)) < 0.02, a[:40, :1].repeat(333, 1) + 1, 0)
    sparse[3, 15] = sparse[4, 16] = 1  # a block's last cell and the next's first
    sparse = sparse.astype(dtype)
    tables = (a, a[:, :290], a[:0], a[:, :1], a[:, :16], a[:, :17], sparse, sparse[:, :300],
              sparse[::-1], a[:, ::-1], np.asfortranarray(a))
    for table in tables:
        rows, cols = _chunking.positive_cells(table)
        r, c = np.nonzero(table > 0)
        assert rows.dtype == cols.dtype == np.int64
        assert_array_equal(rows, r)
        assert_array_equal(cols, c)


def test_compiled_positive_cells_needs_contiguous_rows():
    a = np.ones((4, 6), dtype=np.int32)
    with pytest.raises(ValueError, match="contiguous"):
        _sampling.positive_cells(a[:, ::2])


@pytest.mark.parametrize("budget", [None, SMALL_BUDGET])
@pytest.mark.parametrize("K", [7, 64, 300])
def test_state_log_likelihood_is_its_numpy_equivalent(K, budget, monkeypatch):
    # Up to rounding: the kernel sums over the document's and the word's
    # topics apart (its docstring), the dense formula over all K at once;
    # with the small budget the words come in blocks of 1 to 7 (K = 300, 64).
    if budget is not None:
        monkeypatch.setattr(_chunking, "CHUNK_BYTES", budget)
    X, st = _state(K)
    prior = np.random.default_rng(1).gamma(1.0, 0.2, size=(3, K))
    eta = 0.03
    theta = st.ndk + prior[st.doc_group]
    doc_total = theta.sum(axis=1)
    theta /= doc_total[:, None]
    phi = (st.nwk + eta) / (st.nk + st.nwk.shape[0] * eta)
    args = _base._csr_arrays(X)
    expected, out = np.empty(X.shape[0]), np.empty(X.shape[0])
    _sampling.doc_log_likelihood(*args, theta, np.ascontiguousarray(phi), expected)
    m = st.word_topic_counts()
    counts = (m.indptr.astype(np.int64), m.indices.astype(np.int32), m.data)
    _sampling.state_log_likelihood(*args, st.ndk, st.doc_group, prior, doc_total,
                                   *counts, eta, st.nk + st.nwk.shape[0] * eta, out)
    assert len(np.unique(st.doc_group[:10])) > 1  # collections interleaved
    assert K < 64 or ((st.ndk == 0).any() and (st.nwk == 0).any())
    assert_allclose(out, expected, rtol=1e-12)
    # A wrong term (a topic's mass left out of one sum) is far outside that.
    wrong = np.empty(X.shape[0])
    _sampling.state_log_likelihood(*args, st.ndk, st.doc_group, prior * 1.001, doc_total,
                                   *counts, eta, st.nk + st.nwk.shape[0] * eta, wrong)
    assert not np.allclose(wrong, expected, rtol=1e-7)


def test_state_log_likelihood_rejects_inconsistent_input():
    X, st = _state(7)
    prior = np.ones((3, 7))
    args = _base._csr_arrays(X)
    m = st.word_topic_counts()
    word_ptr, word_topic, word_count = m.indptr.astype(np.int64), m.indices.astype(np.int32), m.data
    good = dict(ndk=st.ndk, doc_group=st.doc_group, prior=prior,
                doc_total=np.ones(X.shape[0]), word_ptr=word_ptr, word_topic=word_topic,
                word_count=word_count, eta=0.1, topic_mass=st.nk + 1.0,
                out=np.empty(X.shape[0]))
    bad_words = (args[0], np.full_like(args[1], st.nwk.shape[0]), args[2])
    for call_args, change, match in [
        (args, {"doc_total": np.ones(X.shape[0] - 1)}, "inconsistent"),
        (args, {"prior": np.ones((3, 8))}, "inconsistent"),
        (args, {"word_count": word_count[1:]}, "inconsistent"),
        (args, {"word_ptr": word_ptr[:-1]}, "inconsistent"),
        (args, {"word_ptr": word_ptr[::-1].copy()}, "inconsistent|non-decreasing"),
        (args, {"word_topic": np.full_like(word_topic, 7)}, "topic"),
        (bad_words, {}, "word index"),
        (args, {"doc_group": np.full_like(st.doc_group, 3)}, "collection"),
    ]:
        with pytest.raises(ValueError, match=match):
            _sampling.state_log_likelihood(*call_args, **{**good, **change})


@pytest.mark.parametrize("add", [False, True])
def test_doc_proportions_is_its_numpy_equivalent(add):
    _, st = _state(33)
    prior = np.random.default_rng(3).gamma(1.0, 0.3, size=(3, 33))
    total = st.ndk.sum(axis=1) + prior.sum(axis=1)[st.doc_group]
    want = (st.ndk + prior[st.doc_group]) / total[:, None]
    out = np.full(st.ndk.shape, 0.25)
    _sampling.doc_proportions(st.ndk, st.doc_group, prior, out, add=add)
    assert_array_equal(out, want + 0.25 if add else want)
    assert_allclose(want.sum(axis=1), 1.0, rtol=1e-14)
    for bad, match in [((st.ndk, st.doc_group[1:], prior, out), "inconsistent"),
                       ((st.ndk, st.doc_group, prior, np.empty((len(out), 32))),
                        "inconsistent"),
                       ((st.ndk, st.doc_group, prior[:2], out), "collection")]:
        with pytest.raises(ValueError, match=match):
            _sampling.doc_proportions(*bad)


def _plain_average(states, priors, eta):
    """The averages as the code before the chunked averager made them."""
    nwk = doc_topic = None
    for st, prior in zip(states, priors):
        total = st.ndk.sum(axis=1) + prior.sum(axis=1)[st.doc_group]
        theta = (st.ndk + prior[st.doc_group]) / total[:, None]
        if nwk is None:
            nwk, doc_topic = st.nwk.astype(np.float64), theta
        else:
            nwk += st.nwk
            doc_topic += theta
    n = len(states)
    return np.ascontiguousarray((nwk / n).T) + eta, doc_topic / n


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("K", [7, 33])
def test_sample_averager_is_the_plain_average(small_budget, K, dtype):
    # float32: the float64 averages, rounded.
    rng = np.random.default_rng(2)
    states = [_state(K, seed)[1] for seed in range(3)]
    priors = [rng.gamma(1.0, 0.3, size=(3, K)) for _ in states]
    components, doc_topic = _plain_average(states, priors, 0.07)
    for in_place in (False, True):
        averager = _base._SampleAverager()
        for st, prior in zip(states, priors):
            averager.keep(st, prior)
        out = averager.finish(0.07, in_place=in_place, dtype=dtype)
        assert_array_equal(out["components_"], components.astype(dtype))
        assert_array_equal(out["doc_topic_"], doc_topic.astype(dtype))
        assert out["components_"].dtype == dtype
        # Only an in-place finish spends the averager's sums (float32: drops them).
        spent = averager.doc_topic is (out["doc_topic_"] if dtype == np.float64 else None)
        assert spent == in_place


def test_trace_terms_are_the_plain_ones(small_budget):
    X, st = _state(33)
    prior = np.random.default_rng(3).gamma(1.0, 0.3, size=(3, 33))
    doc_prior = prior[st.doc_group]
    prior_sum = doc_prior.sum(axis=1)
    mask = st.ndk > 0
    expected = (gammaln(prior_sum) - gammaln(st.doc_len + prior_sum)).sum() + (
        gammaln(st.ndk[mask] + doc_prior[mask]) - gammaln(doc_prior[mask])).sum()
    assert _base.doc_log_likelihood(st.ndk, st.doc_len, st.doc_group, prior) == expected
    eta, V, K = 0.05, st.nwk.shape[0], 33
    nz = st.nwk[st.nwk > 0]
    expected = (K * gammaln(V * eta) - gammaln(st.nk + V * eta).sum()
                + (gammaln(nz + eta) - gammaln(eta)).sum())
    assert _base.word_log_likelihood(st.nwk, st.nk, eta) == expected
    values, mult = _hyper.count_histogram(st.nwk)
    hist = np.bincount(st.nwk.ravel()[st.nwk.ravel() > 0])
    assert_array_equal(values, np.flatnonzero(hist))
    assert_array_equal(mult, hist[np.flatnonzero(hist)])


def test_expected_table_sums_are_the_plain_ones(small_budget):
    _, st = _state(33)
    prior = np.random.default_rng(4).gamma(1.0, 0.3, size=(3, 33))
    counts = st.ndk.astype(np.float64)
    d, k = np.nonzero(counts > 0)
    a = prior[st.doc_group[d], k]
    tables = a * (digamma(a + counts[d, k]) - digamma(a))
    expected = np.bincount(st.doc_group[d] * 33 + k, weights=tables, minlength=99).reshape(3, 33)
    got = _online.expected_table_sums(st.ndk, prior, st.doc_group, 3)
    assert_array_equal(got, expected)


def _lane_totals(comp):
    """Each row's sum in eight interleaved partial sums, left to right, then
    added pairwise (``_sampling.topic_word_parts``'s totals)."""
    K, V = comp.shape
    lanes = np.cumsum(np.pad(comp, ((0, 0), (0, -V % 8))).reshape(K, -1, 8), axis=1)[:, -1]
    return ((lanes[:, 0] + lanes[:, 1]) + (lanes[:, 2] + lanes[:, 3])) + (
        (lanes[:, 4] + lanes[:, 5]) + (lanes[:, 6] + lanes[:, 7]))


def _plain_parts(components, words=None, totals=None):
    """``_sampling.topic_word_parts``'s NumPy equivalent, from the dense phi."""
    comp = np.asarray(components, dtype=np.float64)
    totals = _lane_totals(comp) if totals is None else totals
    phi = comp.T / totals
    floor = comp.min(axis=1) / totals
    w, k = np.nonzero(comp.T > comp.min(axis=1))
    if words is not None:
        keep = np.isin(w, words)
        w, k = w[keep], k[keep]
    ptr = np.r_[0, np.cumsum(np.bincount(w, minlength=phi.shape[0]))]
    return phi, (floor, ptr, k.astype(np.int32), phi[w, k] - floor[k])


def _assert_parts_equal(got, want):
    for a, b in zip(got, want):
        assert_array_equal(a, b)


def test_inference_by_pieces_is_the_plain_one(monkeypatch):
    X, groups = _corpus(60, 40, 50)
    model = CompoundLDA(n_components=9, max_iter=6, random_state=0).fit(X, groups=groups)
    _, parts = _plain_parts(model.components_)
    _assert_parts_equal(model._topic_word_parts(), parts)
    whole = model.score(X, groups=groups), model.perplexity(X, groups=groups)
    monkeypatch.setattr(_chunking, "CHUNK_BYTES", 8 * 9 * 7)  # 7 documents a piece
    _assert_parts_equal(model._topic_word_parts(), parts)
    assert (model.score(X, groups=groups), model.perplexity(X, groups=groups)) == whole


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_topic_word_parts_are_the_phi_above_its_floor(dtype):
    # A fitted model's shape of topics: (sparse counts + eta), a floor per
    # topic where a word has no count; one topic with no floor-level word.
    rng = np.random.default_rng(0)
    counts = np.where(rng.random((6, 50)) < 0.2, rng.integers(1, 9, (6, 50)), 0)
    counts[2] = rng.integers(1, 9, 50)
    comp = (counts / 3.0 + 0.05).astype(dtype)
    got = _sampling.topic_word_parts(comp)
    phi, want = _plain_parts(comp)
    _assert_parts_equal(got, want)
    assert got[2].dtype == np.int32 and got[1][-1] < phi.size
    # phi is rebuilt from the parts
    rebuilt = np.tile(got[0], (phi.shape[0], 1))
    rows = np.repeat(np.arange(phi.shape[0]), np.diff(got[1]))
    rebuilt[rows, got[2]] += got[3]
    assert_allclose(rebuilt, phi, rtol=1e-15)
    assert_allclose(_lane_totals(comp.astype(np.float64)), comp.sum(axis=1, dtype=np.float64),
                    rtol=1e-15)
    # totals given; fewer words than one partial sum's stride
    totals = comp.astype(np.float64).sum(axis=1)
    _assert_parts_equal(_sampling.topic_word_parts(comp, totals),
                        _plain_parts(comp, totals=totals)[1])
    _assert_parts_equal(_sampling.topic_word_parts(comp[:, :5].copy()),
                        _plain_parts(comp[:, :5])[1])
    with pytest.raises(ValueError, match="inconsistent"):
        _sampling.topic_word_parts(comp, totals[:-1])
    # only some words listed: the same floor and the same entries of theirs
    for words in ([], [0], [3, 7, 49], np.flatnonzero(counts[0]), np.arange(50)):
        words = np.asarray(words, dtype=np.int32)
        _assert_parts_equal(_sampling.topic_word_parts(comp, None, words),
                            _plain_parts(comp, words)[1])
    for words in ([-1, 3], [3, 50], [7, 3], [3, 3], [[1, 2]], [2**32 + 3], [1.0, 2.0]):
        with pytest.raises(ValueError, match="sorted distinct word ids in"):
            _sampling.topic_word_parts(comp, None, words)


@pytest.mark.parametrize("Estimator", [LDAGibbs, CompoundLDA])
def test_few_documents_are_folded_in_as_in_a_whole_batch(Estimator):
    # A call on fewer entries than words lists only their words' topics;
    # the documents' proportions and scores are the whole batch's, bit for bit.
    X, groups = _corpus(60, 400, 30)
    if Estimator is LDAGibbs:
        groups = None

    def kw(rows=slice(None)):
        return {} if groups is None else {"groups": groups[rows]}

    model = Estimator(n_components=7, max_iter=5, random_state=0).fit(X, **kw())
    whole = model.transform(X, **kw())
    scores = model._score_docs(X, groups, "score")[0]
    for rows in ([0], [5, 17, 40], np.arange(10)):
        assert X[rows].nnz < X.shape[1]
        assert_array_equal(model.transform(X[rows], **kw(rows)), whole[rows])
        few = model._score_docs(X[rows], kw(rows).get("groups"), "score")[0]
        assert_array_equal(few, scores[rows])
    # every topic above its floor on the first document's words: that
    # document alone shows no floor-level entry, the whole batch does
    model.components_[:, X[0].indices] += 1.0
    assert_array_equal(model.transform(X[:1], **kw(slice(1))), model.transform(X, **kw())[:1])
    model.components_ = model.components_[:, :300].copy()
    with pytest.raises(ValueError, match="components_ has 300 columns but X has 400"):
        model.transform(X[:2], **kw(slice(2)))


def test_parts_log_likelihood_is_doc_log_likelihood():
    X, _ = _corpus(30, 50, 40)
    rng = np.random.default_rng(1)
    comp = np.where(rng.random((6, 50)) < 0.3, rng.integers(1, 9, (6, 50)), 0) + 0.05
    phi, parts = _plain_parts(comp)
    theta = rng.dirichlet(np.ones(6), size=X.shape[0])
    args = _base._csr_arrays(X)
    want, got = np.empty(X.shape[0]), np.empty(X.shape[0])
    _sampling.doc_log_likelihood(*args, theta, np.ascontiguousarray(phi), want)
    _sampling.parts_log_likelihood(*args, theta, *parts, got)
    assert_allclose(got, want, rtol=1e-13)
    floor, ptr, topic, val = parts
    for bad, match in [((floor, ptr[:11], topic[:ptr[10]], val[:ptr[10]]), "word index"),
                       ((floor, ptr, topic + 6, val), "topic"),
                       ((floor, ptr, topic, val[:-1]), "CSR"),
                       ((floor, ptr[::-1].copy(), topic, val), "CSR")]:
        with pytest.raises(ValueError, match=match):
            _sampling.parts_log_likelihood(*args, theta, *bad, got)
        with pytest.raises(ValueError, match=match):
            _sampling.fold_in(*args, np.zeros(X.shape[0], np.int32), np.ones((1, 6)), *bad,
                              10, 1e-6, np.empty((X.shape[0], 6)))


def test_fit_by_pieces_is_the_fit_in_one_piece(monkeypatch):
    """Every fitted array is the same whatever the chunk budget (one piece
    or many): the pieces change where temporaries are cut, not a bit."""
    X, groups = _corpus(80, 50, 40)

    def fit():
        return CompoundLDA(n_components=13, max_iter=12, burn_in=4, thin=2, sampler="mh",
                           learn_priors=("eta", "gamma"), prior_update_every=2, evaluate_every=2,
                           random_state=0).fit(X, groups=groups)

    whole = fit()
    monkeypatch.setattr(_chunking, "CHUNK_BYTES", SMALL_BUDGET)
    pieces = fit()
    for name in ("components_", "doc_topic_", "bound_", "eta_", "gamma_", "_table_sums"):
        assert_array_equal(getattr(pieces, name), getattr(whole, name))
    assert_array_equal(pieces.trace_["log_likelihood"], whole.trace_["log_likelihood"])


@pytest.mark.parametrize("K", [7, 333])
def test_last_state_perplexity_is_the_plain_one(small_budget, K):
    X, st = _state(K, n_docs=50)
    model = CompoundLDA(n_components=K, eta=0.04)
    run = _base._FitRun(0, frozenset(), frozenset())
    model._start_run(run, X.shape[1], 3)
    run.pi = np.random.default_rng(5).dirichlet(np.ones(K), size=3)
    theta = st.ndk + model._sweep_prior(run)[st.doc_group]
    theta /= theta.sum(axis=1, keepdims=True)
    phi = (st.nwk + 0.04) / (st.nk + X.shape[1] * 0.04)
    ll = np.empty(X.shape[0])
    _sampling.doc_log_likelihood(*_base._csr_arrays(X), theta, np.ascontiguousarray(phi), ll)
    expected = float(np.exp(-ll.sum() / st.words.shape[0]))
    assert model._last_state_perplexity(run, st, X) == pytest.approx(expected, rel=1e-12)


# ------------------------------------------------------- the memory check
def _fake_memory(monkeypatch, n_bytes):
    """This machine has ``n_bytes`` of memory (whole pages of 4 KiB)."""
    real = os.sysconf
    pages = {"SC_PAGE_SIZE": 4096, "SC_PHYS_PAGES": math.ceil(n_bytes / 4096)}
    monkeypatch.setattr(os, "sysconf", lambda name: pages.get(name) or real(name))


def _gibbs(model, X, groups, itemsize=8):
    word_table = model._kernel(X) != "sparse"
    n_groups = np.unique(groups).shape[0] if isinstance(model, CompoundLDA) else 1
    chain = getattr(model, "_warm_chain", None)
    if chain is not None:  # continued: all its sweeps after burn-in
        n_kept = chain.averager.n_kept + model.max_iter // model.thin
    else:
        n_kept = max(1, (model.max_iter - model.max_iter // 2) // model.thin)
    return _memory.gibbs_phases(*X.shape, model.n_components, n_groups, word_table=word_table,
                                itemsize=itemsize, n_tokens=int(X.sum()),
                                uniform_bytes=model._uniform_bytes(X, model._kernel(X)),
                                kept_samples=model._kept_sample_bytes(n_groups, n_kept),
                                previous=model._previous_fit_bytes(),
                                keeps_chain=model.warm_start)


# Few tokens and many words, so that the (K, V) tables dominate the peak.
_FITS = {
    "dense": (lambda: LDAGibbs(200, sampler="dense", max_iter=3), "fit", _gibbs),
    "sparse": (lambda: LDAGibbs(200, sampler="sparse", max_iter=3), "fit", _gibbs),
    "ags": (lambda: CompoundLDA(200, max_iter=3), "fit", _gibbs),
    # an id column passed as groups: the kept mixtures outweigh the topics
    "ags-many-collections": (lambda: CompoundLDA(200, max_iter=400, thin=1), "fit-ids",
                             lambda m, X, g: _gibbs(m, X, np.arange(X.shape[0]))),
    # ... on many documents and few words: the kept mixtures are most of
    # the peak, and must not be held twice
    "ags-draws": (lambda: CompoundLDA(200, max_iter=20, thin=1), "fit-ids",
                  lambda m, X, g: _gibbs(m, X, np.arange(X.shape[0]))),
    # few topics and many tokens: the tokens' words and topics are the peak
    "many-tokens": (lambda: LDAGibbs(3, max_iter=2), "fit", _gibbs),
    # ... all in one document: the sweep's uniforms for it count too
    "one-long-document": (lambda: LDAGibbs(3, max_iter=2), "fit", _gibbs),
    "one-long-document-mh": (lambda: LDAGibbs(3, sampler="mh", max_iter=2), "fit", _gibbs),
    "float32": (lambda: LDAGibbs(200, max_iter=3), "fit32",
                lambda m, X, g: _gibbs(m, X, g, itemsize=4)),
    "vem": (lambda: CompoundLDA(200, algorithm="vem", max_iter=2), "fit",
            lambda m, X, g: _memory.vem_phases(*X.shape, m.n_components,
                                               m._previous_fit_bytes())),
    # a fitted model fitted again: its attributes live until the new ones
    # are published (a failed fit leaves the model as it was)
    "refit": (lambda: CompoundLDA(200, max_iter=3), "fit2", _gibbs),
    "vem-refit": (lambda: CompoundLDA(200, algorithm="vem", max_iter=2), "fit2",
                  lambda m, X, g: _memory.vem_phases(*X.shape, m.n_components,
                                                     m._previous_fit_bytes())),
    # a warm_start chain continued: the kept chain and its copy
    "warm-continued": (lambda: CompoundLDA(200, max_iter=3, thin=1, warm_start=True), "fit2", _gibbs),
    # ... on many documents and few words: the chain's (n_docs, K) sums count
    "warm-many-docs": (lambda: CompoundLDA(200, max_iter=3, thin=1, warm_start=True), "fit2", _gibbs),
    "online": (lambda: CompoundLDA(200), "partial_fit",
               lambda m, X, g: _memory.online_phases(*X.shape, m.n_components)),
    "online-fitted": (lambda: CompoundLDA(200), "partial_fit2",
                      lambda m, X, g: _memory.online_phases(*X.shape, m.n_components)),
}


def _run(model, how, X, groups):
    kw = {"groups": groups} if isinstance(model, CompoundLDA) else {}
    if how == "fit-ids":
        return model.fit(X, groups=np.arange(X.shape[0]))
    if how == "fit32":
        return model.fit(X.astype(np.float32), **kw)
    if how == "fit":
        return model.fit(X, **kw)
    if how == "partial_fit2":
        model.partial_fit(X, **kw)
    if how == "fit2":
        model.fit(X, **kw)
        return model.fit(X, **kw)
    return model.partial_fit(X, **kw)


@pytest.mark.parametrize("burn_in, thin", [(0, 1), (5, 1), (5, 3), (10, 4), (30, 7)])
def test_n_kept_counts_the_sweeps_that_the_sampler_keeps(burn_in, thin):
    for done in range(0, 40, 3):
        for last in range(done, 45):
            kept = [it for it in range(done + 1, last + 1)
                    if it > burn_in and (it - burn_in) % thin == 0]
            assert _base._n_kept(done, last, burn_in, thin) == len(kept), (done, last)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.filterwarnings("ignore::sklearn_clda.exceptions.ManyCollectionsWarning")
@pytest.mark.parametrize("kind", list(_FITS))
def test_memory_estimate_is_a_close_lower_bound_of_the_peak(kind):
    """Each estimate is at most the fit's traced peak (so the check never
    refuses a fit that would run) and at least 0.8 of it (so it refuses
    the fits it should). Measured at V = 30,000, K = 200, the peak against
    the estimate: Gibbs 1.02-1.03 (1.02 with an id column as groups; 1.83
    before the kept mixtures were counted), variational EM 1.03 (7.0
    (K, V) float64 tables, 2.3 times its estimate, before its E-step and
    bound were made in place), ``partial_fit`` 1.00-1.11; a fitted model
    fitted again 1.01 (Gibbs) and 1.03 (VEM), 2.02 and 1.37 before its
    previous arrays were counted; a continued ``warm_start`` chain 1.01, and 1.17 on
    3,000 documents and 300 words (1.55 without the kept chain's arrays);
    3,000 collections of one document each, whose kept mixtures are most
    of the peak, 1.01 (1.47 if the published draws were a copy of the
    kept ones); 3.6 million tokens at K = 3, 1.06 (the tokens' words and
    topics, 8 bytes a token, were not counted before); the same tokens in
    one document, whose sweep draws a uniform per token (three per MH step
    and token) at once, within the bounds once those buffers were counted
    and below 0.8 before."""
    many_docs = kind in ("warm-many-docs", "ags-draws")
    X, groups = _corpus(3000, 300, 15) if many_docs else _corpus(60, 30000, 15)
    if kind == "many-tokens":
        X = X * 4000  # about 3.6 million tokens
    if kind.startswith("one-long-document"):
        X = sp.csr_matrix(np.asarray(X.sum(axis=0)) * 4000)  # the same, in one row
        groups = groups[:1]
    make, how, phases = _FITS[kind]
    model = make()
    before = 0
    if how == "partial_fit2":  # the fitted model's components_ are held too
        _run(model, "partial_fit", X, groups)
        how, before = "partial_fit", model.components_.nbytes
    tracemalloc.start()
    try:
        if how == "fit2":  # what the first fit left is held too: traced from its start
            _run(model, "fit", X, groups)
            how = "fit"
            tracemalloc.reset_peak()
        estimate = max(sum(p.values()) for p in phases(model, X, groups).values())
        _run(model, how, X, groups)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    peak += before
    assert 0.8 * peak <= estimate <= peak, (kind, estimate / peak)


@pytest.mark.parametrize("kind", ["dense", "sparse", "vem", "online-fitted", "refit",
                                  "vem-refit", "warm-continued"])
def test_fit_is_refused_below_its_estimate_and_runs_at_it(kind, monkeypatch):
    """A machine a page short of the estimate refuses the fit before any
    work (no attribute written), naming its phase and largest array; one
    with the estimate runs it."""
    X, groups = _corpus(30, 3000, 30)
    make, how, phases = _FITS[kind]
    model = make().set_params(max_iter=2)
    if how in ("partial_fit2", "fit2"):
        how = how[:-1]
        _run(model, how, X, groups)
    named = phases(model, X, groups)
    phase = max(named, key=lambda p: sum(named[p].values()))
    estimate = sum(named[phase].values())
    largest = max(named[phase], key=named[phase].get)
    before = dict(vars(model))
    _fake_memory(monkeypatch, estimate - 4096)
    with pytest.raises(ValueError, match=rf"on 30 documents and 3000 words needs at least "
                       rf"0\.\d GiB {phase} \({largest}: .*use fewer topics"):
        _run(model, how, X, groups)
    assert vars(model).keys() == before.keys()
    _fake_memory(monkeypatch, estimate)
    _run(model, how, X, groups)


def test_memory_error_names_the_sparse_sampler_where_only_the_word_table_is_too_much(
    monkeypatch,
):
    """Many documents and few words: the dense and MH samplers' word-topic
    table tips the sampling phase over, and the error says that
    ``sampler="sparse"`` (no table) fits; it runs there. With no room even
    for the document-topic counts, no such hint."""
    X, groups = _corpus(2000, 200, 30)
    phases = _memory.gibbs_phases(*X.shape, 100, 1, word_table=False, itemsize=8,
                                  n_tokens=int(X.sum()))
    without_table = max(sum(p.values()) for p in phases.values())
    _fake_memory(monkeypatch, without_table)
    for sampler in ("dense", "mh"):
        with pytest.raises(ValueError, match=r"while sampling \(the document-topic counts.*"
                           rf"sampler='sparse' keeps no word-topic table.*sampler='{sampler}'"
                           r".*fewer topics"):
            LDAGibbs(100, sampler=sampler, max_iter=1, burn_in=0).fit(X)
    LDAGibbs(100, sampler="sparse", max_iter=1, burn_in=0).fit(X)
    _fake_memory(monkeypatch, 4096)
    with pytest.raises(ValueError, match="memory; use fewer topics") as err:
        LDAGibbs(100, sampler="sparse", max_iter=1, burn_in=0).fit(X)
    assert "sampler=" not in str(err.value)


def test_too_many_kept_draws_say_so(monkeypatch):
    """Kept draws of pi past this machine's memory: a MemoryLimitError (a
    ValueError) that says to keep fewer draws, not to use fewer topics."""
    from sklearn_clda import CompoundLDA
    from sklearn_clda.exceptions import MemoryLimitError

    X, groups = _corpus(30, 50, 30)
    with pytest.raises(MemoryLimitError, match=r"\(the kept collection mixtures: .* keep "
                       r"fewer draws \(a smaller max_iter or a larger thin\)\.$") as err:
        CompoundLDA(3, max_iter=10**15, thin=1).fit(X, groups=groups)
    assert isinstance(err.value, ValueError) and "fewer topics" not in str(err.value)
    _fake_memory(monkeypatch, 4096)  # (the tokens are then the largest part)
    with pytest.raises(MemoryLimitError, match="memory; fit on a sample of the documents"):
        CompoundLDA(3, max_iter=2).fit(X, groups=groups)


@pytest.mark.parametrize("dtype, per_cell", [(np.float64, 8), (np.float32, 12)])
def test_transform_is_refused_when_its_proportions_do_not_fit(monkeypatch, dtype, per_cell):
    """transform returns an (n_docs, K) array: past this machine's memory it
    says so, and how to get around it, before any work (not numpy's
    MemoryError at the allocation); at exactly that size it runs."""
    X, _ = _corpus(400, 50, 20)
    model = LDAGibbs(50, max_iter=2).fit(X.astype(dtype))  # its dtype is transform's
    needed = 400 * 50 * per_cell
    _fake_memory(monkeypatch, needed - 4096)
    with pytest.raises(ValueError, match=r"LDAGibbs.transform of 400 documents with 50 topics "
                       r"needs at least 0\.0 GiB for their topic proportions, more than this "
                       r"machine's 0\.0 GiB of memory; pass the documents in batches"):
        model.transform(X.astype(dtype))
    _fake_memory(monkeypatch, needed)
    assert model.transform(X.astype(dtype)).dtype == dtype


# A cell (or a row) of topic 1 set to a value no topic table holds.
_BAD_TOPIC_CELLS = {"nan": ((1, 7), np.nan), "inf": ((1, 7), np.inf),
                    "negative": ((1, 7), -1e-9), "zero row": ((1, slice(None)), 0.0),
                    "-inf first": ((1, 0), -np.inf)}


@pytest.mark.parametrize("bad", list(_BAD_TOPIC_CELLS))
def test_topics_set_by_hand_must_be_finite_and_non_negative(bad):
    # components_ may be set by hand (the user guide says so); inference
    # refuses a table it cannot read as topics instead of returning NaN.
    X, _ = _corpus(20, 30, 20)
    model = LDAGibbs(n_components=3, max_iter=3, random_state=0).fit(X)
    comp = model.components_.copy()
    cell, value = _BAD_TOPIC_CELLS[bad]
    comp[cell] = value
    model.components_ = comp
    for call in (model.transform, model.score, model.perplexity):
        with pytest.raises(ValueError, match=r"components_\) must be finite and non-negative"
                                             r".* topic 1 is not"):
            call(X[:2])
    with pytest.raises(ValueError, match="topic 1 is not"):
        _sampling.topic_word_parts(comp, None, np.arange(3, dtype=np.int32))
    with pytest.raises(ValueError, match="topic 1 is not"):  # the rows read even so
        _sampling.topic_word_parts(comp, np.ones(3))
    totals = np.array([1.0, 1.0, np.nan])
    with pytest.raises(ValueError, match="topic 2 is not"):
        _sampling.topic_word_parts(model.components_[[0, 0, 0]].copy(), totals)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint32, np.float64])
@pytest.mark.parametrize("cap", [0.5, 1.0, 2.7, 37.0, 1e30])
def test_capped_bounds_are_the_plain_cuts(dtype, cap):
    # Integer weights are searched with the floor of the limit, in their own
    # dtype (a float limit made NumPy cast the whole array for each piece:
    # 13 s for the pieces of 10 million rows); the cuts stay those of the
    # float limit.
    from sklearn_clda._chunking import capped_bounds

    rng = np.random.default_rng(0)
    cum = np.concatenate([[0], np.cumsum(rng.integers(0, 20, 500))]).astype(dtype)
    plain, n = [0], len(cum) - 1
    while plain[-1] < n:
        start = plain[-1]
        end = int(np.searchsorted(cum.astype(np.float64), float(cum[start]) + cap,
                                  side="right")) - 1
        plain.append(min(n, max(end, start + 1)))
    assert capped_bounds(cum, cap) == plain


def test_memory_error_says_what_to_cut_by_what_does_not_fit(monkeypatch):
    """The remedy follows the largest part of the phase that does not fit:
    one very long document's buffers of uniforms (split it), the tokens
    (sample or stream them); both said "use fewer topics", which does not
    help."""
    from sklearn_clda.exceptions import MemoryLimitError

    long_doc = sp.csr_matrix(np.array([[10**9, 5, 0], [3, 0, 2]]))
    _fake_memory(monkeypatch, 20 * 2**30)
    with pytest.raises(MemoryLimitError, match=r"\(the uniforms of the longest document: .*"
                                               r"split the longest documents into shorter"):
        LDAGibbs(2, sampler="sparse", max_iter=1).fit(long_doc)
    many = sp.csr_matrix(np.full((1000, 3), 5 * 10**5))
    _fake_memory(monkeypatch, 2 * 2**30)
    with pytest.raises(MemoryLimitError, match=r"\(the tokens' words and topics: .* fit on "
                                               r"a sample of the documents, or stream"):
        LDAGibbs(2, max_iter=1).fit(many)

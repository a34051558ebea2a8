"""Tests for sklearn_clda.datasets: the bundled corpus and the simulators."""

from collections import Counter
from importlib import resources
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

from sklearn_clda.datasets import (
    load_news16,
    make_compound_corpus,
    make_lda_corpus,
)

# --------------------------------------------------------------------------
# load_news16
# --------------------------------------------------------------------------

N_DOCS, N_TERMS, N_TOKENS, N_NONZERO = 10764, 9208, 777437, 590834
GROUP_SIZES = {"comp": 3344, "politics": 1976, "rec": 2582, "sci": 2862}
GROUP_PREFIX = {
    "comp": "comp.",
    "politics": "talk.politics.",
    "rec": "rec.",
    "sci": "sci.",
}
# The project's shared data folder sits beside the repository (in CI too).
SHARED_NEWS16 = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "news16.npz"


@pytest.fixture(scope="module")
def news16():
    return load_news16()


def test_load_news16_data(news16):
    X = news16.data
    assert sp.issparse(X) and X.format == "csr"
    assert X.shape == (N_DOCS, N_TERMS)
    assert X.dtype == np.int32
    assert X.has_canonical_format
    assert X.nnz == N_NONZERO
    assert X.data.min() >= 1
    assert int(X.sum()) == N_TOKENS
    # every document and every term is used
    assert np.all(np.diff(X.indptr) > 0)
    assert np.all(np.asarray(X.sum(axis=0)).ravel() > 0)


def test_load_news16_groups(news16):
    assert news16.group_names.tolist() == ["comp", "politics", "rec", "sci"]
    assert news16.groups.shape == (N_DOCS,)
    assert news16.groups.dtype.kind == "U"
    assert dict(Counter(news16.groups.tolist())) == GROUP_SIZES


def test_load_news16_categories(news16):
    categories = news16.categories
    assert categories.shape == (N_DOCS,)
    assert categories.dtype.kind == "U"
    assert len(np.unique(categories)) == 16
    # each document's newsgroup lies in its collection's hierarchy
    for group, category in zip(news16.groups, categories):
        assert category.startswith(GROUP_PREFIX[group])


def test_load_news16_feature_names(news16):
    names = news16.feature_names
    assert names.shape == (N_TERMS,)
    assert names.dtype.kind == "U"
    assert len(np.unique(names)) == N_TERMS
    assert all(len(name) > 0 for name in names)


def test_load_news16_descr(news16):
    descr = news16.DESCR
    assert isinstance(descr, str)
    for fact in ("10,764", "9,208", "777,437", "3,344", "1,976", "2,582", "2,862"):
        assert fact in descr
    assert "news.rda" in descr and "clda" in descr


def test_load_news16_return_X_y(news16):
    X, groups = load_news16(return_X_y=True)
    assert (X != news16.data).nnz == 0
    np.testing.assert_array_equal(groups, news16.groups)


def test_load_news16_returns_fresh_arrays():
    first = load_news16()
    first.data.data[:] = 0
    first.groups[:] = "x"
    second = load_news16()
    assert int(second.data.sum()) == N_TOKENS
    assert dict(Counter(second.groups.tolist())) == GROUP_SIZES


def test_news16_file_loads_without_pickle():
    package = resources.files("sklearn_clda.datasets")
    resource = package.joinpath("data").joinpath("news16.npz")
    with resource.open("rb") as fh, np.load(fh, allow_pickle=False) as npz:
        arrays = {name: npz[name] for name in npz.files}
    assert set(arrays) == {
        "data",
        "indices",
        "indptr",
        "shape",
        "vocab",
        "groups",
        "group_names",
        "categories",
    }
    assert all(a.dtype != object for a in arrays.values())


@pytest.mark.skipif(
    not SHARED_NEWS16.exists(), reason="development copy of news16 not available"
)
@pytest.mark.skipif(
    np.lib.NumpyVersion(np.__version__) < "2.0.0",
    reason="the development copy's object arrays were pickled by NumPy 2 (numpy._core)",
)
def test_news16_matches_source_conversion(news16):
    """The bundled file holds exactly the data of the source conversion."""
    with np.load(SHARED_NEWS16, allow_pickle=True) as src:
        X = sp.csr_matrix(
            (src["data"], src["indices"], src["indptr"]), shape=tuple(src["shape"])
        )
        assert (X != news16.data).nnz == 0
        np.testing.assert_array_equal(src["vocab"], news16.feature_names)
        np.testing.assert_array_equal(
            src["group_names"][src["groups"]], news16.groups
        )
        assert src["categories"].tolist() == news16.categories.tolist()


# --------------------------------------------------------------------------
# make_compound_corpus / make_lda_corpus: structure
# --------------------------------------------------------------------------


def _doc_lengths(X):
    return np.asarray(X.sum(axis=1)).ravel()


def _total_variation(p, q):
    return 0.5 * np.abs(np.asarray(p) - np.asarray(q)).sum()


@pytest.mark.parametrize(
    "params",
    [
        {},
        dict(n_topics=5, n_features=30, n_collections=3, docs_per_collection=7),
        dict(n_topics=1, n_features=1, n_collections=1, docs_per_collection=1),
        dict(n_topics=4, n_features=1000, doc_length=1),
    ],
)
def test_make_compound_corpus_shapes(params):
    defaults = dict(
        n_topics=3, n_features=40, n_collections=2, docs_per_collection=100
    )
    p = {**defaults, **params}
    doc_length = params.get("doc_length", 200)
    n_docs = p["n_collections"] * p["docs_per_collection"]
    K, V = p["n_topics"], p["n_features"]

    bunch = make_compound_corpus(**params, random_state=0)

    X = bunch.data
    assert sp.issparse(X) and X.format == "csr"
    assert X.shape == (n_docs, V)
    assert X.dtype == np.int32
    assert X.has_canonical_format
    assert bunch.beta.shape == (K, V)
    assert bunch.pi.shape == (p["n_collections"], K)
    assert bunch.theta.shape == (n_docs, K)
    assert bunch.doc_topic_counts.shape == (n_docs, K)
    assert bunch.doc_topic_counts.dtype == np.int32
    np.testing.assert_array_equal(
        bunch.groups,
        np.repeat(np.arange(p["n_collections"]), p["docs_per_collection"]),
    )
    np.testing.assert_array_equal(_doc_lengths(X), np.full(n_docs, doc_length))
    np.testing.assert_array_equal(
        bunch.doc_topic_counts.sum(axis=1), np.full(n_docs, doc_length)
    )


def test_make_compound_corpus_default_shape():
    assert make_compound_corpus(random_state=0).data.shape == (200, 40)


def test_make_compound_corpus_doc_length_range():
    bunch = make_compound_corpus(
        docs_per_collection=500, doc_length=(5, 15), random_state=0
    )
    lengths = _doc_lengths(bunch.data)
    assert lengths.min() >= 5 and lengths.max() <= 15
    # uniform on 11 values over 1000 documents: both ends are hit
    assert set(np.unique(lengths)) == set(range(5, 16))
    np.testing.assert_array_equal(bunch.doc_topic_counts.sum(axis=1), lengths)


def test_make_compound_corpus_probabilities_sum_to_one():
    bunch = make_compound_corpus(
        n_topics=6, n_features=50, n_collections=3, random_state=0
    )
    for name in ("beta", "pi", "theta"):
        probs = getattr(bunch, name)
        assert np.all(np.isfinite(probs)) and probs.min() >= 0, name
        np.testing.assert_allclose(probs.sum(axis=1), 1.0, rtol=0, atol=1e-12)


def _assert_bunches_equal(a, b):
    assert a.keys() == b.keys()
    for key in a:
        if sp.issparse(a[key]):
            assert (a[key] != b[key]).nnz == 0, key
        else:
            np.testing.assert_array_equal(a[key], b[key], err_msg=key)


def test_make_compound_corpus_reproducible():
    params = dict(n_topics=4, n_features=60, doc_length=(20, 80))
    a = make_compound_corpus(**params, random_state=42)
    b = make_compound_corpus(**params, random_state=42)
    _assert_bunches_equal(a, b)
    # a RandomState seeded alike gives the same corpus
    c = make_compound_corpus(**params, random_state=np.random.RandomState(42))
    _assert_bunches_equal(a, c)

    d = make_compound_corpus(**params, random_state=43)
    assert not np.array_equal(a.beta, d.beta)
    assert not np.array_equal(a.theta, d.theta)
    assert (a.data != d.data).nnz > 0


def test_make_compound_corpus_random_state_instances_advance():
    rs = np.random.RandomState(0)
    a = make_compound_corpus(random_state=rs)
    b = make_compound_corpus(random_state=rs)
    assert not np.array_equal(a.beta, b.beta)

    rng = np.random.default_rng(0)
    c = make_compound_corpus(random_state=rng)
    d = make_compound_corpus(random_state=rng)
    assert not np.array_equal(c.beta, d.beta)
    _assert_bunches_equal(
        c, make_compound_corpus(random_state=np.random.default_rng(0))
    )


def test_make_lda_corpus_shapes_and_reproducibility():
    bunch = make_lda_corpus(7, 90, 55, (10, 30), random_state=0)
    X = bunch.data
    assert set(bunch) == {"data", "beta", "theta", "doc_topic_counts"}
    assert sp.issparse(X) and X.format == "csr" and X.dtype == np.int32
    assert X.shape == (55, 90)
    assert bunch.beta.shape == (7, 90)
    assert bunch.theta.shape == (55, 7)
    assert bunch.doc_topic_counts.shape == (55, 7)
    lengths = _doc_lengths(X)
    assert lengths.min() >= 10 and lengths.max() <= 30
    np.testing.assert_array_equal(bunch.doc_topic_counts.sum(axis=1), lengths)
    for probs in (bunch.beta, bunch.theta):
        np.testing.assert_allclose(probs.sum(axis=1), 1.0, rtol=0, atol=1e-12)

    _assert_bunches_equal(
        bunch, make_lda_corpus(7, 90, 55, (10, 30), random_state=0)
    )
    other = make_lda_corpus(7, 90, 55, (10, 30), random_state=1)
    assert not np.array_equal(bunch.beta, other.beta)

    fixed = make_lda_corpus(3, 20, 10, 25, random_state=0)
    np.testing.assert_array_equal(_doc_lengths(fixed.data), np.full(10, 25))


# --------------------------------------------------------------------------
# make_compound_corpus / make_lda_corpus: the generative model
# --------------------------------------------------------------------------
# Tolerances below are many standard errors wide for the corpus sizes
# used; the reported statistics are about 5x to 10x smaller than the
# tolerances at these sizes, yet a generator sampling from the wrong
# distribution (wrong topic for a token, wrong document for a word, a
# Dirichlet without the gamma * pi concentration, ...) overshoots them
# by far.


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_make_compound_corpus_word_distribution(seed):
    """Aggregate word frequencies match E[X] = sum_d L_d theta_d @ beta.

    With 400,000 tokens over 40 words, the total variation between the
    empirical and expected word distributions is at most about 0.004 (30
    seeds checked); a generator drawing words from the wrong distribution
    gives well over 0.02. The topic totals vary even less (TV < 0.001).
    """
    bunch = make_compound_corpus(
        n_topics=3,
        n_features=40,
        n_collections=2,
        docs_per_collection=1000,
        doc_length=200,
        random_state=seed,
    )
    X = bunch.data
    observed = np.asarray(X.sum(axis=0)).ravel() / X.sum()
    expected = (200 * bunch.theta @ bunch.beta).sum(axis=0)
    expected /= expected.sum()
    assert _total_variation(observed, expected) < 0.02

    # Given the sampled topic counts, E[X] = doc_topic_counts @ beta exactly.
    expected_given_z = (bunch.doc_topic_counts @ bunch.beta).sum(axis=0)
    expected_given_z /= expected_given_z.sum()
    assert _total_variation(observed, expected_given_z) < 0.02

    # Topic counts agree with theta: E[doc_topic_counts] = L_d theta_d.
    observed_topics = bunch.doc_topic_counts.sum(axis=0) / X.sum()
    expected_topics = bunch.theta.mean(axis=0)
    assert _total_variation(observed_topics, expected_topics) < 0.005


@pytest.mark.parametrize("seed", [0, 1])
def test_make_compound_corpus_words_follow_document_topics(seed):
    """Each document's words come from the topics of that document.

    With tiny gamma, documents are (almost always) single-topic. Pooling
    the words of the documents drawn entirely from topic k must then
    reproduce beta[k] (about 60,000 tokens per topic: TV around 0.01),
    while mixing up documents or topics would give TV comparable to the
    distance between topics (about 0.5 for eta=0.25, V=40).
    """
    bunch = make_compound_corpus(
        n_topics=3,
        n_features=40,
        n_collections=3,
        docs_per_collection=300,
        doc_length=200,
        gamma=1e-3,
        eta=0.25,
        random_state=seed,
    )
    X, counts = bunch.data, bunch.doc_topic_counts
    single = counts.max(axis=1) == 200
    assert single.mean() > 0.95
    dominant = counts.argmax(axis=1)
    n_checked = 0
    for k in range(3):
        docs = np.flatnonzero(single & (dominant == k))
        if len(docs) < 50:
            continue
        pooled = np.asarray(X[docs].sum(axis=0)).ravel()
        assert _total_variation(pooled / pooled.sum(), bunch.beta[k]) < 0.04
        n_checked += 1
    assert n_checked >= 1


def test_make_compound_corpus_theta_concentrates_around_pi():
    """theta_jd ~ Dir(gamma pi_j): mean pi_j, total variance
    (1 - |pi_j|^2) / (gamma + 1).

    With 5,000 documents per collection the standard error of the mean is
    at most 0.003 and the total variance lies within a few percent of its
    expectation; using another collection's pi, Dir(pi_j) or Dir(gamma)
    instead is off by far more than the 0.015 / 15% tolerances.
    """
    gamma = 5.0
    bunch = make_compound_corpus(
        n_topics=4,
        n_features=10,
        n_collections=2,
        docs_per_collection=5000,
        doc_length=1,
        alpha=1.0,
        gamma=gamma,
        random_state=0,
    )
    for j in range(2):
        theta_j = bunch.theta[bunch.groups == j]
        pi_j = bunch.pi[j]
        np.testing.assert_allclose(theta_j.mean(axis=0), pi_j, atol=0.015)
        expected_var = (1 - np.sum(pi_j**2)) / (gamma + 1)
        observed_var = theta_j.var(axis=0).sum()
        assert abs(observed_var / expected_var - 1) < 0.15


def test_make_lda_corpus_word_distribution():
    bunch = make_lda_corpus(
        4, 50, 2000, 200, doc_topic_prior=0.5, topic_word_prior=0.1, random_state=0
    )
    X = bunch.data
    observed = np.asarray(X.sum(axis=0)).ravel() / X.sum()
    expected = (200 * bunch.theta @ bunch.beta).sum(axis=0)
    expected /= expected.sum()
    assert _total_variation(observed, expected) < 0.02
    # symmetric prior: theta has mean 1/K
    np.testing.assert_allclose(bunch.theta.mean(axis=0), 0.25, atol=0.03)


@pytest.mark.parametrize(
    "priors",
    [
        dict(alpha=1e-3, gamma=1e-3, eta=1e-3),
        dict(alpha=1e-6, gamma=1e-8, eta=1e-6),
        dict(alpha=1e3, gamma=1e3, eta=1e3),
        # gamma * pi underflows to 0: documents are one-hot in the limit
        dict(alpha=1.0, gamma=1e-320, eta=1.0),
    ],
)
def test_make_compound_corpus_extreme_priors(priors):
    bunch = make_compound_corpus(
        n_topics=5,
        n_features=200,
        n_collections=3,
        docs_per_collection=50,
        doc_length=30,
        **priors,
        random_state=0,
    )
    for name in ("beta", "pi", "theta"):
        probs = getattr(bunch, name)
        assert np.all(np.isfinite(probs)) and probs.min() >= 0, name
        np.testing.assert_allclose(probs.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(_doc_lengths(bunch.data), np.full(150, 30))
    # no token is drawn from a topic the document does not use, nor a
    # word its topic cannot emit
    assert np.all(bunch.doc_topic_counts[bunch.theta == 0] == 0)
    possible = (bunch.doc_topic_counts @ bunch.beta) > 0
    assert np.all(possible[bunch.data.nonzero()])
    if priors["gamma"] < 1e-300:
        assert np.all(np.sort(bunch.theta, axis=1)[:, -1] == 1.0)


def test_make_compound_corpus_five_million_tokens():
    bunch = make_compound_corpus(
        n_topics=100,
        n_features=10000,
        n_collections=4,
        docs_per_collection=12500,
        doc_length=100,
        random_state=0,
    )
    X = bunch.data
    assert X.shape == (50000, 10000)
    assert int(X.sum()) == 5_000_000
    np.testing.assert_array_equal(_doc_lengths(X), np.full(50000, 100))


# --------------------------------------------------------------------------
# Argument validation
# --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "params, match",
    [
        (dict(n_topics=0), "n_topics"),
        (dict(n_topics=-2), "n_topics"),
        (dict(n_topics=2.5), "n_topics"),
        (dict(n_topics=True), "n_topics"),
        (dict(n_topics=np.True_), "n_topics"),
        (dict(doc_length=True), "doc_length"),
        (dict(doc_length=(np.True_, 5)), "doc_length"),
        (dict(alpha=True), "alpha"),
        (dict(alpha=np.True_), "alpha"),
        (dict(n_features=0), "n_features"),
        (dict(n_collections=0), "n_collections"),
        (dict(docs_per_collection=0), "docs_per_collection"),
        (dict(doc_length=0), "doc_length"),
        (dict(doc_length=-5), "doc_length"),
        (dict(doc_length=(0, 10)), "doc_length"),
        (dict(doc_length=(10, 5)), "low <= high"),
        (dict(doc_length=(1, 2, 3)), "doc_length"),
        (dict(doc_length=10.0), "doc_length"),
        (dict(doc_length="10"), "doc_length"),
        (dict(alpha=0), "alpha"),
        (dict(alpha=-1.0), "alpha"),
        (dict(alpha=np.nan), "alpha"),
        (dict(gamma=0.0), "gamma"),
        (dict(gamma=np.inf), "gamma"),
        (dict(eta=-0.1), "eta"),
        (dict(eta="0.1"), "eta"),
        # numpy's Dirichlet gives zero rows (every token on one word) there
        (dict(eta=1e308), r"eta.*range \(0.0, 10000000000.0\]"),
        (dict(alpha=1e11), "alpha"),
    ],
)
def test_make_compound_corpus_invalid_arguments(params, match):
    with pytest.raises(ValueError, match=match):
        make_compound_corpus(**params, random_state=0)


@pytest.mark.parametrize("random_state", [-1, "0", 1.5])
def test_invalid_random_state(random_state):
    with pytest.raises(ValueError, match="'random_state' parameter of make_compound"):
        make_compound_corpus(random_state=random_state)
    with pytest.raises(ValueError, match="'random_state' parameter of make_lda_corpus"):
        make_lda_corpus(2, 5, 3, 4, random_state=random_state)


@pytest.mark.parametrize(
    "args, kwargs, match",
    [
        ((0, 10, 10, 10), {}, "n_topics"),
        ((3, 0, 10, 10), {}, "n_features"),
        ((3, 10, 0, 10), {}, "n_samples"),
        ((3, 10, 10, 0), {}, "doc_length"),
        ((3, 10, 10, (3, 2)), {}, "low <= high"),
        ((3, 10, 10, 10), dict(doc_topic_prior=0), "doc_topic_prior"),
        ((3, 10, 10, 10), dict(topic_word_prior=-1), "topic_word_prior"),
        ((3, 10, 10, 10), dict(topic_word_prior=1e307), "topic_word_prior"),
        ((3, 10, 10, 10), dict(doc_topic_prior=1e308), "doc_topic_prior"),
    ],
)
def test_make_lda_corpus_invalid_arguments(args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        make_lda_corpus(*args, **kwargs, random_state=0)


def test_numpy_scalar_arguments_match_python_ones():
    a = make_compound_corpus(
        n_topics=np.int64(2), n_features=np.int32(10), n_collections=np.int16(2),
        docs_per_collection=np.uint8(5), doc_length=(np.int64(3), 9),
        alpha=np.float32(0.5), gamma=np.float64(2.0), eta=np.float32(0.25),
        random_state=0,
    )
    b = make_compound_corpus(
        n_topics=2, n_features=10, n_collections=2, docs_per_collection=5,
        doc_length=(3, 9), alpha=float(np.float32(0.5)), gamma=2.0,
        eta=float(np.float32(0.25)), random_state=0,
    )
    np.testing.assert_array_equal(a.data.toarray(), b.data.toarray())
    np.testing.assert_array_equal(a.beta, b.beta)

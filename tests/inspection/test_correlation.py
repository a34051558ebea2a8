"""topic_correlation: across the corpus, within collections, graphical lasso."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import BaseEstimator

from sklearn_clda import CompoundLDA, LDAGibbs
from sklearn_clda.inspection import topic_correlation

pytest.importorskip("pandas")

WORDS_PER_TOPIC = 10


def _corpus(seed=0, docs=80, length=120):
    """Collection "x" writes about topics 0 and 1, "y" about 2 and 3; each
    document mixes its collection's two topics in a uniform proportion in
    [0.1, 0.9]. Within a collection the two topics replace each other;
    across the corpus they go together (both present in x, both absent in
    y)."""
    rng = np.random.default_rng(seed)
    rows, groups = [], []
    for label, pair in [("x", (0, 1)), ("y", (2, 3))]:
        for _ in range(docs):
            share = rng.uniform(0.1, 0.9)
            mix = np.zeros(4)
            mix[pair[0]], mix[pair[1]] = share, 1.0 - share
            topics = rng.choice(4, size=length, p=mix)
            words = topics * WORDS_PER_TOPIC + rng.integers(0, WORDS_PER_TOPIC, size=length)
            rows.append(np.bincount(words, minlength=4 * WORDS_PER_TOPIC))
            groups.append(label)
    return sp.csr_matrix(np.array(rows)), np.array(groups)


@pytest.fixture(scope="module")
def fitted():
    X, groups = _corpus()
    # (seed 2 finds the four planted topics; seeds 0 and 3 merge two of them)
    model = CompoundLDA(n_components=4, max_iter=300, eta=0.01, random_state=2).fit(
        X, groups=groups)
    # the fitted topic of each planted one: the topic whose words are its block
    blocks = model.components_.reshape(4, 4, WORDS_PER_TOPIC).sum(axis=2)
    order = np.argmax(blocks, axis=0)
    assert sorted(order) == [0, 1, 2, 3]
    return model, X, groups, order


def test_corpus_wide_correlation_is_that_of_the_proportions(fitted):
    model, X, groups, order = fitted
    corr = topic_correlation(model, groups=groups)
    np.testing.assert_allclose(corr.correlation, np.corrcoef(model.doc_topic_.T))
    a, b = order[0], order[1]
    # both present in x, both absent in y: they go together across the corpus
    assert corr.correlation[a, b] > 0.05 and corr.adjacency[a, b] and corr.adjacency[b, a]
    assert not np.diag(corr.adjacency).any()
    first = corr.edges.iloc[0]
    assert first.correlation == corr.correlation.max(where=~np.eye(4, dtype=bool),
                                                     initial=-1)
    assert (corr.edges.topic_a < corr.edges.topic_b).all()
    assert corr.n_documents == X.shape[0] and corr.method == "simple"


def test_within_collections_the_collection_effect_is_gone(fitted):
    """Relative to its collection, a document with more of one of the pair
    has less of the other: the edge disappears and the sign turns."""
    model, X, groups, order = fitted
    within = topic_correlation(model, groups=groups, within_collections=True)
    a, b = order[0], order[1]
    assert within.correlation[a, b] < -0.9 and not within.adjacency[a, b]
    # the same as centering by hand
    theta = model.doc_topic_.copy()
    for label in ["x", "y"]:
        theta[groups == label] -= theta[groups == label].mean(axis=0)
    np.testing.assert_allclose(within.correlation, np.corrcoef(theta.T), atol=1e-12)


def test_one_collection_and_new_documents(fitted):
    model, X, groups, order = fitted
    inside = topic_correlation(model, groups=groups, collection="x")
    assert inside.n_documents == 80
    a, b = order[0], order[1]
    assert inside.correlation[a, b] < -0.9
    # documents folded in with transform: the held-out corpus tells the same
    X_new, groups_new = _corpus(seed=1)
    new = topic_correlation(model, X_new, groups_new)
    assert new.correlation[a, b] > 0.05 and new.n_documents == X_new.shape[0]
    assert topic_correlation(model, X_new, groups_new,
                             within_collections=True).correlation[a, b] < -0.9


def test_graphical_lasso_keeps_direct_links(fitted):
    model, X, groups, order = fitted
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        partial = topic_correlation(model, groups=groups, method="glasso")
    assert partial.method == "glasso"
    np.testing.assert_allclose(partial.correlation, partial.correlation.T, atol=1e-8)
    assert np.allclose(np.diag(partial.correlation), 1.0)
    assert (np.abs(partial.correlation) <= 1 + 1e-9).all()
    np.testing.assert_array_equal(partial.adjacency,
                                  (partial.correlation > 0) & ~np.eye(4, dtype=bool))


def test_works_for_lda_and_a_topic_that_never_varies():
    X, _ = _corpus()
    lda = LDAGibbs(n_components=5, max_iter=60, random_state=0).fit(X)
    corr = topic_correlation(lda)
    assert corr.correlation.shape == (5, 5) and np.isfinite(corr.correlation).all()
    lda.doc_topic_[:, 4] = 0.2  # a topic with the same share everywhere
    flat = topic_correlation(lda)
    assert (flat.correlation[4, :4] == 0).all() and flat.correlation[4, 4] == 1
    assert not flat.adjacency[4].any()


def test_bad_requests_get_clear_errors(fitted):
    model, X, groups, _ = fitted
    for kwargs, message in [
        ({"within_collections": True}, "within_collections=True needs groups"),
        ({"collection": "x"}, "with collection='x' needs groups"),
        ({"groups": groups, "collection": "z"}, "collection='z' passed to topic_correlation "
                                                "is not among the labels"),
        ({"groups": groups[:5]}, "groups"),
        ({"method": "huge"}, "'method' parameter of topic_correlation must be"),
        ({"cutoff": 2.0}, "'cutoff' parameter of topic_correlation must be"),
    ]:
        with pytest.raises(ValueError, match=message):
            topic_correlation(model, **kwargs)
    with pytest.raises(ValueError, match="at least 3 documents"):
        topic_correlation(model, X[:2], groups[:2])
    with pytest.raises(ValueError, match="method='glasso' needs at least 10 documents"):
        topic_correlation(model, X[:5], groups[:5], method="glasso")
    unfitted = CompoundLDA(n_components=4)
    with pytest.raises(Exception, match="not fitted"):
        topic_correlation(unfitted)


# --------------------------------------------------------------------------
# Bootstrap intervals
# --------------------------------------------------------------------------


class _Proportions(BaseEstimator):
    """A stand-in for a fitted model: given documents' topic proportions."""

    def __init__(self, theta=None):
        self.theta = theta

    def fit(self, X=None, y=None):
        self.doc_topic_ = self.theta
        self.components_ = np.ones((self.theta.shape[1], 2))
        return self


def test_bootstrap_intervals_cover_the_true_correlation():
    # Proportions drawn from Dirichlet(alpha): the correlation of two
    # components is -sqrt(a_i a_j / ((a0 - a_i)(a0 - a_j))). 90% intervals
    # from 200 documents cover it in about 90% of 150 corpora (binomial
    # standard deviation 2.4%); swapped or shrunken quantiles, or a
    # resample without replacement, miss.
    alpha = np.array([2.0, 1.0, 3.0])
    a0 = alpha.sum()
    true = -np.sqrt(alpha[0] * alpha[2] / ((a0 - alpha[0]) * (a0 - alpha[2])))
    rng = np.random.default_rng(0)
    covered, widths = [], []
    for seed in range(150):
        theta = rng.dirichlet(alpha, size=200)
        corr = topic_correlation(_Proportions(theta).fit(), n_bootstrap=200, random_state=seed)
        covered.append(corr.lower[0, 2] <= true <= corr.upper[0, 2])
        widths.append(corr.upper[0, 2] - corr.lower[0, 2])
    assert 0.83 <= np.mean(covered) <= 0.96
    # four times the documents, about half the width
    theta = rng.dirichlet(alpha, size=800)
    wide = topic_correlation(_Proportions(theta).fit(), n_bootstrap=200, random_state=0)
    assert 0.4 < (wide.upper[0, 2] - wide.lower[0, 2]) / np.mean(widths) < 0.6


def test_bootstrap_resamples_within_collections(fitted):
    from sklearn_clda.inspection._correlation import _resampled_rows

    model, X, groups, order = fitted
    rng = np.random.default_rng(0)
    codes = np.unique(groups, return_inverse=True)[1]
    rows = _resampled_rows(codes, groups.size, rng)
    assert (groups[rows] == np.sort(groups)).all()  # every collection keeps its size
    assert len(np.unique(rows)) < groups.size  # with replacement
    # each collection's rows drawn uniformly from its members
    draws = np.concatenate([_resampled_rows(codes, groups.size, rng) for _ in range(200)])
    counts = np.bincount(draws, minlength=groups.size)
    assert counts.min() > 100 and counts.max() < 300  # 200 draws each, on average
    corr = topic_correlation(model, groups=groups, within_collections=True,
                             n_bootstrap=100, random_state=0)
    again = topic_correlation(model, groups=groups, within_collections=True,
                              n_bootstrap=100, random_state=0)
    np.testing.assert_array_equal(corr.lower, again.lower)
    a, b = order[0], order[1]
    # within x, topics 0 and 1 replace each other: clearly negative
    assert corr.upper[a, b] < -0.5
    corpus = topic_correlation(model, groups=groups, n_bootstrap=100, random_state=0)
    assert {"lower", "upper", "clear"} <= set(corpus.edges.columns)
    edge = corpus.edges[(corpus.edges.topic_a == min(a, b))
                        & (corpus.edges.topic_b == max(a, b))].iloc[0]
    assert edge.lower <= edge.correlation <= edge.upper
    assert edge.clear == (edge.lower > corpus.cutoff)
    assert topic_correlation(model, groups=groups).lower is None


def test_bootstrap_runs_blas_on_one_thread(fitted, monkeypatch):
    # OpenBLAS's threads on each resample's small product cost up to 35
    # times one thread's time on a busy machine; the thread count goes back
    # afterwards.
    from threadpoolctl import threadpool_info

    from sklearn_clda.inspection import _correlation

    def blas_threads():
        return [pool["num_threads"] for pool in threadpool_info()
                if pool["user_api"] == "blas"]

    seen, original = [], _correlation._correlations

    def spy(values, method):
        seen.append(blas_threads())
        return original(values, method)

    before = blas_threads()
    if not before or max(before) == 1:
        pytest.skip("BLAS runs on one thread here already: nothing to limit")
    monkeypatch.setattr(_correlation, "_correlations", spy)
    model, X, groups, order = fitted
    topic_correlation(model, groups=groups, n_bootstrap=60, random_state=0)
    assert len(seen) == 61  # the estimate itself, then each resample
    assert seen[0] == before and all(threads == [1] * len(before) for threads in seen[1:])
    assert blas_threads() == before


def test_bootstrap_bad_requests(fitted, monkeypatch):
    from sklearn_clda.inspection import _correlation

    model, X, groups, order = fitted
    with pytest.raises(ValueError, match="needs method='simple'"):
        topic_correlation(model, method="glasso", n_bootstrap=10)
    with pytest.raises(ValueError, match="n_bootstrap"):
        topic_correlation(model, n_bootstrap=-1)
    with pytest.raises(ValueError, match="ci"):
        topic_correlation(model, n_bootstrap=10, ci=1.0)
    monkeypatch.setattr(_correlation, "_BOOTSTRAP_MAX_BYTES", 1000)
    with pytest.raises(ValueError, match="lower n_bootstrap"):
        topic_correlation(model, n_bootstrap=10)


def test_centering_is_its_numpy_equivalent():
    from sklearn_clda.inspection._correlation import _centered

    rng = np.random.default_rng(0)
    theta, codes = rng.random((50, 4)), rng.integers(0, 7, 50)
    codes[:7] = np.arange(7)  # every code used
    means = np.array([theta[codes == j].mean(axis=0) for j in range(7)])
    np.testing.assert_allclose(_centered(theta, codes), theta - means[codes], atol=1e-15)

"""residual_dispersion against Taddy's (2012) statistic as stm's
``checkResiduals`` computes it.

stm (R/residuals.R): for each document, ``q = theta %*% beta``, ``m`` its
length, the sum over all words of ``(x - m q)^2 / (m q (1 - q))`` (written
there as ``(x^2 - 2 x q m) / (m q (1 - q)) + m q / (1 - q)``), and
``Nhat`` the words with ``q m > tol``; then ``df = sum(Nhat) - V - (n (K -
1) + K (V - 1))``, dispersion ``D / df`` and ``pchisq(D, df, lower.tail =
FALSE)``.
"""

import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.stats import chi2
from sklearn.decomposition import LatentDirichletAllocation
from sklearn.exceptions import NotFittedError
from sklearn.preprocessing import StandardScaler
from sklearn.utils._param_validation import InvalidParameterError

from sklearn_clda import CompoundLDA, LDAGibbs
from sklearn_clda import _chunking
from sklearn_clda.datasets import make_compound_corpus, make_lda_corpus
from sklearn_clda.metrics import residual_dispersion, residual_dispersion_from_estimates


def _pearson_term(x, mu, q):
    """One cell's squared Pearson residual; 0 / 0 = 0, a / 0 = inf."""
    excess = (x - mu) ** 2
    variance = mu * (1.0 - q)
    if excess == 0:
        return 0.0
    return math.inf if variance == 0 else excess / variance


def _stm_dispersion(theta, beta, X, tol):
    """The statistic cell by cell in plain Python, documents without
    tokens left out."""
    theta = [[t / sum(row) for t in row] for row in theta]
    beta = [[b / sum(row) for b in row] for row in beta]
    K, V = len(beta), len(beta[0])
    statistic, n_cells, n_docs = 0.0, 0, 0
    for d, counts in enumerate(X):
        m = sum(counts)
        if m == 0:
            continue
        n_docs += 1
        for w in range(V):
            q = min(1.0, sum(theta[d][k] * beta[k][w] for k in range(K)))
            statistic += _pearson_term(counts[w], m * q, q)
            n_cells += m * q > tol
    df = n_cells - V - (n_docs * (K - 1) + K * (V - 1))
    return statistic, n_cells, df


def _random_case(seed, n_docs=30, n_topics=3, n_words=25):
    rng = np.random.default_rng(seed)
    theta = rng.dirichlet(np.full(n_topics, 0.3), n_docs)
    beta = rng.dirichlet(np.full(n_words, 0.2), n_topics)
    X = np.stack([rng.multinomial(n, p) for n, p in
                  zip(rng.integers(0, 60, n_docs), theta @ beta)])
    return theta, beta, X


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("tol", [0.0, 0.01, 0.5])
def test_matches_the_statistic_cell_by_cell(seed, tol, monkeypatch):
    # a budget of a few rows, so that the documents go by many pieces
    monkeypatch.setattr(_chunking, "CHUNK_BYTES", 3 * 8 * 25 * 4)
    theta, beta, X = _random_case(seed)
    X[3] = 0  # a document without tokens
    statistic, n_cells, df = _stm_dispersion(theta.tolist(), beta.tolist(), X.tolist(), tol)
    result = residual_dispersion_from_estimates(theta, beta, sp.csr_matrix(X), tol=tol)
    assert result.n_cells == n_cells
    assert result.df == df
    assert result.statistic == pytest.approx(statistic, rel=1e-12)
    assert result.dispersion == pytest.approx(statistic / df, rel=1e-12)
    assert result.pvalue == pytest.approx(chi2.sf(statistic, df), rel=1e-9)
    assert result.n_params == np.count_nonzero(X.sum(axis=1)) * 2 + 3 * 24


def test_a_case_by_hand():
    # one topic, two words of probability 1/2; documents (3, 1) and (1, 1):
    # residual terms 1 + 1 and 0 + 0, four cells, one free parameter
    result = residual_dispersion_from_estimates([[1.0], [1.0]], [[0.5, 0.5]],
                                                np.array([[3, 1], [1, 1]]))
    assert (result.statistic, result.n_cells, result.n_params, result.df) == (2.0, 4, 1, 1)
    assert result.dispersion == 2.0
    assert result.pvalue == pytest.approx(0.157299207050285, rel=1e-12)


def test_documents_without_tokens_change_nothing():
    theta, beta, X = _random_case(3)
    X[X.sum(axis=1) == 0] = 1
    base = residual_dispersion_from_estimates(theta, beta, X)
    padded = residual_dispersion_from_estimates(
        np.vstack([theta, theta[:2]]), beta, np.vstack([X, np.zeros((2, X.shape[1]), int)]))
    assert padded == base


def test_too_few_topics_are_overdispersed():
    """The check's power: a model with fewer topics than the corpus was
    drawn from leaves the documents far more varied than it explains; at
    the true number the dispersion is about 1."""
    corpus = make_lda_corpus(n_topics=4, n_features=100, n_samples=200, doc_length=200,
                             random_state=0)
    values = {}
    for k in (1, 2, 4):
        lda = LDAGibbs(n_components=k, max_iter=100, random_state=0).fit(corpus.data)
        values[k] = residual_dispersion(lda, corpus.data).dispersion
    assert values[1] > values[2] > 3.0
    assert 0.5 < values[4] < 1.3
    truth = residual_dispersion_from_estimates(corpus.theta, corpus.beta, corpus.data)
    assert truth.statistic < values[2] * truth.df


def test_transform_with_groups_and_scikit_learn_lda():
    corpus = make_compound_corpus(n_topics=3, n_features=40, n_collections=2,
                                  docs_per_collection=30, doc_length=50, random_state=0)
    clda = CompoundLDA(n_components=3, max_iter=40, random_state=0).fit(
        corpus.data, groups=corpus.groups)
    result = residual_dispersion(clda, corpus.data, corpus.groups)
    theta = clda.transform(corpus.data, groups=corpus.groups)
    assert result == residual_dispersion_from_estimates(theta, clda.components_, corpus.data)
    lda = LatentDirichletAllocation(n_components=3, random_state=0).fit(corpus.data)
    result = residual_dispersion(lda, corpus.data, corpus.groups)  # groups: not taken
    assert result == residual_dispersion_from_estimates(
        lda.transform(corpus.data), lda.components_, corpus.data)


def test_an_observed_word_of_probability_zero():
    theta, beta = [[1.0]] * 3, [[0.5, 0.5, 0.0]]
    result = residual_dispersion_from_estimates(theta, beta, [[3, 1, 1], [2, 2, 0], [2, 2, 0]])
    assert (result.n_cells, result.df) == (6, 1)
    assert result.statistic == math.inf and result.dispersion == math.inf
    assert result.pvalue == 0.0
    # a word of probability zero that no document has adds nothing
    finite = residual_dispersion_from_estimates(theta, beta, [[3, 1, 0], [2, 2, 0], [2, 2, 0]])
    assert (finite.statistic, finite.dispersion) == (2.0, 2.0)


def test_a_statistic_past_the_largest_double_is_inf_without_a_warning():
    # each word of probability 3e-309 seen once adds about 1.1e308: their
    # sum is past the largest double (found by fuzzing: it warned of the
    # overflow, which the suite makes an error)
    theta, beta = [[1.0]] * 3, [[1.0, 3e-309, 3e-309]]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = residual_dispersion_from_estimates(theta, beta, np.ones((3, 3)), tol=0.0)
    assert result.df == 4
    assert result.statistic == math.inf and result.pvalue == 0.0


def test_no_degrees_of_freedom_warns_and_gives_nan():
    theta, beta, X = _random_case(0, n_docs=10, n_topics=8, n_words=6)
    with pytest.warns(UserWarning, match="leaves no degrees of freedom"):
        result = residual_dispersion_from_estimates(theta, beta, X)
    assert result.df <= 0 and np.isnan(result.dispersion) and np.isnan(result.pvalue)
    assert np.isfinite(result.statistic)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        residual_dispersion_from_estimates(theta[:, :1], beta[:1], X)


@pytest.mark.parametrize("call, match", [
    (lambda: residual_dispersion_from_estimates([[1.0]], [[1.0, 1.0]], [[0, 0]]),
     "contains no tokens"),
    (lambda: residual_dispersion_from_estimates([[1.0, 0.0]], [[1.0, 1.0]], [[1, 2]]),
     "doc_topic passed to residual_dispersion_from_estimates has 2 topics but "
     "topic_word has 1"),
    (lambda: residual_dispersion_from_estimates([[1.0]], [[1.0, 1.0]], [[1, 2, 3]]),
     "topic_word passed to residual_dispersion_from_estimates has 2 features but X has 3"),
    (lambda: residual_dispersion_from_estimates([[1.0], [1.0]], [[1.0, 1.0]], [[1, 2]]),
     "doc_topic passed to residual_dispersion_from_estimates has 2 rows but X has 1"),
    (lambda: residual_dispersion_from_estimates([[1.0]], [[1.0, -1.0]], [[1, 2]]),
     "topic_word passed to residual_dispersion_from_estimates must be non-negative"),
    (lambda: residual_dispersion_from_estimates([[1.0]], [[1.0, 1.0]], [[1, -2]]),
     "(?i)negative values"),
])
def test_bad_inputs_are_named(call, match):
    with pytest.raises(ValueError, match=match):
        call()


@pytest.mark.parametrize("tol", [-0.1, True, "0.01", np.nan])
def test_tol_is_validated(tol):
    with pytest.raises(InvalidParameterError, match="tol"):
        residual_dispersion_from_estimates([[1.0]], [[1.0, 1.0]], [[1, 2]], tol=tol)


def test_an_unfitted_model_or_one_without_topics():
    with pytest.raises(NotFittedError):
        residual_dispersion(LDAGibbs(), [[1, 2]])
    scaler = StandardScaler().fit([[1, 2], [3, 4]])
    with pytest.raises(ValueError, match="a fitted topic model with components_, got "
                       "StandardScaler"):
        residual_dispersion(scaler, [[1, 2]])


def test_probabilities_rounded_past_one():
    """Ten topics that all put their mass on one word: that word's
    probability is 1, but summing the mixture may round past it, which
    must not make a variance negative."""
    from sklearn_clda.metrics._topics import _normalize_rows

    beta = np.tile([1.0, 0.0], (10, 1))
    rng = np.random.default_rng(0)
    for _ in range(1000):
        theta = np.repeat(rng.dirichlet(np.ones(10), 1), 12, axis=0)
        if (_normalize_rows(theta) @ beta)[:, 0].max() > 1.0:
            break
    else:  # pragma: no cover - the precondition of the test
        pytest.fail("no mixture whose sum rounds past 1 was found")
    X = np.array([[5, 0]] * 12)
    with pytest.warns(UserWarning, match="no degrees of freedom"):  # ten topics, two words
        result = residual_dispersion_from_estimates(theta, beta, X)
    assert result.statistic == 0.0

"""Tests of LDAGibbs: recovery of planted topics, the sampler's trace,
reproducibility, fold-in inference, input handling, scoring and the
scikit-learn integration (feature names, pipelines, model selection).

Statistical tolerances were set by measuring what the estimator achieves
with the fixed seeds below and then checking that a deliberately wrong
model or input fails the same assertion; the numbers are in the comments.
"""

import os
import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
import sklearn
from numpy.testing import assert_allclose, assert_array_equal
from scipy.optimize import linear_sum_assignment
from scipy.special import gammaln
from sklearn.exceptions import NotFittedError
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import make_pipeline

from sklearn_clda import CompoundLDA, LDAGibbs

K_TRUE = 4
BLOCK = 10
V = K_TRUE * BLOCK
PRIORS = dict(doc_topic_prior=0.3, topic_word_prior=0.1)


# --------------------------------------------------------------- helpers
def planted_topics(on_block=0.9):
    """K_TRUE topics over V words; topic k puts `on_block` of its mass on
    words k*BLOCK .. (k+1)*BLOCK - 1 and spreads the rest uniformly."""
    beta = np.full((K_TRUE, V), (1.0 - on_block) / (V - BLOCK))
    for k in range(K_TRUE):
        beta[k, k * BLOCK : (k + 1) * BLOCK] = on_block / BLOCK
    return beta


def sample_corpus(beta, n_docs, doc_len, seed, alpha=0.3):
    """LDA generative model with known topics: theta ~ Dir(alpha), then
    each document's counts ~ Multinomial(doc_len, theta @ beta)."""
    rng = np.random.default_rng(seed)
    theta = rng.dirichlet(np.full(beta.shape[0], alpha), size=n_docs)
    p = theta @ beta
    p /= p.sum(axis=1, keepdims=True)
    return np.vstack([rng.multinomial(doc_len, row) for row in p])


def topic_tv(components, beta):
    """Total-variation distance of each true topic to its matched
    recovered topic (Hungarian matching on TV distance)."""
    phi = components / components.sum(axis=1, keepdims=True)
    dist = 0.5 * np.abs(phi[:, None, :] - beta[None, :, :]).sum(axis=-1)
    rows, cols = linear_sum_assignment(dist)
    return dist[rows, cols]


def fold_in_reference(x, phi_vk, alpha, max_iter, tol):
    """Plain-NumPy version of the documented fold-in fixed point for one
    dense document `x` (topic-word `phi_vk` word-major, prior `alpha`);
    stops when the mean absolute change of theta is below `tol`."""
    t = alpha / alpha.sum()
    nz = np.flatnonzero(x)
    if nz.size == 0:
        return t
    c, P = x[nz].astype(float), phi_vk[nz]
    for _ in range(max_iter):
        r = t * P
        r /= r.sum(axis=1, keepdims=True)
        new = alpha + c @ r
        new /= new.sum()
        done = np.abs(new - t).mean() < tol
        t = new
        if done:
            break
    return t


def alternate_halves(x):
    """The documented document-completion split of one dense row ``x``: its
    tokens listed in column order (each word repeated by its count) and
    dealt alternately, positions 0, 2, 4, ... to the first half."""
    tokens = np.repeat(np.arange(x.shape[0]), x)
    return (np.bincount(tokens[0::2], minlength=x.shape[0]),
            np.bincount(tokens[1::2], minlength=x.shape[0]))


def score_reference(X, phi_vk, alpha, max_iter, tol):
    """Plain-NumPy document-completion log-likelihood of every row of X:
    each half is scored under the theta folded in from the other half,
    ``sum_w n_w log(theta . phi_w)``."""
    out = np.zeros(X.shape[0])
    for d, x in enumerate(np.asarray(X)):
        first, second = alternate_halves(x)
        for observed, held_out in ((first, second), (second, first)):
            theta = fold_in_reference(observed, phi_vk, alpha, max_iter, tol)
            nz = np.flatnonzero(held_out)
            out[d] += held_out[nz] @ np.log(phi_vk[nz] @ theta)
    return out


@pytest.fixture(scope="module")
def beta():
    return planted_topics()


@pytest.fixture(scope="module")
def corpus(beta):
    """300 training documents of 80 tokens from the planted topics."""
    return sample_corpus(beta, n_docs=300, doc_len=80, seed=0)


@pytest.fixture(scope="module")
def held_out(beta):
    """100 unseen documents from the same generator."""
    return sample_corpus(beta, n_docs=100, doc_len=80, seed=100)


@pytest.fixture(scope="module")
def fitted(corpus):
    """A converged K=4 model of `corpus` (do not mutate it in tests)."""
    return LDAGibbs(
        n_components=4, max_iter=300, evaluate_every=10, random_state=0, **PRIORS
    ).fit(corpus)


# ------------------------------------------------------ planted topics
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_recovers_planted_topics(beta, seed):
    X = sample_corpus(beta, n_docs=300, doc_len=80, seed=seed)
    lda = LDAGibbs(n_components=4, max_iter=300, random_state=seed, **PRIORS).fit(X)
    tv = topic_tv(lda.components_, beta)
    # Measured for seeds 0..4: max TV 0.062 (each topic is estimated from
    # ~6000 tokens, so multinomial noise alone gives a few hundredths).
    # A model with a shuffled vocabulary scores TV ~0.5 on every topic and
    # K=3 leaves one true topic at TV > 0.4, so 0.1 separates clearly.
    assert np.all(tv < 0.1), tv


# -------------------------------------------------------------- trace
def test_trace_keys_shapes_and_times(fitted):
    trace = fitted.trace_
    assert set(trace) == {"iteration", "log_likelihood", "seconds",
                          "doc_topic_prior", "topic_word_prior"}
    # evaluate_every=10, max_iter=300: sweep 0 (the random init), 10, ..., 300.
    assert_array_equal(trace["iteration"], np.arange(0, 301, 10))
    assert trace["iteration"].dtype.kind == "i"
    # Priors are not learned here, so their path is constant.
    assert np.all(trace["doc_topic_prior"] == fitted.doc_topic_prior_)
    assert np.all(trace["topic_word_prior"] == fitted.topic_word_prior_)
    for key in ("log_likelihood", "seconds", "doc_topic_prior"):
        assert trace[key].shape == (31,)
        assert np.all(np.isfinite(trace[key]))
    assert np.all(np.diff(trace["seconds"]) >= 0)
    assert fitted.n_iter_ == 300
    assert fitted.burn_in_ == 150
    assert fitted.n_tokens_ == 300 * 80


def test_trace_without_evaluation_records_last_sweep(corpus):
    lda = LDAGibbs(n_components=2, max_iter=7, random_state=0).fit(corpus)
    assert_array_equal(lda.trace_["iteration"], [7])
    assert lda.trace_["log_likelihood"].shape == (1,)


def test_log_likelihood_rises_and_stabilizes(fitted):
    ll = fitted.trace_["log_likelihood"]
    rise = ll[-1] - ll[0]
    # Measured: ll[0] = -1.240e5 (random assignments), ll[-1] = -8.42e4,
    # a rise of ~47% of |ll[-1]|. A sampler that did not move would rise 0.
    assert rise > 0.2 * abs(ll[-1])
    # Stationary at the end: the last quarter spans 0.9% of the rise
    # (measured). The still-climbing start of the same chain (sweeps 0..4,
    # last quarter = sweeps 3..4) spans 43% and sweeps 0..8 span 10%, so
    # 5% tells a converged trace from a climbing one.
    last_quarter = ll[len(ll) * 3 // 4 :]
    assert np.ptp(last_quarter) < 0.05 * rise
    # Every recorded state after the start beats the random init.
    assert np.all(ll[1:] > ll[0])


# ---------------------------------------------------- reproducibility
def test_same_seed_is_bit_identical(corpus):
    params = dict(n_components=4, max_iter=40, evaluate_every=10, **PRIORS)
    a = LDAGibbs(random_state=7, **params).fit(corpus)
    b = LDAGibbs(random_state=7, **params).fit(corpus)
    assert_array_equal(a.components_, b.components_)
    assert_array_equal(a.doc_topic_, b.doc_topic_)
    assert_array_equal(a.trace_["log_likelihood"], b.trace_["log_likelihood"])


def test_different_seed_differs(corpus):
    params = dict(n_components=4, max_iter=40, evaluate_every=10, **PRIORS)
    a = LDAGibbs(random_state=7, **params).fit(corpus)
    b = LDAGibbs(random_state=8, **params).fit(corpus)
    assert not np.array_equal(a.components_, b.components_)
    assert not np.array_equal(a.trace_["log_likelihood"], b.trace_["log_likelihood"])


def test_parallel_sampler_reproducible_and_accurate(corpus, beta):
    # n_jobs > 1 runs approximate distributed (AD-LDA) sweeps: reproducible
    # for a fixed (n_jobs, random_state) but a different chain than n_jobs=1.
    params = dict(n_components=4, max_iter=300, random_state=0, n_jobs=2, **PRIORS)
    a = LDAGibbs(**params).fit(corpus)
    b = LDAGibbs(**params).fit(corpus)
    assert_array_equal(a.components_, b.components_)
    assert_array_equal(a.doc_topic_, b.doc_topic_)
    # Same tolerance as the serial recovery test (measured max TV 0.043).
    assert np.all(topic_tv(a.components_, beta) < 0.1)


def test_random_state_instance(corpus):
    params = dict(n_components=4, max_iter=20, **PRIORS)
    from_int = LDAGibbs(random_state=0, **params).fit(corpus)
    # A fresh RandomState(0) is what check_random_state(0) builds.
    lda = LDAGibbs(random_state=np.random.RandomState(0), **params)
    lda.fit(corpus)
    assert_array_equal(lda.components_, from_int.components_)
    # The instance is advanced by the fit, so a refit gives another chain.
    first = lda.components_.copy()
    lda.fit(corpus)
    assert not np.array_equal(lda.components_, first)


# ---------------------------------------------------------- transform
def test_transform_rows_sum_to_one_and_deterministic(fitted, corpus):
    theta = fitted.transform(corpus)
    assert theta.shape == (300, 4)
    assert theta.dtype == np.float64
    assert np.all(theta > 0)
    assert_allclose(theta.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    assert_array_equal(fitted.transform(corpus), theta)


def test_transform_matches_reference_fixed_point(fitted, corpus):
    phi = fitted.components_ / fitted.components_.sum(axis=1, keepdims=True)
    alpha = np.full(4, fitted.doc_topic_prior_)
    theta = fitted.transform(corpus[:30])
    expected = np.vstack(
        [
            fold_in_reference(x, phi.T, alpha, fitted.max_doc_update_iter,
                              fitted.mean_change_tol)
            for x in corpus[:30]
        ]
    )
    # Same iteration in another summation order: rounding-level agreement.
    # Stopping one iteration early or late shows up at ~1e-5 (the tolerance):
    # a max-abs-change stopping rule instead of the documented mean-abs one
    # was measured to differ by 1.6e-5 here.
    assert_allclose(theta, expected, rtol=1e-10, atol=1e-12)


def test_fold_in_parameters_are_used(fitted, corpus):
    theta = fitted.transform(corpus[:20])
    one_step = pickle.loads(pickle.dumps(fitted)).set_params(max_doc_update_iter=1)
    loose = pickle.loads(pickle.dumps(fitted)).set_params(mean_change_tol=0.5)
    tight = pickle.loads(pickle.dumps(fitted)).set_params(mean_change_tol=0.0,
                                                          max_doc_update_iter=1000)
    # One iteration from the uniform start is far from the fixed point, and
    # a tolerance of 0.5 stops after the first iteration as well.
    assert np.abs(one_step.transform(corpus[:20]) - theta).max() > 1e-2
    assert_array_equal(loose.transform(corpus[:20]), one_step.transform(corpus[:20]))
    # Converging fully moves the default answer (mean_change_tol=1e-5) by
    # 2.8e-5 at most over the 300 training docs (measured); one iteration
    # is off by 0.12.
    assert_allclose(tight.transform(corpus[:20]), theta, rtol=0, atol=2e-4)


def test_transform_batch_equals_row_by_row(fitted, corpus):
    X = sp.csr_matrix(corpus[:40])
    batch = fitted.transform(X)
    rows = np.vstack([fitted.transform(X[i]) for i in range(X.shape[0])])
    # Documents are folded in independently, so this is exact.
    assert_array_equal(batch, rows)


def test_transform_empty_row_gives_prior_mean(fitted, corpus):
    X = corpus[:5].copy()
    X[2] = 0
    theta = fitted.transform(X)
    assert_array_equal(theta[2], np.full(4, 0.25))
    assert_array_equal(fitted.transform(np.zeros((1, V)))[0], np.full(4, 0.25))
    # Non-empty rows are untouched by the empty one.
    assert_array_equal(theta[[0, 1, 3, 4]], fitted.transform(corpus[[0, 1, 3, 4]]))


def test_fit_transform_equals_fit_then_transform(corpus):
    params = dict(n_components=4, max_iter=30, random_state=3, **PRIORS)
    ft = LDAGibbs(**params).fit_transform(corpus)
    lda = LDAGibbs(**params).fit(corpus)
    assert_array_equal(ft, lda.transform(corpus))
    # fit_transform re-infers the documents; it is not the chain's doc_topic_.
    assert not np.array_equal(ft, lda.doc_topic_)


def test_transform_n_jobs_does_not_change_output(fitted, held_out, beta):
    X = np.vstack([held_out, sample_corpus(beta, 100, 80, seed=101)])  # 200 docs
    threaded = pickle.loads(pickle.dumps(fitted)).set_params(n_jobs=2)
    # Make sure the comparison really runs two threads over several pieces.
    indptr = np.concatenate(([0], np.cumsum((X > 0).sum(axis=1))))
    doc_pieces, n_threads = threaded._inference_pieces(indptr)
    assert n_threads == min(2, os.cpu_count()) and len(doc_pieces) >= 2
    assert_array_equal(threaded.transform(X), fitted.transform(X))
    assert threaded.score(X) == fitted.score(X)


# ------------------------------------------------------ input formats
@pytest.mark.parametrize(
    "convert",
    [
        np.asarray,
        lambda X: X.astype(np.float64),
        lambda X: X.astype(np.float32),
        lambda X: X.astype(np.int32),
        sp.csr_matrix,
        sp.csc_matrix,
        sp.coo_matrix,
        sp.csr_array,
        lambda X: sp.csr_matrix(X.astype(np.float64)),
        lambda X: pd.DataFrame(X.astype(np.float32)),
        lambda X: pd.DataFrame(X),
    ],
    ids=["ndarray-int64", "ndarray-float64", "ndarray-float32", "ndarray-int32",
         "csr", "csc", "coo", "csr_array", "csr-float64", "frame-float32", "frame-int64"],
)
def test_input_formats_give_identical_fit(corpus, convert):
    params = dict(n_components=4, max_iter=20, random_state=0, **PRIORS)
    reference = LDAGibbs(**params).fit(corpus)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # integer-valued input must not warn
        lda = LDAGibbs(**params).fit(convert(corpus))
    # float32 input gives float32 topics (as scikit-learn's LDA), the same
    # chain's values rounded to float32.
    dtype = np.asarray(convert(corpus[:1])).dtype
    dtype = np.float32 if dtype == np.float32 else np.float64
    assert lda.components_.dtype == dtype and lda.doc_topic_.dtype == dtype
    assert_array_equal(lda.components_, reference.components_.astype(dtype))
    assert_array_equal(lda.doc_topic_, reference.doc_topic_.astype(dtype))


@pytest.mark.parametrize("make", [
    lambda: LDAGibbs(n_components=3, max_iter=4, topic_word_prior=1e-100, random_state=0),
    lambda: CompoundLDA(n_components=3, max_iter=4, eta=1e-100, random_state=0),
    lambda: CompoundLDA(n_components=3, max_iter=4, eta=1e-100, algorithm="mgs",
                        random_state=0),
    lambda: CompoundLDA(n_components=3, max_iter=4, eta=1e-100, algorithm="vem",
                        random_state=0),
], ids=["LDAGibbs", "AGS", "MGS", "VEM"])
def test_float32_topics_stay_positive_below_float32s_range(make):
    """A topic-word prior below float32's smallest positive number (priors
    go down to 1e-100) would round to 0 in float32 topics: a topic without
    tokens would be a row of zeros, and its probabilities 0 / 0. Such
    entries are kept at that smallest number, and the model's answers stay
    finite (found by the fuzz worker: one document, one word, two topics)."""
    X = np.array([[3, 0, 0, 1], [0, 2, 0, 0]], dtype=np.float32)
    est = make()
    kw = {"groups": [0, 1]} if isinstance(est, CompoundLDA) else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (VEM's convergence on four iterations)
        est.fit(X, **kw)
    tiny = np.finfo(np.float32).smallest_subnormal
    assert est.components_.dtype == np.float32
    assert est.components_.min() == tiny  # word 2 has no token: only the prior
    topics = est.components_ / est.components_.sum(axis=1, keepdims=True)
    assert np.isfinite(topics).all()
    assert np.isfinite(est.transform(X, **kw)).all()
    assert np.isfinite(est.perplexity(X, **kw))


def test_non_integer_input_is_rounded_with_warning(corpus):
    rng = np.random.default_rng(0)
    X = corpus + rng.uniform(-0.3, 0.3, size=corpus.shape) * (corpus > 0)
    params = dict(n_components=4, max_iter=20, random_state=0, **PRIORS)
    with pytest.warns(UserWarning, match="rounded"):
        lda = LDAGibbs(**params).fit(X)
    reference = LDAGibbs(**params).fit(np.rint(X))
    assert_array_equal(lda.components_, reference.components_)
    with pytest.warns(UserWarning, match="rounded"):
        theta = lda.transform(X)
    assert_array_equal(theta, lda.transform(np.rint(X)))


def test_rounding_warning_points_at_caller(corpus):
    X = corpus + 0.25
    lda = LDAGibbs(n_components=2, max_iter=5, random_state=0)
    with pytest.warns(UserWarning, match="rounded") as record:
        lda.fit(X)
    assert record[0].filename == __file__
    with pytest.warns(UserWarning, match="rounded") as record:
        lda.transform(X)
    assert record[0].filename == __file__


# ------------------------------------------------------------- errors
def test_negative_values_raise(corpus):
    X = corpus.astype(float)
    X[3, 5] = -1
    with pytest.raises(ValueError, match="Negative values"):
        LDAGibbs(max_iter=5).fit(X)
    with pytest.raises(ValueError, match="Negative values"):
        LDAGibbs(max_iter=5).fit(sp.csr_matrix(X))


def test_negative_values_raise_in_inference(fitted, corpus):
    X = corpus[:5].astype(float)
    X[0, 0] = -2
    for method in ("transform", "score", "perplexity"):
        with pytest.raises(ValueError, match=f"Negative values.*LDAGibbs.{method}"):
            getattr(fitted, method)(X)


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("sparse", [False, True])
def test_non_finite_values_raise(corpus, bad, sparse):
    X = corpus.astype(float)
    X[1, 1] = bad
    if sparse:
        X = sp.csr_matrix(X)
    with pytest.raises(ValueError):
        LDAGibbs(max_iter=5).fit(X)


@pytest.mark.parametrize("X", [np.zeros((4, 6)), sp.csr_matrix((4, 6))])
def test_corpus_without_tokens_raises(X):
    with pytest.raises(ValueError, match="no tokens"):
        LDAGibbs(max_iter=5).fit(X)


def test_tfidf_like_input_is_refused():
    # Rounding erases most of the mass of TF-IDF weights or normalized rows:
    # a clear error instead of topics fitted on what is left.
    from sklearn.feature_extraction.text import TfidfVectorizer

    rng = np.random.default_rng(0)
    vocab = [f"word{i}" for i in range(300)]
    texts = [" ".join(rng.choice(vocab, size=60)) for _ in range(40)]
    for X in (np.full((4, 6), 0.2), TfidfVectorizer().fit_transform(texts)):
        with pytest.raises(ValueError, match="does not look like word counts"):
            LDAGibbs(max_iter=5).fit(X)
    # Moderately non-integer input keeps the rounding warning.
    with pytest.warns(UserWarning, match="rounded"):
        LDAGibbs(n_components=2, max_iter=5).fit(np.full((4, 6), 1.3))


@pytest.mark.parametrize("method", ["transform", "score", "perplexity"])
def test_wrong_number_of_features_raises(fitted, corpus, method):
    with pytest.raises(ValueError, match="features"):
        getattr(fitted, method)(corpus[:, :-1])
    with pytest.raises(ValueError, match="features"):
        getattr(fitted, method)(np.hstack([corpus, corpus[:, :1]]))


def test_counts_beyond_int32_raise_in_inference(fitted):
    # Counts are int32 in the kernels: 2**31 - 1 is the largest allowed.
    X = np.zeros((1, V))
    X[0, 3] = 2**31 - 1
    assert np.isfinite(fitted.transform(X)).all()
    X[0, 3] = 2**31
    for method in ("transform", "score", "perplexity"):
        with pytest.raises(ValueError, match="larger than 2147483647"):
            getattr(fitted, method)(X)


@pytest.mark.parametrize("burn_in, max_iter", [(10, 10), (11, 10), (None, 1)])
def test_burn_in_must_be_below_max_iter(corpus, burn_in, max_iter):
    # burn_in=None means max_iter // 2, which is 0 < 1 for max_iter=1: fine.
    lda = LDAGibbs(n_components=2, burn_in=burn_in, max_iter=max_iter)
    if burn_in is None:
        lda.fit(corpus)
        assert lda.burn_in_ == 0
    else:
        with pytest.raises(ValueError, match="burn_in"):
            lda.fit(corpus)


@pytest.mark.parametrize(
    "params",
    [
        {"n_components": 0},
        {"n_components": 2.5},
        {"doc_topic_prior": -1},
        {"doc_topic_prior": 0},
        {"topic_word_prior": -0.1},
        {"thin": 0},
        {"max_iter": 0},
        {"burn_in": -1},
        {"max_doc_update_iter": 0},
        {"mean_change_tol": -1e-3},
    ],
)
def test_invalid_params_raise(corpus, params):
    with pytest.raises(ValueError):
        LDAGibbs(**params).fit(corpus)


@pytest.mark.parametrize("method", ["transform", "score", "perplexity"])
def test_not_fitted_raises(corpus, method):
    with pytest.raises(NotFittedError):
        getattr(LDAGibbs(), method)(corpus)


# --------------------------------------------------- score/perplexity
def test_perplexity_is_exp_of_score_per_token(fitted, held_out):
    score = fitted.score(held_out)
    assert np.isfinite(score) and score < 0
    # Every token is scored once (each half under the other's theta).
    expected = np.exp(-score / held_out.sum())
    assert_allclose(fitted.perplexity(held_out), expected, rtol=1e-12)


def test_score_sample_weight(fitted, held_out):
    score = fitted.score(held_out)
    n = held_out.shape[0]
    # Weighted sums use a dot product, unweighted a plain sum: rounding only.
    assert_allclose(fitted.score(held_out, sample_weight=np.ones(n)), score, rtol=1e-12)
    assert_allclose(fitted.score(held_out, sample_weight=np.full(n, 2.0)), 2 * score,
                    rtol=1e-12)
    # Weights act per document: zero weight on the second half of the
    # documents leaves the score of the first half.
    w = np.r_[np.ones(n // 2), np.zeros(n - n // 2)]
    assert_allclose(fitted.score(held_out, sample_weight=w),
                    fitted.score(held_out[: n // 2]), rtol=1e-12)


def test_score_of_documents_without_tokens(fitted):
    assert fitted.score(np.zeros((3, V))) == 0.0
    with pytest.raises(ValueError, match="no tokens"):
        fitted.perplexity(np.zeros((3, V)))

# Strongly asymmetric: topic 3 gets 60 times the prior mass of topic 0.
ASYMMETRIC_PRIOR = np.array([0.05, 0.2, 0.75, 3.0])


@pytest.fixture(scope="module")
def fitted_asymmetric(corpus):
    return LDAGibbs(n_components=4, doc_topic_prior=ASYMMETRIC_PRIOR,
                    topic_word_prior=0.1, max_iter=60, random_state=0).fit(corpus)


def test_transform_with_asymmetric_prior_matches_reference(fitted_asymmetric, held_out):
    model = fitted_asymmetric
    assert_array_equal(model.doc_topic_prior_, ASYMMETRIC_PRIOR)
    phi = model.components_ / model.components_.sum(axis=1, keepdims=True)
    # Short documents (every 8th token, 10 tokens), where the prior matters.
    X = np.vstack([alternate_halves(alternate_halves(alternate_halves(x)[0])[0])[0]
                   for x in held_out[:30]])
    theta = model.transform(X)
    expected = np.vstack([
        fold_in_reference(x, phi.T, ASYMMETRIC_PRIOR, model.max_doc_update_iter,
                          model.mean_change_tol)
        for x in X
    ])
    assert_allclose(theta, expected, rtol=1e-10, atol=1e-12)
    # The asymmetry matters: folding in under the symmetric prior of the
    # same total mass moves theta by far more than the tolerance above.
    symmetric = np.vstack([
        fold_in_reference(x, phi.T, np.full(4, ASYMMETRIC_PRIOR.mean()),
                          model.max_doc_update_iter, model.mean_change_tol)
        for x in X
    ])
    assert np.abs(symmetric - expected).max() > 0.05
    # An empty document gets the (asymmetric) prior mean.
    assert_allclose(model.transform(np.zeros((1, V)))[0],
                    ASYMMETRIC_PRIOR / ASYMMETRIC_PRIOR.sum(), rtol=1e-12)


def test_doc_topic_is_smoothed_by_the_asymmetric_prior(fitted_asymmetric, corpus):
    """doc_topic_ averages (n_dk + alpha_k) / (n_d + sum(alpha)) over the kept
    samples: (n_d + sum(alpha)) doc_topic_[d] - alpha is the average topic
    count of document d, and these add up to components_.sum(1) - V eta."""
    model = fitted_asymmetric
    n_d = corpus.sum(axis=1)
    counts = ((n_d + ASYMMETRIC_PRIOR.sum())[:, None] * model.doc_topic_
              - ASYMMETRIC_PRIOR)
    assert counts.min() > -1e-9
    assert_allclose(counts.sum(axis=1), n_d, rtol=1e-10)
    sizes = model.components_.sum(axis=1) - V * model.topic_word_prior_
    assert_allclose(counts.sum(axis=0), sizes, rtol=1e-10)


def test_trace_log_likelihood_matches_model(corpus):
    """trace_["log_likelihood"] is the joint log p(w, z) of the state at each
    evaluation: a Dirichlet-multinomial (token sequence) per topic over
    words and per document over topics. With one kept sample, at the last
    sweep, components_ - eta and doc_topic_ give that state's counts."""
    model = LDAGibbs(n_components=4, doc_topic_prior=ASYMMETRIC_PRIOR,
                     topic_word_prior=0.1, max_iter=30, burn_in=29, thin=1,
                     random_state=0).fit(corpus)
    nwk = model.components_ - 0.1
    ndk = ((corpus.sum(axis=1) + ASYMMETRIC_PRIOR.sum())[:, None] * model.doc_topic_
           - ASYMMETRIC_PRIOR)
    assert_allclose(nwk, np.rint(nwk), atol=1e-8)
    assert_allclose(ndk, np.rint(ndk), atol=1e-8)

    def log_dm(counts, prior):  # log p of a sequence with these counts
        prior = np.broadcast_to(prior, counts.shape)
        return float((gammaln(prior.sum(1)) - gammaln(counts.sum(1) + prior.sum(1))).sum()
                     + (gammaln(counts + prior) - gammaln(prior)).sum())

    expected = log_dm(np.rint(nwk), 0.1) + log_dm(np.rint(ndk), ASYMMETRIC_PRIOR)
    assert_allclose(model.trace_["log_likelihood"][-1], expected, rtol=1e-10)


@pytest.mark.parametrize("asymmetric", [False, True])
def test_score_matches_numpy_reference(fitted, fitted_asymmetric, held_out, asymmetric):
    """score and perplexity against an independent NumPy document completion:
    the alternate split of the class Notes, the fold-in fixed point of
    ``_sampling.fold_in``'s docstring and the log-likelihood of each half."""
    model = fitted_asymmetric if asymmetric else fitted
    alpha = np.broadcast_to(np.asarray(model.doc_topic_prior_, dtype=float), (4,))
    phi = model.components_ / model.components_.sum(axis=1, keepdims=True)
    X = held_out[:40].copy()
    X[3] = 0  # an empty document scores 0
    X[5] = 0
    X[5, 7] = 1  # one token: it is scored under the prior mean
    per_doc = score_reference(X, phi.T, alpha, model.max_doc_update_iter,
                              model.mean_change_tol)
    assert per_doc[3] == 0.0
    # Same computation in another summation order: rounding-level agreement.
    assert_allclose(model.score(X), per_doc.sum(), rtol=1e-10)
    assert_allclose(model.perplexity(X), np.exp(-per_doc.sum() / X.sum()), rtol=1e-10)



def test_held_out_score_prefers_the_right_model(fitted, corpus, held_out):
    params = dict(max_iter=300, random_state=0, **PRIORS)
    one_topic = LDAGibbs(n_components=1, **params).fit(corpus)
    # Same generator, but the vocabulary is shuffled: wrong topics.
    perm = np.random.default_rng(5).permutation(V)
    other = LDAGibbs(n_components=4, **params).fit(corpus[:, perm])
    good = fitted.score(held_out)
    # Measured on 8000 held-out tokens: K=4 -2.58e4 nats, K=1 -2.95e4,
    # other corpus -2.92e4; the margins are > 3000 nats.
    assert good > one_topic.score(held_out) + 1000
    assert good > other.score(held_out) + 1000


def test_perplexity_sanity(fitted, corpus, held_out, beta):
    perplexity = fitted.perplexity(held_out)
    one_topic = LDAGibbs(n_components=1, max_iter=50, random_state=0,
                         **PRIORS).fit(corpus)
    # A uniform guess over the vocabulary has perplexity V = 40, K=1 (the
    # corpus-wide word frequencies) measured 39.8; the K=4 model 25.1.
    assert np.isfinite(perplexity)
    assert perplexity < V
    assert perplexity < one_topic.perplexity(held_out) - 5
    # The same completion estimator with the true topics plugged in gives
    # 25.02 (measured): the fitted topics are within 1% of the oracle.
    oracle = pickle.loads(pickle.dumps(fitted))
    oracle.components_ = beta.copy()
    assert perplexity < 1.03 * oracle.perplexity(held_out)


def test_perplexity_does_not_reset_fitted_features(corpus):
    columns = [f"w{i}" for i in range(V)]
    df = pd.DataFrame(corpus, columns=columns)
    lda = LDAGibbs(n_components=2, max_iter=10, random_state=0).fit(df)
    lda.perplexity(df.iloc[:50])
    assert lda.n_features_in_ == V
    assert_array_equal(lda.feature_names_in_, columns)
    # sklearn's LatentDirichletAllocation.perplexity re-validates with
    # reset=True; here a narrower matrix is rejected instead of refitting
    # the input checks.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "does not have valid feature names"
        with pytest.raises(ValueError, match="features"):
            lda.perplexity(corpus[:, :10])
    assert lda.n_features_in_ == V
    assert_array_equal(lda.feature_names_in_, columns)


# ------------------------------------------------------ feature names
def test_feature_names_and_pandas_output(corpus):
    columns = [f"word_{i}" for i in range(V)]
    df = pd.DataFrame(corpus, columns=columns)
    lda = LDAGibbs(n_components=3, max_iter=10, random_state=0).fit(df)
    assert_array_equal(lda.feature_names_in_, columns)
    names = lda.get_feature_names_out()
    assert_array_equal(names, ["ldagibbs0", "ldagibbs1", "ldagibbs2"])

    lda.set_output(transform="pandas")
    out = lda.transform(df)
    assert isinstance(out, pd.DataFrame)
    assert list(out.columns) == list(names)
    assert_array_equal(out.index, df.index)
    out = LDAGibbs(n_components=3, max_iter=10, random_state=0).set_output(
        transform="pandas").fit_transform(df)
    assert isinstance(out, pd.DataFrame)
    assert list(out.columns) == list(names)


def test_no_feature_names_for_ndarray(corpus):
    lda = LDAGibbs(n_components=2, max_iter=5, random_state=0).fit(corpus)
    assert not hasattr(lda, "feature_names_in_")
    assert lda.n_features_in_ == V


# -------------------------------------------------------- pipelines
def themed_texts(n=60, seed=0):
    rng = np.random.default_rng(seed)
    themes = [
        ["apple", "banana", "cherry", "grape", "mango", "peach"],
        ["car", "truck", "engine", "wheel", "road", "brake"],
        ["piano", "guitar", "violin", "drum", "flute", "cello"],
    ]
    return [" ".join(rng.choice(themes[i % 3], size=8)) for i in range(n)]


def _check_text_pipeline():
    texts = themed_texts()
    pipe = make_pipeline(
        CountVectorizer(), LDAGibbs(n_components=3, max_iter=50, random_state=0)
    )
    theta = pipe.fit_transform(texts)
    assert theta.shape == (60, 3)
    assert_allclose(theta.sum(axis=1), 1.0, atol=1e-12)
    score = pipe.score(texts)
    assert np.isfinite(score) and score < 0
    return score


def test_pipeline_on_raw_texts():
    _check_text_pipeline()


def test_pipeline_score_with_metadata_routing():
    plain = _check_text_pipeline()
    with sklearn.config_context(enable_metadata_routing=True):
        # Pipeline.score routes sample_weight to the last step; it needs a
        # score(..., sample_weight=None) signature to work here at all.
        assert _check_text_pipeline() == plain

        texts = themed_texts()
        pipe = make_pipeline(
            CountVectorizer(),
            LDAGibbs(n_components=3, max_iter=50, random_state=0).set_score_request(
                sample_weight=True
            ),
        ).fit(texts)
        assert_allclose(pipe.score(texts, sample_weight=np.full(60, 2.0)), 2 * plain,
                        rtol=1e-12)


# --------------------------------------------------- model selection
def test_grid_search_picks_planted_number_of_topics(corpus):
    search = GridSearchCV(
        LDAGibbs(max_iter=100, random_state=0, **PRIORS),
        {"n_components": [1, 4]},
        cv=3,
    ).fit(corpus)
    scores = search.cv_results_["mean_test_score"]
    assert np.all(np.isfinite(scores))
    # Measured mean held-out scores (100 docs per fold): K=1 -2.95e4,
    # K=4 -2.59e4.
    assert search.best_params_ == {"n_components": 4}


# ------------------------------------------------------------ pickle
def test_pickle_round_trip(fitted, held_out):
    clone = pickle.loads(pickle.dumps(fitted))
    assert_array_equal(clone.components_, fitted.components_)
    assert_array_equal(clone.transform(held_out), fitted.transform(held_out))
    assert clone.score(held_out) == fitted.score(held_out)

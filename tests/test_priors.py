"""Hyperparameter learning (Gibbs-EM, Minka fixed points, alpha sampling) and MGS recovery."""

import math
import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_array_equal
from scipy import integrate, optimize
from scipy.special import gammaln

from sklearn_clda import CompoundLDA, LDAGibbs, load_model, save_model
from sklearn_clda._base import _FitRun
from sklearn_clda._hyper import (
    MAX_CONCENTRATION,
    MIN_CONCENTRATION,
    count_histogram,
    group_topic_histogram,
    sample_alpha,
    topic_histogram,
    update_asymmetric,
    update_concentration,
    update_symmetric,
)
from sklearn_clda.datasets import make_compound_corpus
from sklearn_clda.metrics import align_topics


# ------------------------------------------------ fixed points vs direct maxima
def _dirmult_loglik(counts, alpha):
    """sum over rows of log DirMult(row | alpha) without the multinomial term."""
    alpha = np.broadcast_to(alpha, counts.shape)
    a0 = alpha.sum(axis=1)
    return float(
        (gammaln(a0) - gammaln(counts.sum(axis=1) + a0)).sum()
        + (gammaln(counts + alpha) - gammaln(alpha)).sum()
    )


def _random_counts(seed, rows=40, cols=12, alpha=0.4):
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.full(cols, alpha), size=rows)
    n = rng.integers(5, 60, size=rows)
    return np.array([rng.multinomial(ni, pi) for ni, pi in zip(n, p)])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_update_symmetric_reaches_the_maximum(seed):
    counts = _random_counts(seed)
    dim = counts.shape[1]
    value = update_symmetric([count_histogram(counts)],
                             [count_histogram(counts.sum(axis=1))], dim, 1.0)
    best = optimize.minimize_scalar(
        lambda la: -_dirmult_loglik(counts, np.exp(la)), bounds=(-8, 4), method="bounded",
        options={"xatol": 1e-10},
    )
    assert value == pytest.approx(np.exp(best.x), rel=1e-4)


def test_update_symmetric_sums_over_samples():
    # Two samples = the M-step of the stacked rows.
    a, b = _random_counts(0), _random_counts(1)
    two = update_symmetric([count_histogram(a), count_histogram(b)],
                           [count_histogram(a.sum(1)), count_histogram(b.sum(1))],
                           a.shape[1], 0.5)
    stacked = np.vstack([a, b])
    one = update_symmetric([count_histogram(stacked)],
                           [count_histogram(stacked.sum(1))], a.shape[1], 0.5)
    assert two == pytest.approx(one, rel=1e-9)


def test_update_asymmetric_reaches_the_maximum():
    rng = np.random.default_rng(3)
    truth = np.array([0.1, 0.3, 0.8, 2.0])
    theta = rng.dirichlet(truth, size=400)
    counts = np.array([rng.multinomial(30, t) for t in theta])
    alpha = update_asymmetric([topic_histogram(counts)],
                              [count_histogram(counts.sum(1))], np.full(4, 0.5))
    best = optimize.minimize(lambda la: -_dirmult_loglik(counts, np.exp(la)),
                             np.zeros(4), method="Nelder-Mead",
                             options={"xatol": 1e-9, "fatol": 1e-9, "maxiter": 20000})
    np.testing.assert_allclose(alpha, np.exp(best.x), rtol=1e-3)
    # And the estimate is near the generating values (400 documents).
    np.testing.assert_allclose(alpha, truth, rtol=0.3)


def test_update_concentration_reaches_the_maximum():
    rng = np.random.default_rng(4)
    J, K = 2, 4
    pi = rng.dirichlet(np.ones(K), size=J)
    doc_group = np.repeat(np.arange(J), 150)
    theta = np.array([rng.dirichlet(1.3 * pi[j]) for j in doc_group])
    ndk = np.array([rng.multinomial(25, t) for t in theta])

    def loglik(gamma):
        return sum(_dirmult_loglik(ndk[doc_group == j], gamma * pi[j]) for j in range(J))

    gamma = update_concentration(
        [(*group_topic_histogram(ndk, doc_group, J), pi)],
        [count_histogram(ndk.sum(1))], 1.0,
    )
    best = optimize.minimize_scalar(lambda lg: -loglik(np.exp(lg)), bounds=(-5, 5),
                                    method="bounded", options={"xatol": 1e-10})
    assert gamma == pytest.approx(np.exp(best.x), rel=1e-4)
    assert gamma == pytest.approx(1.3, rel=0.25)


def test_count_histogram_lists_positive_values_only():
    values, mult = count_histogram(np.array([[0, 2, 5], [2, 0, 0]]))
    assert values.tolist() == [2, 5] and mult.tolist() == [2, 1]


def test_updates_from_a_single_document_raise_its_likelihood():
    # One document is data too: each M-step from one row increases that
    # row's Dirichlet-multinomial likelihood.
    row = np.array([[6, 0, 1, 3]])
    hist, total = count_histogram(row), count_histogram(row.sum(axis=1))
    sym = update_symmetric([hist], [total], 4, 5.0)
    assert _dirmult_loglik(row, sym) > _dirmult_loglik(row, 5.0) + 0.1
    asym = update_asymmetric([topic_histogram(row)], [total], np.full(4, 5.0))
    assert _dirmult_loglik(row, asym) > _dirmult_loglik(row, 5.0) + 0.1
    pi = np.full((1, 4), 0.25)
    gamma = update_concentration([(*group_topic_histogram(row, [0], 1), pi)], [total], 20.0)
    assert _dirmult_loglik(row, gamma * pi) > _dirmult_loglik(row, 20.0 * pi) + 0.1


def test_update_asymmetric_keeps_a_topic_without_tokens_positive():
    counts = _random_counts(0, cols=4)
    counts[:, -1] = 0  # the last topic has no tokens
    alpha = update_asymmetric([topic_histogram(counts)],
                              [count_histogram(counts.sum(1))], np.full(4, 0.5))
    assert alpha.shape == (4,) and alpha[-1] == 1e-10 and np.all(alpha[:3] > 1e-3)


def test_sample_alpha_steps_compose_and_count_acceptances():
    # n_steps Metropolis steps are n_steps calls of one step (each draws one
    # normal and one uniform), and n_accepted counts the moves.
    pi = np.random.default_rng(1).dirichlet(np.ones(3), size=2)
    gen_many, gen_one = np.random.default_rng(9), np.random.default_rng(9)
    alpha, moves = 1.0, 0
    for _ in range(40):
        new, accepted = sample_alpha(pi, alpha, gen_one, n_steps=1)
        assert accepted == int(new != alpha)
        alpha, moves = new, moves + accepted
    assert 5 < moves < 40
    assert sample_alpha(pi, 1.0, gen_many, n_steps=40) == (alpha, moves)


# Alpha sampling is checked like the Geweke tests (tests/test_geweke.py):
# a chain's mean against the exact value by quadrature, with the Monte
# Carlo error of the mean from 50 batch means, |z| < 4 for a correct
# sampler and some |z| > 8 for a deliberately wrong one.
Z_MAX, Z_POWER = 4.0, 8.0


def _batch_means_z(draws, exact, n_batches=50):
    """(mean of the chain - exact) / its batch-means standard error."""
    n = len(draws) - len(draws) % n_batches
    batches = draws[:n].reshape(n_batches, -1).mean(axis=1)
    return float((batches.mean() - exact) / math.sqrt(batches.var(ddof=1) / n_batches))


def _quad_moments(log_density, upper=60.0):
    """E[alpha] and E[log alpha] under an unnormalized log density on (0, upper)."""
    def integral(f):
        return integrate.quad(lambda a: f(a) * np.exp(log_density(a)), 0, upper,
                              limit=200)[0]
    z = integral(lambda a: 1.0)
    return integral(lambda a: a) / z, integral(np.log) / z


_ALPHA_PI = np.random.default_rng(5).dirichlet(np.full(3, 0.7), size=4)


def _alpha_chain_z(shape, n_draws=20_000):
    """z-statistics of sample_alpha's chain given _ALPHA_PI (told the prior
    Gamma(shape, 1)) against the exact p(alpha | pi) under Gamma(1, 1)."""
    J, K = _ALPHA_PI.shape
    log_pi = np.log(_ALPHA_PI).sum()
    exact = _quad_moments(
        lambda a: J * (gammaln(K * a) - K * gammaln(a)) + (a - 1) * log_pi - a
    )
    gen = np.random.default_rng(0)
    alpha, draws = 1.0, np.empty(n_draws)
    for t in range(n_draws):
        alpha, _ = sample_alpha(_ALPHA_PI, alpha, gen, shape=shape, n_steps=5)
        draws[t] = alpha
    draws = draws[500:]
    return {"alpha": _batch_means_z(draws, exact[0]),
            "log_alpha": _batch_means_z(np.log(draws), exact[1])}


def test_sample_alpha_matches_exact_posterior():
    # pi fixed: p(alpha | pi) ∝ Gamma(1, 1) prod_j Dir(pi_j; alpha), by
    # quadrature. Observed z: +1.31 (alpha), +1.63 (log alpha). Dropping
    # the Jacobian of the log-alpha random walk gives -31.8 and -30.2.
    zs = _alpha_chain_z(shape=1.0)
    assert max(abs(z) for z in zs.values()) < Z_MAX, zs


def test_sample_alpha_check_detects_missing_jacobian():
    # Power check of the test above: told a Gamma(0, 1) prior, sample_alpha
    # targets p(alpha | pi) / alpha, which is exactly the chain a random
    # walk on log alpha without the Jacobian would sample. Observed z -31.8.
    zs = _alpha_chain_z(shape=0.0)
    assert max(abs(z) for z in zs.values()) > Z_POWER, zs


def test_estimator_alpha_step_matches_exact_posterior():
    """CompoundLDA's per-sweep step with learn_priors="alpha": pi_j ~
    Dir(alpha + s_j), then alpha | pi by sample_alpha (``_after_sweep``).

    With the table counts s held fixed this Gibbs chain targets p(alpha,
    pi | s), whose alpha marginal is one-dimensional:

        p(alpha | s) ∝ e^-alpha prod_j Gamma(K alpha) / Gamma(K alpha + s_j.)
                                       prod_k Gamma(alpha + s_jk) / Gamma(alpha)

    Observed z: +0.22 and -0.21. Sampling alpha against a uniform pi
    instead of the drawn one gives +135 and +272.
    """
    s = np.array([[6, 0, 1], [0, 3, 4], [2, 2, 0]])
    J, K = s.shape
    exact = _quad_moments(
        lambda a: -a + J * (gammaln(K * a) - K * gammaln(a))
        + gammaln(a + s).sum() - gammaln(K * a + s.sum(axis=1)).sum()
    )
    est = CompoundLDA(K, alpha=1.0, learn_priors=["alpha"])
    run = _FitRun(burn_in=0, learned=frozenset({"alpha"}), update_sweeps=frozenset())
    est._start_run(run, 5, J)
    rng = np.random.default_rng(3)
    draws = np.empty(10_000)
    for t in range(draws.shape[0]):
        est._after_sweep(run, t + 1, s, rng, None)
        draws[t] = run.alpha
    draws = draws[200:]
    zs = {"alpha": _batch_means_z(draws, exact[0]),
          "log_alpha": _batch_means_z(np.log(draws), exact[1])}
    assert max(abs(z) for z in zs.values()) < Z_MAX, zs


# ------------------------------------------------ count histograms per collection
def _dense_group_topic_histogram(ndk, doc_group, n_groups):
    """(j * K + k, n, #docs of j with n_jdk = n) from a full (J, K, n_max + 1) table."""
    J, K = n_groups, ndk.shape[1]
    table = np.zeros((J, K, int(ndk.max(initial=0)) + 1), dtype=np.int64)
    np.add.at(table, (np.asarray(doc_group)[:, None], np.arange(K), ndk), 1)
    table[:, :, 0] = 0
    j, k, n = np.nonzero(table)
    return j * K + k, n, table[j, k, n]


@pytest.mark.parametrize("n_docs, n_groups", [(300, 3), (300, 300), (50, 400), (0, 5)])
def test_group_topic_histogram_matches_dense_table(n_docs, n_groups):
    # Few collections (the dense path) and one or more per document (the
    # sorted path) give the same histogram, in (j, k, n) order.
    rng = np.random.default_rng(n_groups)
    K = 7
    ndk = rng.poisson(rng.gamma(0.5, 8.0, size=(n_docs, K))).astype(np.int32)
    doc_group = rng.integers(0, n_groups, size=n_docs)
    got = group_topic_histogram(ndk, doc_group, n_groups)
    expected = _dense_group_topic_histogram(ndk, doc_group, n_groups)
    assert n_docs == 0 or len(expected[0]) > 50
    for g, e in zip(got, expected):
        assert g.dtype == np.int64
        np.testing.assert_array_equal(g, e)


def test_group_topic_histogram_with_one_collection_per_document_stays_small():
    # 2000 collections, K=100 and a count of 1000: a (collection, topic,
    # count) table would hold 2e8 cells (1.6 GB); the histogram must cost
    # O(nonzero counts + collections * K).
    rng = np.random.default_rng(0)
    n_docs, K = 2000, 100
    ndk = rng.poisson(0.3, size=(n_docs, K)).astype(np.int32)
    ndk[0, 0] = 1000
    tracemalloc.start()
    try:
        jk, n, mult = group_topic_histogram(ndk, np.arange(n_docs), n_docs)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert mult.sum() == np.count_nonzero(ndk) and n.max() == 1000
    assert peak < 40 * ndk.size + 2**20, f"peak {peak / 2**20:.0f} MiB"


# ------------------------------------------------------- Gibbs-EM in the estimators
@pytest.mark.parametrize("seed", range(5))
def test_gibbs_em_recovers_eta_and_gamma(seed):
    # The paper's Gibbs-EM study: alpha=1, gamma=.8, eta=.5, J=2, K=3, V=40,
    # 100 documents of 200 words per collection. Started far away, at
    # (eta, gamma) = (1, 3) (the paper starts at (1, 1), which is within
    # the tolerance of gamma below: an update that does nothing would pass).
    # Observed on seeds 0-4: eta 0.405-0.583, gamma 0.714-0.894.
    c = make_compound_corpus(3, 40, 2, 100, 200, alpha=1.0, gamma=0.8, eta=0.5,
                             random_state=seed)
    m = CompoundLDA(3, alpha=1.0, gamma=3.0, eta=1.0, learn_priors=True, max_iter=600,
                    burn_in=500, evaluate_every=50, random_state=seed)
    m.fit(c.data, groups=c.groups)
    assert m.eta_ == pytest.approx(0.5, rel=0.25)
    assert m.gamma_ == pytest.approx(0.8, rel=0.25)
    # The path is in the trace: at the start until the first M-step (sweep
    # 260, in the second half of burn-in), then moved, and frozen after
    # burn-in (sweeps 550 and 600).
    it = m.trace_["iteration"]
    assert_array_equal(m.trace_["gamma"][it <= 250], 3.0)
    assert_array_equal(m.trace_["eta"][it <= 250], 1.0)
    assert_array_equal(m.trace_["gamma"][it > 500], m.gamma_)
    assert_array_equal(m.trace_["eta"][it > 500], m.eta_)


def test_learned_priors_stay_in_the_supported_range(tmp_path):
    # Started at the upper bound, the fixed points step just past it; a
    # model must come back from save_model/load_model and its learned
    # values must be valid parameters.
    rng = np.random.default_rng(0)
    X = rng.poisson(0.7, size=(60, 30))
    X[X.sum(1) == 0, 0] = 1
    groups = np.arange(60) % 3
    top = dict(max_iter=40, prior_update_every=5, random_state=0, learn_priors=True)
    clda = CompoundLDA(3, gamma=MAX_CONCENTRATION, eta=MAX_CONCENTRATION, **top)
    lda = LDAGibbs(3, doc_topic_prior=MAX_CONCENTRATION, topic_word_prior=MAX_CONCENTRATION,
                   **top)
    clda.fit(X, groups=groups)
    lda.fit(X)
    learned = [clda.gamma_, clda.eta_, lda.doc_topic_prior_, lda.topic_word_prior_]
    assert all(MIN_CONCENTRATION <= value <= MAX_CONCENTRATION for value in learned)
    for model in (clda, lda):
        save_model(model, tmp_path / "model.npz")
        load_model(tmp_path / "model.npz")


def test_learn_priors_separately_and_validation():
    c = make_compound_corpus(3, 40, 2, 60, 80, alpha=1.0, gamma=0.8, eta=0.5,
                             random_state=0)
    # Each learned prior moves from its start towards the truth, the other
    # stays. Observed over model seeds 0-3: eta 0.46-0.54 (from 1, truth
    # 0.5); gamma 0.70-1.66 (from 3, truth 0.8, with eta held at 1).
    only_eta = CompoundLDA(3, gamma=1.0, eta=1.0, learn_priors="eta", max_iter=100,
                           random_state=0).fit(c.data, groups=c.groups)
    assert only_eta.gamma_ == 1.0 and abs(only_eta.eta_ - 0.5) < 0.25
    only_gamma = CompoundLDA(3, gamma=3.0, eta=1.0, learn_priors=["gamma"], max_iter=100,
                             random_state=0).fit(c.data, groups=c.groups)
    assert only_gamma.eta_ == 1.0 and only_gamma.gamma_ < 2.0
    sampled = CompoundLDA(3, alpha=1.0, learn_priors=["alpha"], max_iter=100,
                          random_state=0).fit(c.data, groups=c.groups)
    assert sampled.alpha_ != 1.0 and np.isfinite(sampled.alpha_)
    with pytest.raises(ValueError, match="unknown name"):
        CompoundLDA(3, learn_priors=["beta"], max_iter=20).fit(c.data, groups=c.groups)
    with pytest.raises(ValueError, match="prior_update_every"):
        CompoundLDA(3, learn_priors=True, max_iter=20, burn_in=4,
                    prior_update_every=10).fit(c.data, groups=c.groups)


def test_sampled_alpha_is_the_mean_of_the_kept_draws():
    c = make_compound_corpus(3, 40, 2, 30, 50, alpha=1.0, gamma=1.0, eta=0.25,
                             random_state=0)
    m = CompoundLDA(3, learn_priors="alpha", max_iter=40, burn_in=20, thin=1,
                    evaluate_every=1, random_state=0).fit(c.data, groups=c.groups)
    # The trace holds the current alpha at every sweep; sweeps 21-40 are kept.
    kept = m.trace_["alpha"][m.trace_["iteration"] > 20]
    assert kept.shape == (20,) and np.ptp(kept) > 0
    assert m.alpha_ == pytest.approx(kept.mean(), rel=1e-12)


def _asymmetric_lda_corpus(seed, alpha, V=30, n_docs=400, length=60):
    rng = np.random.default_rng(seed)
    K = len(alpha)
    beta = np.zeros((K, V))
    for k in range(K):  # well separated topics
        beta[k, k * (V // K):(k + 1) * (V // K)] = 1.0
    beta = 0.95 * beta / beta.sum(1, keepdims=True) + 0.05 / V
    theta = rng.dirichlet(alpha, size=n_docs)
    X = np.array([rng.multinomial(length, t @ beta) for t in theta])
    return sp.csr_matrix(X), beta


def test_lda_gibbs_learns_symmetric_and_asymmetric_doc_topic_prior():
    truth = np.array([0.05, 0.2, 0.6, 1.5])
    X, beta = _asymmetric_lda_corpus(0, truth)
    asym = LDAGibbs(4, doc_topic_prior=np.full(4, 0.25), topic_word_prior=0.1,
                    learn_priors="doc_topic_prior", max_iter=400,
                    random_state=0).fit(X)
    perm, _ = align_topics(beta, asym.components_)
    learned = asym.doc_topic_prior_[perm]
    # The ordering of the topics' prior weights is recovered, and each value
    # within a factor of two (400 documents; Gibbs-EM on a single chain).
    # Chains not stuck in a poor mode learn 1.1-1.7 times the truth here
    # (eight seeds each of this build and the one before it; the tokens of
    # the topics' shared background spread the documents' counts).
    assert np.all(np.diff(learned) > 0)
    assert np.all((learned > truth / 2) & (learned < 2 * truth)), learned / truth
    sym = LDAGibbs(4, doc_topic_prior=1.0, topic_word_prior=1.0, learn_priors=True,
                   max_iter=300, random_state=0).fit(X)
    assert np.ndim(sym.doc_topic_prior_) == 0
    assert sym.doc_topic_prior_ < 1.0 and sym.topic_word_prior_ < 1.0
    assert np.all(sym.trace_["topic_word_prior"] > 0)


# ------------------------------------------------------------------ MGS recovery
@pytest.mark.parametrize("seed", [11, 14, 23])
def test_mgs_recovers_collection_mixtures(seed):
    # Same synthetic study as the AGS recovery test (tests/test_clda.py).
    c = make_compound_corpus(3, 40, 2, 100, 200, alpha=0.1, gamma=1.0, eta=0.25,
                             random_state=seed)
    m = CompoundLDA(3, alpha=0.1, gamma=1.0, eta=0.25, algorithm="mgs", max_iter=1000,
                    random_state=seed).fit(c.data, groups=c.groups)
    perm, _ = align_topics(c.beta, m.components_)
    l1 = np.abs(m.collection_topic_[:, perm] - c.pi).sum(axis=1)
    assert np.all(l1 < 0.1), l1
    assert 0.3 < m.acceptance_rate_ < 0.8
    assert m.step_size_.shape == (2,)
    assert np.all(np.isfinite(m.trace_["acceptance_rate"][1:]))


def test_mgs_step_size_adapted_during_burn_in_only():
    """Kept draws come from one fixed MMALA kernel: the steps adapted during
    burn-in are the final ones however long the chain runs after it."""
    c = make_compound_corpus(3, 40, 2, 30, 50, alpha=1.0, gamma=1.0, eta=0.25,
                             random_state=0)

    def fit(max_iter):
        return CompoundLDA(3, algorithm="mgs", max_iter=max_iter, burn_in=40,
                           random_state=0).fit(c.data, groups=c.groups)

    short, long = fit(41), fit(80)
    assert np.all(short.step_size_ != 0.02)  # adapted from the initial step
    assert_array_equal(long.step_size_, short.step_size_)
    # Not adapting at all keeps the initial step.
    fixed = CompoundLDA(3, algorithm="mgs", adapt_step_size=False, max_iter=41,
                        burn_in=40, random_state=0).fit(c.data, groups=c.groups)
    assert_array_equal(fixed.step_size_, 0.02)

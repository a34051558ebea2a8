"""The estimators with ``sampler="mh"`` and ``"sparse"``: dispatch, settings,
reproducibility, fits."""

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.utils._param_validation import InvalidParameterError
from sklearn.utils.estimator_checks import parametrize_with_checks
from _array_api import run_check

from sklearn_clda import CompoundLDA, LDAGibbs, _base
from sklearn_clda._mh_sweeper import (
    AUTO_DENSE_MAX_COMPONENTS,
    AUTO_MH_MIN_COMPONENTS,
    _MHSweeper,
    auto_sampler,
    sampler_kernel,
    token_weighted_length,
)
from sklearn_clda._sweeper import _GibbsState, _ShardedSweeper
from sklearn_clda.datasets import make_lda_corpus


@pytest.fixture(scope="module")
def corpus():
    X = make_lda_corpus(4, 40, 120, 30, random_state=0).data
    groups = np.arange(X.shape[0]) % 3
    return X, groups


def _sweeper_type(est, X):
    """The sweeper class a fit of ``est`` on ``X`` builds (spied, not run)."""
    seen = []
    original = type(est)._sweeper

    def spy(self, *args):
        sweeper = original(self, *args)
        seen.append(type(sweeper))
        return sweeper

    type(est)._sweeper = spy
    try:
        est.set_params(max_iter=2, burn_in=1).fit(X)
    finally:
        type(est)._sweeper = original
    return seen[0]


def test_auto_keeps_small_k_on_the_dense_kernel(corpus):
    X, _ = corpus
    assert {sampler_kernel("auto", k, X) for k in range(1, 101)} == {"dense"}
    assert sampler_kernel("auto", AUTO_MH_MIN_COMPONENTS, X) == "mh"
    assert sampler_kernel("dense", 10**5, X) == "dense"
    assert sampler_kernel("mh", 1, X) == "mh"
    assert _sweeper_type(LDAGibbs(100, random_state=0), X) is _ShardedSweeper
    assert _sweeper_type(LDAGibbs(AUTO_MH_MIN_COMPONENTS, random_state=0), X) is _MHSweeper
    assert _sweeper_type(LDAGibbs(3, sampler="mh", random_state=0), X) is _MHSweeper
    assert _sweeper_type(LDAGibbs(3, sampler="dense", random_state=0), X) is _ShardedSweeper
    assert _sweeper_type(LDAGibbs(3, sampler="sparse", random_state=0), X) is _MHSweeper


def test_auto_picks_by_k_and_document_length():
    assert AUTO_DENSE_MAX_COMPONENTS == 100
    assert token_weighted_length([10, 30]) == (100 + 900) / 40
    short, long = [10] * 5, [1000, 1000]  # token-weighted lengths 10 and 1000
    assert [auto_sampler(k, short) for k in (100, 101, 19_999, 20_000)] == [
        "dense", "sparse", "sparse", "mh"]
    assert [auto_sampler(k, long) for k in (2_999, 3_000, 20_000)] == ["dense", "sparse", "mh"]
    assert auto_sampler(500, []) == "sparse"  # no tokens: nothing to weigh


def test_sparse_takes_documents_as_long_as_its_lists_allow():
    # At K = 2**20 (the most topics allowed) a list entry has 12 bits for a
    # count: documents of at most 4095 tokens. "sparse" says so before any
    # table is made; "auto" runs "mh" where it would have run "sparse".
    K = 2**20
    X = sp.csr_matrix(np.array([[4096, 0], [3, 4]]))
    with pytest.raises(ValueError, match="at most 4095 tokens; the longest here has 4096"):
        LDAGibbs(K, sampler="sparse").fit(X)
    with pytest.raises(ValueError, match="at most 4095 tokens"):  # where fit asks first
        sampler_kernel("sparse", K, X)
    assert sampler_kernel("sparse", K // 2, X) == "sparse"  # 8191 tokens there
    many_short = np.full(10**6, 10)  # keep the token-weighted length low
    K = 17_000  # 15 bits of topic: documents of at most 131,071 tokens
    assert auto_sampler(K, np.r_[131_071, many_short]) == "sparse"
    assert auto_sampler(K, np.r_[131_072, many_short]) == "mh"


def test_auto_sweepers_follow_the_pick(corpus):
    X, _ = corpus  # documents of 30 tokens: sparse from K = 90 on (and K > 100)
    assert _sweeper_type(LDAGibbs(101, random_state=0), X) is _MHSweeper
    X_long = make_lda_corpus(4, 10, 50, 100, random_state=0).data  # about 100 tokens each
    assert _sweeper_type(LDAGibbs(150, random_state=0), X_long) is _ShardedSweeper
    assert _sweeper_type(LDAGibbs(150, sampler="sparse", random_state=0), X_long) is _MHSweeper
    assert sampler_kernel("auto", 150, sp.csr_matrix(np.full((8, 3), 10))) == "sparse"


def test_auto_at_small_k_gives_the_dense_results_bit_for_bit(corpus):
    X, _ = corpus
    a = LDAGibbs(5, max_iter=20, random_state=0).fit(X)
    b = LDAGibbs(5, sampler="dense", max_iter=20, random_state=0).fit(X)
    c = LDAGibbs(5, sampler="mh", max_iter=20, random_state=0).fit(X)
    d = LDAGibbs(5, sampler="sparse", max_iter=20, random_state=0).fit(X)
    np.testing.assert_array_equal(a.components_, b.components_)
    assert not np.array_equal(a.components_, c.components_)
    assert not np.array_equal(d.components_, c.components_)  # its own kernel


class _StateWithTable(_GibbsState):
    """A state that keeps the word-topic table whatever the sampler."""

    def __init__(self, *args, word_table=True, **kwargs):
        super().__init__(*args, **kwargs)


@pytest.mark.parametrize("n_jobs", [None, 2])
@pytest.mark.parametrize("Est", [LDAGibbs, CompoundLDA])
def test_sparse_fits_keep_no_word_table_and_match_fits_with_one(corpus, monkeypatch, Est,
                                                               n_jobs):
    # The sparse kernel counts each word's topics from its tokens; the
    # kept sums, Gibbs-EM's histograms, the trace's likelihood and bound_
    # count them from z. All of it equals the fit whose state has a table,
    # bit for bit (one thread and the partitioned n_jobs).
    X, groups = corpus
    kw = {"groups": groups} if Est is CompoundLDA else {}
    make = lambda: Est(120, sampler="sparse", max_iter=10, burn_in=6, thin=2, n_jobs=n_jobs,
                       learn_priors=True, prior_update_every=2, evaluate_every=3,
                       random_state=0)
    states = []
    original = _base._GibbsState

    def spy(*args, **kwargs):
        states.append(original(*args, **kwargs))
        return states[-1]

    monkeypatch.setattr(_base, "_GibbsState", spy)
    a = make().fit(X, **kw)
    assert states[-1].nwk is None and states[-1].nwk_padded is None
    monkeypatch.setattr(_base, "_GibbsState", _StateWithTable)
    b = make().fit(X, **kw)
    for name in ("components_", "doc_topic_", "bound_", "topic_word_prior_"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
    for name, values in a.trace_.items():
        if name != "seconds":
            np.testing.assert_array_equal(values, b.trace_[name], err_msg=name)


def test_only_the_sparse_kernel_drops_the_word_table(corpus, monkeypatch):
    X, _ = corpus
    tables = []
    original = _base._GibbsState

    def spy(*args, **kwargs):
        state = original(*args, **kwargs)
        tables.append(state.nwk is not None)
        return state

    monkeypatch.setattr(_base, "_GibbsState", spy)
    for sampler in ("dense", "mh", "sparse", "auto"):  # auto: sparse at this K
        LDAGibbs(120, sampler=sampler, max_iter=2, burn_in=1, random_state=0).fit(X)
    assert tables == [True, True, False, False]


@pytest.mark.parametrize("Est", [LDAGibbs, CompoundLDA])
@pytest.mark.parametrize("params, match", [
    (dict(sampler="fast"), "sampler"),
    (dict(sampler=None), "sampler"),
    (dict(mh_steps=0), "mh_steps"),
    (dict(mh_steps=1001), "mh_steps"),
    (dict(mh_steps=2.0), "mh_steps"),
])
def test_invalid_sampler_settings_raise(Est, params, match, corpus):
    X, _ = corpus
    with pytest.raises(InvalidParameterError, match=match):
        Est(3, **params).fit(X)


@pytest.mark.parametrize("make", [
    lambda: LDAGibbs(4, sampler="mh", max_iter=30, burn_in=10, random_state=5, mh_steps=3),
    lambda: CompoundLDA(4, sampler="mh", max_iter=30, burn_in=10, random_state=5),
    lambda: CompoundLDA(4, sampler="mh", algorithm="mgs", max_iter=30, burn_in=10, random_state=5),
    lambda: LDAGibbs(4, sampler="sparse", max_iter=30, burn_in=10, random_state=5, mh_steps=3),
    lambda: CompoundLDA(4, sampler="sparse", max_iter=30, burn_in=10, random_state=5),
])
def test_mh_fits_are_seeded_and_continue_bit_for_bit(make, corpus):
    X, groups = corpus
    fit = (lambda est: est.fit(X)) if isinstance(make(), LDAGibbs) else (
        lambda est: est.fit(X, groups=groups))
    a, b = fit(make()), fit(make())
    np.testing.assert_array_equal(a.components_, b.components_)
    np.testing.assert_array_equal(a.doc_topic_, b.doc_topic_)
    other = fit(make().set_params(random_state=6))
    assert not np.array_equal(a.components_, other.components_)
    # warm_start: two fits of 15 sweeps are the chain of one fit of 30
    warm = make().set_params(max_iter=15, warm_start=True)
    fit(warm)
    fit(warm)
    np.testing.assert_array_equal(warm.components_, a.components_)


@pytest.mark.parametrize("sampler", ["mh", "sparse"])
def test_mh_recovers_the_topics_of_a_synthetic_corpus(sampler):
    # The MH chain finds the generating topics as well as the dense one.
    # Single chains sometimes settle in a local mode with two topics merged
    # (match 0.2: dense with seed 4, sparse with seeds 0 and 2, of 0-4), so
    # the best of three chains is compared.
    corpus = make_lda_corpus(5, 60, 300, 60, random_state=1)
    X, true = corpus.data, corpus.beta

    def match(est):
        phi = est.components_ / est.components_.sum(axis=1, keepdims=True)
        # best total variation per true topic
        return np.mean([0.5 * np.abs(phi - t).sum(axis=1).min() for t in true])

    dense = LDAGibbs(5, sampler="dense", max_iter=200, random_state=0).fit(X)
    mh = min((LDAGibbs(5, sampler=sampler, max_iter=200, random_state=seed).fit(X)
              for seed in range(3)), key=match)
    assert match(mh) < 0.2
    assert match(mh) < match(dense) + 0.05


@pytest.mark.parametrize("sampler", ["mh", "sparse"])
def test_mh_gibbs_em_learns_priors_like_dense(corpus, sampler):
    # Gibbs-EM runs on the same state and hooks; the MH chain mixes less per
    # sweep, so it needs a longer burn-in than the dense one for the same
    # estimates (at 200 sweeps it learned eta 0.027 against 0.015, over six
    # seeds each; at 1000, 0.018 against 0.015).
    X, groups = corpus
    kw = dict(max_iter=2000, learn_priors=True, random_state=0)
    dense = CompoundLDA(4, sampler="dense", **kw).fit(X, groups=groups)
    mh = CompoundLDA(4, sampler=sampler, **kw).fit(X, groups=groups)
    assert abs(np.log(mh.eta_ / dense.eta_)) < 0.2
    assert abs(np.log(mh.gamma_ / dense.gamma_)) < 0.2


_ESTIMATORS = [
    LDAGibbs(n_components=3, sampler="mh", max_iter=20, random_state=0),
    CompoundLDA(n_components=3, sampler="mh", max_iter=20, random_state=0),
    LDAGibbs(n_components=3, sampler="sparse", max_iter=20, random_state=0),
    CompoundLDA(n_components=3, sampler="sparse", max_iter=20, random_state=0),
]


@parametrize_with_checks(_ESTIMATORS)
def test_sklearn_compatible_mh_estimator(estimator, check, request):
    run_check(request, estimator, check)

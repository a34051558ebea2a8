"""Several chains: R-hat, the multi-chain ESS, topics lined up and pooled."""

import copy

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.pipeline import make_pipeline
from sklearn.utils._param_validation import InvalidParameterError

from sklearn_clda import CompoundLDA
from sklearn_clda.datasets import make_compound_corpus
from sklearn_clda.inspection import (
    align_chains,
    collection_topic_summary,
    compare_collections,
    effective_sample_size,
    rhat,
)


def ar1(rng, shape, phi):
    """AR(1) chains along axis 1, started from their stationary law."""
    x = np.empty(shape)
    x[:, 0] = rng.standard_normal(shape[:1] + shape[2:]) / np.sqrt(1 - phi**2)
    for t in range(1, shape[1]):
        x[:, t] = phi * x[:, t - 1] + rng.standard_normal(shape[:1] + shape[2:])
    return x


# --- rhat -------------------------------------------------------------------

def test_rhat_is_one_for_chains_of_one_law_and_large_for_chains_apart():
    rng = np.random.default_rng(0)
    same = ar1(rng, (4, 2000, 50), 0.5)
    values = rhat(same)
    assert values.shape == (50,)
    assert np.all(values < 1.01)
    apart = same + 0.5 * np.arange(4)[:, None, None]
    assert np.all(rhat(apart) > 1.05)


def test_rhat_splits_chains_so_one_drifting_chain_is_caught():
    rng = np.random.default_rng(1)
    drift = rng.standard_normal((1, 2000)) + np.linspace(0, 1, 2000)
    assert rhat(drift) > 1.05
    # The chains' halves, not the chains, are compared: two chains that drift
    # alike agree with each other but not with themselves.
    assert rhat(np.concatenate([drift, drift])) > 1.05
    assert rhat(rng.standard_normal((1, 2000))) < 1.01


def test_rhat_catches_chains_that_differ_in_scale_only():
    """The folded draws' R-hat: same centre, one chain three times as wide."""
    rng = np.random.default_rng(2)
    chains = rng.standard_normal((4, 2000))
    chains[0] *= 3.0
    assert rhat(chains) > 1.05
    # The location part alone does not see it.
    from sklearn_clda.inspection._rhat import _basic_rhat, _rank_normalize, _split

    assert _basic_rhat(_rank_normalize(_split(chains))) < 1.01


def test_rhat_depends_on_ranks_only():
    rng = np.random.default_rng(3)
    chains = ar1(rng, (3, 400, 2), 0.9) + np.arange(3)[:, None, None] * 0.3
    assert_allclose(rhat(np.exp(chains)), rhat(chains), rtol=1e-12)


@pytest.mark.filterwarnings("error")
def test_rhat_of_draws_near_the_float_limits_is_that_of_smaller_ones():
    # R-hat does not change with a scale by a power of 2 (exact, so that no
    # ties change): no overflow (and no warning) at 1e308.
    draws = np.array([[1e308, -1e308, 1e308, 0.0, 5e307, 1.0],
                      [2.0, -3.0, 1e307, -1e308, 4.0, 0.5]])
    assert_allclose(rhat(draws), rhat(draws * 2.0**-900), rtol=1e-12)


def test_rhat_of_constant_and_bad_draws():
    values = rhat(np.stack([np.ones((10, 2)), np.ones((10, 2))]))
    assert np.isnan(values).all()
    with pytest.raises(ValueError, match=r"shape \(n_chains, n_draws, ...\) with at least 4"):
        rhat(np.ones(10))
    with pytest.raises(ValueError, match="at least 4 draws"):
        rhat(np.ones((2, 3)))
    with pytest.raises(ValueError, match="NaN or infinite"):
        rhat([[0.0, 1.0, np.nan, 2.0, 3.0]])
    with pytest.raises(ValueError, match="rhat needs real-valued draws, got an array of "
                                         "dtype <U1"):
        rhat([list("1234"), list("5678")])
    with pytest.raises(ValueError, match="rhat needs real-valued draws"):
        rhat(np.ones((2, 5)) * 1j)


# --- multi-chain ESS ----------------------------------------------------------

@pytest.mark.parametrize("phi", [0.0, 0.6])
def test_multichain_ess_of_agreeing_chains_adds_up(phi):
    rng = np.random.default_rng(4)
    chains = ar1(rng, (4, 4000, 20), phi)
    ess = effective_sample_size(chains, multichain=True)
    expected = 4 * 4000 * (1 - phi) / (1 + phi)
    assert ess.shape == (20,)
    assert abs(np.median(ess) / expected - 1) < 0.1


def test_multichain_ess_counts_disagreeing_chains_as_few():
    rng = np.random.default_rng(5)
    chains = rng.standard_normal((4, 1000)) + 3.0 * np.arange(4)[:, None]
    assert effective_sample_size(chains, multichain=True) < 20
    # Each chain alone looks fine: only the multi-chain estimate sees it.
    assert min(effective_sample_size(chain) for chain in chains) > 600


def test_multichain_ess_of_one_chain_is_close_to_the_one_chain_estimate():
    rng = np.random.default_rng(6)
    chain = ar1(rng, (1, 5000, 10), 0.7)
    assert_allclose(effective_sample_size(chain, multichain=True),
                    effective_sample_size(chain[0]), rtol=0.01)


def test_multichain_ess_needs_chains_of_draws():
    with pytest.raises(ValueError, match=r"\(n_chains, n_draws, ...\) with at least 4"):
        effective_sample_size(np.ones(10), multichain=True)
    with pytest.raises(InvalidParameterError, match="multichain"):
        effective_sample_size(np.ones(10), multichain="yes")


# --- align_chains and pooled summaries ----------------------------------------

@pytest.fixture(scope="module")
def fitted():
    corpus = make_compound_corpus(n_topics=3, n_features=30, n_collections=2,
                                  docs_per_collection=40, doc_length=50, random_state=0)
    clda = CompoundLDA(n_components=3, max_iter=120, thin=2, random_state=0)
    return clda.fit(corpus.data, groups=corpus.groups), corpus


def permuted(clda, order):
    """A copy of a fitted model whose topic k is the model's topic order[k]."""
    other = copy.deepcopy(clda)
    other.components_ = clda.components_[order]
    other.collection_topic_samples_ = clda.collection_topic_samples_[:, :, order]
    other.collection_topic_ = clda.collection_topic_[:, order]
    return other


def test_align_chains_undoes_a_permutation_of_the_topics(fitted):
    clda, _ = fitted
    order = np.array([2, 0, 1])
    chains = align_chains([clda, permuted(clda, order)])
    # Topic k of the first fit is topic argsort(order)[k] of the second.
    assert_array_equal(chains.permutations, [[0, 1, 2], np.argsort(order)])
    assert_allclose(chains.distances, 0.0, atol=1e-12)
    assert_array_equal(chains.draws[1], chains.draws[0])
    assert_array_equal(chains.draws[0], clda.collection_topic_samples_)
    assert chains.unstable.size == 0
    assert_array_equal(chains.collections, clda.groups_)


def test_pooled_summaries_of_copies_equal_the_single_fit(fitted):
    clda, _ = fitted
    other = permuted(clda, np.array([1, 2, 0]))
    one, two = collection_topic_summary(clda), collection_topic_summary([clda, other])
    assert_allclose(two["mean"], one["mean"])
    both = np.concatenate([clda.collection_topic_samples_] * 2)
    assert_allclose(two["lower"].to_numpy().reshape(2, 3), np.quantile(both, 0.05, axis=0))
    assert two.attrs["n_chains"] == 2 and one.attrs["n_chains"] == 1
    assert_allclose(one["rhat"], rhat(clda.collection_topic_samples_[None]).ravel())
    diff_one = compare_collections(clda, 0, 1)
    diff_two = compare_collections((clda, other), 0, 1)
    assert_allclose(diff_two[["mean", "prob_greater"]], diff_one[["mean", "prob_greater"]])


def test_pooled_summaries_read_every_chain(fitted):
    clda, corpus = fitted
    fits = [clda] + [CompoundLDA(n_components=3, max_iter=120, thin=2, random_state=seed)
                     .fit(corpus.data, groups=corpus.groups) for seed in (1, 2)]
    chains = align_chains(fits)
    summary = collection_topic_summary(fits, ci=0.8)
    pooled = chains.draws.reshape(-1, 2, 3)
    assert_allclose(summary["mean"].to_numpy().reshape(2, 3), pooled.mean(axis=0))
    assert_allclose(summary["upper"].to_numpy().reshape(2, 3),
                    np.quantile(pooled, 0.9, axis=0))
    assert_allclose(summary["ess"].to_numpy().reshape(2, 3),
                    effective_sample_size(chains.draws, multichain=True))
    assert_allclose(summary["rhat"].to_numpy().reshape(2, 3), rhat(chains.draws))
    diff = compare_collections(fits, 1, 0)
    d = chains.draws[:, :, 1] - chains.draws[:, :, 0]
    assert_allclose(diff["prob_greater"], (d > 0).mean(axis=(0, 1)))
    assert_allclose(diff["rhat"], rhat(d))


def test_align_chains_takes_pipelines():
    texts = ["apple banana", "banana apple cherry", "dog cat", "cat dog mouse"] * 5
    groups = ["x", "x", "y", "y"] * 5
    pipes = [make_pipeline(CountVectorizer(), CompoundLDA(n_components=2, max_iter=40,
                                                          thin=2, random_state=seed))
             .fit(texts, compoundlda__groups=groups) for seed in (0, 1)]
    assert align_chains(pipes).draws.shape == (2, 10, 2, 2)
    assert len(compare_collections(pipes, "x", "y")) == 2


def test_align_chains_names_what_differs(fitted):
    clda, corpus = fitted
    with pytest.raises(ValueError, match="align_chains needs two fits or more.*got 1"):
        align_chains([clda])
    four = CompoundLDA(n_components=4, max_iter=120, thin=2, random_state=0)
    four.fit(corpus.data, groups=corpus.groups)
    with pytest.raises(ValueError, match="fit 0 has 3 topics, fit 1 has 4"):
        align_chains([clda, four])
    shorter = CompoundLDA(n_components=3, max_iter=100, thin=2, random_state=1)
    shorter.fit(corpus.data, groups=corpus.groups)
    with pytest.raises(ValueError, match="fit 2 does not match fit 0: fit 0 has 30 kept "
                                         "draws of pi, fit 2 has 25"):
        align_chains([clda, clda, shorter])
    relabelled = CompoundLDA(n_components=3, max_iter=120, thin=2, random_state=1)
    relabelled.fit(corpus.data, groups=np.where(corpus.groups == 0, "a", "b"))
    with pytest.raises(ValueError, match="compare_collections needs fits of the same "
                                         "model.*the collections differ"):
        compare_collections([clda, relabelled], 0, 1)
    with pytest.raises(ValueError, match="collection_topic_summary needs at least 4"):
        collection_topic_summary([clda, CompoundLDA(n_components=3, max_iter=2)
                                  .fit(corpus.data, groups=corpus.groups)])
    with pytest.raises(InvalidParameterError, match="max_distance"):
        align_chains([clda, clda], max_distance=2.0)


def test_a_topic_one_chain_lacks_is_unstable(fitted):
    clda, _ = fitted
    other = copy.deepcopy(clda)
    # Fit 1's topic 2 puts its mass on other words than any topic of fit 0.
    other.components_ = clda.components_.copy()
    other.components_[2] = np.roll(clda.components_[2], 7)
    other.collection_topic_samples_ = clda.collection_topic_samples_[::-1]  # another chain
    chains = align_chains([clda, other], max_distance=0.3)
    assert chains.unstable.tolist() == [2]
    assert chains.distances[1, 2] > 0.3 > chains.distances[1, :2].max()
    assert collection_topic_summary([clda, other]).attrs["unstable_topics"] == [2]


def test_the_same_chain_twice_is_refused(fitted):
    """Two fits with the same draws (one model twice, or the same seed) would
    pass for agreeing chains: R-hat near 1 and twice the ESS."""
    clda, corpus = fitted
    twin = CompoundLDA(n_components=3, max_iter=120, thin=2, random_state=0)
    twin.fit(corpus.data, groups=corpus.groups)
    for fits in ([clda, clda], [clda, twin]):
        with pytest.raises(ValueError, match="got the same chain twice: fits 0 and 1 hold the "
                                             "same draws"):
            collection_topic_summary(fits)


def test_rhat_of_no_quantities_is_empty():
    assert rhat(np.zeros((2, 10, 0))).shape == (0,)


@pytest.mark.parametrize("integer", [False, True])
def test_rank_normalize_is_blom_of_the_average_ranks(integer):
    """The looked-up normal scores are ndtri((rank - 3/8) / (S + 1/4)) of the
    ties-averaged ranks of all chains' draws together, exactly."""
    from scipy.special import ndtri
    from scipy.stats import rankdata

    from sklearn_clda.inspection._rhat import _rank_normalize

    rng = np.random.default_rng(4)
    chains = rng.integers(0, 4, (3, 9, 2)) if integer else rng.standard_normal((3, 9, 2))
    flat = chains.reshape(27, 2)
    expected = ndtri((rankdata(flat, method="average", axis=0) - 0.375) / 27.25)
    np.testing.assert_array_equal(_rank_normalize(chains.astype(float)), expected.reshape(3, 9, 2))

"""collection_topic_summary and compare_collections on draws of known posterior."""

import numpy as np
import pytest
from numpy.testing import assert_allclose
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.pipeline import make_pipeline
from sklearn.utils._param_validation import InvalidParameterError

from sklearn_clda import CompoundLDA, LDAGibbs
from sklearn_clda.datasets import make_compound_corpus
from sklearn_clda.inspection import (
    collection_topic_summary,
    collection_trend,
    compare_collections,
    effective_sample_size,
)

S = 101  # draws: the q-quantile of a grid of 101 values is its (100 q)-th value


def grid(low, high, rng):
    """``S`` evenly spaced values from low to high, in random order."""
    return rng.permutation(np.linspace(low, high, S))


def model_with_draws(samples, groups):
    """A CompoundLDA holding the given draws as if fitted."""
    samples = np.asarray(samples, dtype=np.float64)
    clda = CompoundLDA(n_components=samples.shape[2])
    clda.collection_topic_samples_ = samples
    clda.collection_topic_ = samples.mean(axis=0)
    clda.groups_ = None if groups is None else np.asarray(groups)
    clda.components_ = np.ones((samples.shape[2], 5))
    return clda


def correlated_draws():
    """Collections "a" and "b" whose topic-0 shares move together.

    pi_a0 = u spans [0.2, 0.6] and pi_b0 = u - d with d in [0.009, 0.011],
    independent of u: the separate 90% intervals overlap almost entirely, but
    every draw has pi_a0 > pi_b0. Topic 1 is the complement.
    """
    rng = np.random.default_rng(0)
    u, d = grid(0.2, 0.6, rng), grid(0.009, 0.011, rng)
    a = np.stack([u, 1 - u], axis=1)
    b = np.stack([u - d, 1 - u + d], axis=1)
    return model_with_draws(np.stack([a, b], axis=1), ["a", "b"]), u, d


def test_summary_of_known_draws():
    clda, u, _ = correlated_draws()
    summary = collection_topic_summary(clda, ci=0.9)
    assert summary.columns.tolist() == ["collection", "topic", "mean", "lower", "upper", "ess",
                                       "rhat"]
    assert summary[["collection", "topic"]].values.tolist() == [
        ["a", 0], ["a", 1], ["b", 0], ["b", 1]]
    # pi_a0 is the grid 0.2..0.6 (step 0.004): mean 0.4, 5% and 95% quantiles
    # are its 5th and 95th values, 0.22 and 0.58.
    row = summary.iloc[0]
    assert_allclose([row["mean"], row["lower"], row["upper"]], [0.4, 0.22, 0.58])
    row = summary.iloc[1]  # 1 - pi_a0
    assert_allclose([row["mean"], row["lower"], row["upper"]], [0.6, 0.42, 0.78])
    assert_allclose(summary["ess"].iloc[0], effective_sample_size(u))
    assert summary.attrs["ci"] == 0.9
    # A 50% interval: the 25% and 75% quantiles.
    row = collection_topic_summary(clda, ci=0.5).iloc[0]
    assert_allclose([row["lower"], row["upper"]], [0.3, 0.5])


def test_difference_comes_from_the_joint_draws():
    clda, _, d = correlated_draws()
    diff = compare_collections(clda, "a", "b", ci=0.9)
    assert diff.columns.tolist() == ["topic", "mean", "lower", "upper", "prob_greater", "ess",
                                    "rhat"]
    # pi_a0 - pi_b0 = d, the grid 0.009..0.011: mean 0.01, 90% interval from
    # its 5th to its 95th value, 0.0091 to 0.0109; a is larger in every draw.
    assert_allclose(diff.loc[0, ["mean", "lower", "upper", "prob_greater"]].to_numpy(float),
                    [0.01, 0.0091, 0.0109, 1.0])
    assert_allclose(diff.loc[1, ["mean", "lower", "upper", "prob_greater"]].to_numpy(float),
                    [-0.01, -0.0109, -0.0091, 0.0])
    assert_allclose(diff.loc[0, "ess"], effective_sample_size(d))
    # The separate intervals overlap: comparing them would call it unclear.
    summary = collection_topic_summary(clda, ci=0.9)
    a, b = summary.iloc[0], summary.iloc[2]
    assert a["lower"] < b["upper"] and b["lower"] < a["upper"]
    assert diff.attrs == {"a": "a", "b": "b", "ci": 0.9, "n_chains": 1, "unstable_topics": []}


def test_anticorrelated_draws_widen_the_difference():
    # pi_a0 = u and pi_b0 = 0.8 - u: each interval is [0.22, 0.58] but the
    # difference 2u - 0.8 spans [-0.36, 0.36] (the difference of independent
    # draws of the two, triangular on [-0.4, 0.4], would give about +-0.27).
    rng = np.random.default_rng(1)
    u = grid(0.2, 0.6, rng)
    a = np.stack([u, 1 - u], axis=1)
    b = np.stack([0.8 - u, 0.2 + u], axis=1)
    clda = model_with_draws(np.stack([a, b], axis=1), ["a", "b"])
    diff = compare_collections(clda, "a", "b")
    assert_allclose(diff.loc[0, ["mean", "lower", "upper", "prob_greater"]].to_numpy(float),
                    [0.0, -0.36, 0.36, 50 / 101], atol=1e-12)


def test_swapping_the_collections_flips_the_difference():
    clda, _, _ = correlated_draws()
    ab = compare_collections(clda, "a", "b")
    ba = compare_collections(clda, "b", "a")
    assert_allclose(ba["mean"], -ab["mean"])
    assert_allclose(ba["lower"], -ab["upper"])
    assert_allclose(ba["prob_greater"], 1 - ab["prob_greater"])


@pytest.fixture(scope="module")
def fitted():
    corpus = make_compound_corpus(n_topics=3, n_features=30, n_collections=3,
                                  docs_per_collection=20, doc_length=40, random_state=0)
    years = np.array([2019, 2020, 2021])[corpus.groups]
    clda = CompoundLDA(n_components=3, max_iter=80, thin=2, random_state=0)
    return clda.fit(corpus.data, groups=years), corpus


def test_fitted_model(fitted):
    clda, _ = fitted
    summary = collection_topic_summary(clda)
    assert_allclose(summary["mean"].to_numpy().reshape(3, 3), clda.collection_topic_)
    assert summary["collection"].tolist() == [2019] * 3 + [2020] * 3 + [2021] * 3
    assert np.all(summary["lower"] <= summary["upper"])
    assert np.all((summary["ess"] > 0) & (summary["ess"] <= 40 * np.log10(40)))
    samples = clda.collection_topic_samples_
    diff = compare_collections(clda, 2021, 2019)
    assert_allclose(diff["mean"], (samples[:, 2] - samples[:, 0]).mean(axis=0))
    assert_allclose(diff["prob_greater"], (samples[:, 2] > samples[:, 0]).mean(axis=0))


def test_model_without_groups_has_one_collection(fitted):
    _, corpus = fitted
    clda = CompoundLDA(n_components=3, max_iter=40, thin=2, random_state=0).fit(corpus.data)
    assert collection_topic_summary(clda)["collection"].tolist() == ["all"] * 3
    with pytest.raises(ValueError, match="fitted without groups"):
        compare_collections(clda, "all", "all")


def test_pipeline():
    texts = ["apple banana", "banana apple cherry", "dog cat", "cat dog mouse"] * 5
    groups = ["x", "x", "y", "y"] * 5
    pipe = make_pipeline(CountVectorizer(), CompoundLDA(n_components=2, max_iter=40,
                                                        thin=2, random_state=0))
    pipe.fit(texts, compoundlda__groups=groups)
    assert len(collection_topic_summary(pipe)) == 4
    assert len(compare_collections(pipe, "x", "y")) == 2


def test_errors(fitted):
    clda, corpus = fitted
    with pytest.raises(ValueError, match=r"a=2018 .* is not a collection.*2019, 2020, 2021"):
        compare_collections(clda, 2018, 2019)
    with pytest.raises(ValueError, match="b='2019' .* is not a collection"):
        compare_collections(clda, 2020, "2019")
    with pytest.raises(ValueError, match="must differ"):
        compare_collections(clda, 2020, 2020)
    with pytest.raises(ValueError, match="must be a collection label"):
        compare_collections(clda, True, 2020)
    with pytest.raises(InvalidParameterError, match="ci"):
        collection_topic_summary(clda, ci=1.0)
    lda = LDAGibbs(n_components=3, max_iter=20).fit(corpus.data)
    with pytest.raises(ValueError, match="needs a fitted CompoundLDA"):
        collection_topic_summary(lda)
    vem = CompoundLDA(n_components=3, algorithm="vem", max_iter=5, random_state=0)
    with pytest.warns(Warning):
        vem.fit(corpus.data, groups=corpus.groups)
    for call in (lambda: collection_topic_summary(vem),
                 lambda: compare_collections(vem, 0, 1)):
        with pytest.raises(ValueError, match="algorithm='vem' gives a point estimate"):
            call()
    short = model_with_draws(clda.collection_topic_samples_[:3], [2019, 2020, 2021])
    with pytest.raises(ValueError, match="has 3: refit keeping more draws"):
        collection_topic_summary(short)


def test_a_collection_against_the_rest_weighs_the_others_by_documents():
    corpus = make_compound_corpus(n_topics=3, n_features=30, n_collections=3,
                                  docs_per_collection=20, doc_length=40, random_state=0)
    # Collection sizes 20, 10 and 30 documents: the rest of "a" is 1/4 "b", 3/4 "c".
    keep = np.flatnonzero((corpus.groups != 1) | (np.arange(corpus.groups.size) % 2 == 0))
    extra = np.flatnonzero(corpus.groups == 2)[:10]
    rows = np.concatenate([keep, extra])
    labels = np.array(["a", "b", "c"])[corpus.groups[rows]]
    clda = CompoundLDA(n_components=3, max_iter=60, thin=2, random_state=0)
    clda.fit(corpus.data[rows], groups=labels)
    assert clda.collection_sizes_.tolist() == [20, 10, 30]
    draws = clda.collection_topic_samples_
    rest = 0.25 * draws[:, 1] + 0.75 * draws[:, 2]
    diff = compare_collections(clda, "a")
    assert_allclose(diff["mean"], (draws[:, 0] - rest).mean(axis=0))
    assert_allclose(diff["prob_greater"], (draws[:, 0] > rest).mean(axis=0))
    assert_allclose(diff["ess"], effective_sample_size(draws[:, 0] - rest))
    assert diff.attrs["b"] is None
    # With two collections, the rest is the other one.
    two = CompoundLDA(n_components=3, max_iter=40, thin=2, random_state=0)
    two.fit(corpus.data[:40], groups=corpus.groups[:40])
    assert_allclose(compare_collections(two, 0)["mean"], compare_collections(two, 0, 1)["mean"])
    one = CompoundLDA(n_components=3, max_iter=40, thin=2, random_state=0)
    one.fit(corpus.data[:20], groups=corpus.groups[:20])
    with pytest.raises(ValueError, match="with b=None compares a collection with the others, "
                                         "but the model has one collection"):
        compare_collections(one, 0)


def trend_model(labels, draws):
    """A CompoundLDA holding ``draws`` of pi for collections ``labels``."""
    clda = model_with_draws(draws, labels)
    clda.collection_sizes_ = np.full(1 if labels is None else len(labels), 10)
    return clda


def test_trend_is_the_least_squares_slope_of_every_draw():
    rng = np.random.default_rng(0)
    years = [2019, 2020, 2022]  # unevenly spaced: placed at their values
    draws = rng.dirichlet([2.0, 3.0, 1.0], size=(50, 3))
    trend = collection_trend(trend_model(years, draws), ci=0.8)
    x = np.array(years, dtype=float)
    slopes = np.array([np.polyfit(x, draws[s], 1)[0] for s in range(50)])  # (50, K)
    assert_allclose(trend["slope"], slopes.mean(axis=0))
    assert_allclose(trend["lower"], np.quantile(slopes, 0.1, axis=0))
    assert_allclose(trend["prob_positive"], (slopes > 0).mean(axis=0))
    assert_allclose(trend["ess"], effective_sample_size(slopes))
    assert trend.attrs["unit"] == "label" and trend.attrs["collections"] == years
    # Shares sum to one in every draw, so the slopes sum to zero.
    assert_allclose(slopes.sum(axis=1), 0.0, atol=1e-12)


def test_trend_along_dates_is_per_year_and_along_an_order_per_step():
    rng = np.random.default_rng(1)
    draws = rng.dirichlet([1.0, 1.0], size=(20, 3))
    months = trend_model(["2020-01", "2020-07", "2021-01"], draws)
    trend = collection_trend(months)
    x = np.array([0.0, 182.0, 366.0]) / 365.2425
    assert trend.attrs["unit"] == "year"
    assert_allclose(trend.attrs["x"], x)
    assert_allclose(trend["slope"],
                    np.mean([np.polyfit(x, d, 1)[0] for d in draws], axis=0))
    stars = trend_model(["bad", "good", "ok"], draws)
    trend = collection_trend(stars, order=["bad", "ok", "good"])
    assert trend.attrs["unit"] == "step" and trend.attrs["collections"] == ["bad", "ok", "good"]
    ordered = draws[:, [0, 2, 1]]
    assert_allclose(trend["slope"],
                    np.mean([np.polyfit([0, 1, 2], d, 1)[0] for d in ordered], axis=0))


def test_trend_errors():
    rng = np.random.default_rng(2)
    draws = rng.dirichlet([1.0, 1.0], size=(20, 3))
    with pytest.raises(ValueError, match="labels, which must be numbers or ISO dates"):
        collection_trend(trend_model(["a", "b", "c"], draws))
    with pytest.raises(ValueError, match="needs collections at two positions or more, got 1"):
        collection_trend(trend_model(["a", "b", "c"], draws), order=["a"])
    with pytest.raises(ValueError, match="'z'"):
        collection_trend(trend_model(["a", "b", "c"], draws), order=["a", "z"])
    with pytest.raises(ValueError, match="single collection"):
        collection_trend(trend_model(None, draws[:, :1]))


def test_trend_along_times_of_day_keeps_the_hours():
    rng = np.random.default_rng(3)
    draws = rng.dirichlet([1.0, 1.0], size=(20, 3))
    hours = trend_model(["2020-01-01T23", "2020-01-02T01", "2020-01-03T00"], draws)
    trend = collection_trend(hours)
    assert_allclose(trend.attrs["x"], np.array([0.0, 2.0, 25.0]) / (365.2425 * 24))
    with pytest.raises(ValueError, match="must be numbers or ISO dates"):
        collection_trend(trend_model(["1", "2", "nan"], draws))  # not a position

"""topic_groups: topics summed into themes, draw by draw, in the collection summaries."""

import numpy as np
import pytest
from numpy.testing import assert_allclose
from sklearn.utils._param_validation import InvalidParameterError

from sklearn_clda.inspection import (
    collection_topic_summary,
    collection_trend,
    compare_collections,
)
from sklearn_clda.inspection._topic_groups import group_draws

from .test_collections import model_with_draws


def _draws(n_draws=200, seed=0):
    """Draws of pi for three collections (years) and four topics."""
    rng = np.random.default_rng(seed)
    return rng.dirichlet([3.0, 1.0, 2.0, 5.0], size=(n_draws, 3))


def _model(draws):
    clda = model_with_draws(draws, [2019, 2020, 2021])
    clda.collection_sizes_ = np.array([10, 20, 30])
    return clda


def test_a_group_is_the_sum_of_its_topics_in_every_draw():
    draws = _draws()
    clda = _model(draws)
    summary = collection_topic_summary(clda, topic_groups={"ab": [0, 1], "c": [2],
                                                           "all": [0, 1, 2, 3]})
    assert summary["topic"].tolist() == ["ab", "c", "all"] * 3
    summed = draws[:, :, [0, 1]].sum(axis=2)
    row = summary[(summary.collection == 2020) & (summary.topic == "ab")].iloc[0]
    assert row["mean"] == pytest.approx(summed[:, 1].mean(), rel=1e-12)
    lower, upper = np.quantile(summed[:, 1], [0.05, 0.95])
    assert (row["lower"], row["upper"]) == pytest.approx((lower, upper), rel=1e-12)
    # a sum's interval is narrower than the sum of its topics' intervals here
    # (the shares of the topics of one draw are negatively correlated)
    single = collection_topic_summary(clda)
    ends = single[single.collection == 2020].set_index("topic")
    assert row["upper"] - row["lower"] < (ends.loc[[0, 1], "upper"] - ends.loc[[0, 1], "lower"]
                                          ).sum()
    assert_allclose(summary[summary.topic == "all"]["mean"], 1.0)
    # a group of one topic is that topic
    c = summary[summary.topic == "c"].reset_index(drop=True)
    assert_allclose(c[["mean", "lower", "upper", "ess"]],
                    single[single.topic == 2].reset_index(drop=True)[["mean", "lower", "upper",
                                                                      "ess"]])


def test_labels_per_topic_as_fcluster_gives_them():
    draws = _draws()
    clda = _model(draws)
    by_label = compare_collections(clda, 2019, 2021, topic_groups=[2, 1, 2, 1])
    by_dict = compare_collections(clda, 2019, 2021, topic_groups={1: [1, 3], 2: [0, 2]})
    assert by_label.equals(by_dict)
    assert by_label["topic"].tolist() == [1, 2]
    diff = draws[:, 0] - draws[:, 2]
    assert by_label["mean"].tolist() == pytest.approx(
        [diff[:, [1, 3]].sum(axis=1).mean(), diff[:, [0, 2]].sum(axis=1).mean()], rel=1e-12)
    names = compare_collections(clda, 2019, topic_groups=["x", "y", "x", "y"])
    assert names["topic"].tolist() == ["x", "y"]


def test_trend_of_a_group():
    draws = _draws()
    trend = collection_trend(_model(draws), topic_groups={"first two": [0, 1]})
    x = np.array([2019.0, 2020.0, 2021.0]) - 2020.0
    slopes = draws[:, :, [0, 1]].sum(axis=2) @ x / (x @ x)
    assert trend["topic"].tolist() == ["first two"]
    assert trend["slope"].iloc[0] == pytest.approx(slopes.mean(), rel=1e-12)


def test_unstable_topics_make_their_groups_unstable():
    chains = np.ones((2, 5, 1, 4))
    grouped, names, unstable = group_draws(chains, np.array([2]), {"a": [0, 1], "b": [2, 3],
                                                                  "c": [1, 2]}, "f")
    assert names == ["a", "b", "c"] and unstable.tolist() == [1, 2]
    assert_allclose(grouped, 2.0)
    same, names, unstable = group_draws(chains, np.array([3]), None, "f")
    assert same is chains and names == [0, 1, 2, 3] and unstable.tolist() == [3]


@pytest.mark.parametrize("groups, message", [
    ({}, "topic_groups passed to collection_topic_summary is empty"),
    ({"a": [0, 4]}, r"topic_groups\['a'\] passed to collection_topic_summary contains "
                    "topic index 4, out of range"),
    ({"a": []}, "must be a non-empty list of topic indices"),
    ({"a": [1, 1]}, "repeats topic indices"),
    ({"a": ["x"]}, "must hold integer topic indices"),
    ([1, 2, 1], r"one group label per topic \(4\), got shape \(3,\)"),
    ([[1, 2], [1, 2]], r"got shape \(2, 2\)"),
    ([1.0, np.nan, 1.0, 2.0], "has a label that equals no topic's, such as NaN"),
])
def test_bad_groups_are_named(groups, message):
    with pytest.raises(ValueError, match=message):
        collection_topic_summary(_model(_draws()), topic_groups=groups)


def test_groups_are_validated():
    with pytest.raises(InvalidParameterError):
        collection_topic_summary(_model(_draws()), topic_groups=3)


def test_mixed_labels_keep_their_order():
    summary = collection_topic_summary(_model(_draws()), topic_groups=["b", 1, "b", 1])
    assert summary["topic"].tolist()[:2] == ["b", 1]

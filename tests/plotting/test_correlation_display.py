"""TopicCorrelationDisplay draws topic_correlation's graph."""

import numpy as np
import pytest

pytest.importorskip("matplotlib")
pytest.importorskip("pandas")

import matplotlib  # noqa: E402

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

from sklearn_clda import CompoundLDA  # noqa: E402
from sklearn_clda.datasets import make_compound_corpus  # noqa: E402
from sklearn_clda.inspection import topic_correlation  # noqa: E402
from sklearn_clda.plotting import TopicCorrelationDisplay  # noqa: E402


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def _blocks():
    """Topics {0, 2, 4} correlate with each other, {1, 3} with each other."""
    corr = np.full((5, 5), -0.2)
    for group in ([0, 2, 4], [1, 3]):
        corr[np.ix_(group, group)] = 0.5
    corr[0, 2] = corr[2, 0] = 0.8
    np.fill_diagonal(corr, 1.0)
    return corr


def test_edges_are_the_positive_pairs_widest_for_the_strongest():
    corr = _blocks()
    disp = TopicCorrelationDisplay(corr, shares=[0.3, 0.2, 0.2, 0.2, 0.1]).plot()
    assert len(disp.edges_) == 4  # 0-2, 0-4, 2-4, 1-3
    widths = [line.get_linewidth() for line in disp.edges_]
    assert widths == sorted(widths) and widths[-1] > widths[0]
    strongest = disp.edges_[-1]
    np.testing.assert_allclose(np.column_stack(strongest.get_data()),
                               disp.positions_[[0, 2]])
    np.testing.assert_allclose(np.linalg.norm(disp.positions_, axis=1), 1.0)
    # each cluster sits in one arc of the circle
    place = {int(k): i for i, k in enumerate(disp.order_)}
    for group in ([0, 2, 4], [1, 3]):
        spots = sorted(place[k] for k in group)
        assert spots[-1] - spots[0] == len(group) - 1
    sizes = disp.nodes_.get_sizes()
    assert sizes[0] == sizes.max() and sizes[4] == sizes.min()
    assert [t.get_text() for t in disp.labels_] == [f"Topic {k}" for k in range(5)]


def test_given_adjacency_is_drawn_as_is():
    corr = _blocks()
    adjacency = np.zeros((5, 5), dtype=bool)
    adjacency[1, 3] = adjacency[3, 1] = True
    adjacency[0, 1] = adjacency[1, 0] = True  # a negative correlation: dashed, red
    disp = TopicCorrelationDisplay(corr, adjacency).plot()
    assert len(disp.edges_) == 2
    negative, positive = disp.edges_  # weakest (most negative) first
    assert negative.get_linestyle() == "--" and positive.get_linestyle() == "-"


def test_from_estimator_draws_topic_correlation():
    corpus = make_compound_corpus(n_topics=4, n_features=40, n_collections=2,
                                  docs_per_collection=40, doc_length=60, random_state=0)
    clda = CompoundLDA(n_components=4, max_iter=60, random_state=0).fit(
        corpus.data, groups=corpus.groups)
    names = [f"w{i}" for i in range(40)]
    disp = TopicCorrelationDisplay.from_estimator(
        clda, groups=corpus.groups, within_collections=True, cutoff=-0.5,
        feature_names=names, top_words=2)
    found = topic_correlation(clda, groups=corpus.groups, within_collections=True,
                              cutoff=-0.5)
    assert len(disp.edges_) == len(found.edges)
    np.testing.assert_allclose(disp.correlation, found.correlation)
    assert disp.labels_[0].get_text().startswith("Topic 0: w")


@pytest.mark.parametrize("kwargs, message", [
    ({"correlation": [[1.0, np.nan], [np.nan, 1.0]]}, "NaN or infinite values in correlation"),
    ({"correlation": np.ones((2, 3))}, "square, symmetric correlation matrix"),
    ({"correlation": 1.0}, "square, symmetric correlation matrix; got 0 dimensions"),
    ({"correlation": np.eye(1), "topics": 5}, None),
    ({"correlation": [[1.0, 0.5], [0.1, 1.0]]}, "square, symmetric correlation matrix"),
    ({"correlation": np.eye(2), "adjacency": np.ones((2, 2))}, "adjacency of "
                                                                "TopicCorrelationDisplay must"),
    ({"correlation": np.eye(2), "shares": [0.5, -0.1]}, "shares of TopicCorrelationDisplay"),
    ({"correlation": np.eye(2), "topic_labels": ["a"]}, "need 2 entries each"),
    ({"correlation": np.eye(2), "shares": [[1.0, 1.0], [5.0, 0.0]]}, "shares of "
                                                                       "TopicCorrelationDisplay"),
    ({"correlation": [[1.0, 5.0], [5.0, 1.0]]}, r"correlations in \[-1, 1\]; got 5"),
    ({"correlation": np.eye(3), "adjacency": np.tril(~np.eye(3, dtype=bool))},
     "must be a symmetric boolean array"),
])
def test_bad_values_get_clear_errors(kwargs, message):
    if message is None:  # a scalar topic for one topic is fine
        assert TopicCorrelationDisplay(**kwargs).plot().labels_[0].get_text() == "Topic 5"
        return
    with pytest.raises(ValueError, match=message):
        TopicCorrelationDisplay(**kwargs).plot()

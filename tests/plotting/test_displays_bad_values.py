"""Displays built from bad values say so in a ValueError, before matplotlib."""

import numpy as np
import pytest

pytest.importorskip("matplotlib")

from sklearn_clda.plotting import CollectionTopicDisplay, TopicWordsDisplay  # noqa: E402


@pytest.mark.parametrize("proportions, message", [
    (np.ones((0, 3)), r"proportions of shape \(n_collections, n_topics\), with at least one "
                      r"row and one column; got shape \(0, 3\)"),
    (np.ones((2, 0)), r"got shape \(2, 0\)"),
    (np.ones((2, 2, 2)), r"got shape \(2, 2, 2\)"),
    ([[0.5, np.nan]], "NaN or infinite values in proportions"),
])
@pytest.mark.parametrize("kind", ["bars", "points", "heatmap"])
def test_collection_topic_display_refuses_empty_or_nan_proportions(proportions, message, kind):
    # (an empty array divided by zero; NaN reached matplotlib's axis limits)
    with pytest.raises(ValueError, match=message):
        CollectionTopicDisplay(proportions).plot(kind=kind)


def test_topic_words_display_refuses_nan_weights():
    display = TopicWordsDisplay(words=[["a", "b"]], weights=[[0.5, np.nan]])
    with pytest.raises(ValueError, match="TopicWordsDisplay got NaN or infinite values in "
                                         "weights"):
        display.plot()


@pytest.fixture(scope="module")
def fitted():
    from sklearn_clda import CompoundLDA
    from sklearn_clda.datasets import make_compound_corpus

    c = make_compound_corpus(n_topics=3, n_features=30, n_collections=3,
                             docs_per_collection=20, doc_length=30, random_state=0)
    return CompoundLDA(n_components=3, max_iter=100, random_state=0).fit(
        c.data, groups=c.groups)


def _set(model, **attrs):
    import copy

    model = copy.deepcopy(model)
    for name, value in attrs.items():
        setattr(model, name, value(model) if callable(value) else value)
    return model


@pytest.mark.parametrize("bad, message", [
    ({"collection_topic_samples_": lambda m: -m.collection_topic_samples_},
     "collection_topic_samples_ of finite, non-negative topic proportions"),
    ({"collection_topic_samples_": lambda m: np.where(m.collection_topic_samples_ > 0.5,
                                                      np.nan, m.collection_topic_samples_)},
     "collection_topic_samples_ of finite, non-negative"),
    ({"collection_topic_samples_": lambda m: m.collection_topic_samples_[0]},
     r"collection_topic_samples_ of shape \(n_draws, n_collections=3, n_components=3\), "
     r"got shape \(3, 3\)"),
    ({"collection_topic_samples_": lambda m: m.collection_topic_samples_[:, :2]},
     r"n_collections=3, n_components=3\), got shape \(\d+, 2, 3\)"),
    ({"collection_topic_samples_": lambda m: m.collection_topic_samples_[:, :, :2]},
     r"got shape \(\d+, 3, 2\)"),
])
def test_draws_of_pi_set_by_hand_are_checked_by_every_reader(fitted, bad, message):
    # (negative or NaN draws gave summaries and bars of them; draws of another
    # shape an IndexError deep in the displays)
    from sklearn_clda.inspection import collection_topic_summary, compare_collections
    from sklearn_clda.plotting import CollectionDifferenceDisplay, PiTraceDisplay

    import matplotlib.pyplot as plt

    model = _set(fitted, **bad)
    for call in (lambda: collection_topic_summary(model),
                 lambda: compare_collections(model, 0, 1),
                 lambda: CollectionTopicDisplay.from_estimator(model),
                 lambda: PiTraceDisplay.from_estimator(model),
                 lambda: CollectionDifferenceDisplay.from_estimator(model, 0, 1)):
        with pytest.raises(ValueError, match=message):
            call()
    plt.close("all")


def test_topic_words_and_trace_of_a_model_set_by_hand_are_checked(fitted):
    from sklearn_clda.plotting import TraceDisplay

    import matplotlib.pyplot as plt

    nan_topics = _set(fitted, components_=lambda m: np.where(m.components_ > 1, np.nan,
                                                             m.components_))
    with pytest.raises(ValueError, match="TopicWordsDisplay.from_estimator needs a fitted "
                                         "topic model whose components_ is a finite"):
        TopicWordsDisplay.from_estimator(nan_topics)
    empty_topic = _set(fitted, components_=lambda m: np.vstack([m.components_[:2],
                                                                np.zeros((1, 30))]))
    with pytest.raises(ValueError, match="positive sum in every row"):
        TopicWordsDisplay.from_estimator(empty_topic)
    with pytest.raises(ValueError, match="trace must be a dict with an 'iteration' array"):
        TraceDisplay.from_estimator(_set(fitted, trace_=None))
    plt.close("all")

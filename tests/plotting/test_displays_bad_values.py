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

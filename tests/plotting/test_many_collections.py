"""Displays that draw each collection, on a model of many collections: the
ones with the most documents unless told which, in the order asked."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from sklearn_clda import CompoundLDA  # noqa: E402
from sklearn_clda.exceptions import ManyCollectionsWarning  # noqa: E402
from sklearn_clda.plotting import (  # noqa: E402
    CollectionDistanceDisplay,
    CollectionTopicDisplay,
    CollectionWordsDisplay,
    PiTraceDisplay,
    TopicMapDisplay,
)
from sklearn_clda.plotting._base import MAX_COLLECTIONS  # noqa: E402

pytest.importorskip("pandas")

N_COLLECTIONS = MAX_COLLECTIONS + 5


@pytest.fixture(scope="module")
def many():
    """45 collections "c00".."c44" of 1, 2, 1, 2, ... documents, but four
    larger ones: the 40 with the most documents leave out five of the
    one-document collections, the last ones (ties go to the first label)."""
    rng = np.random.default_rng(0)
    sizes = [1 + j % 2 for j in range(N_COLLECTIONS)]
    for j, size in ((3, 3), (10, 3), (30, 3), (44, 4)):
        sizes[j] = size
    groups = np.repeat([f"c{j:02d}" for j in range(N_COLLECTIONS)], sizes)
    X = rng.poisson(1.5, size=(groups.size, 15))
    X[X.sum(axis=1) == 0, 0] = 1
    model = CompoundLDA(n_components=3, max_iter=24, burn_in=4, thin=4, random_state=0)
    with pytest.warns(ManyCollectionsWarning):  # (a collection per two documents)
        model.fit(X, groups=groups)
    return model, X, groups, np.array(sizes)


def largest(sizes):
    want = np.sort(np.argsort(-sizes, kind="stable")[:MAX_COLLECTIONS])
    return [f"c{j:02d}" for j in want]


def shown_labels(display):
    if isinstance(display, CollectionTopicDisplay):
        return list(display.collection_labels)
    if isinstance(display, TopicMapDisplay):
        return list(display.panel_labels)
    if isinstance(display, CollectionDistanceDisplay):
        return list(display.collection_labels)
    if isinstance(display, PiTraceDisplay):
        return [panel.get_title().removeprefix("Collection ")
                for panel in display.axes_.ravel()[:display.lines_.shape[-2]]]
    return list(display.collections)


def draw(kind, model, X, groups, **kwargs):
    if kind == "topics":
        return CollectionTopicDisplay.from_estimator(model, kind="heatmap", **kwargs)
    if kind == "trace":
        return PiTraceDisplay.from_estimator(model, **kwargs)
    if kind == "map":
        return TopicMapDisplay.from_estimator(model, n_cols=8, **kwargs)
    if kind == "distances":
        return CollectionDistanceDisplay.from_estimator(model, order="given", **kwargs)
    return CollectionWordsDisplay.from_estimator(model, X, groups, topic=0, n_words=2,
                                                 **kwargs)


@pytest.mark.parametrize("kind", ["topics", "trace", "words", "map", "distances"])
def test_unasked_the_largest_collections_are_drawn_with_a_warning(many, kind):
    model, X, groups, sizes = many
    with pytest.warns(UserWarning, match=f"draws the {MAX_COLLECTIONS} of the "
                      f"{N_COLLECTIONS} collections with the most documents; pass "
                      "collections="):
        display = draw(kind, model, X, groups)
    assert shown_labels(display) == largest(sizes)
    plt.close("all")


@pytest.mark.parametrize("kind", ["topics", "trace", "words", "map", "distances"])
def test_the_collections_asked_for_in_their_order(many, kind, recwarn):
    model, X, groups, _ = many
    display = draw(kind, model, X, groups, collections=["c07", "c44", "c00"])
    assert shown_labels(display) == ["c07", "c44", "c00"]
    assert not [w for w in recwarn if issubclass(w.category, UserWarning)]
    for bad, message in ((["c07", "c07"], "repeats collections"), (["zz"], "'zz' passed"),
                         ([], "at least one collection")):
        with pytest.raises(ValueError, match=message):
            draw(kind, model, X, groups, collections=bad)
    plt.close("all")


def test_collection_topic_values_follow_the_collections(many):
    model, X, groups, _ = many
    display = CollectionTopicDisplay.from_estimator(model, kind="heatmap",
                                                    collections=["c44", "c03"])
    positions = [list(model.groups_).index(c) for c in ("c44", "c03")]
    np.testing.assert_allclose(display.proportions,
                               model.collection_topic_[positions][:, display.topics])
    plt.close("all")

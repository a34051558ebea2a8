"""CollectionDifferenceDisplay draws compare_collections' numbers, a row per topic."""

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

pytest.importorskip("matplotlib")
pytest.importorskip("pandas")

import matplotlib.pyplot as plt  # noqa: E402

from sklearn_clda import CompoundLDA  # noqa: E402
from sklearn_clda.datasets import make_compound_corpus  # noqa: E402
from sklearn_clda.inspection import compare_collections  # noqa: E402
from sklearn_clda.plotting import CollectionDifferenceDisplay  # noqa: E402


@pytest.fixture(scope="module")
def fitted():
    corpus = make_compound_corpus(n_topics=4, n_features=40, n_collections=3,
                                  docs_per_collection=30, doc_length=40, random_state=0)
    labels = np.array(["news", "blogs", "forums"])[corpus.groups]
    clda = CompoundLDA(n_components=4, max_iter=120, thin=2, random_state=0)
    return clda.fit(corpus.data, groups=labels), labels, corpus


def drawn_rows(display):
    """``{y: (x, lower, upper)}`` of every drawn point, from the artists."""
    rows = {}
    for container in display.errorbars_:
        line, _, (bars,) = container.lines
        for x, y, segment in zip(line.get_xdata(), line.get_ydata(), bars.get_segments()):
            rows[int(y)] = (x, segment[0][0], segment[1][0])
    return rows


def test_rows_are_the_comparison_sorted_with_clear_ones_in_color(fitted):
    clda, _, _ = fitted
    disp = CollectionDifferenceDisplay.from_estimator(clda, "news", "blogs", ci=0.8)
    diff = compare_collections(clda, "news", "blogs", ci=0.8)
    order = np.argsort(diff["mean"].to_numpy(), kind="stable")
    assert_array_equal(disp.order_, order)
    rows = drawn_rows(disp)
    for y, k in enumerate(order):
        assert_allclose(rows[y], diff.loc[k, ["mean", "lower", "upper"]].to_numpy(float))
    clear = ((diff["lower"] > 0) | (diff["upper"] < 0)).to_numpy()
    assert_array_equal(disp.clear_, clear)
    colors = [c.lines[0].get_color() for c in disp.errorbars_]
    assert colors == (["C0"] if clear.any() else []) + (["0.55"] if not clear.all() else [])
    ticks = [t.get_text() for t in disp.ax_.get_yticklabels()]
    assert ticks == [f"Topic {k}" for k in order]  # no vocabulary: no words
    assert disp.ax_.get_xlabel() == "Share in news minus share in blogs (80% interval)"
    plt.close("all")


def test_against_the_rest_and_pooled_chains_with_word_labels(fitted):
    clda, labels, corpus = fitted
    other = CompoundLDA(n_components=4, max_iter=120, thin=2, random_state=1)
    other.fit(corpus.data, groups=labels)
    names = [f"w{v}" for v in range(40)]
    disp = CollectionDifferenceDisplay.from_estimator(
        [clda, other], "forums", topics=[2, 0], feature_names=names, top_words=2, sort=False)
    diff = compare_collections([clda, other], "forums")
    rows = drawn_rows(disp)
    # Unsorted: the first topic at the top.
    assert_allclose(rows[1][0], diff.loc[2, "mean"])
    assert_allclose(rows[0][0], diff.loc[0, "mean"])
    ticks = [t.get_text() for t in disp.ax_.get_yticklabels()]
    assert ticks[1].startswith("Topic 2: w") and len(ticks[1].split()) == 4
    assert disp.ax_.get_xlabel() == ("Share in forums minus share in the rest of the corpus "
                                     "(90% interval)")
    plt.close("all")


def test_groups_of_topics_are_drawn_by_name(fitted):
    clda, _, _ = fitted
    groups = {"first two": [0, 1], "last two": [2, 3], "one": [1]}
    disp = CollectionDifferenceDisplay.from_estimator(clda, "news", "blogs",
                                                      topic_groups=groups, sort=False)
    diff = compare_collections(clda, "news", "blogs", topic_groups=groups)
    rows = drawn_rows(disp)
    for i, name in enumerate(groups):  # unsorted: the first at the top
        assert_allclose(rows[2 - i], diff.loc[i, ["mean", "lower", "upper"]].to_numpy(float))
    assert [t.get_text() for t in disp.ax_.get_yticklabels()] == list(groups)[::-1]
    picked = CollectionDifferenceDisplay.from_estimator(
        clda, "news", "blogs", topic_groups=[1, 1, 2, 2], topics=[1], sort=False)
    assert [t.get_text() for t in picked.ax_.get_yticklabels()] == ["2"]
    with pytest.raises(ValueError, match=r"topics contains topic index 3, out of range"):
        CollectionDifferenceDisplay.from_estimator(clda, "news", topic_groups=groups,
                                                   topics=[3])
    plt.close("all")


def test_constructor_values_are_checked():
    with pytest.raises(ValueError, match="one length"):
        CollectionDifferenceDisplay([0.1, 0.2], [0.0], [0.3, 0.4]).plot()
    with pytest.raises(ValueError, match="NaN or infinite values in lower"):
        CollectionDifferenceDisplay([0.1], [np.nan], [0.3]).plot()
    with pytest.raises(ValueError, match="topic_labels has 1 entries for 2 topics"):
        CollectionDifferenceDisplay([0.1, 0.2], [0.0, 0.1], [0.3, 0.4],
                                    topic_labels=["a"]).plot()
    disp = CollectionDifferenceDisplay([0.1, -0.2], [0.05, -0.3], [0.3, 0.1]).plot()
    assert disp.clear_.tolist() == [True, False]
    assert disp.ax_.get_xlabel() == "Difference of topic shares"
    plt.close("all")


def test_constructor_settings_are_checked():
    values = ([0.1, 0.2], [0.0, 0.1], [0.3, 0.4])
    for interval in (90, "0.9", True):
        with pytest.raises(ValueError, match=r"interval of CollectionDifferenceDisplay must be "
                                             r"a number in \(0, 1\) or None"):
            CollectionDifferenceDisplay(*values, interval=interval).plot()
    with pytest.raises(ValueError, match="topics has 1 entries for 2 differences"):
        CollectionDifferenceDisplay(*values, topics=[0]).plot()
    with pytest.raises(ValueError, match="lower <= difference <= upper"):
        CollectionDifferenceDisplay([0.1, 0.2], [0.15, 0.1], [0.3, 0.4]).plot()

"""PermutationTestDisplay draws permutation_test's numbers, a row per topic."""

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

pytest.importorskip("matplotlib")
pytest.importorskip("pandas")

import matplotlib.pyplot as plt  # noqa: E402

from sklearn_clda import CompoundLDA  # noqa: E402
from sklearn_clda.datasets import make_compound_corpus  # noqa: E402
from sklearn_clda.inspection import permutation_test  # noqa: E402
from sklearn_clda.plotting import PermutationTestDisplay  # noqa: E402

from .test_difference import drawn_rows  # noqa: E402


@pytest.fixture(scope="module")
def tested():
    corpus = make_compound_corpus(n_topics=3, n_features=30, n_collections=2,
                                  docs_per_collection=40, doc_length=50, random_state=0)
    labels = np.array(["news", "blogs"])[corpus.groups]
    clda = CompoundLDA(n_components=3, max_iter=100, thin=2, random_state=0)
    clda.fit(corpus.data, groups=labels)
    result = permutation_test(clda, corpus.data, labels, "news", "blogs", n_permutations=9,
                              random_state=0)
    return clda, corpus.data, labels, result


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


@pytest.mark.parametrize("p_value, column", [("adjusted", "p_value_adjusted"),
                                             ("topic", "p_value")])
def test_rows_are_the_test_with_significant_ones_in_color(tested, p_value, column):
    _, _, _, result = tested
    table = result.table
    disp = PermutationTestDisplay.from_results(result, p_value=p_value, alpha=0.1)
    order = np.argsort(table["mean"].to_numpy(), kind="stable")
    assert_array_equal(disp.order_, order)
    rows = drawn_rows(disp)
    for y, k in enumerate(order):
        assert_allclose(rows[y], table.loc[k, ["mean", "lower", "upper"]].to_numpy(float))
    significant = (table[column] <= 0.1).to_numpy()
    assert_array_equal(disp.significant_, significant)
    colors = [c.lines[0].get_color() for c in disp.errorbars_]
    assert colors == (["C0"] if significant.any() else []) + (
        ["0.55"] if not significant.all() else [])
    assert disp.ax_.get_xlabel() == "Share in news minus share in blogs (90% interval)"


def test_shuffled_fits_are_ticks_on_their_topics_rows_inside_the_band(tested):
    _, _, _, result = tested
    disp = PermutationTestDisplay.from_results(result)
    null = result.null_differences
    perm, topic = np.nonzero(np.isfinite(null))
    points = disp.null_.get_offsets()
    y = np.argsort(disp.order_)  # each topic's row
    assert_allclose(sorted(map(tuple, points)),
                    sorted(zip(null[perm, topic], y[topic].astype(float))))
    reach = result.null_max.max()
    xs = disp.ax_.transData.inverted().transform(disp.band_.get_verts())[:, 0]
    assert_allclose([xs.min(), xs.max()], [-reach, reach])
    assert np.all(np.abs(points[:, 0]) <= reach)
    legend = [t.get_text() for t in disp.ax_.get_legend().get_texts()]
    assert legend == ["largest shuffled |difference|", "shuffled fits"]


def test_from_estimator_runs_the_test_and_labels_the_topics(tested):
    clda, X, labels, result = tested
    names = np.array([f"w{i}" for i in range(X.shape[1])])
    disp = PermutationTestDisplay.from_estimator(
        clda, X, labels, "news", "blogs", n_permutations=9, random_state=0,
        feature_names=names, topics=[2, 1], top_words=2)
    assert_allclose(disp.null_differences, result.null_differences[:, [2, 1]])
    ticks = [t.get_text() for t in disp.ax_.get_yticklabels()]
    assert sorted(t.split(":")[0] for t in ticks) == ["Topic 1", "Topic 2"]
    assert all(len(t.split(": ")[1].split()) == 2 for t in ticks)


def test_groups_of_topics_are_rows_named_by_their_groups(tested):
    clda, X, labels, result = tested
    groups = {"zero and two": [0, 2], "one": [1]}
    disp = PermutationTestDisplay.from_estimator(
        clda, X, labels, "news", "blogs", n_permutations=9, random_state=0,
        topic_groups=groups, feature_names=[f"w{i}" for i in range(X.shape[1])])
    null = result.null_differences
    assert_allclose(disp.null_differences, np.column_stack([null[:, 0] + null[:, 2],
                                                            null[:, 1]]))
    assert sorted(t.get_text() for t in disp.ax_.get_yticklabels()) == ["one",
                                                                       "zero and two"]


def test_without_any_match_there_are_no_ticks(tested):
    _, _, _, result = tested
    table = result.table
    disp = PermutationTestDisplay(
        table["mean"], table["lower"], table["upper"],
        np.full_like(result.null_differences, np.nan), result.null_max,
        np.full(len(table), np.nan)).plot()
    assert disp.null_ is None
    assert not disp.significant_.any()


@pytest.mark.parametrize("change, message", [
    ({"null_differences": np.zeros((9, 2))}, "null_differences of shape"),
    ({"null_differences": np.full((9, 3), np.inf)}, "infinite"),
    ({"null_max": np.zeros(8)}, "null_max of shape"),
    ({"null_max": -np.ones(9)}, "non-negative"),
    ({"p_values": np.array([0.0, 0.5, 1.0])}, r"p_values of shape \(3,\) in \(0, 1\]"),
    ({"alpha": 1.5}, "alpha"),
])
def test_bad_values_are_named(tested, change, message):
    _, _, _, result = tested
    table = result.table
    values = {"null_differences": result.null_differences, "null_max": result.null_max,
              "p_values": table["p_value"].to_numpy(), "alpha": 0.05, **change}
    disp = PermutationTestDisplay(table["mean"], table["lower"], table["upper"],
                                  values.pop("null_differences"), values.pop("null_max"),
                                  values.pop("p_values"), **values)
    with pytest.raises(ValueError, match=message):
        disp.plot()


def test_a_result_of_something_else_is_refused():
    with pytest.raises(ValueError, match="needs the result of permutation_test"):
        PermutationTestDisplay.from_results({"table": None})

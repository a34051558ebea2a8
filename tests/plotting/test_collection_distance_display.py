"""CollectionDistanceDisplay draws the distances between the collections' mixtures."""

import numpy as np
import pytest

pytest.importorskip("matplotlib")
pytest.importorskip("pandas")

import matplotlib  # noqa: E402

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
from numpy.testing import assert_allclose  # noqa: E402
from sklearn.utils._param_validation import InvalidParameterError  # noqa: E402

from sklearn_clda import CompoundLDA  # noqa: E402
from sklearn_clda.inspection import collection_distances  # noqa: E402
from sklearn_clda.plotting import CollectionDistanceDisplay  # noqa: E402
from sklearn_clda.plotting._collection_distance import MAX_ANNOTATED  # noqa: E402


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def clda():
    """Four collections over 12 words: "a" and "c" alike (the first six
    words), "b" and "d" alike (the last six)."""
    rng = np.random.default_rng(0)
    labels = np.array(["a", "b", "c", "d"])
    groups = np.repeat(labels, 25)
    rates = np.full((4, 12), 0.2)
    rates[[0, 2], :6] = 2.0
    rates[[1, 3], 6:] = 2.0
    X = rng.poisson(rates[np.searchsorted(labels, groups)])
    X[X.sum(axis=1) == 0, 0] = 1
    model = CompoundLDA(n_components=2, max_iter=60, thin=2, random_state=0)
    return model.fit(X, groups=groups)


def test_the_cells_are_the_posterior_mean_distances(clda):
    display = CollectionDistanceDisplay.from_estimator(clda, metric="tv", order="given")
    table = collection_distances(clda, metric="tv")
    matrix = np.asarray(display.distances)
    for row in table.itertuples():
        i, j = "abcd".index(row.a), "abcd".index(row.b)
        assert matrix[i, j] == matrix[j, i] == row.distance
    assert_allclose(np.diag(matrix), 0.0)
    shown = display.image_.get_array()
    assert shown.mask.tolist() == np.eye(4, dtype=bool).tolist()  # the diagonal blank
    assert_allclose(shown.filled(0.0), matrix)
    assert display.collection_labels == ["a", "b", "c", "d"]
    assert display.colorbar_.ax.get_ylabel() == "Total variation distance"
    assert [t.get_text() for t in display.ax_.get_yticklabels()] == ["a", "b", "c", "d"]


def test_alike_collections_are_drawn_side_by_side(clda):
    display = CollectionDistanceDisplay.from_estimator(clda)
    names = [t.get_text() for t in display.ax_.get_xticklabels()]
    pairs = {frozenset(names[:2]), frozenset(names[2:])}
    assert pairs == {frozenset("ac"), frozenset("bd")}
    matrix = np.asarray(display.distances)[np.ix_(display.order_, display.order_)]
    assert_allclose(display.image_.get_array().filled(0.0), matrix)
    assert display.colorbar_.ax.get_ylabel() == "Hellinger distance"


def test_each_cell_names_its_distance():
    distances = np.array([[0.0, 0.8, 0.2], [0.8, 0.0, 0.7], [0.2, 0.7, 0.0]])
    display = CollectionDistanceDisplay(distances, collection_labels=list("ABC"))
    display.plot(order="given")
    found = {(t.get_position(), t.get_text()) for t in display.texts_}
    want = {((j, i), f"{distances[i, j]:.2f}") for i in range(3) for j in range(3) if i != j}
    assert found == want
    assert display.image_.norm.vmin == 0.0 and display.image_.norm.vmax == 0.8
    dark, light = (display.texts_[k].get_color() for k in (1, 0))  # 0.2 and 0.8
    assert (dark, light) == ("white", "black")
    assert CollectionDistanceDisplay(distances).plot(annotate=False).texts_ == []


def test_many_collections_are_not_written_unless_asked():
    n = MAX_ANNOTATED + 1
    points = np.arange(n, dtype=float)
    distances = np.abs(points[:, None] - points[None, :]) / n
    assert CollectionDistanceDisplay(distances).plot().texts_ == []
    assert len(CollectionDistanceDisplay(distances).plot(annotate=True).texts_) == n * (n - 1)
    given = CollectionDistanceDisplay(distances).plot(order="given")
    assert given.order_.tolist() == list(range(n))
    clustered = CollectionDistanceDisplay(distances).plot()
    assert clustered.order_.tolist() in (list(range(n)), list(range(n))[::-1])


@pytest.mark.parametrize("distances, labels, message", [
    ([[0.0, 0.5], [0.4, 0.0]], None, "square, symmetric matrix"),
    ([[0.0, 0.5, 0.1]], None, "square, symmetric matrix"),
    ([[0.0, -0.5], [-0.5, 0.0]], None, "distances >= 0 with zeros on the diagonal"),
    ([[0.1, 0.5], [0.5, 0.0]], None, "distances >= 0 with zeros on the diagonal"),
    ([[0.0, np.nan], [np.nan, 0.0]], None, "NaN or infinite values in distances"),
    ([[0.0, 0.5], [0.5, 0.0]], ["a"], "needs 2 labels, got 1"),
    ([0.0, 0.5], None, "square, symmetric matrix"),
])
def test_bad_values_are_named(distances, labels, message):
    with pytest.raises(ValueError, match=message):
        CollectionDistanceDisplay(distances, collection_labels=labels).plot()


def test_bad_order_and_models_are_named(clda):
    with pytest.raises(ValueError, match="order must be 'cluster' or 'given'"):
        CollectionDistanceDisplay([[0.0, 1.0], [1.0, 0.0]]).plot(order="time")
    with pytest.raises(InvalidParameterError, match="metric"):
        CollectionDistanceDisplay.from_estimator(clda, metric="euclid")
    X = np.random.default_rng(0).poisson(1.0, size=(20, 8))
    X[X.sum(axis=1) == 0, 0] = 1
    one = CompoundLDA(n_components=2, max_iter=20, thin=2, random_state=0).fit(X)
    with pytest.raises(ValueError, match="fitted with one collection"):
        CollectionDistanceDisplay.from_estimator(one)

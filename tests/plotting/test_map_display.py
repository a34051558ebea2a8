"""TopicMapDisplay draws the topics' places as circles, once per collection."""

import numpy as np
import pytest

pytest.importorskip("matplotlib")
pytest.importorskip("pandas")

import matplotlib  # noqa: E402

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
from numpy.testing import assert_allclose  # noqa: E402
from sklearn.decomposition import LatentDirichletAllocation  # noqa: E402
from sklearn.utils._param_validation import InvalidParameterError  # noqa: E402

from sklearn_clda import CompoundLDA, LDAGibbs  # noqa: E402
from sklearn_clda.inspection import topic_labels, topic_map  # noqa: E402
from sklearn_clda.plotting import TopicMapDisplay  # noqa: E402

VOCAB = np.array([f"w{i}" for i in range(12)])


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def clda():
    """Three collections of 10, 20 and 30 documents over 12 words, the first
    four words mostly in "a", the next four in "b", the last in "c"."""
    rng = np.random.default_rng(0)
    groups = np.repeat(["a", "b", "c"], [10, 20, 30])
    rates = np.full((3, 12), 0.3)
    for j in range(3):
        rates[j, 4 * j:4 * j + 4] = 3.0
    X = rng.poisson(rates[np.searchsorted(["a", "b", "c"], groups)])
    X[X.sum(axis=1) == 0, 0] = 1
    model = CompoundLDA(n_components=4, max_iter=60, thin=2, random_state=0)
    return model.fit(X, groups=groups)


def _areas(circles):
    return np.asarray(circles.get_sizes(), dtype=float)


def test_one_panel_per_collection_on_the_same_places(clda):
    disp = TopicMapDisplay.from_estimator(clda, feature_names=VOCAB)
    table = topic_map(clda, VOCAB)
    assert [ax.get_title() for ax in disp.axes_.ravel()[:3]] == ["a", "b", "c"]
    assert len(disp.circles_) == len(disp.reference_circles_) == 3
    for panel, circles in enumerate(disp.circles_):
        assert_allclose(circles.get_offsets(), table[["x", "y"]].to_numpy())
        # area in proportion to the collection's share, on one scale for all
        assert_allclose(_areas(circles) / _areas(disp.circles_[0]).sum(),
                        clda.collection_topic_[panel] / clda.collection_topic_[0].sum())
    # the dashed circles: the mean mixture of the training documents
    corpus = clda.collection_sizes_ @ clda.collection_topic_ / clda.collection_sizes_.sum()
    assert_allclose(_areas(disp.reference_circles_[1]) / _areas(disp.circles_[1]),
                    corpus / clda.collection_topic_[1])
    # panels are labelled with the topic numbers; the same square window each
    assert [t.get_text() for t in disp.labels_[2]] == ["0", "1", "2", "3"]
    assert len({(ax.get_xlim(), ax.get_ylim()) for ax in disp.axes_.ravel()[:3]}) == 1
    assert disp.ax_ is disp.axes_.ravel()[0]
    assert disp.axes_.shape == (2, 2) and not disp.axes_[1, 1].axison  # near a square
    explained = table.attrs["explained"]
    assert disp.ax_.get_xlabel() == f"PC1 ({100 * explained[0]:.0f}% of the spread)"


def test_colours_say_more_or_less_than_the_corpus(clda):
    disp = TopicMapDisplay.from_estimator(clda, max_ratio=2.0)
    corpus = clda.collection_sizes_ @ clda.collection_topic_ / clda.collection_sizes_.sum()
    ratio = clda.collection_topic_ / corpus
    for panel, circles in enumerate(disp.circles_):
        red, _, blue, _ = circles.get_facecolors().T
        more, less = ratio[panel] > 1.05, ratio[panel] < 1 / 1.05
        assert (red[more] > blue[more]).all() and (blue[less] > red[less]).all()
    # each colour is the log ratio's on a scale from 1/2 (blue) to 2 (red)
    cmap = matplotlib.colormaps["RdBu_r"]
    for panel, circles in enumerate(disp.circles_):
        position = np.clip(0.5 + 0.5 * np.log2(ratio[panel]), 0.0, 1.0)
        assert_allclose(circles.get_facecolors()[:, :3], cmap(position)[:, :3], atol=0.01)
    assert [t.get_text() for t in disp.colorbar_.ax.get_yticklabels()] == ["0.5x", "1x", "2x"]


def test_one_map_for_a_model_without_collections():
    rng = np.random.default_rng(1)
    X = rng.poisson(1.0, size=(30, 12))
    X[X.sum(axis=1) == 0, 0] = 1
    gibbs = LDAGibbs(n_components=3, max_iter=30, random_state=0).fit(X)
    disp = TopicMapDisplay.from_estimator(gibbs, feature_names=VOCAB)
    assert disp.axes_.size == 1 and disp.reference_circles_ is None
    assert disp.colorbar_ is None
    shares = gibbs.components_.sum(axis=1) / gibbs.components_.sum()
    assert_allclose(_areas(disp.circles_[0]) / _areas(disp.circles_[0]).sum(), shares)
    words = topic_labels(gibbs, VOCAB, n_words=2)["words"]
    assert [t.get_text() for t in disp.labels_[0]] == [
        f"{k}: {' '.join(w)}" for k, w in enumerate(words)]
    # and a CompoundLDA's corpus map, asked for
    single = TopicMapDisplay.from_estimator(LDAGibbs(n_components=3, max_iter=5).fit(X),
                                            top_words=0)
    assert [t.get_text() for t in single.labels_[0]] == ["0", "1", "2"]


def test_the_corpus_map_and_the_collections_asked_for(clda):
    corpus = TopicMapDisplay.from_estimator(clda, by_collection=False)
    assert corpus.axes_.size == 1 and corpus.reference_circles_ is None
    assert_allclose(_areas(corpus.circles_[0]) / _areas(corpus.circles_[0]).sum(),
                    clda.components_.sum(axis=1) / clda.components_.sum())
    two = TopicMapDisplay.from_estimator(clda, collections=["c", "a"], top_words=1,
                                         feature_names=VOCAB)
    assert [ax.get_title() for ax in two.axes_.ravel()[:2]] == ["c", "a"]
    assert_allclose(_areas(two.circles_[0]) / _areas(two.circles_[1]),
                    clda.collection_topic_[2] / clda.collection_topic_[0])
    assert all(": " in t.get_text() for t in two.labels_[0])
    with pytest.raises(ValueError, match="'zz' passed"):
        TopicMapDisplay.from_estimator(clda, collections=["zz"])


def test_drawn_on_given_axes():
    disp = TopicMapDisplay([[0.0, 0.0], [1.0, 1.0]], [[0.5, 0.5], [0.9, 0.1]])
    fig, axes = plt.subplots(1, 3)
    disp.plot(ax=axes)
    assert disp.figure_ is fig and disp.ax_ is axes[0] and not axes[2].axison
    fig, ax = plt.subplots()
    disp.plot(ax=ax)  # one subplot divided into the two panels
    assert len(disp.circles_) == 2 and disp.ax_ is not ax
    one = TopicMapDisplay([[0.0, 0.0], [1.0, 1.0]], [0.5, 0.5], topic_labels=["x", "y"],
                          axis_labels=("across", "up")).plot(ax=ax, text_kw={"xytext": (0, 0)})
    assert one.ax_ is ax and ax.get_xlabel() == "across" and ax.get_ylabel() == "up"
    assert [t.get_text() for t in one.labels_[0]] == ["x", "y"]
    assert one.labels_[0][0].get_position() == (0, 0)


def test_shares_of_zero_and_a_single_place():
    disp = TopicMapDisplay([[0.0, 0.0]], [[0.0]], reference=[0.0]).plot()
    assert np.isfinite(disp.ax_.get_xlim()).all()
    assert _areas(disp.circles_[0]).tolist() == [0.0]


@pytest.mark.parametrize("coordinates, shares, reference", [
    ([[-1e300, 0.0], [1e300, 1.0]], [0.5, 0.5], None),
    ([[0.0, 0.0], [1e-320, 0.0]], [0.5, 0.5], [0.5, 0.5]),
    ([[0.0, 0.0], [1.0, 1.0]], [1e308, 1e308], [1e-308, 0.0]),
    ([[0.0, 0.0], [1.0, 1.0]], [1e-320, 0.0], [0.0, 1e-320]),
])
def test_extreme_values_are_drawn_without_warnings(coordinates, shares, reference):
    # (the suite turns the package's RuntimeWarnings into errors)
    disp = TopicMapDisplay(coordinates, shares, reference=reference).plot()
    disp.figure_.canvas.draw()
    assert np.isfinite(disp.ax_.get_xlim()).all() and np.isfinite(disp.ax_.get_ylim()).all()
    assert np.isfinite(_areas(disp.circles_[0])).all()


@pytest.mark.parametrize("kwargs, message", [
    ({"coordinates": [[0.0, np.nan], [1.0, 1.0]]}, "coordinates"),
    ({"coordinates": [0.0, 1.0]}, r"shape \(n_topics, 2\)"),
    ({"coordinates": [[0.0, 1j], [1.0, 1.0]]}, "coordinates as real numbers"),
    ({"coordinates": [[0.0, 0.0], [1.0]]}, "coordinates as real numbers"),
    ({"coordinates": [[-1e308, 0.0], [1e308, 1.0]]}, "too large to draw"),
    ({"coordinates": [[0.0, 0.0, 0.0], [1.0, 1.0, 1.0]]}, r"shape \(n_topics, 2\)"),
    ({"shares": [0.5, 0.5, 0.5]}, "2 numbers >= 0 per panel"),
    ({"shares": [[-0.5, 0.5]]}, "2 numbers >= 0 per panel"),
    ({"shares": [[[0.5, 0.5]]]}, "shares"),
    ({"reference": [0.5]}, "reference of TopicMapDisplay must be 2 numbers"),
    ({"reference": [np.inf, 0.5]}, "reference"),
    ({"topic_labels": ["x"]}, "topics and topic_labels"),
    ({"topics": [0, 1, 2]}, "topics and topic_labels"),
    ({"panel_labels": ["a", "b"]}, "2 entries for 1 panels"),
    ({"axis_labels": "xy"}, "two labels"),
    ({"axis_labels": ("x", "y", "z")}, "two labels"),
])
def test_bad_values_are_named(kwargs, message):
    values = {"coordinates": [[0.0, 0.0], [1.0, 1.0]], "shares": [0.5, 0.5], **kwargs}
    with pytest.raises(ValueError, match=message):
        TopicMapDisplay(values.pop("coordinates"), values.pop("shares"), **values).plot()


def test_bad_parameters(clda):
    disp = TopicMapDisplay([[0.0, 0.0], [1.0, 1.0]], [0.5, 0.5], reference=[0.2, 0.8])
    for kwargs, message in (({"n_cols": 0}, "n_cols"), ({"max_ratio": 1.0}, "max_ratio"),
                            ({"max_ratio": np.inf}, "max_ratio")):
        with pytest.raises(ValueError, match=message):
            disp.plot(**kwargs)
    with pytest.raises(InvalidParameterError, match="metric"):
        TopicMapDisplay.from_estimator(clda, metric="cosine")
    with pytest.raises(InvalidParameterError, match="top_words"):
        TopicMapDisplay.from_estimator(clda, top_words=-1)
    with pytest.raises(InvalidParameterError, match="by_collection"):
        TopicMapDisplay.from_estimator(clda, by_collection="yes")
    with pytest.raises(ValueError, match="feature_names"):
        TopicMapDisplay.from_estimator(clda, feature_names=VOCAB[:3], top_words=2)
    lda = LatentDirichletAllocation(n_components=2)
    lda.components_ = np.zeros((0, 4))
    with pytest.raises(ValueError, match="has none"):
        TopicMapDisplay.from_estimator(lda)

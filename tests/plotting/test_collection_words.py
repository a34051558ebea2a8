"""CollectionWordsDisplay: it draws topic_words_by_collection's numbers."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from numpy.testing import assert_allclose  # noqa: E402
from sklearn.utils._param_validation import InvalidParameterError  # noqa: E402

from sklearn_clda import CompoundLDA  # noqa: E402
from sklearn_clda.datasets import make_compound_corpus  # noqa: E402
from sklearn_clda.inspection import topic_words_by_collection  # noqa: E402
from sklearn_clda.plotting import CollectionWordsDisplay  # noqa: E402

pytest.importorskip("pandas")

V = 30
VOCAB = np.array([f"word{i:02d}" for i in range(V)])


@pytest.fixture(scope="module")
def fitted():
    corpus = make_compound_corpus(n_topics=3, n_features=V, n_collections=3,
                                  docs_per_collection=30, doc_length=40, random_state=0)
    groups = np.array(["a", "b", "c"])[corpus.groups]
    model = CompoundLDA(n_components=3, max_iter=60, random_state=0)
    return model.fit(corpus.data, groups=groups), corpus.data, groups


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def test_draws_the_table_s_z_scores(fitted):
    model, X, groups = fitted
    disp = CollectionWordsDisplay.from_estimator(model, X, groups, 1, feature_names=VOCAB,
                                                 n_words=4)
    table = topic_words_by_collection(model, X, groups, topic=1, n_words=4,
                                      feature_names=VOCAB)
    assert disp.axes_.shape == (1, 3) and disp.bounding_ax_ is None
    for (label, rows), panel, bars in zip(table.groupby("collection"), disp.axes_.ravel(),
                                          disp.bars_):
        assert_allclose([b.get_width() for b in bars], rows["z"])
        assert [t.get_text() for t in panel.get_yticklabels()] == rows["word"].tolist()
        tokens = rows["collection_tokens"].iloc[0]
        assert panel.get_title() == f"Topic 1 in {label} ({tokens:,.0f} tokens)"
        assert panel.yaxis_inverted()  # most distinctive word on top
        assert any(np.allclose(line.get_xdata(), 2.0) for line in panel.get_lines())
        low, _ = panel.get_xlim()
        assert low <= min(0.0, rows["z"].min())  # a negative z-score is not cut off
    assert disp.axes_[0, 2].get_xlabel() == "z-score against the others"
    assert disp.figure_ is disp.axes_[0, 0].figure
    # Against one collection: the others' panels, that collection on the axis.
    disp = CollectionWordsDisplay.from_estimator(model, X, groups, 1, feature_names=VOCAB,
                                                 n_words=4, against="b")
    table = topic_words_by_collection(model, X, groups, topic=1, n_words=4,
                                      feature_names=VOCAB, against="b")
    assert disp.axes_.shape == (1, 2)
    assert [ax.get_title().split(" (")[0] for ax in disp.axes_.ravel()] == [
        "Topic 1 in a", "Topic 1 in c"]
    assert_allclose([b.get_width() for bars in disp.bars_ for b in bars], table["z"])
    assert disp.axes_[0, 1].get_xlabel() == "z-score against b"


def test_layout_and_precomputed_values():
    disp = CollectionWordsDisplay([["x", "y"], ["u", "v"], ["p", "q"]],
                                  [[3.0, 1.0], [2.5, -1.0], [0.1, -0.5]],
                                  collections=["a", "b", "c"]).plot(n_cols=2)
    assert disp.axes_.shape == (2, 2) and not disp.axes_[1, 1].axison
    assert [ax.get_title() for ax in disp.axes_.ravel()[:3]] == ["a", "b", "c"]
    # A shared axis starts at the lowest value of all panels, its own at its lowest.
    assert all(ax.get_xlim()[0] == -1.0 for ax in disp.axes_.ravel()[:3])
    disp = CollectionWordsDisplay([["x", "y"], ["u", "v"], ["p", "q"]],
                                  [[3.0, 1.0], [2.5, -0.5], [0.1, 0.0]],
                                  collections=["a", "b", "c"]).plot(sharex=False)
    assert [ax.get_xlim()[0] for ax in disp.axes_.ravel()] == [0.0, -0.5, 0.0]
    fig, ax = plt.subplots()
    disp = CollectionWordsDisplay([["x"], ["u"]], [[1.0], [2.0]], collections=[1, 2],
                                  topic=4, tokens=[1234.4, 5.0]).plot(ax=ax)
    assert disp.bounding_ax_ is ax
    assert [a.get_title() for a in disp.axes_.ravel()] == [
        "Topic 4 in 1 (1,234 tokens)", "Topic 4 in 2 (5 tokens)"]


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(words=[["x", "y"]], z=[[1.0]], collections=["a"]), "same shape"),
        (dict(words=[["x"]], z=[[np.nan]], collections=["a"]), "finite"),
        (dict(words=[["x"], ["y"]], z=[[1.0], [2.0]], collections=["a"]), "collections has 1"),
        (dict(words=[["x"]], z=[[1.0]], collections=["a"], tokens=[1, 2]), "tokens has shape"),
    ],
)
def test_bad_values_raise(kwargs, match):
    words, z = kwargs.pop("words"), kwargs.pop("z")
    with pytest.raises(ValueError, match=match):
        CollectionWordsDisplay(words, z, **kwargs).plot()


def test_bad_arguments_raise(fitted):
    model, X, groups = fitted
    with pytest.raises(ValueError, match="topic index 7"):
        CollectionWordsDisplay.from_estimator(model, X, groups, 7)
    with pytest.raises(InvalidParameterError, match="topic"):
        CollectionWordsDisplay.from_estimator(model, X, groups, [0, 1])
    with pytest.raises(ValueError, match="one label"):
        CollectionWordsDisplay.from_estimator(model, X, np.full(len(groups), "a"), 0)

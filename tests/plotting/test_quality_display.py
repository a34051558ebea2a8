"""TopicQualityDisplay draws each topic's coherence against its exclusivity."""

import numpy as np
import pytest

pytest.importorskip("matplotlib")

import matplotlib  # noqa: E402

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
from numpy.testing import assert_allclose  # noqa: E402
from sklearn.feature_extraction.text import CountVectorizer  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.utils._param_validation import InvalidParameterError  # noqa: E402

from sklearn_clda import CompoundLDA, LDAGibbs  # noqa: E402
from sklearn_clda.datasets import make_compound_corpus  # noqa: E402
from sklearn_clda.inspection._labels import word_scores  # noqa: E402
from sklearn_clda.metrics import topic_coherence, topic_exclusivity  # noqa: E402
from sklearn_clda.plotting import TopicQualityDisplay  # noqa: E402

VOCAB = np.array([f"w{i:02d}" for i in range(30)])


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def fitted():
    corpus = make_compound_corpus(n_topics=4, n_features=30, n_collections=2,
                                  docs_per_collection=30, doc_length=40, random_state=0)
    model = CompoundLDA(n_components=4, max_iter=60, random_state=0).fit(
        corpus.data, groups=corpus.groups)
    return corpus, model


def test_points_are_the_topics_coherence_and_exclusivity(fitted):
    corpus, model = fitted
    disp = TopicQualityDisplay.from_estimator(model, corpus.data, feature_names=VOCAB)
    components = model.components_
    x = topic_coherence(corpus.data, components, 10)
    y = topic_exclusivity(components, 10, frex_weight=0.7)
    assert_allclose(disp.points_.get_offsets(), np.column_stack([x, y]))
    # areas in proportion to the topics' weight, the largest 600 points^2
    shares = components.sum(axis=1) / components.sum()
    assert_allclose(disp.points_.get_sizes(), np.maximum(600 * shares / shares.max(), 20))
    frex = np.argsort(-word_scores(components, "frex"), axis=1, kind="stable")[:, :2]
    assert [label.get_text() for label in disp.labels_] == [
        f"{k}: {' '.join(VOCAB[frex[k]])}" for k in range(4)]
    assert [label.xy for label in disp.labels_] == list(zip(x, y))
    assert disp.ax_.get_xlabel() == "Coherence (UMass) of the top 10 words"
    assert disp.ax_.get_ylabel() == "Exclusivity"


def test_measure_words_and_weight(fitted):
    corpus, model = fitted
    disp = TopicQualityDisplay.from_estimator(model, corpus.data, top_n=5, coherence="npmi",
                                              frex_weight=0.3, top_words=0)
    x = topic_coherence(corpus.data, model.components_, 5, measure="npmi")
    y = topic_exclusivity(model.components_, 5, frex_weight=0.3)
    assert_allclose(disp.points_.get_offsets(), np.column_stack([x, y]))
    assert [label.get_text() for label in disp.labels_] == ["0", "1", "2", "3"]
    assert disp.ax_.get_xlabel() == "Coherence (NPMI) of the top 5 words"
    # more words than the vocabulary: all of them
    few = LDAGibbs(n_components=2, max_iter=10, random_state=0).fit(corpus.data[:, :4])
    disp = TopicQualityDisplay.from_estimator(few, corpus.data[:, :4], top_n=10)
    assert disp.ax_.get_xlabel() == "Coherence (UMass) of the top 4 words"


def test_a_pipeline_scores_its_counts_and_names_its_words(hide_modules):
    texts = ["apple banana apple pie", "banana cherry pie apple", "dog cat dog bone",
             "cat mouse dog bone"] * 8
    pipe = make_pipeline(CountVectorizer(), LDAGibbs(n_components=2, max_iter=40,
                                                     random_state=0)).fit(texts)
    hide_modules("pandas")  # not needed
    fig, ax = plt.subplots()
    disp = TopicQualityDisplay.from_estimator(pipe, texts, ax=ax)
    assert disp.ax_ is ax and disp.figure_ is fig
    counts = pipe[0].transform(texts)
    assert_allclose(disp.points_.get_offsets()[:, 0],
                    topic_coherence(counts, pipe[-1].components_, 8))  # the 8 words
    words = set(pipe[0].get_feature_names_out())
    for label in disp.labels_:
        number, named = label.get_text().split(": ")
        assert number in {"0", "1"} and set(named.split()) <= words


@pytest.mark.parametrize("make, message", [
    (lambda: TopicQualityDisplay([1.0, np.nan], [1.0, 2.0]),
     "TopicQualityDisplay got NaN or infinite values in coherence"),
    (lambda: TopicQualityDisplay([1.0, 2.0], [1.0]),
     r"exclusivity of TopicQualityDisplay must be one number per topic \(2\), got shape "
     r"\(1,\)"),
    (lambda: TopicQualityDisplay([[1.0, 2.0]], [1.0, 2.0]),
     r"coherence of TopicQualityDisplay must be one number per topic, got shape \(1, 2\)"),
    (lambda: TopicQualityDisplay([1.0, 2.0], [1.0, 2.0], shares=[1.0, -1.0]),
     "shares of TopicQualityDisplay must be 2 numbers >= 0"),
    (lambda: TopicQualityDisplay([1.0, 2.0], [1.0, 2.0], shares=[1.0]),
     r"shares of TopicQualityDisplay must be 2 numbers >= 0, got shape \(1,\)"),
    (lambda: TopicQualityDisplay([1.0, 2.0], [1.0, 2.0], topic_labels=["a"]),
     "topics and topic_labels of TopicQualityDisplay need 2 entries each"),
    (lambda: TopicQualityDisplay([], []),
     r"coherence of shape \(n_topics,\), with at least one row and one column"),
])
def test_bad_values_are_named(make, message):
    with pytest.raises(ValueError, match=message):
        make().plot()


@pytest.mark.parametrize("params, name", [
    ({"coherence": "cv"}, "coherence"), ({"top_n": 1}, "top_n"),
    ({"frex_weight": 1.5}, "frex_weight"), ({"top_words": -1}, "top_words"),
    ({"label_method": "best"}, "label_method"),
])
def test_parameters_are_validated(fitted, params, name):
    corpus, model = fitted
    with pytest.raises(InvalidParameterError, match=name):
        TopicQualityDisplay.from_estimator(model, corpus.data, **params)


def test_an_unfitted_model():
    with pytest.raises(ValueError, match="not fitted"):
        TopicQualityDisplay.from_estimator(LDAGibbs(), [[1, 2]])


def test_labels_of_close_points_do_not_cover_each_other():
    # three points on one line, closer than their labels are long
    disp = TopicQualityDisplay([0.0, 0.05, 0.1, 5.0], [1.0, 1.0, 1.0, 2.0],
                               topic_labels=["a long label", "another long label",
                                             "a third long label", "far"]).plot()
    boxes = [label.get_window_extent() for label in disp.labels_]
    for i, box in enumerate(boxes):
        assert not any(box.overlaps(other) for other in boxes[i + 1:]), i
    assert disp.labels_[0].xyann == (4, 4) and disp.labels_[3].xyann == (4, 4)
    assert {label.xyann for label in disp.labels_[:3]} == {(4, 4), (4, -4), (-4, 4)}
    # a place the user gives is kept
    disp = TopicQualityDisplay([0.0, 0.05], [1.0, 1.0]).plot(text_kw={"xytext": (0, 8)})
    assert [label.xyann for label in disp.labels_] == [(0, 8), (0, 8)]

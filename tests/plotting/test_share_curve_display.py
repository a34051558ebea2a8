"""TopicShareCurveDisplay draws topic_share_curves: a line and band per topic."""

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

pytest.importorskip("matplotlib")
pd = pytest.importorskip("pandas")

import matplotlib.pyplot as plt  # noqa: E402
from sklearn.feature_extraction.text import CountVectorizer  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402

from sklearn_clda import CompoundLDA  # noqa: E402
from sklearn_clda.datasets import make_compound_corpus  # noqa: E402
from sklearn_clda.inspection import topic_share_curves  # noqa: E402
from sklearn_clda.plotting import TopicShareCurveDisplay  # noqa: E402


@pytest.fixture(scope="module")
def fitted():
    corpus = make_compound_corpus(n_topics=8, n_features=40, n_collections=2,
                                  docs_per_collection=60, doc_length=(20, 60), random_state=0)
    model = CompoundLDA(n_components=8, max_iter=60, random_state=0)
    model.fit(corpus.data, groups=corpus.groups)
    year = np.random.default_rng(0).uniform(2000, 2020, size=corpus.data.shape[0])
    curves = topic_share_curves(model, corpus.data, pd.Series(year, name="year"),
                                corpus.groups, n_points=12, ci=0.8, random_state=0)
    return model, corpus, year, curves


def _band(band):
    """The lower and upper ends of a fill_between band, point by point."""
    vertices = band.get_paths()[0].vertices
    n = (len(vertices) - 3) // 2
    return vertices[1:n + 1, 1], vertices[n + 2:2 * n + 2, 1][::-1]


def test_lines_and_bands_are_the_curves_of_the_topics_that_vary_most(fitted):
    model, corpus, year, curves = fitted
    disp = TopicShareCurveDisplay.from_curves(curves)
    spans = curves.groupby("topic").estimate.agg(np.ptp)
    expected = spans.sort_values(ascending=False, kind="stable").index[:6]
    assert sorted(int(line.get_label().split()[1]) for line in disp.lines_) == sorted(expected)
    for line, band in zip(disp.lines_, disp.fill_between_):
        k = int(line.get_label().split()[1])
        rows = curves[curves.topic == k]
        assert_allclose(line.get_xdata(), rows.value)
        assert_allclose(line.get_ydata(), rows.estimate)
        lower, upper = _band(band)
        assert_allclose(lower, rows.lower)
        assert_allclose(upper, rows.upper)
    assert disp.ax_.get_xlabel() == "year"
    assert disp.ax_.get_title() == "Topic shares along year (80% intervals)"
    assert disp.legend_ is not None
    plt.close("all")


def test_chosen_topics_in_their_order_with_labels(fitted):
    model, corpus, year, curves = fitted
    labels = [f"t{k}" for k in range(8)]
    disp = TopicShareCurveDisplay.from_curves(curves, topics=[5, 2], topic_labels=labels,
                                              legend=False)
    assert [line.get_label() for line in disp.lines_] == ["t5", "t2"]
    assert_allclose(disp.lines_[1].get_ydata(), curves[curves.topic == 2].estimate)
    assert disp.legend_ is None
    plt.close("all")


def test_from_estimator_labels_a_pipeline_s_topics_with_words():
    texts = ["goal match team " * 3, "bank rate bond " * 3, "goal team bond"] * 20
    year = np.arange(60) % 20 + 2000.0
    pipe = make_pipeline(CountVectorizer(), CompoundLDA(n_components=2, max_iter=30,
                                                        random_state=0))
    pipe.fit(texts, compoundlda__groups=np.arange(60) % 2)
    disp = TopicShareCurveDisplay.from_estimator(pipe, texts, year, np.arange(60) % 2,
                                                 n_knots=3, n_points=5, n_samples=3,
                                                 burn_in=1, random_state=0, top_words=2)
    assert len(disp.lines_) == 2
    assert all(line.get_label().startswith("Topic ") and ": " in line.get_label()
               for line in disp.lines_)
    assert disp.ax_.get_xlabel() == "x"  # (an array has no name)
    plt.close("all")


@pytest.mark.parametrize("kw, message", [
    ({"shares": [[0.1, np.nan]]}, "NaN or infinite values in shares"),
    ({"x": [1.0, 2.0]}, "x must hold 1 finite values"),
    ({"lower": [[0.0]], "upper": [[0.2]]}, "lower and upper must have the shape of shares"),
    ({"topic_labels": ["a"]}, "topic_labels has 1 entries for 2 topics"),
])
def test_bad_values_are_named_before_drawing(kw, message):
    values = {"x": [1.0], "shares": [[0.1, 0.2]], **kw}
    x, shares = values.pop("x"), values.pop("shares")
    with pytest.raises(ValueError, match=message):
        TopicShareCurveDisplay(x, shares, **values).plot()
    plt.close("all")


@pytest.mark.parametrize("table, kw, message", [
    (lambda c: c.drop(columns="lower"), {}, r"it lacks \['lower'\]"),
    (lambda c: c.iloc[:-1], {}, "the same points for every topic"),
    (lambda c: c, {"topics": [9]}, r"\[9\] are not among"),
    (lambda c: c, {"topic_labels": ["a"]}, "topic_labels has 1 entries for the table's 8"),
])
def test_a_table_that_is_not_curves_is_named(fitted, table, kw, message):
    curves = fitted[3]
    with pytest.raises(ValueError, match=message):
        TopicShareCurveDisplay.from_curves(table(curves), **kw)
    plt.close("all")


def test_the_trend_display_draws_as_before(fitted):
    """(The bands moved into a helper both displays share.)"""
    from sklearn_clda.plotting import CollectionTrendDisplay

    disp = CollectionTrendDisplay([1.0, 2.0], [[0.1, 0.3], [0.2, 0.4]],
                                  lower=[[0.0, 0.2], [0.1, 0.3]],
                                  upper=[[0.2, 0.4], [0.3, 0.5]]).plot()
    assert [line.get_marker() for line in disp.lines_] == ["o", "o"]
    assert_array_equal(disp.lines_[1].get_ydata(), [0.3, 0.4])
    assert len(disp.fill_between_) == 2 and disp.ax_.get_xlabel() == "Collection"
    plt.close("all")

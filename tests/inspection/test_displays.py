"""CollectionTrendDisplay and SelectNComponentsDisplay draw the right numbers."""


import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from numpy.testing import assert_allclose  # noqa: E402

from sklearn_clda import CompoundLDA  # noqa: E402
from sklearn_clda.datasets import make_compound_corpus  # noqa: E402
from sklearn_clda.inspection import select_n_components  # noqa: E402
from sklearn_clda.plotting import (  # noqa: E402
    CollectionDifferenceDisplay,
    CollectionTopicDisplay,
    CollectionTrendDisplay,
    CollectionWordsDisplay,
    TopicCorrelationDisplay,
    SelectNComponentsDisplay,
)

VOCAB = np.array([f"w{i:02d}" for i in range(30)])


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def corpus():
    return make_compound_corpus(n_topics=3, n_features=30, n_collections=4,
                                docs_per_collection=20, doc_length=40, random_state=0)


def fit(corpus, labels, **params):
    groups = np.asarray(labels)[corpus.groups]
    params = {"n_components": 3, "max_iter": 80, "thin": 2, "random_state": 0, **params}
    return CompoundLDA(**params).fit(corpus.data, groups=groups)


def band(poly, n):
    """(lower, upper) of a fill_between band over n points."""
    v = poly.get_paths()[0].vertices
    return v[1:1 + n, 1], v[n + 2:2 * n + 2, 1][::-1]


def test_trend_draws_means_and_intervals_at_the_years(corpus):
    clda = fit(corpus, [2010, 2001, 2005, 2002])
    disp = CollectionTrendDisplay.from_estimator(clda, topics=[2, 0], ci=0.8)
    # groups_ is sorted: 2001, 2002, 2005, 2010.
    samples = clda.collection_topic_samples_
    lower, upper = np.quantile(samples, [0.1, 0.9], axis=0)
    assert len(disp.lines_) == 2
    for line, poly, k in zip(disp.lines_, disp.fill_between_, [2, 0]):
        assert_allclose(line.get_xdata(), [2001, 2002, 2005, 2010])
        assert_allclose(line.get_ydata(), samples[:, :, k].mean(axis=0))
        lo, hi = band(poly, 4)
        assert_allclose(lo, lower[:, k])
        assert_allclose(hi, upper[:, k])
    assert [t.get_text() for t in disp.legend_.get_texts()] == ["Topic 2", "Topic 0"]
    assert "80% posterior intervals" in disp.ax_.get_title()


def test_trend_pools_chains_lined_up_with_the_first(corpus):
    """A list of fits draws the lined-up draws pooled, in the first fit's topics."""
    from sklearn_clda.inspection import align_chains

    fits = [fit(corpus, [2010, 2001, 2005, 2002], random_state=seed) for seed in range(3)]
    draws = align_chains(fits).draws.reshape(-1, 4, 3)
    lower, upper = np.quantile(draws, [0.05, 0.95], axis=0)
    disp = CollectionTrendDisplay.from_estimator(fits, topics=[1, 2])
    for line, poly, k in zip(disp.lines_, disp.fill_between_, [1, 2]):
        assert_allclose(line.get_ydata(), draws[:, :, k].mean(axis=0))
        lo, hi = band(poly, 4)
        assert_allclose(lo, lower[:, k])
        assert_allclose(hi, upper[:, k])
    assert_allclose(
        CollectionTrendDisplay.from_estimator(fits, topics=[1], ci=None).lines_[0].get_ydata(),
        draws[:, :, 1].mean(axis=0))
    with pytest.raises(ValueError, match="needs two fits or more"):
        CollectionTrendDisplay.from_estimator(fits[:1])


def test_trend_of_groups_of_topics(corpus):
    clda = fit(corpus, [2010, 2001, 2005, 2002])
    groups = {"zero and two": [0, 2], "one": [1]}
    disp = CollectionTrendDisplay.from_estimator(clda, topic_groups=groups, ci=0.8)
    summed = clda.collection_topic_samples_[:, :, [0, 2]].sum(axis=2)
    lower, upper = np.quantile(summed, [0.1, 0.9], axis=0)
    shown = [t.get_text() for t in disp.legend_.get_texts()]
    assert sorted(shown) == ["one", "zero and two"]
    line, poly = disp.lines_[shown.index("zero and two")], disp.fill_between_[
        shown.index("zero and two")]
    assert_allclose(line.get_ydata(), summed.mean(axis=0))
    assert_allclose(band(poly, 4), (lower, upper))
    disp = CollectionTrendDisplay.from_estimator(clda, topic_groups=[1, 2, 1], topics=[1],
                                                 ci=None)
    assert [t.get_text() for t in disp.legend_.get_texts()] == ["2"]
    assert_allclose(disp.lines_[0].get_ydata(), clda.collection_topic_samples_[:, :, 1]
                    .mean(axis=0))


def test_trend_numeric_strings_sort_as_numbers(corpus):
    clda = fit(corpus, ["10", "2", "1", "30"], max_iter=40)
    disp = CollectionTrendDisplay.from_estimator(clda, ci=None)
    assert_allclose(disp.lines_[0].get_xdata(), [1, 2, 10, 30])
    # groups_ is sorted as strings ("1", "10", "2", "30"): the line follows
    # the numbers, not that order.
    k = disp.topics[0]
    assert_allclose(disp.lines_[0].get_ydata(), clda.collection_topic_[[0, 2, 1, 3], k])
    assert disp.fill_between_ is None


def test_trend_iso_dates(corpus):
    clda = fit(corpus, ["2021-03", "2020-01", "2020-07", "2021-01"], max_iter=40)
    disp = CollectionTrendDisplay.from_estimator(clda, ci=None)
    x = disp.lines_[0].get_xdata()
    assert x.dtype.kind == "M"
    assert x.astype(str).tolist() == ["2020-01", "2020-07", "2021-01", "2021-03"]


def test_trend_order_and_labels(corpus):
    clda = fit(corpus, ["low", "high", "mid", "top"], max_iter=40)
    with pytest.raises(ValueError, match="Pass order="):
        CollectionTrendDisplay.from_estimator(clda)
    disp = CollectionTrendDisplay.from_estimator(
        clda, order=["low", "mid", "high"], topics=[1], feature_names=VOCAB, top_words=2,
    )
    assert_allclose(disp.lines_[0].get_xdata(), [0, 1, 2])
    # groups_ sorted: high, low, mid, top.
    assert_allclose(disp.lines_[0].get_ydata(), clda.collection_topic_[[1, 2, 0], 1])
    lower, upper = np.quantile(clda.collection_topic_samples_[:, [1, 2, 0], 1],
                               [0.05, 0.95], axis=0)
    lo, hi = band(disp.fill_between_[0], 3)
    assert_allclose(lo, lower)
    assert_allclose(hi, upper)
    assert [t.get_text() for t in disp.ax_.get_xticklabels()] == ["low", "mid", "high"]
    label = disp.legend_.get_texts()[0].get_text()
    assert label.startswith("Topic 1: ") and len(label.split()) == 4
    with pytest.raises(ValueError, match="order='none' passed to CollectionTrendDisplay"):
        CollectionTrendDisplay.from_estimator(clda, order=["low", "none"])
    with pytest.raises(ValueError, match="order passed to CollectionTrendDisplay.from_estimator "
                                         "repeats collections"):
        CollectionTrendDisplay.from_estimator(clda, order=["low", "low"])


def test_displays_need_no_pandas(corpus, hide_modules):
    clda = fit(corpus, [1, 2, 3, 4], max_iter=40)
    hide_modules("pandas")
    CollectionTrendDisplay.from_estimator(clda)
    SelectNComponentsDisplay.from_estimator(
        CompoundLDA(max_iter=10, random_state=0), corpus.data, corpus.groups,
        n_components=[2], cv=2,
    )
    CollectionTopicDisplay.from_estimator(clda)


def test_displays_of_inspection_tables_name_themselves_without_pandas(corpus, hide_modules):
    clda = fit(corpus, [1, 2, 3, 4], max_iter=40)
    groups = np.array([1, 2, 3, 4])[corpus.groups]
    hide_modules("pandas")
    for make, via in [
        (lambda: CollectionDifferenceDisplay.from_estimator(clda, 1, 2),
         "compare_collections"),
        (lambda: CollectionWordsDisplay.from_estimator(clda, corpus.data, groups, 0),
         "topic_words_by_collection"),
        (lambda: TopicCorrelationDisplay.from_estimator(clda), "topic_correlation"),
    ]:
        with pytest.raises(ImportError, match=rf"Display.from_estimator draws the pandas "
                                              rf"DataFrame of {via}, but pandas"):
            make()


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_topic_display_of_a_point_estimate_warns_and_draws_no_intervals(corpus):
    vem = CompoundLDA(n_components=3, algorithm="vem", max_iter=5, random_state=0)
    vem.fit(corpus.data, groups=corpus.groups)
    with pytest.warns(UserWarning, match="draws no intervals: the model kept 1 draw"):
        disp = CollectionTopicDisplay.from_estimator(vem)
    assert disp.lower is None and disp.errorbars_ is None
    assert "interval" not in disp.ax_.get_title()


def test_trend_default_topics_vary_most(corpus):
    clda = fit(corpus, [1, 2, 3, 4], max_iter=40)
    disp = CollectionTrendDisplay.from_estimator(clda, n_topics=1, ci=None)
    spread = np.ptp(clda.collection_topic_, axis=0)
    assert disp.topics.tolist() == [int(np.argmax(spread))]


def test_trend_errors(corpus):
    single = CompoundLDA(n_components=3, max_iter=20, random_state=0).fit(corpus.data)
    with pytest.raises(ValueError, match="several collections"):
        CollectionTrendDisplay.from_estimator(single)
    vem = CompoundLDA(n_components=3, algorithm="vem", max_iter=5, random_state=0)
    with pytest.warns(Warning):
        vem.fit(corpus.data, groups=corpus.groups)
    with pytest.raises(ValueError, match="point estimate"):
        CollectionTrendDisplay.from_estimator(vem)
    disp = CollectionTrendDisplay.from_estimator(vem, ci=None)
    assert_allclose(disp.lines_[0].get_ydata(), vem.collection_topic_[:, disp.topics[0]])
    with pytest.raises(ValueError, match="one position per row"):
        CollectionTrendDisplay([1, 2], np.ones((3, 2))).plot()


@pytest.fixture(scope="module")
def results(corpus):
    return select_n_components(
        CompoundLDA(max_iter=30, random_state=0), corpus.data, corpus.groups,
        n_components=[4, 2], cv=2, random_state=0,
    )


def test_select_display_from_results(results):
    disp = SelectNComponentsDisplay.from_results(results)
    assert disp.axes_.shape == (2, 3)
    for name in ("perplexity", "coherence", "exclusivity", "stability", "dispersion",
                 "fit_time"):
        assert_allclose(disp.lines_[name].get_xdata(), [2, 4])
        assert_allclose(disp.lines_[name].get_ydata(), results[name])
        lo, hi = band(disp.fill_between_[name], 2)
        assert_allclose(lo, results[name] - results[f"{name}_std"])
        assert_allclose(hi, results[name] + results[f"{name}_std"])
    titles = [ax.get_title() for ax in disp.axes_.ravel()]
    assert titles == ["Held-out perplexity", "Coherence", "Exclusivity",
                      "Stability across folds", "Residual dispersion", "Fit time (s)"]
    assert all(ax.axison for ax in disp.axes_.ravel())
    # The top row's shared x ticks are labelled only at the bottom.
    disp.figure_.canvas.draw()
    for panel, labelled in ((disp.axes_[1, 2], True), (disp.axes_[0, 2], False)):
        assert panel.get_xlabel() == ("Number of topics" if labelled else "")
        assert any(t.get_visible() and t.get_text() for t in panel.get_xticklabels()) \
            == labelled


def test_select_display_in_a_grid_of_eight(results):
    # A figure of the user's with more Axes than panels: the rest are
    # switched off.
    fig, axes = plt.subplots(2, 4)
    disp = SelectNComponentsDisplay.from_results(results, ax=axes)
    assert disp.figure_ is fig and disp.lines_["fit_time"].axes is axes[1, 1]
    assert not axes[1, 2].axison and not axes[1, 3].axison and axes[1, 1].axison
    with pytest.raises(ValueError, match="at least 6 Axes"):
        SelectNComponentsDisplay.from_results(results, ax=axes.ravel()[:5])
    plt.close(fig)


def test_select_display_from_estimator(corpus, results):
    disp = SelectNComponentsDisplay.from_estimator(
        CompoundLDA(max_iter=30, random_state=0), corpus.data, corpus.groups,
        n_components=[4, 2], cv=2, random_state=0, n_cols=6,
    )
    assert disp.axes_.shape == (1, 6)
    # Same folds and seeds: the same numbers as the search (but the time).
    for name in ("perplexity", "coherence", "exclusivity", "stability", "dispersion"):
        assert_allclose(disp.lines_[name].get_ydata(), results[name])


def test_select_display_errors():
    with pytest.raises(ValueError, match="'n_components'"):
        SelectNComponentsDisplay.from_results({"perplexity": [1.0]})
    with pytest.raises(ValueError, match="no 'coherence'"):
        SelectNComponentsDisplay.from_results({"n_components": [2], "perplexity": [1.0]})
    with pytest.raises(ValueError, match="scores\\['perplexity'\\] passed to "
                                         "SelectNComponentsDisplay has 1 values for 2"):
        SelectNComponentsDisplay(
            [2, 3], {"perplexity": [1.0], "coherence": [1.0, 2.0],
                     "exclusivity": [1.0, 2.0], "stability": [1.0, 1.0],
                     "dispersion": [2.0, 1.5], "fit_time": [1.0, 2.0]}).plot()
    full = {name: [1.0, 2.0] for name in
            ["perplexity", "coherence", "exclusivity", "stability", "dispersion",
             "fit_time"]}
    with pytest.raises(ValueError, match="std\\['perplexity'\\] passed to "
                                         "SelectNComponentsDisplay has 1 values for 2 points"):
        SelectNComponentsDisplay([2, 3], full, std={"perplexity": [0.1]}).plot()
    with pytest.raises(ValueError, match="no 'stability'"):
        SelectNComponentsDisplay(
            [2], {"perplexity": [1.0], "coherence": [1.0], "exclusivity": [1.0],
                  "dispersion": [1.0], "fit_time": [1.0]}).plot()
    with pytest.raises(ValueError, match="no 'dispersion'"):
        SelectNComponentsDisplay(
            [2], {"perplexity": [1.0], "coherence": [1.0], "exclusivity": [1.0],
                  "stability": [1.0], "fit_time": [1.0]}).plot()


@pytest.mark.parametrize("labels", [["1e308", "-1e308", "1.7e308"], ["1", "nan"],
                                    ["2021", "NaT", "2022"], ["now", "today", "2020"],
                                    ["2021-05", "May 2021"]])
def test_labels_that_do_not_order_collections(labels):
    from sklearn_clda.plotting._trend import _as_dates, _as_numbers

    labels = np.asarray(labels, dtype=object)
    assert _as_numbers(labels) is None and _as_dates(labels) is None


def test_labels_that_order_collections():
    from sklearn_clda.plotting._trend import _as_dates, _as_numbers

    assert _as_numbers(np.asarray(["1e300", "-1e300", "3"], dtype=object)).tolist() == [
        1e300, -1e300, 3.0]
    dates = _as_dates(np.asarray(["2021-05", "2021-06-02", "2022-01-01T10:30"], dtype=object))
    assert dates.dtype.kind == "M" and np.all(np.diff(dates) > np.timedelta64(0, "s"))

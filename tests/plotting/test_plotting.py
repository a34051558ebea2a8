"""Tests of sklearn_clda.plotting: the data each display draws, its artists,
the axes handling and the validation of arguments."""


import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.container import BarContainer, ErrorbarContainer  # noqa: E402
from numpy.testing import assert_allclose, assert_array_equal  # noqa: E402
from sklearn.decomposition import LatentDirichletAllocation  # noqa: E402
from sklearn.exceptions import NotFittedError  # noqa: E402
from sklearn.feature_extraction.text import CountVectorizer  # noqa: E402
from sklearn.model_selection import GridSearchCV  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402

from sklearn_clda import CompoundLDA, LDAGibbs  # noqa: E402
from sklearn_clda.datasets import make_compound_corpus  # noqa: E402
from sklearn_clda.plotting import (  # noqa: E402
    CollectionTopicDisplay,
    PerplexityDisplay,
    PiTraceDisplay,
    TopicWordsDisplay,
    TraceDisplay,
    autocorrelation,
)

K = 4
V = 30
J = 3
VOCAB = np.array([f"word{i:02d}" for i in range(V)])


# --------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def corpus():
    return make_compound_corpus(
        n_topics=K, n_features=V, n_collections=J, docs_per_collection=30,
        doc_length=40, random_state=0,
    )


@pytest.fixture(scope="module")
def clda(corpus):
    return CompoundLDA(n_components=K, max_iter=60, thin=5, random_state=0).fit(
        corpus.data, groups=corpus.groups
    )


@pytest.fixture(scope="module")
def clda_chain(corpus):
    """Keeps every sweep after burn-in (60 draws) and traces the priors."""
    return CompoundLDA(
        n_components=K, max_iter=120, thin=1, evaluate_every=5,
        learn_priors=True, random_state=0,
    ).fit(corpus.data, groups=corpus.groups)


@pytest.fixture(scope="module")
def clda_single(corpus):
    return CompoundLDA(n_components=K, max_iter=60, random_state=0).fit(corpus.data)


@pytest.fixture(scope="module")
def lda(corpus):
    return LDAGibbs(n_components=K, max_iter=60, evaluate_every=10, random_state=0).fit(
        corpus.data
    )


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def topic_word(model):
    return model.components_ / model.components_.sum(axis=1, keepdims=True)


def containers(ax, kind):
    return [c for c in ax.containers if isinstance(c, kind)]


# ---------------------------------------------------------- autocorrelation
def direct_acf(x, lag):
    """r_k = sum_t (x_t - m)(x_{t+k} - m) / sum_t (x_t - m)^2, term by term."""
    n = len(x)
    m = sum(x) / n
    num = sum((x[t] - m) * (x[t + lag] - m) for t in range(n - lag))
    den = sum((x[t] - m) ** 2 for t in range(n))
    return num / den


def test_autocorrelation_matches_direct_formula():
    rng = np.random.default_rng(0)
    x = np.cumsum(rng.standard_normal(37))  # strongly autocorrelated
    acf = autocorrelation(x, max_lag=20)
    assert acf.shape == (21,)
    assert acf[0] == 1.0
    assert_allclose(acf, [direct_acf(x.tolist(), k) for k in range(21)], atol=1e-12)
    # Every lag by default, and the same values per column of a 3-D array.
    assert_allclose(autocorrelation(x)[:21], acf, atol=1e-12)
    stack = rng.random((25, 2, 3))
    acf3 = autocorrelation(stack, max_lag=8)
    assert acf3.shape == (9, 2, 3)
    assert_array_equal(acf3[0], 1.0)
    for j in range(2):
        for k in range(3):
            col = stack[:, j, k].tolist()
            assert_allclose(acf3[:, j, k], [direct_acf(col, lag) for lag in range(9)],
                            atol=1e-12)


def test_autocorrelation_edge_cases():
    assert_allclose(autocorrelation([1.0, 2.0, 3.0, 4.0]), [1.0, 0.25, -0.3, -0.45])
    # max_lag beyond the series is clipped; lag 0 alone is 1.
    assert autocorrelation(np.arange(5.0), max_lag=50).shape == (5,)
    assert_array_equal(autocorrelation(np.arange(5.0), max_lag=0), [1.0])
    # A constant series has no autocorrelation beyond lag 0.
    acf = autocorrelation(np.full(6, 0.3), max_lag=3)
    assert acf[0] == 1.0 and np.isnan(acf[1:]).all()
    for bad in (-1, 1.5, True, np.True_):
        with pytest.raises(ValueError, match="max_lag"):
            autocorrelation(np.arange(5.0), max_lag=bad)
    with pytest.raises(ValueError, match="at least 2 draws"):
        autocorrelation([1.0])
    with pytest.raises(ValueError, match="NaN"):
        autocorrelation([1.0, np.nan, 2.0])


# --------------------------------------------------- CollectionTopicDisplay
def test_collection_topic_bars(clda):
    disp = CollectionTopicDisplay.from_estimator(clda, interval=0.9)
    pi = clda.collection_topic_
    # K=4 < 6: every topic, ordered by decreasing spread across collections.
    spread = pi.max(axis=0) - pi.min(axis=0)
    assert_array_equal(disp.topics, np.argsort(-spread, kind="stable"))
    assert sorted(disp.topics.tolist()) == list(range(K))

    bars = containers(disp.ax_, BarContainer)
    assert len(bars) == len(disp.bars_) == J
    lower, upper = np.quantile(
        clda.collection_topic_samples_[:, :, disp.topics], [0.05, 0.95], axis=0
    )
    assert len(disp.errorbars_) == len(containers(disp.ax_, ErrorbarContainer)) == J
    for j, (container, err) in enumerate(zip(disp.bars_, disp.errorbars_)):
        assert len(container) == K
        heights = [patch.get_height() for patch in container]
        assert_allclose(heights, pi[j, disp.topics])
        segments = err.lines[2][0].get_segments()
        assert_allclose([seg[0, 1] for seg in segments], lower[j])
        assert_allclose([seg[1, 1] for seg in segments], upper[j])
        # The error bar sits on its bar.
        centres = [p.get_x() + p.get_width() / 2 for p in container]
        assert_allclose([seg[0, 0] for seg in segments], centres)
    legend = [t.get_text() for t in disp.legend_.get_texts()]
    assert legend == ["0", "1", "2"]
    ticks = [t.get_text() for t in disp.ax_.get_xticklabels()]
    assert ticks == [f"Topic {k}" for k in disp.topics]
    assert disp.figure_ is disp.ax_.figure
    assert disp.im_ is None and disp.text_ is None


def test_collection_topic_bars_options(clda):
    fig, ax = plt.subplots()
    disp = CollectionTopicDisplay.from_estimator(
        clda, topics=[3, 1], interval=None, feature_names=VOCAB, top_words=2,
        label_method="prob", ax=ax,
    )
    assert disp.ax_ is ax and disp.figure_ is fig
    assert disp.errorbars_ is None
    assert containers(ax, ErrorbarContainer) == []
    heights = [[p.get_height() for p in c] for c in disp.bars_]
    assert_allclose(heights, clda.collection_topic_[:, [3, 1]])
    phi = topic_word(clda)
    ticks = [t.get_text() for t in ax.get_xticklabels()]
    for tick, k in zip(ticks, [3, 1]):
        top = VOCAB[np.argsort(-phi[k], kind="stable")[:2]]
        assert tick.split("\n") == [f"Topic {k}", *top]
    # n_topics picks the largest spreads.
    disp = CollectionTopicDisplay.from_estimator(clda, n_topics=2)
    assert len(disp.bars_[0]) == 2


def test_collection_topic_groups_of_topics(clda):
    groups = {"zero and three": [0, 3], "one": [1], "two": [2]}
    disp = CollectionTopicDisplay.from_estimator(clda, topic_groups=groups, interval=0.8,
                                                 feature_names=VOCAB, topics=[0, 2])
    summed = clda.collection_topic_samples_[:, :, [0, 3]].sum(axis=2)
    lower, upper = np.quantile(summed, [0.1, 0.9], axis=0)
    assert [t.get_text() for t in disp.ax_.get_xticklabels()] == ["zero and three", "two"]
    for j, (container, err) in enumerate(zip(disp.bars_, disp.errorbars_)):
        assert_allclose(container[0].get_height(), clda.collection_topic_[j, [0, 3]].sum())
        assert_allclose(container[1].get_height(), clda.collection_topic_[j, 2])
        segment = err.lines[2][0].get_segments()[0]
        assert_allclose([segment[0, 1], segment[1, 1]], [lower[j], upper[j]])
    heat = CollectionTopicDisplay.from_estimator(clda, kind="heatmap", topic_groups=[1, 1, 2, 1])
    assert_allclose(heat.im_.get_array(), np.column_stack([
        clda.collection_topic_[:, [0, 1, 3]].sum(axis=1), clda.collection_topic_[:, 2]]).T)


def test_collection_topic_heatmap(clda):
    disp = CollectionTopicDisplay.from_estimator(clda, kind="heatmap")
    assert_allclose(disp.im_.get_array(), clda.collection_topic_.T)
    assert disp.colorbar_ is not None
    assert disp.text_.shape == (K, J)
    assert disp.text_[2, 1].get_text() == format(clda.collection_topic_[1, 2], ".0%")
    assert [t.get_text() for t in disp.ax_.get_xticklabels()] == ["0", "1", "2"]
    assert disp.bars_ is None
    # Without annotations or colorbar, on a given axes, a subset of topics.
    fig, ax = plt.subplots()
    disp = CollectionTopicDisplay.from_estimator(
        clda, kind="heatmap", topics=[0, 2], annotate=False, colorbar=False, ax=ax
    )
    assert disp.ax_ is ax and disp.text_ is None and disp.colorbar_ is None
    assert disp.im_.get_array().shape == (2, J)


def test_collection_topic_points(clda):
    """A panel per topic, a row per collection (the first on top): each
    marker at the collection's proportion, its interval's ends at the
    quantiles of the kept draws."""
    disp = CollectionTopicDisplay.from_estimator(clda, kind="points", interval=0.9)
    pi = clda.collection_topic_
    lower, upper = np.quantile(
        clda.collection_topic_samples_[:, :, disp.topics], [0.05, 0.95], axis=0
    )
    assert disp.axes_.shape == (1, K) and len(disp.points_) == K
    assert disp.ax_ is disp.axes_[0, 0] and disp.bars_ is None and disp.legend_ is None
    rows = np.arange(J)[::-1]
    for i, (panel, points) in enumerate(zip(disp.axes_.ravel(), disp.points_)):
        k = disp.topics[i]
        x, y = points.lines[0].get_data()
        assert_allclose(x, pi[:, k])
        assert_allclose(y, rows)
        segments = points.lines[2][0].get_segments()
        assert_allclose([seg[0, 0] for seg in segments], lower[:, i])
        assert_allclose([seg[1, 0] for seg in segments], upper[:, i])
        assert_allclose([seg[0, 1] for seg in segments], rows)
        assert panel.get_xlim()[0] == 0
        assert panel.get_title().startswith(f"Topic {k}")
        assert_array_equal(panel.get_yticks(), rows)
    # The rows are named once, left of the first panel (the panels share them).
    assert [t.get_text() for t in disp.ax_.get_yticklabels()] == ["0", "1", "2"]
    # The suptitle (Figure.get_suptitle is matplotlib 3.8+).
    assert any("90%" in t.get_text() for t in disp.figure_.texts)


def test_collection_topic_points_layout_and_axes(clda):
    disp = CollectionTopicDisplay.from_estimator(clda, kind="points", n_cols=2,
                                                 interval=None)
    assert disp.axes_.shape == (2, 2)
    assert all(not p.lines[1] and not p.lines[2] for p in disp.points_)  # no intervals
    fig, axes = plt.subplots(1, 2)
    disp = CollectionTopicDisplay.from_estimator(clda, kind="points", topics=[2, 0],
                                                 ax=axes)
    assert disp.figure_ is fig and disp.ax_ is axes[0]
    assert_allclose(disp.points_[1].lines[0].get_xdata(), clda.collection_topic_[:, 0])
    with pytest.raises(ValueError, match="at least 2"):
        CollectionTopicDisplay.from_estimator(clda, kind="points", topics=[2, 0],
                                              ax=axes[:1])
    with pytest.raises(ValueError, match="n_cols"):
        CollectionTopicDisplay.from_estimator(clda, kind="points", n_cols=0)
    with pytest.raises(ValueError, match="shape of proportions"):
        CollectionTopicDisplay([[0.5, 0.5]], lower=[[0.1]], upper=[[0.9]]).plot(kind="points")


@pytest.mark.parametrize("n_collections, upright", [(12, False), (13, True)])
def test_heatmap_of_many_collections_stands_their_labels_upright(n_collections, upright):
    """Past 12 collections the columns narrow and their labels stand
    upright, so that 48 collections make a figure a page can show (it was
    45 inches wide)."""
    props = np.full((n_collections, 3), 1 / 3)
    labels = [f"outlet {j}" for j in range(n_collections)]
    disp = CollectionTopicDisplay(props, collection_labels=labels).plot(kind="heatmap")
    rotations = {t.get_rotation() for t in disp.ax_.get_xticklabels()}
    assert rotations == ({90.0} if upright else {0.0})
    width = disp.figure_.get_size_inches()[0]
    assert width < (0.4 if upright else 1.0) * n_collections + 4


@pytest.mark.parametrize("labels", [
    [f"outlet {j}" for j in range(12)],
    ["Frankfurter Allgemeine Zeitung", "Le Monde diplomatique", "The New York Times",
     "Neue Zuercher Zeitung", "Corriere della Sera", "El Pais"],
    [f"Regional newspaper number {j}" for j in range(20)],
])
def test_heatmap_collection_labels_never_overlap(labels):
    # Six outlets' names overlapped, unreadable, in columns 0.9 in wide.
    props = np.full((len(labels), 3), 1 / 3)
    disp = CollectionTopicDisplay(props, collection_labels=labels).plot(kind="heatmap")
    disp.figure_.canvas.draw()
    renderer = disp.figure_.canvas.get_renderer()
    boxes = [t.get_window_extent(renderer) for t in disp.ax_.get_xticklabels()]
    assert len(boxes) == len(labels)
    for left, right in zip(boxes, boxes[1:]):
        assert left.x1 <= right.x0 + 0.5, (left, right)


def test_collection_topic_single_collection(clda_single):
    disp = CollectionTopicDisplay.from_estimator(clda_single, interval=None)
    assert len(disp.bars_) == 1
    assert [t.get_text() for t in disp.legend_.get_texts()] == ["all"]
    # With one collection, topics are ranked by their proportion.
    assert_array_equal(disp.topics, np.argsort(-clda_single.collection_topic_[0]))
    disp = CollectionTopicDisplay.from_estimator(clda_single, kind="heatmap", interval=None)
    assert disp.im_.get_array().shape == (K, 1)


def test_collection_topic_pipeline_vocabulary(corpus):
    rows, cols = corpus.data.nonzero()
    counts = np.asarray(corpus.data[rows, cols]).ravel()
    texts = [[] for _ in range(corpus.data.shape[0])]
    for r, c, n in zip(rows, cols, counts):
        texts[r].extend([VOCAB[c]] * n)
    texts = [" ".join(words) for words in texts]
    pipe = make_pipeline(CountVectorizer(), CompoundLDA(n_components=K, max_iter=30,
                                                        random_state=0))
    pipe.fit(texts, compoundlda__groups=corpus.groups)
    disp = CollectionTopicDisplay.from_estimator(pipe, top_words=1, interval=None)
    ticks = [t.get_text() for t in disp.ax_.get_xticklabels()]
    assert all(len(t.split("\n")) == 2 and t.split("\n")[1] in VOCAB for t in ticks)


@pytest.mark.parametrize("topics", [[K], [-1], [0, 0], [], [0.5]])
def test_collection_topic_bad_topics(clda, topics):
    with pytest.raises(ValueError, match="topic"):
        CollectionTopicDisplay.from_estimator(clda, topics=topics)


@pytest.mark.parametrize("interval", [0, 1, 1.5, -0.2, "90%"])
def test_collection_topic_bad_interval(clda, interval):
    with pytest.raises(ValueError, match="interval"):
        CollectionTopicDisplay.from_estimator(clda, interval=interval)


def test_collection_topic_bad_arguments(clda, lda):
    with pytest.raises(ValueError, match="kind"):
        CollectionTopicDisplay.from_estimator(clda, kind="pie")
    with pytest.raises(ValueError, match="CompoundLDA"):
        CollectionTopicDisplay.from_estimator(lda)
    with pytest.raises(NotFittedError):
        CollectionTopicDisplay.from_estimator(CompoundLDA())
    with pytest.raises(ValueError, match="feature_names"):
        CollectionTopicDisplay.from_estimator(clda, feature_names=VOCAB[:5])


def test_collection_topic_constructor():
    disp = CollectionTopicDisplay(
        [[0.2, 0.8], [0.6, 0.4]], lower=[[0.1, 0.7], [0.5, 0.3]],
        upper=[[0.3, 0.9], [0.7, 0.5]], topic_labels=["a", "b"],
        collection_labels=["x", "y"], interval=0.8,
    ).plot()
    assert [t.get_text() for t in disp.ax_.get_xticklabels()] == ["a", "b"]
    assert "80%" in disp.ax_.get_title()
    disp.plot(kind="heatmap")
    assert disp.bars_ is None and disp.im_ is not None
    with pytest.raises(ValueError, match="topic_labels"):
        CollectionTopicDisplay([[0.5, 0.5]], topic_labels=["a"]).plot()


# -------------------------------------------------------- TopicWordsDisplay
def test_topic_words(clda):
    disp = TopicWordsDisplay.from_estimator(clda, VOCAB, n_words=5)
    phi = topic_word(clda)
    assert disp.axes_.shape == (1, K)
    assert len(disp.bars_) == K and disp.bounding_ax_ is None
    for k, (panel, bars) in enumerate(zip(disp.axes_.ravel(), disp.bars_)):
        order = np.argsort(-phi[k], kind="stable")[:5]
        assert len(bars) == 5
        assert_allclose([p.get_width() for p in bars], phi[k, order])
        assert [t.get_text() for t in panel.get_yticklabels()] == VOCAB[order].tolist()
        assert panel.get_title() == f"Topic {k}"
        assert panel.yaxis_inverted()  # most probable word on top
    assert disp.figure_ is disp.axes_[0, 0].figure


def test_topic_words_layout_and_axes(clda, lda):
    disp = TopicWordsDisplay.from_estimator(lda, VOCAB, topics=[2, 0, 1], n_cols=2)
    assert disp.axes_.shape == (2, 2)
    assert not disp.axes_[1, 1].axison  # unused cell switched off
    assert [ax.get_title() for ax in disp.axes_.ravel()[:3]] == [
        "Topic 2", "Topic 0", "Topic 1"
    ]
    assert len(disp.bars_[0]) == 10
    # One subplot divided into the grid.
    fig, ax = plt.subplots()
    disp = TopicWordsDisplay.from_estimator(clda, VOCAB, ax=ax, n_cols=2)
    assert disp.bounding_ax_ is ax and not ax.axison
    assert disp.axes_.shape == (2, 2) and disp.figure_ is fig
    # An array of axes, one per topic; the default vocabulary is "word i".
    fig, axes = plt.subplots(2, 2)
    disp = TopicWordsDisplay.from_estimator(clda, ax=axes, n_words=3)
    assert disp.axes_ is not None and disp.axes_[0, 0] is axes[0, 0]
    assert disp.axes_[0, 0].get_yticklabels()[0].get_text().startswith("word ")
    with pytest.raises(ValueError, match="at least 4"):
        TopicWordsDisplay.from_estimator(clda, VOCAB, ax=axes.ravel()[:3])
    # scikit-learn's variational LDA works too.
    sk = LatentDirichletAllocation(n_components=2, max_iter=2, random_state=0)
    sk.fit(np.abs(np.random.default_rng(0).integers(0, 3, (20, V))))
    disp = TopicWordsDisplay.from_estimator(sk, VOCAB, n_words=4)
    assert disp.axes_.shape == (1, 2)


def test_topic_words_bad_arguments(clda):
    with pytest.raises(ValueError, match="topic index 9"):
        TopicWordsDisplay.from_estimator(clda, VOCAB, topics=[9])
    with pytest.raises(ValueError, match="n_words"):
        TopicWordsDisplay.from_estimator(clda, VOCAB, n_words=0)
    with pytest.raises(ValueError, match="feature_names"):
        TopicWordsDisplay.from_estimator(clda, VOCAB[:-1])
    with pytest.raises(NotFittedError):
        TopicWordsDisplay.from_estimator(LDAGibbs(), VOCAB)


# ----------------------------------------------------------- PiTraceDisplay
def test_pi_trace(clda_chain):
    samples = clda_chain.collection_topic_samples_
    disp = PiTraceDisplay.from_estimator(clda_chain, topics=[1, 3], collections=[2, 0])
    assert disp.lines_.shape == (2, 2)
    expected_x = clda_chain.burn_in_ + np.arange(1, samples.shape[0] + 1)
    for j, pos in enumerate([2, 0]):
        for k, topic in enumerate([1, 3]):
            line = disp.lines_[j, k]
            assert_allclose(line.get_ydata(), samples[:, pos, topic])
            assert_array_equal(line.get_xdata(), expected_x)
            assert line.get_label() == f"Topic {topic}"
    assert [ax.get_title() for ax in disp.axes_.ravel()] == ["Collection 2", "Collection 0"]
    assert disp.acf_ is None
    assert [t.get_text() for t in disp.legend_.get_texts()] == ["Topic 1", "Topic 3"]
    # Defaults: every collection (one panel each) and, K=4 < 5, every topic.
    disp = PiTraceDisplay.from_estimator(clda_chain)
    assert disp.lines_.shape == (J, K)
    assert disp.axes_.shape == (2, 2) and not disp.axes_[1, 1].axison


def test_pi_trace_ticks_only_whole_sweeps():
    # Four draws, sweeps 5 to 8, were ticked at 4.5, 5.5, ...: no such sweep.
    samples = np.random.default_rng(0).dirichlet(np.ones(3), size=(4, 2))
    disp = PiTraceDisplay(samples, iterations=np.arange(5, 9)).plot()
    for ax in disp.axes_.ravel():
        if ax.axison:
            ticks = ax.get_xticks()
            assert_array_equal(ticks, np.round(ticks))


def test_pi_acf(clda_chain):
    samples = clda_chain.collection_topic_samples_
    disp = PiTraceDisplay.from_estimator(clda_chain, kind="acf", max_lag=15,
                                         topics=[0, 2])
    assert disp.acf_.shape == (16, J, 2)
    assert_allclose(disp.acf_, autocorrelation(samples[:, :, [0, 2]], max_lag=15))
    assert_array_equal(disp.acf_[0], 1.0)
    line = disp.lines_[1, 1]
    assert_array_equal(line.get_xdata(), np.arange(16))
    col = samples[:, 1, 2].tolist()
    assert_allclose(line.get_ydata(), [direct_acf(col, lag) for lag in range(16)],
                    atol=1e-12)
    # max_lag beyond the chain is clipped to n_draws - 1.
    disp = PiTraceDisplay.from_estimator(clda_chain, kind="acf", max_lag=500)
    assert disp.acf_.shape[0] == samples.shape[0]


def test_pi_trace_axes_and_single_collection(clda_chain, clda_single):
    fig, ax = plt.subplots()
    disp = PiTraceDisplay.from_estimator(clda_chain, collections=[1], ax=ax)
    assert disp.axes_[0, 0] is ax and disp.figure_ is fig
    fig, axes = plt.subplots(1, 3)
    disp = PiTraceDisplay.from_estimator(clda_chain, kind="acf", ax=axes)
    assert list(disp.axes_) == list(axes)
    disp = PiTraceDisplay.from_estimator(clda_single)
    assert disp.lines_.shape == (1, K)
    assert disp.axes_[0, 0].get_title() == "Collection all"
    disp = PiTraceDisplay.from_estimator(clda_single, collections="all", kind="acf")
    assert disp.acf_.shape[1] == 1


def test_pi_trace_bad_arguments(clda, clda_chain, lda):
    with pytest.raises(ValueError, match="collections=7 passed to PiTraceDisplay"):
        PiTraceDisplay.from_estimator(clda_chain, collections=[7])
    with pytest.raises(ValueError, match="collections='a' passed to PiTraceDisplay"):
        PiTraceDisplay.from_estimator(clda_chain, collections=["a"])
    # A flag is not the collection 1 (True == 1 in Python).
    with pytest.raises(ValueError, match="must be a collection label"):
        PiTraceDisplay.from_estimator(clda_chain, collections=[True])
    with pytest.raises(ValueError, match="NaN or infinite values in samples"):
        PiTraceDisplay(np.full((5, 2, 2), np.nan)).plot()
    with pytest.raises(ValueError, match="topic index 4"):
        PiTraceDisplay.from_estimator(clda_chain, topics=[0, 4])
    with pytest.raises(ValueError, match="max_lag"):
        PiTraceDisplay.from_estimator(clda_chain, kind="acf", max_lag=0)
    with pytest.raises(ValueError, match="kind"):
        PiTraceDisplay.from_estimator(clda_chain, kind="hist")
    with pytest.raises(ValueError, match="CompoundLDA"):
        PiTraceDisplay.from_estimator(lda)
    one_draw = PiTraceDisplay(clda.collection_topic_samples_[:1])
    with pytest.raises(ValueError, match="at least 2 kept draws"):
        one_draw.plot(kind="acf")


# -------------------------------------------------------- PerplexityDisplay
def test_perplexity_from_results():
    disp = PerplexityDisplay.from_results(
        [20, 10, 30], {"LDA": [150.0, 160.0, 148.0], "cLDA": [140.0, 150.0, np.nan]}
    )
    # Points are drawn in increasing order of n_components.
    assert_array_equal(disp.lines_["LDA"].get_xdata(), [10, 20, 30])
    assert_allclose(disp.lines_["LDA"].get_ydata(), [160.0, 150.0, 148.0])
    assert_allclose(disp.lines_["cLDA"].get_ydata(), [150.0, 140.0, np.nan])
    assert disp.fill_between_ == {"LDA": None, "cLDA": None}
    assert [t.get_text() for t in disp.legend_.get_texts()] == ["LDA", "cLDA"]
    assert disp.ax_.get_xlabel() == "Number of topics"
    assert disp.ax_.get_ylabel() == "Perplexity"
    assert [t.get_text() for t in disp.ax_.get_xticklabels()] == ["10", "20", "30"]


def test_perplexity_repeated_runs_and_axes():
    runs = np.array([[100.0, 110.0, 120.0], [90.0, 95.0, 100.0]])
    fig, ax = plt.subplots()
    disp = PerplexityDisplay.from_results([5, 10], {"cLDA": runs}, ax=ax)
    assert disp.ax_ is ax and disp.figure_ is fig
    assert_allclose(disp.lines_["cLDA"].get_ydata(), runs.mean(axis=1))
    band = disp.fill_between_["cLDA"].get_paths()[0].vertices[:, 1]
    std = runs.std(axis=1)
    assert_allclose([band.min(), band.max()],
                    [(runs.mean(axis=1) - std).min(), (runs.mean(axis=1) + std).max()])
    disp = PerplexityDisplay.from_results([5, 10], {"cLDA": runs},
                                          std_display_style="errorbar")
    segments = disp.errorbar_["cLDA"].lines[2][0].get_segments()
    assert_allclose([s[1, 1] - s[0, 1] for s in segments], 2 * std)


def test_perplexity_bad_arguments():
    with pytest.raises(ValueError, match="n_points"):
        PerplexityDisplay.from_results([1, 2, 3], {"LDA": [1.0, 2.0]})
    with pytest.raises(ValueError, match="non-empty dict"):
        PerplexityDisplay.from_results([1, 2], {})
    with pytest.raises(ValueError, match="std_display_style"):
        PerplexityDisplay.from_results([1, 2], {"a": [1.0, 2.0]}, std_display_style="x")
    with pytest.raises(ValueError, match="std passed to PerplexityDisplay must be a dict"):
        PerplexityDisplay([1, 2], {"a": [1.0, 2.0]}, std=[0.1, 0.2]).plot()
    with pytest.raises(ValueError, match=r"std\['a'\] passed to PerplexityDisplay has 1 "
                                         "values for 2 points"):
        PerplexityDisplay([1, 2], {"a": [1.0, 2.0]}, std={"a": [0.1]}).plot()


def test_perplexity_from_cv_results(corpus):
    search = GridSearchCV(
        LDAGibbs(max_iter=20, random_state=0), {"n_components": [2, 4, 3]}, cv=2
    ).fit(corpus.data)
    res = search.cv_results_
    disp = PerplexityDisplay.from_cv_results(res, "n_components")
    line = next(iter(disp.lines_.values()))
    order = np.argsort(res["param_n_components"].astype(float))
    assert_array_equal(line.get_xdata(), [2, 3, 4])
    assert_allclose(line.get_ydata(), res["mean_test_score"][order])
    band = next(iter(disp.fill_between_.values())).get_paths()[0].vertices[:, 1]
    lo = res["mean_test_score"] - res["std_test_score"]
    hi = res["mean_test_score"] + res["std_test_score"]
    assert_allclose([band.min(), band.max()], [lo.min(), hi.max()])
    assert disp.legend_ is None and disp.ax_.get_xlabel() == "n_components"
    disp = PerplexityDisplay.from_cv_results(res, negate=True)
    assert_allclose(next(iter(disp.lines_.values())).get_ydata(),
                    -res["mean_test_score"][order])
    with pytest.raises(ValueError, match="not a searched parameter"):
        PerplexityDisplay.from_cv_results(res, "alpha")
    with pytest.raises(ValueError, match="scorings available"):
        PerplexityDisplay.from_cv_results(res, scoring="perplexity")


def test_perplexity_from_cv_results_group_by():
    # A search over two models in a Pipeline step, with prefixed names and
    # a candidate list where one parameter is absent (masked).
    models = np.ma.MaskedArray([LDAGibbs(), LDAGibbs(), CompoundLDA(), CompoundLDA(),
                                CompoundLDA()], mask=False, dtype=object)
    ks = np.ma.MaskedArray([5, 10, 5, 10, 0], mask=[0, 0, 0, 0, 1], dtype=object)
    res = {
        "param_model": models, "param_model__n_components": ks,
        "mean_test_score": np.array([-5.0, -4.0, -3.0, -2.0, -1.0]),
        "std_test_score": np.array([0.1, 0.2, 0.3, 0.4, 0.5]),
    }
    disp = PerplexityDisplay.from_cv_results(res, "n_components", group_by="model")
    assert sorted(disp.lines_) == ["CompoundLDA", "LDAGibbs"]
    assert_allclose(disp.lines_["CompoundLDA"].get_ydata(), [-3.0, -2.0])
    assert [t.get_text() for t in disp.legend_.get_texts()] == ["LDAGibbs", "CompoundLDA"]
    with pytest.raises(ValueError, match="group_by"):
        PerplexityDisplay.from_cv_results(res, "n_components")


def test_perplexity_from_estimators(corpus):
    train = np.arange(corpus.data.shape[0]) % 3 != 0
    disp = PerplexityDisplay.from_estimators(
        {"LDA": LDAGibbs(max_iter=20, random_state=0),
         "cLDA": CompoundLDA(max_iter=20, random_state=0)},
        corpus.data[train], corpus.data[~train], [2, 4],
        groups_train=corpus.groups[train], groups_test=corpus.groups[~train],
    )
    expected = CompoundLDA(n_components=4, max_iter=20, random_state=0).fit(
        corpus.data[train], groups=corpus.groups[train]
    ).perplexity(corpus.data[~train], groups=corpus.groups[~train])
    assert_allclose(disp.lines_["cLDA"].get_ydata()[1], expected)
    assert np.all(disp.lines_["LDA"].get_ydata() > 1)
    with pytest.raises(ValueError, match="perplexity"):
        PerplexityDisplay.from_estimators({"x": CountVectorizer()}, None, None, [2])


# ------------------------------------------------------------- TraceDisplay
def test_trace_display(clda_chain):
    disp = TraceDisplay.from_estimator(clda_chain)
    trace = clda_chain.trace_
    # learn_priors=True learns gamma and eta; alpha is fixed so not shown.
    assert list(disp.lines_) == ["log_likelihood", "gamma", "eta"]
    assert disp.axes_.shape == (3, 1)
    for key, line in disp.lines_.items():
        assert_array_equal(line.get_xdata(), trace["iteration"])
        assert_allclose(line.get_ydata(), trace[key])
    assert len(disp.burn_in_lines_) == 3
    assert disp.burn_in_lines_[0].get_xdata()[0] == clda_chain.burn_in_
    assert disp.axes_[-1, 0].get_xlabel() == "Iteration"
    # Chosen keys, wall-clock axis (no burn-in marker).
    disp = TraceDisplay.from_estimator(clda_chain, keys=["log_likelihood", "alpha"],
                                       x="seconds")
    assert_allclose(disp.lines_["alpha"].get_xdata(), trace["seconds"])
    assert disp.burn_in_lines_ is None


def test_trace_display_overlay_and_lda(clda_chain, lda, clda):
    fig, ax = plt.subplots()
    disp = TraceDisplay.from_estimator(lda, ax=ax)
    assert disp.axes_[0, 0] is ax and list(disp.lines_) == ["log_likelihood"]
    # A second run drawn on the same axes: its own colour and a legend.
    second = TraceDisplay.from_estimator(clda_chain, keys="log_likelihood", ax=ax,
                                         name="cLDA")
    assert ax.get_legend() is not None
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["LDAGibbs", "cLDA"]
    assert disp.lines_["log_likelihood"].get_color() != second.lines_[
        "log_likelihood"].get_color()
    assert second.burn_in_lines_[0].get_xdata()[0] == clda_chain.burn_in_ == 60
    assert disp.burn_in_lines_[0].get_xdata()[0] == lda.burn_in_ == 30
    # A third run with lda's burn-in (30 sweeps) shares its marker.
    third = TraceDisplay.from_estimator(clda, keys="log_likelihood", ax=ax)
    assert third.burn_in_lines_[0] is disp.burn_in_lines_[0]
    assert len({line.get_color() for line in ax.lines if line.get_gid() ==
                "sklearn_clda.trace"}) == 3
    # Fitted without evaluate_every: only the last sweep, one point.
    disp = TraceDisplay.from_estimator(clda)
    assert_array_equal(disp.lines_["log_likelihood"].get_xdata(), [clda.n_iter_])
    with pytest.raises(ValueError, match="cannot be plotted"):
        TraceDisplay.from_estimator(clda, keys=["nope"])
    with pytest.raises(ValueError, match="x must be"):
        TraceDisplay.from_estimator(clda, x="sweep")
    with pytest.raises(NotFittedError):
        TraceDisplay.from_estimator(LDAGibbs())
    sk = LatentDirichletAllocation(n_components=2, max_iter=2, random_state=0)
    with pytest.raises(ValueError, match="the fitted LatentDirichletAllocation has none"):
        TraceDisplay.from_estimator(sk.fit(np.ones((4, 3))))


# ---------------------------------------------------------- matplotlib absent
def test_missing_matplotlib_message(clda, hide_modules):
    hide_modules("matplotlib")
    for call in (
        lambda: CollectionTopicDisplay.from_estimator(clda),
        lambda: TopicWordsDisplay.from_estimator(clda, VOCAB),
        lambda: PiTraceDisplay.from_estimator(clda),
        lambda: PerplexityDisplay.from_results([1], {"a": [1.0]}),
        lambda: TraceDisplay.from_estimator(clda),
    ):
        with pytest.raises(ImportError, match="matplotlib is required.*pip install matplotlib"):
            call()
    # The autocorrelation needs NumPy only.
    assert autocorrelation([1.0, 2.0, 3.0]).shape == (3,)


# ------------------------------------------------------ parameter checks
@pytest.mark.parametrize("flag", [True, np.True_], ids=["True", "np.True_"])
def test_boolean_flags_are_not_counts(clda, clda_chain, flag):
    # validate_params with StrictInterval: True and np.True_ are refused alike.
    calls = [
        (lambda: TopicWordsDisplay.from_estimator(clda, VOCAB, n_words=flag), "n_words"),
        (lambda: TopicWordsDisplay.from_estimator(clda, VOCAB, n_cols=flag), "n_cols"),
        (lambda: CollectionTopicDisplay.from_estimator(clda, top_words=flag), "top_words"),
        (lambda: CollectionTopicDisplay.from_estimator(clda, n_topics=flag), "n_topics"),
        (lambda: CollectionTopicDisplay.from_estimator(clda, interval=flag), "interval"),
        (lambda: PiTraceDisplay.from_estimator(clda_chain, max_lag=flag), "max_lag"),
        (lambda: PiTraceDisplay.from_estimator(clda_chain, n_cols=flag), "n_cols"),
    ]
    for call, param in calls:
        with pytest.raises(ValueError, match=rf"'{param}' parameter of \w+\.\w+ must"):
            call()


def test_plot_checks_arguments_and_stored_attributes(clda, clda_chain):
    samples = clda_chain.collection_topic_samples_
    with pytest.raises(ValueError, match="'max_lag' parameter of PiTraceDisplay must"):
        PiTraceDisplay(samples, max_lag=0).plot(kind="acf")
    with pytest.raises(ValueError, match="'max_lag' parameter of PiTraceDisplay.plot"):
        PiTraceDisplay(samples).plot(kind="acf", max_lag=0)
    with pytest.raises(ValueError, match="'kind' parameter of PiTraceDisplay must"):
        PiTraceDisplay(samples, kind="hist").plot()
    # max_lag is only used by the autocorrelation plot.
    assert PiTraceDisplay(samples, max_lag=0).plot(kind="trace").acf_ is None
    props = clda.collection_topic_
    with pytest.raises(ValueError, match="'kind' parameter of CollectionTopicDisplay must"):
        CollectionTopicDisplay(props, kind="pie").plot()
    with pytest.raises(ValueError, match="'n_cols' parameter of TopicWordsDisplay.plot"):
        TopicWordsDisplay([["a"]], [[1.0]]).plot(n_cols=0)


def test_topic_words_ranked_by_metrics_top_words():
    # Ties keep the lower feature index first, as metrics.top_words does.
    from sklearn.base import BaseEstimator

    from sklearn_clda.metrics import top_words

    class Topics(BaseEstimator):
        def fit(self, X=None, y=None):
            return self

    model = Topics()
    model.components_ = np.array([[1.0, 3.0, 3.0, 1.0, 2.0], [2.0, 2.0, 2.0, 2.0, 2.0]])
    names = np.array(list("abcde"))
    disp = TopicWordsDisplay.from_estimator(model, names, n_words=4)
    expected = top_words(model.components_, names, n=4)
    assert expected.tolist() == [["b", "c", "e", "a"], ["a", "b", "c", "d"]]
    assert np.asarray(disp.words).tolist() == expected.tolist()
    # n_words beyond the vocabulary is clipped to it.
    disp = TopicWordsDisplay.from_estimator(model, names, n_words=9)
    assert np.asarray(disp.words).shape == (2, 5)


def test_pi_trace_default_line_style(clda_chain):
    # Markers on autocorrelations and on short traces, plain long traces;
    # line_kw overrides the defaults.
    samples = clda_chain.collection_topic_samples_
    assert samples.shape[0] > 30
    long_trace = PiTraceDisplay(samples).plot(kind="trace")
    assert long_trace.lines_[0, 0].get_marker() in ("None", None, "")
    short_trace = PiTraceDisplay(samples[:30]).plot(kind="trace")
    assert short_trace.lines_[0, 0].get_marker() == "o"
    acf = PiTraceDisplay(samples).plot(kind="acf", max_lag=5)
    assert acf.lines_[0, 0].get_marker() == "o"
    assert acf.lines_[0, 0].get_linewidth() == 1.0
    styled = PiTraceDisplay(samples).plot(kind="acf", max_lag=5, line_kw={"marker": "x"})
    assert styled.lines_[0, 0].get_marker() == "x"


def test_collection_topic_labels_use_frex_by_default(clda):
    from sklearn_clda.inspection import topic_labels

    names = np.array([f"w{i}" for i in range(clda.components_.shape[1])])
    frex = CollectionTopicDisplay.from_estimator(
        clda, kind="heatmap", feature_names=names, top_words=3)
    prob = CollectionTopicDisplay.from_estimator(
        clda, kind="heatmap", feature_names=names, top_words=3, label_method="prob")
    expected = topic_labels(clda, names, method="frex", n_words=3)
    assert frex.topic_words == [list(w) for w in expected["words"]]
    assert prob.topic_words == [list(w) for w in expected["prob_words"]]
    assert frex.topic_words != prob.topic_words

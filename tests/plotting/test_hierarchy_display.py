"""TopicHierarchyDisplay draws the tree of topics merged by their words."""

import numpy as np
import pytest

pytest.importorskip("matplotlib")

import matplotlib  # noqa: E402

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
from numpy.testing import assert_allclose  # noqa: E402
from scipy.cluster.hierarchy import fcluster  # noqa: E402
from sklearn.feature_extraction.text import CountVectorizer  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.utils._param_validation import InvalidParameterError  # noqa: E402

from sklearn_clda import LDAGibbs  # noqa: E402
from sklearn_clda.inspection import topic_hierarchy  # noqa: E402
from sklearn_clda.inspection._labels import word_scores  # noqa: E402
from sklearn_clda.plotting import TopicHierarchyDisplay  # noqa: E402

from _sport_politics import COMPONENTS, VOCAB, fitted_lda  # noqa: E402


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def _linkage(tree):
    return tree[["left", "right", "distance", "n_topics"]].to_numpy(float)


def test_the_tree_drawn_is_topic_hierarchys():
    disp = TopicHierarchyDisplay.from_estimator(fitted_lda(), feature_names=VOCAB)
    tree = topic_hierarchy(fitted_lda(), VOCAB)
    # each merge is drawn as a link whose top is at the merge's distance
    heights = sorted(max(xs) for xs in disp.dendrogram_["dcoord"])
    assert_allclose(heights, np.sort(tree["distance"]), rtol=1e-12)
    assert sorted(disp.leaves_.tolist()) == list(range(6))
    frex = np.argsort(-word_scores(COMPONENTS, "frex"), axis=1, kind="stable")[:, :3]
    labels = {k: f"{k}: {' '.join(VOCAB[frex[k]])}" for k in range(6)}
    assert [t.get_text() for t in disp.ax_.get_yticklabels()] == [
        labels[k] for k in disp.leaves_]
    assert disp.ax_.get_xlabel() == "Hellinger distance, Ward linkage"
    assert set(disp.dendrogram_["color_list"]) == {"0.45"}  # no cut: all grey


def test_n_clusters_colours_the_groups_of_the_cut():
    tree = topic_hierarchy(fitted_lda(), VOCAB)
    Z = _linkage(tree)
    for n_clusters in (2, 3, 6):
        disp = TopicHierarchyDisplay(Z).plot(n_clusters=n_clusters)
        # the groups of the merges below the (n_clusters - 1)-th highest
        # (fcluster's "maxclust" of SciPy 1.13 stops short of six here)
        cut = np.nextafter(np.sort(Z[:, 2])[-(n_clusters - 1)], 0.0)
        clusters = fcluster(Z, cut, criterion="distance")
        assert clusters.max() == n_clusters
        # the links under the cut: every group of two or more topics has a colour
        colours = [c for c in disp.dendrogram_["color_list"] if c != "0.45"]
        assert len(set(colours)) == sum(np.bincount(clusters)[1:] > 1)
        assert disp.dendrogram_["color_list"].count("0.45") == n_clusters - 1
        plt.close("all")


def test_options():
    disp = TopicHierarchyDisplay.from_estimator(
        fitted_lda(), metric="jsd", method="complete", feature_names=VOCAB, top_words=0,
        dendrogram_kw={"orientation": "top"})
    assert [t.get_text() for t in disp.ax_.get_xticklabels()] == [
        str(k) for k in disp.leaves_]
    assert disp.ax_.get_ylabel() == "Jensen-Shannon divergence (bits), complete linkage"
    fig, ax = plt.subplots()
    assert TopicHierarchyDisplay.from_estimator(fitted_lda(), ax=ax).ax_ is ax
    # no vocabulary: the topic numbers
    disp = TopicHierarchyDisplay.from_estimator(fitted_lda(), method="ward")
    assert sorted(t.get_text() for t in disp.ax_.get_yticklabels()) == [str(k)
                                                                        for k in range(6)]


def test_a_pipeline_names_its_words():
    texts = ["goal match goal", "vote party vote", "goal match", "party vote senate"] * 5
    pipe = make_pipeline(CountVectorizer(), LDAGibbs(n_components=3, max_iter=20,
                                                     random_state=0)).fit(texts)
    disp = TopicHierarchyDisplay.from_estimator(pipe, top_words=1)
    words = {t.get_text().split(": ")[1] for t in disp.ax_.get_yticklabels()}
    assert words <= set(pipe[0].get_feature_names_out())


@pytest.mark.parametrize("linkage, labels, message", [
    ([[0, 1, 0.2]], None, r"shape \(n_topics - 1, 4\).*got shape \(1, 3\)"),
    ([[0, 5, 0.2, 2]], None, "that is not one"),
    ([[0, 1, np.nan, 2]], None, "linkage matrix"),
    ([["a", "b", "c", "d"]], None, "no numbers"),
    ([[0, 1, 0.2, 2]], ["a", "b", "c"], "needs 2 entries"),
])
def test_bad_values_are_named(linkage, labels, message):
    with pytest.raises(ValueError, match=message):
        TopicHierarchyDisplay(linkage, topic_labels=labels).plot()


def test_bad_parameters():
    Z = _linkage(topic_hierarchy(fitted_lda(), VOCAB))
    for n_clusters in (1, 7, 2.5, True):
        with pytest.raises(ValueError, match="n_clusters must be an int from 2"):
            TopicHierarchyDisplay(Z).plot(n_clusters=n_clusters)
    with pytest.raises(ValueError, match="has 1 topic"):
        TopicHierarchyDisplay.from_estimator(fitted_lda(COMPONENTS[:1]))
    with pytest.raises(ValueError, match="method='ward' needs Euclidean"):
        TopicHierarchyDisplay.from_estimator(fitted_lda(), metric="tv", method="ward")
    for params in ({"metric": "l2"}, {"method": "median"}, {"top_words": -1}):
        with pytest.raises(InvalidParameterError):
            TopicHierarchyDisplay.from_estimator(fitted_lda(), **params)
    with pytest.raises(ValueError, match="must be a matplotlib Axes"):
        TopicHierarchyDisplay(Z).plot(ax="left")


def test_a_large_tree_is_drawn_from_its_top_groups():
    rng = np.random.default_rng(0)
    components = rng.gamma(0.3, size=(150, 40)) + 1e-3
    disp = TopicHierarchyDisplay.from_estimator(fitted_lda(components))
    assert disp.leaves_.size == 100
    labels = [t.get_text() for t in disp.ax_.get_yticklabels()]
    groups = disp.leaves_ >= 150
    assert groups.any() and (~groups).any()
    tree = topic_hierarchy(fitted_lda(components))
    sizes = dict(zip(tree["node"], tree["n_topics"]))
    assert [label for label, g in zip(labels, groups) if g] == [
        f"({sizes[node]} topics)" for node in disp.leaves_[groups]]
    assert [label for label, g in zip(labels, groups) if not g] == [
        str(k) for k in disp.leaves_[~groups]]
    assert disp.figure_.get_size_inches()[1] == pytest.approx(0.28 * 100 + 1.0)
    plt.close("all")
    every = TopicHierarchyDisplay.from_estimator(fitted_lda(components),
                                                 dendrogram_kw={"truncate_mode": None})
    assert sorted(every.leaves_.tolist()) == list(range(150))

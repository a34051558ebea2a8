"""topic_hierarchy: the topics merged by how alike their words are."""

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose
from scipy.cluster.hierarchy import fcluster, is_valid_linkage, linkage
from scipy.spatial.distance import pdist
from sklearn.exceptions import NotFittedError
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.pipeline import make_pipeline
from sklearn.utils._param_validation import InvalidParameterError

from sklearn_clda import LDAGibbs
from sklearn_clda.datasets import make_lda_corpus
from sklearn_clda.inspection import topic_hierarchy, topic_labels
from sklearn_clda.inspection._labels import LABEL_METHODS, merged_word_scores, word_scores

from _sport_politics import COMPONENTS, VOCAB, fitted_lda


def _chain(group, n_topics):
    """Merges (scipy's node pairs) that join the topics of ``group`` one by one."""
    merges, node = [], group[0]
    for i, topic in enumerate(group[1:]):
        merges.append((node, topic))
        node = n_topics + i
    return merges


def _group_scores(components, group, method, **kw):
    """merged_word_scores of one group, made by joining its topics one by one."""
    if len(group) == 1:
        return word_scores(components, method, **kw)[group[0]]
    return merged_word_scores(components, _chain(group, len(components)), method, **kw)[-1]


def _hellinger(P):
    """Hellinger distances of the rows of P, written out."""
    P = P / P.sum(axis=1, keepdims=True)
    return pdist(np.sqrt(P), "euclidean") / np.sqrt(2.0)


@pytest.mark.parametrize("method", LABEL_METHODS)
def test_merged_scores_are_those_of_the_model_with_the_topics_merged(method):
    rng = np.random.default_rng(0)
    components = rng.gamma(0.3, size=(5, 12)) + 0.01
    for group in ([1, 3], [0, 2, 4], [2], [0, 1, 2, 3, 4]):
        rest = [k for k in range(5) if k not in group]
        merged = np.vstack([components[group].sum(axis=0), components[rest]])
        want = word_scores(merged, method, frex_weight=0.3, relevance_lambda=0.4)[0]
        got = _group_scores(components, group, method, frex_weight=0.3,
                            relevance_lambda=0.4)
        assert_allclose(got, want, rtol=1e-12, atol=1e-300)


def test_merged_scores_of_huge_and_tiny_weights_are_finite():
    # no two words of equal weight: rounding would break their tie either way
    components = np.random.default_rng(1).gamma(1.0, size=(6, 10)) + 0.1
    merges = [(0, 1), (2, 6), (3, 4), (5, 8), (7, 9)]
    for method in LABEL_METHODS:
        scores = merged_word_scores(components * 1e306, merges, method)
        assert np.isfinite(scores).all()
        assert_allclose(scores, merged_word_scores(components, merges, method), rtol=1e-10)
        # topics of weights 1e300 and 1e-300 apart: each keeps its distribution
        apart = components * np.array([1e300, 1e-300, 1.0, 1e-300, 1e300, 1.0])[:, None]
        assert np.isfinite(merged_word_scores(apart, merges, method)).all()
    apart = components * np.array([1e300, 1e-300, 1.0, 1.0, 1.0, 1.0])[:, None]
    # the first group is the first topic's distribution, to rounding
    assert_allclose(merged_word_scores(apart, merges, "prob")[0],
                    components[0] / components[0].sum(), rtol=1e-12)


def test_the_tree_is_scipys_linkage_of_hellinger_distances():
    tree = topic_hierarchy(fitted_lda(), VOCAB, method="average")
    assert tree.columns.tolist() == ["node", "left", "right", "distance", "n_topics",
                                     "topics", "share", "words"]
    Z = tree[["left", "right", "distance", "n_topics"]].to_numpy(float)
    assert is_valid_linkage(Z)
    want = linkage(_hellinger(COMPONENTS), "average")
    assert_allclose(np.sort(Z[:, 2]), np.sort(want[:, 2]), rtol=1e-12)
    assert tree["node"].tolist() == [6, 7, 8, 9, 10]
    # the last merge joins sport and politics; cutting in two separates them
    assert sorted(map(sorted, (tree["topics"].iloc[-1],))) == [[0, 1, 2, 3, 4, 5]]
    clusters = fcluster(Z, 2, criterion="maxclust")
    assert len(set(clusters[:3])) == 1 and len(set(clusters[3:])) == 1
    assert clusters[0] != clusters[3]
    # the groups' shares are their topics' shares of the weight
    shares = COMPONENTS.sum(axis=1) / COMPONENTS.sum()
    for topics, share in zip(tree["topics"], tree["share"]):
        assert share == pytest.approx(shares[topics].sum(), rel=1e-12)
    assert tree["share"].iloc[-1] == pytest.approx(1.0)


def test_each_group_is_labelled_by_its_merged_topic():
    tree = topic_hierarchy(fitted_lda(), VOCAB, n_words=3, label_method="frex")
    groups = tree.set_index(tree["topics"].map(tuple))
    sport, politics = groups.loc[[(0, 1, 2)]].iloc[0], groups.loc[[(3, 4, 5)]].iloc[0]
    assert set(sport["words"]) <= set(VOCAB[:4])
    assert set(politics["words"]) <= set(VOCAB[4:])
    for _, row in tree.iterrows():
        scores = _group_scores(COMPONENTS, row["topics"], "frex")
        assert row["words"] == [VOCAB[j] for j in np.argsort(-scores, kind="stable")[:3]]


@pytest.mark.parametrize("metric", ["hellinger", "jsd", "tv"])
@pytest.mark.parametrize("method", ["average", "complete", "single", "weighted"])
def test_metrics_and_linkages(metric, method):
    from sklearn_clda.metrics import align_topics

    tree = topic_hierarchy(fitted_lda(), VOCAB, metric=metric, method=method)
    # the first merge is the closest pair, at its distance under the metric
    distances = np.array([[align_topics(COMPONENTS[[i]], COMPONENTS[[j]], metric=metric)[1][0]
                           for j in range(6)] for i in range(6)])
    np.fill_diagonal(distances, np.inf)
    assert tree["distance"].iloc[0] == pytest.approx(distances.min(), rel=1e-9)
    i, j = np.unravel_index(np.argmin(distances), distances.shape)
    assert sorted(tree["topics"].iloc[0]) == sorted([i, j])
    assert (np.diff(tree["distance"]) >= -1e-12).all()  # no inversions


def test_ward_by_default_and_with_hellinger_only():
    tree = topic_hierarchy(fitted_lda(), VOCAB)
    assert tree.equals(topic_hierarchy(fitted_lda(), VOCAB, method="ward"))
    want = linkage(np.sqrt(COMPONENTS / COMPONENTS.sum(axis=1, keepdims=True)) / np.sqrt(2.0),
                   "ward")
    assert_allclose(np.sort(tree["distance"]), np.sort(want[:, 2]), rtol=1e-9)
    with pytest.raises(ValueError, match="method='ward' needs Euclidean distances"):
        topic_hierarchy(fitted_lda(), VOCAB, metric="jsd", method="ward")
    # other metrics default to the average linkage
    assert topic_hierarchy(fitted_lda(), VOCAB, metric="jsd").equals(
        topic_hierarchy(fitted_lda(), VOCAB, metric="jsd", method="average"))


def test_a_fitted_pipeline_names_its_words():
    corpus = make_lda_corpus(n_topics=4, n_features=40, n_samples=60, doc_length=60,
                             random_state=0)
    vocab = np.array([f"w{i}" for i in range(40)])
    texts = [" ".join(np.repeat(vocab, row)) for row in corpus.data.toarray()]
    pipe = make_pipeline(CountVectorizer(), LDAGibbs(n_components=4, max_iter=40,
                                                     random_state=0)).fit(texts)
    tree = topic_hierarchy(pipe, n_words=4)
    names = set(pipe[0].get_feature_names_out())
    assert all(set(words) <= names for words in tree["words"])
    assert len(tree) == 3
    leaves = topic_labels(pipe, n_words=4)["words"].tolist()
    # a merged group's words come from its topics' words, mostly
    first = tree.iloc[0]
    assert set(first["words"]) & set(leaves[first["left"]] + leaves[first["right"]])


def test_errors():
    with pytest.raises(ValueError, match="merges topics, but LatentDirichletAllocation "
                                         "has 1 topic"):
        topic_hierarchy(fitted_lda(COMPONENTS[:1]), VOCAB)
    with pytest.raises(NotFittedError):
        topic_hierarchy(LDAGibbs())
    with pytest.raises(ValueError, match="feature_names passed to topic_hierarchy has shape"):
        topic_hierarchy(fitted_lda(), VOCAB[:3])
    for params in ({"metric": "cosine"}, {"method": "centroid"}, {"n_words": 0},
                   {"label_method": "tfidf"}, {"frex_weight": 2.0}):
        with pytest.raises(InvalidParameterError):
            topic_hierarchy(fitted_lda(), VOCAB, **params)
    bad = COMPONENTS.copy()
    bad[2, 3] = np.nan
    with pytest.raises(ValueError, match="finite 2-d array"):
        topic_hierarchy(fitted_lda(bad), VOCAB)


def test_two_topics_and_placeholder_words():
    tree = topic_hierarchy(fitted_lda(COMPONENTS[[0, 3]]), n_words=2)
    assert isinstance(tree, pd.DataFrame) and len(tree) == 1
    assert tree["topics"].tolist() == [[0, 1]]
    assert all(word.startswith("word ") for word in tree["words"].iloc[0])


def test_without_the_optimal_order_the_same_groups(monkeypatch):
    # past MAX_OPTIMAL_ORDER topics the leaves keep SciPy's plain order: the
    # same merges at the same distances, the two nodes of a merge maybe swapped
    from sklearn_clda.inspection import _hierarchy

    components = np.random.default_rng(2).gamma(0.5, size=(12, 30)) + 0.01
    ordered = topic_hierarchy(fitted_lda(components))
    monkeypatch.setattr(_hierarchy, "MAX_OPTIMAL_ORDER", 11)
    plain = topic_hierarchy(fitted_lda(components))
    assert_allclose(plain["distance"], ordered["distance"], rtol=1e-12)
    assert plain["topics"].tolist() == ordered["topics"].tolist()
    assert plain["words"].tolist() == ordered["words"].tolist()
    assert not plain[["left", "right"]].equals(ordered[["left", "right"]])


@pytest.mark.parametrize("n_themes", [2, 3, 4, 6])
def test_themes_are_the_groups_of_a_cut_named_by_their_words(n_themes):
    from sklearn_clda.inspection import topic_themes

    themes = topic_themes(fitted_lda(), n_themes, VOCAB, n_words=2)
    tree = topic_hierarchy(fitted_lda(), VOCAB, n_words=2)
    Z = tree[["left", "right", "distance", "n_topics"]].to_numpy(float)
    # the groups of the merges below the (n_themes - 1) highest
    cut = np.nextafter(np.sort(Z[:, 2])[-(n_themes - 1)], 0.0)
    labels = fcluster(Z, cut, criterion="distance")
    want = sorted(sorted(np.flatnonzero(labels == c).tolist()) for c in set(labels))
    assert sorted(themes.values()) == want
    # every theme of two or more topics is named by its tree row's words,
    # a single topic by its own label
    rows = dict(zip(tree["topics"].map(tuple), tree["words"]))
    single = topic_labels(fitted_lda(), VOCAB, n_words=2)["words"]
    for name, topics in themes.items():
        words = rows[tuple(topics)] if len(topics) > 1 else single[topics[0]]
        assert name == " ".join(words)
    shares = COMPONENTS.sum(axis=1) / COMPONENTS.sum()
    sizes = [shares[topics].sum() for topics in themes.values()]
    assert sizes == sorted(sizes, reverse=True)
    # ready for topic_groups
    from sklearn_clda.inspection._topic_groups import group_indicator

    names, indicator = group_indicator(themes, 6, "test")
    assert names == list(themes) and (indicator.sum(axis=1) == 1).all()


def test_themes_of_tied_merges_and_bad_numbers():
    from sklearn_clda.inspection import topic_themes

    # four identical pairs: every merge between pairs ties, still 3 themes
    rows = np.repeat(np.eye(4) * 10 + 1, 2, axis=0)
    themes = topic_themes(fitted_lda(rows), 3)
    assert len(themes) == 3 and sorted(sum(themes.values(), [])) == list(range(8))
    # names that repeat get a number
    assert all(name for name in themes)
    with pytest.raises(ValueError, match="n_themes=7 passed to topic_themes is more than"):
        topic_themes(fitted_lda(), 7)
    with pytest.raises(InvalidParameterError):
        topic_themes(fitted_lda(), 1)
    with pytest.raises(ValueError, match="method='ward' needs Euclidean"):
        topic_themes(fitted_lda(), 2, metric="tv", method="ward")


def test_repeated_names_are_numbered():
    from sklearn_clda.inspection import topic_themes

    # two far-apart groups whose words rank alike: the same name twice
    rows = np.array([[10.0, 5.0, 1.0, 1.0], [10.0, 5.0, 1.2, 1.0],
                     [5.0, 10.0, 1.0, 30.0], [5.0, 10.0, 1.0, 31.0]])
    themes = topic_themes(fitted_lda(rows), 4, ["a", "b", "c", "d"], n_words=1,
                          label_method="prob")
    assert list(themes) == ["d", "d (2)", "a", "a (2)"]

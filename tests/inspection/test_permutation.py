"""permutation_test: shuffled labels of two collections, refits and p-values."""

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.base import clone
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.pipeline import make_pipeline
from sklearn.utils._param_validation import InvalidParameterError

from sklearn_clda import CompoundLDA, LDAGibbs
from sklearn_clda.datasets import make_compound_corpus
from sklearn_clda.inspection import compare_collections, permutation_test
from sklearn_clda.metrics import align_topics

pytest.importorskip("pandas")


def _fit(X, groups, **params):
    settings = {"n_components": 3, "max_iter": 100, "thin": 2, "random_state": 0, **params}
    return CompoundLDA(**settings).fit(X, groups=groups)


@pytest.fixture(scope="module")
def two_unlike():
    """Two collections: almost all topic 1, and mostly topic 2 with a sixth
    of topic 0 (the fitted topics in this order)."""
    corpus = make_compound_corpus(n_topics=3, n_features=30, n_collections=2,
                                  docs_per_collection=40, doc_length=50, random_state=0)
    return _fit(corpus.data, corpus.groups), corpus.data, corpus.groups


@pytest.fixture(scope="module")
def three():
    corpus = make_compound_corpus(n_topics=3, n_features=30, n_collections=3,
                                  docs_per_collection=25, doc_length=40, random_state=1)
    labels = np.array(["news", "blogs", "forums"])[corpus.groups]
    return _fit(corpus.data, labels), corpus.data, labels


def test_differences_no_shuffle_reaches_have_the_smallest_p_value(two_unlike):
    clda, X, groups = two_unlike
    result = permutation_test(clda, X, groups, 0, 1, n_permutations=9, random_state=0)
    table = result.table
    observed = compare_collections(clda, 0, 1)
    assert table.columns.tolist() == ["topic", "mean", "lower", "upper", "p_value",
                                      "n_matched", "p_value_adjusted"]
    assert_allclose(table[["mean", "lower", "upper"]], observed[["mean", "lower", "upper"]])
    # topics 1 and 2: a share of ~0.9 in one collection and ~0 in the other
    assert table["p_value_adjusted"].tolist()[1:] == [0.1, 0.1]
    assert table["p_value"].tolist()[1:] == [0.1, 0.1]
    assert result.null_max.max() < 0.5 < np.abs(table["mean"][1:]).min()
    assert table.attrs == {"a": 0, "b": 1, "ci": 0.9, "n_permutations": 9,
                           "topic_groups": False}


@pytest.fixture(scope="module")
def unrelated():
    """Labels drawn at random for the documents of one collection, and the
    permutation test of the fit."""
    corpus = make_compound_corpus(n_topics=3, n_features=30, n_collections=1,
                                  docs_per_collection=80, doc_length=50, random_state=2)
    labels = np.random.default_rng(0).permutation(np.repeat(["x", "y"], 40))
    clda = _fit(corpus.data, labels)
    return permutation_test(clda, corpus.data, labels, "x", "y", n_permutations=19,
                            random_state=0, max_distance=0.2)


def test_labels_unrelated_to_the_text_give_no_small_p_value(unrelated):
    result = unrelated
    # no topic's difference beats every shuffle (family-wise, 5% level)
    assert result.table["p_value_adjusted"].min() > 0.05
    assert np.abs(result.table["mean"]).max() < result.null_max.max()


def _by_hand(clda, X, labels, a, b, random_state, max_distance=0.5):
    """The first shuffled fit, as the docs describe it: the labels of a's and
    b's documents (all, for b=None) permuted, a seed, a refit, its topics
    matched with the model's."""
    rng = np.random.RandomState(random_state)
    rows = np.arange(labels.size) if b is None else np.flatnonzero(np.isin(labels, [a, b]))
    shuffled = labels.copy()
    shuffled[rows] = labels[rng.permutation(rows)]
    seed = rng.randint(np.iinfo(np.int32).max)
    fit = clone(clda).set_params(random_state=seed).fit(X, groups=shuffled)
    difference = compare_collections(fit, a, b)["mean"].to_numpy()
    order, distances = align_topics(clda.components_, fit.components_)
    matched = np.where(distances > max_distance, np.nan, difference[order])
    return shuffled, matched, np.abs(difference).max(), distances


@pytest.mark.parametrize("b", ["blogs", None])
def test_the_null_is_refits_with_the_labels_of_a_and_b_shuffled(three, b):
    clda, X, labels = three
    result = permutation_test(clda, X, labels, "news", b, n_permutations=2, random_state=7,
                              n_jobs=2)
    shuffled, matched, largest, distances = _by_hand(clda, X, labels, "news", b, 7)
    if b is not None:  # the third collection keeps its documents
        assert_array_equal(shuffled == "forums", labels == "forums")
    assert not np.array_equal(shuffled, labels)
    assert_allclose(result.null_differences[0], matched)
    assert_allclose(result.distances[0], distances)
    assert result.null_max[0] == pytest.approx(largest)


def test_p_values_count_the_shuffles_at_least_as_far_from_zero(unrelated):
    result = unrelated
    size = np.abs(result.table["mean"].to_numpy())
    n = result.null_max.size
    assert_allclose(result.table["p_value_adjusted"],
                    (1 + (result.null_max[:, None] >= size).sum(axis=0)) / (1 + n))
    null = result.null_differences
    assert_array_equal(np.isnan(null), result.distances > 0.2)
    matched = np.isfinite(null).sum(axis=0)
    assert_array_equal(result.table["n_matched"], matched)
    beyond = (np.nan_to_num(np.abs(null), nan=-1.0) >= size).sum(axis=0)
    expected = np.where(matched > 0, (1 + beyond) / (1 + np.maximum(matched, 1)), np.nan)
    assert_allclose(result.table["p_value"], expected)
    # each fit's largest absolute difference is that of one of its topics
    assert np.all(result.null_max >= np.nanmax(np.abs(null), axis=1))
    # (differences that shuffles reach: the counts are not all zero)
    assert 0.2 < result.table["p_value_adjusted"].min()
    assert result.table["p_value"].min() < result.table["p_value_adjusted"].min()


def test_a_pipeline_on_texts():
    topics = {"sport": "team ball match goal", "vote": "party vote law senate"}
    rng = np.random.default_rng(0)
    texts, groups = [], []
    for i in range(40):
        source = "uk" if i % 2 else "us"
        words = topics["sport" if (i % 4 < 2) == (source == "uk") else "vote"].split()
        texts.append(" ".join(rng.choice(words, size=12)))
        groups.append(source)
    pipe = make_pipeline(CountVectorizer(),
                         CompoundLDA(n_components=2, max_iter=60, thin=2, random_state=0))
    pipe.fit(texts, compoundlda__groups=groups)
    result = permutation_test(pipe, texts, groups, "uk", n_permutations=2, random_state=0)
    assert len(result.table) == 2
    assert result.null_differences.shape == (2, 2)


def test_groups_other_than_the_fit_are_refused(three):
    clda, X, labels = three
    moved = labels.copy()
    moved[0] = "forums" if moved[0] != "forums" else "news"
    with pytest.raises(ValueError, match="must be those the model was fitted with, but "
                                         "collection '.*' has 2[46] document"):
        permutation_test(clda, X, moved, "news", "blogs", n_permutations=1)
    renamed = np.where(labels == "forums", "radio", labels)
    with pytest.raises(ValueError, match="collection 'forums' has 0 document"):
        permutation_test(clda, X, renamed, "news", "blogs", n_permutations=1)
    with pytest.raises(ValueError, match="74 labels but X has 75"):
        permutation_test(clda, X, labels[:-1], "news", "blogs", n_permutations=1)


def test_models_without_collections_are_refused(three):
    clda, X, labels = three
    alone = clone(clda).fit(X)
    with pytest.raises(ValueError, match="fitted with groups"):
        permutation_test(alone, X, labels, "news", n_permutations=1)
    lda = LDAGibbs(n_components=3, max_iter=20, random_state=0).fit(X)
    with pytest.raises(ValueError, match="CompoundLDA"):
        permutation_test(lda, X, labels, "news", n_permutations=1)


@pytest.mark.parametrize("a, b, message", [
    ("news", "news", "must differ"),
    ("radio", None, "not a collection"),
    ("news", "radio", "not a collection"),
])
def test_collections_named_wrong_are_refused(three, a, b, message):
    clda, X, labels = three
    with pytest.raises(ValueError, match=message):
        permutation_test(clda, X, labels, a, b, n_permutations=1)


@pytest.mark.parametrize("params", [{"n_permutations": 0}, {"max_distance": 1.5},
                                    {"metric": "euclid"}, {"ci": 1.0}])
def test_bad_settings_are_named(three, params):
    clda, X, labels = three
    with pytest.raises(InvalidParameterError, match=next(iter(params))):
        permutation_test(clda, X, labels, "news", **params)


def test_groups_of_topics_sum_the_matched_differences(three):
    clda, X, labels = three
    plain = permutation_test(clda, X, labels, "news", "blogs", n_permutations=6,
                             random_state=0)
    groups = {"zero and one": [0, 1], "two": [2]}
    grouped = permutation_test(clda, X, labels, "news", "blogs", n_permutations=6,
                               random_state=0, topic_groups=groups)
    table = grouped.table
    assert table["topic"].tolist() == ["zero and one", "two"]
    observed = compare_collections(clda, "news", "blogs", topic_groups=groups)
    assert_allclose(table[["mean", "lower", "upper"]], observed[["mean", "lower", "upper"]])
    # the same shuffles and refits: the groups' null is the sum of their topics'
    null = plain.null_differences
    assert_allclose(grouped.null_differences[:, 0], null[:, 0] + null[:, 1])
    assert_allclose(grouped.null_differences[:, 1], null[:, 2])
    assert_array_equal(grouped.distances, plain.distances)
    assert_allclose(grouped.null_max, np.nanmax(np.abs(grouped.null_differences), axis=1))
    # a group of one topic has that topic's p-value
    assert table["p_value"].iloc[1] == plain.table["p_value"].iloc[2]
    assert table["n_matched"].iloc[1] == plain.table["n_matched"].iloc[2]


def test_a_group_with_an_unmatched_topic_leaves_the_fit_out():
    from sklearn_clda.inspection._permutation import _grouped_null

    null = np.array([[0.1, np.nan, 0.3], [0.2, -0.5, 0.1], [np.nan, np.nan, np.nan]])
    grouped, size = _grouped_null(null, {"ab": [0, 1], "c": [2], "ac": [0, 2]})
    assert_allclose(grouped, [[np.nan, 0.3, 0.4], [-0.3, 0.1, 0.3],
                              [np.nan, np.nan, np.nan]])
    assert_allclose(size, [0.4, 0.3, np.nan])

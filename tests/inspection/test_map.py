"""topic_map places the topics by the principal coordinates of their distances."""

import numpy as np
import pytest
from numpy.testing import assert_allclose
from sklearn.decomposition import PCA
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.pipeline import make_pipeline
from sklearn.utils._param_validation import InvalidParameterError

from sklearn_clda import LDAGibbs
from sklearn_clda.inspection import topic_labels, topic_map
from sklearn_clda.inspection._map import topic_coordinates
from sklearn_clda.metrics._topics import _topic_distance_matrix

from _sport_politics import COMPONENTS, VOCAB, fitted_lda


pytest.importorskip("pandas")

def _same_up_to_axis_signs(a, b):
    """Columns of ``a`` equal to those of ``b`` or to their negatives."""
    signs = np.sign(np.sum(a * b, axis=0))
    signs[signs == 0] = 1.0
    assert_allclose(a, b * signs, atol=1e-10)


def _classical_mds(distances):
    """Torgerson's scaling by hand: the two leading eigenvectors of the
    double-centred squared distances, scaled by the roots of their
    eigenvalues (zero where not positive)."""
    n = distances.shape[0]
    centring = np.eye(n) - 1.0 / n
    b = -0.5 * centring @ (distances ** 2) @ centring
    values, vectors = np.linalg.eigh(b)
    top = np.argsort(values)[::-1][:2]
    return vectors[:, top] * np.sqrt(np.clip(values[top], 0.0, None)), values[top] / np.trace(b)


def test_hellinger_coordinates_are_a_pca_of_the_root_distributions():
    # H(p, q) = |sqrt(p) - sqrt(q)| / sqrt(2): principal coordinates of the
    # Hellinger distances are the principal components of sqrt(phi) / sqrt(2)
    phi = COMPONENTS / COMPONENTS.sum(axis=1, keepdims=True)
    pca = PCA(n_components=2).fit(np.sqrt(phi / 2.0))
    table = topic_map(fitted_lda(), VOCAB)
    _same_up_to_axis_signs(table[["x", "y"]].to_numpy(), pca.transform(np.sqrt(phi / 2.0)))
    assert_allclose(table.attrs["explained"], pca.explained_variance_ratio_, rtol=1e-10)
    # the first axis parts sport (topics 0-2) from politics (3-5)
    assert np.sign(table["x"]).tolist() in ([-1.0] * 3 + [1.0] * 3, [1.0] * 3 + [-1.0] * 3)


@pytest.mark.parametrize("metric", ["jsd", "tv", "hellinger"])
def test_every_metric_gets_classical_scaling_of_its_distances(metric):
    xy, explained = topic_coordinates(COMPONENTS, metric)
    expected, ratios = _classical_mds(_topic_distance_matrix(COMPONENTS, metric))
    _same_up_to_axis_signs(xy, expected)
    assert_allclose(explained, ratios, rtol=1e-10)


def test_many_topics_take_the_iterative_solver_and_agree_with_eigh():
    # past 200 topics KernelPCA's "auto" uses ARPACK instead of a full eigh
    rng = np.random.default_rng(0)
    components = rng.gamma(0.2, size=(250, 40)) + 1e-3
    xy, explained = topic_coordinates(components, "hellinger")
    expected, ratios = _classical_mds(_topic_distance_matrix(components, "hellinger"))
    _same_up_to_axis_signs(xy, expected)
    assert_allclose(explained, ratios, rtol=1e-8)


def test_each_axis_is_turned_so_its_largest_coordinate_is_positive():
    # the same map whatever the eigen-solver's signs, and the topics'
    # order: reordering the topics reorders their places
    xy, _ = topic_coordinates(COMPONENTS, "hellinger")
    for axis in range(2):
        assert xy[np.argmax(np.abs(xy[:, axis])), axis] > 0
    order = np.array([4, 2, 0, 5, 1, 3])
    moved, _ = topic_coordinates(COMPONENTS[order], "hellinger")
    assert_allclose(moved, xy[order], atol=1e-12)


def test_words_and_shares_are_the_models():
    table = topic_map(fitted_lda(), VOCAB, label_method="lift", n_words=4)
    labels = topic_labels(fitted_lda(), VOCAB, method="lift", n_words=4)
    assert table["words"].tolist() == labels["words"].tolist()
    assert_allclose(table["share"], COMPONENTS.sum(axis=1) / COMPONENTS.sum())
    assert table["topic"].tolist() == list(range(6))
    assert list(table.columns) == ["topic", "x", "y", "share", "words"]


def test_few_or_identical_topics_and_huge_weights():
    one = topic_map(fitted_lda(COMPONENTS[:1]), VOCAB)
    assert one[["x", "y"]].to_numpy().tolist() == [[0.0, 0.0]]
    assert one.attrs["explained"].tolist() == [0.0, 0.0]
    two = topic_map(fitted_lda(COMPONENTS[[0, 3]]), VOCAB)  # a line: the second axis is 0
    assert_allclose(two["y"], 0.0, atol=1e-12)
    distance = _topic_distance_matrix(COMPONENTS[[0, 3]], "hellinger")[0, 1]
    assert_allclose(np.abs(two["x"]), distance / 2)
    assert_allclose(two.attrs["explained"], [1.0, 0.0], atol=1e-12)
    same = topic_map(fitted_lda(np.tile(COMPONENTS[:1], (3, 1))), VOCAB)
    assert_allclose(same[["x", "y"]].to_numpy(), 0.0, atol=1e-6)
    huge = topic_map(fitted_lda(COMPONENTS * 1e306), VOCAB)
    assert_allclose(huge[["x", "y"]], topic_map(fitted_lda(), VOCAB)[["x", "y"]], atol=1e-8)
    assert_allclose(huge["share"].sum(), 1.0)


def test_a_fitted_pipeline_names_its_words():
    docs = ["goal match goal league", "vote party senate vote", "match coach goal",
            "law senate vote party"] * 5
    pipe = make_pipeline(CountVectorizer(), LDAGibbs(n_components=2, max_iter=20,
                                                     random_state=0)).fit(docs)
    table = topic_map(pipe, n_words=2)
    vocabulary = set(pipe[0].get_feature_names_out())
    assert all(set(words) <= vocabulary for words in table["words"])


def test_errors():
    with pytest.raises(InvalidParameterError, match="metric"):
        topic_map(fitted_lda(), VOCAB, metric="cosine")
    with pytest.raises(InvalidParameterError, match="n_words"):
        topic_map(fitted_lda(), VOCAB, n_words=0)
    with pytest.raises(ValueError, match="feature_names"):
        topic_map(fitted_lda(), VOCAB[:3])
    with pytest.raises(ValueError, match="has none"):
        topic_map(fitted_lda(np.zeros((0, 8))), VOCAB)
    with pytest.raises(ValueError, match="non-negative"):
        topic_map(fitted_lda(-COMPONENTS), VOCAB)

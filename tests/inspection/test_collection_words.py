"""topic_words_by_collection: the expected counts against a dense NumPy
reference, the z-scores against Monroe et al.'s formula written out, and
planted collection-specific words recovered."""

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.decomposition import LatentDirichletAllocation
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.pipeline import make_pipeline
from sklearn.utils._param_validation import InvalidParameterError

from sklearn_clda import CompoundLDA, LDAGibbs
from sklearn_clda.inspection import _collection_words, topic_words_by_collection
from sklearn_clda.inspection._collection_words import (
    _attribution_weights,
    _log_odds_z,
    _word_topic,
    ExpectedTopicWordCounts,
)

pytest.importorskip("pandas")

# Two shared topics (sport: words 0-1, politics: words 4-5); each topic has
# one word per collection (uk: 2 and 6, us: 3 and 7), and word 8 that both
# collections use alike in sport.
VOCAB = ["team", "ball", "match", "game", "vote", "party", "parliament", "congress", "play"]


def planted_corpus(n_per_kind=12, seed=0):
    rng = np.random.default_rng(seed)
    rows, groups = [], []
    for country, (sport_word, politics_word) in (("uk", (2, 6)), ("us", (3, 7))):
        for _ in range(n_per_kind):
            sport = np.zeros(len(VOCAB), dtype=np.int64)
            sport[[0, 1, 8]] = rng.integers(4, 7, size=3)
            sport[sport_word] = rng.integers(2, 4)
            politics = np.zeros(len(VOCAB), dtype=np.int64)
            politics[[4, 5]] = rng.integers(4, 7, size=2)
            politics[politics_word] = rng.integers(2, 4)
            rows += [sport, politics]
            groups += [country, country]
    return sp.csr_matrix(np.array(rows)), np.array(groups)


@pytest.fixture(scope="module")
def corpus():
    return planted_corpus()


@pytest.fixture(scope="module")
def clda(corpus):
    X, groups = corpus
    return CompoundLDA(n_components=2, max_iter=200, random_state=0).fit(X, groups=groups)


def sport_topic(model):
    return int(np.argmax(model.components_[:, VOCAB.index("ball")]))


@pytest.mark.parametrize("chunk_bytes", [None, 1])
def test_expected_counts_match_dense_reference(chunk_bytes, monkeypatch):
    if chunk_bytes is not None:  # one token at a time
        monkeypatch.setattr(_collection_words, "_CHUNK_BYTES", chunk_bytes)
    rng = np.random.default_rng(1)
    D, V, K = 30, 17, 5
    dense = rng.integers(0, 4, size=(D, V)) * (rng.random((D, V)) < 0.4)
    theta = rng.dirichlet(np.ones(K), size=D)
    phi = rng.dirichlet(np.ones(V), size=K)
    label = rng.integers(0, 3, size=D)
    members = [np.flatnonzero(label == j) for j in range(3)]
    weights = _attribution_weights(sp.csr_matrix(dense.astype(float)), theta, phi.T.copy())
    S = theta @ phi
    every = np.zeros((3, V))
    expected = ExpectedTopicWordCounts(weights, theta, phi.T.copy(), members)
    for k in (4, 1, 2, 0, 3):
        got = expected.topic(k)
        assert sp.issparse(got) and got.shape == (3, V)
        want = np.zeros((3, V))
        for j, rows in enumerate(members):
            for d in rows:
                want[j] += dense[d] * theta[d, k] * phi[k] / S[d]
        np.testing.assert_allclose(got.toarray(), want, rtol=1e-12, atol=1e-13)
        # A collection's row holds only the words its documents use.
        for j, rows in enumerate(members):
            assert set(got[j].indices) <= set(np.flatnonzero(dense[rows].sum(axis=0)))
        every += got.toarray()
    # Over every topic, the expected counts are the counts.
    for j, rows in enumerate(members):
        np.testing.assert_allclose(every[j], dense[rows].sum(axis=0), rtol=1e-12)


def test_tokens_no_topic_can_explain_get_no_weight():
    theta = np.array([[1.0, 0.0], [0.5, 0.5]])
    phi = np.array([[0.0, 1.0], [0.5, 0.5]])  # word 0 only in topic 1
    counts = sp.csr_matrix(np.array([[2.0, 1.0], [1.0, 1.0]]))
    weights = _attribution_weights(counts, theta, phi.T.copy())
    assert np.all(np.isfinite(weights.toarray()))
    assert weights[0, 0] == 0.0


@pytest.mark.parametrize("against", [None, 1])
def test_z_scores_follow_monroe_et_al(against):
    counts = np.array([[30.0, 5.0, 0.0, 15.0], [10.0, 20.0, 1.0, 9.0], [2.0, 3.0, 0.5, 4.0]])
    phi_k = np.array([0.4, 0.3, 0.05, 0.25])
    prior = 50.0
    rest = (counts.sum(axis=0) - counts if against is None
            else np.broadcast_to(counts[against], counts.shape))
    z, n_own, n_rest = _log_odds_z(counts, rest, phi_k, prior)
    for j in range(3):
        others = counts.sum(axis=0) - counts[j] if against is None else counts[against]
        for w in range(4):
            a = prior * phi_k[w]
            y_j, y_r = counts[j, w], others[w]
            n_j, n_r = counts[j].sum(), others.sum()
            delta = (np.log((y_j + a) / (n_j + prior - y_j - a))
                     - np.log((y_r + a) / (n_r + prior - y_r - a)))
            want = delta / np.sqrt(1 / (y_j + a) + 1 / (y_r + a))
            assert z[j, w] == pytest.approx(want, rel=1e-12)
        assert n_own[j] == pytest.approx(counts[j].sum())
        assert n_rest[j] == pytest.approx(others.sum())


def test_z_scores_finite_where_the_topic_has_no_word():
    counts = np.array([[3.0, 0.0], [1.0, 0.0]])
    z, *_ = _log_odds_z(counts, counts[::-1], np.array([1.0, 0.0]), 10.0)
    assert np.all(np.isfinite(z)) and abs(z[0, 1]) < 1e-100


def test_planted_words_of_each_collection(corpus, clda):
    X, groups = corpus
    table = topic_words_by_collection(clda, X, groups, n_words=2, feature_names=VOCAB)
    assert table.columns.tolist() == [
        "topic", "collection", "collection_tokens", "rank", "word", "z", "count",
        "rate", "rest_rate",
    ]
    assert table["topic"].tolist() == [0] * 4 + [1] * 4
    assert table["collection"].tolist() == ["uk", "uk", "us", "us"] * 2
    assert table["rank"].tolist() == [1, 2] * 4
    first = table[table["rank"] == 1].set_index(["topic", "collection"])["word"]
    sport, politics = sport_topic(clda), 1 - sport_topic(clda)
    assert first[(sport, "uk")] == "match" and first[(sport, "us")] == "game"
    assert first[(politics, "uk")] == "parliament" and first[(politics, "us")] == "congress"
    top = table[table["rank"] == 1]
    assert (top["z"] > 3).all()
    assert np.allclose(top["rest_rate"], 0.0, atol=0.01) and (top["rate"] > 0.1).all()
    # The topic's shared words are neither collection's mark.
    everything = topic_words_by_collection(clda, X, groups, topic=sport, n_words=len(VOCAB),
                                           feature_names=VOCAB)
    for word in ("team", "ball", "play"):
        assert (everything[everything["word"] == word]["z"].abs() < 2.5).all()
    # Each collection's tokens in the topic are its counts' share of it.
    tokens = everything.groupby("collection")["collection_tokens"].first()
    assert tokens.sum() == pytest.approx(everything.groupby("collection")["count"].sum().sum())


def test_components_and_input_left_alone(corpus):
    X, groups = corpus
    model = LDAGibbs(n_components=2, max_iter=30, random_state=0).fit(X)
    before = model.components_.copy()
    # Float counts with unsorted indices (not canonical), left as given.
    messy = sp.csr_matrix((np.r_[X.data, 1].astype(float), np.r_[X.indices, X.indices[0]],
                           np.r_[X.indptr[:-1], X.indptr[-1] + 1]), shape=X.shape)
    messy.indices[-2:] = messy.indices[-2:][::-1].copy()
    arrays = [a.copy() for a in (messy.data, messy.indices, messy.indptr)]
    tidy = topic_words_by_collection(model, X, groups)
    assert not messy.has_canonical_format
    pass_messy = topic_words_by_collection(model, messy, groups)
    np.testing.assert_array_equal(model.components_, before)
    for a, b in zip(arrays, (messy.data, messy.indices, messy.indptr)):
        np.testing.assert_array_equal(a, b)
    assert pass_messy.shape == tidy.shape


def test_non_integer_counts_are_counted_as_the_model_rounds_them(corpus, clda):
    X, groups = corpus
    uneven = X.astype(np.float64)
    uneven.data[::2] += 0.4  # rounded away by the model's transform (it warns)
    with pytest.warns(UserWarning, match="rounded to the nearest integer"):
        got = topic_words_by_collection(clda, uneven, groups)
    want = topic_words_by_collection(clda, X, groups)
    pd.testing.assert_frame_equal(got, want)


def dense_reference(model, X, groups, topic, against):
    """Each collection's best word in ``topic`` and its z-score, from the
    dense (collections x words) counts of the topic at once."""
    theta = model.transform(X)
    phi_t = _word_topic(model.components_)
    weights = _attribution_weights(sp.csr_matrix(X, dtype=float), theta, phi_t)
    names, index = np.unique(groups, return_inverse=True)
    members = [np.flatnonzero(index == j) for j in range(names.size)]
    counts = ExpectedTopicWordCounts(weights, theta, phi_t, members).topic(topic).toarray()
    if against is None:
        rest = counts.sum(axis=0) - counts
    else:
        b = list(names).index(against)
        rest = np.broadcast_to(counts[b], (names.size - 1, counts.shape[1]))
        counts, names = np.delete(counts, b, axis=0), np.delete(names, b)
    z, *_ = _log_odds_z(counts, rest, phi_t[:, topic], 100.0)
    return names, z.argmax(axis=1), z.max(axis=1)


@pytest.mark.parametrize("against", [None, "b"])
def test_blocks_and_chunks_give_the_same_table(corpus, monkeypatch, against):
    X, groups = corpus
    model = LDAGibbs(n_components=2, max_iter=30, random_state=0).fit(X)
    # Four collections, so that blocks of one hold the others apart.
    groups = np.array(["a", "b", "c", "d"] * (len(groups) // 4))
    whole = topic_words_by_collection(model, X, groups, n_words=4, against=against)
    monkeypatch.setattr(_collection_words, "_BLOCK_BYTES", 1)  # one collection at a time
    monkeypatch.setattr(_collection_words, "_CHUNK_BYTES", 1)  # one token at a time
    pieces = topic_words_by_collection(model, X, groups, n_words=4, against=against)
    pd.testing.assert_frame_equal(whole, pieces, check_exact=False, rtol=1e-12)
    for k in range(2):
        names, best, z = dense_reference(model, X, groups, k, against)
        first = pieces[(pieces["topic"] == k) & (pieces["rank"] == 1)]
        assert first["collection"].tolist() == names.tolist()
        assert first["word"].tolist() == [f"word {w}" for w in best]
        np.testing.assert_allclose(first["z"], z, rtol=1e-12)


def test_against_one_collection(corpus, clda):
    """Against one collection, its rows go; with two collections the other's
    words and z-scores are those against all the others."""
    X, groups = corpus
    everyone = topic_words_by_collection(clda, X, groups, n_words=3, feature_names=VOCAB)
    against = topic_words_by_collection(clda, X, groups, n_words=3, feature_names=VOCAB,
                                        against="uk")
    assert set(against["collection"]) == {"us"}
    us = everyone[everyone["collection"] == "us"].reset_index(drop=True)
    assert us["word"].tolist() == against["word"].tolist()
    np.testing.assert_allclose(us["z"], against["z"], rtol=1e-12)
    np.testing.assert_allclose(us["rest_rate"], against["rest_rate"], rtol=1e-12)
    with pytest.raises(ValueError, match=r"against='fr' .* not a collection of X; the labels in groups are "
                       r"\['uk', 'us'\]"):
        topic_words_by_collection(clda, X, groups, against="fr")


def test_topic_subset_in_the_order_asked(corpus, clda):
    X, groups = corpus
    table = topic_words_by_collection(clda, X, groups, topic=[1, 0], n_words=1)
    assert table["topic"].tolist() == [1, 1, 0, 0]
    assert table["word"].str.startswith("word ").all()


def test_pipeline_of_texts_and_scikit_learn_lda(corpus):
    X, groups = corpus
    dense = X.toarray()
    texts = [" ".join(np.repeat(VOCAB, row)) for row in dense]
    pipe = make_pipeline(
        CountVectorizer(),
        LatentDirichletAllocation(n_components=2, max_iter=50, random_state=0),
    ).fit(texts)
    table = topic_words_by_collection(pipe, texts, groups, n_words=1)
    lda = pipe[-1]
    names = pipe[0].get_feature_names_out()
    sport = int(np.argmax(lda.components_[:, list(names).index("ball")]))
    first = table[table["topic"] == sport].set_index("collection")["word"]
    assert first["uk"] == "match" and first["us"] == "game"


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        (dict(groups=["uk"] * 48), ValueError, "one label"),
        (dict(groups=["uk", "us"] * 10), ValueError, "groups"),
        (dict(topic=2), ValueError, "out of range"),
        (dict(prior=0.0), InvalidParameterError, "prior"),
        (dict(n_words=0), InvalidParameterError, "n_words"),
        (dict(groups=None), InvalidParameterError, "groups"),
        (dict(feature_names=["a", "b"]), ValueError, "feature_names"),
    ],
)
def test_bad_input_raises_clear_errors(corpus, kwargs, error, match):
    X, groups = corpus
    model = LDAGibbs(n_components=2, max_iter=5, random_state=0).fit(X)
    args = dict(groups=groups, **kwargs) if "groups" not in kwargs else kwargs
    groups_arg = args.pop("groups")
    with pytest.raises(error, match=match):
        topic_words_by_collection(model, X, groups_arg, **args)


def test_z_scores_at_the_edges_of_the_floating_point_range():
    # A topic whose mass is on one word (its other words' share 0, so the
    # floor takes over), and prior shares as small as a double holds: the
    # ratio of the four terms leaves the range, the four logs do not.
    tiny = _collection_words._TINY
    counts = np.array([[5.0, 0.0, 0.0, 2.0], [0.0, 0.0, 3.0, 1e9], [7.0, 0.0, 0.0, 0.0]])
    rest = np.array([[0.0, 0.0, 4.0, 1e9], [6.0, 0.0, 0.0, 0.0], [1e9, 0.0, 2.0, 1.0]])
    for phi_k, prior in (([1.0, 0.0, 0.0, 0.0], 10.0), ([1.0, 1e-320, 1e-300, 0.0], 1e-3),
                         ([0.25, 0.25, 0.25, 0.25], 1e-300)):
        phi_k = np.array(phi_k)
        z, *_ = _log_odds_z(counts, rest, phi_k, prior)
        a = np.maximum(prior * phi_k, tiny)
        n, m = counts.sum(axis=1, keepdims=True), rest.sum(axis=1, keepdims=True)
        delta = (np.log(counts + a) - np.log(np.maximum(n + prior - counts - a, tiny))
                 - np.log(rest + a) + np.log(np.maximum(m + prior - rest - a, tiny)))
        want = delta / np.sqrt(1 / (counts + a) + 1 / (rest + a))
        assert np.all(np.isfinite(z))
        np.testing.assert_allclose(z, want, rtol=1e-9)

"""document_collections: p(collection | words), by importance sampling over z."""

import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import gammaln
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.pipeline import make_pipeline

from sklearn_clda import CompoundLDA, LDAGibbs
from sklearn_clda import _chunking
from sklearn_clda.datasets import make_compound_corpus
from sklearn_clda.inspection import document_collections
from sklearn_clda.inspection._document_collections import (
    log_prior_ratios,
    sample_topic_counts,
)

pytest.importorskip("pandas")


def _log_dirmult(n, a):
    """log p(z | a) of one sequence of topics with counts n."""
    return (gammaln(a.sum()) - gammaln(a.sum() + n.sum())
            + (gammaln(a + n) - gammaln(a)).sum())


def _exact_posterior(phi, draws, gamma, sizes, doc):
    """p(j | w) by summing over every assignment of the document's tokens."""
    K = phi.shape[0]
    lik = np.zeros(draws.shape[1])
    for z in itertools.product(range(K), repeat=len(doc)):
        n = np.bincount(z, minlength=K)
        p_words = np.prod(phi[list(z), doc])
        for j in range(draws.shape[1]):
            lik[j] += p_words * np.mean([np.exp(_log_dirmult(n, gamma * pi[j]))
                                         for pi in draws])
    post = lik * sizes
    return post / post.sum()


@pytest.fixture(scope="module")
def hand_model():
    """A CompoundLDA of 3 topics over 4 words and 3 collections, its topics
    and draws of pi set by hand: the second draw differs much from the
    first for collection "c", so that averaging the draws' probabilities,
    their logs or taking the mean draw disagree (by 0.06 to 0.14 on some of
    DOCS), by more than the tolerance; 6,000 samples stay within 0.013 of
    the exact posterior (seeds 0-3)."""
    corpus = make_compound_corpus(n_topics=3, n_features=4, n_collections=3,
                                  docs_per_collection=5, doc_length=5, random_state=0)
    model = CompoundLDA(n_components=3, max_iter=4, thin=1, random_state=0)
    model.fit(corpus.data, groups=np.array(["a", "b", "c"])[corpus.groups])
    model.components_ = np.array([[8.0, 1.0, 1.0, 0.5], [1.0, 6.0, 0.5, 2.0],
                                  [0.5, 1.0, 5.0, 3.0]])
    draws = np.array([[[0.7, 0.2, 0.1], [0.1, 0.6, 0.3], [0.9, 0.05, 0.05]],
                      [[0.6, 0.3, 0.1], [0.2, 0.5, 0.3], [0.05, 0.05, 0.9]]])
    model.collection_topic_samples_ = draws
    model.collection_topic_ = draws.mean(axis=0)
    model.collection_sizes_ = np.array([5, 3, 2])
    model.gamma_ = 1.5
    return model


DOCS = [[0], [1, 1], [0, 2, 3], [3, 3, 1, 0], [2, 2, 2, 1, 0]]


def _as_counts(docs, n_features=4):
    rows = [np.bincount(doc, minlength=n_features) for doc in docs]
    return sp.csr_matrix(np.array(rows))


def test_the_posterior_is_the_exact_sum_over_assignments(hand_model):
    phi = hand_model.components_ / hand_model.components_.sum(axis=1, keepdims=True)
    table = document_collections(hand_model, _as_counts(DOCS), n_samples=6000, burn_in=20,
                                 random_state=0)
    found = table[["p_a", "p_b", "p_c"]].to_numpy()
    for row, doc in zip(found, DOCS):
        exact = _exact_posterior(phi, hand_model.collection_topic_samples_, 1.5,
                                 np.array([5, 3, 2]), np.array(doc))
        np.testing.assert_allclose(row, exact, atol=0.025)
    np.testing.assert_allclose(found.sum(axis=1), 1.0)


def test_the_uniform_prior_drops_the_sizes(hand_model):
    X = _as_counts(DOCS)
    sized = document_collections(hand_model, X, prior="sizes", random_state=3)
    uniform = document_collections(hand_model, X, prior="uniform", random_state=3)
    reweighted = uniform[["p_a", "p_b", "p_c"]].to_numpy() * [5, 3, 2]
    np.testing.assert_allclose(sized[["p_a", "p_b", "p_c"]].to_numpy(),
                               reweighted / reweighted.sum(axis=1, keepdims=True), rtol=1e-12)


def test_the_sampler_draws_the_assignments_posterior():
    """Sweeps of one document of three tokens visit its topic counts as
    often as their exact posterior probability under the prior."""
    phi = np.array([[0.6, 0.3, 0.1], [0.1, 0.3, 0.6]])
    prior = np.array([0.4, 1.1])
    doc = [0, 1, 2]
    exact = {}
    for z in itertools.product(range(2), repeat=3):
        n = tuple(np.bincount(z, minlength=2))
        p = np.prod(phi[list(z), doc]) * np.exp(_log_dirmult(np.array(n), prior))
        exact[n] = exact.get(n, 0.0) + p
    total = sum(exact.values())
    counts = _as_counts([doc], n_features=3)
    rng = np.random.default_rng(0)
    seen = {}
    for ndk in itertools.islice(sample_topic_counts(phi.T.copy(), counts, prior, 40000, rng),
                                100, None):
        key = tuple(ndk[0])
        seen[key] = seen.get(key, 0) + 1
    n_seen = sum(seen.values())
    for key, p in exact.items():
        assert seen.get(key, 0) / n_seen == pytest.approx(p / total, abs=0.01), key


def test_prior_ratios_are_the_dirichlet_multinomial_ones(monkeypatch):
    rng = np.random.default_rng(0)
    ndk = rng.poisson(0.7, size=(9, 5))
    ndk[3] = 0  # a document without tokens
    alphas = rng.gamma(1.0, size=(2, 3, 5))
    alphas *= 2.0 / alphas.sum(axis=2, keepdims=True)
    neutral = np.full(5, 0.4)
    expected = np.array([[[_log_dirmult(n, alphas[s, j]) - _log_dirmult(n, neutral)
                           for n in ndk] for j in range(3)] for s in range(2)])
    np.testing.assert_allclose(log_prior_ratios(ndk, alphas, neutral), expected,
                               rtol=1e-10, atol=1e-12)
    monkeypatch.setattr(_chunking, "CHUNK_BYTES", 1)  # a document at a time
    np.testing.assert_allclose(log_prior_ratios(ndk, alphas, neutral), expected,
                               rtol=1e-10, atol=1e-12)


@pytest.fixture(scope="module")
def fitted():
    corpus = make_compound_corpus(n_topics=3, n_features=30, n_collections=3,
                                  docs_per_collection=30, doc_length=40, random_state=1)
    labels = np.array(["x", "y", "z"])[corpus.groups]
    model = CompoundLDA(n_components=3, max_iter=60, thin=2, random_state=0)
    return model.fit(corpus.data, groups=labels), corpus.data, labels


def test_documents_are_told_apart_by_their_collections_topics(fitted):
    model, X, labels = fitted
    table = document_collections(model, X, labels, random_state=0)
    assert table.columns.tolist() == ["collection", "most_likely", "probability", "own",
                                      "p_x", "p_y", "p_z"]
    assert table["collection"].tolist() == labels.tolist()
    assert (table["most_likely"] == table["collection"]).mean() > 0.9
    probs = table[["p_x", "p_y", "p_z"]].to_numpy()
    np.testing.assert_allclose(probs.sum(axis=1), 1.0)
    np.testing.assert_allclose(table["probability"], probs.max(axis=1))
    own = probs[np.arange(len(labels)), np.searchsorted(["x", "y", "z"], labels)]
    np.testing.assert_array_equal(table["own"], own)
    without = document_collections(model, X, random_state=0)
    assert without.columns.tolist() == ["most_likely", "probability", "p_x", "p_y", "p_z"]
    np.testing.assert_array_equal(without[["p_x", "p_y", "p_z"]].to_numpy(), probs)


def test_a_seed_gives_the_same_table_and_another_seed_a_close_one(fitted):
    model, X, labels = fitted
    one = document_collections(model, X[:20], labels[:20], random_state=5)
    again = document_collections(model, X[:20], labels[:20], random_state=5)
    other = document_collections(model, X[:20], labels[:20], random_state=6)
    assert one.equals(again)
    assert not one.equals(other)
    assert (one["most_likely"] == other["most_likely"]).mean() >= 0.9


def test_pieces_of_documents_give_the_same_answers(fitted, monkeypatch):
    from sklearn_clda.inspection import _document_collections as module

    model, X, labels = fitted
    whole = document_collections(model, X, labels, random_state=0)
    monkeypatch.setattr(module, "PIECE_BYTES", 1)  # a document at a time
    pieces = document_collections(model, X, labels, random_state=0)
    assert (pieces["most_likely"] == whole["most_likely"]).mean() >= 0.95
    np.testing.assert_allclose(pieces.filter(like="p_").sum(axis=1), 1.0)


def test_a_document_too_long_for_the_memory_is_refused(fitted, monkeypatch):
    from sklearn_clda.exceptions import MemoryLimitError
    from sklearn_clda.inspection import _document_collections as module

    model, X, _ = fitted
    monkeypatch.setattr(module, "physical_memory", lambda: 10_000)
    long = sp.csr_matrix(np.r_[np.ones(X.shape[1]), np.zeros(X.shape[1])].reshape(2, -1)
                         * [[400], [0]])
    with pytest.raises(MemoryLimitError, match="document 0 of 12000 tokens needs at least"):
        document_collections(model, long)


def test_an_empty_document_gets_the_prior(fitted):
    model, X, _ = fitted
    X = sp.vstack([sp.csr_matrix((1, X.shape[1])), X[:3]]).tocsr()
    table = document_collections(model, X, random_state=0)
    sizes = model.collection_sizes_ / model.collection_sizes_.sum()
    np.testing.assert_allclose(table.loc[0, ["p_x", "p_y", "p_z"]].to_numpy(float), sizes)
    flat = document_collections(model, X, prior="uniform", random_state=0)
    np.testing.assert_allclose(flat.loc[0, ["p_x", "p_y", "p_z"]].to_numpy(float), 1 / 3)


def test_a_pipeline_reads_texts():
    texts = (["goal match team player"] * 12 + ["bank market stock profit"] * 12
             + ["goal team market"] * 2)
    groups = ["sport"] * 12 + ["money"] * 12 + ["sport", "money"]
    pipe = make_pipeline(CountVectorizer(),
                         CompoundLDA(n_components=2, max_iter=60, thin=2, random_state=0))
    pipe.fit(texts, compoundlda__groups=groups)
    table = document_collections(pipe, ["team player goal", "stock bank"], random_state=0)
    assert table["most_likely"].tolist() == ["sport", "money"]


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_bad_input_is_named(fitted):
    model, X, labels = fitted
    with pytest.raises(ValueError, match="'w', which is not a collection of the model"):
        document_collections(model, X[:2], ["x", "w"])
    with pytest.raises(ValueError, match="2 documents .*3|3 .*2|number"):
        document_collections(model, X[:2], ["x", "y", "z"])
    with pytest.raises(ValueError, match="X passed to document_collections has 5 features"):
        document_collections(model, np.ones((2, 5)))
    with pytest.raises(ValueError, match="Negative values"):
        document_collections(model, -np.ones((2, X.shape[1])))
    one = CompoundLDA(n_components=2, max_iter=10, thin=1, random_state=0).fit(X)
    with pytest.raises(ValueError, match="fitted with one collection"):
        document_collections(one, X)
    lda = LDAGibbs(n_components=2, max_iter=5, random_state=0).fit(X)
    with pytest.raises(ValueError, match="needs a fitted CompoundLDA"):
        document_collections(lda, X)
    saved = model.components_
    try:
        for bad in (np.nan, -1.0):
            model.components_ = saved.copy()
            model.components_[0, 0] = bad
            with pytest.raises(ValueError, match="components_"):
                document_collections(model, X[:2])
    finally:
        model.components_ = saved


@pytest.mark.parametrize("kw", [{"prior": "flat"}, {"n_samples": 0}, {"burn_in": -1},
                                {"n_draws": 0}])
def test_bad_parameters_are_named(fitted, kw):
    with pytest.raises(ValueError, match=next(iter(kw))):
        document_collections(fitted[0], fitted[1][:2], **kw)

"""representative_documents on a corpus with planted topics."""

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_array_equal
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.pipeline import make_pipeline
from sklearn.utils._param_validation import InvalidParameterError

from sklearn_clda import CompoundLDA, LDAGibbs
from sklearn_clda.inspection import representative_documents

# Three planted topics on disjoint blocks of four words. Documents 0-23 are
# pure (8 per topic, block = index % 3); documents 24-29 mix all blocks.
N_PURE, BLOCK = 24, 4


def planted_corpus():
    rng = np.random.default_rng(0)
    X = np.zeros((30, 3 * BLOCK), dtype=np.int64)
    for d in range(N_PURE):
        block = d % 3
        X[d, block * BLOCK:(block + 1) * BLOCK] = rng.integers(2, 6, size=BLOCK)
    X[N_PURE:] = rng.integers(1, 3, size=(30 - N_PURE, 3 * BLOCK))
    groups = np.where(np.arange(30) % 2 == 0, "even", "odd")
    return sp.csr_matrix(X), groups


@pytest.fixture(scope="module")
def corpus():
    return planted_corpus()


@pytest.fixture(scope="module")
def lda(corpus):
    X, _ = corpus
    return LDAGibbs(n_components=3, max_iter=150, random_state=0).fit(X)


@pytest.fixture(scope="module")
def clda(corpus):
    X, groups = corpus
    return CompoundLDA(n_components=3, max_iter=150, random_state=0).fit(X, groups=groups)


def block_of_topic(model):
    """The planted block each fitted topic found (its heaviest block)."""
    weights = model.components_.reshape(3, 3, BLOCK).sum(axis=2)
    blocks = weights.argmax(axis=1)
    assert sorted(blocks) == [0, 1, 2]
    return blocks


def test_top_documents_are_pure_documents_of_the_topic(corpus, lda):
    X, _ = corpus
    docs = representative_documents(lda, X, n=5)
    assert docs.columns.tolist() == ["topic", "rank", "document", "theta"]
    assert docs["topic"].tolist() == [0] * 5 + [1] * 5 + [2] * 5
    assert docs["rank"].tolist() == [1, 2, 3, 4, 5] * 3
    blocks = block_of_topic(lda)
    theta = lda.transform(X)
    for k, rows in docs.groupby("topic"):
        documents = rows["document"].to_numpy()
        # Pure documents of the topic's block, never a mixed one ...
        assert np.all(documents < N_PURE)
        assert np.all(documents % 3 == blocks[k])
        # ... with their proportions, by decreasing share.
        np.testing.assert_allclose(rows["theta"], theta[documents, k])
        assert np.all(np.diff(rows["theta"]) <= 0)
        # No other document has a larger share than the last one shown.
        others = np.setdiff1d(np.arange(30), documents)
        assert theta[others, k].max() <= rows["theta"].min()


def test_collection_restricts_the_candidates(corpus, clda):
    X, groups = corpus
    docs = representative_documents(clda, X, groups, n=3, collection="odd")
    assert docs.columns.tolist() == ["topic", "rank", "document", "theta", "collection"]
    assert set(docs["collection"]) == {"odd"}
    assert np.all(docs["document"] % 2 == 1)
    # The shares are CompoundLDA's transform with each document's collection.
    theta = clda.transform(X, groups=groups)
    np.testing.assert_allclose(docs["theta"], theta[docs["document"], docs["topic"]])
    blocks = block_of_topic(clda)
    for k, rows in docs.groupby("topic"):
        assert np.all(rows["document"] % 3 == blocks[k])


def test_topic_selection_and_short_collections(corpus, lda):
    X, groups = corpus
    docs = representative_documents(lda, X, n=2, topic=[2, 0])
    assert docs["topic"].tolist() == [2, 2, 0, 0]
    docs = representative_documents(lda, X, n=1, topic=1)
    assert docs["topic"].tolist() == [1]
    # More documents asked than the collection has: all of them.
    small = np.array(["a"] * 28 + ["b"] * 2)
    docs = representative_documents(lda, X, small, n=5, topic=0, collection="b")
    assert sorted(docs["document"]) == [28, 29]


def test_scikit_learn_lda_with_collections(corpus):
    from sklearn.decomposition import LatentDirichletAllocation

    X, groups = corpus
    lda = LatentDirichletAllocation(n_components=3, max_iter=20, random_state=0).fit(X)
    docs = representative_documents(lda, X, groups, n=2, collection="even")
    assert np.all(docs["document"] % 2 == 0)
    theta = lda.transform(X)
    np.testing.assert_allclose(docs["theta"], theta[docs["document"], docs["topic"]])


def test_pipeline_on_texts():
    texts = ["apple banana apple", "banana apple", "dog cat dog", "cat dog dog"] * 4
    pipe = make_pipeline(CountVectorizer(), LDAGibbs(n_components=2, max_iter=100,
                                                     random_state=0)).fit(texts)
    docs = representative_documents(pipe, texts, n=2)
    for _, rows in docs.groupby("topic"):
        themes = {"fruit" if "apple" in texts[d] else "pet" for d in rows["document"]}
        assert len(themes) == 1


def test_collection_folds_in_its_own_documents_only():
    """With ``collection``, only that collection's rows are folded in (a
    report asks once per collection): the same proportions, bit for bit, as
    folding in everything, from raw texts in a list and labels in a pandas
    Series whose index is not its positions."""
    pd = pytest.importorskip("pandas")
    texts = ["apple banana apple pear", "banana apple", "dog cat dog", "cat dog dog fish",
             "apple dog", "pear pear banana", "fish cat", "banana cat apple"] * 3
    groups = pd.Series(list("abcabcab") * 3, index=np.arange(24)[::-1])
    pipe = make_pipeline(CountVectorizer(), CompoundLDA(n_components=2, max_iter=50,
                                                        random_state=0))
    pipe.fit(texts, compoundlda__groups=groups.to_numpy())
    theta = pipe[-1].transform(pipe[:-1].transform(texts), groups=groups.to_numpy())
    seen = []
    model = pipe[-1]
    transform = type(model).transform

    def recording(self, X, groups=None):
        seen.append(X.shape[0])
        return transform(self, X, groups=groups)

    model.transform = recording.__get__(model)
    docs = representative_documents(pipe, texts, groups, n=3, collection="b")
    assert seen == [9]
    rows = np.flatnonzero(groups.to_numpy() == "b")
    best = rows[np.argsort(-theta[rows][:, 0], kind="stable")[:3]]
    first = docs[docs["topic"] == 0]
    assert first["document"].tolist() == best.tolist()
    assert_array_equal(docs["theta"], theta[docs["document"], docs["topic"]])
    assert set(docs["collection"]) == {"b"}


def test_errors(corpus, lda):
    X, groups = corpus
    with pytest.raises(ValueError, match="needs groups"):
        representative_documents(lda, X, collection="odd")
    with pytest.raises(ValueError, match="labels none of the documents"):
        representative_documents(lda, X, groups, collection="none")
    # True == 1 in Python: a flag must not pick the documents labelled 1.
    with pytest.raises(ValueError, match="got bool True"):
        representative_documents(lda, X, np.arange(len(groups)) % 2, collection=True)
    with pytest.raises(ValueError, match="out of range"):
        representative_documents(lda, X, topic=3)
    with pytest.raises(ValueError, match="repeats"):
        representative_documents(lda, X, topic=[0, 0])
    with pytest.raises(ValueError, match="has 2 labels"):
        representative_documents(lda, X, groups[:2])
    with pytest.raises(InvalidParameterError, match="'n'"):
        representative_documents(lda, X, n=0)


def test_min_length_leaves_out_short_documents_and_texts_come_beside():
    """A three-word document can be all about a topic; min_length drops it
    before the fold-in, and the rows returned are still rows of X, with
    the caller's texts (a pandas Series with a shuffled index) beside."""
    pd = pytest.importorskip("pandas")
    texts = ["apple banana apple pear banana", "apple", "dog cat dog fish cat", "dog",
             "apple banana pear pear apple", "cat fish dog dog cat"] * 3
    series = pd.Series(texts, index=np.arange(len(texts))[::-1])
    pipe = make_pipeline(CountVectorizer(), LDAGibbs(n_components=2, max_iter=100,
                                                     random_state=0)).fit(texts)
    lengths = np.array([len(t.split()) for t in texts])
    everything = representative_documents(pipe, series, n=18, texts=series)
    assert (lengths[everything["document"]] == 1).any()
    docs = representative_documents(pipe, series, n=18, min_length=2, texts=series)
    assert len(docs) == 2 * 12 and (lengths[docs["document"]] == 5).all()
    assert docs["text"].tolist() == [texts[d] for d in docs["document"]]
    # The proportions are those of folding everything in.
    kept = everything[lengths[everything["document"]] > 1]
    for k in (0, 1):
        assert_array_equal(docs[docs.topic == k]["document"], kept[kept.topic == k]["document"])


def test_min_length_and_texts_errors(corpus, lda):
    X, groups = corpus
    with pytest.raises(ValueError, match=r"found no document of collection 'odd' with "
                                         r"min_length=1000 tokens or more; the longest has"):
        representative_documents(lda, X, groups, collection="odd", min_length=1000)
    with pytest.raises(ValueError, match="texts passed to representative_documents has 2 "
                                         "entries, but X has 30 documents"):
        representative_documents(lda, X, texts=["a", "b"])
    with pytest.raises(InvalidParameterError, match="'min_length'"):
        representative_documents(lda, X, min_length=0)


def test_texts_without_a_vectorizer_are_refused_clearly(lda):
    with pytest.raises(ValueError, match="must hold document-term counts .* e.g. a "
                                         "CountVectorizer"):
        representative_documents(lda, [["a", "b"], ["c", "d"]])

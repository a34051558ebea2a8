"""topic_info: one row per topic, each column the package's own function's."""

import numpy as np
import pytest
from numpy.testing import assert_allclose
from sklearn.decomposition import LatentDirichletAllocation
from sklearn.exceptions import NotFittedError
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.pipeline import make_pipeline
from sklearn.utils._param_validation import InvalidParameterError

from sklearn_clda import CompoundLDA, LDAGibbs
from sklearn_clda.datasets import make_compound_corpus
from sklearn_clda.inspection import (
    collection_topic_summary,
    representative_documents,
    topic_info,
    topic_labels,
)
from sklearn_clda.metrics import topic_coherence, topic_exclusivity, topic_sizes

VOCAB = np.array([f"w{i:02d}" for i in range(30)])


@pytest.fixture(scope="module")
def fitted():
    corpus = make_compound_corpus(n_topics=4, n_features=30, n_collections=3,
                                  docs_per_collection=25, doc_length=40, random_state=0)
    X = corpus.data.tolil()
    X[5] = 0  # a document without tokens is never listed
    X = X.tocsr()
    groups = np.array(["a", "b", "c"])[corpus.groups]
    model = CompoundLDA(n_components=4, max_iter=80, thin=2, random_state=0).fit(
        X, groups=groups)
    return model, X, groups


def test_every_column_is_its_functions(fitted):
    model, X, groups = fitted
    info = topic_info(model, X, groups, feature_names=VOCAB, n_words=5, coherence="npmi")
    tokens = topic_sizes(model, X, groups=groups)
    order = np.argsort(-tokens, kind="stable")
    assert info["topic"].tolist() == order.tolist()
    assert_allclose(info["tokens"], tokens[order], rtol=1e-12)
    assert_allclose(info["share"], tokens[order] / X.sum(), rtol=1e-12)
    labels = topic_labels(model, VOCAB, n_words=5).set_index("topic")
    assert info["words"].tolist() == labels.loc[order, "words"].tolist()
    assert info["prob_words"].tolist() == labels.loc[order, "prob_words"].tolist()
    assert_allclose(info["coherence"],
                    topic_coherence(X, model.components_, 5, measure="npmi")[order])
    assert_allclose(info["exclusivity"],
                    topic_exclusivity(model.components_, 5, frex_weight=0.7)[order])
    docs = representative_documents(model, X, groups, n=3)
    for row in info.itertuples():
        assert row.documents == docs[docs.topic == row.topic]["document"].tolist()
        assert 5 not in row.documents
    summary = collection_topic_summary(model, ci=0.8)
    lower = summary.pivot(index="collection", columns="topic", values="lower")
    info = topic_info(model, X, groups, ci=0.8)
    for row in info.itertuples():
        assert row.collection == lower[row.topic].idxmax()
        cell = summary[(summary.collection == row.collection) & (summary.topic == row.topic)]
        assert (row.collection_share, row.collection_lower, row.collection_upper) == \
            pytest.approx(tuple(cell[["mean", "lower", "upper"]].iloc[0]))


def test_models_without_collections(fitted):
    model, X, groups = fitted
    lda = LDAGibbs(n_components=3, max_iter=30, random_state=0).fit(X)
    info = topic_info(lda, X, n_documents=0)
    assert info.columns.tolist() == ["topic", "tokens", "share", "words", "prob_words",
                                     "coherence", "exclusivity", "documents"]
    assert info["documents"].tolist() == [[], [], []]
    assert info["words"].iloc[0][0].startswith("word ")
    sk = LatentDirichletAllocation(n_components=3, max_iter=5, random_state=0).fit(X)
    assert len(topic_info(sk, X)) == 3
    one = CompoundLDA(n_components=3, max_iter=30, random_state=0).fit(X)  # no groups
    assert "collection" not in topic_info(one, X).columns
    vem = CompoundLDA(n_components=3, algorithm="vem", max_iter=5, random_state=0)
    with pytest.warns(Warning):
        vem.fit(X, groups=groups)
    assert "collection" not in topic_info(vem, X, groups).columns


def test_a_pipeline_reads_texts():
    texts = ["goal match goal team", "vote party vote law", "goal match team",
             "party vote senate"] * 6
    pipe = make_pipeline(CountVectorizer(), LDAGibbs(n_components=2, max_iter=40,
                                                     random_state=0)).fit(texts)
    info = topic_info(pipe, texts, n_words=3)
    names = set(pipe[0].get_feature_names_out())
    assert all(set(words) <= names for words in info["words"])
    assert round(info["tokens"].sum()) == sum(len(t.split()) for t in texts)


def test_errors(fitted):
    model, X, groups = fitted
    with pytest.raises(ValueError, match="must hold document-term counts"):
        topic_info(model, [["a", "b"]], groups[:1])
    with pytest.raises(NotFittedError):
        topic_info(LDAGibbs(), X)
    with pytest.raises(ValueError, match="feature_names passed to topic_info has shape"):
        topic_info(model, X, groups, feature_names=VOCAB[:3])
    for params in ({"n_words": 1}, {"coherence": "cv"}, {"n_documents": -1},
                   {"label_method": "tfidf"}, {"ci": 1.0}):
        with pytest.raises(InvalidParameterError):
            topic_info(model, X, groups, **params)
    with pytest.raises(ValueError):
        topic_info(model, X, groups[:10])  # a label per document

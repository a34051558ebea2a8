"""topic_labels against stm's and LDAvis' published formulas, by hand."""


import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose
from sklearn.decomposition import LatentDirichletAllocation
from sklearn.exceptions import NotFittedError
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.pipeline import make_pipeline
from sklearn.utils._param_validation import InvalidParameterError

from sklearn_clda import CompoundLDA, LDAGibbs
from sklearn_clda.datasets import make_compound_corpus
from sklearn_clda.inspection import topic_labels
from sklearn_clda.inspection._labels import word_scores

# Three topics over four words; every row sums to 10, so phi = components / 10.
COMPONENTS = np.array([
    [5.0, 3.0, 1.0, 1.0],   # phi_0 = (.5, .3, .1, .1): words 2 and 3 tie
    [4.0, 1.0, 4.0, 1.0],   # phi_1 = (.4, .1, .4, .1)
    [1.0, 1.0, 2.0, 6.0],   # phi_2 = (.1, .1, .2, .6)
])
VOCAB = ["w0", "w1", "w2", "w3"]
PHI = COMPONENTS / 10.0


def fake_lda(components):
    """A scikit-learn LDA holding the given components_ (no fit needed)."""
    lda = LatentDirichletAllocation(n_components=components.shape[0])
    lda.components_ = np.asarray(components, dtype=np.float64)
    return lda


def ecdf_rank(row):
    """stm's rank(x) / length(x): the average rank (1-based) of each value."""
    row = np.asarray(row)
    less = (row[None, :] < row[:, None]).sum(axis=1)
    equal = (row[None, :] == row[:, None]).sum(axis=1)
    return (less + (equal + 1) / 2) / row.size


def test_frex_by_hand_topic_0():
    # Exclusivity phi_kv / sum_j phi_jv with column sums (1.0, .5, .7, .8):
    # topic 0: (.5, .6, .1/.7 = .142857, .1/.8 = .125).
    # ECDF ranks in topic 0: probability (.5, .3, .1, .1) -> ranks (4, 3, 1.5,
    # 1.5) / 4 = (1, .75, .375, .375); exclusivity -> (3, 4, 2, 1) / 4 =
    # (.75, 1, .5, .25).
    # FREX with w = 0.5: 1 / (.5 / excl_rank + .5 / prob_rank):
    #   w0: 1 / (.5/.75 + .5/1) = 6/7;   w1: 1 / (.5/1 + .5/.75) = 6/7;
    #   w2: 1 / (.5/.5 + .5/.375) = 3/7; w3: 1 / (.5/.25 + .5/.375) = 3/10.
    frex = word_scores(COMPONENTS, "frex", frex_weight=0.5)
    assert_allclose(frex[0], [6 / 7, 6 / 7, 3 / 7, 3 / 10])
    # w = 0.7 weighs exclusivity (as stm's exclusivity() and Bischof and
    # Airoldi): w1, the more exclusive, wins: 1 / (.7/1 + .3/.75) = 1 / 1.1
    # against w0's 1 / (.7/.75 + .3/1) = 1 / (37/30).
    frex = word_scores(COMPONENTS, "frex", frex_weight=0.7)
    assert_allclose(frex[0, :2], [30 / 37, 1 / 1.1])
    labels = topic_labels(fake_lda(COMPONENTS), VOCAB, n_words=2, frex_weight=0.7)
    assert labels.loc[0, "words"] == ["w1", "w0"]


def test_frex_all_topics_match_the_formula():
    excl = PHI / PHI.sum(axis=0)
    for w in (0.0, 0.3, 0.5, 1.0):
        expected = np.array([
            1 / (w / ecdf_rank(excl[k]) + (1 - w) / ecdf_rank(PHI[k])) for k in range(3)
        ])
        assert_allclose(word_scores(COMPONENTS, "frex", frex_weight=w), expected)


def test_lift_score_and_relevance_by_hand():
    # p_w: column sums (10, 5, 7, 8) over the total 30.
    p = np.array([10, 5, 7, 8]) / 30
    # Lift (stm calclift): phi / p. Topic 0: (.5 * 3, .3 * 6, .1 * 30/7, .1 * 30/8).
    lift = word_scores(COMPONENTS, "lift")
    assert_allclose(lift[0], [1.5, 1.8, 3 / 7, 0.375])
    assert_allclose(lift, PHI / p)
    # Score (stm calcscore, R package lda): phi * (log phi - mean_k log phi).
    # Word 0 of topic 0: .5 * (log .5 - (log .5 + log .4 + log .1) / 3).
    score = word_scores(COMPONENTS, "score")
    assert_allclose(score[0, 0], 0.5 * (np.log(0.5) - np.log(0.5 * 0.4 * 0.1) / 3))
    assert_allclose(score, PHI * (np.log(PHI) - np.log(PHI).mean(axis=0)))
    # Relevance (LDAvis): lam log phi + (1 - lam) log(phi / p).
    relevance = word_scores(COMPONENTS, "relevance", relevance_lambda=0.6)
    assert_allclose(relevance[2, 3], 0.6 * np.log(0.6) + 0.4 * np.log(0.6 / (8 / 30)))
    assert_allclose(relevance, 0.6 * np.log(PHI) + 0.4 * np.log(PHI / p))
    assert_allclose(word_scores(COMPONENTS, "relevance", relevance_lambda=1.0), np.log(PHI))
    assert_allclose(word_scores(COMPONENTS, "prob"), PHI)


def test_labels_frame_orders_words_by_the_method():
    lda = fake_lda(COMPONENTS)
    labels = topic_labels(lda, VOCAB, method="lift", n_words=3)
    assert labels.columns.tolist() == ["topic", "words", "prob_words"]
    assert labels["topic"].tolist() == [0, 1, 2]
    # Topic 0 lift (1.5, 1.8, .43, .375); topic 1: (1.2, .6, 1.714, .375);
    # topic 2: (.3, .6, .857, 2.25).
    assert labels["words"].tolist() == [
        ["w1", "w0", "w2"], ["w2", "w0", "w1"], ["w3", "w2", "w1"],
    ]
    # Probability words: ties keep the lower index first.
    assert labels["prob_words"].tolist() == [
        ["w0", "w1", "w2"], ["w0", "w2", "w1"], ["w3", "w2", "w0"],
    ]


def test_n_words_is_clipped_to_the_vocabulary():
    labels = topic_labels(fake_lda(COMPONENTS), VOCAB, n_words=50)
    assert all(len(words) == 4 for words in labels["words"])


def test_zero_probabilities_give_finite_scores():
    components = COMPONENTS.copy()
    components[0, 3] = 0.0
    for method in ("score", "relevance", "lift", "frex"):
        assert np.all(np.isfinite(word_scores(components, method)))


@pytest.mark.filterwarnings("error")
def test_huge_finite_weights_rank_as_their_rescaled_rows():
    # A row whose sum overflows (1.5e308 + 8e307 = inf) must not become an
    # all-zero phi row: the rankings that depend on phi alone give the words
    # of the rows scaled by a constant each.
    huge = np.array([[8e307, 1.5e308, 4e307, 1e300], [1.0, 2.0, 3.0, 4.0]])
    methods = ["frex", "prob", "score"]
    scale = np.array([[1e-308], [1.0]])
    got = topic_labels(fake_lda(huge), VOCAB, method=methods, n_words=4)
    want = topic_labels(fake_lda(huge * scale), VOCAB, method=methods, n_words=4)
    for method in methods:
        column = f"{method}_words"
        assert got[column].tolist() == want[column].tolist(), method
    # Lift and relevance compare a topic with the corpus (column sums), which
    # a per-row scale changes: lift is checked against the formula instead.
    scaled = huge / 1e308
    want_lift = (scaled / scaled.sum(1, keepdims=True)) / (scaled.sum(0) / scaled.sum())
    assert_allclose(word_scores(huge, "lift"), want_lift, rtol=1e-12)


@pytest.fixture(scope="module")
def corpus():
    return make_compound_corpus(n_topics=3, n_features=20, n_collections=2,
                                docs_per_collection=20, doc_length=30, random_state=0)


def test_pipeline_takes_the_vectorizer_vocabulary():
    texts = ["apple banana apple", "banana cherry", "dog cat dog", "cat mouse dog"] * 5
    pipe = make_pipeline(CountVectorizer(), LDAGibbs(n_components=2, max_iter=50,
                                                     random_state=0)).fit(texts)
    labels = topic_labels(pipe, method="prob", n_words=6)
    vocab = sorted(pipe[0].get_feature_names_out())
    assert len(vocab) == 6
    assert all(sorted(words) == vocab for words in labels["words"])
    # The topics separate the two themes.
    assert {frozenset(words[:2]) for words in labels["words"]} == {
        frozenset({"apple", "banana"}), frozenset({"dog", "cat"})}


def test_feature_names_in_and_default_names(corpus):
    X = pd.DataFrame(corpus.data.toarray(), columns=[f"t{i}" for i in range(20)])
    clda = CompoundLDA(n_components=3, max_iter=30, random_state=0).fit(X)
    assert topic_labels(clda)["words"][0][0].startswith("t")
    lda = LDAGibbs(n_components=3, max_iter=30, random_state=0).fit(corpus.data)
    assert topic_labels(lda)["words"][0][0].startswith("word ")


def test_errors(corpus):
    with pytest.raises(NotFittedError):
        topic_labels(LDAGibbs())
    with pytest.raises(ValueError, match="feature_names passed to topic_labels has shape"):
        topic_labels(fake_lda(COMPONENTS), ["a", "b"])
    with pytest.raises(InvalidParameterError, match="method"):
        topic_labels(fake_lda(COMPONENTS), VOCAB, method="tfidf")
    with pytest.raises(InvalidParameterError, match="frex_weight"):
        topic_labels(fake_lda(COMPONENTS), VOCAB, frex_weight=1.5)
    bad = COMPONENTS.copy()
    bad[1] = 0.0
    with pytest.raises(ValueError, match="positive sum"):
        topic_labels(fake_lda(bad), VOCAB)


def test_fitted_scikit_learn_lda(corpus):
    lda = LatentDirichletAllocation(n_components=3, max_iter=5, random_state=0)
    lda.fit(corpus.data)
    labels = topic_labels(lda, method="relevance", n_words=4)
    assert labels["topic"].tolist() == [0, 1, 2]
    assert all(len(words) == 4 for words in labels["words"])


def test_missing_pandas_says_how_to_install_it(hide_modules):
    hide_modules("pandas")
    with pytest.raises(ImportError, match=r"topic_labels .* `pip install pandas`"):
        topic_labels(fake_lda(COMPONENTS), VOCAB)


def test_several_methods_side_by_side_are_each_the_single_method():
    """A list of methods (stm's labelTopics shows four at once) gives each
    method's words in its own column, the first also as ``words``."""
    rng = np.random.default_rng(0)
    lda = LatentDirichletAllocation(n_components=4)
    lda.components_ = rng.gamma(0.3, size=(4, 50)) + 0.01
    vocab = [f"w{v}" for v in range(50)]
    table = topic_labels(lda, vocab, method=["lift", "frex", "prob", "relevance"], n_words=5)
    assert table.columns.tolist() == ["topic", "words", "prob_words", "lift_words",
                                      "frex_words", "relevance_words"]
    for method in ("lift", "frex", "relevance"):
        single = topic_labels(lda, vocab, method=method, n_words=5)
        assert table[f"{method}_words"].tolist() == single["words"].tolist()
    assert table["words"].tolist() == table["lift_words"].tolist()
    assert table["prob_words"].tolist() == topic_labels(lda, vocab, method="prob",
                                                        n_words=5)["words"].tolist()
    for bad in ([], ["frex", "frex"], ["frex", "tfidf"]):
        with pytest.raises(ValueError, match="must be one of .* or a list of distinct ones"):
            topic_labels(lda, vocab, method=bad)

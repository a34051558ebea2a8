"""find_topics: the topics most about given words (stm's findTopic)."""

import math

import numpy as np
import pandas as pd
import pytest
from sklearn.decomposition import LatentDirichletAllocation
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.pipeline import make_pipeline
from sklearn.utils._param_validation import InvalidParameterError

from sklearn_clda import LDAGibbs
from sklearn_clda.inspection import find_topics, topic_labels

VOCAB = ["the", "goal", "match", "vote", "party", "rain"]
COMPONENTS = np.array([[40.0, 30.0, 20.0, 6.0, 4.0, 1.0],
                       [40.0, 2.0, 8.0, 20.0, 30.0, 1.0],
                       [10.0, 1.0, 1.0, 1.0, 1.0, 30.0]])


def _model(components=COMPONENTS):
    lda = LatentDirichletAllocation(n_components=len(components))
    lda.components_ = np.asarray(components, dtype=float)
    return lda


def _posterior(components, columns):
    """P(k | words) written out: share times the product of the words'
    probabilities, normalized over the topics."""
    totals = [sum(row) for row in components]
    weights = [totals[k] / sum(totals) * math.prod(components[k][j] / totals[k]
                                                  for j in columns)
               for k in range(len(components))]
    return [w / sum(weights) for w in weights]


@pytest.mark.parametrize("words", [["goal", "match"], ["party"], ["rain", "the", "vote"]])
def test_probabilities_and_order(words):
    found = find_topics(_model(), words, VOCAB)
    expected = _posterior(COMPONENTS.tolist(), [VOCAB.index(w) for w in words])
    assert found["topic"].tolist() == sorted(range(3), key=lambda k: -expected[k])
    assert found["probability"].tolist() == pytest.approx(sorted(expected, reverse=True),
                                                         rel=1e-12)
    assert found.columns.tolist() == ["topic", "probability", "in_top_words", "all_in_top",
                                      "label_words"]


def test_words_in_the_top_words_as_stm_finds_them():
    found = find_topics(_model(), ["goal", "vote"], VOCAB, n_words=3).set_index("topic")
    # top 3 words: topic 0 the goal match; topic 1 the party vote; topic 2 rain the (1.0 ties)
    assert found.loc[0, "in_top_words"] == ["goal"]
    assert found.loc[1, "in_top_words"] == ["vote"]
    assert not found["all_in_top"].any()
    found = find_topics(_model(), ["vote", "party"], VOCAB, n_words=3).set_index("topic")
    assert found["all_in_top"].tolist() == [True, False, False]
    assert find_topics(_model(), "vote", VOCAB, n_words=1)["all_in_top"].sum() == 0
    labels = topic_labels(_model(), VOCAB, n_words=6)["words"].tolist()
    assert found.loc[1, "label_words"] == labels[1]


def test_one_word_and_repeated_words():
    once = find_topics(_model(), "goal", VOCAB)
    assert once.equals(find_topics(_model(), ["goal", "goal"], VOCAB))
    assert once.equals(find_topics(_model(), np.array(["goal"]), VOCAB))


def test_the_vocabulary_of_a_pipeline_or_a_dataframe():
    texts = ["Goal match goal", "vote party vote", "goal match", "party vote"] * 5
    pipe = make_pipeline(CountVectorizer(), LDAGibbs(n_components=2, max_iter=30,
                                                     random_state=0)).fit(texts)
    found = find_topics(pipe, ["goal"])
    assert found["in_top_words"].iloc[0] == ["goal"]
    with pytest.raises(ValueError, match=r"not in the model's vocabulary: \['Goal'\] \(words "
                                         r"are matched exactly: a CountVectorizer lowercases"):
        find_topics(pipe, ["goal", "Goal"])
    counts = pd.DataFrame(pipe[0].transform(texts).toarray(),
                          columns=pipe[0].get_feature_names_out())
    lda = LDAGibbs(n_components=2, max_iter=30, random_state=0).fit(counts)
    assert find_topics(lda, "vote")["in_top_words"].iloc[0] == ["vote"]


def test_bad_queries_are_named():
    with pytest.raises(ValueError, match="pass feature_names"):
        find_topics(LDAGibbs(n_components=2, max_iter=5).fit([[1, 2], [2, 1]]), "w")
    with pytest.raises(ValueError, match="is empty"):
        find_topics(_model(), [], VOCAB)
    with pytest.raises(ValueError, match=r"not in the model's vocabulary: \['1'\]"):
        find_topics(_model(), [1], VOCAB)
    zero = COMPONENTS.copy()
    zero[:, 5] = 0.0
    with pytest.raises(ValueError, match=r"no topic gives all of the words \['rain'\] a "
                                         "positive probability"):
        find_topics(_model(zero), ["rain"], VOCAB)
    with pytest.raises(InvalidParameterError, match="n_words"):
        find_topics(_model(), "goal", VOCAB, n_words=0)
    with pytest.raises(ValueError, match="feature_names passed to find_topics has shape"):
        find_topics(_model(), "goal", VOCAB[:3])


def test_a_word_one_topic_lacks_leaves_it_last():
    components = COMPONENTS.copy()
    components[0, 3] = 0.0  # topic 0 never says "vote"
    found = find_topics(_model(components), ["goal", "vote"], VOCAB)
    assert found["topic"].iloc[-1] == 0 and found["probability"].iloc[-1] == 0.0
    assert found["probability"].sum() == pytest.approx(1.0)


def test_missing_pandas_says_how_to_install_it(hide_modules):
    hide_modules("pandas")
    with pytest.raises(ImportError, match=r"find_topics returns a pandas DataFrame.* "
                                          r"`pip install pandas`"):
        find_topics(_model(), "goal", VOCAB)

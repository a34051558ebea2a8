"""TopicEffectDisplay draws topic_effects' coefficients, a row per topic."""

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal

pytest.importorskip("matplotlib")
pd = pytest.importorskip("pandas")

import matplotlib.pyplot as plt  # noqa: E402
from sklearn.feature_extraction.text import CountVectorizer  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402

from sklearn_clda import CompoundLDA, LDAGibbs  # noqa: E402
from sklearn_clda.datasets import make_compound_corpus  # noqa: E402
from sklearn_clda.inspection import topic_effects  # noqa: E402
from sklearn_clda.plotting import TopicEffectDisplay  # noqa: E402

from .test_difference import drawn_rows  # noqa: E402


@pytest.fixture(scope="module")
def fitted():
    corpus = make_compound_corpus(n_topics=4, n_features=40, n_collections=2,
                                  docs_per_collection=60, doc_length=(20, 60), random_state=0)
    model = CompoundLDA(n_components=4, max_iter=80, random_state=0)
    model.fit(corpus.data, groups=corpus.groups)
    length = np.log(corpus.data.sum(axis=1).A1)
    rng = np.random.default_rng(0)
    covariates = pd.DataFrame({"log_length": length, "noise": rng.normal(size=length.size)})
    return model, corpus, covariates


def test_rows_are_the_effects_of_the_chosen_term_sorted(fitted):
    model, corpus, covariates = fitted
    disp = TopicEffectDisplay.from_estimator(model, corpus.data, covariates, corpus.groups,
                                             term="log_length", ci=0.8, random_state=0)
    table = topic_effects(model, corpus.data, covariates, corpus.groups, ci=0.8,
                          random_state=0)
    rows = table[table["term"] == "log_length"].reset_index(drop=True)
    order = np.argsort(rows["estimate"].to_numpy(), kind="stable")
    assert_array_equal(disp.order_, order)
    drawn = drawn_rows(disp)
    for y, k in enumerate(order):
        assert_allclose(drawn[y], rows.loc[k, ["estimate", "lower", "upper"]].to_numpy(float))
    assert_array_equal(disp.clear_, ((rows["lower"] > 0) | (rows["upper"] < 0)).to_numpy())
    assert [t.get_text() for t in disp.ax_.get_yticklabels()] == [f"Topic {k}" for k in order]
    assert disp.ax_.get_xlabel() == "Effect of log_length on the topic share (80% interval)"
    plt.close("all")


def test_a_table_is_drawn_one_term_at_a_time(fitted):
    model, corpus, covariates = fitted
    table = topic_effects(model, corpus.data, covariates, corpus.groups, topics=[3, 1],
                          random_state=0)
    disp = TopicEffectDisplay.from_effects(table, "noise", topic_labels=["three", "one"],
                                           sort=False)
    assert [t.get_text() for t in disp.ax_.get_yticklabels()] == ["one", "three"]
    noise = table[table["term"] == "noise"]
    assert_allclose(drawn_rows(disp)[1][0], noise["estimate"].iloc[0])
    with pytest.raises(ValueError, match=r"draws one term; the table has \['intercept', "
                                         r"'log_length', 'noise'\], pass term="):
        TopicEffectDisplay.from_effects(table)
    with pytest.raises(ValueError, match="term passed to TopicEffectDisplay.from_effects is "
                                         "'year', not one of"):
        TopicEffectDisplay.from_effects(table, "year")
    with pytest.raises(ValueError, match=r"must be a table of topic_effects.*lacks \['term'"):
        TopicEffectDisplay.from_effects(table.drop(columns="term"))
    plt.close("all")


def test_a_pipeline_of_texts_labels_rows_with_words():
    corpus = make_compound_corpus(n_topics=3, n_features=30, n_collections=2,
                                  docs_per_collection=50, doc_length=(20, 50), random_state=1)
    words = np.array([f"w{i}" for i in range(30)])
    texts = [" ".join(np.repeat(words[row.indices], row.data)) for row in corpus.data]
    pipe = make_pipeline(CountVectorizer(), LDAGibbs(n_components=3, max_iter=40,
                                                     random_state=0)).fit(texts)
    length = np.log(corpus.data.sum(axis=1).A1)
    disp = TopicEffectDisplay.from_estimator(pipe, texts, {"log length": length},
                                             top_words=2, random_state=0)
    ticks = [t.get_text() for t in disp.ax_.get_yticklabels()]
    assert all(t.startswith("Topic ") and len(t.split()) == 4 for t in ticks)
    plt.close("all")


def test_constructor_values_are_checked():
    with pytest.raises(ValueError, match="estimate, lower and upper must be 1-d arrays of one"):
        TopicEffectDisplay([0.1, 0.2], [0.0], [0.3, 0.4]).plot()
    with pytest.raises(ValueError, match="lower <= estimate <= upper"):
        TopicEffectDisplay([0.1, 0.2], [0.15, 0.1], [0.3, 0.4]).plot()
    with pytest.raises(ValueError, match="topics has 1 entries for 2 estimates"):
        TopicEffectDisplay([0.1, 0.2], [0.0, 0.1], [0.3, 0.4], topics=[0]).plot()
    with pytest.raises(ValueError, match="NaN or infinite values in upper"):
        TopicEffectDisplay([0.1], [0.0], [np.inf]).plot()
    disp = TopicEffectDisplay([0.1, -0.2], [0.05, -0.3], [0.3, 0.1]).plot()
    assert disp.clear_.tolist() == [True, False]
    assert disp.ax_.get_xlabel() == "Effect on the topic share"
    plt.close("all")

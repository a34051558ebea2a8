"""select_n_components, stm's exclusivity and the stability across folds."""

import itertools
import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose
from sklearn.base import BaseEstimator, clone
from sklearn.feature_extraction.text import CountVectorizer, HashingVectorizer
from sklearn.model_selection import KFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer
from sklearn.utils import get_tags

from sklearn_clda import CompoundLDA, LDAGibbs
from sklearn_clda.datasets import make_compound_corpus
from sklearn_clda.inspection import select_n_components
from sklearn_clda.inspection._stability import average_jaccard, ranked_top_words
from sklearn_clda.metrics import topic_exclusivity


def exclusivity(components, n_words=10):
    return topic_exclusivity(components, min(n_words, np.shape(components)[1]))
from sklearn_clda.metrics import topic_coherence


def test_exclusivity_by_hand():
    # stm's exclusivity(model, M, frexw = 0.7): per topic, the sum over its M
    # most probable words of 1 / (0.7 / ecdf(excl) + 0.3 / ecdf(phi)).
    # Topic 0 of phi = (.5, .3, .1, .1), (.4, .1, .4, .1), (.1, .1, .2, .6):
    # probability ranks (1, .75, .375, .375), exclusivity ranks (.75, 1, .5,
    # .25) (see test_labels); its top 2 words are w0 and w1:
    #   1 / (.7/.75 + .3/1) + 1 / (.7/1 + .3/.75) = 30/37 + 1/1.1.
    # Topic 2: phi ranks (1.5, 1.5, 3, 4) / 4, exclusivity (.1, .2, .2857,
    # .75) ranks (1, 2, 3, 4) / 4; top words w3 and w2: 1 + 1 / (.7/.75 +
    # .3/.75) = 1 + .75.
    components = np.array([[5.0, 3.0, 1.0, 1.0],
                           [4.0, 1.0, 4.0, 1.0],
                           [1.0, 1.0, 2.0, 6.0]])
    excl = exclusivity(components, n_words=2)
    assert_allclose(excl[[0, 2]], [30 / 37 + 1 / 1.1, 1.75])
    # The words are the most probable, not those of highest FREX: topic 0's
    # top word is w0 (FREX 30/37), though w1 has the higher FREX (1/1.1).
    assert_allclose(exclusivity(components, n_words=1)[0], 30 / 37)


@pytest.fixture(scope="module")
def corpus():
    return make_compound_corpus(n_topics=3, n_features=30, n_collections=2,
                                docs_per_collection=30, doc_length=40, random_state=0)


class RecordingCLDA(CompoundLDA):
    """CompoundLDA that records the labels its fit and perplexity receive."""

    calls = []

    def fit(self, X, y=None, groups=None):
        RecordingCLDA.calls.append(("fit", X.shape[0], np.asarray(groups).copy()))
        return super().fit(X, groups=groups)

    def perplexity(self, X, groups=None, sub_sampling=False):
        RecordingCLDA.calls.append(("perplexity", X.shape[0], np.asarray(groups).copy()))
        return super().perplexity(X, groups=groups)


def test_groups_follow_the_folds(corpus):
    # Seven collections in a pattern, so that each call's labels can be told
    # apart from another fold's.
    groups = np.array([f"c{i % 7}" for i in range(60)])
    RecordingCLDA.calls.clear()
    folds = list(KFold(3, shuffle=True, random_state=0).split(corpus.data))
    results = select_n_components(
        RecordingCLDA(max_iter=20, random_state=0), corpus.data, groups,
        n_components=[2], cv=folds,
    )
    assert len(results) == 1 and results.attrs["n_splits"] == 3
    calls = RecordingCLDA.calls
    assert [c[0] for c in calls] == ["fit", "perplexity"] * 3
    for (train, test), fit, perp in zip(folds, calls[0::2], calls[1::2]):
        assert fit[1] == train.size and perp[1] == test.size
        assert np.array_equal(fit[2], groups[train])
        assert np.array_equal(perp[2], groups[test])


def test_int_cv_stratifies_by_collection(corpus):
    RecordingCLDA.calls.clear()
    select_n_components(RecordingCLDA(max_iter=10, random_state=0), corpus.data,
                        corpus.groups, n_components=[2], cv=3, random_state=0)
    for name, _, groups in RecordingCLDA.calls:
        counts = np.bincount(groups, minlength=2)
        assert counts[0] == counts[1]  # 30 + 30 documents, 3 stratified folds


def test_measures_per_number_of_topics(corpus):
    seen = []

    def coherence(components, X):
        seen.append(X.shape[0])
        return np.full(components.shape[0], float(X.shape[0]))

    results = select_n_components(
        CompoundLDA(max_iter=60, random_state=0), corpus.data, corpus.groups,
        n_components=[3, 1], cv=3, coherence=coherence, random_state=0,
    )
    assert results["n_components"].tolist() == [1, 3]
    # The callable gets each fold's training counts (40 of 60 documents).
    assert seen == [40] * 6
    assert_allclose(results["coherence"], [40.0, 40.0])
    assert_allclose(results["coherence_std"], [0.0, 0.0])
    # Three planted topics: three explain held-out words better than one.
    assert results["perplexity"][1] < results["perplexity"][0]
    assert np.all(results["perplexity_std"] > 0)
    assert np.all(results["fit_time"] > 0)
    assert np.all(np.isfinite(results["exclusivity"]))


def test_default_coherence_is_umass_on_the_training_fold(corpus):
    folds = [(np.arange(0, 60, 2), np.arange(1, 60, 2))]
    results = select_n_components(
        LDAGibbs(max_iter=40, random_state=0), corpus.data, n_components=[3], cv=folds,
    )
    lda = LDAGibbs(n_components=3, max_iter=40, random_state=0).fit(corpus.data[::2])
    expected = topic_coherence(corpus.data[::2], lda.components_, top_n=10).mean()
    assert_allclose(results["coherence"], [expected])
    assert_allclose(results["exclusivity"], [exclusivity(lda.components_).mean()])


def test_pipeline_refits_the_vectorizer_per_fold():
    texts = ["apple banana apple", "banana cherry", "dog cat dog", "cat mouse dog"] * 6
    pipe = make_pipeline(CountVectorizer(), LDAGibbs(max_iter=30, random_state=0))
    results = select_n_components(pipe, texts, n_components=[1, 2], cv=2, random_state=0)
    assert results["n_components"].tolist() == [1, 2]
    assert np.all(np.isfinite(results["perplexity"]))


@pytest.mark.parametrize(
    "n_components, match",
    [([], "non-empty"), ([2, 2], "distinct"), ([0, 2], "positive"), ([[2]], "non-empty"),
     ([2.5], "non-empty"), ([True, 2], "non-empty list of numbers of topics")],
)
def test_bad_n_components(corpus, n_components, match):
    with pytest.raises(ValueError, match=match):
        select_n_components(LDAGibbs(), corpus.data, n_components=n_components)


def test_estimator_without_perplexity(corpus):
    from sklearn.decomposition import NMF

    with pytest.raises(ValueError, match="perplexity method"):
        select_n_components(NMF(), corpus.data, n_components=[2])


# --------------------------------------------------------------------------
# Stability across folds
# --------------------------------------------------------------------------


def average_jaccard_by_sets(a, b):
    return np.array([[np.mean([len(set(p[:d]) & set(q[:d])) / len(set(p[:d]) | set(q[:d]))
                               for d in range(1, min(len(p), len(q)) + 1)])
                      for q in b] for p in a])


def test_average_jaccard_matches_its_numpy_equivalent():
    rng = np.random.default_rng(0)
    a = np.array([rng.permutation(12)[:6] for _ in range(5)])
    b = np.array([rng.permutation(12)[:8] for _ in range(4)])
    assert_allclose(average_jaccard(a, b), average_jaccard_by_sets(a, b), rtol=1e-12)
    # By hand: (a, b) against (b, c): 0 at depth 1, 1/3 at depth 2.
    assert_allclose(average_jaccard(np.array([["a", "b"]]), np.array([["b", "c"]])), [[1 / 6]])


def test_stability_by_hand(corpus):
    # Three folds: each fold's stability is its fit's mean agreement with the
    # other two fits (topics matched to agree most on their top 10 words).
    folds = list(KFold(3, shuffle=True, random_state=0).split(corpus.data))
    results = select_n_components(
        LDAGibbs(max_iter=40, random_state=0), corpus.data, n_components=[4], cv=folds,
    )
    # (ties in random order, drawn from the number of topics and the fold)
    tops = [ranked_top_words(LDAGibbs(n_components=4, max_iter=40, random_state=0)
                             .fit(corpus.data[train]).components_, 10, [4, fold])
            for fold, (train, _) in enumerate(folds)]
    sim, unmatched = np.eye(3), []
    for i, j in [(0, 1), (0, 2), (1, 2)]:
        agreement = average_jaccard_by_sets(tops[i], tops[j])
        best = max(agreement[np.arange(4), list(order)].mean()
                   for order in itertools.permutations(range(4)))
        sim[i, j] = sim[j, i] = best
        unmatched.append(best - np.diag(agreement).mean())
    # The matching matters: some fits' topics come in different orders.
    assert max(unmatched) > 0.1
    per_fold = (sim.sum(axis=1) - 1) / 2
    assert np.ptp(per_fold) > 1e-3  # the folds differ, so the averaging is tested
    assert_allclose(results["stability"], [per_fold.mean()], rtol=1e-12)
    assert_allclose(results["stability_std"], [per_fold.std()], rtol=1e-9)


def test_stability_compares_words_not_columns():
    # Each fold's vectorizer has its own words: its fit's top words are
    # compared by name.
    texts = [f"{base} w{i}" for i, base in enumerate(
        ["apple banana apple pie", "banana cherry pie", "dog cat dog bone", "cat mouse dog"] * 6
    )]
    folds = list(KFold(2, shuffle=True, random_state=0).split(texts))
    pipe = make_pipeline(CountVectorizer(), LDAGibbs(max_iter=50, random_state=0))
    results = select_n_components(pipe, texts, n_components=[2], cv=folds)
    fits = [clone(pipe).set_params(ldagibbs__n_components=2)
            .fit([texts[i] for i in train]) for train, _ in folds]
    words = [fit[0].get_feature_names_out() for fit in fits]
    assert not np.array_equal(words[0], words[1])
    tops = [names[ranked_top_words(fit[-1].components_, 10, [2, fold])]
            for fold, (fit, names) in enumerate(zip(fits, words))]
    agreement = average_jaccard_by_sets(*tops)
    expected = max(np.diag(agreement).mean(), np.diag(agreement[:, ::-1]).mean())
    assert_allclose(results["stability"], [expected], rtol=1e-12)
    assert expected > 0.5  # fruit and pets: both halves find them


def test_stability_is_nan_with_one_fold(corpus):
    folds = [(np.arange(0, 60, 2), np.arange(1, 60, 2))]
    results = select_n_components(
        LDAGibbs(max_iter=20, random_state=0), corpus.data, n_components=[2], cv=folds,
    )
    assert np.isnan(results["stability"][0])


def test_cv_without_splits(corpus):
    with pytest.raises(ValueError, match="gave no"):
        select_n_components(LDAGibbs(), corpus.data, n_components=[2], cv=[])


def test_tied_words_are_ranked_at_random():
    components = np.array([[3.0, 1.0, 2.0, 0.5], [1.0, 1.0, 1.0, 1.0]])
    # Without ties, the order of top_word_indices.
    assert ranked_top_words(components[:1], 4, 0).tolist() == [[0, 2, 1, 3]]
    orders = {tuple(ranked_top_words(components, 4, seed)[1]) for seed in range(20)}
    assert len(orders) > 5  # a flat topic's order is drawn, not its columns'


class FlatTopics(BaseEstimator):
    """A topic model whose topics are all flat (every word alike)."""

    def __init__(self, n_components=2):
        self.n_components = n_components

    def fit(self, X, y=None):
        self.components_ = np.ones((self.n_components, X.shape[1]))
        return self

    def perplexity(self, X):
        return 10.0


def test_flat_topics_are_not_stable(corpus):
    # Topics with tied words (here all; in a fit, the empty topics of a
    # large K) agree by chance, not perfectly as their column order would.
    with pytest.warns(UserWarning, match="FlatTopics has no transform"):
        results = select_n_components(FlatTopics(), corpus.data, n_components=[2, 5], cv=3,
                                      random_state=0)
    assert (results["stability"] < 0.5).all()
    assert results["dispersion"].isna().all()
    # A planted 3-topic corpus of 24 words: 50 or 100 topics leave many empty
    # topics, and are less stable than 3.
    planted = make_compound_corpus(n_topics=3, n_features=24, n_collections=3,
                                   docs_per_collection=20, doc_length=40, eta=0.05,
                                   random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # unused words in the coherence
        results = select_n_components(CompoundLDA(max_iter=40, random_state=0), planted.data,
                                      planted.groups, n_components=[3, 50, 100], cv=3,
                                      random_state=0)
    assert results["stability"][0] > results["stability"][1:].max() + 0.2


def test_stability_is_nan_where_words_cannot_be_compared(corpus, monkeypatch):
    from sklearn_clda.inspection import _select

    texts = ["apple banana apple pie", "banana cherry pie", "dog cat dog bone",
             "cat mouse dog"] * 6
    # A step refitted per fold that names no words: its columns are other
    # words in each fold.
    unnamed = make_pipeline(CountVectorizer(), FunctionTransformer(accept_sparse=True),
                            LDAGibbs(max_iter=20, random_state=0))
    with pytest.warns(UserWarning, match="names no words"):
        results = select_n_components(unnamed, texts, n_components=[2], cv=2, random_state=0)
    assert np.isnan(results["stability"][0]) and np.isfinite(results["perplexity"][0])
    # A stateless vectorizer has the same columns in every fold (by its
    # tags, which scikit-learn 1.6 had wrong: requires_fit=True).
    hashed = make_pipeline(HashingVectorizer(n_features=64, alternate_sign=False, norm=None),
                           LDAGibbs(max_iter=20, random_state=0))
    if get_tags(hashed[0]).requires_fit:
        with pytest.warns(UserWarning, match="names no words"):
            results = select_n_components(hashed, texts, n_components=[2], cv=2, random_state=0)
        assert np.isnan(results["stability"][0])
    else:
        assert np.isfinite(select_n_components(hashed, texts, n_components=[2], cv=2,
                                               random_state=0)["stability"][0])
    monkeypatch.setattr(_select, "MAX_STABILITY_TOPICS", 2)
    with pytest.warns(UserWarning, match="more than 2 topics"):
        results = select_n_components(LDAGibbs(max_iter=5, random_state=0), corpus.data,
                                      n_components=[2, 3], cv=2, random_state=0)
    assert np.isfinite(results["stability"][0]) and np.isnan(results["stability"][1])


def test_no_more_processes_than_fits(corpus, monkeypatch):
    from sklearn_clda.inspection import _select

    asked = []
    real = _select.Parallel

    def recording(n_jobs=None, **kwargs):
        asked.append(n_jobs)
        return real(n_jobs=1, **kwargs)

    monkeypatch.setattr(_select, "Parallel", recording)
    select_n_components(LDAGibbs(max_iter=5, random_state=0), corpus.data,
                        n_components=[2, 3], cv=2, n_jobs=100_000, random_state=0)
    select_n_components(LDAGibbs(max_iter=5, random_state=0), corpus.data,
                        n_components=[2], cv=2, n_jobs=None, random_state=0)
    assert asked == [4, 1]


def test_folds_need_a_collection_that_large(corpus):
    groups = np.arange(60) % 30  # 30 collections of 2 documents
    with pytest.raises(ValueError, match="largest collection has 2 document"):
        select_n_components(LDAGibbs(), corpus.data, groups, n_components=[2], cv=3)


def test_a_fold_without_tokens_is_named():
    import scipy.sparse as sp
    from sklearn.model_selection import PredefinedSplit

    X = sp.csr_matrix(np.array([[2, 1, 0], [0, 3, 1], [1, 0, 2], [0, 0, 0]]))
    # Fold 1 fits on the empty document alone; fold 2 scores it alone.
    cv = PredefinedSplit([0, 0, 0, 1])
    with pytest.raises(ValueError, match="the training documents of fold 1 of 2 have no "
                                         "token"):
        select_n_components(LDAGibbs(max_iter=4), X, n_components=[2], cv=cv)
    cv = PredefinedSplit([1, -1, -1, 0])  # fold 1 scores doc 3 (empty) alone
    with pytest.raises(ValueError, match="the held-out documents of fold 1 of 2 have no "
                                         "token"):
        select_n_components(LDAGibbs(max_iter=4), X, n_components=[2], cv=cv)


def test_no_documents_are_named():
    # (an empty X with empty groups gave NumPy's "zero-size array to reduction
    # operation maximum")
    import scipy.sparse as sp

    with pytest.raises(ValueError, match="select_n_components got no documents"):
        select_n_components(CompoundLDA(), sp.csr_matrix((0, 5)), [], n_components=[2])


def test_cv_none_is_the_default_and_a_splitter_without_groups_is_quiet(corpus):
    # cv=None took scikit-learn's KFold(5), which warned that it ignores the
    # groups passed to it; so did a KFold passed as cv.
    est = LDAGibbs(max_iter=10, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        default = select_n_components(est, corpus.data, corpus.groups, n_components=[2],
                                      random_state=0)
        none = select_n_components(est, corpus.data, corpus.groups, n_components=[2],
                                   cv=None, random_state=0)
        kfold = select_n_components(est, corpus.data, corpus.groups, n_components=[2],
                                    cv=KFold(2))
    assert none.attrs["n_splits"] == default.attrs["n_splits"] == 3
    assert none.drop(columns=["fit_time", "fit_time_std"]).equals(
        default.drop(columns=["fit_time", "fit_time_std"]))
    assert kfold.attrs["n_splits"] == 2


def test_dispersion_is_that_of_the_fit_on_its_training_documents(corpus):
    """Each fold's dispersion is residual_dispersion of its fit, on the
    fold's training documents with their collections."""
    from sklearn_clda.metrics import residual_dispersion

    train, test = next(KFold(3, shuffle=True, random_state=0).split(corpus.data))
    model = CompoundLDA(max_iter=30, random_state=0)
    results = select_n_components(model, corpus.data, corpus.groups, n_components=[1, 3],
                                  cv=[(train, test)])
    for row, k in enumerate([1, 3]):
        fit = clone(model).set_params(n_components=k).fit(
            corpus.data[train], groups=corpus.groups[train])
        expected = residual_dispersion(fit, corpus.data[train], corpus.groups[train])
        assert results["dispersion"][row] == expected.dispersion
    # the corpus has three topics: one leaves the documents more varied
    assert results["dispersion"][0] > results["dispersion"][1]


def test_dispersion_is_nan_without_degrees_of_freedom(corpus):
    with pytest.warns(UserWarning, match=r"residual dispersion NaN at n_components=\[40\]"):
        results = select_n_components(LDAGibbs(max_iter=10, random_state=0), corpus.data,
                                      n_components=[3, 40], cv=2, random_state=0)
    assert np.isfinite(results["dispersion"][0]) and np.isnan(results["dispersion"][1])

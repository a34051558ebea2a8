"""Metadata routing of ``groups`` through Pipeline, GridSearchCV and cross_validate.

Behaviour checked against scikit-learn 1.9.1, and 1.6.0 and 1.7.2 by hand.
CompoundLDA requests ``groups`` in ``fit``, ``transform`` and ``score`` by
default, so no ``set_*_request`` call is needed once routing is enabled.
Model selection runs with ``scoring=None`` and with ``GroupsScorer``, which
scikit-learn 1.6 and 1.7 need (with ``scoring=None`` they give a Pipeline's
``score`` only what the Pipeline itself requests: no ``groups``).
"""

import warnings

import numpy as np
import pytest
import sklearn
from numpy.testing import assert_array_equal
from packaging.version import Version
from sklearn.base import clone
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV, GroupKFold, KFold, cross_validate
from sklearn.pipeline import Pipeline, make_pipeline

from sklearn_clda import CompoundLDA, LDAGibbs
from sklearn_clda.exceptions import UnseenCollectionWarning
from sklearn_clda.metrics import GroupsScorer

THEMES = {
    "sport": "ball goal team match player coach score league referee season".split(),
    "space": "orbit rocket planet launch star moon nasa shuttle galaxy comet".split(),
    "cooking": "recipe oven flour sugar butter bake salt pepper onion garlic".split(),
}
COMMON = "the day time good new people today make".split()


def _make_texts(n_docs=90, seed=0):
    """Tiny documents, one collection per theme, collections interleaved."""
    rng = np.random.default_rng(seed)
    names = list(THEMES)
    texts, labels = [], []
    for i in range(n_docs):
        name = names[i % 3]
        words = rng.choice(THEMES[name] + COMMON, size=rng.integers(8, 16))
        texts.append(" ".join(words))
        labels.append(name)
    return texts, np.array(labels)


TEXTS, GROUPS = _make_texts()
SORTED_LABELS = ["cooking", "space", "sport"]

_PIPELINE_SCORE_ROUTED = Version(sklearn.__version__).release[:2] >= (1, 8)
SCORINGS = [
    pytest.param(None, id="scoring=None", marks=pytest.mark.skipif(
        not _PIPELINE_SCORE_ROUTED,
        reason="scikit-learn < 1.8 routes to a Pipeline's score only the Pipeline's "
               "own requests with scoring=None; GroupsScorer is for those versions")),
    pytest.param(GroupsScorer(), id="GroupsScorer"),
]


def _clda(**params):
    return CompoundLDA(**{"n_components": 3, "max_iter": 30, "random_state": 0, **params})


def _pipe(**params):
    return Pipeline([("vect", CountVectorizer()), ("clda", _clda(**params))])


def _take(texts, idx):
    return [texts[i] for i in idx]


@pytest.fixture
def routing():
    with sklearn.config_context(enable_metadata_routing=True):
        yield


@pytest.fixture
def no_unseen_warning():
    """Turn UnseenCollectionWarning into an error: it means groups got lost."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnseenCollectionWarning)
        yield


class _RecordingCLDA(CompoundLDA):
    """CompoundLDA that logs the groups each ``score`` call receives."""

    score_calls = []

    def score(self, X, y=None, groups=None, sample_weight=None):
        type(self).score_calls.append(None if groups is None else list(groups))
        return super().score(X, y, groups=groups, sample_weight=sample_weight)


# --------------------------------------------------------------------------
# Pipeline with routing enabled, no set_*_request calls
# --------------------------------------------------------------------------


def test_pipeline_fit_routes_groups(routing, no_unseen_warning):
    pipe = _pipe().fit(TEXTS, groups=GROUPS)
    assert_array_equal(pipe[-1].groups_, SORTED_LABELS)
    assert_array_equal(pipe[-1].collection_sizes_, [30, 30, 30])
    direct = _clda().fit(CountVectorizer().fit_transform(TEXTS), groups=GROUPS)
    assert_array_equal(pipe[-1].components_, direct.components_)


def test_pipeline_fit_transform_routes_groups_to_transform(routing, no_unseen_warning):
    out = _pipe().fit_transform(TEXTS, groups=GROUPS)
    expected = _pipe().fit(TEXTS, groups=GROUPS).transform(TEXTS, groups=GROUPS)
    assert_array_equal(out, expected)


def test_pipeline_transform_and_score_route_groups(routing, no_unseen_warning):
    pipe = _pipe().fit(TEXTS, groups=GROUPS)
    Xt = pipe[:-1].transform(TEXTS)
    assert_array_equal(
        pipe.transform(TEXTS, groups=GROUPS), pipe[-1].transform(Xt, groups=GROUPS)
    )
    score = pipe.score(TEXTS, groups=GROUPS)
    assert np.isfinite(score)
    assert score == pipe[-1].score(Xt, groups=GROUPS)

    # Without groups the fallback prior is used (with a warning), and the
    # score changes: the groups above did make a difference.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnseenCollectionWarning)
        score_without = pipe.score(TEXTS)
    assert score_without != score


# --------------------------------------------------------------------------
# Model selection with routing
# --------------------------------------------------------------------------


@pytest.mark.parametrize("scoring", SCORINGS)
def test_grid_search_kfold_routes_test_groups_to_score(routing, no_unseen_warning, scoring):
    cv = KFold(3, shuffle=True, random_state=0)
    _RecordingCLDA.score_calls = []
    pipe = Pipeline([("vect", CountVectorizer()), ("clda", _RecordingCLDA(
        n_components=3, max_iter=30, random_state=0))])
    search = GridSearchCV(pipe, {"clda__n_components": [2, 3]}, cv=cv, scoring=scoring)
    search.fit(TEXTS, groups=GROUPS)

    scores = search.cv_results_["mean_test_score"]
    assert np.all(np.isfinite(scores))
    assert_array_equal(search.best_estimator_[-1].groups_, SORTED_LABELS)

    # score got each held-out fold's own labels (candidates x splits, in order).
    splits = list(cv.split(TEXTS))
    expected_calls = [GROUPS[test].tolist() for _ in range(2) for _, test in splits]
    assert _RecordingCLDA.score_calls == expected_calls

    # ... and the reported score is what a manual fit/score on split 0 gives.
    train, test = splits[0]
    manual = _pipe(n_components=2).fit(_take(TEXTS, train), groups=GROUPS[train])
    expected = manual.score(_take(TEXTS, test), groups=GROUPS[test])
    assert search.cv_results_["split0_test_score"][0] == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("scoring", SCORINGS)
def test_grid_search_group_kfold_holds_out_whole_collections(routing, scoring):
    search = GridSearchCV(_pipe(), {"clda__n_components": [2, 3]}, cv=GroupKFold(3),
                          scoring=scoring)
    with pytest.warns(UnseenCollectionWarning) as record:
        search.fit(TEXTS, groups=GROUPS)
    messages = [str(w.message) for w in record if w.category is UnseenCollectionWarning]
    # Each held-out collection is named: score got the test fold's labels
    # (not None) and fit never saw them.
    assert all("not seen in fit" in m for m in messages)
    for name in SORTED_LABELS:
        assert sum(f"'{name}'" in m for m in messages) == 2  # once per candidate
    assert np.all(np.isfinite(search.cv_results_["mean_test_score"]))
    # The refit on all the data sees all collections.
    assert_array_equal(search.best_estimator_[-1].groups_, SORTED_LABELS)


@pytest.mark.parametrize("scoring", SCORINGS)
def test_cross_validate_with_params(routing, no_unseen_warning, scoring):
    cv = KFold(3)
    result = cross_validate(_pipe(), TEXTS, params={"groups": GROUPS}, cv=cv, scoring=scoring)
    assert np.all(np.isfinite(result["test_score"]))
    train, test = next(cv.split(TEXTS))
    manual = _pipe().fit(_take(TEXTS, train), groups=GROUPS[train])
    assert result["test_score"][0] == pytest.approx(
        manual.score(_take(TEXTS, test), groups=GROUPS[test]), rel=1e-12
    )
    # With routing on, the old ``groups=`` argument is rejected.
    with pytest.raises(ValueError, match="groups"):
        cross_validate(_pipe(), TEXTS, groups=GROUPS, cv=cv)


def test_groups_scorer_requests_groups_for_score():
    request = GroupsScorer().get_metadata_routing()
    assert request.score.requests == {"groups": True}
    assert repr(GroupsScorer()) == "GroupsScorer()"


def test_groups_scorer_without_routing_is_scoring_none(no_unseen_warning):
    # No routing: no labels reach fit or score, and the scorer scores the
    # one-collection fits as scoring=None does.
    cv = KFold(3)
    plain = cross_validate(_pipe(), TEXTS, cv=cv)
    scored = cross_validate(_pipe(), TEXTS, cv=cv, scoring=GroupsScorer())
    assert np.all(np.isfinite(plain["test_score"]))
    assert_array_equal(scored["test_score"], plain["test_score"])


def test_lost_groups_under_routing_point_to_the_scorer(routing):
    pipe = _pipe().fit(TEXTS, groups=GROUPS)
    with pytest.warns(UnseenCollectionWarning, match=r"scoring=sklearn_clda\.metrics\.GroupsScorer"):
        pipe.score(TEXTS)


def test_compound_lda_as_middle_step(routing, no_unseen_warning):
    y = (GROUPS == "sport").astype(int)
    pipe = Pipeline([
        ("vect", CountVectorizer()),
        ("clda", _clda()),
        ("lr", LogisticRegression()),
    ])
    pipe.fit(TEXTS, y, groups=GROUPS)
    assert_array_equal(pipe["clda"].groups_, SORTED_LABELS)
    pred = pipe.predict(TEXTS, groups=GROUPS)
    features = pipe["clda"].transform(pipe["vect"].transform(TEXTS), groups=GROUPS)
    assert_array_equal(pred, pipe["lr"].predict(features))
    assert_array_equal(
        pipe.predict_proba(TEXTS, groups=GROUPS), pipe["lr"].predict_proba(features)
    )
    # The themed documents are easy to separate.
    assert np.mean(pred == y) > 0.9


# --------------------------------------------------------------------------
# Routing disabled (the default)
# --------------------------------------------------------------------------


def test_without_routing_step_parameters_work():
    assert not sklearn.get_config()["enable_metadata_routing"]
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnseenCollectionWarning)
        pipe = _pipe().fit(TEXTS, clda__groups=GROUPS)
        assert_array_equal(pipe[-1].groups_, SORTED_LABELS)

        out = _pipe().fit_transform(TEXTS, clda__groups=GROUPS)
        # CompoundLDA.fit_transform forwards groups to its transform step.
        assert_array_equal(out, pipe[-1].transform(pipe[:-1].transform(TEXTS), groups=GROUPS))


def test_without_routing_documented_limits():
    pipe = _pipe()
    with pytest.raises(ValueError, match="does not accept the groups parameter"):
        pipe.fit(TEXTS, groups=GROUPS)
    pipe.fit(TEXTS, clda__groups=GROUPS)
    with pytest.raises(ValueError, match="enable_metadata_routing"):
        pipe.transform(TEXTS, groups=GROUPS)
    # Pipeline.score drops unknown parameters without routing; CompoundLDA
    # notices the missing groups and warns instead of failing silently.
    with pytest.warns(UnseenCollectionWarning, match="groups=None"):
        pipe.score(TEXTS, groups=GROUPS)
    with pytest.raises(RuntimeError, match="metadata routing is enabled"):
        _clda().set_fit_request(groups=False)


# --------------------------------------------------------------------------
# Opting out
# --------------------------------------------------------------------------


def test_opt_out_of_fit_groups(routing):
    clda = _clda().set_fit_request(groups=False)
    assert clone(clda).get_metadata_routing().fit.requests == {"groups": False}
    pipe = Pipeline([("vect", CountVectorizer()), ("clda", clda)])
    # Nothing consumes groups in Pipeline.fit any more: scikit-learn refuses them.
    with pytest.raises(TypeError, match="not routed to any object"):
        pipe.fit(TEXTS, groups=GROUPS)
    with warnings.catch_warnings():
        warnings.simplefilter("error", UnseenCollectionWarning)
        pipe.fit(TEXTS)
    assert pipe[-1].groups_ is None
    # fit_transform composes the fit and transform requests, which now
    # disagree (False vs the default True): scikit-learn raises.
    with pytest.raises(ValueError, match="Conflicting metadata requests for groups"):
        pipe.fit_transform(TEXTS, groups=GROUPS)


def test_opt_out_with_group_kfold(routing):
    """Opted-out groups go only to the splitter; the model fits one collection."""
    pipe = Pipeline([
        ("vect", CountVectorizer()),
        ("clda", _clda().set_fit_request(groups=False).set_score_request(groups=False)),
    ])
    search = GridSearchCV(pipe, {"clda__n_components": [2, 3]}, cv=GroupKFold(3))
    with warnings.catch_warnings():
        # Neither fit nor score gets the labels: no fallback, nothing ignored.
        warnings.simplefilter("error", UserWarning)
        search.fit(TEXTS, groups=GROUPS)
    assert search.best_estimator_[-1].groups_ is None
    assert np.all(np.isfinite(search.cv_results_["mean_test_score"]))


# --------------------------------------------------------------------------
# LDAGibbs under routing
# --------------------------------------------------------------------------


def test_lda_gibbs_pipeline_score_under_routing(routing):
    # scikit-learn 1.9.1's Pipeline.score routes sample_weight=None and fails
    # unless the last step's score accepts sample_weight; LDAGibbs.score does.
    pipe = make_pipeline(
        CountVectorizer(), LDAGibbs(n_components=3, max_iter=30, random_state=0)
    ).fit(TEXTS)
    score = pipe.score(TEXTS)
    assert np.isfinite(score)
    assert score == pipe[-1].score(pipe[:-1].transform(TEXTS))

    # The texts have three themes. Measured mean held-out scores (model seeds
    # 0-2): K=1 -1253, K=2 -1167 to -1169, K=3 -1095 to -1098 (K=4..9 tie
    # with K=3 on these 8-16-word documents, so they are left out).
    search = GridSearchCV(pipe, {"ldagibbs__n_components": [1, 2, 3]}, cv=3)
    search.fit(TEXTS)
    scores = search.cv_results_["mean_test_score"]
    assert np.all(np.diff(scores) > 30), scores
    assert search.best_params_["ldagibbs__n_components"] == 3

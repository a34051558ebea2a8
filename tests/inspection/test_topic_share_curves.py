"""topic_share_curves: each topic's share along one covariate, a spline fit
by the method of composition, predicted with its interval."""

import numpy as np
import pytest
import scipy.sparse as sp

from sklearn_clda import LDAGibbs
from sklearn_clda.inspection import topic_effects, topic_share_curves

pd = pytest.importorskip("pandas")

K, V = 3, 60


def _hump(x):
    """Topic 0's mean share: 0.15 near the ends of [0, 1], 0.65 at 0.5."""
    return 0.15 + 0.5 * np.exp(-(((x - 0.5) / 0.2) ** 2))


@pytest.fixture(scope="module")
def hump():
    """600 documents of 40 tokens from three topics that their words tell
    apart; topic 0's share rises and falls along ``x``, the others share
    the rest. The model is given the true topics."""
    rng = np.random.default_rng(3)
    phi = rng.dirichlet(np.full(V, 0.05), size=K)
    x = rng.uniform(size=600)
    first = _hump(x)
    mean = np.stack([first, (1 - first) / 2, (1 - first) / 2], axis=1)
    rows = []
    for m in mean:
        z = rng.choice(K, size=40, p=rng.dirichlet(5.0 * m))
        rows.append(np.bincount([rng.choice(V, p=phi[k]) for k in z], minlength=V))
    X = sp.csr_matrix(np.array(rows))
    model = LDAGibbs(n_components=K, max_iter=5, random_state=0).fit(X)
    model.components_ = phi * 1000.0
    model.doc_topic_prior_ = 1.0
    return model, X, x


def test_a_share_that_rises_and_falls_is_drawn_as_such(hump):
    model, X, x = hump
    curves = topic_share_curves(model, X, pd.Series(x, name="when"), n_points=21,
                                random_state=0)
    assert curves.attrs["covariate"] == "when" and curves.attrs["n_documents"] == 600
    first = curves[curves.topic == 0]
    np.testing.assert_allclose(first.value, np.linspace(x.min(), x.max(), 21))
    peak = first.estimate.to_numpy().argmax()
    assert abs(first.value.iloc[peak] - 0.5) < 0.1
    # the peak's interval lies above both ends' intervals
    assert first.lower.iloc[peak] > max(first.upper.iloc[0], first.upper.iloc[-1])
    # the true mean share is near the curve, and inside most points' 90%
    # intervals (the points' errors go together: one data set's coverage
    # is either most of them or much less)
    truth = _hump(first.value.to_numpy())
    assert np.abs(first.estimate - truth).mean() < 0.03, first.assign(truth=truth)
    inside = (first.lower <= truth) & (truth <= first.upper)
    assert inside.mean() >= 0.8, first.assign(truth=truth)
    # a straight line sees nothing of it
    line = topic_effects(model, X, x, random_state=0)
    slope = line[(line.topic == 0) & (line.term == "x0")].iloc[0]
    assert slope.lower < 0 < slope.upper


def test_a_one_piece_linear_spline_is_topic_effects_line(hump):
    """With two knots of degree 1 the spline is the covariate itself: the
    curve's means are the intercept plus the slope at each point (the
    other covariate at its median), from the same draws of the shares."""
    model, X, x = hump
    other = np.random.default_rng(0).normal(size=x.size)
    curves = topic_share_curves(model, X, x, controls={"other": other}, n_knots=2, degree=1,
                                n_points=7, prior="model", n_samples=4, burn_in=2,
                                random_state=1)
    line = topic_effects(model, X, {"x": x, "other": other}, prior="model", n_samples=4,
                         burn_in=2, random_state=1).set_index(["topic", "term"]).estimate
    for k in range(K):
        expected = (line[k, "intercept"] + line[k, "x"] * curves.value[curves.topic == k]
                    + line[k, "other"] * np.median(other))
        np.testing.assert_allclose(curves.estimate[curves.topic == k], expected, rtol=1e-9)


@pytest.mark.parametrize("wrap, name", [
    (lambda x: x, "x"), (lambda x: pd.Series(x, name="age"), "age"),
    (lambda x: pd.DataFrame({"age": x}), "age"), (lambda x: x[:, None], "x"),
])
def test_the_covariate_s_name(hump, wrap, name):
    model, X, x = hump
    curves = topic_share_curves(model, X, wrap(x), n_points=2, n_samples=1, burn_in=0,
                                random_state=0)
    assert curves.attrs["covariate"] == name


def test_the_topics_asked_for_in_their_order(hump):
    model, X, x = hump
    curves = topic_share_curves(model, X, x, topics=[2, 0], n_points=3, n_samples=2,
                                burn_in=1, random_state=0)
    assert curves.topic.tolist() == [2, 2, 2, 0, 0, 0]
    every = topic_share_curves(model, X, x, n_points=3, n_samples=2, burn_in=1,
                               random_state=0)
    np.testing.assert_array_equal(curves.estimate.iloc[3:], every.estimate.iloc[:3])


@pytest.mark.parametrize("covariate, kw, message", [
    (lambda x: np.round(x * 3), {}, "has 4 distinct value(s) among the documents with "
     "words, too few for a spline of 6 columns"),
    (lambda x: np.r_[x[:-1], np.nan], {}, "not finite"),
    (lambda x: x[:-1], {}, "one number per document (600)"),
    (lambda x: x.astype(str).astype(object) + "y", {}, "must be numbers"),
    (lambda x: x, {"controls": lambda x: {"copy": 2 * x}}, "column 'copy' is determined"),
    (lambda x: np.r_[x[:-1] / 100, 1.0], {}, "the spline of 'x' has pieces of its range "
     "with too few documents"),
    # (a piece reached only at 1e-300 of its peak; rescaled, it looked fine)
    (lambda x: np.r_[np.zeros(598), 1e-300, 1.0], {"n_knots": lambda x: 3,
                                                   "degree": lambda x: 1},
     "the spline of 'x' has pieces"),
])
def test_a_covariate_that_cannot_make_a_curve_is_named(hump, covariate, kw, message):
    model, X, x = hump
    kw = {key: value(x) for key, value in kw.items()}
    with pytest.raises(ValueError) as exc:
        topic_share_curves(model, X, covariate(x), n_samples=1, burn_in=0, **kw)
    assert message in str(exc.value)

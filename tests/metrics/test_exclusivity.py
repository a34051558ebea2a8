"""topic_exclusivity against stm's ``exclusivity`` formula.

stm (R/exclusivity.R): ``tbeta = t(exp(logbeta))`` (words x topics),
``mat = tbeta / rowSums(tbeta)``, ``ex = apply(mat, 2, rank) / nrow``,
``fr = apply(tbeta, 2, rank) / nrow`` (R's ``rank``: average ties),
``frex = 1 / (w / ex + (1 - w) / fr)``, summed over each topic's top ``M``
words by probability.
"""

import warnings
from fractions import Fraction

import numpy as np
import pytest

from sklearn_clda.metrics import topic_exclusivity


def _average_ranks(values):
    """R's ``rank(x)``: 1-based, ties get the mean of their ranks."""
    return [
        sum(y < x for y in values) + (sum(y == x for y in values) + 1) / 2
        for x in values
    ]


def _stm_exclusivity(components, M, w):
    """stm's exclusivity written from its definition, in plain Python."""
    beta = [[x / sum(row) for x in row] for row in components]
    K, V = len(beta), len(beta[0])
    totals = [sum(beta[k][v] for k in range(K)) for v in range(V)]
    out = []
    for k in range(K):
        excl = [beta[k][v] / totals[v] if totals[v] else 0.0 for v in range(V)]
        ex = [r / V for r in _average_ranks(excl)]
        fr = [r / V for r in _average_ranks(beta[k])]
        top = sorted(range(V), key=lambda v: (-beta[k][v], v))[:M]
        out.append(sum(1 / (w / ex[v] + (1 - w) / fr[v]) for v in top))
    return np.array(out)


def test_hand_computed_with_ties():
    # beta = [[.6, .3, .1], [.2, .1, .7]]; column sums (.8, .4, .8).
    # Topic 0: exclusivity (.75, .75, .125) -> ranks (2.5, 2.5, 1) / 3,
    #   probability ranks (3, 2, 1) / 3; top words 0, 1:
    #   1 / (.7 / (5/6) + .3 / 1) + 1 / (.7 / (5/6) + .3 / (2/3)).
    # Topic 1: exclusivity (.25, .25, .875) -> ranks (1.5, 1.5, 3) / 3,
    #   probability ranks (2, 1, 3) / 3; top words 2, 0:
    #   1 / (.7 / 1 + .3 / 1) + 1 / (.7 / (1/2) + .3 / (2/3)).
    w = Fraction(7, 10)

    def frex(e, f):
        return 1 / (w / e + (1 - w) / f)

    expected = [
        frex(Fraction(5, 6), 1) + frex(Fraction(5, 6), Fraction(2, 3)),
        frex(1, 1) + frex(Fraction(1, 2), Fraction(2, 3)),
    ]
    comps = np.array([[6.0, 3.0, 1.0], [2.0, 1.0, 7.0]])
    assert topic_exclusivity(comps, top_n=2) == pytest.approx(
        [float(x) for x in expected], rel=1e-14
    )
    assert expected == [1 / Fraction(114, 100) + 1 / Fraction(129, 100),
                        1 + 1 / Fraction(185, 100)]


@pytest.mark.parametrize("w", [0.0, 0.3, 0.5, 0.7, 1.0])
@pytest.mark.parametrize("M", [1, 4, 12])
def test_matches_stm_formula(w, M):
    rng = np.random.default_rng(0)
    comps = rng.gamma(0.3, size=(5, 12)) * rng.uniform(0.01, 100, size=(5, 1))
    comps[:, 3] = comps[0, 3]  # ties in probability within topics
    comps[2, [5, 7]] = comps[2, 4]
    expected = _stm_exclusivity(comps.tolist(), M, w)
    assert np.allclose(topic_exclusivity(comps, top_n=M, frex_weight=w), expected,
                       rtol=1e-13)


def test_rows_are_normalized_first():
    # Exclusivity compares topics: scaling a topic's weights must not change
    # it (a fitted model's components_ are unnormalized pseudo-counts).
    rng = np.random.default_rng(1)
    comps = rng.dirichlet(np.full(20, 0.2), size=4)
    scaled = comps * np.array([[1e-3], [1.0], [50.0], [1e4]])
    assert np.allclose(topic_exclusivity(scaled, 5), topic_exclusivity(comps, 5),
                       rtol=1e-13)
    assert np.allclose(topic_exclusivity(scaled, 5),
                       _stm_exclusivity(scaled.tolist(), 5, 0.7), rtol=1e-13)


def test_weight_extremes():
    # No ties: weight 0 sums the probability ranks V, V-1, ..., V-M+1 (over V).
    rng = np.random.default_rng(2)
    comps = rng.dirichlet(np.ones(10), size=3)
    assert np.allclose(topic_exclusivity(comps, 4, frex_weight=0.0),
                       (10 + 9 + 8 + 7) / 10)
    # Topics that own their top words: the exclusivity ranks equal the
    # probability ranks (4/4, 3/4), so every weight gives 1.75.
    own = np.array([[5.0, 4.0, 0.0, 0.0], [0.0, 0.0, 3.0, 2.0]]) + 1e-9
    for w in (0.0, 0.5, 1.0):
        assert np.allclose(topic_exclusivity(own, 2, frex_weight=w), [1.75, 1.75])
    # Weight 1 on a shared top word: topic 1's word 0 ranks 2/4 in exclusivity.
    shared = np.array([[5.0, 3.0, 1.0, 1.0], [4.0, 1.0, 4.0, 1.0]])
    assert np.allclose(topic_exclusivity(shared, 2, frex_weight=1.0),
                       [3 / 4 + 4 / 4, 2 / 4 + 4 / 4])


def test_word_no_topic_uses_has_exclusivity_zero():
    comps = np.array([[3.0, 1.0, 0.0], [1.0, 3.0, 0.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        value = topic_exclusivity(comps, top_n=3)
    assert np.allclose(value, _stm_exclusivity(comps.tolist(), 3, 0.7))
    # Word 2: exclusivity 0 and probability 0, both rank 1/3 -> FREX 1/3.
    assert np.allclose(value, [1 + 1 / (0.7 / (2 / 3) + 0.3 / (2 / 3)) + 1 / 3] * 2)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(frex_weight=1.5), "'frex_weight' parameter"),
        (dict(frex_weight=-0.1), "'frex_weight' parameter"),
        (dict(frex_weight=True), "'frex_weight' parameter"),
        (dict(top_n=0), "'top_n' parameter"),
        (dict(top_n=True), "'top_n' parameter"),
        (dict(top_n=4), r"at most the number of features \(3\)"),
    ],
)
def test_validation(kwargs, match):
    with pytest.raises(ValueError, match=match):
        topic_exclusivity(np.ones((2, 3)), **kwargs)


def test_invalid_components():
    with pytest.raises(ValueError, match="rows summing to zero"):
        topic_exclusivity(np.array([[1.0, 0.0], [0.0, 0.0]]), 1)
    with pytest.raises(ValueError, match="non-negative"):
        topic_exclusivity(np.array([[1.0, -1.0]]), 1)

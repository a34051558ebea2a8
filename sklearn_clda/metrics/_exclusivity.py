"""Topic exclusivity of the R package stm (FREX summed over the top words)."""

from numbers import Integral, Real

import numpy as np
from scipy.stats import rankdata
from sklearn.utils._param_validation import validate_params

from .._corpus import StrictInterval
from ._topics import (
    _check_at_most_features,
    _check_nonneg_matrix,
    _normalize_rows,
    _top_indices,
)

__all__ = ["topic_exclusivity"]


@validate_params(
    {
        "components": ["array-like"],
        "top_n": [StrictInterval(Integral, 1, None, closed="left")],
        "frex_weight": [StrictInterval(Real, 0, 1, closed="both")],
    },
    prefer_skip_nested_validation=True,
)
def topic_exclusivity(components, top_n=10, *, frex_weight=0.7):
    """Exclusivity of every topic's top words, as stm's ``exclusivity``.

    With ``beta`` the rows of ``components`` normalized to sum to 1, the
    exclusivity of word ``v`` to topic ``k`` is
    ``beta[k, v] / sum_j beta[j, v]``. Within topic ``k``, the ``V``
    words' exclusivities and probabilities are ranked (ties get their
    average rank) and divided by ``V``, giving ``E[k, v]`` and ``F[k, v]``
    in ``(0, 1]``. FREX (Bischof and Airoldi, 2012) is their weighted
    harmonic mean, and the topic's exclusivity sums it over its
    ``top_n`` most probable words::

        FREX[k, v] = 1 / (w / E[k, v] + (1 - w) / F[k, v])
        exclusivity[k] = sum over the top_n words v of topic k of FREX[k, v]

    with ``w = frex_weight``. Values lie in ``(0, top_n]``; higher means
    that the topic's frequent words are also words the other topics use
    little.

    Parameters
    ----------
    components : array-like of shape (n_topics, n_features)
        Topic-word weights, e.g. a fitted model's ``components_``;
        non-negative, every row with a positive sum. Rows are normalized
        into word distributions first (exclusivity compares topics, so
        the scale of each row matters).

    top_n : int, default=10
        Number of top words per topic, between 1 and ``n_features``
        (stm's ``M``).

    frex_weight : float, default=0.7
        Weight ``w`` of exclusivity against frequency, in ``[0, 1]``
        (stm's ``frexw``). 1 sums the exclusivity ranks only, 0 the
        frequency ranks only.

    Returns
    -------
    exclusivity : ndarray of shape (n_topics,)
        Exclusivity of each topic.

    See Also
    --------
    topic_coherence : Whether each topic's top words occur together.

    Notes
    -----
    This is ``exclusivity(model, M=top_n, frexw=frex_weight)`` of the R
    package stm (Roberts et al.), whose ranks are R's ``rank`` (average
    ties) divided by the number of words. stm reports it beside semantic
    coherence in ``searchK``: coherence alone favours a few broad topics
    made of common words, exclusivity penalizes them. A word that no
    topic uses (a column of zeros) gets exclusivity 0. Top words tied in
    weight keep the lower feature index first.

    References
    ----------
    .. [1] J. M. Bischof and E. M. Airoldi, "Summarizing topical content
       with word frequency and exclusivity", ICML 2012.
    .. [2] M. E. Roberts, B. M. Stewart and D. Tingley, "stm: An R package
       for structural topic models", Journal of Statistical Software 91(2),
       2019.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_clda.metrics import topic_exclusivity
    >>> components = np.array([[5.0, 3.0, 1.0, 1.0],
    ...                        [4.0, 1.0, 4.0, 1.0]])
    >>> topic_exclusivity(components, top_n=2).round(4)
    array([1.7199, 1.5327])

    Word 0 is a top word of both topics. Topic 1's probabilities
    ``(0.4, 0.1, 0.4, 0.1)`` rank words 0 and 2 equal (F = 3.5 / 4), but
    only word 2 is exclusive to topic 1 (E = 4 / 4, word 0 has E = 2 / 4),
    so topic 1 scores ``1 / (0.7 / 0.5 + 0.3 / 0.875) +
    1 / (0.7 / 1 + 0.3 / 0.875) = 0.5738 + 0.9589``.
    """
    caller = "topic_exclusivity"
    beta = _normalize_rows(_check_nonneg_matrix(components, "components", caller))
    top_n = _check_at_most_features(top_n, "top_n", beta.shape[1], caller)
    frex = frex_scores(beta, frex_weight)
    top = _top_indices(beta, top_n)
    return np.take_along_axis(frex, top, axis=1).sum(axis=1)


def frex_scores(beta, weight, totals=None):
    """stm's FREX of every topic and word from row-normalized ``beta``, (K, V).

    ``1 / (weight / E + (1 - weight) / F)`` with ``E`` and ``F`` the
    within-topic average ranks (divided by ``V``) of the exclusivity
    ``beta[k, v] / totals[v]`` and of ``beta`` itself, where ``totals``
    defaults to ``beta.sum(axis=0)``: the sums over all the model's topics
    when ``beta`` holds only some of them. The package's one FREX:
    :func:`topic_exclusivity` and the "frex" topic labels of
    :func:`sklearn_clda.inspection.topic_labels` use it.
    """
    n_features = beta.shape[1]
    if totals is None:
        totals = beta.sum(axis=0)
    frex = np.empty(beta.shape)
    exclusive = np.zeros(n_features)
    # Row by row: the ranks of a (K, V) matrix at once took three more
    # (K, V) arrays (9 GB at K = 100, V = 2,000,000).
    for k, row in enumerate(beta):
        np.divide(row, totals, out=exclusive, where=totals > 0)
        exclusive_rank = rankdata(exclusive, method="average") / n_features
        frequency_rank = rankdata(row, method="average") / n_features
        frex[k] = 1.0 / (weight / exclusive_rank + (1.0 - weight) / frequency_rank)
    return frex

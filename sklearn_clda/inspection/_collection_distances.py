"""How far apart the collections' topic mixtures are, with posterior intervals."""

from numbers import Real

import numpy as np
from scipy.special import xlogy
from sklearn.utils._param_validation import HasMethods, StrOptions, validate_params

from .._chunking import budget_pieces
from .._corpus import StrictInterval
from ..metrics._topics import _ALIGN_METRICS
from ._collections import _chain_stats, _draws
from ._topic_groups import group_indicator
from ._utils import collection_position, require_pandas

__all__ = ["collection_distances"]


def draw_distances(p, Q, metric):
    """Distances between ``p`` of shape (..., K) and each row of ``Q`` of
    shape (..., m, K), draw by draw: shape (..., m). The same distances as
    :func:`~sklearn_clda.metrics.align_topics` takes between topics
    (``metrics._topics._topic_distances``): Hellinger ``sqrt(1 - sum
    sqrt(p q))``, total variation ``sum |p - q| / 2``, and the
    Jensen-Shannon divergence in bits; all in [0, 1]."""
    p = p[..., None, :]
    if metric == "hellinger":
        bc = (np.sqrt(p) * np.sqrt(Q)).sum(axis=-1)
        return np.sqrt(np.clip(1.0 - bc, 0.0, None))
    if metric == "tv":
        return 0.5 * np.abs(Q - p).sum(axis=-1)
    m = 0.5 * (Q + p)
    kl_p = xlogy(p, p).sum(axis=-1) - xlogy(p, m).sum(axis=-1)
    kl_q = xlogy(Q, Q).sum(axis=-1) - xlogy(Q, m).sum(axis=-1)
    return np.clip(0.5 * (kl_p + kl_q) / np.log(2.0), 0.0, 1.0)


def _partition_draws(chains, topic_groups, caller):
    """``chains`` with the topics summed into ``topic_groups``, which must
    put every topic in exactly one group: the groups' shares are then a
    distribution in every draw, as the topics' are."""
    if topic_groups is None:
        return chains
    n_topics = chains.shape[-1]
    _, indicator = group_indicator(topic_groups, n_topics, caller)
    counts = indicator.sum(axis=1)
    if not (counts == 1).all():
        k = int(np.flatnonzero(counts != 1)[0])
        raise ValueError(
            f"topic_groups passed to {caller} must put every topic in exactly one group, "
            f"so that the groups' shares sum to 1 as the topics' do; topic {k} is in "
            f"{int(counts[k])} groups."
        )
    return chains @ indicator


def _positions(labels, collections, caller):
    """Indices in ``labels`` of ``collections`` (every one for None), at least two."""
    if labels.size < 2:
        raise ValueError(f"{caller} needs two collections or more, but the model was "
                         "fitted with one collection.")
    if collections is None:
        positions = np.arange(labels.size)
    else:
        positions = np.array([collection_position(labels, label, "collections", caller)
                              for label in list(collections)], dtype=np.intp)
        if np.unique(positions).size != positions.size:
            raise ValueError(f"collections passed to {caller} repeats a collection: "
                             f"{list(collections)}.")
    if positions.size < 2:
        raise ValueError(f"{caller} needs two collections or more, got {positions.size}: "
                         f"collections={list(collections)}.")
    return positions


def pair_distances(chains, metric, ci):
    """The statistics of every pair ``(a, b)``, ``a < b``, of the
    collections (axis 2 of ``chains``, shape (n_chains, n_draws, J, K)):
    ``(a, b, mean, lower, upper, ess, rhat)``, arrays in row-major order
    of the pairs. Goes by pieces of ``b`` so that the temporaries stay
    bounded at many collections and draws."""
    n_chains, n_draws, n_coll, n_topics = chains.shape
    per_b = 8 * 4 * n_chains * n_draws * n_topics
    found = []
    for a in range(n_coll - 1):
        others = np.arange(a + 1, n_coll)
        for lo, hi in budget_pieces(np.arange(others.size + 1), per_b):
            b = others[lo:hi]
            d = draw_distances(chains[:, :, a], chains[:, :, b], metric)
            found.append((np.full(b.size, a), b, *_chain_stats(d, ci)))
    return [np.concatenate(column) for column in zip(*found)]


@validate_params(
    {
        "estimator": [HasMethods(["fit"]), list, tuple],
        "metric": [StrOptions(set(_ALIGN_METRICS))],
        "ci": [StrictInterval(Real, 0, 1, closed="neither")],
        "collections": ["array-like", None],
        "topic_groups": [dict, "array-like", None],
    },
    prefer_skip_nested_validation=True,
)
def collection_distances(estimator, *, metric="hellinger", ci=0.9, collections=None,
                         topic_groups=None):
    """How far apart every two collections' topic mixtures are, with intervals.

    :func:`compare_collections` says, topic by topic, how two collections
    differ. With many collections (outlets, years, authors) the first
    question is coarser: which collections talk about the same things,
    and which stand apart? This measures, for every pair of collections
    ``a`` and ``b``, the distance between their topic mixtures ``pi_a``
    and ``pi_b`` in every kept draw, and summarizes the draws of that
    distance: posterior mean, equal-tailed interval, effective sample size
    and R-hat. Each draw's distance uses one joint draw of both mixtures,
    so the interval carries their uncertainty and their correlation.

    Parameters
    ----------
    estimator : CompoundLDA, Pipeline, or list of them
        A fitted :class:`~sklearn_clda.CompoundLDA` (Gibbs sampler) with
        groups, two collections or more and at least 4 kept draws, a
        Pipeline ending with one, or a list of fits of the same model and
        data (chains differing in ``random_state``), whose draws are
        pooled.

    metric : {"hellinger", "tv", "jsd"}, default="hellinger"
        The distance between two mixtures: Hellinger's, ``sqrt(1 - sum_k
        sqrt(pi_ak pi_bk))``; total variation, ``sum_k |pi_ak - pi_bk| /
        2``, the share of text that would have to change topic to turn
        one mixture into the other; or the Jensen-Shannon divergence in
        bits. All lie in [0, 1]: 0 for equal mixtures, 1 for mixtures with
        no topic in common.

    ci : float, default=0.9
        Probability mass of the intervals, in (0, 1).

    collections : array-like of collection labels, default=None
        The collections to compare, pairs in this order; None for all of
        ``groups_``.

    topic_groups : dict or array-like of shape (n_components,), default=None
        Sum topics into groups (themes) first, as in
        :func:`collection_topic_summary`: the distance is then between the
        mixtures of the themes. The groups must not overlap and must
        cover every topic, so that each mixture still sums to 1.

    Returns
    -------
    distances : pandas.DataFrame
        One row per pair of collections, ``a`` before ``b`` in the order of
        ``collections`` (of ``groups_``), with columns:

        - ``a``, ``b``: the collections' labels;
        - ``distance``: the posterior mean of the distance;
        - ``lower``, ``upper``: its equal-tailed interval;
        - ``ess``, ``rhat``: the effective sample size and R-hat of its
          draws (as in :func:`collection_topic_summary`).

        ``distances.attrs`` holds ``metric``, ``ci``, ``n_chains`` and
        ``collections`` (the labels compared, in order).

    Raises
    ------
    ValueError
        If fewer than two collections are compared, if ``collections``
        names a collection the model lacks or repeats one, if
        ``topic_groups`` overlap or leave a topic out, or if the model has
        fewer than 4 draws of ``pi`` (a VEM fit has no posterior draws).

    See Also
    --------
    compare_collections : Where two collections differ, topic by topic.
    sklearn_clda.plotting.CollectionDistanceDisplay : The distances as a
        matrix, alike collections side by side.

    Notes
    -----
    A distance is never negative, so near 0 the uncertainty of the
    mixtures adds to it: two collections of a few documents each, with the
    same true mixture, still come out apart, by about as much as each
    one's draws scatter. Compare a distance with those of collections of similar
    sizes, or with the interval's width, before reading it as a
    difference; :func:`compare_collections` and :func:`permutation_test`
    test one.

    The distances do not depend on the order of the topics, so several
    chains pool without lining their topics up, and their R-hat measures
    whether the chains agree on the distances even where they split the
    topics differently.

    The cost grows with the pairs, the draws and the topics: a few
    seconds for 100 collections of 100 topics and 500 draws.

    Examples
    --------
    >>> from sklearn_clda import CompoundLDA
    >>> from sklearn_clda.datasets import make_compound_corpus
    >>> from sklearn_clda.inspection import collection_distances
    >>> corpus = make_compound_corpus(n_topics=3, n_features=30, n_collections=3,
    ...                               docs_per_collection=40, doc_length=50,
    ...                               random_state=4)
    >>> corpus.pi.round(2)
    array([[0.  , 0.02, 0.98],
           [0.  , 0.1 , 0.9 ],
           [0.24, 0.65, 0.11]])
    >>> clda = CompoundLDA(n_components=3, max_iter=200, thin=2, random_state=0)
    >>> clda = clda.fit(corpus.data, groups=corpus.groups)
    >>> distances = collection_distances(clda)
    >>> distances.columns.tolist()
    ['a', 'b', 'distance', 'lower', 'upper', 'ess', 'rhat']
    >>> distances[["a", "b"]].values.tolist()
    [[0, 1], [0, 2], [1, 2]]

    Collections 0 and 1 are alike, and collection 2 is far from both. The
    true Hellinger distance of 0 and 1 is 0.13: forty documents each leave
    enough uncertainty to raise it (Notes):

    >>> distances["distance"].round(2).tolist()
    [0.23, 0.71, 0.55]
    >>> bool(distances.loc[0, "upper"] < distances.loc[2, "lower"])
    True
    """
    caller = "collection_distances"
    pd = require_pandas(caller)
    _, chains, labels, _, _ = _draws(estimator, caller)
    positions = _positions(labels, collections, caller)
    chains = _partition_draws(chains[:, :, positions], topic_groups, caller)
    a, b, mean, lower, upper, ess, rhats = pair_distances(chains, metric, ci)
    shown = labels[positions]
    out = pd.DataFrame({"a": shown[a], "b": shown[b], "distance": mean, "lower": lower,
                        "upper": upper, "ess": ess, "rhat": rhats})
    out.attrs.update(metric=metric, ci=float(ci), n_chains=int(chains.shape[0]),
                     collections=[label.item() if hasattr(label, "item") else label
                                  for label in shown])
    return out

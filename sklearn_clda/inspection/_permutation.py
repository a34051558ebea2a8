"""Would shuffled collection labels give the same differences? A permutation
test of two collections' topic shares (stm's ``permutationTest``)."""

from numbers import Integral, Real

import numpy as np
from sklearn.base import clone
from sklearn.utils import Bunch, check_random_state
from sklearn.utils._param_validation import HasMethods, StrOptions, validate_params
from sklearn.utils.parallel import Parallel, delayed
from sklearn.utils.validation import _num_samples

from .._corpus import StrictInterval, check_group_labels
from .._sweeper import _effective_n_jobs
from ..metrics._topics import _ALIGN_METRICS, align_topics
from ._collections import _other_side, compare_collections
from ._topic_groups import group_indicator
from ._utils import collection_draws, collection_position, topic_word, unwrap

__all__ = ["permutation_test"]

_CALLER = "permutation_test"


def _check_same_collections(model, labels):
    """``labels`` must hold the collections ``model`` was fitted with, each
    with as many documents as in the fit."""
    if getattr(model, "groups_", None) is None:
        raise ValueError(
            f"{_CALLER} needs a model fitted with groups (several collections); "
            "this one was fitted without groups, as one collection."
        )
    names, sizes = np.unique(labels, return_counts=True)
    fitted = dict(zip(np.asarray(model.groups_).tolist(),
                      np.asarray(model.collection_sizes_).tolist()))
    given = dict(zip(names.tolist(), sizes.tolist()))
    if given != fitted:
        name = next(key for key in [*fitted, *given] if fitted.get(key) != given.get(key))
        raise ValueError(
            f"groups passed to {_CALLER} must be those the model was fitted with, "
            f"but collection {name!r} has {given.get(name, 0)} document(s) in them and "
            f"{fitted.get(name, 0)} in the fit; pass the X and groups of the fit."
        )


def _mean_difference(model, a, b):
    """Posterior mean of ``pi_a - pi_b`` (``b=None``: the rest of the corpus)
    of each topic of a fitted CompoundLDA, as :func:`compare_collections`'s
    ``mean``."""
    _, samples, labels = collection_draws(model, _CALLER)
    ia = collection_position(labels, a, "a", _CALLER)
    chains = samples[None]
    return (chains[:, :, ia] - _other_side(model, chains, labels, ia, b, _CALLER))[0].mean(0)


def _shuffled(labels, rows, rng):
    """``labels`` with the entries at ``rows`` permuted among themselves."""
    out = labels.copy()
    out[rows] = labels[rng.permutation(rows)]
    return out


def _permuted_fit(template, X, labels, a, b, seed, reference, metric):
    """Fit a clone of the unfitted ``template`` with the collection labels
    ``labels`` and the seed ``seed``; its per-topic mean differences in the
    reference's topic order, the distances of the matches and the largest
    absolute difference."""
    fit = clone(template).set_params(random_state=seed)
    fit.fit(X, groups=labels)
    difference = _mean_difference(fit, a, b)
    order, distances = align_topics(reference, topic_word(fit, _CALLER), metric=metric)
    return difference[order], distances, float(np.abs(difference).max())


def _grouped_null(null, topic_groups):
    """The shuffled fits' differences (n_permutations, K; NaN where a topic
    has no match) summed into ``topic_groups``, NaN for a group with a
    topic unmatched in that fit, and each fit's largest absolute group
    difference (NaN where no group is matched)."""
    _, indicator = group_indicator(topic_groups, null.shape[1], _CALLER)
    missing = np.isnan(null).astype(np.float64) @ indicator > 0
    grouped = np.where(missing, np.nan, np.nan_to_num(null, nan=0.0) @ indicator)
    size = np.where(missing, -np.inf, np.abs(grouped)).max(axis=1)
    return grouped, np.where(np.isfinite(size), size, np.nan)


def _p_values(observed, null):
    """``(1 + #{null >= observed}) / (1 + n)`` column by column, ``n`` the
    finite entries of each column of ``null`` (NaN where there are none)."""
    finite = np.isfinite(null)
    exceed = (np.where(finite, null, -np.inf) >= observed).sum(axis=0)
    n = finite.sum(axis=0)
    return np.where(n > 0, (1.0 + exceed) / (1.0 + n), np.nan), n


@validate_params(
    {
        "estimator": [HasMethods(["fit"])],
        "X": ["array-like", "sparse matrix"],
        "groups": ["array-like"],
        "a": [str, Integral],
        "b": [str, Integral, None],
        "n_permutations": [StrictInterval(Integral, 1, None, closed="left")],
        "ci": [StrictInterval(Real, 0, 1, closed="neither")],
        "metric": [StrOptions(set(_ALIGN_METRICS))],
        "max_distance": [StrictInterval(Real, 0, 1, closed="both")],
        "n_jobs": [StrictInterval(Integral, None, None, closed="neither"), None],
        "random_state": ["random_state"],
        "topic_groups": [dict, "array-like", None],
    },
    # The clones' fit validates X.
    prefer_skip_nested_validation=False,
)
def permutation_test(estimator, X, groups, a, b=None, *, n_permutations=19, ci=0.9,
                     metric="tv", max_distance=0.5, n_jobs=None, random_state=None,
                     topic_groups=None):
    """Whether two collections' topic shares differ more than shuffled labels would make them.

    :func:`compare_collections` reads the difference ``pi_a - pi_b`` off
    the model's posterior, which is only as good as the model and its
    chain. This checks it another way, as R's ``stm::permutationTest``
    does: the labels of the documents of ``a`` and ``b`` are shuffled
    among them (with ``b=None``, every document's label: each collection
    keeps its number of documents), the model is fitted again, and the
    posterior mean differences of the refit are recorded; this is done
    ``n_permutations`` times. Differences that the shuffled fits reach as
    often as the real one are no evidence that the collections differ,
    however narrow the posterior interval.

    Two p-values are given for each topic, both of the form ``(1 + r) /
    (1 + n)`` (never 0; at least ``1 / (1 + n_permutations)``):

    - ``p_value_adjusted``, ``r`` the number of shuffled fits whose largest
      absolute difference over all topics is at least the topic's observed
      absolute difference: the max-statistic permutation test, which
      controls the family-wise error rate over the topics and needs no
      matching of topics between fits (stm records the same largest
      absolute effect of each shuffled fit);
    - ``p_value``, ``r`` the number of shuffled fits whose topic matched
      with this one (:func:`~sklearn_clda.metrics.align_topics`) has at
      least its absolute difference, out of the ``n`` fits where the
      match lies within ``max_distance`` (stm's plot ``type="match"``):
      one test per topic, not corrected for their number, whose smallest
      value is ``1 / (1 + n)``: coarser than the adjusted one where few
      shuffled fits find the topic.

    Parameters
    ----------
    estimator : CompoundLDA or Pipeline
        A :class:`~sklearn_clda.CompoundLDA` (Gibbs sampler, with at
        least 4 kept draws of ``pi``) fitted on ``X`` with ``groups``, or
        a fitted Pipeline ending with one; its other steps transform ``X``
        as they were fitted. The refits are clones of the model with its
        settings and another ``random_state`` each.

    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        The documents the model was fitted on (counts, or the Pipeline's
        input).

    groups : array-like of shape (n_samples,)
        The collection label of each document, as in the fit: the same
        collections with the same numbers of documents.

    a : str or int
        A collection label, as in ``groups_``.

    b : str, int or None, default=None
        Another collection label; or None for the rest of the corpus (as in
        :func:`compare_collections`).

    n_permutations : int, default=19
        Number of shuffled fits. Each costs one fit; the smallest p-value
        is ``1 / (1 + n_permutations)``: 0.05 with 19, 0.01 with 99.

    ci : float, default=0.9
        Probability mass of the observed posterior intervals.

    metric : {"tv", "hellinger", "jsd"}, default="tv"
        Distance between topics used to match a shuffled fit's topics with
        the model's.

    max_distance : float, default=0.5
        A topic whose match in a shuffled fit is farther than this has no
        counterpart there: that fit is left out of the topic's ``p_value``.

    n_jobs : int, default=None
        Number of shuffled fits run in parallel with joblib. ``None`` means
        1. Each fit also uses the estimator's own ``n_jobs``.

    random_state : int, RandomState instance or None, default=None
        Draws the shuffles and the refits' seeds; the same value gives the
        same result for any ``n_jobs``.

    topic_groups : dict or array-like of shape (n_components,), default=None
        Test groups of topics (themes) instead: a dict ``{name: topics}``
        or a group label per topic (see :func:`compare_collections`). A
        group's difference is the sum of its topics', in the model and in
        each shuffled fit (its topics matched with the model's); a fit in
        which some topic of the group has no match is left out of the
        group's ``p_value``, and the adjustment takes each fit's largest
        absolute group difference. Each row of ``table`` is then a group.

    Returns
    -------
    result : :class:`~sklearn.utils.Bunch`
        - ``table``: a pandas DataFrame, one row per topic, with columns
          ``topic``; ``mean``, ``lower`` and ``upper``, the model's
          posterior mean difference ``pi_ak - pi_bk`` and its interval (as
          :func:`compare_collections`); ``p_value``, ``n_matched`` (the
          shuffled fits it counts) and ``p_value_adjusted``. ``attrs``
          hold ``a``, ``b``, ``ci``, ``n_permutations`` and
          ``topic_groups`` (whether the rows are groups);
        - ``null_differences``: the shuffled fits' mean differences of the
          topics matched with the model's, shape ``(n_permutations,
          n_components)``, NaN where the match is farther than
          ``max_distance`` (with ``topic_groups``, of the groups, shape
          ``(n_permutations, n_groups)``);
        - ``null_max``: each shuffled fit's largest absolute difference,
          shape ``(n_permutations,)`` (with ``topic_groups``, over its
          groups whose topics it all matched; NaN if none);
        - ``distances``: the distance of each match, shape
          ``(n_permutations, n_components)``.

    See Also
    --------
    compare_collections : The posterior difference of two collections.
    sklearn_clda.plotting.PermutationTestDisplay : The observed differences
        against the shuffled fits'.

    Notes
    -----
    The test asks whether the labels matter to the fitted differences, not
    whether the model is right: with exchangeable documents (labels
    unrelated to the text) every shuffle is as likely as the real
    labels, which makes the p-values valid whatever the model's
    assumptions and however well its chain mixed. Each refit runs as many
    sweeps as the model's fit; a chain too short for the model's topics
    to settle shows as topics without a match (small ``n_matched``).

    References
    ----------
    .. [1] M. E. Roberts, B. M. Stewart and D. Tingley, "stm: An R package
       for structural topic models", Journal of Statistical Software
       91(2), 2019 (``permutationTest``).
    .. [2] P. H. Westfall and S. S. Young, "Resampling-Based Multiple
       Testing", Wiley, 1993 (the max-statistic adjustment).

    Examples
    --------
    Two simulated collections: one almost all topic 1, the other mostly
    topic 2 with a sixth of topic 0 (the fitted topics come out in this
    order):

    >>> from sklearn_clda import CompoundLDA
    >>> from sklearn_clda.datasets import make_compound_corpus
    >>> from sklearn_clda.inspection import permutation_test
    >>> corpus = make_compound_corpus(n_topics=3, n_features=30, n_collections=2,
    ...                               docs_per_collection=40, doc_length=50,
    ...                               random_state=0)
    >>> clda = CompoundLDA(n_components=3, max_iter=100, thin=2, random_state=0)
    >>> clda = clda.fit(corpus.data, groups=corpus.groups)
    >>> result = permutation_test(clda, corpus.data, corpus.groups, 0, 1,
    ...                           n_permutations=9, random_state=0)
    >>> result.table["mean"].round(2).tolist()
    [0.05, 0.91, -0.96]

    No shuffle of the labels comes near the differences in topics 1 and
    2 (0.1 is the smallest p-value nine shuffles give); topic 0's small
    difference is what shuffled labels give. With the labels shuffled, the
    fits find topic 0 in only two of the nine:

    >>> result.table["p_value_adjusted"].tolist()
    [0.9, 0.1, 0.1]
    >>> result.table["n_matched"].tolist()
    [2, 9, 9]
    >>> result.null_differences.shape
    (9, 3)
    """
    model, pre, _ = unwrap(estimator)
    observed = compare_collections(estimator, a, b, ci=ci, topic_groups=topic_groups)
    Xt = X if pre is None else pre.transform(X)
    labels = check_group_labels(groups, _num_samples(Xt), method=_CALLER)
    _check_same_collections(model, labels)
    rows = np.arange(labels.size) if b is None else np.flatnonzero(np.isin(labels, [a, b]))
    rng = check_random_state(random_state)
    tasks = [(_shuffled(labels, rows, rng), int(rng.randint(np.iinfo(np.int32).max)))
             for _ in range(n_permutations)]
    reference = topic_word(model, _CALLER)
    template = clone(model)  # (the jobs get the settings, not the fitted state)
    runs = Parallel(n_jobs=max(1, min(_effective_n_jobs(n_jobs), n_permutations)))(
        delayed(_permuted_fit)(template, Xt, shuffled, a, b, seed, reference, metric)
        for shuffled, seed in tasks
    )
    null = np.array([run[0] for run in runs])
    distances = np.array([run[1] for run in runs])
    null[distances > max_distance] = np.nan
    null_max = np.array([run[2] for run in runs])
    if topic_groups is not None:
        null, null_max = _grouped_null(null, topic_groups)
    size = np.abs(observed["mean"].to_numpy())
    table = observed[["topic", "mean", "lower", "upper"]].copy()
    table["p_value"], table["n_matched"] = _p_values(size, np.abs(null))
    table["p_value_adjusted"] = _p_values(size, null_max[:, None])[0]
    table.attrs = {"a": a, "b": b, "ci": float(ci), "n_permutations": n_permutations,
                   "topic_groups": topic_groups is not None}
    return Bunch(table=table, null_differences=null, null_max=null_max, distances=distances)

"""Several fits of one CompoundLDA (chains), with their topics lined up."""

from numbers import Real

import numpy as np
from sklearn.utils import Bunch
from sklearn.utils._param_validation import StrOptions, validate_params

from .._corpus import StrictInterval
from ..metrics._topics import _ALIGN_METRICS, align_topics
from ._utils import MIN_DRAWS, collection_draws, topic_word

__all__ = ["align_chains"]


def _check_same_model(first, other, index, caller):
    """Raise if fit ``index`` is not a chain of the same model as fit 0."""
    problems = []
    if not np.array_equal(np.asarray(first["labels"]).astype(str),
                          np.asarray(other["labels"]).astype(str)):
        problems.append("the collections differ")
    for what, a, b in (("topics", first["beta"].shape[0], other["beta"].shape[0]),
                       ("words", first["beta"].shape[1], other["beta"].shape[1]),
                       ("kept draws of pi", first["draws"].shape[0],
                        other["draws"].shape[0])):
        if a != b:
            problems.append(f"fit 0 has {a} {what}, fit {index} has {b}")
    differ = sorted(key for key in set(first["params"]) | set(other["params"])
                    if repr(first["params"].get(key)) != repr(other["params"].get(key)))
    if differ:
        problems.append(f"their settings differ in {', '.join(differ)}")
    if None not in (first["data"], other["data"]) and first["data"] != other["data"]:
        problems.append("they were fitted on different documents (or on the same in "
                        "another order, or with other collections)")
    if problems:
        raise ValueError(
            f"{caller} needs fits of the same model on the same data, differing only "
            f"in random_state (chains), but fit {index} does not match fit 0: "
            + "; ".join(problems) + "."
        )


def _check_distinct(fits, caller):
    """Raise if two fits hold the same draws: the same chain twice (the same
    object, or the same random_state), which would pass for agreement."""
    for i in range(len(fits)):
        if np.ptp(fits[i]["draws"]) == 0:
            continue  # draws that never move (one topic: pi is 1) tell no chain apart
        for j in range(i + 1, len(fits)):
            if np.array_equal(fits[i]["draws"], fits[j]["draws"]):
                raise ValueError(
                    f"{caller} got the same chain twice: fits {i} and {j} hold the same "
                    "draws of pi (the same model, or fits with the same random_state); "
                    "several chains need different seeds."
                )


#: Parameters that chains of one model may differ in: the seed, and how the
#: chain was run (not what it samples).
_RUN_PARAMS = {"random_state", "verbose", "n_jobs", "warm_start", "max_iter", "burn_in",
               "evaluate_every"}


def _fit_parts(estimator, caller, min_draws):
    """The kept draws of pi, the topics, the collection labels and the
    model's settings of one fit."""
    model, samples, labels = collection_draws(estimator, caller, min_draws)
    params = {key: value for key, value in model.get_params(deep=False).items()
              if key not in _RUN_PARAMS}
    return {"draws": samples, "beta": topic_word(model, caller), "labels": labels,
            "params": params, "data": getattr(model, "_data_fingerprint", None)}


@validate_params(
    {
        "estimators": [list, tuple],
        "metric": [StrOptions(set(_ALIGN_METRICS))],
        "max_distance": [StrictInterval(Real, 0, 1, closed="both")],
    },
    prefer_skip_nested_validation=True,
)
def align_chains(estimators, *, metric="tv", max_distance=0.5):
    """Line up the topics of several fits of one CompoundLDA (chains).

    One chain of a topic model explores one mode of its posterior, and
    its posterior intervals say nothing of the others: fits that differ
    only in ``random_state`` often give the same collection noticeably
    different shares of a topic, by more than either fit's intervals
    allow. Fitting several chains and reading them together shows that
    uncertainty. Topics are identified only up to a permutation, so each
    fit's topics are first matched one-to-one with the first fit's
    (:func:`~sklearn_clda.metrics.align_topics`); the draws of ``pi`` are
    then put in the first fit's topic order. :func:`collection_topic_summary`
    and :func:`compare_collections` take the same list of fits and pool
    the lined-up draws, with :func:`rhat` saying whether the chains agree.

    Parameters
    ----------
    estimators : list of CompoundLDA or Pipeline
        Two or more fitted :class:`~sklearn_clda.CompoundLDA` (Gibbs
        sampler) of the same model on the same data, differing only in
        ``random_state`` (and in how they were run: ``max_iter``,
        ``burn_in``, ``n_jobs``, ...): the same collections, number of
        topics, words, priors and kept draws of ``pi``. Fitted Pipelines
        ending with one work too.

    metric : {"tv", "hellinger", "jsd"}, default="tv"
        Distance between topics used to match them
        (:func:`~sklearn_clda.metrics.align_topics`).

    max_distance : float, default=0.5
        A topic whose match in some other fit is farther than this is
        listed in ``unstable``: that fit has no counterpart of it, and its
        pooled summaries mix different topics.

    Returns
    -------
    chains : :class:`~sklearn.utils.Bunch`
        - ``draws``: the kept draws of ``pi`` of every fit, topics in the
          first fit's order, shape ``(n_chains, n_draws, n_collections,
          n_components)``;
        - ``permutations``: ``permutations[c, k]`` is the topic of fit
          ``c`` matched with topic ``k`` of the first fit, shape
          ``(n_chains, n_components)`` (row 0 is ``0..K-1``);
        - ``distances``: the distance between each topic of the first fit
          and its match, same shape (row 0 is 0);
        - ``unstable``: the topics (of the first fit) whose largest
          distance exceeds ``max_distance``;
        - ``collections``: the collection labels, as in ``groups_``.

    Raises
    ------
    ValueError
        If fewer than two fits are given, or if they are not chains of the
        same model (different collections, numbers of topics, words,
        settings or kept draws, or fits of other documents: each fit keeps
        a digest of its data), or if one has fewer than 4 kept draws of
        ``pi``.

    See Also
    --------
    rhat : Whether several chains agree.
    sklearn_clda.metrics.align_topics : Matching the topics of two models.

    Examples
    --------
    >>> from sklearn_clda import CompoundLDA
    >>> from sklearn_clda.datasets import make_compound_corpus
    >>> from sklearn_clda.inspection import align_chains
    >>> corpus = make_compound_corpus(n_topics=3, n_features=30, n_collections=2,
    ...                               docs_per_collection=40, doc_length=50,
    ...                               random_state=0)
    >>> fits = [CompoundLDA(n_components=3, max_iter=200, thin=2, random_state=seed)
    ...         .fit(corpus.data, groups=corpus.groups) for seed in range(3)]
    >>> chains = align_chains(fits)
    >>> chains.draws.shape
    (3, 50, 2, 3)

    The other fits found the same three topics, in another order:

    >>> chains.permutations
    array([[0, 1, 2],
           [1, 2, 0],
           [1, 2, 0]])
    >>> chains.distances.max(axis=0).round(2)
    array([0.09, 0.  , 0.11])
    >>> chains.unstable.tolist()
    []

    After 100 sweeps the first fit had not yet told its topic 0 apart:

    >>> early = [CompoundLDA(n_components=3, max_iter=100, thin=2, random_state=seed)
    ...          .fit(corpus.data, groups=corpus.groups) for seed in range(3)]
    >>> align_chains(early).unstable.tolist()
    [0]
    """
    return chain_draws(estimators, "align_chains", metric=metric, max_distance=max_distance)


def chain_draws(estimators, caller, *, metric="tv", max_distance=0.5,
                min_draws=MIN_DRAWS):
    """:func:`align_chains` for ``caller``, whose name its errors give, for
    fits of at least ``min_draws`` kept draws."""
    if len(estimators) < 2:
        raise ValueError(
            f"{caller} needs two fits or more (chains with different random_state), "
            f"got {len(estimators)}."
        )
    fits = [_fit_parts(estimator, caller, min_draws) for estimator in estimators]
    for index, fit in enumerate(fits[1:], start=1):
        _check_same_model(fits[0], fit, index, caller)
    _check_distinct(fits, caller)
    n_topics = fits[0]["beta"].shape[0]
    permutations = np.empty((len(fits), n_topics), dtype=np.int64)
    distances = np.empty((len(fits), n_topics))
    permutations[0], distances[0] = np.arange(n_topics), 0.0
    for c, fit in enumerate(fits[1:], start=1):
        permutations[c], distances[c] = align_topics(fits[0]["beta"], fit["beta"],
                                                     metric=metric)
    draws = np.stack([fit["draws"][:, :, perm] for fit, perm in zip(fits, permutations)])
    return Bunch(
        draws=draws, permutations=permutations, distances=distances,
        unstable=np.flatnonzero(distances.max(axis=0) > max_distance),
        collections=fits[0]["labels"],
    )

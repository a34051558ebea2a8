"""Posterior summaries of the collection mixtures ``pi_j`` of a CompoundLDA."""

from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import HasMethods, validate_params

from .._corpus import StrictInterval
from ._chains import chain_draws
from ._ess import effective_sample_size
from ._rhat import rhat
from ._topic_groups import group_draws
from ._utils import (
    MIN_DRAWS,
    collection_draws,
    collection_position,
    require_pandas,
    unwrap,
)

__all__ = ["collection_topic_summary", "collection_trend", "compare_collections"]


def equal_tailed_interval(draws, ci):
    """``(lower, upper)``: the ``(1 - ci) / 2`` and ``(1 + ci) / 2`` quantiles
    of ``draws`` along axis 0 (NumPy's default linear interpolation)."""
    tail = (1.0 - ci) / 2.0
    lower, upper = np.quantile(draws, [tail, 1.0 - tail], axis=0)
    return lower, upper


def pi_summary(samples, ci):
    """``(mean, lower, upper, ess)`` of draws of shape (n_draws, J, K), each (J, K)."""
    lower, upper = equal_tailed_interval(samples, ci)
    return samples.mean(axis=0), lower, upper, effective_sample_size(samples)


def _draws(estimator, caller, topic_groups=None):
    """``(model, chains, labels, unstable, names)`` of a fit or a list of fits
    (chains): ``chains`` the draws of ``pi`` of shape (n_chains, n_draws, J,
    K), topics lined up with the first fit's (summed into ``topic_groups``,
    if given: K groups), ``unstable`` the topics (groups) some fit lacks,
    ``names`` the topics' (groups') names."""
    if isinstance(estimator, (list, tuple)):
        found = chain_draws(estimator, caller)
        model, chains, labels, unstable = (unwrap(estimator[0])[0], found.draws,
                                           found.collections, found.unstable)
    else:
        model, samples, labels = collection_draws(estimator, caller)
        chains, unstable = samples[None], np.array([], dtype=np.int64)
    chains, names, unstable = group_draws(chains, unstable, topic_groups, caller)
    return model, chains, labels, unstable, names


def _other_side(model, chains, labels, ia, b, caller):
    """Draws of ``pi_b`` of shape (n_chains, n_draws, K); with ``b=None`` the
    other collections' draws weighted by their numbers of documents."""
    if b is not None:
        ib = collection_position(labels, b, "b", caller)
        if ia == ib:
            raise ValueError(f"a and b passed to {caller} must differ, got {b!r} twice.")
        return chains[:, :, ib]
    if labels.size < 2:
        raise ValueError(
            f"{caller} with b=None compares a collection with the others, but the "
            f"model has one collection ({labels.tolist()[0]!r})."
        )
    weights = np.asarray(model.collection_sizes_, dtype=np.float64).copy()
    weights[ia] = 0.0
    return np.einsum("cnjk,j->cnk", chains, weights / weights.sum())


def _per_topic_table(pd, draws, ci, names, unstable, topics):
    """A table of one row per topic from ``draws`` of shape (n_chains,
    n_draws, K): the topic (``topics``, their names), the mean (column
    ``names[0]``), interval, the share of positive draws (``names[1]``), ESS
    and R-hat, and with several chains ``chains_agree``
    (:func:`chains_agree`); ``attrs`` hold ``ci``, ``n_chains`` and
    ``unstable_topics``."""
    mean, lower, upper, ess, rhats = _chain_stats(draws, ci)
    out = pd.DataFrame({
        "topic": topics, names[0]: mean, "lower": lower, "upper": upper,
        names[1]: (draws > 0).mean(axis=(0, 1)), "ess": ess, "rhat": rhats,
    })
    agree = chains_agree(draws, ci, unstable)
    if agree is not None:
        out["chains_agree"] = agree
    out.attrs.update({"ci": float(ci), "n_chains": int(draws.shape[0]),
                      "unstable_topics": [topics[k] for k in unstable]})
    return out


def chains_agree(draws, ci, unstable):
    """Whether every chain's own interval puts each quantity on the same side of 0.

    ``draws`` holds draws of differences (or slopes) by chain, shape
    (n_chains, n_draws, ...). Chains that settled in different modes pool
    to an ESS of a few draws however long they run, so the pooled interval
    cannot be trusted to call a difference; one whose interval in each
    chain alone excludes 0, on the same side, holds in every mode the
    chains found. Topics some chain lacks (``unstable``, indices of the
    last axis) never agree: their chains' draws are of different topics.
    Returns a boolean array of shape ``draws.shape[2:]``, or None for one
    chain or fewer than ``MIN_DRAWS`` draws.
    """
    if draws.shape[0] < 2 or draws.shape[1] < MIN_DRAWS:
        return None
    lower, upper = np.quantile(draws, [(1.0 - ci) / 2.0, (1.0 + ci) / 2.0], axis=1)
    agree = (lower > 0).all(axis=0) | (upper < 0).all(axis=0)
    agree[..., unstable] = False
    return agree


def _chain_stats(chains, ci):
    """``(mean, lower, upper, ess, rhat)`` over chains of shape (n_chains, n_draws, ...):
    the pooled draws' mean and interval, the ESS (of one chain, or Stan's
    multi-chain one) and the rank-normalized split R-hat."""
    pooled = chains.reshape(-1, *chains.shape[2:])
    lower, upper = equal_tailed_interval(pooled, ci)
    if chains.shape[0] == 1:
        ess = effective_sample_size(chains[0])
    else:
        ess = effective_sample_size(chains, multichain=True)
    return pooled.mean(axis=0), lower, upper, ess, rhat(chains)


@validate_params(
    {
        "estimator": [HasMethods(["fit"]), list, tuple],
        "ci": [StrictInterval(Real, 0, 1, closed="neither")],
        "topic_groups": [dict, "array-like", None],
    },
    prefer_skip_nested_validation=True,
)
def collection_topic_summary(estimator, ci=0.9, *, topic_groups=None):
    """Posterior mean, interval and effective sample size of every ``pi_jk``.

    :class:`~sklearn_clda.CompoundLDA` keeps posterior draws of each
    collection's topic mixture ``pi_j`` (``collection_topic_samples_``).
    This summarizes them in one tidy table: for every collection and
    topic, the posterior mean of the topic's share, an equal-tailed
    posterior interval, the effective sample size (ESS) of the draws
    behind them and their R-hat. Given several fits (chains that differ
    only in ``random_state``), it pools their draws, topics lined up by
    :func:`align_chains`: the intervals then carry the uncertainty that
    one chain cannot show, and R-hat says whether the chains agree.

    Parameters
    ----------
    estimator : CompoundLDA, Pipeline, or list of them
        A fitted :class:`~sklearn_clda.CompoundLDA` (Gibbs sampler,
        ``algorithm="ags"`` or ``"mgs"``) with at least 4 kept draws, or a
        fitted Pipeline ending with one; or a list of two or more such fits
        of the same model and data (:func:`align_chains`), whose topics
        come out in the first fit's order.

    ci : float, default=0.9
        Probability mass of the intervals, in (0, 1): 0.9 spans the 5% to
        the 95% quantile of the draws.

    topic_groups : dict or array-like of shape (n_components,), default=None
        Sum topics into groups (themes) first: a dict ``{name: topics}``
        (groups may overlap), or one group label per topic, as
        :func:`scipy.cluster.hierarchy.fcluster` gives for the tree of
        :func:`topic_hierarchy`. A group's share is the sum of its topics'
        shares in every draw, so its interval is that of the sum (not a
        sum of intervals). The ``topic`` column then holds the groups'
        names: the dict's keys in their order, or the labels sorted.

    Returns
    -------
    summary : pandas.DataFrame
        One row per (collection, topic), collections in the order of
        ``groups_`` and topics increasing, with columns:

        - ``collection``: the label (``"all"`` for a model fitted without
          groups);
        - ``topic``: the topic index;
        - ``mean``: posterior mean of ``pi_jk`` (equals
          ``collection_topic_``);
        - ``lower``, ``upper``: the interval's ends;
        - ``ess``: the effective sample size of the draws of ``pi_jk``
          (:func:`effective_sample_size`; over all chains with
          ``multichain=True`` for a list of fits);
        - ``rhat``: the rank-normalized split R-hat of those draws
          (:func:`rhat`): above 1.01, the chain's halves (or the chains)
          disagree and the interval is not to be trusted.

        ``summary.attrs`` holds ``ci``, ``n_chains`` and ``unstable_topics``
        (the topics some fit has no counterpart of, from
        :func:`align_chains`; empty for one fit).

    Raises
    ------
    ValueError
        If the model has fewer than 4 draws of ``pi``: a VEM fit
        (``algorithm="vem"``) has a point estimate only, without posterior
        intervals.

    See Also
    --------
    compare_collections : The difference between two collections, per topic.
    effective_sample_size : The ESS estimator.
    sklearn_clda.plotting.CollectionTopicDisplay : The same intervals, drawn.

    Notes
    -----
    An interval whose ESS is small (tens) has ends that are themselves
    uncertain: keep more draws (more sweeps, or a smaller ``thin``) before
    reading much into it. A large R-hat of one chain means that ``pi_jk``
    drifts over the chain; more sweeps may not cure that, and fits with
    other seeds show how far the shares move.

    Examples
    --------
    >>> from sklearn_clda import CompoundLDA
    >>> from sklearn_clda.datasets import make_compound_corpus
    >>> from sklearn_clda.inspection import collection_topic_summary
    >>> corpus = make_compound_corpus(n_topics=3, n_features=30, n_collections=2,
    ...                               docs_per_collection=40, doc_length=50,
    ...                               random_state=0)
    >>> clda = CompoundLDA(n_components=3, max_iter=200, thin=2, random_state=0)
    >>> clda = clda.fit(corpus.data, groups=corpus.groups)
    >>> summary = collection_topic_summary(clda, ci=0.9)
    >>> summary.columns.tolist()
    ['collection', 'topic', 'mean', 'lower', 'upper', 'ess', 'rhat']
    >>> summary[["collection", "topic"]].values.tolist()
    [[0, 0], [0, 1], [0, 2], [1, 0], [1, 1], [1, 2]]
    >>> summary.groupby("collection")["mean"].sum().round(6).tolist()
    [1.0, 1.0]
    >>> bool(((summary.lower <= summary["mean"]) & (summary["mean"] <= summary.upper)).all())
    True

    Three chains pooled. They found the same topics, but split collection
    1 differently between topics 0 and 2: R-hat says so, and the pooled
    intervals of those shares are wider than one chain's:

    >>> fits = [clda] + [CompoundLDA(n_components=3, max_iter=200, thin=2, random_state=seed)
    ...                  .fit(corpus.data, groups=corpus.groups) for seed in (1, 2)]
    >>> pooled = collection_topic_summary(fits)
    >>> pooled.attrs["n_chains"], pooled.attrs["unstable_topics"]
    (3, [])
    >>> pooled[pooled.rhat > 1.1][["collection", "topic"]].values.tolist()
    [[1, 0], [1, 2]]

    Topics 0 and 2 summed, draw by draw, and topic 1 alone:

    >>> themes = collection_topic_summary(clda, topic_groups={"0 and 2": [0, 2], "1": [1]})
    >>> themes[["collection", "topic"]].values.tolist()
    [[0, '0 and 2'], [0, '1'], [1, '0 and 2'], [1, '1']]
    >>> themes.groupby("collection")["mean"].sum().round(6).tolist()
    [1.0, 1.0]
    """
    caller = "collection_topic_summary"
    pd = require_pandas(caller)
    _, chains, labels, unstable, topics = _draws(estimator, caller, topic_groups)
    mean, lower, upper, ess, rhats = _chain_stats(chains, ci)
    n_collections, n_components = mean.shape
    out = pd.DataFrame({
        "collection": np.repeat(labels, n_components),
        "topic": topics * n_collections,
        "mean": mean.ravel(),
        "lower": lower.ravel(),
        "upper": upper.ravel(),
        "ess": ess.ravel(),
        "rhat": rhats.ravel(),
    })
    out.attrs.update(ci=float(ci), n_chains=int(chains.shape[0]),
                     unstable_topics=[topics[k] for k in unstable])
    return out


@validate_params(
    {
        "estimator": [HasMethods(["fit"]), list, tuple],
        "a": [str, Integral],
        "b": [str, Integral, None],
        "ci": [StrictInterval(Real, 0, 1, closed="neither")],
        "topic_groups": [dict, "array-like", None],
    },
    prefer_skip_nested_validation=True,
)
def compare_collections(estimator, a, b=None, ci=0.9, *, topic_groups=None):
    """Posterior difference of two collections' topic shares, ``pi_a - pi_b``.

    For every topic ``k``: the posterior mean of ``pi_ak - pi_bk``, its
    equal-tailed interval, the posterior probability that collection ``a``
    gives the topic a larger share than ``b``, the effective sample size
    of the difference's draws and their R-hat. Without ``b``, collection
    ``a`` is compared with the rest of the corpus: which topics does it
    use more than the other collections do?

    Everything is computed from the joint posterior draws: each kept draw
    of ``pi`` gives one draw of the difference, ``pi_ak^(s) - pi_bk^(s)``,
    whose quantiles give the interval. This is not the same as comparing
    the two collections' separate intervals: the draws of ``pi_a`` and
    ``pi_b`` are correlated (they share the topics), and overlapping
    intervals can hide a clear difference or the other way round.

    Parameters
    ----------
    estimator : CompoundLDA, Pipeline, or list of them
        A fitted :class:`~sklearn_clda.CompoundLDA` (Gibbs sampler) with
        groups and at least 4 kept draws, or a fitted Pipeline ending with
        one; or a list of two or more such fits of the same model and data
        (chains differing in ``random_state``), whose lined-up draws are
        pooled (:func:`align_chains`).

    a : str or int
        A collection label, as in ``groups_``.

    b : str, int or None, default=None
        Another collection label; or None for the rest of the corpus: the
        other collections' mixtures averaged draw by draw, each weighted by
        its number of training documents (``collection_sizes_``).

    ci : float, default=0.9
        Probability mass of the intervals, in (0, 1).

    topic_groups : dict or array-like of shape (n_components,), default=None
        Sum topics into groups (themes) first: a dict ``{name: topics}``
        (groups may overlap), or one group label per topic, as
        :func:`scipy.cluster.hierarchy.fcluster` gives for the tree of
        :func:`topic_hierarchy`. A group's share is the sum of its topics'
        shares in every draw, so its interval is that of the sum (not a
        sum of intervals). The ``topic`` column then holds the groups'
        names: the dict's keys in their order, or the labels sorted.

    Returns
    -------
    comparison : pandas.DataFrame
        One row per topic, with columns:

        - ``topic``: the topic index;
        - ``mean``: posterior mean of ``pi_ak - pi_bk``;
        - ``lower``, ``upper``: the equal-tailed interval of the difference;
        - ``prob_greater``: ``P(pi_ak > pi_bk | data)``, the share of draws
          in which ``a``'s share is the larger;
        - ``ess``: effective sample size of the draws of the difference;
        - ``rhat``: their rank-normalized split R-hat (:func:`rhat`);
        - ``chains_agree`` (several fits only): whether each fit's own
          interval excludes 0 on the same side, in a topic every fit found.
          Fits settled in different modes pool to a few effective draws
          however long they run; a difference they agree on holds in each
          of those modes.

        ``comparison.attrs`` holds ``a``, ``b``, ``ci``, ``n_chains`` and
        ``unstable_topics`` (as in :func:`collection_topic_summary`).

    Raises
    ------
    ValueError
        If ``a`` or ``b`` is not a collection of the model, if they are
        equal, if the model was fitted without groups or with one
        collection, or if it has fewer than 4 draws of ``pi`` (a VEM fit
        has no posterior draws).

    See Also
    --------
    collection_topic_summary : Each collection's shares with intervals.
    sklearn_clda.plotting.CollectionTrendDisplay : Shares across ordered
        collections.

    Notes
    -----
    R's ``stm`` answers the same question with ``estimateEffect``: it
    regresses the documents' topic proportions on the covariate and, to
    carry the uncertainty of the proportions into the effect, refits the
    regression on draws from their approximate posterior ("the method of
    composition"). In compound LDA the collection mixtures are parameters
    of the model and the sampler draws them from their posterior, so the
    difference's posterior is read directly off the draws: exact up to
    Monte Carlo error, which the ESS measures. With an ESS of tens, read
    ``prob_greater`` close to 0 or 1 as "at least about" rather than
    exactly; keep more draws for precise tails.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_clda import CompoundLDA
    >>> from sklearn_clda.datasets import make_compound_corpus
    >>> from sklearn_clda.inspection import collection_topic_summary, compare_collections
    >>> corpus = make_compound_corpus(n_topics=3, n_features=30, n_collections=2,
    ...                               docs_per_collection=40, doc_length=50,
    ...                               random_state=0)
    >>> clda = CompoundLDA(n_components=3, max_iter=200, thin=2, random_state=0)
    >>> clda = clda.fit(corpus.data, groups=corpus.groups)
    >>> diff = compare_collections(clda, 0, 1)
    >>> diff.columns.tolist()
    ['topic', 'mean', 'lower', 'upper', 'prob_greater', 'ess', 'rhat']

    The mean difference is the difference of the posterior means:

    >>> summary = collection_topic_summary(clda)
    >>> means = summary.pivot(index="topic", columns="collection", values="mean")
    >>> bool(np.allclose(diff["mean"], means[0] - means[1]))
    True

    The simulated collections are almost all topic 1 (collection 0) and
    mostly topic 2 (collection 1, with a sixth of topic 0), and the fitted
    topics come out in the same order here. The posterior is sure that
    collection 0 has more of topic 1 and less of topic 2; of topic 0 it is
    unsure (its interval spans zero: forty documents a collection, and
    these draws' ESS for it is small):

    >>> corpus.pi.round(2)
    array([[0.  , 1.  , 0.  ],
           [0.17, 0.  , 0.83]])
    >>> diff["prob_greater"].tolist()
    [0.34, 1.0, 0.0]
    >>> bool(diff.loc[0, "lower"] < 0 < diff.loc[0, "upper"])
    True

    Without ``b``, collection 0 against the rest of the corpus, here the
    other collection:

    >>> bool(np.allclose(compare_collections(clda, 0)["mean"], diff["mean"]))
    True
    """
    caller = "compare_collections"
    pd = require_pandas(caller)
    model, chains, labels, unstable, topics = _draws(estimator, caller, topic_groups)
    if getattr(model, "groups_", None) is None:
        raise ValueError(
            f"{caller} needs a model fitted with groups (several collections); "
            "this one was fitted without groups, as one collection."
        )
    ia = collection_position(labels, a, "a", caller)
    diff = chains[:, :, ia] - _other_side(model, chains, labels, ia, b, caller)
    out = _per_topic_table(pd, diff, ci, ("mean", "prob_greater"), unstable, topics)
    out.attrs.update({"a": a, "b": b})
    return out


@validate_params(
    {
        "estimator": [HasMethods(["fit"]), list, tuple],
        "order": ["array-like", None],
        "ci": [StrictInterval(Real, 0, 1, closed="neither")],
        "topic_groups": [dict, "array-like", None],
    },
    prefer_skip_nested_validation=True,
)
def collection_trend(estimator, *, order=None, ci=0.9, topic_groups=None):
    """Posterior of each topic's linear trend across ordered collections.

    When the collections are ordered (years, months, review stars), the
    question is often whether a topic rises or falls along them. For every
    kept draw of ``pi`` this fits, topic by topic, the least-squares line
    of the shares ``pi_jk`` against the collections' positions ``x_j``;
    the draws of its slope give the trend's posterior mean, interval and
    the probability that it is positive. It is the analogue of regressing
    topic prevalence on a continuous covariate with stm's
    ``estimateEffect``, with the uncertainty of the shares carried over
    draw by draw.

    Parameters
    ----------
    estimator : CompoundLDA, Pipeline, or list of them
        A fitted :class:`~sklearn_clda.CompoundLDA` (Gibbs sampler) with at
        least two collections and 4 kept draws, a Pipeline ending with one,
        or a list of fits of the same model (:func:`align_chains`).

    order : array-like of collection labels, default=None
        The collections to use, in their order, evenly spaced (one step
        apart). ``None`` uses every collection, placed at its label's
        value: the labels must all be numbers (``2019``, ``"4.5"``) or ISO
        dates (``"2021-05"``), which are measured in years.

    ci : float, default=0.9
        Probability mass of the intervals, in (0, 1).

    topic_groups : dict or array-like of shape (n_components,), default=None
        Sum topics into groups (themes) first: a dict ``{name: topics}``
        (groups may overlap), or one group label per topic, as
        :func:`scipy.cluster.hierarchy.fcluster` gives for the tree of
        :func:`topic_hierarchy`. A group's share is the sum of its topics'
        shares in every draw, so its interval is that of the sum (not a
        sum of intervals). The ``topic`` column then holds the groups'
        names: the dict's keys in their order, or the labels sorted.

    Returns
    -------
    trend : pandas.DataFrame
        One row per topic, with columns:

        - ``topic``: the topic index;
        - ``slope``: posterior mean of the change in the topic's share per
          unit of ``x`` (per year for dates, per step with ``order``);
        - ``lower``, ``upper``: its equal-tailed interval;
        - ``prob_positive``: the posterior probability that it is positive;
        - ``ess``, ``rhat``: the effective sample size and R-hat of its
          draws (as in :func:`collection_topic_summary`);
        - ``chains_agree`` (several fits only): whether each fit's own
          interval excludes 0 on the same side (as in
          :func:`compare_collections`).

        ``trend.attrs`` holds ``collections`` (the labels in order), ``x``
        (their positions), ``unit`` (``"label"``, ``"year"`` or
        ``"step"``), ``ci``, ``n_chains`` and ``unstable_topics``.

    Raises
    ------
    ValueError
        If the model has fewer than two collections, if ``order`` names
        unknown collections or fewer than two, if the labels are neither
        all numbers nor all dates (and no ``order`` is given), or if all
        collections sit at one position.

    See Also
    --------
    sklearn_clda.plotting.CollectionTrendDisplay : The shares along the
        collections, drawn with their bands.
    compare_collections : The difference between two collections.

    Notes
    -----
    A straight line summarizes a trend; it does not say the shares follow
    one. Look at :class:`~sklearn_clda.plotting.CollectionTrendDisplay`
    before reading much into a slope, and compare first and last
    collections with :func:`compare_collections` for a change that is not
    linear.

    Examples
    --------
    Three yearly collections in which topic 0 grows and topic 1 shrinks:

    >>> import numpy as np
    >>> from sklearn_clda import CompoundLDA
    >>> from sklearn_clda.inspection import collection_trend
    >>> vocab = 12
    >>> rng = np.random.default_rng(0)
    >>> def docs(share, n=30):
    ...     rows = []
    ...     for _ in range(n):
    ...         topic = 0 if rng.random() < share else 1
    ...         row = np.zeros(vocab, dtype=int)
    ...         np.add.at(row, rng.integers(0, 6, 20) + 6 * topic, 1)
    ...         rows.append(row)
    ...     return rows
    >>> X = np.array(docs(0.2) + docs(0.5) + docs(0.8))
    >>> years = [2019] * 30 + [2020] * 30 + [2021] * 30
    >>> clda = CompoundLDA(n_components=2, max_iter=200, random_state=0).fit(X, groups=years)
    >>> trend = collection_trend(clda)
    >>> trend.attrs["unit"], trend.attrs["collections"]
    ('label', [2019, 2020, 2021])
    >>> rising = int(np.argmax(clda.components_[:, 0]))
    >>> bool(trend.loc[rising, "prob_positive"] == 1.0), bool(trend.loc[1 - rising, "upper"] < 0)
    (True, True)
    """
    caller = "collection_trend"
    pd = require_pandas(caller)
    model, chains, labels, unstable, topics = _draws(estimator, caller, topic_groups)
    positions, x, unit = _trend_positions(model, order, caller)
    centred = x - x.mean()
    slopes = np.einsum("cnjk,j->cnk", chains[:, :, positions], centred) / (centred @ centred)
    out = _per_topic_table(pd, slopes, ci, ("slope", "prob_positive"), unstable, topics)
    out.attrs.update({"collections": [labels[j].item() for j in positions], "x": x.tolist(),
                      "unit": unit})
    return out


def _trend_positions(model, order, caller):
    """``(positions, x, unit)``: the collections along the trend, their
    positions as floats (dates in years) and the unit of ``x``."""
    from ..plotting._trend import ordered_positions

    positions, x, _ = ordered_positions(model, None if order is None else list(order), caller)
    unit = "label" if order is None else "step"
    if np.asarray(x).dtype.kind == "M":
        seconds = np.asarray(x).astype("datetime64[s]")  # (months, days, hours alike)
        x = (seconds - seconds[0]) / np.timedelta64(1, "s") / (365.2425 * 86400)
        unit = "year"
    x = np.asarray(x, dtype=np.float64)
    if positions.size < 2 or np.ptp(x) == 0:
        raise ValueError(
            f"{caller} needs collections at two positions or more, got "
            f"{positions.size} at {np.unique(x).size} position(s)."
        )
    return positions, x, unit

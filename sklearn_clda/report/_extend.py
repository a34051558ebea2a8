"""Continuing a fitted chain until its draws of the collection mixtures suffice."""

import math
import time
from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import validate_params

from .._corpus import StrictInterval, check_group_labels, quiet_check_array
from ..inspection._utils import check_clda
from ._analysis import smallest_ess
from ._parallel import chain_jobs, map_chains
from ._stats import MIN_ESS

_SAFETY = 1.25  # sweeps planned beyond the ESS's linear extrapolation
_BUDGET_USE = 0.9  # share of the remaining time a planned run may take
#: A round at most multiplies the kept sweeps by this, so that a chain whose
#: ESS does not grow is found out before the whole budget is spent.
MAX_ROUND_GROWTH = 4.0
#: The share of linear growth (ESS in proportion to the kept sweeps) a round
#: must show; below it the chain has stalled and extending stops.
MIN_GROWTH_SHARE = 0.25
#: Kept draws (of all chains together) a round must start from to be judged:
#: the ESS of fewer is too noisy (it fell from 6 to 4.6 while 20 draws of a
#: tiny corpus became 80).
MIN_STALL_DRAWS = 100


@validate_params(
    {
        "model": "no_validation",  # a fitted CompoundLDA: checked below
        "X": ["array-like", "sparse matrix"],
        "groups": ["array-like", None],
        "min_ess": [StrictInterval(Real, 0, np.inf, closed="neither")],
        "time_budget": [StrictInterval(Real, 0, np.inf, closed="left")],
        "n_jobs": [None, StrictInterval(Integral, None, None, closed="neither")],
    },
    # the model's fit validates X and groups when the chain runs further
    prefer_skip_nested_validation=False,
)
def extend_chain(model, X, groups=None, *, min_ess=MIN_ESS, time_budget=30.0,
                 n_jobs=None):
    """Run a fitted CompoundLDA's chain (or chains) further until its draws of pi suffice.

    The effective sample size (ESS) of the kept draws of every topic
    proportion ``pi_jk`` should reach ``min_ess``. While it does not and
    the time budget allows, the chain runs further: the number of sweeps
    is extrapolated from the ESS so far (which grows about linearly with
    the kept sweeps), capped by what the remaining time affords at the
    sweep rate measured so far, and by four times the kept sweeps, so the
    run goes in rounds. After each round the ESS must have grown by at
    least a quarter of what linear growth gives (from 10 to at least 17.5
    when the kept sweeps quadruple), once the round starts from 100 kept
    draws or more; otherwise extending stops early and says the chain has
    stalled. A stall means that some ``pi_jk`` drift over more sweeps than
    the chain has: their intervals from this one chain understate the
    uncertainty, and fits with other seeds are the way to see by how much.

    The chain continues in one of two ways. If the model was fitted with
    ``warm_start=True`` (where the estimator has that parameter), the kept
    chain runs the extra sweeps only. Otherwise the model is refitted from
    the start with more sweeps and its burn-in fixed (``burn_in`` set to
    ``burn_in_``): with an integer ``random_state`` this replays the same
    chain bit for bit and runs it further, at the cost of the sweeps run
    before (with another ``random_state`` it is a new, longer chain). The
    model's ``max_iter`` and ``burn_in`` then describe the whole chain.

    Parameters
    ----------
    model : CompoundLDA or list of CompoundLDA
        A fitted :class:`~sklearn_clda.CompoundLDA` (Gibbs sampling),
        changed in place. Or several chains: fits of the same model on the
        same data with different ``random_state`` and the same numbers of
        sweeps and burn-in. They all run the same further sweeps, and the
        ESS is the multi-chain one of their draws lined up with the first
        fit's topics (:func:`~sklearn_clda.inspection.align_chains`), which
        stays small while the chains disagree: extending then stalls.

    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        The counts it was fitted on, in the same order (other counts of
        the same shape are refused: the fit keeps a digest of its data).

    groups : array-like of shape (n_samples,), default=None
        The collections it was fitted with, of the same documents.

    min_ess : float, default=100
        Target for the smallest ESS over all ``pi_jk``.

    time_budget : float, default=30.0
        Seconds that the further sweeps may take; 0 runs none.

    n_jobs : int, default=None
        Chains run further at once, each in its own process (the same
        result as one after another). ``None`` means 1, ``-1`` one per
        core (-2 all but one, ...); never more than the chains, nor than
        half the machine's memory holds.

    Returns
    -------
    extension : dict
        ``target``, ``budget``, ``reached`` (bool), ``method``
        (``"warm_start"``, ``"refit"`` or ``None`` when no sweep was
        added), ``rounds``, ``sweeps_before``, ``sweeps_after``,
        ``seconds`` (spent), ``ess_before`` and ``ess_after`` (smallest
        ESS, ``None`` with fewer than 4 draws), ``stalled`` (bool: the last
        round did not raise the ESS enough, and extending stopped).

    Examples
    --------
    >>> from sklearn_clda import CompoundLDA
    >>> from sklearn_clda.datasets import make_compound_corpus
    >>> from sklearn_clda.report import extend_chain
    >>> corpus = make_compound_corpus(n_topics=3, n_features=30, n_collections=2,
    ...                               docs_per_collection=20, doc_length=30,
    ...                               random_state=0)
    >>> clda = CompoundLDA(n_components=3, max_iter=40, thin=1, random_state=0)
    >>> clda = clda.fit(corpus.data, groups=corpus.groups)
    >>> info = extend_chain(clda, corpus.data, corpus.groups, min_ess=50, time_budget=20)
    >>> info["reached"], clda.n_iter_ == info["sweeps_after"] >= 40
    (True, True)
    """
    fits = _check_chains(model)
    for fit in fits:
        _check_same_data(fit, X, groups)
    _check_counts(X)
    _check_fingerprints(fits, X, groups)
    start = time.perf_counter()
    methods = ["warm_start" if fit.get_params().get("warm_start") else "refit"
               for fit in fits]
    # a refit costs the whole chain again: plan as one if any fit refits
    method = "refit" if "refit" in methods else "warm_start"
    ess, first = smallest_ess(fits), fits[0]
    info = {
        "target": float(min_ess), "budget": float(time_budget), "method": None,
        "rounds": 0, "sweeps_before": int(first.n_iter_), "ess_before": ess,
    }
    jobs = chain_jobs(n_jobs, len(fits), X, first.n_components, len(first.collection_sizes_))[0]
    # seconds per sweep of all chains, run ``jobs`` at a time
    rate = sum(_seconds_per_sweep(fit) for fit in fits) / jobs
    stalled = False
    while not (ess is not None and ess >= min_ess) and not stalled:
        remaining = time_budget - (time.perf_counter() - start)
        total = _planned_sweeps(first, ess, min_ess, remaining / rate, method)
        if total is None:
            break
        run_start, done, kept = time.perf_counter(), int(first.n_iter_), _kept(first)
        # (the multi-chain ESS rests on the draws of every chain)
        judged = len(fits) * first.collection_topic_samples_.shape[0] >= MIN_STALL_DRAWS
        map_chains(_run_to, fits, jobs, X, groups, total)
        swept = total - done if method == "warm_start" else total
        rate = (time.perf_counter() - run_start) / swept
        ess, ess_before = smallest_ess(fits), ess
        stalled = judged and _stalled(ess_before, ess, _kept(first) / kept)
        info["rounds"] += 1
        info["method"] = methods[0]
    info.update(
        reached=bool(ess is not None and ess >= min_ess), sweeps_after=int(first.n_iter_),
        seconds=time.perf_counter() - start, ess_after=ess, stalled=stalled,
    )
    return info


def _check_chains(model):
    """The fitted CompoundLDA to run further: ``[model]``, or the chains of a
    list, which must stand at the same sweep with the same burn-in."""
    from sklearn.pipeline import Pipeline

    fits = list(model) if isinstance(model, (list, tuple)) else [model]
    if not fits:
        raise ValueError("extend_chain got an empty list of chains.")
    for fit in fits:
        if isinstance(fit, Pipeline):
            raise ValueError(
                "extend_chain runs a CompoundLDA's chain on the counts it was fitted "
                "on: pass the pipeline's last step (pipeline[-1]) and the counts its "
                "first steps make, not the Pipeline."
            )
        check_clda(fit, "extend_chain")
        _check_gibbs(fit)
    for index, fit in enumerate(fits[1:], start=1):
        if fit is fits[0] or any(fit is other for other in fits[1:index]):
            raise ValueError(
                f"extend_chain got the same fitted model twice (chain {index}); "
                "chains need separate fits with different random_state."
            )
        theirs = (int(fit.n_iter_), int(fit.burn_in_), int(fit.thin))
        first = (int(fits[0].n_iter_), int(fits[0].burn_in_), int(fits[0].thin))
        if theirs != first:
            raise ValueError(
                "extend_chain runs chains the same sweeps, so they must stand at the "
                f"same sweep with the same burn-in and thin: chain 0 has (n_iter_, "
                f"burn_in_, thin) = {first}, chain {index} has {theirs}."
            )
    return fits


def _check_gibbs(model):
    if getattr(model, "algorithm", None) == "vem":
        raise ValueError(
            "extend_chain runs a Gibbs chain further, but this model was fitted with "
            "algorithm='vem', which keeps no draws of pi; refit it with "
            "algorithm='ags' (the default)."
        )


def _check_counts(X):
    """``ValueError`` for counts a fit would refuse (NaN, infinite or
    negative), before any chain's parameters change."""
    
    try:
        values = quiet_check_array(X, caller="extend_chain", accept_sparse="csr",
                                   dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"X passed to extend_chain must hold counts: {exc}") from None
    data = values.data if hasattr(values, "tocsr") else values
    if data.size and data.min() < 0:
        raise ValueError("X passed to extend_chain must hold counts, >= 0; it has "
                         "negative values.")


def _check_fingerprints(fits, X, groups):
    """``ValueError`` if ``X`` and ``groups``, of the right shape and
    collections, are not the documents a fit saw, in its order."""
    from .._fingerprint import fitted_on

    for index, fit in enumerate(fits):
        if fitted_on(fit, X, groups, "extend_chain") is False:
            which = "the model" if len(fits) == 1 else f"chain {index}"
            raise ValueError(
                f"extend_chain needs the data {which} was fitted on: X and groups have "
                "its shape and collections, but other counts, another order of the "
                "documents or other collections of them."
            )


def _check_same_data(model, X, groups):
    """``ValueError`` unless ``model`` is a Gibbs chain and ``X``, ``groups``
    look like the data it was fitted on: running it further refits it on
    them, which with other collections would make it another model."""
    caller = "extend_chain"
    shape = tuple(getattr(X, "shape", None) or np.shape(X))
    n_docs, fitted_docs = shape[0], int(np.sum(model.collection_sizes_))
    if len(shape) != 2 or n_docs != fitted_docs or shape[1] != model.n_features_in_:
        raise ValueError(
            f"{caller} needs the data the model was fitted on: X has shape {shape}, "
            f"the model was fitted on {fitted_docs} documents and "
            f"{model.n_features_in_} words."
        )
    fitted = None if model.groups_ is None else sorted(str(g) for g in model.groups_)
    given = None
    if groups is not None:
        given = sorted({str(g) for g in check_group_labels(groups, n_docs, method=caller)})
    if given != fitted:
        raise ValueError(
            f"{caller} needs the collections the model was fitted with "
            f"({'none' if fitted is None else fitted[:10]}), got "
            f"{'none (groups=None)' if given is None else given[:10]}."
        )


def _kept(model):
    """Sweeps after burn-in (at least 1)."""
    return max(int(model.n_iter_) - int(model.burn_in_), 1)


def _stalled(before, after, growth):
    """Whether a round that multiplied the kept sweeps by ``growth`` raised
    the smallest ESS by less than ``MIN_GROWTH_SHARE`` of that."""
    if before is None or after is None:
        return False
    return after < before * (1.0 + MIN_GROWTH_SHARE * (growth - 1.0))


def _seconds_per_sweep(model):
    """Wall time per sweep of the fit so far (the sampler's own clock)."""
    seconds = (getattr(model, "trace_", None) or {}).get("seconds")
    if seconds is not None and len(seconds) and seconds[-1] > 0:
        return max(float(seconds[-1]) / int(model.n_iter_), 1e-9)
    return max(float(np.sum(model.sweep_times_)) / len(model.sweep_times_), 1e-9)


def _planned_sweeps(model, ess, target, sweeps_left, method):
    """Total sweeps of the next run, or None when it would not pay.

    ``sweeps_left`` is how many sweeps the remaining time affords.
    """
    done, burn_in, thin = int(model.n_iter_), int(model.burn_in_), int(model.thin)
    kept = _kept(model)
    factor = MAX_ROUND_GROWTH
    if ess is not None:
        factor = min(_SAFETY * target / max(ess, 1.0), MAX_ROUND_GROWTH)
    wanted = burn_in + math.ceil(kept * factor)
    # (capped: a budget of 1e308 s affords an infinite number of sweeps)
    affordable = math.floor(min(max(sweeps_left, 0.0) * _BUDGET_USE, 2.0**62))
    total = min(wanted, done + affordable if method == "warm_start" else affordable)
    # More sweeps only pay off if they add a fair share of kept draws.
    if total < done + max(2 * thin, math.ceil(0.25 * kept)):
        return None
    return total


def _run_to(model, X, groups, total):
    """Run the chain to ``total`` sweeps; the parameters then describe the whole chain."""
    burn_in = int(model.burn_in_)
    if model.get_params().get("warm_start"):
        model.set_params(max_iter=total - int(model.n_iter_), burn_in=burn_in)
        model.fit(X, groups=groups)
        model.set_params(max_iter=total)
    else:
        model.set_params(max_iter=total, burn_in=burn_in)
        model.fit(X, groups=groups)

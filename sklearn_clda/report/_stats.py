"""Numbers behind the report: collection mixtures, intervals, effective sizes."""

import numpy as np
from sklearn.utils import Bunch

from ..inspection._collections import chains_agree
from . import _analysis

#: Effective sample size below which an interval is not trusted to call a
#: difference clear.
MIN_ESS = 100
#: Split R-hat above which the two halves of the chain disagree about a share.
MAX_RHAT = 1.01


def trend_after_burn_in(trace, burn_in):
    """Rise of the log-likelihood after burn-in as a share of its total rise.

    The rise after burn-in is the slope of a least-squares line through the
    recorded values after burn-in times their span; it is None (no clear
    trend) when there are too few records or when the rise is within twice
    the scatter of the values around the line.
    """
    it = np.asarray(trace.get("iteration", []), dtype=np.float64)
    ll = np.asarray(trace.get("log_likelihood", []), dtype=np.float64)
    after = it >= burn_in
    if it.size < 5 or after.sum() < 4 or after.all() or not np.all(np.isfinite(ll)):
        return None
    x, y = it[after], ll[after]
    slope, intercept = np.polyfit(x, y, 1)
    rise = slope * (x[-1] - x[0])
    scatter = np.std(y - (slope * x + intercept))
    total = y.mean() - ll[0]
    if total <= 0 or rise <= 2 * scatter:
        return None
    return float(rise / total)


def collection_statistics(fits, X, groups, interval):
    """Labels, document and token counts, pi with intervals, ESS, corpus mixture.

    ``fits`` is a list of fitted CompoundLDA: one, or several chains of the
    same model whose draws are lined up with the first one's topics and
    pooled (:func:`~sklearn_clda.inspection.align_chains`). The corpus-wide
    mixture is the average of the collections' mixtures weighted by their
    numbers of documents; ``diff`` summarizes the draws of each collection's
    mixture minus the corpus-wide one. ``chains`` holds the draws by chain
    (n_chains, n_draws, J, K), ``samples`` the same draws pooled.
    """
    model = fits[0]
    chains, permutations, distances, unstable = _analysis.chain_draws(fits)
    # Each chain's own estimate of pi (the mean over every kept sweep), in
    # the first fit's topic order, averaged over the chains.
    pi = np.mean([np.asarray(fit.collection_topic_, dtype=np.float64)[:, perm]
                  for fit, perm in zip(fits, permutations)], axis=0)
    labels = ["all"] if model.groups_ is None else [str(g) for g in model.groups_]
    docs = np.asarray(model.collection_sizes_, dtype=np.int64)
    weights = docs / docs.sum()
    corpus_chains = np.einsum("cnjk,j->cnk", chains, weights)
    diff = chains - corpus_chains[:, :, None, :]  # each collection minus the corpus
    pis = _analysis.summarize_draws(chains, interval)
    return Bunch(
        labels=labels, docs=docs, tokens=_collection_tokens(model, X, groups, labels),
        pi=pi, chains=chains, samples=chains.reshape(-1, *chains.shape[2:]),
        lower=pis.lower, upper=pis.upper, ess=pis.ess, rhat=pis.rhat,
        weights=weights, corpus=weights @ pi,
        corpus_draws=corpus_chains.reshape(-1, corpus_chains.shape[2]),
        diff=_analysis.summarize_draws(diff, interval),
        fits=list(fits), distances=distances.max(axis=0), unstable=unstable,
        diff_agree=chains_agree(diff, interval, unstable),
    )


def _collection_tokens(model, X, groups, labels):
    """Tokens of each collection, or None without (matching) ``groups``."""
    if groups is None:
        return None
    lengths = np.asarray(X.sum(axis=1)).ravel()
    if model.groups_ is None:
        codes = np.zeros(X.shape[0], dtype=np.intp)
    else:
        index = {label: j for j, label in enumerate(labels)}
        codes = np.array([index.get(str(g), -1) for g in groups], dtype=np.intp)
    if np.any(codes < 0):
        return None
    return np.bincount(codes, weights=lengths, minlength=len(labels)).astype(np.int64)

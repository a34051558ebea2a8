"""Numbers behind the report: collection mixtures, intervals, effective sizes."""

import numpy as np
from sklearn.utils import Bunch

from ._analysis import summarize_draws

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


def collection_statistics(model, X, groups, interval):
    """Labels, document and token counts, pi with intervals, ESS, corpus mixture.

    The corpus-wide mixture is the average of the collections' mixtures
    weighted by their numbers of documents; ``diff`` summarizes the draws of
    each collection's mixture minus the corpus-wide one.
    """
    pi = np.asarray(model.collection_topic_, dtype=np.float64)
    samples = np.asarray(model.collection_topic_samples_, dtype=np.float64)
    labels = ["all"] if model.groups_ is None else [str(g) for g in model.groups_]
    docs = np.asarray(model.collection_sizes_, dtype=np.int64)
    weights = docs / docs.sum()
    corpus_draws = np.einsum("sjk,j->sk", samples, weights)
    pis = summarize_draws(samples, interval)
    return Bunch(
        labels=labels, docs=docs, tokens=_collection_tokens(model, X, groups, labels),
        pi=pi, samples=samples, lower=pis.lower, upper=pis.upper, ess=pis.ess, rhat=pis.rhat,
        weights=weights, corpus=weights @ pi, corpus_draws=corpus_draws,
        diff=summarize_draws(samples - corpus_draws[:, None, :], interval),
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

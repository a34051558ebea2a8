"""How well ``topic_share_curves`` recovers curved effects planted in news16-like documents.

The corpora of ``bench_topic_effects.py`` (a CompoundLDA(20) fitted to
news16 generates documents from its topics, collection mixtures and
``gamma``, with news16's lengths or cut to ``--length`` tokens), with
effects that are not straight lines: along ``x ~ U(0, 1)`` topic 0's share
rises and falls (log-multiplier ``2 exp(-((x - 0.5) / 0.15)^2)``), topic 5's
falls and levels off (``-2 min(x, 0.5) / 0.5``) and topic 9's rises
(``1.5 x``). The target of each point of a curve is the expected share at
that ``x``, averaged over the collections as the documents are (the
collections do not depend on ``x``).

Two estimates, in the same run on the same corpora:

- ``topic_share_curves`` (cubic, ``prior="covariates"``, ``--n-knots``
  knots, 5 by default as its own);
- "fold-in + spline OLS": ordinary least squares of ``transform``'s shares
  on the same spline basis, with the usual standard errors, what one does
  with scikit-learn's LDA.

Printed per estimate: the coverage of the 90% intervals over every point
of every topic's curve and over the planted topics' points, the mean
absolute error of the planted topics' curves, the mean width and the time
per call.

Run: ``python benchmarks/bench_share_curves.py [--length 10] [--corpora 10] [--n-knots 8]``
"""

import argparse
import time
import warnings

import numpy as np
from scipy import stats
from sklearn.preprocessing import SplineTransformer

from bench_topic_effects import expected_shares, planted_corpus

from sklearn_clda import CompoundLDA
from sklearn_clda.datasets import load_news16
from sklearn_clda.inspection import topic_share_curves

PLANTED = (0, 5, 9)
N_POINTS = 21


def curved_effect(x, K):
    """The log-multiplier of each topic's share at ``x``."""
    effect = np.zeros((np.size(x), K))
    effect[:, 0] = 2.0 * np.exp(-(((x - 0.5) / 0.15) ** 2))
    effect[:, 5] = -2.0 * np.minimum(x, 0.5) / 0.5
    effect[:, 9] = 1.5 * x
    return effect


def targets(model, groups, points):
    """The expected shares at each point, averaged over the documents'
    collections: (n_points, K)."""
    return np.array([expected_shares(model, groups, np.full(groups.size, v),
                                     curved_effect).mean(axis=0) for v in points])


def fold_in_spline(model, X, groups, x, points, ci, n_knots):
    """``(estimate, lower, upper)`` at ``points`` by OLS of the fold-in's
    shares on the spline basis, with the usual standard errors."""
    spline = SplineTransformer(n_knots=n_knots, degree=3, include_bias=False).fit(x[:, None])
    design = np.c_[np.ones(x.size), spline.transform(x[:, None])]
    at = np.c_[np.ones(points.size), spline.transform(points[:, None])]
    theta = model.transform(X, groups)
    coef = np.linalg.lstsq(design, theta, rcond=None)[0]
    n, p = design.shape
    sigma2 = ((theta - design @ coef) ** 2).sum(axis=0) / (n - p)
    leverage = np.einsum("gi,ij,gj->g", at, np.linalg.inv(design.T @ design), at)
    half = stats.t.ppf(0.5 + ci / 2, n - p) * np.sqrt(np.outer(leverage, sigma2))
    estimate = at @ coef
    return estimate, estimate - half, estimate + half


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--length", type=int, default=0,
                        help="cut every document to this many tokens (0: news16's lengths)")
    parser.add_argument("--corpora", type=int, default=10)
    parser.add_argument("--docs", type=int, default=3000)
    parser.add_argument("--max-iter", type=int, default=400)
    parser.add_argument("--n-knots", type=int, default=5,
                        help="knots of both estimates' splines (topic_share_curves' default)")
    args = parser.parse_args()
    news = load_news16()
    start = time.perf_counter()
    model = CompoundLDA(n_components=20, max_iter=args.max_iter, random_state=0)
    model.fit(news.data, groups=news.groups)
    print(f"CompoundLDA(20) on news16: {time.perf_counter() - start:.1f} s")
    lengths = np.asarray(news.data.sum(axis=1)).ravel()
    lengths = lengths[lengths > 0]
    results = {name: {"covered": [], "planted": [], "error": [], "width": [], "time": []}
               for name in ("topic_share_curves", "fold-in + spline OLS")}
    for seed in range(args.corpora):
        X, groups, x, _ = planted_corpus(model, lengths, args.docs, args.length, seed,
                                         curved_effect)
        keep = np.asarray(X.sum(axis=1)).ravel() > 0
        X, groups, x = X[keep], groups[keep], x[keep]
        points = np.linspace(x.min(), x.max(), N_POINTS)
        codes = np.searchsorted(model.groups_, groups)
        target = targets(model, codes, points)
        for name, out in results.items():
            start = time.perf_counter()
            if name == "fold-in + spline OLS":
                estimate, lower, upper = fold_in_spline(model, X, groups, x, points, 0.9,
                                                        args.n_knots)
            else:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    curves = topic_share_curves(model, X, x, groups, n_points=N_POINTS,
                                                n_knots=args.n_knots, random_state=seed)
                estimate, lower, upper = (
                    curves[c].to_numpy().reshape(-1, N_POINTS).T
                    for c in ("estimate", "lower", "upper"))
            out["time"].append(time.perf_counter() - start)
            covered = (lower <= target) & (target <= upper)
            out["covered"].append(covered.mean())
            out["planted"].append(covered[:, list(PLANTED)].mean())
            out["error"].append(np.abs(estimate - target)[:, list(PLANTED)].mean())
            out["width"].append((upper - lower).mean())
    cut = f"cut to {args.length} tokens" if args.length else "news16's lengths"
    print(f"\n{args.corpora} corpora of {args.docs} documents ({cut}), 90% intervals, "
          f"{N_POINTS} points per curve, {args.n_knots} knots")
    print(f"{'estimate':<22}{'coverage':>10}{'(planted)':>10}{'error':>8}{'width':>8}"
          f"{'s/call':>8}")
    for name, out in results.items():
        print(f"{name:<22}{np.mean(out['covered']):>10.3f}{np.mean(out['planted']):>10.3f}"
              f"{np.mean(out['error']):>8.4f}{np.mean(out['width']):>8.4f}"
              f"{np.median(out['time']):>8.2f}")


if __name__ == "__main__":
    main()

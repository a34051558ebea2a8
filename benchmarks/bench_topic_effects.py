"""How well ``topic_effects`` recovers covariate effects planted in news16-like documents.

A CompoundLDA is fitted to news16 (four collections, 20 topics). Its topics,
collection mixtures and ``gamma`` then generate new corpora in which a
document covariate ``x ~ U(0, 1)`` moves three topics' shares: document
``d`` of collection ``j`` has shares ``theta_d ~ Dirichlet(gamma * mu_d)``,
``mu_d`` proportional to ``pi_j * exp(beta * x_d)`` with ``beta`` = 1.5,
-1.5 and 1.0 on topics 0, 5 and 9 (0 elsewhere), and lengths drawn from
news16's (or cut to ``--length`` tokens). The target of each slope is the
least-squares slope of the documents' expected shares ``mu_d`` on ``x``:
what a regression of the shares on ``x`` estimates, given the ``x`` drawn
(the drawn shares scatter around it, which the intervals must cover).

Three estimates, in the same run on the same corpora:

- ``topic_effects(prior="covariates")`` (the default) and ``prior="model"``;
- "fold-in + OLS": ordinary least squares of ``transform``'s shares on
  ``x`` with the usual standard errors, what one does with scikit-learn's
  LDA.

Printed per estimate: the mean ratio of the planted slopes' estimates to
their targets (1 = no shrinkage), the coverage of the 90% intervals over
all slopes and corpora and over the planted ones alone, their mean width
and the time per call.

Run: ``python benchmarks/bench_topic_effects.py [--length 10] [--corpora 10]``
"""

import argparse
import time
import warnings

import numpy as np
import scipy.sparse as sp
from scipy import stats

from sklearn_clda import CompoundLDA
from sklearn_clda.datasets import load_news16
from sklearn_clda.inspection import topic_effects

PLANTED = {0: 1.5, 5: -1.5, 9: 1.0}


def linear_effect(x, K):
    """The log-multiplier of each topic's share at ``x``: ``beta * x``."""
    beta = np.zeros(K)
    beta[list(PLANTED)] = list(PLANTED.values())
    return np.outer(x, beta)


def expected_shares(model, groups, x, effect=linear_effect):
    """``mu``: each document's expected shares, ``pi_j`` times the
    exponential of ``effect(x)``, normalized."""
    mean = model.collection_topic_[groups] * np.exp(effect(x, model.components_.shape[0]))
    return mean / mean.sum(axis=1, keepdims=True)


def planted_corpus(model, lengths, n_docs, length_cap, seed, effect=linear_effect):
    """Documents, collections, covariate and expected shares of one corpus."""
    rng = np.random.default_rng(seed)
    K = model.components_.shape[0]
    phi = model.components_ / model.components_.sum(axis=1, keepdims=True)
    groups = rng.integers(0, len(model.groups_), n_docs)
    x = rng.uniform(size=n_docs)
    mean = expected_shares(model, groups, x, effect)
    theta = np.array([rng.dirichlet(model.gamma_ * m) for m in mean])
    n_tokens = rng.choice(lengths, n_docs)
    if length_cap:
        n_tokens = np.minimum(n_tokens, length_cap)
    cumulative = np.cumsum(phi, axis=1)
    rows = []
    for d in range(n_docs):
        z = rng.choice(K, size=n_tokens[d], p=theta[d])
        words = np.minimum((cumulative[z] < rng.random(n_tokens[d])[:, None]).sum(axis=1),
                           phi.shape[1] - 1)
        rows.append(np.bincount(words, minlength=phi.shape[1]))
    return sp.csr_matrix(np.array(rows)), model.groups_[groups], x, mean


def fold_in_ols(model, X, groups, x, ci):
    """``(estimate, lower, upper)`` of the slopes by OLS of the fold-in's shares."""
    design = np.c_[np.ones(x.size), x]
    theta = model.transform(X, groups)
    coef = np.linalg.lstsq(design, theta, rcond=None)[0]
    residual = ((theta - design @ coef) ** 2).sum(axis=0) / (x.size - 2)
    se = np.sqrt(residual * np.linalg.inv(design.T @ design)[1, 1])
    half = stats.t.ppf(0.5 + ci / 2, x.size - 2) * se
    return coef[1], coef[1] - half, coef[1] + half


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--length", type=int, default=0,
                        help="cut every document to this many tokens (0: news16's lengths)")
    parser.add_argument("--corpora", type=int, default=10)
    parser.add_argument("--docs", type=int, default=3000)
    parser.add_argument("--max-iter", type=int, default=400)
    args = parser.parse_args()
    news = load_news16()
    start = time.perf_counter()
    model = CompoundLDA(n_components=20, max_iter=args.max_iter, random_state=0)
    model.fit(news.data, groups=news.groups)
    print(f"CompoundLDA(20) on news16: {time.perf_counter() - start:.1f} s, "
          f"gamma {model.gamma_:.2f}")
    lengths = np.asarray(news.data.sum(axis=1)).ravel()
    lengths = lengths[lengths > 0]
    results = {name: {"ratio": [], "covered": [], "planted": [], "width": [], "time": []}
               for name in ("covariates", "model", "fold-in + OLS")}
    for seed in range(args.corpora):
        X, groups, x, mean = planted_corpus(model, lengths, args.docs, args.length, seed)
        target = np.linalg.lstsq(np.c_[np.ones(x.size), x], mean, rcond=None)[0][1]
        for name, out in results.items():
            start = time.perf_counter()
            if name == "fold-in + OLS":
                estimate, lower, upper = fold_in_ols(model, X, groups, x, 0.9)
            else:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # left-out empty documents
                    table = topic_effects(model, X, x, groups, prior=name, random_state=seed)
                slopes = table[table["term"] == "x0"]
                estimate, lower, upper = (slopes[c].to_numpy()
                                          for c in ("estimate", "lower", "upper"))
            out["time"].append(time.perf_counter() - start)
            planted = list(PLANTED)
            out["ratio"].extend(estimate[planted] / target[planted])
            covered = (lower < target) & (target < upper)
            out["covered"].extend(covered)
            out["planted"].extend(covered[planted])
            out["width"].extend(upper - lower)
    cut = f"cut to {args.length} tokens" if args.length else "news16's lengths"
    print(f"\n{args.corpora} corpora of {args.docs} documents ({cut}), 90% intervals")
    print(f"{'estimate':<16}{'planted/target':>15}{'coverage':>10}{'(planted)':>10}"
          f"{'width':>8}{'s/call':>8}")
    for name, out in results.items():
        print(f"{name:<16}{np.mean(out['ratio']):>15.3f}{np.mean(out['covered']):>10.3f}"
              f"{np.mean(out['planted']):>10.3f}{np.mean(out['width']):>8.4f}"
              f"{np.median(out['time']):>8.2f}")


if __name__ == "__main__":
    main()

"""Streaming (``partial_fit``) against ``fit`` on 16 Newsgroups.

Protocol (document completion, fold-in variant):

* ``sklearn_clda.metrics.doc_completion_split(X, groups, test_size=0.1,
  random_state=0)`` holds out 10% of the documents and splits each one's
  tokens into an observed and a test half.
* ``fit``: the estimator on the training documents with ``max_iter=S``
  sweeps, for each ``S`` in ``--sweeps`` (``S * n_tokens`` token updates).
* online: a fresh estimator with the same priors, ``partial_fit`` once over
  the training documents in batches of ``--batch-size`` documents in their
  file order (news16's documents are already shuffled, so the four
  collections are mixed in every batch). The online method makes at most
  ``LOCAL_ITERATIONS`` (10) fold-in updates per token: fewer token updates
  than ``fit`` with ``S >= 10``.
* Both are scored by ``sklearn_clda.metrics.perplexity`` (each held-out
  document's topic proportions inferred from its observed half with the
  topics held fixed, its test half scored). For ``CompoundLDA`` the script
  also prints how far the online collection mixtures are from ``fit``'s
  (largest total-variation distance over the collections, topics matched
  by their word distributions), and, as the scale of that number, how far
  two fits with different seeds are from each other.

Memory: during the online pass ``tracemalloc`` records the memory held
after each batch (the model and everything the script keeps) and the peak
within the batch, and the model's pickle size; none of them may grow with
the number of batches.

Run: python benchmarks/bench_online.py [--k 20] [--sweeps 100 300 1000] [--models lda clda]
"""

import _common  # noqa: F401  (pins BLAS/OpenMP threads first)

import argparse  # noqa: E402
import pickle  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402
from _common import (  # noqa: E402
    environment_info,
    format_table,
    load_average,
    log,
    write_json,
)

from scipy.optimize import linear_sum_assignment  # noqa: E402

from sklearn_clda import CompoundLDA, LDAGibbs  # noqa: E402
from sklearn_clda._online import LOCAL_ITERATIONS  # noqa: E402
from sklearn_clda.datasets import load_news16  # noqa: E402
from sklearn_clda.metrics import doc_completion_split, perplexity  # noqa: E402

# Within this relative distance of fit's held-out perplexity (issue 12).
TOLERANCE = 0.05


def make_model(kind, K, sweeps, seed, n_jobs):
    common = dict(n_components=K, max_iter=sweeps, random_state=seed, n_jobs=n_jobs)
    if kind == "lda":
        return LDAGibbs(doc_topic_prior=0.1, topic_word_prior=0.01, **common)
    return CompoundLDA(eta=0.01, **common)


def group_kwargs(kind, groups):
    return {} if kind == "lda" else {"groups": groups}


def run_fit(kind, split, n_train, K, sweeps, seed, n_jobs):
    X = split.X_train[:n_train]
    model = make_model(kind, K, sweeps, seed, n_jobs)
    t0 = time.perf_counter()
    model.fit(X, **group_kwargs(kind, split.groups_train[:n_train]))
    seconds = time.perf_counter() - t0
    return model, seconds


def run_online(kind, split, n_train, K, seed, n_jobs, batch_size):
    """One pass of partial_fit; returns the model, seconds and per-batch rows."""
    X = split.X_train[:n_train]
    groups = split.groups_train[:n_train]
    model = make_model(kind, K, 1, seed, n_jobs)  # max_iter is not used by partial_fit
    rows, seconds = [], 0.0
    tracemalloc.start()
    for b, lo in enumerate(range(0, n_train, batch_size), start=1):
        hi = min(lo + batch_size, n_train)
        tracemalloc.reset_peak()
        t0 = time.perf_counter()
        model.partial_fit(X[lo:hi], **group_kwargs(kind, groups[lo:hi]))
        seconds += time.perf_counter() - t0
        current, peak = tracemalloc.get_traced_memory()
        rows.append(dict(
            batch=b, docs=hi - lo, tokens=int(X[lo:hi].sum()),
            held_mib=current / 2**20, peak_mib=peak / 2**20,
            pickle_bytes=len(pickle.dumps(model)),
            perplexity=heldout(model, kind, split),
        ))
        log(f"{kind} batch {b}: perplexity {rows[-1]['perplexity']:.1f}, "
            f"held {rows[-1]['held_mib']:.1f} MiB")
    tracemalloc.stop()
    return model, seconds, rows


def mixture_distance(online, fitted):
    """Largest TV distance between the two models' collection mixtures, the
    topics matched by the Hellinger distance of their word distributions."""
    a = np.sqrt(online.components_ / online.components_.sum(axis=1, keepdims=True))
    b = np.sqrt(fitted.components_ / fitted.components_.sum(axis=1, keepdims=True))
    cost = np.sqrt(np.maximum(1.0 - a @ b.T, 0.0))
    rows, cols = linear_sum_assignment(cost)
    pi_online = online.collection_topic_[:, rows]
    pi_fit = fitted.collection_topic_[:, cols]
    return float(0.5 * np.abs(pi_online - pi_fit).sum(axis=1).max())


def heldout(model, kind, split):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a collection absent from early batches
        return perplexity(model, split.X_observed, split.X_test,
                          **group_kwargs(kind, split.groups_heldout))


def compare(kind, split, args, seed):
    n_train = len(split.train_index)
    n_tokens = int(split.X_train[:n_train].sum())
    online, online_s, rows = run_online(kind, split, n_train, args.k, seed,
                                        args.n_jobs, args.batch_size)
    online_ppl = rows[-1]["perplexity"]
    fits = []
    for sweeps in args.sweeps:
        model, fit_s = run_fit(kind, split, n_train, args.k, sweeps, seed, args.n_jobs)
        ppl = heldout(model, kind, split)
        log(f"{kind} fit ({sweeps} sweeps): perplexity {ppl:.1f} in {fit_s:.1f} s")
        fits.append(dict(
            sweeps=sweeps, perplexity=ppl, seconds=fit_s, token_updates=sweeps * n_tokens,
            ratio=online_ppl / ppl,
            mixture_tv=mixture_distance(online, model) if kind == "clda" else None,
        ))
    result = dict(model=kind, seed=seed, online_perplexity=online_ppl,
                  online_seconds=online_s, online_token_updates=LOCAL_ITERATIONS * n_tokens,
                  fits=fits, batches=rows)
    return result, model


def print_results(results):
    table = []
    for r in results:
        table.append([r["model"], r["seed"], "online", f"<= {r['online_token_updates']:.2e}",
                      f"{r['online_perplexity']:.1f}", "", f"{r['online_seconds']:.1f}", ""])
        for f in r["fits"]:
            table.append([
                r["model"], r["seed"], f"fit {f['sweeps']}", f"{f['token_updates']:.2e}",
                f"{f['perplexity']:.1f}", f"{f['ratio']:.4f}", f"{f['seconds']:.1f}",
                "" if f["mixture_tv"] is None else f"{f['mixture_tv']:.3f}",
            ])
    print(format_table(
        ["model", "seed", "method", "token updates", "held-out ppl", "online / fit",
         "seconds", "pi TV"], table,
    ))
    for r in results:
        print(f"\n{r['model']} (seed {r['seed']}), one pass of partial_fit:")
        print(format_table(
            ["batch", "docs", "tokens", "held-out ppl", "held MiB", "peak MiB", "pickle B"],
            [[b["batch"], b["docs"], b["tokens"], f"{b['perplexity']:.1f}",
              f"{b['held_mib']:.2f}", f"{b['peak_mib']:.2f}", b["pickle_bytes"]]
             for b in r["batches"]],
        ))
        first, last = r["batches"][0], r["batches"][-1]
        print(f"memory after batch {last['batch']} / after batch 1: held "
              f"{last['held_mib'] / first['held_mib']:.3f}, peak "
              f"{last['peak_mib'] / first['peak_mib']:.3f}, pickle "
              f"{last['pickle_bytes'] / first['pickle_bytes']:.3f}")
    for sweeps in results[0]["fits"] and [f["sweeps"] for f in results[0]["fits"]]:
        ok = all(f["ratio"] <= 1 + TOLERANCE for r in results for f in r["fits"]
                 if f["sweeps"] == sweeps)
        print(f"online within {TOLERANCE:.0%} of fit with {sweeps} sweeps in every row: "
              f"{'yes' if ok else 'NO'}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=20)
    parser.add_argument("--sweeps", type=int, nargs="+", default=[100, 300, 1000],
                        help="sweeps of the fits to compare with")
    parser.add_argument("--batch-size", type=int, default=1000)
    parser.add_argument("--models", nargs="+", default=["lda", "clda"],
                        choices=["lda", "clda"])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--n-jobs", type=int, default=1)
    parser.add_argument("--json", help="also write every number to this file")
    args = parser.parse_args()

    news = load_news16()
    split = doc_completion_split(news.data, news.groups, test_size=0.1, random_state=0)
    log(f"news16: {len(split.train_index)} training documents, "
        f"{len(split.heldout_index)} held out; load {load_average()}")
    results, baselines = [], []
    for kind in args.models:
        last_fits = []
        for seed in args.seeds:
            result, last_fit = compare(kind, split, args, seed)
            results.append(result)
            last_fits.append((seed, last_fit))
        if kind == "clda":  # how far two fits' mixtures are from each other
            baselines += [(a, b, mixture_distance(ma, mb))
                          for (a, ma), (b, mb) in zip(last_fits, last_fits[1:])]
    print(f"K={args.k}; online: one pass in batches of {args.batch_size} documents; "
          f"load {load_average()}\n")
    print_results(results)
    for a, b, tv in baselines:
        print(f"pi TV between the fits ({args.sweeps[-1]} sweeps) of seeds {a} and {b}: {tv:.3f}")
    if args.json:
        write_json(args.json, dict(args=vars(args), env=environment_info(), results=results,
                               pi_tv_between_fits=baselines))


if __name__ == "__main__":
    main()

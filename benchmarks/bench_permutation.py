"""How often each way of calling a difference between two collections fires.

``--replications`` simulated corpora, each fitted by ``CompoundLDA`` and
tested by ``permutation_test`` (``--permutations`` shuffles), in two
settings:

- ``null``: one collection's documents (``make_compound_corpus`` with one
  collection) split at random into two labels, so no difference is real;
- ``real``: two simulated collections (their own ``pi``), so most are.

For each setting it prints the share of replications in which some topic
is called different (family-wise) and the share of topics called
different, by three rules: the model's 90% posterior interval leaves out
zero (``compare_collections``), the permutation test's
``p_value_adjusted`` is at most 0.05, and its per-topic ``p_value`` is at
most 0.05. Under ``null`` a calibrated rule fires at most 5% of the time
(the family-wise one per replication, the per-topic one per topic).

``--news16`` adds the guide's run: news16, ``CompoundLDA(20, eta=0.01,
max_iter=400, thin=2)``, politics against sci.

Run: python benchmarks/bench_permutation.py [--replications 60] [--news16]
"""

import _common  # noqa: F401  (pins BLAS/OpenMP threads first)

import argparse  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402
from _common import environment_info, format_table, log  # noqa: E402

RULES = ("interval", "p_value_adjusted", "p_value")


def _called(table, level=0.05):
    """``{rule: bool per topic}``: the topics each rule calls different."""
    return {
        "interval": ((table["lower"] > 0) | (table["upper"] < 0)).to_numpy(),
        "p_value_adjusted": (table["p_value_adjusted"] <= level).to_numpy(),
        "p_value": (table["p_value"] <= level).to_numpy(),
    }


def _replication(setting, rep, args):
    """One simulated corpus fitted and tested: ``{rule: bool per topic}``."""
    from sklearn_clda import CompoundLDA
    from sklearn_clda.datasets import make_compound_corpus
    from sklearn_clda.inspection import permutation_test

    n_collections = 1 if setting == "null" else 2
    corpus = make_compound_corpus(
        n_topics=args.topics, n_features=40, n_collections=n_collections,
        docs_per_collection=args.docs // n_collections, doc_length=args.doc_length,
        random_state=1000 + rep)
    labels = (np.random.default_rng(rep).permutation(np.repeat(["x", "y"], args.docs // 2))
              if setting == "null" else np.array(["x", "y"])[corpus.groups])
    model = CompoundLDA(n_components=args.topics, max_iter=args.sweeps, thin=2,
                        random_state=rep).fit(corpus.data, groups=labels)
    result = permutation_test(model, corpus.data, labels, "x", "y",
                              n_permutations=args.permutations, random_state=rep)
    return _called(result.table)


def _rates(setting, args):
    """The table row of one setting: family-wise and per-topic rates."""
    start = time.perf_counter()
    calls = [_replication(setting, rep, args) for rep in range(args.replications)]
    row = [setting]
    for rule in RULES:
        per_replication = np.array([c[rule].any() for c in calls])
        per_topic = np.concatenate([c[rule] for c in calls])
        row += [f"{per_replication.mean():.3f}", f"{per_topic.mean():.3f}"]
    log(f"{setting}: {args.replications} replications in {time.perf_counter() - start:.0f} s")
    return row


def _news16(args):
    from sklearn_clda import CompoundLDA
    from sklearn_clda.datasets import load_news16
    from sklearn_clda.inspection import permutation_test

    news = load_news16()
    model = CompoundLDA(n_components=20, eta=0.01, max_iter=400, thin=2, random_state=0)
    start = time.perf_counter()
    model.fit(news.data, groups=news.groups)
    fit_s = time.perf_counter() - start
    result = permutation_test(model, news.data, news.groups, "politics", "sci",
                              n_permutations=19, n_jobs=args.n_jobs, random_state=0)
    test_s = time.perf_counter() - start - fit_s
    called = _called(result.table)
    print(f"\nnews16, politics against sci (fit {fit_s:.1f} s, 19 shuffles {test_s:.1f} s, "
          f"n_jobs={args.n_jobs}): topics called different by the interval "
          f"{called['interval'].sum()}, by p_value_adjusted {called['p_value_adjusted'].sum()}, "
          f"by p_value {called['p_value'].sum()} of 20; shuffled fits' largest differences "
          f"{result.null_max.min():.4f} to {result.null_max.max():.4f}")
    print(result.table.round(4).to_string(index=False))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--replications", type=int, default=60)
    parser.add_argument("--permutations", type=int, default=19)
    parser.add_argument("--topics", type=int, default=4)
    parser.add_argument("--docs", type=int, default=80, help="documents per corpus (even)")
    parser.add_argument("--doc-length", type=int, default=40)
    parser.add_argument("--sweeps", type=int, default=60)
    parser.add_argument("--news16", action="store_true")
    parser.add_argument("--n-jobs", type=int, default=2, help="for --news16")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    log(f"environment: {environment_info()}")
    rows = [_rates(setting, args) for setting in ("null", "real")]
    headers = ["setting"] + [f"{rule} {what}" for rule in RULES
                             for what in ("any", "topics")]
    print(format_table(headers, rows))
    if args.news16:
        _news16(args)


if __name__ == "__main__":
    main()

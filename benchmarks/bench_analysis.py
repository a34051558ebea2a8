"""What the analysis after a fit costs as the number of collections grows.

A corpus of ``--docs-per-collection`` documents per collection
(``--doc-length`` tokens each, ``--features`` words, simulated by
``make_compound_corpus``) is fitted by ``CompoundLDA`` (the default sampler,
``--sweeps`` sweeps) for each count in ``--collections``; then each step
below is timed once, in the same process (wall seconds):

- ``vem``: a VEM fit of ``--vem-iter`` iterations (its M-step updates
  every collection's mixture);
- ``words``: ``topic_words_by_collection`` over every topic;
- ``summary``: ``collection_topic_summary`` (every collection and topic);
- ``heatmap``: ``CollectionTopicDisplay.from_estimator(kind="heatmap")``
  drawn (40 collections past 40, with its warning);
- ``report``: ``write_report`` with its figures.

Run: python benchmarks/bench_analysis.py [--collections 1000 5000] [--json out.json]
"""

import _common  # noqa: F401  (pins BLAS/OpenMP threads first)

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402
from _common import environment_info, format_table, load_average, log  # noqa: E402

STEPS = ("vem", "words", "summary", "heatmap", "report")


def _steps(model, X, groups, args):
    """``{step: callable}``, each one step of the analysis of ``model``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from sklearn_clda import CompoundLDA
    from sklearn_clda.inspection import collection_topic_summary, topic_words_by_collection
    from sklearn_clda.plotting import CollectionTopicDisplay
    from sklearn_clda.report import write_report

    names = np.array([f"w{i}" for i in range(X.shape[1])])

    def heatmap():
        CollectionTopicDisplay.from_estimator(model, kind="heatmap").figure_.canvas.draw()
        plt.close("all")

    def report():
        with tempfile.TemporaryDirectory() as folder:
            write_report(model, X, names, f"{folder}/report", groups=groups)

    return {
        "vem": lambda: CompoundLDA(args.topics, algorithm="vem", max_iter=args.vem_iter,
                                   random_state=0).fit(X, groups=groups),
        "words": lambda: topic_words_by_collection(model, X, groups),
        "summary": lambda: collection_topic_summary(model),
        "heatmap": heatmap,
        "report": report,
    }


def analysis_row(n_collections, args):
    from sklearn_clda import CompoundLDA
    from sklearn_clda.datasets import make_compound_corpus

    corpus = make_compound_corpus(
        n_topics=args.topics, n_features=args.features, n_collections=n_collections,
        docs_per_collection=args.docs_per_collection, doc_length=args.doc_length,
        random_state=0)
    X, groups = corpus.data, corpus.groups
    sweeps = args.sweeps
    model = CompoundLDA(args.topics, max_iter=sweeps, burn_in=sweeps // 2,
                        thin=max(1, sweeps // 12), random_state=0)
    start = time.perf_counter()
    model.fit(X, groups=groups)
    row = {"collections": n_collections, "documents": X.shape[0],
           "fit": time.perf_counter() - start}
    for step, run in _steps(model, X, groups, args).items():
        if step in args.skip:
            continue
        log(f"{n_collections} collections: {step}")
        start = time.perf_counter()
        run()
        row[step] = time.perf_counter() - start
    return row


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--collections", type=int, nargs="+", default=[100, 1000, 5000])
    p.add_argument("--docs-per-collection", type=int, default=4)
    p.add_argument("--doc-length", type=int, default=60)
    p.add_argument("--features", type=int, default=5000)
    p.add_argument("--topics", type=int, default=20)
    p.add_argument("--sweeps", type=int, default=60)
    p.add_argument("--vem-iter", type=int, default=10)
    p.add_argument("--skip", nargs="*", default=[], choices=STEPS)
    p.add_argument("--json", default=None, help="write the results to this file")
    args = p.parse_args(argv)
    print(json.dumps(environment_info()))
    warnings.simplefilter("ignore")  # (many collections: the fit and displays say so)
    records = [analysis_row(n, args) for n in args.collections]
    steps = ["fit", *(s for s in STEPS if s not in args.skip)]
    print(format_table(["collections", "documents", *(f"{s} s" for s in steps)],
                       [[r["collections"], r["documents"], *(f"{r[s]:.2f}" for s in steps)]
                        for r in records], align="r" * (2 + len(steps))))
    print(f"(K = {args.topics}, {args.features} words, {args.docs_per_collection} documents "
          f"of {args.doc_length} tokens a collection; fit: {args.sweeps} sweeps; vem: "
          f"{args.vem_iter} iterations; load {load_average()})")
    if args.json:
        _common.write_json(args.json, dict(args=vars(args), rows=records))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Inference latency: ``transform`` on one document up to a thousand, against
scikit-learn's ``LatentDirichletAllocation`` and gensim's ``LdaModel``.

A fitted topic model is often used to score documents as they come (a
request, a batch of new posts), so what a call on a few documents costs
matters as much as a pass over a corpus.

Protocol:

* news16, its documents split 90 / 10 at random (seed 0); every model is
  fitted on the 90% with alpha = 0.1 and eta = 0.01 (``CompoundLDA``: its
  defaults for the collection prior, eta = 0.01, the documents' newsgroups
  as ``groups``): ``LDAGibbs`` and ``CompoundLDA`` with ``--sweeps``
  sweeps, scikit-learn's batch variational Bayes with ``--vb-iter``
  iterations, gensim with ``--vb-iter`` passes. One thread for all
  (``n_jobs=1``; BLAS and OpenMP pinned to one thread).
* For each batch size ``B`` in ``--batch-sizes``, each model infers the
  topic proportions of ``--calls`` consecutive batches of ``B`` held-out
  documents (the held-out documents reused cyclically, one warm-up call
  first): median wall seconds per call, and documents per second. Each
  library runs at its default stopping rule (ours: at most 100 updates, a
  mean change below 1e-5; scikit-learn: 100, 1e-3 on the unnormalized
  proportions; gensim: 50, 1e-3). The documents are given in each
  library's own form, made before the clock starts (a CSR matrix; gensim's
  lists of ``(word, count)`` pairs).
* So that a faster answer is not a looser one, each model's proportions for
  all held-out documents are also compared with its own converged fixed
  point (1000 updates, tolerance 1e-12): the largest absolute difference
  in any proportion ("error").

Run: python benchmarks/bench_inference.py [--k 20 100] [--batch-sizes 1 10 100 1000]
"""

import _common  # noqa: F401  (pins BLAS/OpenMP threads first)

import argparse  # noqa: E402
import logging  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
from _common import (  # noqa: E402
    environment_info,
    format_table,
    load_average,
    load_news16,
    log,
    write_json,
)
from sklearn.decomposition import LatentDirichletAllocation  # noqa: E402

from sklearn_clda import CompoundLDA, LDAGibbs  # noqa: E402

ALPHA, ETA = 0.1, 0.01
CONVERGED = dict(max_iter=1000, tol=1e-12)


class _Estimator:
    """A scikit-learn-style model: ``transform``, and the stopping rule in
    ``max_doc_update_iter`` and ``mean_change_tol``."""

    def infer(self, batch):
        raise NotImplementedError

    def converged(self, batch):
        saved = self.model.get_params()
        self.model.set_params(max_doc_update_iter=CONVERGED["max_iter"],
                              mean_change_tol=CONVERGED["tol"])
        try:
            return self.infer(batch)
        finally:
            self.model.set_params(**saved)


class Ours(_Estimator):
    """``LDAGibbs``, or ``CompoundLDA`` with every document's collection in
    ``groups``."""

    def __init__(self, name, model, groups=None):
        self.name, self.model, self.groups = name, model, groups

    def batch(self, X, rows):
        return (X[rows], None if self.groups is None else self.groups[rows])

    def infer(self, batch):
        X, groups = batch
        return self.model.transform(X, **({} if groups is None else {"groups": groups}))


class Sklearn(_Estimator):
    name = "scikit-learn LDA"

    def __init__(self, model):
        self.model = model

    def batch(self, X, rows):
        return X[rows]

    def infer(self, batch):
        return self.model.transform(batch)


class Gensim:
    name = "gensim LdaModel"

    def __init__(self, model):
        self.model = model

    def batch(self, X, rows):
        X = X[rows]
        return [list(zip(X.indices[X.indptr[i]:X.indptr[i + 1]].tolist(),
                         X.data[X.indptr[i]:X.indptr[i + 1]].tolist()))
                for i in range(X.shape[0])]

    def infer(self, batch):
        gamma, _ = self.model.inference(batch)
        return gamma / gamma.sum(axis=1, keepdims=True)

    def converged(self, batch):
        saved = self.model.iterations, self.model.gamma_threshold
        self.model.iterations, self.model.gamma_threshold = (CONVERGED["max_iter"],
                                                             CONVERGED["tol"])
        try:
            return self.infer(batch)
        finally:
            self.model.iterations, self.model.gamma_threshold = saved


def fit_models(news, train, K, args):
    """Every library's model fitted on the ``train`` documents."""
    X, groups = news.X[train], news.groups[train]
    common = dict(n_components=K, max_iter=args.sweeps, random_state=0, n_jobs=1)
    models = [
        Ours("LDAGibbs", LDAGibbs(doc_topic_prior=ALPHA, topic_word_prior=ETA, **common).fit(X)),
        Ours("CompoundLDA", CompoundLDA(eta=ETA, **common).fit(X, groups=groups), news.groups),
        Sklearn(LatentDirichletAllocation(
            n_components=K, doc_topic_prior=ALPHA, topic_word_prior=ETA,
            learning_method="batch", max_iter=args.vb_iter, random_state=0).fit(X)),
    ]
    try:
        from gensim.matutils import Sparse2Corpus
        from gensim.models import LdaModel
    except ImportError:
        log("gensim is not installed: its rows are left out")
        return models
    logging.getLogger("gensim").setLevel(logging.WARNING)
    models.append(Gensim(LdaModel(
        corpus=list(Sparse2Corpus(X, documents_columns=False)), num_topics=K,
        alpha=np.full(K, ALPHA), eta=ETA, passes=args.vb_iter, chunksize=2000,
        random_state=0, eval_every=None)))
    return models


def time_calls(lib, X_all, held, batch_size, n_calls):
    """Median wall seconds of ``n_calls`` calls on consecutive batches."""
    order = np.resize(held, batch_size * (n_calls + 1))
    batches = [lib.batch(X_all, order[i * batch_size:(i + 1) * batch_size])
               for i in range(n_calls + 1)]
    lib.infer(batches[0])  # warm-up
    seconds = []
    for batch in batches[1:]:
        t0 = time.perf_counter()
        lib.infer(batch)
        seconds.append(time.perf_counter() - t0)
    return float(np.median(seconds))


def measure(lib, X_all, held, K, args):
    everything = lib.batch(X_all, held)
    error = float(np.abs(np.asarray(lib.infer(everything), dtype=np.float64)
                         - np.asarray(lib.converged(everything), dtype=np.float64)).max())
    rows = []
    for B in args.batch_sizes:
        calls = max(3, min(args.calls, 10 * args.calls // B))
        s = time_calls(lib, X_all, held, B, calls)
        rows.append(dict(K=K, library=lib.name, batch=B, calls=calls, ms_per_call=1e3 * s,
                         docs_per_s=B / s, error=error))
        log(f"K={K} {lib.name} B={B}: {1e3 * s:.2f} ms a call")
    return rows


def print_results(rows):
    base = {(r["K"], r["batch"]): r["ms_per_call"] for r in rows
            if r["library"] == Sklearn.name}
    table = [[r["K"], r["batch"], r["library"], f"{r['ms_per_call']:.2f}",
              f"{r['docs_per_s']:.0f}", f"{base[r['K'], r['batch']] / r['ms_per_call']:.2f}x",
              f"{r['error']:.1e}"] for r in rows]
    print(format_table(["K", "docs a call", "library", "ms a call", "docs/s",
                        "vs scikit-learn", "error"], table, align="rrlrrrr"))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, nargs="+", default=[20, 100])
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[1, 10, 100, 1000])
    parser.add_argument("--calls", type=int, default=50,
                        help="calls timed at one document (fewer for larger batches)")
    parser.add_argument("--sweeps", type=int, default=200)
    parser.add_argument("--vb-iter", type=int, default=10)
    parser.add_argument("--json", help="also write every number to this file")
    args = parser.parse_args()

    news = load_news16()
    rng = np.random.default_rng(0)
    perm = rng.permutation(news.X.shape[0])
    n_held = news.X.shape[0] // 10
    held, train = np.sort(perm[:n_held]), np.sort(perm[n_held:])
    log(f"news16: {len(train)} training documents, {n_held} held out; load {load_average()}")
    rows = []
    for K in args.k:
        for lib in fit_models(news, train, K, args):
            rows.extend(measure(lib, news.X, held, K, args))
    print_results(rows)
    print(f"load average at the end: {load_average()}")
    if args.json:
        write_json(args.json, dict(args=vars(args), environment=environment_info(), rows=rows))


if __name__ == "__main__":
    main()

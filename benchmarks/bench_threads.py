"""Thread scaling: tokens/s of ``n_jobs`` = 1, 2, 4, ... against tomotopy's ``workers``.

For each corpus (news16, 0.78M tokens; a synthetic ``make_compound_corpus``
of ``--tokens`` tokens, V=20,000, 8 collections) and each worker count
``w`` in 1, 2, 4, ... up to ``os.cpu_count()`` (and the count itself):

- LDAGibbs(n_jobs=w) and CompoundLDA(n_jobs=w) (AGS, with its Antoniak and
  pi steps): median tokens/s per sweep from ``sweep_times_`` over
  ``--sweeps`` sweeps that continue (``warm_start``) a chain warmed up
  for ``--warmup`` sweeps, after one untimed sweep;
- tomotopy ``LDAModel`` trained with ``workers=w`` under each of its
  parallel schemes (``COPY_MERGE`` and ``PARTITION``; the faster is
  reported and named): median tokens/s over ``--sweeps`` ``train(1)``
  calls (after an untimed one) on a copy of a model warmed up the same
  way, with fixed hyperparameters (``optim_interval = 0``).

Every library's warm-up runs once per round on all ``--max-workers``
workers, and each worker count times a copy of that warm state: a sweep's
cost depends on the state (early sweeps move more tokens), and a long fit
spends nearly all its sweeps far from its random start, so the timed
sweeps should be too; warming up on all cores makes 50 warm-up sweeps
affordable at 10M tokens.

tomotopy runs at its best build: every build of its wheel that loads on
this machine (``TOMOTOPY_ISA`` = avx512, avx2, sse2, none; ``_isa``) is
timed on news16 with one worker in a fresh process, and the fastest is
used for the whole table (pass ``--tomotopy-isa`` to skip the probe). The
libraries are timed in turn, ``--rounds`` times, and the medians
reported.

The table gives tokens/s, the speed-up over one worker, and our ratio to
tomotopy at the same worker count. A last table compares held-out
perplexity (document completion, averaged estimates) of ``n_jobs`` = max
against ``n_jobs=1`` on news16 after ``--quality-sweeps`` sweeps.

The numbers only mean something on a machine with many cores; on two, the
script still runs and prints what it can.

``--sampler`` (with ``-K``) times our MH samplers' ``n_jobs`` instead of
the dense kernel's (``auto`` picks the dense one at K = 100).

Run: python benchmarks/bench_threads.py [--tokens 10000000] [--max-workers N]
[-K 1000 --sampler sparse]
"""

import _common  # noqa: F401  (pins BLAS/OpenMP threads first)

import argparse  # noqa: E402
import copy  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402

import _isa  # noqa: E402

from _common import (  # noqa: E402
    document_completion_split,
    environment_info,
    format_table,
    load_average,
    load_news16,
    log,
    synthetic_corpus,
    perplexity_from_estimates,
)


def worker_counts(max_workers):
    counts, w = [], 1
    while w < max_workers:
        counts.append(w)
        w *= 2
    return counts + [max_workers]


def _fit_kwargs(corpus, cls):
    return {"groups": corpus.groups} if cls == "CompoundLDA" else {}


def warm_ours(corpus, cls, workers, K, warmup, sampler="auto"):
    """A chain of ``warmup`` sweeps on ``workers`` threads, kept for
    continuation (``warm_start``); every later sweep is a kept sample, as in
    a long fit past burn-in. ``sampler``: the estimators' parameter."""
    from sklearn_clda import CompoundLDA, LDAGibbs

    kw = dict(n_components=K, max_iter=warmup, burn_in=warmup - 1, n_jobs=workers,
              random_state=0, warm_start=True, sampler=sampler)
    if cls == "CompoundLDA":
        est = CompoundLDA(gamma=10.0, **kw)
    else:
        est = LDAGibbs(doc_topic_prior=0.1, topic_word_prior=0.01, **kw)
    return est.fit(corpus.X, **_fit_kwargs(corpus, cls))


def ours_rate(corpus, cls, warm, w, sweeps):
    """Median tokens/s of ``sweeps`` more sweeps of the warm chain with n_jobs=w
    (after one untimed sweep that starts the threads and touches the new
    tables)."""
    est = copy.deepcopy(warm).set_params(n_jobs=w, max_iter=sweeps + 1)
    est.fit(corpus.X, **_fit_kwargs(corpus, cls))
    return est.n_tokens_ / float(np.median(est.sweep_times_[-sweeps:]))


def tomotopy_model(corpus, K):
    import tomotopy as tp

    model = tp.LDAModel(k=K, alpha=0.1, eta=0.01, seed=0)
    model.optim_interval = 0
    X = corpus.X
    words = np.repeat(corpus.feature_names[X.indices], X.data)
    ends = np.cumsum(np.add.reduceat(X.data, X.indptr[:-1]))
    for toks in np.split(words, ends[:-1]):
        model.add_doc(toks.tolist())
    # tomotopy warns that workers > 1 are not reproducible; we know.
    warnings.filterwarnings("ignore", category=RuntimeWarning, module="tomotopy")
    return model


def tomotopy_rate(model, w, sweeps, scheme):
    """Median tokens/s of ``sweeps`` more ``train(1, workers=w)`` calls on a
    copy of ``model`` (trained or not), after one untimed call."""
    import tomotopy as tp

    model = model.copy()
    parallel = getattr(tp.ParallelScheme, scheme)
    model.train(1, workers=w, parallel=parallel)
    times = []
    for _ in range(sweeps):
        t0 = time.perf_counter()
        model.train(1, workers=w, parallel=parallel)
        times.append(time.perf_counter() - t0)
    return model.num_words / float(np.median(times))


def probe_rate(K, warmup, sweeps):
    """Tokens/s of the tomotopy build loaded in this process on news16, one
    worker, after ``warmup`` sweeps (the probe's child runs this)."""
    model = tomotopy_model(load_news16(), K)
    model.train(warmup)
    return tomotopy_rate(model, 1, sweeps, "DEFAULT")


def best_isa(K, warmup, sweeps):
    """The fastest of tomotopy's builds that load on this machine, each timed
    in a fresh process (the build is chosen when tomotopy is imported; a
    build the CPU lacks, such as avx512 on most AMD processors, is skipped)."""
    rates = {}
    for isa in _isa.available_isas():
        rates[isa] = _isa.call_with_isa(isa, "bench_threads", "probe_rate", K, warmup, sweeps)
        log(f"tomotopy {isa}: {rates[isa] / 1e6:.2f}M tokens/s (news16, K={K}, 1 worker)")
    return max(rates, key=rates.get), rates


def scaling_rows(corpus, counts, args):
    """{(library, w): median tokens/s over rounds} and tomotopy's best scheme.

    Each round warms each library's chain up once on all ``counts[-1]``
    workers, then times ``--sweeps`` more sweeps of a copy of that state at
    every worker count (the state's speed, not the threads', is what the
    warm-up changes, and one warm-up on all cores is cheaper than one per
    count).
    """
    rates, schemes = {}, {}
    top = counts[-1]
    for r in range(args.rounds):
        warm = {cls: warm_ours(corpus, cls, top, args.K, args.warmup, args.sampler)
                for cls in ("LDAGibbs", "CompoundLDA")}
        tp_model = tomotopy_model(corpus, args.K)
        tp_model.train(args.warmup, workers=top)
        log(f"round {r + 1}: warm-up of {args.warmup} sweeps on {top} workers done")
        for w in counts:
            for cls in ("LDAGibbs", "CompoundLDA"):
                rates.setdefault((cls, w), []).append(
                    ours_rate(corpus, cls, warm[cls], w, args.sweeps))
            for scheme in ("COPY_MERGE", "PARTITION") if w > 1 else ("DEFAULT",):
                rates.setdefault((scheme, w), []).append(
                    tomotopy_rate(tp_model, w, args.sweeps, scheme))
            log(f"round {r + 1}, {w} workers done (load {load_average()})")
    med = {key: float(np.median(v)) for key, v in rates.items()}
    for w in counts:
        options = {s: med[(s, w)] for s in ("DEFAULT", "COPY_MERGE", "PARTITION")
                   if (s, w) in med}
        schemes[w] = max(options, key=options.get)
        med[("tomotopy", w)] = options[schemes[w]]
    return med, schemes


def scaling_table(name, med, schemes, counts):
    rows = []
    for lib in ("LDAGibbs", "CompoundLDA", "tomotopy"):
        for w in counts:
            rate = med[(lib, w)]
            ratio = rate / med[("tomotopy", w)]
            note = schemes[w] if lib == "tomotopy" else ""
            rows.append([name if not rows else "", lib, w, f"{rate / 1e6:.1f}M",
                         f"{rate / med[(lib, 1)]:.2f}x", f"{ratio:.2f}x", note])
    return format_table(["corpus", "library", "workers", "tokens/s", "vs 1 worker",
                         "vs tomotopy", "tomotopy scheme"], rows, "llrrrrl")


def quality_table(corpus, counts, args):
    """Held-out perplexity of n_jobs = 1 and max, LDAGibbs and CompoundLDA."""
    from sklearn_clda import CompoundLDA, LDAGibbs

    split = document_completion_split(corpus, seed=0)
    rows = []
    for cls in (LDAGibbs, CompoundLDA):
        values = {}
        for w in (1, counts[-1]):
            kw = dict(n_components=args.K, max_iter=args.quality_sweeps,
                      burn_in=args.quality_sweeps // 2, n_jobs=w, random_state=0)
            if cls is CompoundLDA:
                est = cls(gamma=10.0, **kw).fit(split.X_train_full, groups=split.groups)
            else:
                est = cls(doc_topic_prior=0.1, topic_word_prior=0.01, **kw)
                est.fit(split.X_train_full)
            theta = est.doc_topic_[split.heldout_idx]
            phi = est.components_ / est.components_.sum(axis=1, keepdims=True)
            values[w] = perplexity_from_estimates(theta, phi, split.X_test)
        rows.append([cls.__name__, f"{values[1]:.1f}", f"{values[counts[-1]]:.1f}",
                     f"{100 * (values[counts[-1]] / values[1] - 1):+.2f}%"])
    return format_table(["estimator", "n_jobs=1", f"n_jobs={counts[-1]}", "change"],
                        rows, "lrrr")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tokens", type=int, default=10_000_000,
                   help="tokens of the synthetic corpus (0: news16 only)")
    p.add_argument("--max-workers", type=int, default=os.cpu_count())
    p.add_argument("-K", type=int, default=100)
    p.add_argument("--sampler", default="auto", choices=["auto", "dense", "sparse", "mh"],
                   help="our estimators' sampler (e.g. -K 1000 --sampler sparse for the "
                        "MH samplers' n_jobs)")
    p.add_argument("--warmup", type=int, default=50, help="at least 1")
    p.add_argument("--sweeps", type=int, default=10)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--quality-sweeps", type=int, default=300,
                   help="sweeps of the perplexity table's fits (0: no such table)")
    p.add_argument("--tomotopy-isa", choices=_isa.ISAS, default=None,
                   help="skip the probe and use this build")
    p.add_argument("--json", default=None)
    args = p.parse_args(argv)

    counts = worker_counts(args.max_workers)
    if args.tomotopy_isa is None:
        isa, isa_rates = best_isa(args.K, 20, 5)
    else:
        isa, isa_rates = args.tomotopy_isa, {}
    if "tomotopy" in sys.modules:
        raise RuntimeError("tomotopy was imported before its build was chosen")
    os.environ["TOMOTOPY_ISA"] = isa  # read when tomotopy is first imported
    import tomotopy as tp

    env = environment_info()
    print(f"# machine: {env['processor'] or env['machine']}, {env['cpu_count']} CPUs; "
          f"load {load_average()}")

    print(f"# K={args.K}; our sampler: {args.sampler}")
    print(f"# tomotopy {tp.__version__}, build {tp.isa} (probe: "
          + ", ".join(f"{k} {v / 1e6:.2f}M" for k, v in isa_rates.items()) + ")")
    corpora = [("news16", load_news16())]
    if args.tokens:
        corpora.append((f"synthetic {args.tokens / 1e6:g}M", synthetic_corpus(args.tokens)))
    results = {}
    for name, corpus in corpora:
        log(f"{name}: {corpus.X.shape[0]} docs, {int(corpus.X.sum())} tokens")
        med, schemes = scaling_rows(corpus, counts, args)
        print(scaling_table(name, med, schemes, counts), flush=True)
        print()
        results[name] = {f"{k[0]}@{k[1]}": v for k, v in med.items()}
    if args.quality_sweeps:
        print(quality_table(corpora[0][1], counts, args))
    if args.json:
        _common.write_json(args.json, dict(env=env, isa=isa, results=results))


if __name__ == "__main__":
    main()

"""Large K: the MH samplers (``sampler="mh"`` and ``"sparse"``) against the dense kernel.

All runs are in one process, one thread each, on news16 or (``--corpus
synthetic``) a ``make_compound_corpus`` corpus of ``--tokens`` tokens
(V = 20,000, 8 collections, documents of 200 tokens; parts 1, 3 and 4):

1. speed: seconds per sweep (median of the timed sweeps in ``sweep_times_``,
   after warm-up sweeps) divided by the training tokens, in ns/token, of
   ``LDAGibbs`` with the dense kernel and with each of ``--samplers``
   (default: ``mh`` and ``sparse``) at each ``--mh-steps``,
   at each K of ``--speed-k``; the fits alternate (dense, MH, dense, ...)
   so that load changes hit both; tomotopy's ``LDAModel`` (same priors,
   ``train`` per iteration) when it is installed, under each of its
   instruction-set builds that loads here (``--tomotopy-isa``; each in a
   fresh process), the ratios against the fastest;
2. quality at equal time, at K = ``--quality-k``: on a document-completion
   split (20% of the documents keep half their tokens for testing), the
   held-out perplexity (``sklearn_clda.metrics.perplexity_from_estimates``
   with each chain's last state) after n sweeps, for n on a 1-2-5 ladder up
   to ``--dense-sweeps`` (dense) and up to ``--mh-factor`` times that (the
   ``--samplers``);
   fits with the same seed and more sweeps continue the same chain, so the
   ladder is one chain per sampler. Reported: the sampler seconds (sum of
   ``sweep_times_``, or with ``--clock cpu`` the fit's process CPU
   seconds) at which each sampler first reaches the dense chain's final
   perplexity, and their ratio;
3. auto: the kernel ``sampler="auto"`` picks at several K on news16's
   document lengths, and the sweep time of auto against dense at K = 100
   (the same kernel: ratio ~1);
4. kernels: the dense, sparse and MH kernels called directly on the same
   start, interleaved sweep by sweep after a burn-in, process CPU time
   (robust to a busy machine): the crossovers behind ``"auto"``, at each K
   of ``--kernel-k``. ``--kernels`` may also name the dense kernel's
   instruction-set variants, ``dense-avx2`` and ``dense-portable`` (the
   table names the variant each one ran), and ``sparse-table``, the
   sparse kernel reading and updating a word-topic table (the estimators
   run it without one, counting each word's topics from its tokens: the
   same chain). With ``--baseline DIR`` (a source tree built in place,
   e.g. ``git worktree add DIR REV`` then ``python setup.py build_ext
   --inplace`` there), ``sparse@base`` and ``mh@base`` name that tree's
   kernels, loaded beside this checkout's (the rest of the package is
   this checkout's), and a column gives each kernel's time against the
   first one listed: an A/B of two builds on the same start.
5. memory: the peak resident memory (``ru_maxrss``) of a fresh process
   that loads news16 and fits ``LDAGibbs`` and ``CompoundLDA`` with each
   sampler of ``--memory-samplers`` (default ``mh,sparse``; the sparse one
   keeps no word-topic table) at K = ``--memory-k`` (``--memory-sweeps`` sweeps,
   default averaging: two kept states), next to the sizes of the tables
   it holds and the issue's 2 GB target.
6. fits: whole fits as a user runs them, ``LDAGibbs`` and ``CompoundLDA``
   (the corpus's collections as ``groups``) with their default priors,
   ``sampler="auto"`` and averaging (``--fits-sweeps`` sweeps, the second
   half kept every 10th), at each K of ``--fits-k``: ns/token of a sweep
   (median of ``sweep_times_``, which include CompoundLDA's table draws
   and prior updates), the fit's seconds and the part of them outside the
   sweeps (setup, kept samples, last-state perplexity, the averages),
   and the seconds of the fitted model's ``transform`` and ``score`` on
   the first 1000 documents; against tomotopy's ``DMRModel`` (collection
   as metadata, its defaults but the priors of part 1), seconds per
   ``train(1)``.

    python benchmarks/bench_large_k.py              # K=1000 and 10000, 1000 dense sweeps
    python benchmarks/bench_large_k.py --quick      # fewer sweeps (minutes)
    python benchmarks/bench_large_k.py --corpus synthetic --skip speed,auto \
        --kernel-k 1000 --warm 5                    # the 10M-token corpus, part 4
"""

import argparse
import os
import statistics
import sys
import time

import _common as C  # first: pins BLAS/OpenMP to one thread

import numpy as np  # noqa: E402

# This checkout's package first (an installed one may shadow it otherwise).
sys.path.insert(0, C.REPO_ROOT)

ALPHA, ETA = 0.1, 0.01


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true",
                   help="100 dense sweeps in part 2, fewer timed sweeps in part 1")
    p.add_argument("--speed-k", default="1000,10000", help="comma list of K for part 1")
    p.add_argument("--quality-k", type=int, default=1000)
    p.add_argument("--seed", type=int, default=0, help="random_state of part 2's chains")
    p.add_argument("--dense-sweeps", type=int, default=None,
                   help="dense chain length of part 2 (default 1000, --quick 100)")
    p.add_argument("--mh-factor", type=float, default=4.0,
                   help="MH chains run up to this many times the dense sweeps")
    p.add_argument("--mh-steps", default="2,4", help="comma list of mh_steps")
    p.add_argument("--samplers", default="mh,sparse",
                   help="comma list of the non-dense samplers to run (mh, sparse)")
    p.add_argument("--target", type=float, default=None,
                   help="part 2 without the dense chain: MH chains run until this perplexity "
                        "(e.g. a dense result of an earlier run)")
    p.add_argument("--warm", type=int, default=None,
                   help="untimed sweeps before the timed ones in part 1 (default 3, --quick 1; "
                        "the sparse sampler's cost falls as documents settle on fewer topics)")
    p.add_argument("--rounds", type=int, default=None,
                   help="alternating rounds of part 1 (default 3, --quick 1)")
    p.add_argument("--no-tomotopy", action="store_true")
    p.add_argument("--tomotopy-isa", default="all",
                   help="tomotopy builds timed in part 1: all (every build that loads here; "
                        "ratios against the fastest), auto (its own choice) or a comma list")
    p.add_argument("--corpus", choices=("news16", "synthetic"), default="news16",
                   help="corpus of parts 1, 3 and 4; parts 2, 5 and 6 are news16's only "
                        "(skipped with synthetic)")
    p.add_argument("--tokens", type=int, default=10_000_000,
                   help="tokens of the synthetic corpus (V=20,000, 8 collections)")
    p.add_argument("--kernels", default="dense,sparse,mh",
                   help="comma list of the kernels of part 4: dense, "
                        "dense-avx2, dense-portable, sparse, mh (drop dense at K=10,000 on "
                        "a big corpus: seconds per sweep)")
    p.add_argument("--kernel-sweeps", type=int, default=5,
                   help="timed sweeps of each kernel in part 4 (the median is reported)")
    p.add_argument("--baseline", default=None, metavar="DIR",
                   help="a source tree built in place whose MH kernels part 4 runs "
                        "as sparse@base and mh@base")
    p.add_argument("--kernel-k", default="300,1000",
                   help="comma list of K for part 4 (the kernels called directly)")
    p.add_argument("--skip", default="",
                   help="comma list of parts to skip: "
                        "speed,quality,auto,kernels,memory,fits")
    p.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                   help="part 2's seconds: the sampler's wall-clock seconds (sum of "
                        "sweep_times_) or the fit's process CPU seconds (on a shared machine)")
    p.add_argument("--memory-k", type=int, default=10000, help="K of part 5")
    p.add_argument("--memory-sweeps", type=int, default=40, help="sweeps of part 5's fits")
    p.add_argument("--memory-samplers", default="mh,sparse",
                   help="comma list of the samplers of part 5's fits")
    p.add_argument("--fits-k", default="1000,10000", help="comma list of K for part 6")
    p.add_argument("--fits-sweeps", type=int, default=60, help="sweeps of part 6's fits")
    p.add_argument("--json", metavar="FILE", help="also write results as JSON")
    return p.parse_args(argv)


def _fit(X, K, sampler, n_sweeps, mh_steps=2, seed=0):
    """A last-state ``LDAGibbs`` fit; returns the model."""
    from sklearn_clda import LDAGibbs

    return LDAGibbs(
        n_components=K, doc_topic_prior=ALPHA, topic_word_prior=ETA, sampler=sampler,
        mh_steps=mh_steps, max_iter=n_sweeps, random_state=seed,
        **C.last_state_kwargs(n_sweeps),
    ).fit(X)


def _ns_per_token(model, n_tokens, warm):
    return statistics.median(model.sweep_times_[warm:]) / n_tokens * 1e9


def _tomotopy_ns(corpus, K, n_timed):
    """ns/token of tomotopy's LDAModel.train, one iteration at a time (median)."""
    import tomotopy as tp

    split = C.Split(corpus.X, corpus.X[:0], np.arange(0), corpus.groups, corpus.feature_names)
    model = tp.LDAModel(k=K, alpha=ALPHA, eta=ETA, seed=0)
    model.optim_interval = 0
    for toks in C._tomotopy_token_lists(split):
        model.add_doc(toks)
    return _seconds_per_train(model, n_timed) / int(corpus.X.sum()) * 1e9


def _seconds_per_train(model, n_timed):
    """Median seconds of ``n_timed`` calls of ``model.train(1)`` (one thread),
    after one untimed call."""
    model.train(1, workers=1)
    times = []
    for _ in range(n_timed):
        t0 = time.perf_counter()
        model.train(1, workers=1)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def part_speed(corpus, args):
    """Part 1: ns/token per sampler and K (alternating fits)."""
    n_tokens = int(corpus.X.sum())
    warm, timed = (1, 2) if args.quick else (3, 5)
    warm = warm if args.warm is None else args.warm
    rounds = args.rounds or (1 if args.quick else 3)
    rows, out = [], {}
    for K in [int(k) for k in args.speed_k.split(",")]:
        runs = [("dense", 2)] + [(sampler, int(s))
                                 for sampler in filter(None, args.samplers.split(","))
                                 for s in args.mh_steps.split(",")]
        times = {r: [] for r in runs}
        # The dense kernel at K = 10,000 takes seconds per sweep: time fewer.
        d_timed = timed if K <= 2000 else 1
        for _ in range(rounds):
            for sampler, steps in runs:
                n = warm + (d_timed if sampler == "dense" else timed)
                C.log(f"speed K={K} {sampler} mh_steps={steps}: {n} sweeps")
                model = _fit(corpus.X, K, sampler, n, steps)
                times[(sampler, steps)].append(_ns_per_token(model, n_tokens, warm))
        ns = {r: statistics.median(v) for r, v in times.items()}
        builds = _tomotopy_builds(corpus, K, 1 if K > 2000 else timed, args)
        tomo = min(builds.values()) if builds else None
        for (sampler, steps), v in ns.items():
            name = "dense" if sampler == "dense" else f"{sampler} (mh_steps={steps})"
            rows.append([K, name, f"{v:.0f}", f"{ns[('dense', 2)] / v:.2f}",
                         "" if tomo is None else f"{tomo / v:.2f}"])
        for isa, v in builds.items():
            rows.append([K, f"tomotopy LDAModel [{isa or 'auto'}]", f"{v:.0f}",
                         f"{ns[('dense', 2)] / v:.2f}", f"{tomo / v:.2f}"])
        out[K] = {"ns_per_token": {f"{s}-{m}": v for (s, m), v in ns.items()},
                  "tomotopy": tomo, "tomotopy_builds": {str(k): v for k, v in builds.items()}}
    print(C.format_table(["K", "sampler", "ns/token", "dense/this", "tomotopy/this"], rows))
    print("tomotopy/this: against tomotopy's fastest build in this run")
    return out


def _tomotopy_builds(corpus, K, n_timed, args):
    """ns/token of tomotopy at K under each build of ``--tomotopy-isa`` (each
    in a fresh process, ``_isa.call_with_isa``); {} without tomotopy."""
    if args.no_tomotopy or not _has_tomotopy():
        return {}
    from _isa import call_with_isa, parse_isa_list

    builds = {}
    for isa in parse_isa_list(args.tomotopy_isa):
        C.log(f"speed K={K} tomotopy [{isa or 'auto'}]")
        builds[isa] = call_with_isa(isa, "bench_large_k", "_tomotopy_ns", corpus, K, n_timed)
    return builds


def _has_tomotopy():
    try:
        import tomotopy  # noqa: F401
    except ImportError:
        return False
    return True


def _ladder(n_max):
    """1-2-5 sweep counts from 10 up to n_max (n_max included)."""
    steps, base = [], 10
    while base <= n_max:
        steps += [m * base for m in (1, 2, 5) if m * base <= n_max]
        base *= 10
    return sorted(set(steps) | {n_max})


def _curve(split, K, sampler, n_max, mh_steps=2, stop_at=None, clock="wall", seed=0):
    """(sweeps, sampler seconds, held-out perplexity) along one chain's ladder;
    stops once the perplexity is at most ``stop_at``."""
    from sklearn_clda.metrics import perplexity_from_estimates

    points = []
    for n in _ladder(n_max):
        C.log(f"quality K={K} {sampler} mh_steps={mh_steps}: {n} sweeps")
        t0 = time.process_time()
        model = _fit(split.X_train_full, K, sampler, n, mh_steps, seed)
        cpu = time.process_time() - t0
        theta = np.asarray(model.doc_topic_)[split.heldout_idx]
        ppl = perplexity_from_estimates(theta, model.components_, split.X_test)
        points.append((n, cpu if clock == "cpu" else float(np.sum(model.sweep_times_)), ppl))
        if stop_at is not None and ppl <= stop_at:
            break
    return points


def part_quality(corpus, args):
    """Part 2: perplexity against sampler time, MH against dense."""
    K = args.quality_k
    n_dense = args.dense_sweeps or (100 if args.quick else 1000)
    split = C.document_completion_split(corpus, 0.2, seed=0)
    if args.target is None:
        dense = _curve(split, K, "dense", n_dense, clock=args.clock, seed=args.seed)
        target = dense[-1][2]
        curves = {"dense": dense}
    else:
        dense, target, curves = [(n_dense, float("nan"), args.target)], args.target, {}
    rows = []
    for sampler in filter(None, args.samplers.split(",")):
        for steps in [int(s) for s in args.mh_steps.split(",")]:
            curves[f"{sampler}-{steps}"] = _curve(split, K, sampler, int(args.mh_factor * n_dense),
                                                  steps, stop_at=target, clock=args.clock,
                                                  seed=args.seed)
    for name, pts in curves.items():
        for n, sec, ppl in pts:
            rows.append([name, n, f"{sec:.1f}", f"{ppl:.1f}"])
    print(C.format_table(["chain", "sweeps", "sampler s", "held-out perplexity"], rows))
    summary = {}
    for name, pts in curves.items():
        if name == "dense":
            continue
        hit = next(((n, sec) for n, sec, ppl in pts if ppl <= target), None)
        if hit is None:
            print(f"{name}: does not reach the dense {n_dense}-sweep perplexity {target:.1f} "
                  f"within {pts[-1][0]} sweeps ({pts[-1][1]:.1f} s, perplexity {pts[-1][2]:.1f})")
        else:
            ratio = hit[1] / dense[-1][1]
            print(f"{name}: reaches the dense {n_dense}-sweep perplexity {target:.1f} after "
                  f"{hit[0]} sweeps, {hit[1]:.1f} s = {ratio:.2f} x the dense "
                  f"{dense[-1][1]:.1f} s")
        summary[name] = hit
    return {"K": K, "curves": curves, "dense_target": target, "reached": summary}


def _kernel_state(X, K, seed=0):
    """Token arrays and random-start counts of the corpus for calling the kernels directly."""
    from sklearn_clda import _mh_sampling, _sampling

    D, V = X.shape
    doc_len = np.asarray(X.sum(axis=1)).ravel().astype(np.int64)
    words = np.repeat(X.indices, X.data).astype(np.int32)
    z = np.random.default_rng(seed).integers(0, K, len(words)).astype(np.int32)
    doc_ptr = np.r_[0, np.cumsum(doc_len)].astype(np.int64)
    nwk = np.zeros((V, _sampling.padded_n_components(K)), np.int32)
    ndk, nk = np.zeros((D, K), np.int32), np.zeros(K, np.int32)
    _sampling.count_assignments(words, doc_ptr, z, nwk[:, :K], ndk, nk)
    word_ptr, word_tokens = _mh_sampling.word_index(words, V)
    return dict(words=words, doc_ptr=doc_ptr,
                doc_group=np.zeros(D, np.int32), z=z, nwk=nwk, ndk=ndk,
                nk=nk, prior=np.full((1, K), ALPHA),
                index=(word_ptr, word_tokens, _mh_sampling.word_positions(word_tokens)),
                bitgen=np.random.PCG64(seed), doc_len=doc_len)


# The ``_mh_sampling`` module of ``--baseline``'s tree (part 4), or None.
_BASELINE = None


def _load_baseline(tree):
    """The ``_mh_sampling`` extension module built in place in source tree
    ``tree``, loaded beside this checkout's (under the same name, kept out
    of ``sys.modules``)."""
    import glob
    import importlib.machinery
    import importlib.util

    found = glob.glob(os.path.join(tree, "sklearn_clda", "_mh_sampling*.so")) + glob.glob(
        os.path.join(tree, "sklearn_clda", "_mh_sampling*.pyd"))
    if not found:
        raise SystemExit(f"--baseline: no _mh_sampling module built in {tree}/sklearn_clda")
    name = "sklearn_clda._mh_sampling"
    loader = importlib.machinery.ExtensionFileLoader(name, found[0])
    module = importlib.util.module_from_spec(
        importlib.util.spec_from_file_location(name, found[0], loader=loader))
    loader.exec_module(module)
    return module


def _kernel_sweep(name, s):
    """One sweep of kernel ``name`` on ``s``: "dense" (the one ``gibbs_sweep``
    picks), "dense-avx2" or "dense-portable" (that one, or the portable
    one where the CPU has no AVX2), "sparse" (without a word-topic table,
    as the estimators run it), "sparse-table" (the same chain, reading
    and updating the table) or "mh" (mh_steps=2); "NAME@base": kernel NAME
    of ``--baseline``."""
    from sklearn_clda import _mh_sampling, _sampling

    mh = _BASELINE if name.endswith("@base") else _mh_sampling
    name = name.removesuffix("@base")

    args = (s["words"], s["doc_ptr"], s["doc_group"], s["z"], s["nwk"], s["ndk"], s["nk"],
            s["prior"], ETA)
    tables = np.zeros((0, s["nk"].shape[0]), np.int64)
    word_ptr, word_tokens, word_pos = s["index"]
    if name.startswith("dense"):
        old = _sampling._set_kernel(name[len("dense-"):] if "-" in name else "auto")
        try:
            _sampling.gibbs_sweep(*args, tables, s["bitgen"])
        finally:
            _sampling._set_kernel(old)
    elif name in ("sparse", "sparse-table"):
        if "workspace" not in s:  # what the serial sweeper keeps across sweeps
            s["workspace"] = mh.sparse_workspace(s["doc_ptr"], word_ptr, word_tokens,
                                                 s["nk"].shape[0], 2)
        if name == "sparse":
            args = (*args[:4], None, *args[5:])
        mh.sparse_mh_sweep(*args, word_ptr, word_tokens, 2, tables, s["bitgen"],
                           workspace=s["workspace"])
    else:
        mh.mh_sweep(*args, word_ptr, word_tokens, 2, tables, s["bitgen"], word_pos=word_pos)


def _dense_kernel_name(name, K):
    """The kernel that ``_kernel_sweep(name, ...)`` runs at K topics."""
    from sklearn_clda import _sampling

    old = _sampling._set_kernel(name[len("dense-"):] if "-" in name else "auto")
    try:
        return _sampling._kernel_name(_sampling.padded_n_components(K), K)
    finally:
        _sampling._set_kernel(old)


def part_kernels(corpus, args):
    """Part 4: the kernels called directly, interleaved sweep by sweep after
    ``--warm`` (default 20) sweeps each, process CPU ns/token (median of
    ``--kernel-sweeps``, default 5): the crossovers behind ``sampler="auto"``."""
    global _BASELINE
    rows, out = [], {}
    names = tuple(filter(None, args.kernels.split(",")))
    if any(n.endswith("@base") for n in names):
        if args.baseline is None:
            raise SystemExit("--kernels: @base names need --baseline DIR")
        if any(n.startswith("dense") for n in names if n.endswith("@base")):
            raise SystemExit("--kernels: only the MH kernels (sparse, mh) have @base")
        _BASELINE = _load_baseline(args.baseline)
    for K in [int(k) for k in args.kernel_k.split(",")]:
        states = {n: _kernel_state(corpus.X, K) for n in names}
        for n in names:
            C.log(f"kernels K={K} {n}: burn-in")
            for _ in range(20 if args.warm is None else args.warm):
                _kernel_sweep(n, states[n])
        times = {n: [] for n in names}
        for _ in range(args.kernel_sweeps):
            for n in names:
                t0 = time.process_time()
                _kernel_sweep(n, states[n])
                times[n].append(time.process_time() - t0)
        n_tok = len(states[names[0]]["words"])
        ns = {n: statistics.median(v) / n_tok * 1e9 for n, v in times.items()}
        for n in names:
            s = states[n]
            kd = ((s["ndk"] > 0).sum(axis=1) * s["doc_len"]).sum() / s["doc_len"].sum()
            ratio = f"{ns['dense'] / ns[n]:.2f}" if "dense" in ns else ""
            label = f"{n} ({_dense_kernel_name(n, K)})" if n.startswith("dense") else n
            ab = [_ab_ratio(times[names[0]], times[n])] if args.baseline else []
            rows.append([K, label, f"{ns[n]:.0f}", ratio, *ab, f"{kd:.0f}"])
        out[K] = ns
    ab = [f"{names[0]}/this"] if args.baseline else []
    print(C.format_table(["K", "kernel", "CPU ns/token", "dense/this", *ab,
                          "topics/doc (token-weighted)"], rows))
    return out


def _ab_ratio(first, this):
    """Median (min-max) of the sweep-by-sweep ratios of two kernels' times."""
    r = [a / b for a, b in zip(first, this)]
    return f"{statistics.median(r):.3f} ({min(r):.2f}-{max(r):.2f})"


def part_auto(corpus, args):
    """Part 3: auto's choice by K, and auto against dense at K = 100."""
    from sklearn_clda._mh_sweeper import (AUTO_SPARSE_LENGTH_FACTOR, auto_sampler,
                                          token_weighted_length)

    doc_len = np.asarray(corpus.X.sum(axis=1)).ravel()
    edge = int(np.ceil(AUTO_SPARSE_LENGTH_FACTOR * token_weighted_length(doc_len)))
    ks = (10, 100, 101, edge - 1, edge, 1000, 10000, 19999, 20000)
    picks = {K: auto_sampler(K, doc_len) for K in ks}
    print(f"token-weighted mean document length {token_weighted_length(doc_len):.1f}; "
          "sampler='auto' picks: " + ", ".join(f"K={k}: {v}" for k, v in picks.items()))
    assert all(v == "dense" for k, v in picks.items() if k <= 100)
    n_tokens = int(corpus.X.sum())
    ns = {"auto": [], "dense": []}
    for _ in range(1 if args.quick else 3):
        for sampler in ("auto", "dense"):
            C.log(f"auto K=100 {sampler}")
            ns[sampler].append(_ns_per_token(_fit(corpus.X, 100, sampler, 6), n_tokens, 2))
    a, d = statistics.median(ns["auto"]), statistics.median(ns["dense"])
    print(f"K=100: auto {a:.0f} ns/token, dense {d:.0f} ns/token, auto/dense {a / d:.2f}")
    return {"picks": picks, "k100_auto_ns": a, "k100_dense_ns": d}


# The fit of part 5, run in a fresh interpreter so that its peak is its own.
_MEMORY_CHILD = """
import resource, sys
sys.path[:0] = [{bench!r}, {repo!r}]
import _common as C
corpus = C.load_news16()
from sklearn_clda import CompoundLDA, LDAGibbs
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
kw = dict(n_components={K}, sampler={sampler!r}, max_iter={sweeps}, random_state=0)
if {name!r} == "LDAGibbs":
    LDAGibbs(**kw).fit(corpus.X)
else:
    CompoundLDA(**kw).fit(corpus.X, groups=corpus.groups)
print(before, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def part_memory(corpus, args):
    """Part 5: peak resident memory of a fit at many topics, in a fresh process."""
    import subprocess

    from sklearn_clda._sampling import padded_n_components

    K, (D, V) = args.memory_k, corpus.X.shape
    sizes = {
        "word-topic counts (V x K int32)": 4 * V * padded_n_components(K),
        "document-topic counts (D x K int32)": 4 * D * K,
        "components_ (K x V float64)": 8 * K * V,
        "doc_topic_ (D x K float64)": 8 * D * K,
    }
    print(", ".join(f"{k} {v / 1e6:.0f} MB" for k, v in sizes.items()))
    rows, out = [], {"sizes": sizes}
    for sampler in args.memory_samplers.split(","):
        for name in ("LDAGibbs", "CompoundLDA"):
            C.log(f"memory K={K} {name} {sampler}: {args.memory_sweeps} sweeps, fresh process")
            code = _MEMORY_CHILD.format(bench=C.HERE, repo=C.REPO_ROOT, K=K, sampler=sampler,
                                        sweeps=args.memory_sweeps, name=name)
            res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                 check=True)
            before, peak = (int(v) * 1024 for v in res.stdout.split()[-2:])
            rows.append([name, sampler, K, f"{before / 1e6:.0f}", f"{peak / 1e6:.0f}",
                         "yes" if peak < 2e9 else "NO"])
            out[f"{name} {sampler}"] = {"rss_before_fit": before, "peak_rss": peak}
    print(C.format_table(["estimator", "sampler", "K", "MB before fit", "peak MB", "< 2 GB"],
                         rows))
    return out


def _whole_fit(corpus, K, name, n_sweeps):
    """Part 6's fit of ``name``; returns (model, wall seconds of ``fit``)."""
    from sklearn_clda import CompoundLDA, LDAGibbs

    cls = {"LDAGibbs": LDAGibbs, "CompoundLDA": CompoundLDA}[name]
    model = cls(n_components=K, max_iter=n_sweeps, burn_in=n_sweeps // 2, thin=10,
                random_state=0)
    kwargs = {"groups": corpus.groups} if name == "CompoundLDA" else {}
    t0 = time.perf_counter()
    model.fit(corpus.X, **kwargs)
    return model, time.perf_counter() - t0


def _dmr_seconds(corpus, K, n_timed):
    """Seconds per ``train(1)`` of tomotopy's DMRModel (median), or None."""
    if not _has_tomotopy():
        return None
    import tomotopy as tp

    split = C.Split(corpus.X, corpus.X[:0], np.arange(0), corpus.groups, corpus.feature_names)
    model = tp.DMRModel(k=K, alpha=ALPHA, eta=ETA, seed=0)
    for toks, g in zip(C._tomotopy_token_lists(split), corpus.groups):
        model.add_doc(toks, metadata=str(g))
    return _seconds_per_train(model, n_timed)


def _inference_seconds(model, corpus, n_docs):
    """Wall seconds of ``transform`` and of ``score`` on the first ``n_docs``
    documents (with their collections for ``CompoundLDA``)."""
    X = corpus.X[:n_docs]
    kwargs = {"groups": corpus.groups[:n_docs]} if hasattr(model, "groups_") else {}
    t0 = time.perf_counter()
    model.transform(X, **kwargs)
    t1 = time.perf_counter()
    model.score(X, **kwargs)
    return t1 - t0, time.perf_counter() - t1


def part_fits(corpus, args):
    """Part 6: whole fits at many topics, with what surrounds the sweeps, and
    the fitted model's inference."""
    from sklearn_clda._mh_sweeper import auto_sampler

    n_tokens, rows, out = int(corpus.X.sum()), [], {}
    doc_len = np.asarray(corpus.X.sum(axis=1)).ravel()
    n_inf = min(1000, corpus.X.shape[0])
    for K in [int(k) for k in args.fits_k.split(",")]:
        sweep_s = {}
        for name in ("LDAGibbs", "CompoundLDA"):
            C.log(f"fits K={K} {name}: {args.fits_sweeps} sweeps")
            model, fit_s = _whole_fit(corpus, K, name, args.fits_sweeps)
            sweep_s[name] = statistics.median(model.sweep_times_)
            outside = fit_s - float(np.sum(model.sweep_times_))
            transform_s, score_s = _inference_seconds(model, corpus, n_inf)
            rows.append([K, name, auto_sampler(K, doc_len), f"{sweep_s[name] / n_tokens * 1e9:.0f}",
                         f"{fit_s:.1f}", f"{outside:.1f} ({outside / fit_s:.0%})",
                         f"{transform_s:.2f}", f"{score_s:.2f}", ""])
            out[f"{name}-{K}"] = {"sweep_s": sweep_s[name], "fit_s": fit_s, "outside_s": outside,
                                  "transform_s": transform_s, "score_s": score_s}
        C.log(f"fits K={K} tomotopy DMRModel")
        dmr = _dmr_seconds(corpus, K, 1 if K > 2000 else 3)
        if dmr is not None:
            rows.append([K, "tomotopy DMRModel", "dense", f"{dmr / n_tokens * 1e9:.0f}", "", "",
                         "", "", f"{dmr / sweep_s['CompoundLDA']:.1f}"])
            out[f"dmr-{K}"] = dmr
    print(C.format_table(["K", "estimator", "sampler", "ns/token (sweep)", "fit s",
                          "outside the sweeps s", f"transform {n_inf} docs s",
                          f"score {n_inf} docs s", "DMR/CompoundLDA"], rows))
    return out


def main(argv=None):
    args = parse_args(argv)
    import sklearn_clda

    skip = set(filter(None, args.skip.split(",")))
    if args.corpus == "synthetic":
        corpus = C.synthetic_corpus(args.tokens)
        skip |= {"quality", "memory", "fits"}
    else:
        corpus = C.load_news16()
    print(f"corpus: {corpus.source}, {corpus.X.shape[0]} documents, "
          f"{corpus.X.shape[1]} words, {int(corpus.X.sum())} tokens")

    C.log(f"sklearn_clda from {os.path.dirname(sklearn_clda.__file__)}; load {C.load_average()}")
    results = {"env": C.environment_info(), "load_start": C.load_average()}
    for name, part in (("auto", part_auto), ("speed", part_speed), ("quality", part_quality),
                       ("kernels", part_kernels), ("memory", part_memory),
                       ("fits", part_fits)):
        if name not in skip:
            print(f"\n== {name}")
            results[name] = part(corpus, args)
    results["load_end"] = C.load_average()
    print(f"\nload average: {results['load_start']} at start, {results['load_end']} at end")
    if args.json:
        C.write_json(args.json, results)


if __name__ == "__main__":
    main()

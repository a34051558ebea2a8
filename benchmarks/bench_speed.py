"""Sampler speed: tokens per second against the peers, scaling, threads, time to quality.

Tables (all on this machine, one thread unless stated):

1. news16 throughput at each K: LDAGibbs, CompoundLDA (AGS, including the
   Antoniak and pi steps), tomotopy ``LDAModel(workers=1)`` under each of
   its instruction-set builds that loads here (``--tomotopy-isa``; each in
   a fresh process, since tomotopy picks its build at import and its
   automatic choice is not always its fastest) and the ``lda`` package, as
   seconds per sweep over ``--sweeps`` sweeps after ``--warmup`` sweeps.
   Every library is timed once per round and the ``--rounds`` rounds run in
   turn, so drift in the machine's speed and other work hit all alike;
   tokens/s is the median over rounds, and each ratio the median of the
   per-round ratios. "vs fastest tomotopy" is against its fastest build.
   Warm-up defaults to 50 sweeps so that the timed sweeps are like most of
   a fit's (the first sweeps after a random start move most tokens and are
   slower for every library). ``--clock cpu`` times process CPU seconds
   instead of wall-clock seconds, which other processes taking turns on a
   shared machine do not inflate (every library here runs on one thread).
2. ``n_jobs=2`` against ``n_jobs=1`` (AD-LDA shards): throughput and
   held-out perplexity (document completion) at equal sweeps; and the
   machine's own ceiling for two threads: two single-thread fits run as
   separate processes at once, against one alone (on a virtual machine
   whose two vCPUs share a physical core this is well under 2).
3. Scaling: seconds per token for corpora of 0.8M to 5M tokens simulated
   by ``make_compound_corpus`` (K=100), and for K = 30..200 on news16,
   timed after ``--scaling-warmup`` sweeps; peak memory (max RSS of a fresh
   process) of a 5M-token K=100 fit.
4. Time to quality: CompoundLDA given the seconds tomotopy's DMRModel (its
   fastest build in table 1) needs for ``--quality-sweeps`` sweeps on
   news16 (K=30), and the held-out perplexities of both, last state against
   last state and averaged against averaged (each over the second half of
   its own sweeps, every 10th; DMR's averaged estimate from its count
   tables, see ``_stepped.py``).

Wall-clock seconds per sweep: ours from the estimators' ``sweep_times_``,
tomotopy over ``train(1)`` calls, ``lda`` over its own sweep stepped
(``_stepped.LdaChain``: no log-likelihood refresh). CPU seconds: ours as
the difference of a ``warmup + sweeps`` and a ``warmup`` fit, the peers
over the same calls.

Run: python benchmarks/bench_speed.py [--ks 30 50 100] [--clock cpu] [--skip-scaling] ...
"""

import _common  # noqa: F401  (pins BLAS/OpenMP threads first)

import argparse  # noqa: E402
import json  # noqa: E402
import logging  # noqa: E402
import os  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402

from _isa import call_with_isa, parse_isa_list  # noqa: E402
from _stepped import LdaChain  # noqa: E402
from _common import (  # noqa: E402
    document_completion_split,
    environment_info,
    format_table,
    load_news16,
    log,
    last_state_kwargs,
    run_compound_lda,
)


CLDA_AGS = "CompoundLDA (AGS)"
CLOCKS = {
    "wall": "wall-clock, median over the timed sweeps",
    "cpu": "process CPU time, mean over the timed sweeps (insensitive to other "
           "processes taking turns on the cores)",
}


def ours_seconds_per_sweep(est, X, groups, warmup, sweeps, clock="wall"):
    """Seconds per sweep after ``warmup`` sweeps. ``clock="wall"``: the median
    of the fit's ``sweep_times_``; ``"cpu"``: this process's CPU time of a
    ``warmup + sweeps`` fit minus that of a ``warmup`` fit (same seed, so the
    same first ``warmup`` sweeps), over ``sweeps`` (a mean)."""
    def fit(n_iter):
        est.set_params(max_iter=n_iter, burn_in=n_iter - 1, thin=1)
        t0 = time.process_time()
        est.fit(X) if groups is None else est.fit(X, groups=groups)
        return time.process_time() - t0

    if clock == "cpu":
        return (fit(warmup + sweeps) - fit(warmup)) / sweeps
    fit(warmup + sweeps)
    return float(np.median(est.sweep_times_[warmup:]))


def _timed_steps(step, sweeps, clock):
    """Seconds per call of ``step()``: the median of ``sweeps`` wall-clock
    timings, or (``clock="cpu"``) their total process CPU time over ``sweeps``."""
    if clock == "cpu":
        t0 = time.process_time()
        for _ in range(sweeps):
            step()
        return (time.process_time() - t0) / sweeps
    times = []
    for _ in range(sweeps):
        t0 = time.perf_counter()
        step()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def tomotopy_seconds_per_sweep(corpus, K, warmup, sweeps, seed=0, clock="wall"):
    """Seconds per ``train(1)`` after ``train(warmup)`` (tomotopy
    ``LDAModel``, fixed alpha, one worker, which runs in the calling
    thread); run it under each build with ``_isa.call_with_isa``."""
    import tomotopy as tp

    model = tp.LDAModel(k=K, alpha=0.1, eta=0.01, seed=seed)
    model.optim_interval = 0
    X, words = corpus.X, corpus.feature_names
    for d in range(X.shape[0]):
        lo, hi = X.indptr[d], X.indptr[d + 1]
        model.add_doc(np.repeat(words[X.indices[lo:hi]], X.data[lo:hi]).tolist())
    model.train(warmup, workers=1)
    return _timed_steps(lambda: model.train(1, workers=1), sweeps, clock)


def lda_seconds_per_sweep(X, K, warmup, sweeps, seed=0, clock="wall"):
    """Seconds per ``lda`` sweep after ``warmup`` sweeps: its own start and
    sweep, stepped (``_stepped.LdaChain``), so each sweep is timed like
    tomotopy's ``train(1)`` (no log-likelihood refresh)."""
    logging.getLogger("lda").setLevel(logging.ERROR)
    chain = LdaChain(X, np.arange(0), K, 0.1, 0.01, seed)
    chain.start()
    chain.sweep(warmup)
    return _timed_steps(lambda: chain.sweep(1), sweeps, clock)


def _time_round(corpus, K, r, warmup, sweeps, peers, isas, clock):
    """Seconds per sweep of every library, one after another (round ``r``)."""
    from sklearn_clda import CompoundLDA, LDAGibbs

    out = {}
    log(f"K={K}, round {r + 1}: LDAGibbs")
    out["LDAGibbs"] = ours_seconds_per_sweep(
        LDAGibbs(K, doc_topic_prior=0.1, topic_word_prior=0.01, random_state=r),
        corpus.X, None, warmup, sweeps, clock)
    log(f"K={K}, round {r + 1}: CompoundLDA (AGS)")
    out[CLDA_AGS] = ours_seconds_per_sweep(
        CompoundLDA(K, eta=0.01, random_state=r), corpus.X, corpus.groups, warmup, sweeps,
        clock)
    if "tomotopy" in peers:
        for isa in isas:
            name = f"tomotopy LDAModel [{isa or 'auto'}]"
            log(f"K={K}, round {r + 1}: {name} (workers=1)")
            out[name] = call_with_isa(isa, "bench_speed", "tomotopy_seconds_per_sweep",
                                      corpus, K, warmup, sweeps, seed=r, clock=clock)
    if "lda" in peers:
        log(f"K={K}, round {r + 1}: lda")
        out["lda"] = lda_seconds_per_sweep(corpus.X, K, warmup, sweeps, seed=r, clock=clock)
    return out


def _ratio(per_round, num, den):
    """Median over rounds of ``per_round[den] / per_round[num]`` (a speed ratio
    of ``num`` to ``den`` taken within each round), and the rounds' values."""
    vals = [rd[den] / rd[num] for rd in per_round if num in rd and den in rd]
    return (float(np.median(vals)) if vals else float("nan")), vals


def throughput_table(corpus, ks, warmup, sweeps, peers, rounds, isas, clock="wall"):
    """Every library is timed once per round, the rounds run in turn, so that
    the machine's drift and other work hit them alike. tokens/s: median over
    rounds; ratios: median of the per-round ratios. "vs tomotopy" is against
    its fastest build (median seconds), "vs lda" against ``lda``."""
    N = int(corpus.X.sum())
    rows, records, notes = [], [], []
    for K in ks:
        per_round = [_time_round(corpus, K, r, warmup, sweeps, peers, isas, clock)
                     for r in range(rounds)]
        names = list(per_round[0])
        med = {n: float(np.median([rd[n] for rd in per_round])) for n in names}
        tp_names = [n for n in names if n.startswith("tomotopy")]
        best_tp = min(tp_names, key=med.get) if tp_names else None
        for name in names:
            vs_tp = _ratio(per_round, name, best_tp)[0] if best_tp else float("nan")
            vs_lda = _ratio(per_round, name, "lda")[0]
            rows.append([f"news16 ({N / 1e6:.2f}M)", K, name, f"{N / med[name] / 1e6:.2f}M",
                         f"{vs_tp:.2f}x", f"{vs_lda:.2f}x"])
            records.append(dict(K=K, library=name, tokens_per_second=N / med[name],
                                ratio_best_tomotopy=vs_tp, ratio_lda=vs_lda,
                                seconds_per_round=[rd[name] for rd in per_round]))
        ratio, vals = _ratio(per_round, "LDAGibbs", CLDA_AGS)
        rows.append(["", K, "CompoundLDA / LDAGibbs sweep cost", f"{ratio:.3f}", "", ""])
        records.append(dict(K=K, clda_over_lda_sweep=ratio, clda_over_lda_per_round=vals,
                            fastest_tomotopy=best_tp))
        for name in tp_names + (["lda"] if "lda" in names else []):
            r_ours, vals = _ratio(per_round, "LDAGibbs", name)
            notes.append(f"K={K}: LDAGibbs / {name} tokens/s: {r_ours:.2f}x (rounds "
                         f"{', '.join(f'{v:.2f}' for v in vals)})")
    print(format_table(["corpus", "K", "library", "tokens/s", "vs fastest tomotopy", "vs lda"],
                       rows, align="lrlrrr"))
    print(f"(seconds per sweep: {CLOCKS[clock]}; tokens/s: median of {rounds} rounds; "
          f"ratios: median of the per-round ratios, every library timed once per round in "
          f"turn; tomotopy builds: {', '.join(map(str, isas))}; load {_common.load_average()})")
    print("\n".join(notes))
    return records


_SOLO_CHILD = r"""
import json, sys, numpy as np
from sklearn_clda import LDAGibbs
from sklearn_clda.datasets import load_news16
K, warmup, sweeps = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
X = load_news16().data
m = LDAGibbs(K, doc_topic_prior=0.1, topic_word_prior=0.01, max_iter=warmup + sweeps,
             burn_in=warmup + sweeps - 1, thin=1, random_state=0).fit(X)
print(json.dumps(dict(tokens_per_second=m.n_tokens_ / float(np.median(m.sweep_times_[warmup:])))))
"""


def machine_parallel_ceiling(K=30, warmup=20, sweeps=20):
    """Aggregate tokens/s of two single-thread fits run as two processes at once,
    over that of one alone: what two threads can gain at best on this machine."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [_common.REPO_ROOT, os.environ.get("PYTHONPATH", "")]))
    cmd = [sys.executable, "-c", _SOLO_CHILD, str(K), str(warmup), str(sweeps)]

    def run(n):
        procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True, env=env)
                 for _ in range(n)]
        outs = [p.communicate()[0] for p in procs]
        return [json.loads(o.strip().splitlines()[-1])["tokens_per_second"] for o in outs]

    log("parallel ceiling: one single-thread process, then two at once")
    solo = run(1)[0]
    pair = run(2)
    return solo, pair, sum(pair) / solo


def threads_table(corpus, K, n_iter, rounds, seed=0):

    split = document_completion_split(corpus, seed=seed)
    # n_jobs=1 and n_jobs=2 fits (same seed, so the same chains every round)
    # and the machine's two-process ceiling, in turn `rounds` times: the
    # host's spare capacity for a second core varies from minute to minute.
    tps = {1: [], 2: []}
    ppl, ceilings = {}, []
    for r in range(rounds):
        for n_jobs in (1, 2):
            log(f"round {r + 1}/{rounds}, n_jobs={n_jobs}: CompoundLDA K={K}, {n_iter} sweeps")
            res = run_compound_lda(split, K, n_iter, seed=seed, n_jobs=n_jobs,
                                   name=f"CompoundLDA n_jobs={n_jobs}")
            model = res.extra["model"]
            tps[n_jobs].append(model.n_tokens_ / float(np.median(model.sweep_times_)))
            ppl[n_jobs] = res.perplexity
        ceilings.append(machine_parallel_ceiling(K)[2])
    speedups = np.array(tps[2]) / np.array(tps[1])
    speedup, ceiling = float(np.median(speedups)), float(np.median(ceilings))
    rows = [[n, f"{np.median(tps[n]) / 1e6:.2f}M", f"{ppl[n]:.2f}"] for n in (1, 2)]
    print(format_table(["n_jobs", "tokens/s", "held-out perplexity"], rows))
    print(f"n_jobs=2 / n_jobs=1: {speedup:.2f}x tokens/s (rounds: "
          f"{', '.join(f'{x:.2f}' for x in speedups)}), perplexity ratio "
          f"{ppl[2] / ppl[1]:.4f} (cpu count {os.cpu_count()}, load {_common.load_average()})")
    print(f"machine ceiling: two single-thread LDAGibbs processes at once give {ceiling:.2f}x "
          f"the tokens/s of one alone (rounds: {', '.join(f'{c:.2f}' for c in ceilings)}); "
          f"n_jobs=2 reaches {speedup / ceiling:.0%} of it")
    return dict(tokens_per_second={str(k): v for k, v in tps.items()}, perplexity=ppl,
                speedup=speedup, speedups=speedups.tolist(),
                perplexity_ratio=ppl[2] / ppl[1], ceiling=ceiling, ceilings=ceilings)


_SCALING_CHILD = r"""
import json, resource, sys, time, numpy as np
from sklearn_clda import CompoundLDA
from sklearn_clda.datasets import make_compound_corpus
n_tokens, K, sweeps, warmup = (int(a) for a in sys.argv[1:5])
docs = n_tokens // 100
c = make_compound_corpus(n_topics=K, n_features=10000, n_collections=4,
                         docs_per_collection=docs // 4, doc_length=100,
                         alpha=1.0, gamma=0.1 * K, eta=0.01, random_state=0)
m = CompoundLDA(K, eta=0.01, max_iter=warmup + sweeps, burn_in=warmup + sweeps - 1,
                thin=1, random_state=0).fit(c.data, groups=c.groups)
sec = float(np.median(m.sweep_times_[warmup:]))
print(json.dumps(dict(tokens=int(m.n_tokens_), K=K, sec_per_sweep=sec,
      ns_per_token=sec / m.n_tokens_ * 1e9,
      max_rss_mib=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)))
"""


def scaling_table(corpus, sweeps, warmup):
    from sklearn_clda import CompoundLDA

    rows, records = [], []
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [_common.REPO_ROOT, os.environ.get("PYTHONPATH", "")]))
    for n_tokens in (800_000, 2_000_000, 5_000_000):
        log(f"scaling: {n_tokens} tokens, K=100 (fresh process)")
        out = subprocess.run(
            [sys.executable, "-c", _SCALING_CHILD, str(n_tokens), "100", str(sweeps),
             str(warmup)],
            capture_output=True, text=True, env=env, check=True,
        )
        r = json.loads(out.stdout.strip().splitlines()[-1])
        records.append(r)
        rows.append(["synthetic", f"{r['tokens'] / 1e6:.1f}M", 100,
                     f"{r['ns_per_token']:.1f}", f"{r['max_rss_mib']:.0f}"])
    base = records[0]["ns_per_token"]
    N = int(corpus.X.sum())
    for K in (30, 50, 100, 200):
        log(f"scaling: news16, K={K}")
        sec = ours_seconds_per_sweep(CompoundLDA(K, eta=0.01, random_state=0),
                                     corpus.X, corpus.groups, warmup, sweeps)
        rows.append(["news16", f"{N / 1e6:.2f}M", K, f"{sec / N * 1e9:.1f}", ""])
        records.append(dict(corpus="news16", K=K, ns_per_token=sec / N * 1e9))
    print(format_table(["corpus", "tokens", "K", "ns/token (CompoundLDA)",
                        "peak MiB (process)"], rows, align="lrrrr"))
    spread = [r["ns_per_token"] / base for r in records[:3]]
    print("time per token relative to 0.8M tokens: "
          + ", ".join(f"{s:.3f}" for s in spread))
    return records


def quality_table(corpus, K, dmr_sweeps, isa=None, seed=0, clock="wall"):
    """CompoundLDA given the seconds (``clock``: wall-clock or CPU) tomotopy's
    DMRModel (build ``isa``) takes for ``dmr_sweeps`` sweeps; both scored
    with their last state and with their average over the sweeps each keeps
    by default (burn-in half the sweeps, every 10th sweep after it)."""
    from sklearn_clda import CompoundLDA

    split = document_completion_split(corpus, seed=seed)
    log(f"time to quality: tomotopy DMR [{isa or 'auto'}], K={K}, {dmr_sweeps} sweeps")
    dmr_last, dmr_avg = call_with_isa(isa, "_stepped", "run_tomotopy_stepped", split, K,
                                      dmr_sweeps, dmr_sweeps // 2, 10, seed=seed, dmr=True,
                                      clock=clock)
    # Our sweep cost on this split, then as many sweeps as fit in DMR's time.
    per_sweep = ours_seconds_per_sweep(CompoundLDA(K, eta=0.01, random_state=seed),
                                       split.X_train_full, split.groups, 20, 20, clock)
    budget = dmr_last.fit_seconds
    n_iter = max(20, int(budget / per_sweep * 0.97))
    log(f"time to quality: CompoundLDA, {n_iter} sweeps in ~{budget:.1f}s (twice: averaged, "
        f"last state)")
    ours_avg = run_compound_lda(split, K, n_iter, seed=seed, clock=clock)
    ours_last = run_compound_lda(split, K, n_iter, seed=seed, clock=clock,
                                 **last_state_kwargs(n_iter))
    dmr_name = f"tomotopy DMR [{dmr_last.extra['isa']}]"
    rows = [[dmr_name, "last state", dmr_sweeps, f"{dmr_last.fit_seconds:.1f}",
             f"{dmr_last.perplexity:.2f}"],
            [dmr_name, "averaged", dmr_sweeps, f"{dmr_avg.fit_seconds:.1f}",
             f"{dmr_avg.perplexity:.2f}"],
            [CLDA_AGS, "last state", n_iter, f"{ours_last.fit_seconds:.1f}",
             f"{ours_last.perplexity:.2f}"],
            [CLDA_AGS, "averaged", n_iter, f"{ours_avg.fit_seconds:.1f}",
             f"{ours_avg.perplexity:.2f}"]]
    print(format_table(["model", "estimate", "sweeps", f"fit s ({clock})",
                        "held-out perplexity"], rows, align="llrrr"))
    last_ratio = ours_last.perplexity / dmr_last.perplexity
    avg_ratio = ours_avg.perplexity / dmr_avg.perplexity
    print(f"perplexity CompoundLDA / DMR at equal {clock} time: last state vs last state "
          f"{last_ratio:.4f} ({(last_ratio - 1) * 100:+.1f}%), averaged vs averaged "
          f"{avg_ratio:.4f} ({(avg_ratio - 1) * 100:+.1f}%) (averaged: each model over the "
          f"second half of its own sweeps, every 10th)")
    return dict(dmr_isa=dmr_last.extra["isa"], dmr_seconds=dmr_last.fit_seconds,
                dmr_perplexity_last=dmr_last.perplexity,
                dmr_perplexity_averaged=dmr_avg.perplexity, clda_sweeps=n_iter,
                clda_seconds=ours_avg.fit_seconds, clda_seconds_last=ours_last.fit_seconds,
                clda_perplexity_averaged=ours_avg.perplexity,
                clda_perplexity_last=ours_last.perplexity,
                ratio_last=last_ratio, ratio_averaged=avg_ratio)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ks", type=int, nargs="+", default=[30, 50, 100])
    p.add_argument("--warmup", type=int, default=50,
                   help="sweeps before timing; a fit spends most sweeps in the "
                        "mixed regime, where fewer tokens change topic")
    p.add_argument("--sweeps", type=int, default=15)
    p.add_argument("--rounds", type=int, default=3,
                   help="LDAGibbs, CompoundLDA and tomotopy are timed this many times "
                        "in turn; medians are reported")
    p.add_argument("--scaling-warmup", type=int, default=20,
                   help="sweeps before timing in the scaling table")
    p.add_argument("--peers", nargs="*", default=["tomotopy", "lda"])
    p.add_argument("--clock", choices=sorted(CLOCKS), default="wall",
                   help="what the throughput and time-to-quality tables time: wall-clock "
                        "seconds, or process CPU seconds, which other work sharing the "
                        "cores does not inflate (every library here runs on one thread)")
    p.add_argument("--tomotopy-isa", default="all",
                   help="tomotopy builds to time: all (every one that loads here, each in "
                        "a fresh process), auto (its own choice, in this process), or a "
                        "comma list from avx512, avx2, sse2, none; the time-to-quality "
                        "DMR uses the fastest at the first K")
    p.add_argument("--threads-sweeps", type=int, default=300)
    p.add_argument("--quality-sweeps", type=int, default=1000)
    p.add_argument("--skip-threads", action="store_true")
    p.add_argument("--skip-scaling", action="store_true")
    p.add_argument("--skip-quality", action="store_true")
    p.add_argument("--json", default=None, help="write all results to this file")
    args = p.parse_args(argv)
    warnings.simplefilter("ignore")

    corpus = load_news16()
    print(environment_info() if isinstance(environment_info(), str)
          else json.dumps(environment_info()))
    isas = parse_isa_list(args.tomotopy_isa)
    out = {"throughput": throughput_table(corpus, args.ks, args.warmup, args.sweeps,
                                          args.peers, args.rounds, isas, args.clock)}
    fastest = next((r["fastest_tomotopy"] for r in out["throughput"]
                    if r.get("fastest_tomotopy")), None)
    dmr_isa = None if fastest is None else fastest.split("[")[1].rstrip("]")
    if not args.skip_threads:
        print()
        out["threads"] = threads_table(corpus, 30, args.threads_sweeps, args.rounds)
    if not args.skip_scaling:
        print()
        out["scaling"] = scaling_table(corpus, max(5, args.sweeps // 3), args.scaling_warmup)
    if not args.skip_quality:
        print()
        out["quality"] = quality_table(corpus, 30, args.quality_sweeps,
                                       None if dmr_isa == "auto" else dmr_isa, clock=args.clock)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1, default=float)
    return 0


if __name__ == "__main__":
    sys.exit(main())

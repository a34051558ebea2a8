"""Shard rounds in 1, 2, 4, ... processes side by side, without Dask.

A diagnosis for the Dask scaling table of ``bench_dask.py``. Each of ``n``
processes builds the shard a Dask worker would hold (``1/n`` of the same
``--tokens`` synthetic corpus), runs ``--warmup`` shard rounds alone, then
all ``n`` run ``--rounds`` more at the same time (they start together at a
barrier). A round is the worker's whole task (``shard_round``: bring its
copy of the table up to date, sweep, take its sparse change, restore its
rows); its own change stands in for the other shards'. Reported per
process count: the median ns per token of the sweep alone and of the
whole round, over all processes' timed rounds, and their ratio to one
process.

Dask adds messages and scheduling to these rounds. If ``n`` processes side
by side slow down per token as ``n`` Dask workers do, the cause is the
machine (caches and memory bandwidth shared by ``n`` private tables), not
Dask; if they do not, it is the Dask side.

Run: python benchmarks/bench_side_by_side.py [--tokens 10000000]
     [--processes 1 2 4 8] [--threads 1]
"""

import _common  # noqa: F401  (pins BLAS/OpenMP threads first)

import argparse  # noqa: E402
import multiprocessing  # noqa: E402
import os  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from _common import format_table, load_average, log  # noqa: E402


def _args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tokens", type=int, default=10_000_000)
    p.add_argument("--features", type=int, default=20_000)
    p.add_argument("--k", type=int, default=100)
    p.add_argument("--processes", type=int, nargs="*", default=None,
                   help="default: 1, 2, 4, ... up to half the CPUs")
    p.add_argument("--threads", type=int, default=1, help="threads per shard (worker_threads)")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--rounds", type=int, default=8)
    return p.parse_args(argv)


def _shard_of(i, n, args):
    """Rows of process ``i`` of ``n``: the row blocks ``bench_dask`` cuts."""
    from bench_dask import _corpus

    X, groups = _corpus(args.tokens, args.features)
    bounds = np.linspace(0, X.shape[0], n + 1).astype(int)
    return X[bounds[i]:bounds[i + 1]], groups[bounds[i]:bounds[i + 1]], np.unique(groups)


def _process(i, n, args, barrier, results):
    """Process ``i``: build its shard, warm up, wait for the others, time rounds."""
    from sklearn_clda.dask import _shard

    X, groups, labels = _shard_of(i, n, args)
    key = ("side-by-side", i)
    _shard.build_shard(key, [X], [groups], X.shape[1], args.k, np.random.SeedSequence(i),
                       "bench", threads=args.threads)
    own = _shard.shard_setup(key, labels, len(labels))
    shard = _shard._SHARDS[key]
    words, z = _shard.token_arrays(shard)
    n_tokens = words.shape[0]
    sweeper, sweep_seconds = shard["sweeper"], []
    plain_sweep = sweeper.sweep

    def timed_sweep(prior, eta):
        start = time.perf_counter()
        tables = plain_sweep(prior, eta)
        sweep_seconds.append(time.perf_counter() - start)
        return tables

    sweeper.sweep = timed_sweep
    nk = np.bincount(z, minlength=args.k).astype(np.int32)
    prior = np.full((len(labels), args.k), 0.5)
    sync, rounds = ("delta", *own), []
    for r in range(args.warmup + args.rounds):
        if r == args.warmup:
            barrier.wait()
        out = _shard.shard_round(key, sync, nk, prior, 0.05, 1, None, False)
        sync = ("delta", *out["delta"])
        rounds.append(out["seconds"])
    results.put((n_tokens, sweep_seconds[args.warmup:], rounds[args.warmup:]))


def side_by_side(n, args):
    """Median ns per token of the sweep and of the round, ``n`` processes at once."""
    ctx = multiprocessing.get_context("spawn")
    barrier, results = ctx.Barrier(n), ctx.Queue()
    procs = [ctx.Process(target=_process, args=(i, n, args, barrier, results)) for i in range(n)]
    for p in procs:
        p.start()
    got = [results.get() for _ in procs]
    for p in procs:
        p.join()
    sweep = [s / t for t, sweeps, _ in got for s in sweeps]
    rounds = [s / t for t, _, rs in got for s in rs]
    return got[0][0], 1e9 * float(np.median(sweep)), 1e9 * float(np.median(rounds))


def main(argv=None):
    args = _args(argv)
    counts = args.processes
    if not counts:
        counts, n = [], 1
        while n <= max(1, (os.cpu_count() or 1) // 2):
            counts.append(n)
            n *= 2
    rows, base = [], None
    for n in counts:
        log(f"{n} process(es) side by side (load {load_average()})")
        tokens, sweep, round_ = side_by_side(n, args)
        base = base or (sweep, round_)
        rows.append([n, f"{tokens:,}", f"{sweep:.1f}", f"{round_:.1f}",
                     f"{sweep / base[0]:.2f}x", f"{round_ / base[1]:.2f}x"])
    print(f"# {args.tokens:,} tokens, V={args.features}, K={args.k}, {args.threads} "
          f"thread(s) per shard, {os.cpu_count()} CPUs; median over the processes' "
          f"{args.rounds} timed rounds")
    print(format_table(["processes", "tokens each", "sweep ns/token", "round ns/token",
                        "sweep vs 1", "round vs 1"], rows, "rrrrrr"))


if __name__ == "__main__":
    main()

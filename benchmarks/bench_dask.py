"""Distributed fits on Dask: synchronization cost, scaling, memory, and a projection.

Tables (all on this machine; each worker count gets a fresh
``LocalCluster`` of worker processes, each running its shard's sweeps on
``--worker-threads`` threads, default 1):

1. Per worker count (1, 2, 4, ... up to ``os.cpu_count()``, or
   ``--workers``), on a ``make_compound_corpus`` corpus of ``--tokens``
   tokens (default 10M; V = ``--features``, 8 collections, K = ``--k``;
   with ``--tokens-per-worker``, ``--tokens`` tokens per worker: ``w``
   workers fit a corpus ``w`` times that size, and "vs 1 worker" compares
   throughputs at equal work per worker):
   CompoundLDA's tokens/s (median round after ``--warmup`` rounds), the
   ratio to one worker and to the in-memory estimator (``n_jobs=1``, same
   run), the synchronization overhead per round (the round's wall time
   less the slowest worker's own time, ``sync_seconds_``) in ms and as a
   share of the round, the round split into the slowest worker's sweep,
   its whole task (both timed inside the worker) and the client's own work
   (the round less the sync and the task: merging the changes, the
   estimator's steps between rounds), and the
   bytes of array data sent to and received from the workers per round
   (``sync_bytes_``).
2. Per worker, the peak memory of its process (max RSS, sampled every
   5 ms) above the idle worker's, against its shard (token arrays and
   document-topic counts) plus one K x V table: the issue's bound is 2x,
   and the table says per worker whether it holds. It states the sizes:
   the block of counts the shard is built from, the shard's arrays, the
   table, the snapshot of the shard's rows and the running sum of the
   documents' proportions.
3. The approximation: held-out perplexity on news16 (document
   completion, every fifth document held out) of the distributed fit on 2
   workers with ``local_sweeps`` = 1, 2, 5, against the exact serial
   sampler (``n_jobs=1``) and the threaded AD-LDA (``n_jobs=2``), mean of
   ``--seeds`` seeds at equal sweeps (``--skip-perplexity`` to skip).
4. A projection of the wall time per round for 10^9 tokens on 8, 32 and
   128 machines, from the measured per-token cost of a worker, the
   measured fixed cost of a round, the measured delta entries per token
   and the client's measured cost to merge them, with the network
   bandwidth stated (``--bandwidth``, GB/s at the client).

Run: python benchmarks/bench_dask.py [--tokens 1000000] [--workers 1 2]
     [--worker-threads 2] [--tokens-per-worker]
"""

import _common  # noqa: F401  (pins BLAS/OpenMP threads first)

import argparse  # noqa: E402
import os  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402

from _common import log  # noqa: E402


def _args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--tokens", type=int, default=10_000_000)
    p.add_argument("--features", type=int, default=20_000)
    p.add_argument("--k", type=int, default=100)
    p.add_argument("--workers", type=int, nargs="*", default=None)
    p.add_argument("--worker-threads", type=int, default=1,
                   help="threads of each worker's partitioned sweep (worker_threads)")
    p.add_argument("--tokens-per-worker", action="store_true",
                   help="give each worker --tokens tokens (a corpus of workers x --tokens "
                        "per row) instead of sharing one corpus of --tokens")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--sweeps", type=int, default=8)
    p.add_argument("--seeds", type=int, default=2)
    p.add_argument("--perplexity-sweeps", type=int, default=100)
    p.add_argument("--skip-perplexity", action="store_true")
    p.add_argument("--bandwidth", type=float, default=1.25, help="GB/s at the client")
    return p.parse_args()


def _worker_counts(requested):
    if requested:
        return requested
    counts, n = [], 1
    while n <= (os.cpu_count() or 1):
        counts.append(n)
        n *= 2
    return counts


def _corpus(n_tokens, n_features, seed=0):
    from sklearn_clda.datasets import make_compound_corpus

    doc_length = 250
    per_collection = max(1, n_tokens // (8 * doc_length))
    c = make_compound_corpus(n_topics=100, n_features=n_features, n_collections=8,
                             docs_per_collection=per_collection, doc_length=doc_length,
                             alpha=0.5, gamma=5.0, eta=0.05, random_state=seed)
    return sp.csr_matrix(c.data), np.asarray(c.groups)


def _rss():
    """Resident memory of this (worker) process now, in bytes, once the code
    that a fit runs is imported (the baseline of an idle worker)."""
    import psutil

    import sklearn_clda.dask._shard  # noqa: F401

    return psutil.Process().memory_info().rss


def _start_rss_sampler(dask_worker):
    """In a worker: record the process's largest RSS, sampled every 5 ms, from
    now on (``ru_maxrss`` would include the worker's start-up)."""
    import threading

    import psutil

    process = psutil.Process()
    peak = dask_worker.sklearn_clda_peak_rss = [process.memory_info().rss]

    def sample():
        while True:
            peak[0] = max(peak[0], process.memory_info().rss)
            threading.Event().wait(0.005)

    threading.Thread(target=sample, daemon=True).start()


def _time_rounds(dask_worker):
    """In a worker: from now on, record the seconds of each shard sweep and
    of each whole round task (the sweepers' ``sweep`` and
    ``_shard.shard_round`` wrapped in this process), so that a round can be
    split into the worker's sweep, the rest of its task, and the client."""
    from sklearn_clda import _partition, _sweeper
    from sklearn_clda.dask import _shard

    sweeps, tasks = [], []
    dask_worker.sklearn_clda_round_seconds = (sweeps, tasks)
    for cls in (_partition._PartitionedSweeper, _sweeper._ShardedSweeper):
        plain = cls.sweep

        def timed(self, *args, _plain=plain, **kwargs):
            start = time.perf_counter()
            try:
                return _plain(self, *args, **kwargs)
            finally:
                sweeps.append(time.perf_counter() - start)

        cls.sweep = timed
    plain_round = _shard.shard_round

    def timed_round(*args, **kwargs):
        out = plain_round(*args, **kwargs)
        tasks.append(out["seconds"])
        return out

    _shard.shard_round = timed_round


def _round_seconds(dask_worker):
    """In a worker: ``(sweep seconds, round task seconds)`` since
    :func:`_time_rounds`."""
    return tuple(map(list, dask_worker.sklearn_clda_round_seconds))


def _peak_rss(dask_worker):
    """In a worker: the sampled peak RSS and the RSS now (bytes)."""
    import psutil

    return dask_worker.sklearn_clda_peak_rss[0], psutil.Process().memory_info().rss


def _shard_bytes(V, K):
    """Sizes of the shards in this worker process: ``(tokens, token arrays,
    document-topic counts, K x V table, snapshot of its rows, running sum of
    the documents' proportions)``, bytes. Read after the final gather, which
    frees the table and the snapshot, so those two are their sizes."""
    from sklearn_clda import _sampling
    from sklearn_clda.dask import _shard

    out = []
    for shard in _shard._SHARDS.values():
        st = shard["state"]
        words, z = _shard.token_arrays(shard)  # (a partitioned sweeper's, if it holds them)
        arrays = sum(a.nbytes for a in (words, z, st.doc_ptr, st.doc_len, st.doc_group))
        table = V * _sampling.padded_n_components(K) * 4
        snapshot = shard["rows"].shape[0] * K * 4
        doc_topic = 0 if shard["doc_topic"] is None else shard["doc_topic"].nbytes
        out.append((int(words.shape[0]), arrays, st.ndk.nbytes, table, snapshot, doc_topic))
    return out


def _fit_on(n_workers, X, groups, args):
    """One CompoundLDA fit on a fresh cluster of ``n_workers`` processes.

    Returns the fitted model; per worker, ``(idle RSS, (peak RSS, RSS at
    the end), [shard sizes (see _shard_bytes)])``, the shards read just
    before the fit drops them; and the median over the timed rounds of the
    slowest worker's seconds of its sweep and of its whole task
    (:func:`_time_rounds`).
    """
    from distributed import Client, LocalCluster

    from sklearn_clda.dask import CompoundLDA, _cluster

    memory, sweeps = {}, {}
    drop = _cluster.ShardSet.drop

    def measure_then_drop(shards):
        sweeps.update(shards.client.run(_round_seconds))
        peak = shards.client.run(_peak_rss)
        sizes = shards.client.run(_shard_bytes, X.shape[1], args.k)
        memory.update({w: (idle[w], peak[w], sizes[w]) for w in peak})
        drop(shards)

    with LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                      dashboard_address=None, silence_logs=50) as cluster, \
            Client(cluster, set_as_default=False) as client:
        idle = client.run(_rss)
        client.run(_start_rss_sampler)
        client.run(_time_rounds)
        model = CompoundLDA(n_components=args.k, max_iter=args.warmup + args.sweeps,
                            burn_in=args.warmup, thin=1, random_state=0, client=client,
                            worker_threads=args.worker_threads, timeout=3600)
        _cluster.ShardSet.drop = measure_then_drop
        try:
            model.fit(X, groups=groups)
        finally:
            _cluster.ShardSet.drop = drop
    # one sweep a round (local_sweeps=1): the timed rounds are the last ones
    slowest = [np.max([w[i][-args.sweeps:] for w in sweeps.values()], axis=0) for i in (0, 1)]
    return model, memory, tuple(float(np.median(t)) for t in slowest)


def _round_stats(model, warmup):
    """Median round seconds, median sync seconds and mean bytes (sent, received)."""
    rounds = model.sweep_times_[warmup:]
    return (float(np.median(rounds)), float(np.median(model.sync_seconds_[warmup:])),
            model.sync_bytes_[warmup:].mean(axis=0))


def scaling_table(X, groups, args):
    """Table 1 (and the measurements table 2 and the projection use).

    ``runs[w]`` holds per worker count: the fitted model, each worker's
    memory (see :func:`_fit_on`), the median round's seconds and sync
    seconds, the mean bytes sent and received a round, the corpus's tokens
    and the bytes of each shard's block of counts. With
    ``--tokens-per-worker`` the row of ``w`` workers fits a corpus of ``w``
    times ``X``'s size (weak scaling: "vs 1 worker" is then the ratio of
    throughputs at equal work per worker); ``X`` is the one-worker corpus.
    """
    from sklearn_clda import CompoundLDA

    n_tokens = int(X.sum())
    log(f"in-memory reference, {n_tokens} tokens")
    local = CompoundLDA(n_components=args.k, max_iter=args.warmup + args.sweeps,
                        burn_in=args.warmup, thin=1, random_state=0).fit(X, groups=groups)
    local_rate = n_tokens / float(np.median(local.sweep_times_[args.warmup:]))
    corpus = (f"{n_tokens:,} tokens per worker" if args.tokens_per_worker
              else f"{n_tokens:,} tokens")
    print(f"\n## 1. Scaling: {corpus}, V={X.shape[1]}, K={args.k}, "
          f"worker_threads={args.worker_threads}, "
          f"8 collections; in-memory n_jobs=1: {local_rate / 1e6:.2f}M tokens/s\n")
    print("| workers | tokens/s | vs 1 worker | vs in-memory | sync ms/round "
          "| sync share | ms/round: worker sweep / worker task / client | MB sent/round "
          "| MB received/round |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    runs = {}
    for w in _worker_counts(args.workers):
        Xw, gw = X, groups
        if args.tokens_per_worker and w > 1:
            log(f"corpus of about {w * args.tokens} tokens")
            Xw, gw = _corpus(w * args.tokens, args.features)
        log(f"{w} worker(s)")
        model, memory, (sweep, task) = _fit_on(w, Xw, gw, args)
        seconds, sync, (sent, received) = _round_stats(model, args.warmup)
        tokens_w = int(Xw.sum())
        runs[w] = (model, memory, seconds, sync, sent, received, tokens_w,
                   _block_bytes(Xw, gw, w))
        del Xw, gw
        rate = tokens_w / seconds
        one = runs[min(runs)]
        base = one[6] / one[2]
        print(f"| {w} | {rate / 1e6:.2f}M | {rate / base:.2f}x | {rate / local_rate:.2f}x "
              f"| {1e3 * sync:.1f} | {100 * sync / seconds:.0f}% "
              f"| {1e3 * sweep:.1f} / {1e3 * task:.1f} / {1e3 * (seconds - sync - task):.1f} "
              f"| {sent / 1e6:.2f} "
              f"| {received / 1e6:.2f} |", flush=True)
    return runs, local_rate


def _block_bytes(X, groups, n_workers):
    """Bytes of the block of counts each shard is built from (as the fit
    ships in-memory counts: int32 values and column indices, int64 row
    pointers), by shard."""
    from sklearn_clda.dask import CompoundLDA
    from sklearn_clda.dask._input import shard_specs

    specs, _ = shard_specs(CompoundLDA(), X, groups, n_workers, "bench")
    return [sum(b.data.nbytes + b.indices.nbytes + b.indptr.nbytes for b in blocks)
            for blocks, _, _ in specs]


def memory_table(runs):
    """Table 2: each worker's peak memory against its shard plus one table."""
    print("\n## 2. Worker memory above the idle worker's RSS (sampled every 5 ms)\n")
    print("| workers | worker | shard tokens | block MB | words, z, docs MB | ndk MB "
          "| K x V table MB | snapshot MB | doc_topic MB | peak MB | at the end MB "
          "| peak / (shard + table) | <= 2x |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|:---:|")
    verdicts = []
    for w, (_, memory, *_rest, blocks) in runs.items():
        for j, (_, (idle, (peak, end), sizes)) in enumerate(sorted(memory.items())):
            tokens, arrays, ndk, table, snap, theta = (sum(c) for c in zip(*sizes))
            ratio = (peak - idle) / max(arrays + ndk + table, 1)
            verdicts.append(ratio <= 2)
            print(f"| {w} | {j} | {tokens:,} | {blocks[j] / 1e6:.1f} | {arrays / 1e6:.1f} "
                  f"| {ndk / 1e6:.1f} | {table / 1e6:.1f} | {snap / 1e6:.1f} "
                  f"| {theta / 1e6:.1f} | {(peak - idle) / 1e6:.1f} | {(end - idle) / 1e6:.1f} "
                  f"| {ratio:.2f} | {'yes' if ratio <= 2 else 'NO'} |")
    print("\nShard = its token arrays (words and topics, int32; document pointers, "
          "lengths and collections) and its document-topic counts (int32, "
          "documents x K); table = one K x V int32 table (K padded to a multiple "
          "of 8). The peak also holds what the bound does not count: the block "
          "of counts the shard is built from, the worker's snapshot of its "
          "shard's rows of the table, the messages of a round, the running sum "
          "of the documents' proportions (float64, documents x K) and, at the "
          "end, the topics (a float64 K x V table).")
    print(f"\nIssue 10's bound, peak <= 2 x (shard + one K x V table): "
          f"{'holds on every worker' if all(verdicts) else 'EXCEEDED on some worker'}.")


def perplexity_table(args):
    """Table 3: the approximation's effect on held-out perplexity (news16)."""
    from distributed import Client, LocalCluster

    import sklearn_clda
    from sklearn_clda.dask import CompoundLDA
    from sklearn_clda.datasets import load_news16

    news = load_news16()
    X, g = sp.csr_matrix(news.data), np.asarray(news.groups)
    test = np.arange(X.shape[0]) % 5 == 0
    params = {"n_components": 20, "max_iter": args.perplexity_sweeps, "thin": 2}
    rows = {}
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=None, silence_logs=50) as cluster, \
            Client(cluster, set_as_default=False) as client:
        fits = {
            "in-memory, n_jobs=1 (exact)": lambda s: sklearn_clda.CompoundLDA(
                n_jobs=1, random_state=s, **params),
            "in-memory, n_jobs=2 (AD-LDA)": lambda s: sklearn_clda.CompoundLDA(
                n_jobs=2, random_state=s, **params),
            # Equal sweeps: max_iter counts rounds of k sweeps (and one kept
            # sample per round at most).
            **{f"Dask, 2 workers, local_sweeps={k}": (
                lambda s, k=k: CompoundLDA(client=client, local_sweeps=k, random_state=s,
                                           **{**params, "max_iter": params["max_iter"] // k,
                                              "thin": max(1, params["thin"] // k)}))
               for k in (1, 2, 5)},
        }
        for name, make in fits.items():
            log(name)
            rows[name] = [make(s).fit(X[~test], groups=g[~test]).perplexity(
                X[test], groups=g[test]) for s in range(args.seeds)]
    exact = np.mean(rows["in-memory, n_jobs=1 (exact)"])
    print(f"\n## 3. The approximation: news16 held-out perplexity, K=20, "
          f"{params['max_iter']} sweeps, mean of {args.seeds} seeds\n")
    print("| fit | perplexity | vs exact | per seed |")
    print("|---|---:|---:|---|")
    for name, values in rows.items():
        print(f"| {name} | {np.mean(values):.1f} | {np.mean(values) / exact - 1:+.2%} "
              f"| {', '.join(f'{v:.1f}' for v in values)} |")


def _merge_seconds_per_entry(K, n_features):
    """The client's cost to merge sparse deltas, per delta entry (measured)."""
    from sklearn_clda.dask._messages import DeltaMerger

    rng = np.random.default_rng(0)
    n = min(1_000_000, n_features * K // 2)
    parts = [(np.sort(rng.choice(n_features * K, n, replace=False)).astype(np.int32),
              rng.integers(-3, 4, n).astype(np.int32)) for _ in range(2)]
    merger = DeltaMerger(n_features * K)
    start = time.perf_counter()
    merger.merge(parts, np.int32)
    return (time.perf_counter() - start) / (2 * n)


def projection(runs, X, args):
    """Table 4: wall time per round for 10^9 tokens on 8, 32 and 128 machines."""
    one = runs[min(runs)]
    seconds, sync = one[2], one[3]
    per_token = (seconds - sync) / one[6] * min(runs)  # one worker's sweep cost
    fixed = min(r[3] for r in runs.values())  # the smallest measured sync cost
    # delta entries (8 bytes each) received per token of a worker's shard
    entries_per_token = np.mean([r[5] / 8 / r[6] for r in runs.values()])
    merge = _merge_seconds_per_entry(args.k, X.shape[1])
    table_entries = X.shape[1] * args.k
    bandwidth = args.bandwidth * 1e9
    threads = ("single-threaded" if args.worker_threads == 1
               else f"{args.worker_threads}-thread")
    print("\n## 4. Projection: 10^9 tokens, V={:,}, K={} (one {} worker "
          "process per machine)\n".format(X.shape[1], args.k, threads))
    print(f"Measured here: {per_token * 1e9:.1f} ns per token per worker; a round's "
          f"fixed cost {1e3 * fixed:.1f} ms; {entries_per_token:.3f} delta entries per "
          f"token (8 bytes each); the client merges {1 / merge / 1e6:.1f}M entries/s. "
          f"Network: {args.bandwidth:g} GB/s at the client.\n")
    print("| machines | tokens per machine | sampling s | delta MB up (all) "
          "| MB down (all) | network s | merge s | round s | sync share |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for m in (8, 32, 128):
        t = 1e9 / m
        up = min(entries_per_token * t, table_entries)  # per worker
        merged = min(m * up, table_entries)
        up_bytes, down_bytes = 8 * m * up, 8 * m * merged
        sampling = per_token * t
        network = (up_bytes + down_bytes) / bandwidth
        merging = merge * m * up
        total = sampling + fixed + network + merging
        print(f"| {m} | {t / 1e6:.0f}M | {sampling:.2f} | {up_bytes / 1e6:.0f} "
              f"| {down_bytes / 1e6:.0f} | {network:.2f} | {merging:.2f} | {total:.2f} "
              f"| {(total - sampling) / total:.0%} |")
    print("\nThe client's link and merge grow with the machines while each "
          "machine's sampling shrinks; past a few dozen machines the round is "
          "bound by them (a reduction tree of merges, or per-machine threads, "
          "are the next levers).")


def main():
    args = _args()
    log(f"corpus of about {args.tokens} tokens")
    X, groups = _corpus(args.tokens, args.features)
    runs, _ = scaling_table(X, groups, args)
    memory_table(runs)
    projection(runs, X, args)
    if not args.skip_perplexity:
        perplexity_table(args)


if __name__ == "__main__":
    main()

"""Where the partitioned sweep's threads spend a sweep: in their cells or waiting.

For news16 and a ``--tokens`` synthetic corpus (``bench_threads``'
corpora, K = ``-K``), the topics are warmed up for ``--warmup`` sweeps on
all CPUs; then for P = 1, 2, 4, ... up to the CPU count, a partitioned
sweeper of P blocks on P threads starts from those topics and runs
``--sweeps`` timed sweeps (after one untimed). Reported per P:

- ms per sweep (median) and the speed-up over P = 1;
- busy share: the mean over threads of the seconds spent sweeping their
  cells (``busy_seconds``) over the sweeps' wall time, and the same for the
  least and the most busy thread; the rest is waiting at the sub-steps'
  barriers (imbalance, barrier latency) and the sweep's serial part;
- ns per token in the cells: all threads' busy seconds over the tokens
  swept, and its ratio to P = 1 (above 1: each token costs a thread more
  with P running, from the cells' smaller pieces or from sharing the
  machine's caches and memory).

The speed-up is about P x busy share / (ns per token ratio), so the table
says which of the two holds a thread count back. Each corpus is timed
three ways: as LDA (z-step only); as CompoundLDA's AGS sweep, which also
draws every document block's Antoniak table counts after the z-step (in
the same threads, outside the cells' busy time), so the difference in ms
per sweep is what the table draws cost; and as LDA with the word-topic
rows on whole cache lines ("LDA, 64B rows": at K=100 a row is 416 bytes,
so neighbouring words, which the word blocks deal to different threads,
share a line that both threads write; padded to 448 bytes they do not).
A fourth way, "LDA, 2P blocks", cuts the corpus into twice as many blocks
as threads (2P sub-steps of 2P cells, which the threads claim as they
come free): smaller cells that even out cells of unequal cost, at twice
the barriers; its ns per token is compared with one thread on 2 blocks.

Run: python benchmarks/bench_partition.py [--tokens 10000000] [--max-workers N]
[--kinds LDA AGS]
"""

import _common  # noqa: F401  (pins BLAS/OpenMP threads first)

import argparse  # noqa: E402
import os  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from _common import format_table, load_news16, log, synthetic_corpus  # noqa: E402
from bench_threads import worker_counts  # noqa: E402


def _args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--tokens", type=int, default=10_000_000,
                   help="tokens of the synthetic corpus (0: news16 only)")
    p.add_argument("--max-workers", type=int, default=os.cpu_count())
    p.add_argument("-K", type=int, default=100)
    p.add_argument("--warmup", type=int, default=50)
    p.add_argument("--sweeps", type=int, default=8)
    p.add_argument("--kinds", nargs="+", choices=list(KINDS), default=list(KINDS),
                   help="the sweeps to time (default: all four)")
    return p.parse_args(argv)


def _groups(corpus):
    return np.unique(corpus.groups, return_inverse=True)[1].astype(np.int32)


def warm_topics(corpus, K, workers, sweeps):
    """Topics after ``sweeps`` partitioned sweeps on ``workers`` threads."""
    from sklearn_clda._sweeper import _GibbsState, make_sweeper

    state = _GibbsState(corpus.X, _groups(corpus), K, np.random.default_rng(0))
    prior = np.full((int(_groups(corpus).max()) + 1, K), 0.1)
    with make_sweeper(state, workers, np.random.SeedSequence(0), 0) as sweeper:
        for _ in range(sweeps):
            sweeper.sweep(prior, 0.01)
    return state.z.copy()


# The sweeps timed: (with the AGS table draws, word-topic rows on whole
# lines, blocks per thread)
KINDS = {"LDA": (False, False, 1), "AGS": (True, False, 1),
         "LDA, 64B rows": (False, True, 1), "LDA, 2P blocks": (False, False, 2)}


def _rows_on_lines(state):
    """Move the state's word-topic table into rows of whole 64-byte lines
    (the kernels take any row stride; the padding stays zero)."""
    from sklearn_clda import _sampling

    V, K_pad = state.nwk_padded.shape
    stride = 16 * -(-K_pad // 16)
    wide = _sampling._line_buffer(V * stride, np.int32).reshape(V, stride)
    wide[:, :K_pad] = state.nwk_padded
    state.nwk_padded = wide[:, :K_pad]
    state.nwk = state.nwk_padded[:, :state.nk.shape[0]]


def time_blocks(corpus, K, z, P, sweeps, kind="LDA"):
    """(median seconds per sweep, busy seconds per thread per sweep, mean
    seconds per sweep) of the sweep ``kind`` (see ``KINDS``)."""
    from sklearn_clda._partition import _PartitionedSweeper
    from sklearn_clda._sweeper import _GibbsState

    tables, line_rows, per_thread = KINDS[kind]
    groups = _groups(corpus)
    state = _GibbsState(corpus.X, groups, K, None, z=z.copy())
    if line_rows:
        _rows_on_lines(state)
    prior = np.full((int(groups.max()) + 1, K), 0.1)
    n_table_rows = prior.shape[0] if tables else 0
    sweeper = _PartitionedSweeper(state, per_thread * P, np.random.SeedSequence(1),
                                  n_table_rows, P)
    times = []
    with sweeper:
        sweeper.sweep(prior, 0.01)
        before = sweeper.busy_seconds()
        for _ in range(sweeps):
            start = time.perf_counter()
            sweeper.sweep(prior, 0.01)
            times.append(time.perf_counter() - start)
    return float(np.median(times)), (sweeper.busy_seconds() - before) / sweeps, sum(times) / sweeps


def table(name, corpus, args):
    counts = worker_counts(args.max_workers)
    n_tokens = int(corpus.X.sum())
    z = warm_topics(corpus, args.K, args.max_workers, args.warmup)
    rows = []
    for kind in args.kinds:
        rows += _rows(name if not rows else "", corpus, args, counts, n_tokens, z, kind)
    return format_table(["corpus", "sweep", "threads", "ms/sweep", "speed-up", "busy share",
                         "least-most busy", "ns/token in cells", "vs 1 thread"],
                        rows, "llrrrrrrr")


def _rows(name, corpus, args, counts, n_tokens, z, kind):
    rows, base = [], None
    for P in counts:
        median, busy, mean_wall = time_blocks(corpus, args.K, z, P, args.sweeps, kind)
        per_token = 1e9 * busy.sum() / n_tokens
        base = base or (median, per_token)
        rows.append([name if not rows else "", "" if rows else kind,
                     P, f"{1e3 * median:.1f}",
                     f"{base[0] / median:.2f}x", f"{busy.mean() / mean_wall:.0%}",
                     f"{busy.min() / mean_wall:.0%}-{busy.max() / mean_wall:.0%}",
                     f"{per_token:.1f}", f"{per_token / base[1]:.2f}x"])
        log(f"P={P} done")
    return rows


def main(argv=None):
    args = _args(argv)
    corpora = [("news16", load_news16())]
    if args.tokens:
        corpora.append((f"synthetic {args.tokens / 1e6:g}M", synthetic_corpus(args.tokens)))
    print(f"# {os.cpu_count()} CPUs; K={args.K}; topics warmed up for {args.warmup} sweeps "
          f"on {args.max_workers} threads; {args.sweeps} timed sweeps per row")
    for name, corpus in corpora:
        print(table(name, corpus, args), flush=True)
        print()


if __name__ == "__main__":
    main()

"""Sweep cost and peak memory of CompoundLDA as the number of collections grows.

One corpus of ``--docs`` documents (``--doc-length`` tokens each, simulated
by ``make_compound_corpus``) is fitted with its documents dealt round-robin
into 2, 100, 1000 and 10^4 collections (at most one per document), for each
K in ``--ks`` and each algorithm in ``--algorithms``. The documents are the
same in every row: only the grouping changes. Each row runs in a fresh
process; it reports the median milliseconds per sweep (``sweep_times_``,
which includes the Antoniak and pi steps, or the MMALA step) over
``--sweeps`` sweeps after ``--warmup``, the peak resident memory of that
process (``ru_maxrss``), and both as ratios to the 2-collection row.

Before the compact Antoniak draws, one collection per document cost
O(collections x K x 64) per sweep in time and memory: on 10^4 documents,
16 times the 2-collection sweep and 2 GB at K=100, 21 times and 18 GB at
K=1000.

Run: python benchmarks/bench_collections.py [--ks 100 1000] [--json out.json]
"""

import _common  # noqa: F401  (pins BLAS/OpenMP threads first)

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402

from _common import environment_info, format_table, load_average, log  # noqa: E402

_CHILD = r"""
import json, resource, sys, warnings
import numpy as np
from sklearn_clda import CompoundLDA
from sklearn_clda.datasets import make_compound_corpus
n_docs, doc_length, K, n_groups, warmup, sweeps = (int(a) for a in sys.argv[1:7])
algorithm = sys.argv[7]
warnings.simplefilter("ignore")
c = make_compound_corpus(n_topics=K, n_features=5000, n_collections=100,
                         docs_per_collection=n_docs // 100, doc_length=doc_length,
                         alpha=1.0, gamma=0.1 * K, eta=0.01, random_state=0)
groups = np.arange(c.data.shape[0]) % n_groups
data_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
m = CompoundLDA(K, algorithm=algorithm, eta=0.01, max_iter=warmup + sweeps,
                burn_in=warmup + sweeps - 1, thin=1, random_state=0)
m.fit(c.data, groups=groups)
print(json.dumps(dict(
    tokens=int(m.n_tokens_), ms_per_sweep=1e3 * float(np.median(m.sweep_times_[warmup:])),
    peak_mib=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    data_mib=data_kib / 1024)))
"""


def run_row(n_docs, doc_length, K, n_groups, warmup, sweeps, algorithm):
    """Fit in a fresh process; its own peak RSS is the row's memory."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [_common.REPO_ROOT, os.environ.get("PYTHONPATH", "")]))
    cmd = [sys.executable, "-c", _CHILD, *(str(a) for a in (
        n_docs, doc_length, K, n_groups, warmup, sweeps, algorithm))]
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def collections_table(args):
    rows, records = [], []
    for algorithm in args.algorithms:
        for K in args.ks:
            base = None
            for n_groups in args.collections:
                n_groups = min(n_groups, args.docs)
                log(f"{algorithm}, K={K}, {n_groups} collections (fresh process)")
                r = run_row(args.docs, args.doc_length, K, n_groups, args.warmup,
                            args.sweeps, algorithm)
                r.update(algorithm=algorithm, K=K, collections=n_groups)
                base = base or r
                r["time_ratio"] = r["ms_per_sweep"] / base["ms_per_sweep"]
                r["memory_ratio"] = r["peak_mib"] / base["peak_mib"]
                records.append(r)
                rows.append([algorithm, K, n_groups, f"{r['ms_per_sweep']:.1f}",
                             f"{r['time_ratio']:.2f}x", f"{r['peak_mib']:.0f}",
                             f"{r['memory_ratio']:.2f}x"])
    print(format_table(["algorithm", "K", "collections", "ms/sweep", "vs 2",
                        "peak MiB", "vs 2"], rows, align="lrrrrrr"))
    tokens = records[0]["tokens"] if records else 0
    print(f"({args.docs} documents, {tokens / 1e6:.2f}M tokens; median of {args.sweeps} "
          f"sweeps after {args.warmup}; peak RSS of a fresh process, of which "
          f"{records[0]['data_mib']:.0f} MiB before the fit; load {load_average()})")
    return records


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ks", type=int, nargs="+", default=[100])
    p.add_argument("--collections", type=int, nargs="+", default=[2, 100, 1000, 10000])
    p.add_argument("--algorithms", nargs="+", default=["ags", "mgs"],
                   choices=["ags", "mgs"])
    p.add_argument("--docs", type=int, default=10000)
    p.add_argument("--doc-length", type=int, default=100)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--sweeps", type=int, default=10)
    p.add_argument("--json", default=None, help="write the results to this file")
    args = p.parse_args(argv)
    print(json.dumps(environment_info()))
    records = collections_table(args)
    if args.json:
        _common.write_json(args.json, dict(args=vars(args), rows=records))
    return 0


if __name__ == "__main__":
    sys.exit(main())

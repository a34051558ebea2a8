"""The paper's table "Estimated values of pi via AGS, MGS, and VEM".

Synthetic setup of the paper's Section "Empirical Evaluation of Samples pi":
J=2 collections, K=3 topics, V=40 words, D_j=100 documents per collection,
(alpha, gamma, eta) = (.1, 1, .25), pi initialized at (1/3, 1/3, 1/3), 2000
iterations. The true mixtures are the paper's, pi_1 = (.002, eps, .997) and
pi_2 = (.584, .386, .030); topics beta_k ~ Dir(eta) and theta_jd ~
Dir(gamma pi_j) are simulated (the paper does not state document lengths;
we use 200 tokens).

For each algorithm it prints the final estimate of each pi_j (topics aligned
to the truth by Hungarian assignment on total variation), its L1 distance to
the truth, and the first iteration at which the chain's pi_j draw is within
the paper's L1 regions (.003 for pi_1, .07 for pi_2). The paper reports
AGS 42 and 23 iterations, MGS 248 and 139, and VEM never reaching them (it
stops .08 and .18 away).

Run: python benchmarks/bench_synthetic_pi.py [--seeds 0 1 2] [--n-iter 2000]
"""

import argparse
import sys
import time
import warnings

import numpy as np
import scipy.sparse as sp

from sklearn_clda import CompoundLDA
from sklearn_clda.metrics import align_topics

PI_TRUE = np.array([[0.002, 0.001, 0.997], [0.584, 0.386, 0.030]])
PI_TRUE = PI_TRUE / PI_TRUE.sum(axis=1, keepdims=True)
REGIONS = (0.003, 0.07)


def simulate(seed, n_docs=100, doc_length=200, V=40, alpha=0.1, gamma=1.0, eta=0.25):
    """The cLDA generative model with the paper's fixed pi."""
    rng = np.random.default_rng(seed)
    J, K = PI_TRUE.shape
    beta = rng.dirichlet(np.full(V, eta), size=K)
    rows, groups = [], []
    for j in range(J):
        theta = rng.dirichlet(np.maximum(gamma * PI_TRUE[j], 1e-300), size=n_docs)
        topic_counts = np.array([rng.multinomial(doc_length, t) for t in theta])
        for counts in topic_counts:
            words = np.zeros(V, dtype=np.int64)
            for k, c in enumerate(counts):
                if c:
                    words += rng.multinomial(c, beta[k])
            rows.append(words)
            groups.append(j)
    return sp.csr_matrix(np.array(rows)), np.array(groups), beta


def first_hit(samples, j, region):
    """1-based iteration of the first draw within the L1 region, or None."""
    dist = np.abs(samples[:, j, :] - PI_TRUE[j]).sum(axis=1)
    hits = np.flatnonzero(dist <= region)
    return int(hits[0]) + 1 if hits.size else None


def run(seed, n_iter):
    X, groups, beta = simulate(seed)
    rows = []
    for algorithm in ("ags", "mgs", "vem"):
        est = CompoundLDA(
            n_components=3, alpha=0.1, gamma=1.0, eta=0.25, algorithm=algorithm,
            max_iter=n_iter, burn_in=0, thin=1, random_state=seed,
        )
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est.fit(X, groups=groups)
        seconds = time.perf_counter() - start
        perm, _ = align_topics(beta, est.components_)
        samples = est.collection_topic_samples_[:, :, perm]
        last = samples[-1]
        dist = np.abs(last - PI_TRUE).sum(axis=1)
        hits = [first_hit(samples, j, REGIONS[j]) for j in range(2)]
        if algorithm == "vem":
            hits = ["-" if dist[j] > REGIONS[j] else f"<={est.n_iter_}" for j in range(2)]
        rows.append((algorithm.upper(), last, dist, hits, est.n_iter_, seconds))
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--n-iter", type=int, default=2000)
    args = parser.parse_args(argv)
    fmt = lambda v: "(" + ", ".join(f"{x:.3f}" for x in v) + ")"  # noqa: E731
    print(f"true pi_1 = {fmt(PI_TRUE[0])}, pi_2 = {fmt(PI_TRUE[1])}; "
          f"regions L1 <= {REGIONS[0]} and {REGIONS[1]}")
    header = (f"{'seed':>4} {'method':>6} {'pi_1 (last)':>22} {'pi_2 (last)':>22} "
              f"{'L1_1':>6} {'L1_2':>6} {'hit_1':>6} {'hit_2':>6} {'iters':>6} {'sec':>6}")
    print(header)
    print("-" * len(header))
    for seed in args.seeds:
        for name, last, dist, hits, n_iter, seconds in run(seed, args.n_iter):
            h = [str(x) if x is not None else "never" for x in hits]
            print(f"{seed:>4} {name:>6} {fmt(last[0]):>22} {fmt(last[1]):>22} "
                  f"{dist[0]:>6.3f} {dist[1]:>6.3f} {h[0]:>6} {h[1]:>6} "
                  f"{n_iter:>6} {seconds:>6.1f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Mixing per sweep at many topics: the sparse MH sampler against the dense one.

Two measurements on news16 (alpha 0.1, eta 0.01, one thread):

1. chains (``--seeds``, default 0-3, each sampler of ``--samplers``, default
   ``dense,sparse``): one ``LDAGibbs`` chain per seed and sampler at
   K = ``--k``, continued with ``warm_start`` from checkpoint to checkpoint
   (``--checkpoints``, default 100,200,500,1000), and the held-out
   perplexity of the chain's last state at each checkpoint (document
   completion split of ``bench_large_k.py`` part 2; the topics and the
   held-out documents' proportions computed from ``z``, so the estimator's
   averaging of kept samples, which warm-start continuations carry over,
   plays no part). Per checkpoint and sampler:
   each chain, the mean and the standard deviation over chains
   (``--mh-steps``: the MH samplers' steps per token, default 2). One chain
   says little: at K = 1000 chains of one sampler end 1000 sweeps up to
   15 apart. The seconds are not reported (the warm-start fits also sum
   kept samples): ``bench_large_k.py`` times the samplers.
2. transition (``--transition-tokens``, default 300; 0 skips it): after
   ``--transition-burn`` sparse sweeps from a random start (the kernels of
   ``bench_large_k.py`` part 4), for tokens drawn at random, the exact
   conditional p of the token's topic, the sparse kernel's proposal q
   from its current topic (``_sparse_mh_kernel.h``), and the distribution
   after one and two Metropolis-Hastings steps (the kernel's
   ``mh_steps=1`` and the default 2), computed exactly; printed: the mean
   total-variation distance of each from p. A small distance after the
   steps means that a sparse sweep moves the chain like an exact Gibbs
   sweep.

    python benchmarks/bench_mixing.py                       # about 30 min on one core
    python benchmarks/bench_mixing.py --seeds 4 --samplers sparse --transition-tokens 0
"""

import _common as C  # first: pins BLAS/OpenMP to one thread

import argparse  # noqa: E402
import statistics  # noqa: E402

import numpy as np  # noqa: E402

import bench_large_k as B  # noqa: E402


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--k", type=int, default=1000)
    p.add_argument("--seeds", default="0,1,2,3", help="comma list of random_state values")
    p.add_argument("--samplers", default="dense,sparse")
    p.add_argument("--mh-steps", type=int, default=2, help="mh_steps of the MH samplers' chains")
    p.add_argument("--checkpoints", default="100,200,500,1000")
    p.add_argument("--transition-tokens", type=int, default=300)
    p.add_argument("--transition-burn", type=int, default=150)
    p.add_argument("--json", metavar="FILE", help="also write results as JSON")
    return p.parse_args(argv)


def last_state_perplexity(model, split, K):
    """Held-out perplexity of the chain's current state (from ``z``), as
    ``bench_large_k.py`` part 2 computes it."""
    from sklearn_clda.metrics import perplexity_from_estimates

    X = split.X_train_full.tocsr()
    z = model._warm_chain.z
    words = np.repeat(X.indices, X.data).astype(np.int64)
    doc = np.repeat(np.arange(X.shape[0]), np.asarray(X.sum(axis=1)).ravel().astype(np.int64))
    nwk = np.bincount(words * K + z, minlength=X.shape[1] * K).reshape(X.shape[1], K)
    ndk = np.bincount(doc * K + z, minlength=X.shape[0] * K).reshape(X.shape[0], K)
    theta = (ndk + B.ALPHA) / (ndk.sum(axis=1, keepdims=True) + K * B.ALPHA)
    return perplexity_from_estimates(theta[split.heldout_idx], nwk.T + B.ETA, split.X_test)


def chain(split, K, sampler, seed, checkpoints, mh_steps=2):
    """Last-state held-out perplexity of one chain at each checkpoint."""
    from sklearn_clda import LDAGibbs

    model, done, out = None, 0, []
    for n in checkpoints:
        C.log(f"chains K={K} {sampler} seed {seed}: {n} sweeps")
        if model is None:
            model = LDAGibbs(n_components=K, doc_topic_prior=B.ALPHA, topic_word_prior=B.ETA,
                             sampler=sampler, mh_steps=mh_steps, max_iter=n,
                             random_state=seed, warm_start=True,
                             **C.last_state_kwargs(n))
        else:
            model.set_params(max_iter=n - done)
        model.fit(split.X_train_full)
        done = n
        out.append(last_state_perplexity(model, split, K))
    return out


def part_chains(corpus, args):
    split = C.document_completion_split(corpus, 0.2, seed=0)
    checkpoints = [int(c) for c in args.checkpoints.split(",")]
    seeds = [int(s) for s in args.seeds.split(",")]
    results, rows = {}, []
    for sampler in filter(None, args.samplers.split(",")):
        runs = [chain(split, args.k, sampler, s, checkpoints, args.mh_steps) for s in seeds]
        results[sampler] = runs
        for i, n in enumerate(checkpoints):
            vals = [r[i] for r in runs]
            sd = statistics.stdev(vals) if len(vals) > 1 else float("nan")
            rows.append([sampler, n, " ".join(f"{v:.1f}" for v in vals),
                         f"{statistics.mean(vals):.1f}", f"{sd:.1f}"])
    print(C.format_table(["sampler", "sweeps", f"chains (seeds {args.seeds})", "mean", "sd"],
                         rows))
    return results


def _mh_row(p, s, list_part, word_base, c, nw, nd, inv, n_w, K):
    """The distribution after one MH step of the sparse kernel from topic s."""
    Z = list_part.sum() + c * (n_w + K * B.ETA)
    q = (list_part + c * word_base) / Z                # q(t | s) for t != s
    back = (nw[s] + B.ETA) * (nd[s] * inv[s] + c) / Z  # q(s | t) for t != s
    row = q * np.minimum(1.0, p * back / (p[s] * q))
    row[s] = 0.0
    row[s] = 1.0 - row.sum()
    return row


def part_transition(corpus, args):
    from sklearn_clda import _mh_sampling

    K = args.k
    s = B._kernel_state(corpus.X, K)
    for _ in range(args.transition_burn):
        B._kernel_sweep("sparse", s)
    nwk, ndk, nk = s["nwk"][:, :K].astype(float), s["ndk"].astype(float), s["nk"].astype(float)
    V, veta = nwk.shape[0], nwk.shape[0] * B.ETA
    doc = np.repeat(np.arange(len(s["doc_len"])), s["doc_len"])
    n_word = np.bincount(s["words"], minlength=V)
    c = _mh_sampling.sparse_weights(s["prior"], s["nk"], B.ETA, V)[0]
    tv = {"proposal": [], "1 step": [], "2 steps": []}
    for i in np.random.default_rng(1).choice(len(s["words"]), args.transition_tokens, False):
        w, d, s0 = s["words"][i], doc[i], s["z"][i]
        nw, nd, nkk = nwk[w].copy(), ndk[d].copy(), nk.copy()
        nw[s0] -= 1; nd[s0] -= 1; nkk[s0] -= 1  # noqa: E702
        inv = 1.0 / (nkk + veta)
        p = (nd + B.ALPHA) * (nw + B.ETA) * inv
        p /= p.sum()
        list_part = (nw + B.ETA) * nd * inv
        one = _mh_row(p, s0, list_part, nw + B.ETA, c, nw, nd, inv, n_word[w], K)
        two = sum(one[t] * _mh_row(p, t, list_part, nw + B.ETA, c, nw, nd, inv, n_word[w], K)
                  for t in np.nonzero(one > 1e-12)[0])
        word = nw + B.ETA
        word[s0] += 1
        q = (list_part + c * word) / (list_part.sum() + c * (n_word[w] + K * B.ETA))
        for name, dist in (("proposal", q), ("1 step", one), ("2 steps", two)):
            tv[name].append(0.5 * np.abs(dist - p).sum())
    kd = ((s["ndk"] > 0).sum(axis=1) * s["doc_len"]).sum() / s["doc_len"].sum()
    print(f"K={K}, after {args.transition_burn} sparse sweeps (topics/doc token-weighted "
          f"{kd:.0f}), {args.transition_tokens} random tokens:")
    print(C.format_table(["distribution", "mean TV distance from the exact conditional"],
                         [[k, f"{np.mean(v):.4f}"] for k, v in tv.items()]))
    return {k: float(np.mean(v)) for k, v in tv.items()}


def main(argv=None):
    args = parse_args(argv)
    corpus = C.load_news16()
    results = {"env": C.environment_info()}
    if args.transition_tokens > 0:
        print("\n== transition")
        results["transition"] = part_transition(corpus, args)
    if args.seeds:
        print("\n== chains")
        results["chains"] = part_chains(corpus, args)
    if args.json:
        C.write_json(args.json, results)


if __name__ == "__main__":
    main()

"""Learned hyperparameters on 16-newsgroups: Gibbs-EM against fixed priors and the peers.

On one document-completion split (20% held-out documents, halves observed /
test), with the same sweeps for every model, one thread each:

* CompoundLDA (4 collections) with fixed priors (gamma = 0.1 K, eta = 0.01);
* CompoundLDA learning eta and gamma by Gibbs-EM (``learn_priors=True``),
  started from the same values; and learning eta only;
* LDAGibbs with doc_topic_prior = 0.1 fixed, and learning doc_topic_prior
  (symmetric) and topic_word_prior by Gibbs-EM;
* tomotopy DMRModel (collection as metadata, lambdas optimized every 10
  sweeps) and tomotopy LDAModel with its alpha optimization on.

Printed: the learned values, fit seconds, held-out perplexity and the ratio
to DMR's. The paper reports (eta, gamma) = (.05, 2.07) at K=30.

Run: python benchmarks/bench_priors.py [--k 30] [--n-iter 1000]
"""

import _common as C  # first: pins BLAS/OpenMP to one thread

import argparse  # noqa: E402
import sys  # noqa: E402
import warnings  # noqa: E402


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--k", type=int, default=30)
    p.add_argument("--n-iter", type=int, default=1000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--json", default=None)
    args = p.parse_args(argv)
    warnings.simplefilter("ignore")
    K, S, seed = args.k, args.n_iter, args.seed

    corpus = C.load_news16()
    split = C.document_completion_split(corpus, seed=seed)
    runs = []

    def add(res, learned):
        C.log(f"  {res.name}: {res.fit_seconds:.1f}s, perplexity {res.perplexity:.2f}")
        runs.append((res, learned))

    C.log("CompoundLDA fixed priors")
    add(C.run_compound_lda(split, K, S, seed=seed, name="CompoundLDA fixed"), "")
    C.log("CompoundLDA learn eta, gamma")
    res = C.run_compound_lda(split, K, S, seed=seed, learn_priors=True,
                             name="CompoundLDA learn eta+gamma")
    m = res.extra["model"]
    add(res, f"eta={m.eta_:.4f} gamma={m.gamma_:.3f}")
    C.log("CompoundLDA learn eta")
    res = C.run_compound_lda(split, K, S, seed=seed, learn_priors="eta",
                             name="CompoundLDA learn eta")
    add(res, f"eta={res.extra['model'].eta_:.4f}")
    C.log("LDAGibbs fixed")
    add(C.run_lda_gibbs(split, K, S, seed=seed, name="LDAGibbs fixed"), "")
    C.log("LDAGibbs learn alpha, eta")
    res = C.run_lda_gibbs(split, K, S, seed=seed, learn_priors=True,
                          name="LDAGibbs learn alpha+eta")
    m = res.extra["model"]
    add(res, f"alpha={m.doc_topic_prior_:.4f} eta={m.topic_word_prior_:.4f}")
    C.log("tomotopy DMR")
    add(C.run_tomotopy_dmr(split, K, S, seed=seed), "lambdas optimized")
    C.log("tomotopy LDA (alpha optimized)")
    add(C.run_tomotopy_lda(split, K, S, seed=seed, optimize_alpha=True),
        "alpha optimized")

    dmr = next(r for r, _ in runs if r.name == "tomotopy DMR").perplexity
    rows = [[r.name, learned, f"{r.fit_seconds:.1f}", f"{r.perplexity:.2f}",
             f"{r.perplexity / dmr:.4f}"] for r, learned in runs]
    print(f"news16, K={K}, {S} sweeps, seed {seed}; {split.n_train_tokens:,} training "
          f"tokens, {split.n_test_tokens:,} test tokens")
    print(C.format_table(["model", "learned", "fit s", "perplexity", "vs DMR"], rows,
                         align="llrrr"))
    if args.json:
        C.write_json(args.json, [dict(name=r.name, learned=learned, seconds=r.fit_seconds,
                                      perplexity=r.perplexity) for r, learned in runs])
    return 0


if __name__ == "__main__":
    sys.exit(main())

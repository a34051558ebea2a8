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

Every model is shown with both kinds of estimate, each compared like for
like: its last state (ours refitted with ``burn_in = n_iter - 1, thin = 1``,
the same chain keeping only its final sample) and its estimate averaged
over the sweeps our estimators keep (the peers' count tables read and
averaged at those sweeps, ``_stepped.py``). Printed: the learned values,
fit seconds, held-out perplexity of both estimates and their ratios to
DMR's of the same kind. The paper reports (eta, gamma) = (.05, 2.07) at
K=30.

Run: python benchmarks/bench_priors.py [--k 30] [--n-iter 1000]
"""

import _common as C  # first: pins BLAS/OpenMP to one thread

import argparse  # noqa: E402
import sys  # noqa: E402
import warnings  # noqa: E402

from _stepped import TomotopyChain, kept_sweeps, run_chain  # noqa: E402


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

    def ours(runner, name, learned=None, **kw):
        C.log(name)
        avg = runner(split, K, S, seed=seed, name=name, **kw)
        last = runner(split, K, S, seed=seed, name=name, **kw, **C.last_state_kwargs(S))
        m = avg.extra["model"]
        runs.append((name, learned(m) if learned else "", avg.fit_seconds,
                     last.perplexity, avg.perplexity))
        return m

    m = ours(C.run_compound_lda, "CompoundLDA fixed")
    burn_in, thin = m.burn_in_, m.thin
    ours(C.run_compound_lda, "CompoundLDA learn eta+gamma",
         lambda m: f"eta={m.eta_:.4f} gamma={m.gamma_:.3f}", learn_priors=True)
    ours(C.run_compound_lda, "CompoundLDA learn eta",
         lambda m: f"eta={m.eta_:.4f}", learn_priors="eta")
    ours(C.run_lda_gibbs, "LDAGibbs fixed")
    ours(C.run_lda_gibbs, "LDAGibbs learn alpha+eta",
         lambda m: f"alpha={m.doc_topic_prior_:.4f} eta={m.topic_word_prior_:.4f}",
         learn_priors=True)
    for name, learned, kw in [("tomotopy DMR", "lambdas optimized", dict(dmr=True)),
                              ("tomotopy LDA", "alpha optimized",
                               dict(optimize_alpha=True))]:
        C.log(name)
        chain = TomotopyChain(split, K, 0.1, 0.01, seed, **kw)
        last, avg = run_chain(chain, split, S, burn_in, thin)
        runs.append((f"{name} [{chain.isa}]", learned, avg.fit_seconds,
                     last.perplexity, avg.perplexity))

    dmr = next(r for r in runs if r[0].startswith("tomotopy DMR"))
    kept = kept_sweeps(S, burn_in, thin)
    rows = [[name, learned, f"{sec:.1f}", f"{last:.2f}", f"{last / dmr[3]:.4f}",
             f"{avg:.2f}", f"{avg / dmr[4]:.4f}"]
            for name, learned, sec, last, avg in runs]
    print(f"news16, K={K}, {S} sweeps, seed {seed}; {split.n_train_tokens:,} training "
          f"tokens, {split.n_test_tokens:,} test tokens; averaged over sweeps "
          f"{kept[0]}..{kept[-1]} step {thin}")
    print(C.format_table(["model", "learned", "fit s", "last state", "vs DMR",
                          "averaged", "vs DMR"], rows, align="llrrrrr"))
    if args.json:
        C.write_json(args.json, [dict(name=n, learned=le, seconds=sec, last_state=la,
                                      averaged=av) for n, le, sec, la, av in runs])
    return 0


if __name__ == "__main__":
    sys.exit(main())

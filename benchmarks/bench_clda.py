"""Compound LDA vs LDA and DMR on the 16-newsgroups corpus (document
completion), for several numbers of topics.

For each K, on the same split and with the same number of sweeps and the
same topic-word prior eta, one thread each:

* ``LDAGibbs(doc_topic_prior=0.1)``;
* ``CompoundLDA`` with the 4 collections (comp, politics, rec, sci) as
  groups (default alpha=1, gamma=0.1*K);
* ``CompoundLDA`` with a single collection (``groups=None``);
* tomotopy ``DMRModel`` with the collection name as metadata
  (alpha=0.1 initial exp(lambda), lambdas optimized every 10 sweeps).

Reported: fit seconds and held-out perplexity per row, and the ratio of
cLDA (4 collections) perplexity to each row.  Claim checked: cLDA with the
4 collections has lower held-out perplexity than LDAGibbs at every K.

    python benchmarks/bench_clda.py                      # K=10..50, 1000 sweeps
    python benchmarks/bench_clda.py --k-list 30 --n-iter 500 --json out.json
"""

import argparse
import sys

import _common as C  # first: pins BLAS/OpenMP to one thread

MODELS = {
    "lda": "LDAGibbs",
    "clda": "CompoundLDA (4 coll.)",
    "clda1": "CompoundLDA (1 coll.)",
    "dmr": "tomotopy DMR",
}
CLDA = MODELS["clda"]


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--k-list", default="10,20,30,40,50",
                   help="comma-separated numbers of topics")
    p.add_argument("--n-iter", type=int, default=1000, help="Gibbs sweeps (all models)")
    p.add_argument("--seed", type=int, default=0, help="split seed and model seed")
    p.add_argument("--eta", type=float, default=0.01, help="topic-word prior (all models)")
    p.add_argument("--lda-alpha", type=float, default=0.1,
                   help="LDAGibbs doc_topic_prior and DMR initial alpha")
    p.add_argument("--clda-alpha", type=float, default=1.0, help="CompoundLDA alpha")
    p.add_argument("--gamma", type=float, default=None,
                   help="CompoundLDA gamma (default: the estimator's, 0.1*K)")
    p.add_argument("--heldout-frac", type=float, default=0.2)
    p.add_argument("--burn-in", type=int, default=None,
                   help="burn_in of our estimators (default: theirs, n_iter//2)")
    p.add_argument("--thin", type=int, default=None,
                   help="thin of our estimators (default: theirs, 10)")
    p.add_argument("--last-state", action="store_true",
                   help="our estimators keep only the final state (burn_in=n_iter-1, "
                        "thin=1), like tomotopy's DMR estimates")
    p.add_argument("--models", default=",".join(MODELS),
                   help=f"comma list from: {', '.join(MODELS)}")
    p.add_argument("--json", metavar="FILE", help="also write results as JSON")
    return p.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    ks = [int(k) for k in args.k_list.split(",") if k.strip()]
    models = [m.strip() for m in args.models.split(",") if m.strip()]
    unknown = set(models) - set(MODELS)
    if unknown:
        sys.exit(f"unknown models: {sorted(unknown)}")
    S, seed = args.n_iter, args.seed

    ours_kw = {}
    if args.last_state:
        ours_kw = C.last_state_kwargs(S)
    if args.burn_in is not None:
        ours_kw["burn_in"] = args.burn_in
    if args.thin is not None:
        ours_kw["thin"] = args.thin

    load_start = C.load_average()
    corpus = C.load_news16()
    split = C.document_completion_split(corpus, args.heldout_frac, seed=seed)
    C.log(f"corpus from {corpus.source}; split: {split.info}")

    def runner(model, K):
        if model == "lda":
            return C.run_lda_gibbs(split, K, S, args.lda_alpha, args.eta, seed,
                                   name=MODELS[model], **ours_kw)
        if model in ("clda", "clda1"):
            return C.run_compound_lda(split, K, S, alpha=args.clda_alpha, gamma=args.gamma,
                                      eta=args.eta, seed=seed, use_groups=(model == "clda"),
                                      name=MODELS[model], **ours_kw)
        return C.run_tomotopy_dmr(split, K, S, args.lda_alpha, args.eta, seed)

    rows = []  # dicts: K, model, fit_seconds, tokens_per_second, perplexity, ...
    for K in ks:
        for m in models:
            load = C.load_average()
            C.log(f"K={K}: fit {MODELS[m]} ({S} sweeps, load {load}) ...")
            try:
                res = runner(m, K)
            except Exception as exc:  # noqa: BLE001
                import traceback

                traceback.print_exc()
                C.log(f"  {MODELS[m]} FAILED: {exc!r}")
                rows.append(dict(K=K, model=MODELS[m], failed=repr(exc)))
                continue
            row = dict(K=K, model=res.name, fit_seconds=res.fit_seconds,
                       tokens_per_second=res.tokens_per_second, perplexity=res.perplexity,
                       setup_seconds=res.setup_seconds, load_at_start=load)
            model = res.extra.get("model")
            if model is not None and hasattr(model, "gamma_"):
                row["gamma"] = model.gamma_
            rows.append(row)
            C.log(f"  {res.name}: fit {res.fit_seconds:.1f}s, perplexity {res.perplexity:.2f}")

    load_end = C.load_average()
    print_report(args, split, ks, rows)
    print(f"note: load average at start {load_start}, at end {load_end} on {C.os.cpu_count()} CPUs")
    if args.json:
        C.write_json(args.json, dict(script="bench_clda", args=vars(args), split=split.info,
                                     environment=C.environment_info(), rows=rows))
        C.log(f"wrote {args.json}")
    return 0


def print_report(args, split, ks, rows):
    info = split.info
    est = ("final state only (burn_in=n_iter-1, thin=1)" if args.last_state else
           f"burn_in={args.burn_in if args.burn_in is not None else 'n_iter//2'}, "
           f"thin={args.thin if args.thin is not None else 10} (averaged samples)")
    print(f"Compound LDA vs LDA / DMR on news16: sweeps={args.n_iter}, eta={args.eta}, "
          f"seed={args.seed}, one thread each")
    print(f"LDAGibbs doc_topic_prior={args.lda_alpha}; CompoundLDA alpha={args.clda_alpha}, "
          f"gamma={'0.1*K' if args.gamma is None else args.gamma}; "
          f"DMR alpha(init)={args.lda_alpha}; our estimates: {est}")
    print(f"split seed {args.seed}: {info['n_heldout_docs']} of {info['n_docs']} docs held out; "
          f"{info['n_train_tokens']:,} training tokens, {info['n_test_tokens']:,} test tokens")
    print()

    headers = ["K", "model", "fit s", "tokens/s", "perplexity", "cLDA(4)/row"]
    table = []
    for K in ks:
        krows = [r for r in rows if r["K"] == K]
        ref = next((r for r in krows if r["model"] == CLDA and "failed" not in r), None)
        for r in krows:
            if "failed" in r:
                table.append([K, r["model"], "FAILED", "", "", ""])
                continue
            ratio = "-" if ref is None or r is ref else f"{ref['perplexity'] / r['perplexity']:.4f}"
            table.append([K, r["model"], f"{r['fit_seconds']:.1f}",
                          f"{r['tokens_per_second']:,.0f}", f"{r['perplexity']:.2f}", ratio])
    print(C.format_table(headers, table, align="rlrrrr"))

    # Summary: one line per K.
    names = [MODELS[m] for m in MODELS if any(r["model"] == MODELS[m] for r in rows)]
    short = {MODELS["lda"]: "LDAGibbs", CLDA: "cLDA(4)", MODELS["clda1"]: "cLDA(1)",
             MODELS["dmr"]: "DMR"}
    print()
    headers = ["K"] + [f"ppl {short[n]}" for n in names] + ["cLDA(4) < LDAGibbs"]
    table, verdicts = [], []
    for K in ks:
        by = {r["model"]: r for r in rows if r["K"] == K and "failed" not in r}
        line = [K] + [f"{by[n]['perplexity']:.2f}" if n in by else "-" for n in names]
        if CLDA in by and MODELS["lda"] in by:
            ok = by[CLDA]["perplexity"] < by[MODELS["lda"]]["perplexity"]
            verdicts.append(ok)
            line.append(f"{'yes' if ok else 'NO'} "
                        f"({by[CLDA]['perplexity'] / by[MODELS['lda']]['perplexity']:.4f})")
        else:
            line.append("-")
        table.append(line)
    print(C.format_table(headers, table, align="r" * len(headers)))
    print()
    if "dmr" in [m.strip() for m in args.models.split(",")]:
        print("note: tomotopy DMR theta/phi are from its final Gibbs state"
              + ("" if args.last_state else "; ours average samples (use --last-state to match)"))
    if verdicts:
        print(f"claim: CompoundLDA (4 collections) has lower held-out perplexity than LDAGibbs "
              f"at every K: {'HOLDS' if all(verdicts) else 'DOES NOT HOLD'} "
              f"({sum(verdicts)}/{len(verdicts)} K values)")
    sys.stdout.flush()


if __name__ == "__main__":
    sys.exit(main())

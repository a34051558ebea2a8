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

Every model is scored with two estimates of its chain, like for like:
"averaged" (topics and held-out document proportions averaged over the
sweeps our estimators keep, ``burn_in + thin, ..., n_iter``; our default,
and DMR's count tables read at the same sweeps, see ``_stepped.py``) and
"last state" (the final sweep only: our estimators with
``burn_in=n_iter-1, thin=1``, which run the same chain; DMR's final
state).  Reported: fit seconds and held-out perplexity per row, and the
ratio of cLDA (4 collections) perplexity to each row with the same
estimate.  Claim checked: cLDA with the 4 collections has lower held-out
perplexity than LDAGibbs at every K (with each estimate).

    python benchmarks/bench_clda.py                      # K=10..50, 1000 sweeps
    python benchmarks/bench_clda.py --k-list 30 --n-iter 500 --json out.json
    python benchmarks/bench_clda.py --k-list 30 --estimates last
"""

import argparse
import sys

import _common as C  # first: pins BLAS/OpenMP to one thread
import _isa  # noqa: E402

MODELS = {
    "lda": "LDAGibbs",
    "clda": "CompoundLDA (4 coll.)",
    "clda1": "CompoundLDA (1 coll.)",
    "dmr": "tomotopy DMR",
}
CLDA = MODELS["clda"]
AVG, LAST = "averaged", "last state"


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
                   help="burn_in of the averaged estimates, ours and DMR's (default: "
                        "our estimators', n_iter//2)")
    p.add_argument("--thin", type=int, default=10,
                   help="thin of the averaged estimates, ours and DMR's (default: our "
                        "estimators', 10)")
    p.add_argument("--estimates", choices=["both", AVG, "last"], default="both",
                   help="which estimates of our models to fit: averaged (our default), "
                        "last (final state only) or both (two fits of the same chain); "
                        "DMR always gives both")
    p.add_argument("--last-state", action="store_true",
                   help="same as --estimates last")
    p.add_argument("--tomotopy-isa", default="auto",
                   help="tomotopy build for DMR: auto (its own choice, in this process), "
                        "or one of avx512, avx2, sse2, none (a fresh process)")
    p.add_argument("--models", default=",".join(MODELS),
                   help=f"comma list from: {', '.join(MODELS)}")
    p.add_argument("--json", metavar="FILE", help="also write results as JSON")
    args = p.parse_args(argv)
    if args.last_state:
        args.estimates = "last"
    if args.burn_in is None:
        args.burn_in = args.n_iter // 2
    return args


def _ours_kwargs(args, estimate):
    if estimate == LAST:
        return C.last_state_kwargs(args.n_iter)
    return dict(burn_in=args.burn_in, thin=args.thin)


def _fit_rows(args, split, model, K):
    """The RunResults of one model at one K: ours once per estimate asked
    for, DMR once (both estimates of one chain)."""
    S, seed = args.n_iter, args.seed
    if model == "dmr":
        isa = _isa.parse_isa_list(args.tomotopy_isa)[0]
        last, avg = _isa.call_with_isa(
            isa, "_stepped", "run_tomotopy_stepped", split, K, S, args.burn_in, args.thin,
            alpha=args.lda_alpha, eta=args.eta, seed=seed, dmr=True)
        return [avg, last]
    estimates = {"both": [AVG, LAST], AVG: [AVG], "last": [LAST]}[args.estimates]
    out = []
    for est in estimates:
        kw = _ours_kwargs(args, est)
        if model == "lda":
            res = C.run_lda_gibbs(split, K, S, args.lda_alpha, args.eta, seed,
                                  name=MODELS[model], **kw)
        else:
            res = C.run_compound_lda(split, K, S, alpha=args.clda_alpha, gamma=args.gamma,
                                     eta=args.eta, seed=seed, use_groups=(model == "clda"),
                                     name=MODELS[model], **kw)
        res.extra["estimate"] = est
        out.append(res)
    return out


def _row(K, model, res, load):
    est = AVG if res.extra.get("estimate", "").startswith(AVG) else LAST
    row = dict(K=K, model=MODELS[model], estimate=est, fit_seconds=res.fit_seconds,
               tokens_per_second=res.tokens_per_second, perplexity=res.perplexity,
               setup_seconds=res.setup_seconds, load_at_start=load,
               estimate_detail=res.extra.get("estimate"))
    if res.extra.get("isa"):
        row["tomotopy_isa"] = res.extra["isa"]
    fitted = res.extra.get("model")
    if fitted is not None and hasattr(fitted, "gamma_"):
        row["gamma"] = fitted.gamma_
    return row


def main(argv=None):
    args = parse_args(argv)
    ks = [int(k) for k in args.k_list.split(",") if k.strip()]
    models = [m.strip() for m in args.models.split(",") if m.strip()]
    unknown = set(models) - set(MODELS)
    if unknown:
        sys.exit(f"unknown models: {sorted(unknown)}")

    load_start = C.load_average()
    corpus = C.load_news16()
    split = C.document_completion_split(corpus, args.heldout_frac, seed=args.seed)
    C.log(f"corpus from {corpus.source}; split: {split.info}")

    rows = []  # dicts: K, model, estimate, fit_seconds, tokens_per_second, perplexity, ...
    for K in ks:
        for m in models:
            load = C.load_average()
            C.log(f"K={K}: fit {MODELS[m]} ({args.n_iter} sweeps, load {load}) ...")
            try:
                results = _fit_rows(args, split, m, K)
            except Exception as exc:  # noqa: BLE001
                import traceback

                traceback.print_exc()
                C.log(f"  {MODELS[m]} FAILED: {exc!r}")
                rows.append(dict(K=K, model=MODELS[m], estimate="-", failed=repr(exc)))
                continue
            for res in results:
                rows.append(_row(K, m, res, load))
                C.log(f"  {res.name} ({rows[-1]['estimate']}): fit {res.fit_seconds:.1f}s, "
                      f"perplexity {res.perplexity:.2f}")

    load_end = C.load_average()
    print_report(args, split, ks, rows)
    print(f"note: load average at start {load_start}, at end {load_end} on {C.os.cpu_count()} CPUs")
    if args.json:
        C.write_json(args.json, dict(script="bench_clda", args=vars(args), split=split.info,
                                     environment=C.environment_info(), rows=rows))
        C.log(f"wrote {args.json}")
    return 0


def _detail_table(ks, rows):
    headers = ["K", "model", "estimate", "fit s", "tokens/s", "perplexity",
               "cLDA(4)/row, same estimate"]
    table = []
    for K in ks:
        krows = [r for r in rows if r["K"] == K]
        for r in krows:
            if "failed" in r:
                table.append([K, r["model"], "-", "FAILED", "", "", ""])
                continue
            ref = next((x for x in krows if x["model"] == CLDA and x["estimate"] == r["estimate"]
                        and "failed" not in x), None)
            ratio = "-" if ref is None or r is ref else f"{ref['perplexity'] / r['perplexity']:.4f}"
            name = r["model"] + (f" [{r['tomotopy_isa']}]" if r.get("tomotopy_isa") else "")
            table.append([K, name, r["estimate"], f"{r['fit_seconds']:.1f}",
                          f"{r['tokens_per_second']:,.0f}", f"{r['perplexity']:.2f}", ratio])
    return C.format_table(headers, table, align="rllrrrr")


def _pct(a, b):
    return f"{(a / b - 1) * 100:+.1f}%"


def _summary_table(ks, rows):
    """One line per K and estimate; returns (table, verdicts per estimate)."""
    names = [n for n in MODELS.values() if any(r["model"] == n for r in rows)]
    short = {MODELS["lda"]: "LDAGibbs", CLDA: "cLDA(4)", MODELS["clda1"]: "cLDA(1)",
             MODELS["dmr"]: "DMR"}
    headers = (["K", "estimate"] + [f"ppl {short[n]}" for n in names]
               + ["cLDA(4) vs LDAGibbs", "cLDA(4) vs DMR"])
    table, verdicts = [], {AVG: [], LAST: []}
    for K in ks:
        for est in (AVG, LAST):
            by = {r["model"]: r for r in rows
                  if r["K"] == K and r["estimate"] == est and "failed" not in r}
            if not by:
                continue
            line = [K, est] + [f"{by[n]['perplexity']:.2f}" if n in by else "-" for n in names]
            for peer in (MODELS["lda"], MODELS["dmr"]):
                if CLDA in by and peer in by:
                    line.append(_pct(by[CLDA]["perplexity"], by[peer]["perplexity"]))
                else:
                    line.append("-")
            if CLDA in by and MODELS["lda"] in by:
                verdicts[est].append(by[CLDA]["perplexity"] < by[MODELS["lda"]]["perplexity"])
            table.append(line)
    return C.format_table(headers, table, align="rl" + "r" * (len(headers) - 2)), verdicts


def print_report(args, split, ks, rows):
    info = split.info
    print(f"Compound LDA vs LDA / DMR on news16: sweeps={args.n_iter}, eta={args.eta}, "
          f"seed={args.seed}, one thread each")
    print(f"LDAGibbs doc_topic_prior={args.lda_alpha}; CompoundLDA alpha={args.clda_alpha}, "
          f"gamma={'0.1*K' if args.gamma is None else args.gamma}; "
          f"DMR alpha(init)={args.lda_alpha}")
    print(f"estimates: 'averaged' = mean over sweeps {args.burn_in + args.thin}..{args.n_iter} "
          f"step {args.thin} (our burn_in={args.burn_in}, thin={args.thin}; DMR's count tables "
          f"read at the same sweeps); 'last state' = final sweep only (ours: "
          f"burn_in=n_iter-1, thin=1)")
    print(f"split seed {args.seed}: {info['n_heldout_docs']} of {info['n_docs']} docs held out; "
          f"{info['n_train_tokens']:,} training tokens, {info['n_test_tokens']:,} test tokens")
    print()
    print(_detail_table(ks, rows))
    print()
    table, verdicts = _summary_table(ks, rows)
    print(table)
    print()
    print("note: every comparison pairs the same estimate on both sides; averaging "
          "is our estimators' default and lowers perplexity by itself, for any sampler")
    for est, v in verdicts.items():
        if v:
            print(f"claim ({est} vs {est}): CompoundLDA (4 collections) has lower held-out "
                  f"perplexity than LDAGibbs at every K: "
                  f"{'HOLDS' if all(v) else 'DOES NOT HOLD'} ({sum(v)}/{len(v)} K values)")
    sys.stdout.flush()


if __name__ == "__main__":
    sys.exit(main())

"""Collapsed-Gibbs LDA: sklearn_clda.LDAGibbs vs the ``lda`` package and
tomotopy's LDAModel on the 16-newsgroups corpus (document completion).

All libraries run in the same process on the same split, with the same K,
alpha, eta and number of sweeps, one thread each.  Reported per library:
fit seconds, tokens/s (= training tokens * sweeps / fit seconds), held-out
perplexity, and our/peer ratios.  Target: LDAGibbs perplexity within 2% of
``lda``'s and LDAGibbs tokens/s >= ``lda``'s.

    python benchmarks/bench_lda_gibbs.py                 # K=30, 1000 sweeps
    python benchmarks/bench_lda_gibbs.py --n-iter 200 --repeats 3 --json out.json
"""

import argparse
import statistics
import sys

import _common as C  # first: pins BLAS/OpenMP to one thread

import numpy as np  # noqa: E402


OURS = "sklearn_clda LDAGibbs"
LAST = "LDAGibbs last state"
LOAD = []  # load average at start and end


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n-components", "-k", type=int, default=30)
    p.add_argument("--n-iter", type=int, default=1000, help="Gibbs sweeps (all libraries)")
    p.add_argument("--seed", type=int, default=0, help="split seed; model seed of repeat r is seed + r")
    p.add_argument("--repeats", type=int, default=1, help="fits per library (different model seeds)")
    p.add_argument("--alpha", type=float, default=0.1)
    p.add_argument("--eta", type=float, default=0.01)
    p.add_argument("--heldout-frac", type=float, default=0.2)
    p.add_argument("--burn-in", type=int, default=None,
                   help="LDAGibbs burn_in (default: the estimator's default)")
    p.add_argument("--thin", type=int, default=None,
                   help="LDAGibbs thin (default: the estimator's default)")
    p.add_argument("--libraries", default="lda,tomotopy,ours,ours-last",
                   help="comma list from: lda, tomotopy, ours (LDAGibbs with its default "
                        "sample averaging), ours-last (LDAGibbs keeping only the final "
                        "state, like lda and tomotopy)")
    p.add_argument("--with-vb", action="store_true",
                   help="add variational rows: sklearn LatentDirichletAllocation, gensim LdaModel")
    p.add_argument("--vb-iter", type=int, default=20, help="sklearn VB max_iter / gensim passes")
    p.add_argument("--json", metavar="FILE", help="also write results as JSON")
    return p.parse_args(argv)


def _ours_available():
    try:
        import sklearn_clda  # noqa: F401
        from sklearn_clda import LDAGibbs  # noqa: F401
    except Exception as exc:  # noqa: BLE001
        C.log(f"sklearn_clda not importable ({exc!r}); skipping our rows")
        return False
    return True


def main(argv=None):
    args = parse_args(argv)
    K, S = args.n_components, args.n_iter
    libs = [s.strip() for s in args.libraries.split(",") if s.strip()]
    if any(x.startswith("ours") for x in libs) and not _ours_available():
        libs = [x for x in libs if not x.startswith("ours")]

    LOAD.append(C.load_average())
    corpus = C.load_news16()
    split = C.document_completion_split(corpus, args.heldout_frac, seed=args.seed)
    C.log(f"corpus from {corpus.source}; split: {split.info}")

    ours_kw = {}
    if args.burn_in is not None:
        ours_kw["burn_in"] = args.burn_in
    if args.thin is not None:
        ours_kw["thin"] = args.thin

    runners = []
    if "lda" in libs:
        runners.append(("lda", lambda sd: C.run_lda(split, K, S, args.alpha, args.eta, sd)))
    if "tomotopy" in libs:
        runners.append(("tomotopy LDA",
                        lambda sd: C.run_tomotopy_lda(split, K, S, args.alpha, args.eta, sd)))
    if "ours" in libs:
        runners.append(("sklearn_clda LDAGibbs",
                        lambda sd: C.run_lda_gibbs(split, K, S, args.alpha, args.eta, sd, **ours_kw)))
    if "ours-last" in libs:
        runners.append((LAST, lambda sd: C.run_lda_gibbs(
            split, K, S, args.alpha, args.eta, sd, name=LAST, **C.last_state_kwargs(S))))
    if args.with_vb:
        runners.append((f"sklearn VB ({args.vb_iter} it)",
                        lambda sd: C.run_sklearn_vb(split, K, args.vb_iter, args.alpha, args.eta, sd)))
        runners.append((f"gensim VB ({args.vb_iter} passes)",
                        lambda sd: C.run_gensim_vb(split, K, args.vb_iter, args.alpha, args.eta, sd)))

    results = {name: [] for name, _ in runners}
    for r in range(args.repeats):  # interleave libraries across repeats
        for name, run in runners:
            sd = args.seed + r
            load = C.load_average()
            C.log(f"fit {name}: K={K} sweeps={S} seed={sd} (repeat {r + 1}/{args.repeats}, "
                  f"load {load}) ...")
            try:
                res = run(sd)
            except Exception as exc:  # noqa: BLE001
                C.log(f"  {name} FAILED: {exc!r}")
                if name in (OURS, LAST):
                    import traceback

                    traceback.print_exc()
                continue
            res.extra["load_at_start"] = load
            results[name].append(res)
            C.log(f"  {name}: fit {res.fit_seconds:.1f}s, {res.tokens_per_second:,.0f} tok/s, "
                  f"perplexity {res.perplexity:.2f}"
                  + (f" (setup {res.setup_seconds:.1f}s)" if res.setup_seconds else ""))

    LOAD.append(C.load_average())
    summary = summarize(results)
    print_report(args, split, summary)
    if args.json:
        payload = dict(
            script="bench_lda_gibbs",
            args=vars(args),
            split=split.info,
            environment=C.environment_info(),
            rows=summary,
            runs={n: [dict(fit_seconds=x.fit_seconds, tokens_per_second=x.tokens_per_second,
                           perplexity=x.perplexity, setup_seconds=x.setup_seconds,
                           load_at_start=x.extra.get("load_at_start"))
                      for x in rs] for n, rs in results.items()},
        )
        C.write_json(args.json, payload)
        C.log(f"wrote {args.json}")
    return 0


def summarize(results):
    rows = []
    for name, rs in results.items():
        if not rs:
            rows.append(dict(library=name, failed=True))
            continue
        ppl = [x.perplexity for x in rs]
        rows.append(dict(
            library=name,
            n_runs=len(rs),
            # Timing: best of the repeats (least disturbed by other load);
            # perplexity: mean over the repeats' model seeds.
            fit_seconds=min(x.fit_seconds for x in rs),
            fit_seconds_median=statistics.median(x.fit_seconds for x in rs),
            tokens_per_second=max(x.tokens_per_second for x in rs),
            perplexity=float(np.mean(ppl)),
            perplexity_sd=float(np.std(ppl, ddof=1)) if len(ppl) > 1 else 0.0,
            setup_seconds=statistics.median(x.setup_seconds for x in rs),
        ))
    return rows


def print_report(args, split, rows):
    ok = {r["library"]: r for r in rows if not r.get("failed")}
    ours = ok.get(OURS) or ok.get(LAST)
    info = split.info
    print(f"LDA collapsed Gibbs on news16: K={args.n_components}, alpha={args.alpha}, "
          f"eta={args.eta}, sweeps={args.n_iter}, repeats={args.repeats}, one thread each")
    print(f"split seed {args.seed}: {info['n_heldout_docs']} of {info['n_docs']} docs held out; "
          f"{info['n_train_tokens']:,} training tokens, {info['n_test_tokens']:,} test tokens, "
          f"V={info['n_words_train']}")
    multi = args.repeats > 1
    headers = ["library", "fit s" + (" (min)" if multi else ""), "tokens/s" + (" (max)" if multi else ""),
               "perplexity" + (" (mean)" if multi else "")] + (["ppl sd"] if multi else []) + \
              ["ours tok/s / peer", "ppl ours/peer"]
    table = []
    for r in rows:
        if r.get("failed"):
            table.append([r["library"], "FAILED", "", ""] + ([""] if multi else []) + ["", ""])
            continue
        tok_ratio = ppl_ratio = "-"
        if ours is not None and r is not ours:
            tok_ratio = f"{ours['tokens_per_second'] / r['tokens_per_second']:.2f}x"
            ppl_ratio = f"{ours['perplexity'] / r['perplexity']:.4f}"
        table.append([
            r["library"],
            f"{r['fit_seconds']:.1f}",
            f"{r['tokens_per_second']:,.0f}",
            f"{r['perplexity']:.2f}",
        ] + ([f"{r['perplexity_sd']:.2f}"] if multi else []) + [tok_ratio, ppl_ratio])
    print()
    print(C.format_table(headers, table))
    print()
    notes = [f"load average at start {LOAD[0]}, at end {LOAD[1]} on {C.os.cpu_count()} CPUs"]
    if multi:
        notes.append("fit s / tokens/s: best of the repeats; perplexity: mean over model seeds")
    for r in rows:
        if r.get("setup_seconds") and r["library"].startswith("tomotopy"):
            notes.append(f"{r['library']}: add_doc took {r['setup_seconds']:.1f}s (not in fit s)")
        if r.get("setup_seconds") and r["library"] == "lda":
            notes.append(f"lda: {r['setup_seconds']:.1f}s of its fit s is matrix->token conversion")
    if "tomotopy LDA" in ok:
        notes.append("tomotopy LDA: workers=1, default parallel scheme, optim_interval=0 (fixed alpha)")
    notes.append("theta/phi: lda, tomotopy and 'LDAGibbs last state' (burn_in=n_iter-1, thin=1) use the "
                 "final Gibbs state; 'sklearn_clda LDAGibbs' (defaults: burn_in=n_iter//2, thin=10) "
                 "averages the kept samples")
    if ours is not None:
        notes.append(f"ratio columns: {ours['library']} / peer")
    if args.with_vb:
        notes.append("VB rows: tokens/s counts passes as sweeps; theta = transform/inference of observed halves")
    for n in notes:
        print("note: " + n)
    lda_row = ok.get("lda")
    if lda_row is not None and (OURS in ok or LAST in ok):
        print()
        for name in (OURS, LAST):
            if name not in ok:
                continue
            pr = ok[name]["perplexity"] / lda_row["perplexity"]
            tr = ok[name]["tokens_per_second"] / lda_row["tokens_per_second"]
            verdict = "PASS" if abs(pr - 1) <= 0.02 else ("BETTER" if pr < 1 else "FAIL")
            print(f"target [{name}]: perplexity within 2% of lda's: ratio {pr:.4f} -> {verdict}")
            print(f"target [{name}]: tokens/s >= lda's: ratio {tr:.2f}x -> "
                  f"{'PASS' if tr >= 1 else 'FAIL'}")
    sys.stdout.flush()


if __name__ == "__main__":
    sys.exit(main())

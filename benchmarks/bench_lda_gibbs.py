"""Collapsed-Gibbs LDA: sklearn_clda.LDAGibbs vs the ``lda`` package and
tomotopy's LDAModel on the 16-newsgroups corpus (document completion).

All libraries run on the same split, with the same K, alpha, eta and
number of sweeps, one thread each, in turn within each repeat.  Every
library is scored with two estimates of its chain, like for like:
"averaged" (topics and held-out document proportions averaged over the
sweeps our estimator keeps, ``burn_in + thin, ..., n_iter``: our default;
the peers' count tables are read at the same sweeps, see ``_stepped.py``)
and "last state" (the final sweep only: the peers' own output; ours with
``burn_in=n_iter-1, thin=1``, the same chain).  tomotopy runs once per
instruction-set build that loads here (``--tomotopy-isa``, each in a fresh
process), and its best time is the one compared.  Reported per library and
estimate: fit seconds, tokens/s (= training tokens * sweeps / fit
seconds), held-out perplexity, and our/peer ratios for the same estimate.
Target: LDAGibbs perplexity within 2% of ``lda``'s and LDAGibbs tokens/s
>= ``lda``'s.

    python benchmarks/bench_lda_gibbs.py                 # K=30, 1000 sweeps
    python benchmarks/bench_lda_gibbs.py --n-iter 200 --repeats 3 --json out.json
    python benchmarks/bench_lda_gibbs.py --n-iter 50 --tomotopy-isa auto   # quick look
"""

import argparse
import importlib.util
import statistics
import sys

import _common as C  # first: pins BLAS/OpenMP to one thread

import numpy as np  # noqa: E402

import _isa  # noqa: E402
import _stepped  # noqa: E402

OURS = "sklearn_clda LDAGibbs"
AVG, LAST = "averaged", "last state"
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
                   help="burn_in of the averaged estimates, ours and the peers' "
                        "(default: our estimator's, n_iter//2)")
    p.add_argument("--thin", type=int, default=10,
                   help="thin of the averaged estimates, ours and the peers' (default: "
                        "our estimator's, 10)")
    p.add_argument("--libraries", default="lda,tomotopy,ours,ours-last",
                   help="comma list from: lda, tomotopy (both estimates of one chain each), "
                        "ours (LDAGibbs, averaged), ours-last (LDAGibbs keeping only the "
                        "final state)")
    p.add_argument("--tomotopy-isa", default="all",
                   help="tomotopy builds to run: all (every one that loads here, each in a "
                        "fresh process), auto (its own choice, in this process), or a comma "
                        "list from avx512, avx2, sse2, none")
    p.add_argument("--clock", choices=sorted(C.CLOCK_FUNCTIONS), default="wall",
                   help="fit seconds as wall-clock or process CPU seconds (cpu: not "
                        "inflated by other processes sharing the cores; every library "
                        "runs on one thread)")
    p.add_argument("--with-vb", action="store_true",
                   help="add variational rows: sklearn LatentDirichletAllocation, gensim LdaModel")
    p.add_argument("--vb-iter", type=int, default=20, help="sklearn VB max_iter / gensim passes")
    p.add_argument("--json", metavar="FILE", help="also write results as JSON")
    args = p.parse_args(argv)
    if args.burn_in is None:
        args.burn_in = args.n_iter // 2
    return args


def _ours_available():
    try:
        import sklearn_clda  # noqa: F401
        from sklearn_clda import LDAGibbs  # noqa: F401
    except Exception as exc:  # noqa: BLE001
        C.log(f"sklearn_clda not importable ({exc!r}); skipping our rows")
        return False
    return True


def _tag(res, library, estimate):
    res.extra["library"], res.extra["estimate"] = library, estimate
    return res


def _runners(args, split, libs):
    """(label, run(seed) -> list of RunResults tagged with library and estimate)."""
    K, S, a, e, B, T, ck = (args.n_components, args.n_iter, args.alpha, args.eta,
                            args.burn_in, args.thin, args.clock)
    runners = []
    if "lda" in libs:
        def run_lda(sd):
            last, avg = _stepped.run_lda_stepped(split, K, S, B, T, a, e, sd, clock=ck)
            return [_tag(avg, "lda", AVG), _tag(last, "lda", LAST)]
        runners.append(("lda", run_lda))
    if "tomotopy" in libs:
        for isa in _isa.parse_isa_list(args.tomotopy_isa):
            def run_tp(sd, isa=isa):
                last, avg = _isa.call_with_isa(isa, "_stepped", "run_tomotopy_stepped",
                                               split, K, S, B, T, a, e, sd, clock=ck)
                lib = f"tomotopy LDA [{last.extra['isa']}]"
                return [_tag(avg, lib, AVG), _tag(last, lib, LAST)]
            runners.append((f"tomotopy LDA [{isa or 'auto'}]", run_tp))
    if "ours" in libs:
        runners.append((OURS, lambda sd: [_tag(C.run_lda_gibbs(
            split, K, S, a, e, sd, clock=ck, burn_in=B, thin=T), OURS, AVG)]))
    if "ours-last" in libs:
        runners.append((OURS + " last", lambda sd: [_tag(C.run_lda_gibbs(
            split, K, S, a, e, sd, clock=ck, **C.last_state_kwargs(S)), OURS, LAST)]))
    if args.with_vb:
        runners.append(("sklearn VB", lambda sd: [_tag(C.run_sklearn_vb(
            split, K, args.vb_iter, a, e, sd), f"sklearn VB ({args.vb_iter} it)", "variational")]))
        if importlib.util.find_spec("gensim") is None:  # none for Python 3.14
            print("gensim is not installed: its VB row is left out", file=sys.stderr)
        else:
            runners.append(("gensim VB", lambda sd: [_tag(C.run_gensim_vb(
                split, K, args.vb_iter, a, e, sd), f"gensim VB ({args.vb_iter} passes)",
                "variational")]))
    return runners


def main(argv=None):
    args = parse_args(argv)
    libs = [s.strip() for s in args.libraries.split(",") if s.strip()]
    if any(x.startswith("ours") for x in libs) and not _ours_available():
        libs = [x for x in libs if not x.startswith("ours")]

    LOAD.append(C.load_average())
    corpus = C.load_news16()
    split = C.document_completion_split(corpus, args.heldout_frac, seed=args.seed)
    C.log(f"corpus from {corpus.source}; split: {split.info}")

    results = {}  # (library, estimate) -> [RunResult]
    for r in range(args.repeats):  # every library once per repeat, in turn
        for label, run in _runners(args, split, libs):
            sd = args.seed + r
            load = C.load_average()
            C.log(f"fit {label}: K={args.n_components} sweeps={args.n_iter} seed={sd} "
                  f"(repeat {r + 1}/{args.repeats}, load {load}) ...")
            try:
                out = run(sd)
            except Exception as exc:  # noqa: BLE001
                import traceback

                traceback.print_exc()
                C.log(f"  {label} FAILED: {exc!r}")
                continue
            for res in out:
                res.extra["load_at_start"] = load
                results.setdefault((res.extra["library"], res.extra["estimate"]), []).append(res)
                C.log(f"  {res.extra['library']} ({res.extra['estimate']}): fit "
                      f"{res.fit_seconds:.1f}s, {res.tokens_per_second:,.0f} tok/s, "
                      f"perplexity {res.perplexity:.2f}")

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
            runs={f"{lib} | {est}": [dict(
                fit_seconds=x.fit_seconds, tokens_per_second=x.tokens_per_second,
                perplexity=x.perplexity, setup_seconds=x.setup_seconds,
                load_at_start=x.extra.get("load_at_start")) for x in rs]
                for (lib, est), rs in results.items()},
        )
        C.write_json(args.json, payload)
        C.log(f"wrote {args.json}")
    return 0


def summarize(results):
    rows = []
    for (lib, est), rs in results.items():
        ppl = [x.perplexity for x in rs]
        rows.append(dict(
            library=lib,
            estimate=est,
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


def _fastest_tomotopy(rows, estimate):
    tp = [r for r in rows if r["library"].startswith("tomotopy") and r["estimate"] == estimate]
    return max(tp, key=lambda r: r["tokens_per_second"]) if tp else None


def _main_table(args, rows):
    ours = {r["estimate"]: r for r in rows if r["library"] == OURS}
    multi = args.repeats > 1
    headers = (["library", "estimate", "fit s" + (" (min)" if multi else ""),
                "tokens/s" + (" (max)" if multi else ""), "perplexity" + (" (mean)" if multi else "")]
               + (["ppl sd"] if multi else []) + ["ours tok/s / row", "ppl ours / row"])
    table = []
    for r in rows:
        mine = ours.get(r["estimate"])
        tok_ratio = ppl_ratio = "-"
        if mine is not None and r is not mine:
            tok_ratio = f"{mine['tokens_per_second'] / r['tokens_per_second']:.2f}x"
            ppl_ratio = f"{mine['perplexity'] / r['perplexity']:.4f}"
        table.append([r["library"], r["estimate"], f"{r['fit_seconds']:.1f}",
                      f"{r['tokens_per_second']:,.0f}", f"{r['perplexity']:.2f}"]
                     + ([f"{r['perplexity_sd']:.2f}"] if multi else []) + [tok_ratio, ppl_ratio])
    return C.format_table(headers, table, align="ll" + "r" * (len(headers) - 2))


def _notes(args, rows):
    B, T, S = args.burn_in, args.thin, args.n_iter
    kept = _stepped.kept_sweeps(S, B, T)
    notes = [f"load average at start {LOAD[0]}, at end {LOAD[1]} on {C.os.cpu_count()} CPUs",
             f"'averaged': every library's topic-word counts and held-out document "
             f"proportions averaged over sweeps {kept[0]}..{kept[-1]} step {T} ({len(kept)} "
             f"states; ours: burn_in={B}, thin={T}; the peers' tables read at the same "
             f"sweeps of their chain); 'last state': the final sweep only (ours: "
             f"burn_in={S - 1}, thin=1, the same chain). Ratio columns pair the same "
             f"estimate; averaging lowers perplexity for any sampler"]
    if args.repeats > 1:
        notes.append("fit s / tokens/s: best of the repeats; perplexity: mean over model seeds")
    notes.append(f"fit s: {args.clock} seconds of sampling only (lda: its start-up "
                 "assignment and sweeps, without the log-likelihood it logs every 10 sweeps; "
                 "tomotopy: train calls; ours: fit); VB rows: wall-clock")
    for est in (AVG, LAST):
        best = _fastest_tomotopy(rows, est)
        others = [r for r in rows if r["library"].startswith("tomotopy")
                  and r["estimate"] == est]
        if best is not None and len(others) > 1:
            notes.append(f"tomotopy builds ({est} rows, one chain each; a build's chain may "
                         f"differ from another's in floating point): " + ", ".join(
                             f"{r['library']} {r['fit_seconds']:.1f}s" for r in others)
                         + f"; fastest: {best['library']}")
            break
    for r in rows:
        if r["library"].startswith("tomotopy") and r["estimate"] == LAST:
            notes.append(f"{r['library']}: workers=1, default parallel scheme, "
                         f"optim_interval=0 (fixed alpha); add_doc {r['setup_seconds']:.1f}s "
                         f"(not in fit s)")
    if args.with_vb:
        notes.append("VB rows: tokens/s counts passes as sweeps; theta = transform/inference "
                     "of observed halves")
    return notes


def _targets(rows):
    lines = []
    by = {(r["library"], r["estimate"]): r for r in rows}
    for est in (AVG, LAST):
        mine = by.get((OURS, est))
        peers = [("lda", by.get(("lda", est))), ("fastest tomotopy", _fastest_tomotopy(rows, est))]
        for label, peer in peers:
            if mine is None or peer is None:
                continue
            pr = mine["perplexity"] / peer["perplexity"]
            tr = mine["tokens_per_second"] / peer["tokens_per_second"]
            if label == "lda":
                verdict = "PASS" if abs(pr - 1) <= 0.02 else ("BETTER" if pr < 1 else "FAIL")
                lines.append(f"target [{est} vs {est}]: LDAGibbs perplexity within 2% of "
                             f"lda's: ratio {pr:.4f} -> {verdict}")
                lines.append(f"target [{est} vs {est}]: LDAGibbs tokens/s >= lda's: ratio "
                             f"{tr:.2f}x -> {'PASS' if tr >= 1 else 'FAIL'}")
            else:
                lines.append(f"[{est} vs {est}] LDAGibbs / {peer['library']}: perplexity "
                             f"{pr:.4f}, tokens/s {tr:.2f}x")
    return lines


def print_report(args, split, rows):
    info = split.info
    print(f"LDA collapsed Gibbs on news16: K={args.n_components}, alpha={args.alpha}, "
          f"eta={args.eta}, sweeps={args.n_iter}, repeats={args.repeats}, one thread each")
    print(f"split seed {args.seed}: {info['n_heldout_docs']} of {info['n_docs']} docs held out; "
          f"{info['n_train_tokens']:,} training tokens, {info['n_test_tokens']:,} test tokens, "
          f"V={info['n_words_train']}")
    print()
    print(_main_table(args, rows))
    print()
    for n in _notes(args, rows):
        print("note: " + n)
    targets = _targets(rows)
    if targets:
        print()
        print("\n".join(targets))
    sys.stdout.flush()


if __name__ == "__main__":
    sys.exit(main())

"""The command line's ``select``: numbers of topics compared on your documents
(:func:`~sklearn_clda.inspection.select_n_components`, R stm's ``searchK``),
printed and written as a table and a figure."""

import argparse
import functools
from collections import Counter
import shlex
import time
import warnings
from pathlib import Path

import numpy as np

from ._cli_common import (
    MAX_SEED,
    _add_input_options,
    _add_vocabulary_options,
    _df_problem,
    _fail,
    _n_components_problem,
    _note,
    _out_problem,
    _printable,
    _read_corpus,
    _report_prog,
    _seed_problem,
    _select_prog,
)
from .exceptions import (
    FitInterruptedWarning,
    ManyCollectionsWarning,
    MemoryLimitError,
    UnseenCollectionWarning,
)

#: The numbers of topics tried by default.
SELECT_K = "5,10,20,30,40"

_SELECT_DESCRIPTION = """\
Compare numbers of topics on your own documents before writing a report
(R stm's searchK). The documents are split into --folds parts (each
collection spread over all of them); for each K and each part, compound
LDA is fitted on the other parts and measured: held-out perplexity of the
part's documents (lower is better), coherence and exclusivity of the top 10
words (higher is better), the stability of the topics across the parts'
fits (their top words matched; higher is better) and the fit time. The
table is printed and written to --out as select_n_components.csv, with the
figure select_n_components.png. No measure decides alone: look for where
perplexity stops improving much while coherence, exclusivity and stability
hold, then read the topics of one or two candidates with the report
command (-k K).
"""


def _k_values(text):
    """``-k 5,10,20``: distinct numbers of topics, increasing."""
    problem = argparse.ArgumentTypeError(
        f"expected numbers of topics separated by commas (e.g. 5,10,20), got {text!r}")
    parts = [part.strip() for part in text.split(",") if part.strip()]
    # (only ASCII digits: int() would also read "1_0" and other scripts' digits)
    if not parts or not all(part.isascii() and part.isdigit() for part in parts):
        raise problem
    return sorted({int(part) for part in parts})


def _add_select_parser(commands):
    select = commands.add_parser(
        "select",
        prog=_select_prog(),
        help="compare numbers of topics on your documents (perplexity, coherence, "
             "exclusivity, stability)",
        description=_SELECT_DESCRIPTION,
        epilog=(
            "The input formats and the output folder are those of the report\n"
            f"command ('{_report_prog()} --help').\n\nexample:\n"
            f"  {_select_prog()} --input docs.csv --group-column source \\\n"
            "      -k 10,20,40 --out select/"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    select.set_defaults(command_prog=_select_prog())
    _add_input_options(select, (
        "folder to write select_n_components.csv and select_n_components.png "
        "to; created if needed, those files in it are replaced (refused if one "
        "is a symbolic link)"
    ))
    _add_vocabulary_options(select)
    fit = select.add_argument_group("model")
    fit.add_argument(
        "-k", "--n-components", type=_k_values, default=SELECT_K, metavar="K,K,...",
        help="numbers of topics to compare (default: %(default)s)",
    )
    fit.add_argument(
        "-n", "--max-iter", type=int, default=300, metavar="SWEEPS",
        help="Gibbs sweeps of each fit; the first half is burn-in (default: %(default)s)",
    )
    fit.add_argument(
        "--folds", type=int, default=3, metavar="N",
        help="parts the documents are split into; each K is fitted N times "
        "(default: %(default)s)",
    )
    fit.add_argument(
        "--seed", type=int, default=0,
        help=f"random seed in [0, {MAX_SEED}] of the split and the fits; the same "
        "seed gives the same table, but the fit times (default: %(default)s)",
    )
    fit.add_argument(
        "--n-jobs", type=int, default=-1, metavar="N",
        help="fits run at once, each in its own process; -1 for one per core, "
        "-2 all but one; never more than the fits, nor than half the machine's "
        "memory holds (default: %(default)s)",
    )


def _check_select_args(args):
    """One-line message for an invalid select option, or None."""
    for k in args.n_components:
        if _n_components_problem(k):
            return _n_components_problem(k)
    if args.max_iter < 2:
        return "--max-iter must be at least 2"
    if args.folds < 2:
        return (f"--folds must be at least 2 (each fit is measured on another part), "
                f"got {args.folds}")
    if args.n_jobs == 0:
        return "--n-jobs must be a number of processes >= 1, or -1 for one per core, got 0"
    return (_df_problem(args) or _seed_problem(args.seed)
            or _out_problem(args, "the comparison", "select"))


def _run_select(args):
    """The ``select`` command: load, vectorize, fit every K on every fold,
    print and write the comparison; return the exit code."""
    from sklearn_clda.report import InputError

    fail = functools.partial(_fail, prog=_select_prog())
    try:
        docs, _, X = _read_corpus(args, _check_select_args(args))
    except InputError as exc:
        return fail(str(exc))
    # Documents without a word neither shape a fit nor have tokens to score.
    worded = np.flatnonzero(np.asarray(X.sum(axis=1)).ravel())
    X, groups = X[worded], [docs.groups[i] for i in worded]
    problem, note = _folds_problem(args.folds, groups)
    if problem:
        return fail(problem)
    if note:
        _note(note, _select_prog())
    try:
        results = _compare_numbers_of_topics(args, X, groups)
    except (MemoryLimitError, ValueError) as exc:  # (a fold without tokens, say)
        return fail(str(exc))
    print(format_select_table(results))
    return _write_select_folder(args, results, fail)


def _folds_problem(folds, groups):
    """``(problem, note)`` of ``--folds`` for these collections (each None
    or one line): each collection is split into the folds."""
    sizes = Counter(groups).values()
    largest = max(sizes)
    if largest < 2:
        return ("no collection has two documents with words, and the folds split each "
                "collection: there is nothing to fit on and score on other documents; "
                "give more documents"), None
    if folds > largest:
        return (f"--folds {folds} is more than the documents of the largest collection "
                f"({largest}): each collection is split into the folds; lower --folds"), None
    small = sum(size < folds for size in sizes)
    if not small:
        return None, None
    return None, (f"{small:,} collection(s) have fewer documents than --folds {folds}: "
                  "some folds are fitted without them, and score their held-out "
                  "documents with the corpus-wide mixture")


#: Warnings of the fits that the command says once, in its own words (or,
#: for an interrupted fit, with "interrupted"): category, message start.
_QUIET_WARNINGS = (
    (ManyCollectionsWarning, ""),
    (UnseenCollectionWarning, ""),
    (FitInterruptedWarning, ""),
    (UserWarning, "The least populated class"),
    (UserWarning, r"\d+ top word\(s\) of the topics never occur"),
)


def _compare_numbers_of_topics(args, X, groups):
    """``select_n_components`` of CompoundLDA on X, with a line of what it does."""
    from sklearn_clda import CompoundLDA
    from sklearn_clda.inspection import select_n_components

    from sklearn_clda.report._parallel import chain_jobs

    ks = args.n_components
    # (each fit sees (folds - 1) / folds of X: the memory estimate is an upper bound)
    jobs, note = chain_jobs(args.n_jobs, len(ks) * args.folds, X, max(ks),
                            len(set(groups)), what="fits")
    if note:
        _note(note, _select_prog())
    print(
        f"Vocabulary: {X.shape[1]:,} terms, {int(X.sum()):,} tokens. Fitting "
        f"CompoundLDA {len(ks) * args.folds} times (K = {', '.join(map(str, ks))}; "
        f"{args.folds} folds) for {args.max_iter:,} sweeps each..."
    )
    start = time.perf_counter()
    with warnings.catch_warnings():
        for category, message in _QUIET_WARNINGS:
            warnings.filterwarnings("ignore", message, category)
        results = select_n_components(
            CompoundLDA(max_iter=args.max_iter, random_state=args.seed), X, groups,
            n_components=ks, cv=args.folds, n_jobs=jobs, random_state=args.seed,
        )
    print(f"Done in {time.perf_counter() - start:.1f} s.\n")
    return results


#: Columns of the select table: measure, heading, decimals.
_SELECT_COLUMNS = (("perplexity", "perplexity", 1), ("coherence", "coherence", 2),
                   ("exclusivity", "exclusivity", 3), ("stability", "stability", 3),
                   ("dispersion", "dispersion", 2), ("fit_time", "fit s", 1))


def format_select_table(results):
    """The comparison as text: one row per K, each measure's mean +- its
    standard deviation over the folds."""
    cells = [["K"] + [heading for _, heading, _ in _SELECT_COLUMNS]]
    for _, row in results.iterrows():
        cells.append([str(int(row["n_components"]))] + [
            f"{row[name]:.{digits}f} +- {row[name + '_std']:.{digits}f}"
            for name, _, digits in _SELECT_COLUMNS])
    widths = [max(len(line[i]) for line in cells) for i in range(len(cells[0]))]
    lines = ["  ".join(cell.rjust(width) for cell, width in zip(line, widths))
             for line in cells]
    return "\n".join(lines + [
        "",
        "perplexity of held-out documents: lower is better; coherence, exclusivity "
        "and stability",
        "of the top 10 words: higher is better (stability: do the folds' fits find "
        "the same words?);",
        "residual dispersion: about 1 when the topics explain how the documents vary, "
        "higher with too few",
        "topics (where it stops falling, more topics explain little more).",
    ])


def _write_select_folder(args, results, fail):
    """Write the table (CSV) and the figure (PNG) to ``--out``; the exit code."""
    import matplotlib.pyplot as plt

    from sklearn_clda.plotting import SelectNComponentsDisplay
    from sklearn_clda.report import InputError
    from sklearn_clda.report._files import SELECT_FILES, staged_output, write_csv, write_file

    out = Path(args.out)
    table, figure = SELECT_FILES
    display = SelectNComponentsDisplay.from_results(results)
    try:
        out.mkdir(parents=True, exist_ok=True)
        # Both files replace an earlier run's, the table last: never a mix.
        with staged_output(out, owned=SELECT_FILES, markers=(table,)) as stage:
            write_csv(stage, table, list(results.columns), results.itertuples(index=False))
            write_file(stage, figure,
                       lambda fh: display.figure_.savefig(fh, format="png", dpi=110))
    except (InputError, OSError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        return fail(f"cannot write to {out}: {reason}")
    finally:
        plt.close(display.figure_)
    print(_printable(f"\nWrote {out / table} and {out / figure}."))
    print(f"Read the topics of a candidate K with:\n  {_printable(_report_command(args))} -k K "
          "--out DIR")
    return 0


def _report_command(args):
    """The ``report`` command on the same documents and vocabulary as ``args``."""
    parts = [_report_prog(), "--input", shlex.quote(str(args.input))]
    for option, value, default in (
        ("--text-column", args.text_column, "text"),
        ("--group-column", args.group_column, "group"),
        ("--stop-words", args.stop_words, "english"),
        ("--min-df", args.min_df, 2),
        ("--max-df", args.max_df, 0.95),
    ):
        if value != default:
            parts += [option, shlex.quote(str(value))]
    if args.seed:
        parts += ["--seed", str(args.seed)]
    return " ".join(parts)

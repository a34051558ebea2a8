"""Command line: ``python -m sklearn_clda``.

Without a command, fits :class:`~sklearn_clda.CompoundLDA` on the bundled
16-newsgroups corpus (four collections: comp, politics, rec, sci) and
prints the FREX words of every topic beside each collection's topic
proportions, the view of the compound LDA paper's Figure 1; ``--report DIR``
also writes the HTML report of the fit.

``python -m sklearn_clda report --input PATH --out DIR`` fits compound LDA
on your own documents (a CSV/TSV file, a JSON-lines file or a folder of
``.txt`` files per collection) and writes an HTML report for people: see
:func:`sklearn_clda.report.write_report`. ``python -m sklearn_clda select
--input PATH --out DIR -k 5,10,20`` compares numbers of topics on the same
documents first (:func:`sklearn_clda.inspection.select_n_components`).

Exit status: 0 on success; 2 on a usage or input error (bad option, missing
file or column, file not UTF-8, empty vocabulary, unwritable output), with
a one-line message on stderr; 130 when interrupted (Ctrl-C), with the line
"interrupted" on stderr; 1 when the reader of stdout goes away.
"""

import argparse
import contextlib
import io
import math
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np

from ._cli_common import (
    MAX_REPORT_TOPICS,
    MAX_SEED,
    _add_input_options,
    _add_vocabulary_options,
    _df_problem,
    _fail,
    _n_components_problem,
    _note,
    _out_problem,
    _printable,
    _prog,
    _read_corpus,
    _report_dependencies_missing,
    _report_prog,
    _seed_problem,
    _select_prog,
    _use_agg,
)
from ._cli_select import _add_select_parser, _run_select
from .exceptions import FitInterruptedWarning, ManyCollectionsWarning, MemoryLimitError

# Seconds of further sweeps for the report: keeps the whole report on
# 16-newsgroups at K=20 under a minute on two cores.
TIME_BUDGET = 25.0
MAX_CHAINS = 16  # --chains: each is a whole fit
_N_JOBS_HELP = (
    "with --chains: chains fitted at once, each in its own process (the same "
    "result as one after another); -1 for one per core, -2 all but one "
    "(default: %(default)s)"
)
_CHAINS_HELP = (
    f"fit N chains (seeds --seed, --seed + 1, ...) whose draws the report pools, "
    f"its R-hat saying whether they agree (at most {MAX_CHAINS}; N times the fit "
    "time) (default: %(default)s)"
)
_NO_FIGURES_HELP = (
    "write the report without its figures: no matplotlib needed, and much "
    "quicker (the figures take most of a small report's time)"
)
_TIME_BUDGET_HELP = (
    "seconds the report may spend running the chain further, until every "
    "collection's topic proportions have an effective sample size of 100 "
    "(it stops early if the sample size does not grow with the chain); "
    "0 runs no further sweeps (default: %(default)g)"
)


def _usage():
    return (
        f"{_prog()} [-h] [-k K] [-n SWEEPS] [--seed SEED] [--top-words N]\n"
        "       [--gamma GAMMA] [--no-progress] [--report DIR] [--time-budget SECONDS]\n"
        "       [--chains N] [--n-jobs N] [--themes N] [--no-figures]\n"
        f"       {_report_prog()} --input PATH --out DIR [options]\n"
        f"       {_select_prog()} --input PATH --out DIR [options]"
    )

_REPORT_DESCRIPTION = """\
Fit compound LDA on your own documents, split into collections (news
outlets, years, authors, ...), and write an HTML report for people to --out:
index.html (summary; topics with their FREX and most probable words, sizes,
coherence, representative documents and each collection's own words in them,
and an interactive map of them by collection, with LDAvis's relevance;
which topics go together in documents, within the collections;
topic proportions of each collection as a heatmap, bars, a map of the
topics, a table with intervals, the same for themes (the topics grouped by
their words) and, for ordered labels, trends;
what distinguishes each collection; pairwise comparisons; with
--covariate-column, how a number per document such as its date moves each
topic's share, as stm's estimateEffect, as slopes and curves; fit
diagnostics),
the figures as PNG files, every table as CSV, report.json with the page's
numbers, model.npz with vocabulary.txt (the fitted CompoundLDA as plain
arrays: load it with sklearn_clda.load_model, which runs no code from the
file) and model.joblib, the fitted scikit-learn pipeline (CountVectorizer +
CompoundLDA; joblib.load runs code stored in the file: load it only if you
trust its source). Before writing, the chain runs further until every
collection's topic proportions have an effective sample size of 100, or
--time-budget ends, or the sample size stops growing with the chain (some
proportions drift: compare fits with other --seed values, or fit several
chains with --chains); intervals resting on fewer effective draws are
marked and never called clear. With --chains N the model is fitted N times
(seeds --seed, --seed + 1, ...), the fits' topics are matched, and the
page's proportions, intervals and comparisons pool their draws, with an
R-hat saying whether they agree and the topics some fit lacks marked. The
page works offline: its style sheet, script, figures and tables sit in the
same folder.
"""

_REPORT_EPILOG = """\
input formats (--input):
  .csv / .tsv         comma- or tab-separated, with a header row naming the
                      columns; --text-column and --group-column pick them
  .jsonl / .ndjson    one JSON object per line, e.g.
  .json               {"text": "...", "group": "..."} (a .json file may also
                      hold one JSON array of such objects)
  folder              one sub-folder per collection holding .txt files (one
                      document per file); the sub-folder name is the collection
  Files must be UTF-8. Empty or whitespace-only documents, and documents
  without a collection label (an empty cell, a JSON null or NaN), are
  skipped with a note. A --covariate-column cell holds a number, an ISO
  date (2021-07-01, read as the decimal year 2021.496) or nothing (empty,
  NA, NaN, null or None; JSON null or a missing field): a document without
  a value is fitted, and left out of the covariates' section.

output (--out):
  The folder is created if needed; the report's files in it are replaced
  (written to a temporary file in the folder, then moved into place). If
  one of them is a symbolic link, nothing is written: a link could point
  outside the folder. --out itself may be a link to a folder.

examples:
  python -m sklearn_clda report --input docs.csv --text-column text \\
      --group-column source --n-components 20 --out report/
  python -m sklearn_clda report --input corpus/ -k 30 -n 1000 --out report/
  python -m sklearn_clda report --input docs.csv --chains 4 --out report/
  python -m sklearn_clda report --input docs.csv --covariate-column date \\
      --covariate-column rating --out report/

exit status:
  0 on success; 2 on a usage or input error (a missing file, an unsupported
  file type, a missing column, a file that is not UTF-8, no documents, an
  empty vocabulary, an output path that is a file or a symbolic link, ...),
  explained in one line on stderr; 130 when interrupted (Ctrl-C).
"""


def _build_parser():
    parser = argparse.ArgumentParser(
        prog=_prog(),
        usage=_usage(),
        description=(
            "Fit compound LDA on the bundled 16-newsgroups corpus (10,764 "
            "documents in 4 collections) and print each topic's FREX words "
            "with every collection's topic proportions. With the report "
            "command, fit your own documents and write an HTML report; with "
            "the select command, compare numbers of topics on them first."
        ),
        epilog=(f"Run '{_report_prog()} --help' and '{_select_prog()} --help' for the "
                "commands' options."),
    )
    parser.add_argument(
        "-k", "--n-components", type=int, default=20, metavar="K",
        help="number of topics (default: %(default)s)",
    )
    parser.add_argument(
        "-n", "--max-iter", type=int, default=400, metavar="SWEEPS",
        help="Gibbs sweeps; the first half is burn-in (default: %(default)s)",
    )
    parser.add_argument(
        "--seed", type=int, default=0,
        help=f"random seed in [0, {MAX_SEED}]; the same seed gives the same output "
        "(default: %(default)s)",
    )
    parser.add_argument(
        "--top-words", type=int, default=8, metavar="N",
        help="words shown per topic (default: %(default)s)",
    )
    parser.add_argument(
        "--gamma", type=float, default=None,
        help="document concentration around the collection mixture "
        "(default: 0.1 * K)",
    )
    parser.add_argument(
        "--no-progress", action="store_true", help="do not show the progress bar",
    )
    parser.add_argument(
        "--report", metavar="DIR", default=None,
        help="also write the HTML report of the fit (figures, topics, what "
        "distinguishes each collection, diagnostics) to the folder DIR; "
        "model.npz and model.joblib there hold the CompoundLDA model alone",
    )
    parser.add_argument(
        "--time-budget", type=float, default=TIME_BUDGET, metavar="SECONDS",
        help="with --report: " + _TIME_BUDGET_HELP,
    )
    parser.add_argument(
        "--chains", type=int, default=1, metavar="N",
        help="with --report: " + _CHAINS_HELP,
    )
    parser.add_argument(
        "--no-figures", action="store_true", help="with --report: " + _NO_FIGURES_HELP,
    )
    parser.add_argument("--themes", type=_themes_arg, default="auto", metavar="N",
                        help="with --report: " + _THEMES_HELP)
    parser.add_argument(
        "--n-jobs", type=int, default=-1, metavar="N", help=_N_JOBS_HELP,
    )
    commands = parser.add_subparsers(
        dest="command", title="commands", metavar="COMMAND",
        description="Without a command, run the 16-newsgroups demo above.",
    )
    _add_report_parser(commands)
    _add_select_parser(commands)
    return parser


_THEMES_HELP = (
    "group the topics into N themes by their words, each with every collection's share "
    "and its interval; 0 for none, auto for the square root of the number of topics "
    "(none below 10 topics) (default: auto)"
)


def _themes_arg(text):
    """``--themes``: "auto" or a count."""
    if text == "auto":
        return text
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a number of themes or auto, got {text!r}") from None


def _themes_problem(themes, n_components):
    """Why ``--themes`` cannot group ``n_components`` topics, or None."""
    if themes == "auto" or themes == 0 or 2 <= themes < n_components:
        return None
    return (f"--themes must be 0 (none), auto or from 2 to the number of topics minus one "
            f"({n_components - 1}), got {themes}")


def _add_report_parser(commands):
    report = commands.add_parser(
        "report",
        prog=_report_prog(),
        help="fit compound LDA on your documents and write an HTML report",
        description=_REPORT_DESCRIPTION,
        epilog=_REPORT_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    report.set_defaults(command_prog=_report_prog())
    io_group = _add_input_options(report, (
        "folder to write the report to; created if needed, report files "
        "in it are replaced (refused if one is a symbolic link)"
    ))
    io_group.add_argument(
        "--covariate-column", action="append", default=[], metavar="NAME",
        help="column or field with a number or an ISO date per document (a date, an "
        "author's age, a rating); the report then shows how it moves each topic's "
        "share, as stm's estimateEffect, and with 10 distinct values or more each "
        "topic's curve along it (repeat for up to 8 columns; documents without a "
        "value are fitted, and left out of that section)",
    )
    io_group.add_argument(
        "--title", default=None,
        help="title of the report (default: 'Topics of <input name>')",
    )
    _add_vocabulary_options(report)
    fit = report.add_argument_group("model")
    fit.add_argument(
        "-k", "--n-components", type=int, default=20, metavar="K",
        help="number of topics (default: %(default)s); the select command "
        "compares several on the same documents",
    )
    fit.add_argument(
        "-n", "--max-iter", type=int, default=500, metavar="SWEEPS",
        help="Gibbs sweeps; the first half is burn-in (default: %(default)s)",
    )
    fit.add_argument(
        "--seed", type=int, default=0,
        help=f"random seed in [0, {MAX_SEED}]; the same seed gives the same report "
        "(default: %(default)s)",
    )
    fit.add_argument(
        "--chains", type=int, default=1, metavar="N", help=_CHAINS_HELP,
    )
    fit.add_argument(
        "--n-jobs", type=int, default=-1, metavar="N", help=_N_JOBS_HELP,
    )
    fit.add_argument(
        "--top-words", type=int, default=10, metavar="N",
        help="words shown per topic, also used for the coherence "
        "(default: %(default)s)",
    )
    fit.add_argument("--themes", type=_themes_arg, default="auto", metavar="N",
                     help=_THEMES_HELP)
    fit.add_argument(
        "--time-budget", type=float, default=TIME_BUDGET, metavar="SECONDS",
        help=_TIME_BUDGET_HELP,
    )
    fit.add_argument(
        "--no-progress", action="store_true", help="do not show the progress bar",
    )
    io_group.add_argument(
        "--no-figures", action="store_true", help=_NO_FIGURES_HELP,
    )


def _chains_problem(chains, seed, n_jobs):
    if n_jobs == 0:
        return "--n-jobs must be a number of processes >= 1, or -1 for one per core, got 0"
    if not 1 <= chains <= MAX_CHAINS:
        return f"--chains must be in [1, {MAX_CHAINS}], got {chains}"
    if 0 <= seed and seed + chains - 1 > MAX_SEED:
        return (f"--seed {seed} with --chains {chains} needs seeds past {MAX_SEED}; "
                "pick a smaller --seed")
    return None


def _time_budget_problem(seconds):
    if not (seconds >= 0 and math.isfinite(seconds)):
        return f"--time-budget must be a number of seconds >= 0, got {seconds}"
    return None


def _check_args(parser, args):
    """Exit with a usage error for an invalid demo option."""
    from sklearn_clda.report import output_problem

    if _n_components_problem(args.n_components, MAX_REPORT_TOPICS):
        parser.error(_n_components_problem(args.n_components, MAX_REPORT_TOPICS))
    if args.max_iter < 2:
        parser.error("--max-iter must be at least 2")
    if args.top_words < 1:
        parser.error("--top-words must be at least 1")
    if _themes_problem(args.themes, args.n_components):
        parser.error(_themes_problem(args.themes, args.n_components))
    if args.gamma is not None and not (args.gamma > 0 and math.isfinite(args.gamma)):
        parser.error(f"--gamma must be positive and finite, got {args.gamma}")
    if _seed_problem(args.seed):
        parser.error(_seed_problem(args.seed))
    if args.report == "":
        parser.error("--report: the folder name is empty")
    if args.report is not None and output_problem(args.report):
        parser.error(f"--report: {output_problem(args.report)}")
    if _time_budget_problem(args.time_budget):
        parser.error(_time_budget_problem(args.time_budget))
    if _chains_problem(args.chains, args.seed, args.n_jobs):
        parser.error(_chains_problem(args.chains, args.seed, args.n_jobs))
    if args.chains > 1 and args.report is None:
        parser.error("--chains pools several fits in the report: give --report DIR too")
    if args.no_figures and args.report is None:
        parser.error("--no-figures leaves the report's figures out: give --report DIR too")
    missing = args.report is not None and _report_dependencies_missing(not args.no_figures)
    if missing:
        parser.error(f"--report: {missing}")


def format_topic_table(model, feature_names, top_words=8, method="prob"):
    """Text table: one line per topic with its words and collection shares.

    Parameters
    ----------
    model : CompoundLDA
        A fitted model.
    feature_names : array-like of str
        Vocabulary, in column order.
    top_words : int, default=8
        Words shown per topic.
    method : {"prob", "frex", "lift", "score", "relevance"}, default="prob"
        How the words are chosen: the most probable ones, or as
        :func:`sklearn_clda.inspection.topic_labels` ranks them (the demo
        shows FREX words).

    Returns
    -------
    table : str
    """
    # The word ranking of topic_labels, without its pandas table: the demo
    # runs on the core dependencies.
    from sklearn_clda.inspection._labels import word_scores
    from sklearn_clda.metrics._topics import _top_indices

    feature_names = np.asarray(feature_names)
    n_words = min(top_words, len(feature_names))
    scores = word_scores(np.asarray(model.components_, dtype=np.float64), method)
    words = feature_names[_top_indices(scores, n_words)].tolist()
    pi = model.collection_topic_
    labels = (
        ["all"] if model.groups_ is None else [str(g) for g in model.groups_]
    )
    width = max(8, *(len(label) for label in labels)) + 2
    title = "top words" if method == "prob" else f"{method.upper()} words"
    header = "topic " + "".join(f"{label:>{width}}" for label in labels) + "  " + title
    lines = [header, "-" * len(header)]
    for k in range(model.n_components):
        shares = "".join(f"{100 * pi[j, k]:>{width - 1}.1f}%" for j in range(pi.shape[0]))
        lines.append(f"{k:>5} {shares}  {' '.join(words[k])}")
    return "\n".join(lines)


def format_theme_table(model, feature_names, n_themes):
    """Text table: the topics grouped into ``n_themes`` themes by their words
    (:func:`sklearn_clda.inspection.topic_themes`), one line per theme with
    each collection's share of it (the sum of its topics') and its topics.

    Parameters
    ----------
    model : CompoundLDA
        A fitted model with at least ``n_themes + 1`` topics.
    feature_names : array-like of str
        Vocabulary, in column order.
    n_themes : int
        Number of themes, at least 2.

    Returns
    -------
    table : str
    """
    from sklearn_clda.inspection import topic_themes

    themes = topic_themes(model, n_themes, feature_names)
    pi = model.collection_topic_
    labels = ["all"] if model.groups_ is None else [str(g) for g in model.groups_]
    width = max(8, *(len(label) for label in labels)) + 2
    name_width = max(5, *(len(name) for name in themes))
    header = (f"{'theme':<{name_width}}" + "".join(f"{label:>{width}}" for label in labels)
              + "  topics")
    lines = [header, "-" * len(header)]
    for name, topics in themes.items():
        shares = "".join(f"{100 * pi[j, topics].sum():>{width - 1}.1f}%"
                         for j in range(pi.shape[0]))
        lines.append(f"{name:<{name_width}}{shares}  {' '.join(map(str, topics))}")
    return "\n".join(lines)


def _check_report_args(args):
    """One-line message for an invalid report option, or None."""
    if _n_components_problem(args.n_components, MAX_REPORT_TOPICS):
        return _n_components_problem(args.n_components, MAX_REPORT_TOPICS)
    if args.max_iter < 2:
        return "--max-iter must be at least 2"
    if args.top_words < 1:
        return "--top-words must be at least 1"
    if _themes_problem(args.themes, args.n_components):
        return _themes_problem(args.themes, args.n_components)
    if _df_problem(args):
        return _df_problem(args)
    if _seed_problem(args.seed):
        return _seed_problem(args.seed)
    if _chains_problem(args.chains, args.seed, args.n_jobs):
        return _chains_problem(args.chains, args.seed, args.n_jobs)
    if _time_budget_problem(args.time_budget):
        return _time_budget_problem(args.time_budget)
    from sklearn_clda.report._covariate_effects import MAX_COVARIATES

    if len(args.covariate_column) > MAX_COVARIATES:
        return (f"--covariate-column is given {len(args.covariate_column)} times; the report "
                f"takes up to {MAX_COVARIATES} (sklearn_clda.inspection.topic_effects takes "
                "more)")
    return _out_problem(args, "the report", "report")


@contextlib.contextmanager
def _quiet_evaluations(verbose):
    """Keep the sampler's per-evaluation log-likelihood lines off stdout.

    With ``verbose`` the sampler prints a line at every evaluation; the
    report plots the log-likelihood instead. The progress bar (stderr) stays.
    """
    if not verbose:
        yield
        return
    with contextlib.redirect_stdout(io.StringIO()):
        yield


def _report_sampling(max_iter):
    """``(thin, evaluate_every)`` for a report fit of ``max_iter`` sweeps.

    Keeps about 100 draws after the default burn-in (half the sweeps) for the
    posterior intervals, and records the log-likelihood about 100 times.
    """
    kept = max_iter - max_iter // 2
    return min(10, max(1, kept // 100)), max(1, max_iter // 100)


def _run_report(args):
    """The ``report`` command: load, vectorize, fit, extend, write; return the exit code."""
    from sklearn_clda.report import InputError
    from sklearn_clda.report._parallel import ChainProcessError

    try:
        docs, vectorizer, X = _read_corpus(args, _check_report_args(args),
                                           figures=not args.no_figures)
        covariates = _report_covariates(docs, X)
    except InputError as exc:
        return _fail(str(exc))
    try:
        pipeline, chains, seconds = _fit_report_model(args, vectorizer, X, docs.groups)
        model = pipeline[-1]
        extension = _extend_for_report(args, [model, *chains], X, docs.groups)
    except (ChainProcessError, MemoryLimitError) as exc:
        return _fail(str(exc))
    for fit in (model, *chains):
        fit.set_params(verbose=0)  # the saved pipeline refits without a progress bar
    settings = {
        "Vectorizer": (
            f"CountVectorizer(stop_words={vectorizer.stop_words!r}, "
            f"min_df={args.min_df!r}, max_df={args.max_df!r})"
        ),
    }
    title = args.title or f"Topics of {Path(args.input).name or args.input}"
    return _write_report_folder(
        args.out, _fail, pipeline, X, vectorizer.get_feature_names_out(),
        title=title, groups=docs.groups, texts=docs.texts, texts_info=dict(docs),
        settings=settings, fit_seconds=seconds + extension["seconds"],
        top_words=args.top_words, n_themes=args.themes, extension=extension, chains=chains,
        figures=not args.no_figures, covariates=covariates,
    )


def _report_covariates(docs, X):
    """The ``--covariate-column`` values as a DataFrame (None without),
    checked before the fit: InputError if they cannot be regressed on."""
    from sklearn_clda.report import InputError
    from sklearn_clda.report._covariate_effects import check_covariates, covariate_problem

    if not docs.covariates:
        return None
    try:
        covariates = check_covariates(docs.covariates, X.shape[0])
    except ValueError as exc:  # (a column named "intercept")
        raise InputError(f"--covariate-column: {exc}") from None
    problem = covariate_problem(covariates, X)
    if problem:
        raise InputError(f"--covariate-column: {problem}")
    return covariates


def _fit_report_model(args, vectorizer, X, groups):
    """Fit CompoundLDA on X; return the pipeline (vectorizer + model) and the seconds."""
    from sklearn.pipeline import Pipeline

    from sklearn_clda import CompoundLDA

    thin, evaluate_every = _report_sampling(args.max_iter)
    model = CompoundLDA(
        n_components=args.n_components,
        max_iter=args.max_iter,
        thin=thin,
        evaluate_every=evaluate_every,
        random_state=args.seed,
        verbose=0 if args.no_progress else 1,
    )
    _keep_chain(model)
    # The steps of ``pipeline.fit(texts, compoundlda__groups=groups)`` run one
    # at a time, so that a vocabulary problem is reported before sampling and
    # the counts X are kept for the report.
    pipeline = Pipeline([("countvectorizer", vectorizer), ("compoundlda", model)])
    print(
        f"Vocabulary: {X.shape[1]:,} terms, {int(X.sum()):,} tokens. Fitting "
        f"CompoundLDA(K={args.n_components}) for {args.max_iter:,} sweeps..."
    )
    fits = [model, *_chain_models(args, model)]
    seconds = _fit_chains(args, fits, X, groups)
    print(f"Fitted in {seconds:.1f} s.")
    return pipeline, fits[1:], seconds


def _chain_models(args, model):
    """``--chains``: unfitted copies of ``model`` with seeds --seed + 1, ..."""
    from sklearn.base import clone

    return [clone(model).set_params(random_state=args.seed + index)
            for index in range(1, args.chains)]


def _fit_chains(args, fits, X, groups):
    """Fit the chains ``fits``, ``--n-jobs`` at once; return the seconds taken.

    One at a time, each shows its progress bar; at once, they run without.
    """
    from sklearn_clda.report._parallel import chain_jobs, fit_chain, map_chains

    start = time.perf_counter()
    jobs, note = chain_jobs(args.n_jobs, len(fits), X, fits[0].n_components,
                            len(set(groups)) if groups is not None else 1)
    if note:
        _note(note)
    if jobs == 1:
        for fit in fits:
            if args.chains > 1:
                print(f"Chain {fit.random_state - args.seed + 1} of {args.chains} "
                      f"(seed {fit.random_state})...")
            with _quiet_fit(fit.verbose):
                fit.fit(X, groups=groups)
        return time.perf_counter() - start
    seeds = [fit.random_state for fit in fits]
    print(f"{len(fits)} chains (seeds {seeds[0]} to {seeds[-1]}), {jobs} at a time, "
          "each in its own process...")
    verbose = [fit.verbose for fit in fits]
    for fit in fits:
        fit.set_params(verbose=0)
    map_chains(fit_chain, fits, jobs, X, groups)
    for fit, level in zip(fits, verbose):
        fit.set_params(verbose=level)
    return time.perf_counter() - start


def _fit_more_chains(args, model, X, groups):
    """The demo's ``--chains``: the further fits and their seconds."""
    chains = _chain_models(args, model)
    if not chains:
        return [], 0.0
    seconds = _fit_chains(args, chains, X, groups)
    print(f"Fitted {len(chains)} more chain{'s' if len(chains) > 1 else ''} "
          f"in {seconds:.1f} s.")
    return chains, seconds


def _keep_chain(model):
    """Let a later fit continue the chain (``warm_start``), where the estimator can."""
    if "warm_start" in model.get_params():
        model.set_params(warm_start=True)


@contextlib.contextmanager
def _quiet_fit(verbose):
    """No per-evaluation lines on stdout; no warning about many collections (the
    loader has already said so in a note)."""
    with _quiet_evaluations(verbose), warnings.catch_warnings():
        warnings.simplefilter("ignore", ManyCollectionsWarning)
        yield


def _extend_for_report(args, fits, X, groups):
    """Continue the chain (or the chains ``fits``) for the report until their
    draws suffice or the budget ends."""
    from sklearn_clda.report import extend_chain

    if args.time_budget > 0:
        chains = f"the {len(fits)} chains" if len(fits) > 1 else "the chain"
        print(
            f"Running {chains} further (at most {args.time_budget:g} s) until every "
            "topic proportion has 100 effective draws..."
        )
    with _quiet_fit(fits[0].verbose):
        extension = extend_chain(fits if len(fits) > 1 else fits[0], X, groups,
                                 time_budget=args.time_budget, n_jobs=args.n_jobs)
    for fit in fits:
        if "warm_start" in fit.get_params():
            # A refit of the saved model starts afresh, and the saved files need
            # not carry the chain's state (4 bytes per token and the sample sums).
            fit.set_params(warm_start=False)
            vars(fit).pop("_warm_chain", None)
    if extension["rounds"]:
        ess = extension["ess_after"]
        print(
            f"{extension['sweeps_after']:,} sweeps in all; smallest effective sample "
            f"size {'n/a' if ess is None else f'{ess:.0f}'} "
            f"({_extension_outcome(extension, len(fits))})."
        )
    return extension


def _extension_outcome(extension, n_chains=1):
    """How :func:`~sklearn_clda.report.extend_chain` ended, in words."""
    if extension["reached"]:
        return "reached"
    if extension.get("stalled") and n_chains > 1:
        return ("stopped: it does not grow with the chains, they disagree on some topic "
                "proportions; the page marks them")
    if extension.get("stalled"):
        return ("stopped: it does not grow with the chain, some topic proportions drift; "
                "compare fits with other --seed values, or use --chains")
    return "the time budget ended first"


def _write_report_folder(out, fail, model, X, names, **kwargs):
    """``write_report(...)``; print where the page is, or fail with one line."""
    from sklearn_clda.report import InputError, write_report

    print("Writing the report...")
    try:
        summary = write_report(model, X, names, out, **kwargs)
    except (InputError, OSError, ValueError) as exc:  # (covariates too small to regress on)
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        return fail(f"cannot write the report to {out}: {reason}")
    print(f"Report: {_printable(summary['index_html'])}")
    return 0


def _write_demo_report(args, model, news, seconds):
    """Write the HTML report of the demo's fit to ``args.report``."""
    if not args.no_figures:
        _use_agg()
    note = (
        "16-newsgroups ships as counts, without its raw texts, hence no "
        "vectorizer: apply the model to rows of load_news16().data, e.g. "
        "clda.transform(news.data[:5], groups=news.groups[:5])."
    )
    from sklearn_clda.report._parallel import ChainProcessError

    print()
    try:
        chains, chain_seconds = _fit_more_chains(args, model, news.data, news.groups)
        extension = _extend_for_report(args, [model, *chains], news.data, news.groups)
    except (ChainProcessError, MemoryLimitError) as exc:
        return _demo_fail(str(exc))
    for fit in (model, *chains):
        fit.set_params(verbose=0)
    command = (f"{_prog()} -k {args.n_components} -n {args.max_iter} --seed {args.seed}"
               + (f" --gamma {args.gamma:g}" if args.gamma else "")
               + (f" --chains {args.chains}" if args.chains > 1 else ""))
    return _write_report_folder(
        args.report, _demo_fail, model, news.data, news.feature_names,
        title="Compound LDA on 16-newsgroups", groups=news.groups,
        texts_info={
            "source": "16-newsgroups, bundled with sklearn-clda (load_news16)",
            "format": "document-term counts; stop words and rare words removed upstream",
        },
        settings={"Command": command},
        fit_seconds=seconds + chain_seconds + extension["seconds"],
        top_words=args.top_words, n_themes=args.themes, model_note=note, extension=extension,
        chains=chains,
        figures=not args.no_figures,
    )


def _demo_fail(message):
    print(f"{_prog()}: error: {message}", file=sys.stderr)
    return 2


def main(argv=None):
    """Run the demo, the ``report`` or the ``select`` command; return the exit code.

    Ctrl-C (KeyboardInterrupt) ends either with the line "interrupted" on
    stderr and the exit code 130, without a traceback (nor the estimators'
    FitInterruptedWarning, which says the same to Python users).
    """
    parser = _build_parser()
    args = parser.parse_args(argv)
    prog = getattr(args, "command_prog", None) or _prog()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FitInterruptedWarning)
            if args.command == "report":
                return _run_report(args)
            if args.command == "select":
                return _run_select(args)
            _check_args(parser, args)
            return _run_demo(args)
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130


def _run_demo(args):
    """The demo: fit news16, print the topic table (and write the report)."""
    from sklearn_clda import CompoundLDA
    from sklearn_clda.datasets import load_news16

    news = load_news16()
    n_tokens = int(news.data.sum())
    print(
        f"16-newsgroups: {news.data.shape[0]:,} documents, {news.data.shape[1]:,} "
        f"terms, {n_tokens:,} tokens, collections: {', '.join(news.group_names)}"
    )
    model = CompoundLDA(
        n_components=args.n_components,
        gamma=args.gamma,
        eta=0.01,
        max_iter=args.max_iter,
        random_state=args.seed,
        verbose=0 if args.no_progress else 1,
    )
    if args.report is not None:
        # Record the log-likelihood along the run for the report, and keep the
        # chain for the report to run further; neither draws random numbers,
        # so the fit (and the table) is the same as without.
        model.set_params(evaluate_every=max(1, args.max_iter // 100))
        _keep_chain(model)
    start = time.perf_counter()
    try:
        with _quiet_evaluations(model.verbose and args.report is not None):
            model.fit(news.data, groups=news.groups)
    except MemoryLimitError as exc:
        return _demo_fail(str(exc))
    seconds = time.perf_counter() - start
    print(
        f"CompoundLDA(K={args.n_components}, gamma={model.gamma_:g}, eta={model.eta_:g}): "
        f"{args.max_iter} sweeps in {seconds:.1f} s "
        f"({n_tokens * args.max_iter / seconds / 1e6:.1f}M tokens/s)\n"
    )
    print(
        "Topic proportions of each collection (pi_j, posterior mean) and each topic's "
        "FREX words\n(frequent in the topic and exclusive to it):\n"
    )
    print(format_topic_table(model, news.feature_names, args.top_words, method="frex"))
    from sklearn_clda.inspection._hierarchy import themes_for

    n_themes = themes_for(args.themes, args.n_components)
    if n_themes:
        print(f"\nThe topics grouped into {n_themes} themes by their words, each "
              "collection's share of each\n(sklearn_clda.inspection.topic_themes; "
              "--themes N for another number, 0 for none):\n")
        print(format_theme_table(model, news.feature_names, n_themes))
    if args.report is not None:
        return _write_demo_report(args, model, news, seconds)
    return 0


def _run():
    """Entry point: ``main()``, quiet when the reader of stdout goes away."""
    try:
        code = main()
        sys.stdout.flush()  # a closed pipe shows here, not at interpreter exit
        return code
    except BrokenPipeError:
        # e.g. ``python -m sklearn_clda | head``: stop without a traceback.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


if __name__ == "__main__":
    sys.exit(_run())

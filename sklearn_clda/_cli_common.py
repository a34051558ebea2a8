"""What the command line's commands on your documents share (``report`` and
``select``): their names, their input and vocabulary options and checks,
reading the documents and building the vocabulary, and the one-line errors
and notes on stderr."""

import argparse
import os
import re
import sys
from pathlib import Path

import numpy as np


MAX_SEED = 2**32 - 1  # seeds are those of numpy.random.RandomState


def _prog():
    """The command's name as the user typed it: the ``sklearn-clda`` console
    script, or ``python -m sklearn_clda``."""
    name = os.path.basename(sys.argv[0] or "")
    return "sklearn-clda" if name.startswith("sklearn-clda") else "python -m sklearn_clda"


def _report_prog():
    return f"{_prog()} report"


def _select_prog():
    return f"{_prog()} select"


def _df_value(text):
    """A CountVectorizer min_df/max_df: an int (documents) or a float (proportion)."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a number of documents (e.g. 2) or a proportion of the "
            f"documents (e.g. 0.95), got {text!r}"
        ) from None


def _add_input_options(command, out_help):
    """--input, --text-column, --group-column and --out of a command on
    documents; returns their argument group."""
    io_group = command.add_argument_group("input and output")
    io_group.add_argument(
        "--input", required=True, metavar="PATH",
        help="a .csv/.tsv file, a .jsonl/.ndjson/.json file (one object per "
        "line), or a folder with one sub-folder of .txt files per collection",
    )
    io_group.add_argument(
        "--text-column", default="text", metavar="NAME",
        help="column (CSV) or field (JSON) with the texts (default: %(default)s)",
    )
    io_group.add_argument(
        "--group-column", default="group", metavar="NAME",
        help="column or field with each text's collection (default: %(default)s)",
    )
    io_group.add_argument("--out", required=True, metavar="DIR", help=out_help)
    return io_group


def _add_vocabulary_options(command):
    """The CountVectorizer options of a command on documents."""
    vocab = command.add_argument_group("vocabulary (scikit-learn CountVectorizer)")
    vocab.add_argument(
        "--stop-words", default="english", type=str.lower,
        choices=["english", "none"],
        help="stop word list to remove: english (scikit-learn's) or none "
        "(default: %(default)s)",
    )
    vocab.add_argument(
        "--min-df", default=2, type=_df_value, metavar="N",
        help="drop words in fewer documents than this: a count (2) or a "
        "proportion (0.01) (default: %(default)s)",
    )
    vocab.add_argument(
        "--max-df", default=0.95, type=_df_value, metavar="N",
        help="drop words in more documents than this: a proportion (0.95) or a "
        "count (default: %(default)s)",
    )


def _seed_problem(seed):
    if not 0 <= seed <= MAX_SEED:
        return f"--seed must be an integer in [0, {MAX_SEED}], got {seed}"
    return None


#: Most topics the demo prints and the report writes a page for (a report
#: of 10,000 topics is already about 130 MB; fit more with CompoundLDA).
MAX_REPORT_TOPICS = 10_000


def _n_components_problem(n_components, most=None):
    """Why ``-k`` is out of range, or None; ``most``: the command's limit
    (the estimators' ``MAX_COMPONENTS`` by default)."""
    from sklearn_clda._base import MAX_COMPONENTS

    most = MAX_COMPONENTS if most is None else most
    if not 1 <= n_components <= most:
        why = "" if most == MAX_COMPONENTS else (
            "; this command writes out every topic (fit more topics with "
            "sklearn_clda.CompoundLDA in Python)")
        return f"--n-components must be in [1, {most:,}]{why}, got {n_components}"
    return None


def _inside_input_problem(out, source, what="the report"):
    """Why ``--out`` may not be ``out`` given ``--input``, or None: with a
    folder input, the command's files (``what``) would be read as documents
    by the next run; with a file input, one of them would overwrite it."""
    from sklearn_clda.report._files import REPORT_FILES

    source = Path(source)
    try:
        if source.is_file():
            hit = next((name for name in REPORT_FILES
                        if (Path(out) / name).resolve() == source.resolve()), None)
            return None if hit is None else (
                f"--input {source} is the file {hit} of the --out folder {out}, which "
                f"{what} writes: it would overwrite your documents; move them or "
                "write elsewhere")
        if not source.is_dir():
            return None
    except OSError:  # the input's own problem, said when it is read
        return None
    inside = Path(out).resolve()
    if inside == source.resolve() or source.resolve() in inside.parents:
        return (f"--out {out} is inside the --input folder {source}: the next run would "
                f"read the files of {what} as documents; write {what} elsewhere")
    return None


def _df_problem(args):
    for option, value in (("--min-df", args.min_df), ("--max-df", args.max_df)):
        if (isinstance(value, int) and value < 1) or (
            isinstance(value, float) and not 0 < value <= 1
        ):
            return (
                f"{option} must be a number of documents (an integer >= 1) or a "
                f"proportion in (0, 1], got {value}"
            )
    return None


def _out_problem(args, what, example):
    """Why ``--out`` cannot take the command's files, or None."""
    if args.out == "":
        return f"--out is empty; name the folder to write {what} to, e.g. --out {example}"
    from sklearn_clda.report import output_problem

    return output_problem(args.out) or _inside_input_problem(args.out, args.input, what)


#: Control characters (C0 but tab and newline, DEL, C1): a file name holding
#: them must not move the terminal's cursor, clear it or retitle it when printed.
_CONTROL = re.compile("[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f]")


def _printable(message):
    return _CONTROL.sub(lambda m: repr(m.group())[1:-1], message)


def _fail(message, prog=None):
    print(f"{prog or _report_prog()}: error: {_printable(message)}", file=sys.stderr)
    return 2


def _note(message, prog=None):
    print(f"{prog or _report_prog()}: note: {_printable(message)}", file=sys.stderr)


_PLOT_MISSING = (
    "the report's figures and page need matplotlib and Jinja2, optional "
    'dependencies: pip install "sklearn-clda[plot]"'
)

_JINJA2_MISSING = (
    "the report's page needs Jinja2, an optional dependency: "
    'pip install "sklearn-clda[plot]"'
)


_INSPECT_MISSING = (
    "the report's analysis (sklearn_clda.inspection) needs pandas, an optional "
    'dependency: pip install "sklearn-clda[inspect]"'
)


def _report_dependencies_missing(figures=True):
    """The message naming the extra to install, if one the report needs
    (without matplotlib when it draws no ``figures``) is missing."""
    try:
        import jinja2  # noqa: F401
    except ImportError:
        return _PLOT_MISSING if figures else _JINJA2_MISSING
    if figures:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            return _PLOT_MISSING
    try:
        import pandas  # noqa: F401
    except ImportError:
        return _INSPECT_MISSING
    return None


def _use_agg():
    """Draw off-screen: the command line only saves figures."""
    import matplotlib

    matplotlib.use("Agg")


def _vocabulary_error(exc, args, n_docs):
    message = str(exc)
    if "empty vocabulary" in message:
        if args.stop_words == "english":
            return (
                "the vocabulary is empty: once English stop words are removed no "
                "word of two or more letters or digits is left; check "
                "--text-column or try --stop-words none"
            )
        return (
            "the vocabulary is empty: the texts hold no word of two or more "
            "letters or digits; check --text-column"
        )
    if "no terms remain" in message:
        return (
            f"no word is left once words in fewer than --min-df {args.min_df} or "
            f"more than --max-df {args.max_df} of the {n_docs} documents are "
            "dropped; lower --min-df or raise --max-df"
        )
    if "max_df corresponds to < documents than min_df" in message:
        low = args.min_df if isinstance(args.min_df, int) else args.min_df * n_docs
        high = args.max_df if isinstance(args.max_df, int) else args.max_df * n_docs
        return (
            f"--min-df {args.min_df} and --max-df {args.max_df} leave no word: a word "
            f"would have to be in at least {low:g} and at most {high:g} of the "
            f"{n_docs} documents; lower --min-df or raise --max-df"
        )
    return f"cannot build the vocabulary: {message}"


def _load_report_documents(args):
    """The documents of ``--input``, with notes on stderr; InputError if unusable."""
    from sklearn_clda.report import InputError, load_documents

    docs = load_documents(args.input, args.text_column, args.group_column,
                          getattr(args, "covariate_column", None) or ())
    for note in docs.notes:
        _note(note, args.command_prog)
    n_docs = len(docs.texts)
    if n_docs < 2:
        raise InputError(
            f"{args.input} holds only {n_docs} document with text; a topic model "
            "needs at least 2"
        )
    from sklearn_clda._clda import too_many_collections

    n_groups = len(set(docs.groups))
    print(
        f"Read {n_docs:,} documents in {n_groups:,} collection"
        f"{'s' if n_groups != 1 else ''} from {_printable(args.input)} ({docs.format})."
    )
    if too_many_collections(n_groups, n_docs):
        _note(
            f"{n_groups:,} collections for {n_docs:,} documents: is "
            f"--group-column {args.group_column!r} the right column?",
            args.command_prog,
        )
    return docs


def _vectorize(args, docs):
    """The fitted CountVectorizer and the counts X; InputError for an empty vocabulary."""
    from sklearn.feature_extraction.text import CountVectorizer

    from sklearn_clda.report import InputError

    stop_words = None if args.stop_words == "none" else "english"
    vectorizer = CountVectorizer(
        stop_words=stop_words, min_df=args.min_df, max_df=args.max_df
    )
    try:
        X = vectorizer.fit_transform(docs.texts)
    except ValueError as exc:
        raise InputError(_vocabulary_error(exc, args, len(docs.texts))) from None
    n_empty = int(np.sum(np.asarray(X.sum(axis=1)).ravel() == 0))
    if n_empty:
        fate = ("they are left out (no word to fit or to score)" if args.command == "select"
                else "they are kept but do not shape the topics")
        _note(
            f"{n_empty:,} document(s) have no word left in the vocabulary (only "
            f"stop words or rare words); {fate}",
            args.command_prog,
        )
    return vectorizer, X


def _read_corpus(args, problem, figures=True):
    """Check, read and vectorize the documents of a command on documents:
    ``(docs, vectorizer, X)``. ``problem`` is the command's own check of its
    options (a one-line reason, or None); every problem raises InputError
    with its one line. ``figures``: the command draws figures (it needs
    matplotlib)."""
    from sklearn_clda.report import InputError

    if args.input == "":
        problem = "--input is empty; name a file or folder of documents"
    problem = problem or _report_dependencies_missing(figures)
    if problem:
        raise InputError(problem)
    if figures:
        _use_agg()
    docs = _load_report_documents(args)
    vectorizer, X = _vectorize(args, docs)
    return docs, vectorizer, X

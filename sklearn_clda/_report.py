"""An HTML report of a fitted CompoundLDA, and loaders for raw document files.

- :func:`load_documents` reads texts and their collection labels from a CSV
  (or TSV) file, a JSON-lines file, or a folder holding one sub-folder of
  ``.txt`` files per collection; problems with the input raise
  :class:`InputError` with a one-line message.
- :func:`write_report` writes a self-contained report folder for a fitted
  :class:`~sklearn_clda.CompoundLDA`: ``index.html`` (inline CSS, no
  scripts, figures as PNG files next to it), the PNG figures,
  ``report.json`` with the main numbers, the model as ``model.npz`` (read
  safely with :func:`sklearn_clda.load_model`) with ``vocabulary.txt``,
  and as ``model.joblib`` (pickle: load only if trusted). Every file is
  written to a temporary file in the folder and then moved into place;
  report files that are symbolic links are refused.

Both back the ``python -m sklearn_clda report`` command line.
"""

import contextlib
import csv
import datetime
import html
import json
import math
import os
import sys
import secrets
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.utils import Bunch

from ._corpus import check_sparse_structure

__all__ = ["InputError", "load_documents", "write_report"]

#: File name endings read by :func:`load_documents`, and their formats.
SUPPORTED_EXTENSIONS = {
    ".csv": "csv",
    ".tsv": "tsv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "json",
}

# Figures of the report: file name -> what it shows.
FIGURE_FILES = {
    "heatmap": "collection_topics_heatmap.png",
    "bars": "collection_topics_bars.png",
    "words": "topic_words.png",
    "trace": "log_likelihood_trace.png",
    "pi_trace": "pi_trace.png",
    "pi_acf": "pi_autocorrelation.png",
}

# Other files of the report (the figures are FIGURE_FILES).
REPORT_FILES = ("index.html", "report.json", "model.npz", "model.joblib", "vocabulary.txt")

# Keys of ``texts_info`` shown in the page and kept in report.json.
_INFO_KEYS = ("source", "format", "text_column", "group_column", "n_read", "n_skipped",
              "notes")
_MAX_LISTED = 5  # documents named in a note about skipped documents
_MAX_TRACE_PANELS = 6  # collections drawn in the pi trace and ACF figures


class InputError(ValueError):
    """A problem with the input documents or the report's options.

    Its message is one line meant for the person who ran the command: it
    names the file (and line) at fault and says what to do.
    """


# ---------------------------------------------------------------------------
# Loading documents
# ---------------------------------------------------------------------------


def load_documents(path, text_column="text", group_column="group"):
    """Read documents and their collection labels from files.

    Parameters
    ----------
    path : str or path-like
        One of:

        - a ``.csv`` (comma-separated) or ``.tsv`` (tab-separated) file with
          a header row;
        - a ``.jsonl`` / ``.ndjson`` file, or a ``.json`` file, with one
          JSON object per line (a ``.json`` file holding a single JSON
          array of objects is read too);
        - a folder with one sub-folder per collection, each holding
          ``.txt`` files (one document per file, searched recursively); the
          sub-folder's name is the collection. Hidden files and folders
          are ignored.

        Every file must be UTF-8 (a byte-order mark is allowed).

    text_column : str, default="text"
        Column (CSV) or field (JSON) holding each document's text. Unused
        for a folder.

    group_column : str, default="group"
        Column or field holding each document's collection label (read as
        a string). Unused for a folder.

    Returns
    -------
    documents : :class:`~sklearn.utils.Bunch`
        With ``texts`` (list of str), ``groups`` (list of str, the
        collection of each text), ``source`` (the path, as str),
        ``format`` (``"CSV"``, ``"TSV"``, ``"JSON lines"``, ``"JSON"`` or
        ``"folder of .txt files"``), ``n_read`` (documents read),
        ``n_skipped`` (documents left out) and ``notes`` (list of str, one
        per kind of skipped document).

    Raises
    ------
    InputError
        If the path does not exist, has an unsupported type, is not UTF-8,
        cannot be parsed, lacks the named columns, or holds no document
        with text.

    Notes
    -----
    Documents whose text is empty or only whitespace, and documents
    without a collection label, are skipped; ``notes`` says how many and
    which (rows, lines or files). A label is missing when its CSV cell is
    empty or only whitespace, or its JSON value is ``null`` or ``NaN`` (or
    an infinity): such a document is skipped rather than put in a
    collection named ``"nan"``. JSON numbers are read as strings, e.g.
    ``2024`` as ``"2024"``.
    """
    path = Path(path)
    if not path.exists():
        raise InputError(f"no such file or folder: {path}")
    if path.is_dir():
        fmt = "folder of .txt files"
        records = _read_folder(path)
        columns = None
    else:
        ext = path.suffix.lower()
        kind = SUPPORTED_EXTENSIONS.get(ext)
        if kind is None:
            shown = f"'{path.suffix}'" if path.suffix else "(no extension)"
            raise InputError(
                f"cannot read {path}: unsupported file type {shown}; give a .csv, "
                ".tsv, .jsonl, .ndjson or .json file, or a folder with one "
                "sub-folder of .txt files per collection"
            )
        if text_column == group_column:
            raise InputError(
                f"--text-column and --group-column both name {text_column!r}; "
                "the texts and their collections must be different columns"
            )
        columns = (text_column, group_column)
        if kind in ("csv", "tsv"):
            fmt = kind.upper()
            records = _read_csv(path, text_column, group_column, kind)
        else:
            fmt = "JSON lines" if kind == "jsonl" else "JSON"
            records = _read_json(path, text_column, group_column, kind)

    texts, groups, empty, unlabelled = [], [], [], []
    n_read = 0
    for where, text, group in records:
        n_read += 1
        if not text.strip():
            empty.append(where)
        elif not group.strip():
            unlabelled.append(where)
        else:
            texts.append(text)
            groups.append(group.strip())

    notes = []
    if empty:
        notes.append(
            f"skipped {len(empty)} empty or whitespace-only document(s) "
            f"({_list_places(empty)})"
        )
    if unlabelled:
        column = f" (column {columns[1]!r})" if columns else ""
        notes.append(
            f"skipped {len(unlabelled)} document(s) without a collection label"
            f"{column} ({_list_places(unlabelled)})"
        )
    if not texts:
        if n_read == 0:
            raise InputError(f"{path} holds no documents")
        raise InputError(
            f"{path} holds no document with text: all {n_read} document(s) "
            "are empty, whitespace-only or unlabelled"
        )
    return Bunch(
        texts=texts,
        groups=groups,
        source=str(path),
        format=fmt,
        text_column=columns[0] if columns else None,
        group_column=columns[1] if columns else None,
        n_read=n_read,
        n_skipped=len(empty) + len(unlabelled),
        notes=notes,
    )


def _list_places(places):
    shown = ", ".join(places[:_MAX_LISTED])
    more = f" and {len(places) - _MAX_LISTED} more" if len(places) > _MAX_LISTED else ""
    return shown + more


def _not_utf8(path, exc):
    bad = exc.object[exc.start:exc.start + 1]
    byte = f" (byte 0x{bad[0]:02x})" if bad else ""
    return InputError(
        f"{path} is not UTF-8 text{byte}; re-encode it as UTF-8, e.g. "
        f"`iconv -f latin1 -t utf-8 {path.name} > utf8-{path.name}`, or save it "
        "as 'CSV UTF-8' / 'UTF-8' from your editor or spreadsheet"
    )


def _open_text(path):
    try:
        # newline="" lets the csv module handle line ends inside quoted fields.
        return open(path, encoding="utf-8-sig", errors="strict", newline="")
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror or exc}") from None


@contextlib.contextmanager
def _large_csv_fields():
    """Lift the csv module's 128 KiB field limit (long documents) for a while."""
    limit = sys.maxsize
    while True:
        try:
            old = csv.field_size_limit(limit)
            break
        except OverflowError:  # C long is 32-bit on some platforms
            limit //= 16
    try:
        yield
    finally:
        csv.field_size_limit(old)


def _find_column(header, name, option, path, delimiter):
    if name in header:
        return header.index(name)
    folded = [h.casefold() for h in header]
    if folded.count(name.casefold()) == 1:
        return folded.index(name.casefold())
    shown = ", ".join(repr(h) for h in header) or "none"
    hint = ""
    if len(header) == 1:
        for sep, sep_name in ((";", "semicolons"), ("\t", "tabs"), ("|", "bars"), (",", "commas")):
            if sep != delimiter and sep in header[0]:
                hint = (
                    f"; the header looks separated by {sep_name}: only "
                    "comma-separated .csv and tab-separated .tsv files are read"
                )
                break
    raise InputError(
        f"{path} has no column {name!r} (set it with {option}); its columns "
        f"are: {shown}{hint}"
    )


def _read_csv(path, text_column, group_column, kind):
    delimiter = "\t" if kind == "tsv" else ","
    records = []
    with _open_text(path) as fh, _large_csv_fields():
        reader = csv.reader(fh, delimiter=delimiter)
        try:
            header = next(reader, None)
            if header is None:
                raise InputError(
                    f"{path} is empty; expected a header row naming the columns "
                    f"(e.g. {text_column}{delimiter}{group_column}) and one row "
                    "per document"
                )
            header = [h.strip() for h in header]
            ti = _find_column(header, text_column, "--text-column", path, delimiter)
            gi = _find_column(header, group_column, "--group-column", path, delimiter)
            for row in reader:
                if not row:
                    continue  # a blank line
                text = row[ti] if ti < len(row) else ""
                group = row[gi] if gi < len(row) else ""
                records.append((f"line {reader.line_num}", text, group))
        except UnicodeDecodeError as exc:
            raise _not_utf8(path, exc) from None
        except csv.Error as exc:
            raise InputError(
                f"{path}, line {reader.line_num}: cannot parse the {kind.upper()} "
                f"file ({exc})"
            ) from None
    return records


def _json_field(obj, key, option, where, path):
    if key not in obj:
        shown = ", ".join(repr(k) for k in obj) or "none"
        raise InputError(
            f"{path}, {where}: no field {key!r} (set it with {option}); the "
            f"object's fields are: {shown}"
        )
    value = obj[key]
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return ""  # null, NaN (and infinities): missing, the document is skipped
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    raise InputError(
        f"{path}, {where}: field {key!r} is a JSON {_json_type(value)}; expected "
        "a string"
    )


def _json_type(value):
    if isinstance(value, bool):
        return "boolean"
    return {dict: "object", list: "array"}.get(type(value), type(value).__name__)


def _parse_json(text, path, lineno):
    """``json.loads(text)``, with an InputError for invalid or too deeply nested JSON.

    ``lineno`` is the line of a JSON-lines file, or "" for a whole file.
    """
    hint = "; expected one JSON object per line" if lineno else ""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        line = lineno or exc.lineno
        raise InputError(f"{path}, line {line}: not valid JSON ({exc.msg}){hint}") from None
    except RecursionError:
        where = f", line {lineno}" if lineno else ""
        raise InputError(
            f"{path}{where}: the JSON is nested too deeply to read; expected "
            f"objects such as {{\"text\": \"...\", \"group\": \"...\"}}"
        ) from None


def _read_json(path, text_column, group_column, kind):
    with _open_text(path) as fh:
        try:
            content = fh.read()
        except UnicodeDecodeError as exc:
            raise _not_utf8(path, exc) from None
    objects = []
    if kind == "json" and content.lstrip().startswith("["):
        array = _parse_json(content, path, "")
        objects = [(f"item {i}", obj) for i, obj in enumerate(array)]
    else:
        for lineno, line in enumerate(content.splitlines(), start=1):
            if not line.strip():
                continue
            obj = _parse_json(line, path, lineno)
            objects.append((f"line {lineno}", obj))
    records = []
    for where, obj in objects:
        if not isinstance(obj, dict):
            raise InputError(
                f"{path}, {where}: expected a JSON object such as "
                f'{{"{text_column}": "...", "{group_column}": "..."}}, got a JSON '
                f"{_json_type(obj)}"
            )
        text = _json_field(obj, text_column, "--text-column", where, path)
        group = _json_field(obj, group_column, "--group-column", where, path)
        records.append((where, text, group))
    return records


def _hidden(parts):
    return any(part.startswith(".") for part in parts)


def _read_folder(path):
    subfolders = sorted(
        d for d in path.iterdir() if d.is_dir() and not d.name.startswith(".")
    )
    records = []
    for folder in subfolders:
        files = sorted(
            f for f in folder.rglob("*")
            if f.suffix.lower() == ".txt" and f.is_file()
            and not _hidden(f.relative_to(folder).parts)
        )
        for file in files:
            try:
                text = file.read_text(encoding="utf-8-sig", errors="strict")
            except UnicodeDecodeError as exc:
                raise _not_utf8(file, exc) from None
            except OSError as exc:
                raise InputError(f"cannot read {file}: {exc.strerror or exc}") from None
            records.append((str(file.relative_to(path)), text, folder.name))
    if not records:
        loose = [f for f in path.glob("*") if f.suffix.lower() == ".txt"]
        found = (
            f" ({len(loose)} .txt file(s) sit directly in it, outside any "
            "collection sub-folder)" if loose else ""
        )
        raise InputError(
            f"{path} holds no .txt files in sub-folders{found}; a folder input "
            f"needs one sub-folder per collection, e.g. {path / 'news' / 'a.txt'}"
        )
    return records


# ---------------------------------------------------------------------------
# Writing the output folder
# ---------------------------------------------------------------------------


def _symlink_problem(path):
    return (
        f"{path} is a symbolic link; the report does not write through links "
        "(it could overwrite a file outside the output folder): remove the link "
        "or choose another output folder"
    )


def output_problem(out):
    """Why the report cannot be written to the folder ``out``, or None.

    Checked before fitting, and again by :func:`write_report` before it
    writes anything. The folder may itself be a symbolic link to a folder
    (it is then written into), but none of the report's files in it may be
    a symbolic link or anything other than a regular file.
    """
    out = Path(out)
    if out.is_symlink() and not out.exists():
        return f"the output folder {out} is a symbolic link to a missing folder"
    if not out.exists():
        parent = out.parent
        while not parent.exists() and parent != parent.parent:
            parent = parent.parent
        if not parent.is_dir():
            return f"cannot create the output folder {out}: {parent} is a file"
        if not os.access(parent, os.W_OK):
            return f"cannot create the output folder {out}: {parent} is not writable"
        return None
    if not out.is_dir():
        return f"the output path {out} is an existing file; give a folder for --out"
    for name in REPORT_FILES + tuple(FIGURE_FILES.values()):
        target = out / name
        if target.is_symlink():
            return _symlink_problem(target)
        if target.exists() and not target.is_file():
            return f"{target} exists and is not a file; remove it or choose another folder"
    if not os.access(out, os.W_OK):
        return f"cannot write to the output folder {out}: permission denied"
    return None


def _write_file(out_dir, name, write):
    """Write the file ``out_dir / name`` with ``write(binary file)``; return ``name``.

    The content goes to a new temporary file in ``out_dir`` that then
    replaces ``name`` (``os.replace``): a symbolic link at ``name`` is
    refused, and even one created meanwhile would be replaced rather than
    followed, so nothing outside ``out_dir`` is written. A failed write
    leaves the old file as it was and no temporary file.
    """
    target = out_dir / name
    if target.is_symlink():
        raise InputError(_symlink_problem(target))
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    tmp = out_dir / f".{name}.{secrets.token_hex(6)}.part"
    fd = os.open(tmp, flags | getattr(os, "O_BINARY", 0), 0o666)
    try:
        with os.fdopen(fd, "wb") as fh:
            write(fh)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return name


def _write_text(out_dir, name, text):
    return _write_file(out_dir, name, lambda fh: fh.write(text.encode("utf-8")))


# ---------------------------------------------------------------------------
# Statistics of the report
# ---------------------------------------------------------------------------


def _effective_sample_size(draws):
    """ESS of each series of ``draws`` (shape (n_draws, ...)) or None if < 4 draws.

    ``n / (1 + 2 sum_t rho_t)``, summing the autocorrelations up to the
    first lag where they are no longer positive.
    """
    from .plotting import autocorrelation

    n = draws.shape[0]
    if n < 4:
        return None
    rho = autocorrelation(draws)[1:]
    with np.errstate(invalid="ignore"):
        positive = np.cumprod(np.nan_to_num(rho, nan=0.0) > 0, axis=0).astype(bool)
    tau = 1.0 + 2.0 * np.where(positive, rho, 0.0).sum(axis=0)
    return np.minimum(n / tau, n)


def _trend_after_burn_in(trace, burn_in):
    """Rise of the log-likelihood after burn-in as a share of its total rise.

    The rise after burn-in is the slope of a least-squares line through the
    recorded values after burn-in times their span; it is None (no clear
    trend) when there are too few records or when the rise is within twice
    the scatter of the values around the line.
    """
    it = np.asarray(trace.get("iteration", []), dtype=np.float64)
    ll = np.asarray(trace.get("log_likelihood", []), dtype=np.float64)
    after = it >= burn_in
    if it.size < 5 or after.sum() < 4 or after.all() or not np.all(np.isfinite(ll)):
        return None
    x, y = it[after], ll[after]
    slope, intercept = np.polyfit(x, y, 1)
    rise = slope * (x[-1] - x[0])
    scatter = np.std(y - (slope * x + intercept))
    total = y.mean() - ll[0]
    if total <= 0 or rise <= 2 * scatter:
        return None
    return float(rise / total)


def _collection_statistics(model, X, groups, interval):
    """Labels, doc/token counts, pi intervals and the corpus-wide mixture."""
    pi = np.asarray(model.collection_topic_, dtype=np.float64)
    samples = np.asarray(model.collection_topic_samples_, dtype=np.float64)
    if model.groups_ is None:
        labels = ["all"]
    else:
        labels = [str(g) for g in model.groups_]
    docs = np.asarray(model.collection_sizes_, dtype=np.int64)
    tokens = None
    if groups is not None:
        index = {label: j for j, label in enumerate(labels)}
        lengths = np.asarray(X.sum(axis=1)).ravel()
        if model.groups_ is None:
            codes = np.zeros(X.shape[0], dtype=np.intp)
        else:
            codes = np.array([index.get(str(g), -1) for g in groups], dtype=np.intp)
        if np.all(codes >= 0):
            tokens = np.bincount(codes, weights=lengths, minlength=len(labels))
            tokens = tokens.astype(np.int64)
    weights = docs / docs.sum()
    corpus = weights @ pi
    corpus_draws = np.einsum("sjk,j->sk", samples, weights)
    diff_draws = samples - corpus_draws[:, None, :]
    tail = (1.0 - interval) / 2.0
    lower, upper = np.quantile(samples, [tail, 1.0 - tail], axis=0)
    diff_lower, diff_upper = np.quantile(diff_draws, [tail, 1.0 - tail], axis=0)
    return Bunch(
        labels=labels, docs=docs, tokens=tokens, pi=pi, samples=samples,
        lower=lower, upper=upper, weights=weights, corpus=corpus,
        diff=pi - corpus, diff_lower=diff_lower, diff_upper=diff_upper,
    )


def _distinctive(stats, n_distinctive, n_draws):
    """For each collection, its most over-represented topics (by difference)."""
    out = []
    for j, label in enumerate(stats.labels):
        order = np.argsort(-stats.diff[j], kind="stable")
        rows = []
        for k in order[:n_distinctive]:
            if stats.diff[j, k] <= 0:
                break
            corpus = stats.corpus[k]
            rows.append({
                "topic": int(k),
                "share": float(stats.pi[j, k]),
                "lower": float(stats.lower[j, k]),
                "upper": float(stats.upper[j, k]),
                "corpus_share": float(corpus),
                "ratio": float(stats.pi[j, k] / corpus) if corpus > 0 else None,
                "difference": float(stats.diff[j, k]),
                "difference_lower": float(stats.diff_lower[j, k]),
                "difference_upper": float(stats.diff_upper[j, k]),
                "clear": bool(n_draws >= 10 and stats.diff_lower[j, k] > 0),
            })
        out.append({"collection": label, "topics": rows})
    return out


# ---------------------------------------------------------------------------
# Figures
# ---------------------------------------------------------------------------


def _save(display, out_dir, name, dpi):
    import matplotlib.pyplot as plt

    fig = display.figure_
    try:
        _write_file(out_dir, name, lambda fh: fig.savefig(
            fh, format="png", dpi=dpi, facecolor="white"))
    finally:
        plt.close(fig)


def _draw_figures(model, names, out_dir, stats, top_words, interval, dpi):
    """Draw and save every figure; return {key: file name} and notes."""
    import matplotlib.pyplot as plt
    from matplotlib import rc_context

    from .plotting import (
        CollectionTopicDisplay,
        PiTraceDisplay,
        TopicWordsDisplay,
        TraceDisplay,
    )

    files, notes = {}, []
    K = model.components_.shape[0]
    n_draws = stats.samples.shape[0]
    label_words = min(3, len(names))
    # Labels are user text: do not let a "$" start matplotlib's mathtext.
    plain = {"text.parse_math": False}

    def save(key, make):
        before = set(plt.get_fignums())
        with rc_context(plain if key != "trace" else {}):
            try:
                display = make()
            except BaseException:
                for num in set(plt.get_fignums()) - before:
                    plt.close(num)
                raise
            _save(display, out_dir, FIGURE_FILES[key], dpi)
        files[key] = FIGURE_FILES[key]

    save("heatmap", lambda: CollectionTopicDisplay.from_estimator(
        model, kind="heatmap", feature_names=names, top_words=label_words))
    save("bars", lambda: CollectionTopicDisplay.from_estimator(
        model, kind="bars", interval=interval if n_draws > 1 else None,
        feature_names=names, top_words=label_words, n_topics=min(6, K)))
    save("words", lambda: TopicWordsDisplay.from_estimator(
        model, names, n_words=min(top_words, len(names))))
    save("trace", lambda: TraceDisplay.from_estimator(model, keys=["log_likelihood"]))
    if n_draws >= 2:
        shown = np.argsort(-stats.docs, kind="stable")[:_MAX_TRACE_PANELS]
        collections = None
        if model.groups_ is not None and len(stats.labels) > _MAX_TRACE_PANELS:
            collections = [model.groups_[j] for j in sorted(shown)]
        save("pi_trace", lambda: PiTraceDisplay.from_estimator(
            model, collections=collections, kind="trace"))
        save("pi_acf", lambda: PiTraceDisplay.from_estimator(
            model, collections=collections, kind="acf", max_lag=min(50, n_draws - 1)))
    else:
        notes.append(
            f"The sampler kept {n_draws} draw of the collection mixtures, too few "
            "for trace and autocorrelation plots or posterior intervals; run "
            "more sweeps."
        )
    return files, notes


# ---------------------------------------------------------------------------
# HTML
# ---------------------------------------------------------------------------

_CSS = """
:root { --fg: #1f2328; --muted: #59636e; --line: #d1d9e0; --alt: #f6f8fa;
        --accent: #0969da; --warn-bg: #fff8c5; --warn: #9a6700; }
* { box-sizing: border-box; }
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue",
       Arial, sans-serif; color: var(--fg); background: #fff; line-height: 1.5;
       max-width: 1120px; margin: 0 auto; padding: 1.5rem 1.25rem 4rem; }
h1 { font-size: 1.9rem; margin: 0 0 .2rem; }
h2 { font-size: 1.4rem; margin-top: 2.6rem; padding-bottom: .3rem;
     border-bottom: 1px solid var(--line); }
h3 { font-size: 1.1rem; margin: 1.4rem 0 .4rem; }
p { margin: .5rem 0; max-width: 80ch; }
.muted, figcaption, .caption { color: var(--muted); }
.small { font-size: .88rem; }
nav { background: var(--alt); border: 1px solid var(--line); border-radius: 6px;
      padding: .5rem 1rem; margin: 1.2rem 0; }
nav ol { margin: .2rem 0; padding-left: 1.3rem; columns: 2; }
a { color: var(--accent); }
table { border-collapse: collapse; width: 100%; margin: .6rem 0 1rem; font-size: .94rem; }
table.compact { width: auto; min-width: 50%; }
th, td { text-align: left; padding: .35rem .6rem; border-bottom: 1px solid var(--line);
         vertical-align: top; }
th { background: var(--alt); font-weight: 600; }
tbody tr:hover { background: #f0f6ff; }
.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.words { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
         font-size: .88rem; }
.bar { display: inline-block; height: .65rem; background: var(--accent);
       border-radius: 2px; vertical-align: middle; margin-right: .4rem; opacity: .75; }
dl.facts { display: grid; grid-template-columns: max-content 1fr; gap: .25rem 1.5rem;
           margin: .6rem 0; }
dl.facts dt { font-weight: 600; }
dl.facts dd { margin: 0; }
.note { background: var(--warn-bg); border-left: 4px solid var(--warn);
        padding: .45rem .8rem; margin: .6rem 0; border-radius: 0 4px 4px 0; }
.card { border: 1px solid var(--line); border-radius: 6px; padding: .2rem 1rem .4rem;
        margin: 1rem 0; }
.clear { color: #1a7f37; font-weight: 600; }
.unsure { color: var(--muted); font-style: italic; }
figure { margin: 1.2rem 0 1.8rem; }
figure img { max-width: 100%; height: auto; border: 1px solid var(--line);
             border-radius: 4px; }
figcaption { font-size: .9rem; margin-top: .3rem; max-width: 90ch; }
pre { background: var(--alt); border: 1px solid var(--line); border-radius: 6px;
      padding: .8rem 1rem; overflow-x: auto; font-size: .88rem; }
code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
footer { margin-top: 3rem; color: var(--muted); font-size: .85rem; }
@media print { nav { display: none; } h2 { break-before: auto; }
               figure, .card, tr { break-inside: avoid; } }
"""


def _e(value):
    return html.escape(str(value), quote=True)


def _pct(x, digits=1):
    return f"{100 * x:.{digits}f}%"


def _pp(x):
    return f"{100 * x:+.1f} pp"


def _int(n):
    return f"{int(n):,}"


def _every(thin):
    return "every sweep" if thin == 1 else f"every {_int(thin)}th sweep"


def _sentence(text):
    text = str(text)
    return text[:1].upper() + text[1:] + ("" if text.endswith(".") else ".")


def _words(words):
    return f'<span class="words">{_e(" ".join(str(w) for w in words))}</span>'


def _facts(pairs):
    rows = "".join(f"<dt>{_e(k)}</dt><dd>{v}</dd>" for k, v in pairs)
    return f'<dl class="facts">{rows}</dl>'


def _figure(files, key, alt, caption):
    if key not in files:
        return ""
    return (
        f'<figure><img src="{_e(files[key])}" alt="{_e(alt)}" loading="lazy">'
        f"<figcaption>{caption}</figcaption></figure>"
    )


def _seconds(s):
    if s is None:
        return "n/a"
    if s < 120:
        return f"{s:.1f} s"
    return f"{s / 60:.1f} min"


def _settings_rows(model, settings):
    rows = []
    for key, value in (settings or {}).items():
        rows.append((key, _e(value)))
    rows += [
        ("Topics (K)", _e(model.n_components)),
        ("Gibbs sweeps", f"{_int(model.n_iter_)} (burn-in {_int(model.burn_in_)}, then "
                         f"{_every(model.thin)} kept)"),
        ("Priors", _e(f"alpha = {model.alpha_:g}, gamma = {model.gamma_:g}, "
                      f"eta = {model.eta_:g}")),
        ("Sampler", _e(f"{model.algorithm.upper()}, random_state = {model.random_state!r}")),
    ]
    return rows


def _model_section(ctx, labels):
    """The "Using the saved model" section: the safe model.npz first, then model.joblib."""
    parts = ['<section id="model"><h2>Using the saved model</h2>']
    add = parts.append
    add("<p><code>model.npz</code> holds the fitted <code>CompoundLDA</code> model "
        "alone as plain arrays, and <code>vocabulary.txt</code> its vocabulary, one "
        f"word per line in the order of the model's {_int(ctx['n_features'])} "
        "columns. <code>sklearn_clda.load_model</code> reads the model back without "
        "running anything stored in the file (no pickle) and checks every value: it "
        "is the safe way to load a model, also one you got from someone else.</p>")
    load = (
        "from sklearn_clda import load_model\n\n"
        'clda = load_model("model.npz")\n'
    )
    if ctx["pipeline_saved"]:
        add("<p>A <code>CountVectorizer</code> given this vocabulary counts texts as "
            "the fitted one did, when that used CountVectorizer's default tokenization "
            "as the report command does (stop words and the document-frequency "
            "limits only chose the vocabulary and need not be repeated).</p>")
        safe = (
            "from sklearn.feature_extraction.text import CountVectorizer\n" + load
            + 'with open("vocabulary.txt", encoding="utf-8") as fh:\n'
            "    vocabulary = fh.read().splitlines()\n"
            "vectorizer = CountVectorizer(vocabulary=vocabulary)\n"
            f"# texts: a list of str; labels: each text's collection ({labels})\n"
            "theta = clda.transform(vectorizer.transform(texts), groups=labels)\n"
        )
    else:
        safe = load + (
            f"# X: counts over the vocabulary; labels: collections ({labels})\n"
            "theta = clda.transform(X, groups=labels)\n"
        )
    add(f"<pre><code>{_e(safe)}</code></pre>")
    add('<p class="note"><strong>Load <code>model.joblib</code> only if you trust '
        "where it came from.</strong> <code>joblib.load</code>, like "
        "<code>pickle.load</code>, runs code stored in the file: a file made or "
        "changed by someone else can run any program with your permissions. For a "
        "file you did not make yourself, use <code>model.npz</code> above.</p>")
    if ctx["pipeline_saved"]:
        add("<p><code>model.joblib</code> holds the fitted scikit-learn pipeline "
            "(a <code>CountVectorizer</code> followed by <code>CompoundLDA</code>): it "
            "turns raw texts into topic proportions. Without collection labels "
            "<code>transform</code> uses the corpus-wide mixture as every document's "
            "prior and warns (<code>UnseenCollectionWarning</code>); pass each "
            "document's collection to the model step for the collection's own "
            "prior.</p>")
        code = (
            "import joblib\n\n"
            'pipe = joblib.load("model.joblib")  # only for a file you trust\n'
            "theta = pipe.transform(texts)  # warns: no collections given\n\n"
            f"# with each text's collection label ({labels}):\n"
            "vectorizer, clda = pipe[:-1], pipe[-1]\n"
            "theta = clda.transform(vectorizer.transform(texts), groups=labels)\n"
        )
    else:
        add("<p><code>model.joblib</code> holds the same fitted <code>CompoundLDA</code> "
            "model alone (no text vectorizer): it takes document-term count matrices "
            "over the vocabulary of <code>vocabulary.txt</code>.</p>")
        code = (
            "import joblib\n\n"
            'clda = joblib.load("model.joblib")  # only for a file you trust\n'
            "theta = clda.transform(X, groups=labels)\n"
        )
    add(f"<pre><code>{_e(code)}</code></pre>")
    if ctx["model_note"]:
        add(f"<p>{_e(ctx['model_note'])}</p>")
    add("<p><code>report.json</code> holds the numbers of this page (topics, "
        "collection mixtures with intervals, distinctive topics, diagnostics) for "
        "further analysis.</p>")
    files = sorted(set(ctx["files"].values())) + ctx["extra_files"]
    add('<p class="small muted">Files in this folder: '
        + ", ".join(f"<code>{_e(f)}</code>" for f in files) + ".</p>")
    add("</section>\n")
    return "".join(parts)


def _render_html(ctx):
    model, stats = ctx["model"], ctx["stats"]
    K = model.components_.shape[0]
    J = len(stats.labels)
    parts = []
    add = parts.append
    add("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        f"<title>{_e(ctx['title'])}</title>\n<style>{_CSS}</style>\n</head>\n<body>\n")
    add(f"<header><h1>{_e(ctx['title'])}</h1>"
        f"<p class=\"muted\">Compound LDA topic model: {_int(K)} topics shared by "
        f"{_int(J)} collection{'s' if J != 1 else ''}. Generated "
        f"{_e(ctx['generated'])} by sklearn-clda {_e(ctx['version'])}.</p></header>\n")
    sections = [("summary", "Summary"), ("topics", "Topics"),
                ("collections", "Topics by collection"),
                ("distinctive", "What distinguishes each collection"),
                ("diagnostics", "Fit diagnostics"), ("model", "Using the saved model")]
    add("<nav><strong>Contents</strong><ol>"
        + "".join(f'<li><a href="#{a}">{_e(t)}</a></li>' for a, t in sections)
        + "</ol></nav>\n")

    # -- summary -------------------------------------------------------------
    info = ctx["texts_info"] or {}
    facts = []
    if info.get("source"):
        src = _e(info["source"])
        if info.get("format"):
            src += f" <span class=\"muted\">({_e(info['format'])}"
            if info.get("text_column"):
                src += (f"; text column {_e(repr(info['text_column']))}, collection "
                        f"column {_e(repr(info['group_column']))}")
            src += ")</span>"
        facts.append(("Input", src))
    n_docs = ctx["n_docs"]
    docs_line = _int(n_docs)
    if info.get("n_skipped"):
        docs_line += (f" <span class=\"muted\">({_int(info['n_read'])} read, "
                      f"{_int(info['n_skipped'])} skipped)</span>")
    facts += [
        ("Documents", docs_line),
        ("Collections", _int(J)),
        ("Vocabulary", f"{_int(ctx['n_features'])} terms"),
        ("Tokens", f"{_int(ctx['n_tokens'])} "
                   f"<span class=\"muted\">({ctx['n_tokens'] / max(n_docs, 1):.1f} per "
                   "document)</span>"),
        ("Fit time", _e(_seconds(ctx["fit_seconds"]))),
    ]
    add('<section id="summary"><h2>Summary</h2>')
    add(_facts(facts))
    for note in ctx["notes"]:
        add(f'<p class="note">{_e(_sentence(note))}</p>')
    rows = []
    for j, label in enumerate(stats.labels):
        tokens = "" if stats.tokens is None else f'<td class="num">{_int(stats.tokens[j])}</td>'
        rows.append(
            f"<tr><td>{_e(label)}</td><td class=\"num\">{_int(stats.docs[j])}</td>"
            f"<td class=\"num\">{_pct(stats.weights[j])}</td>{tokens}</tr>"
        )
    tok_head = "" if stats.tokens is None else '<th class="num">Tokens</th>'
    add("<h3>Collections</h3><table class=\"compact\"><thead><tr><th>Collection</th>"
        '<th class="num">Documents</th><th class="num">Share of documents</th>'
        f"{tok_head}</tr></thead><tbody>{''.join(rows)}</tbody></table>")
    add("<h3>Settings</h3>")
    add(_facts(_settings_rows(model, ctx["settings"])))
    add("</section>\n")

    # -- topics --------------------------------------------------------------
    order = np.argsort(-ctx["shares"], kind="stable")
    biggest = float(ctx["shares"].max()) if K else 1.0
    rows = []
    for k in order:
        share = ctx["shares"][k]
        width = 6.0 * share / biggest if biggest > 0 else 0.0
        peak = int(np.argmax(stats.pi[:, k]))
        rows.append(
            f"<tr><td class=\"num\">{k}</td><td>{_words(ctx['words'][k])}</td>"
            f"<td class=\"num\"><span class=\"bar\" style=\"width:{width:.2f}rem\"></span>"
            f"{_pct(share)}</td>"
            f"<td class=\"num\">{ctx['coherence'][k]:.1f}</td>"
            f"<td>{_e(stats.labels[peak])} <span class=\"muted\">"
            f"({_pct(stats.pi[peak, k])})</span></td></tr>"
        )
    add('<section id="topics"><h2>Topics</h2>')
    add(f"<p>Each topic is a distribution over the vocabulary; below are its "
        f"{ctx['n_words']} most probable words, largest topics first. "
        "<strong>Size</strong> is the topic's share of all tokens (Mimno et al.'s "
        "topic size, from the documents' topic proportions). <strong>Coherence</strong> "
        f"is the UMass coherence of Mimno et al. (2011) over the {ctx['n_words']} top "
        "words: a sum over word pairs of log co-document frequencies, at most 0; "
        "closer to 0 means the top words occur together in the same documents, "
        "a very negative value flags a topic mixing unrelated words. "
        "<strong>Largest in</strong> is the collection where the topic takes the "
        "largest share.</p>")
    add('<table><thead><tr><th class="num">Topic</th><th>Top words</th>'
        '<th class="num">Size</th><th class="num">Coherence</th><th>Largest in</th>'
        f"</tr></thead><tbody>{''.join(rows)}</tbody></table>")
    add(_figure(ctx["files"], "words", "Top words of each topic",
                "Top words of each topic with their probability in the topic."))
    add("</section>\n")

    # -- collections ---------------------------------------------------------
    n_draws = stats.samples.shape[0]
    add('<section id="collections"><h2>Topics by collection</h2>')
    add("<p>Compound LDA estimates a topic mixture <em>&pi;<sub>j</sub></em> for every "
        "collection: the share of the collection's text about each topic "
        f"(posterior mean over {_int(n_draws)} kept draw{'s' if n_draws != 1 else ''} "
        "of the sampler).</p>")
    add(_figure(ctx["files"], "heatmap", "Heatmap of topic proportions by collection",
                "Every topic's proportion in every collection (labels: topic number "
                "and top 3 words)."))
    add(_figure(ctx["files"], "bars", "Bars of topic proportions by collection",
                f"The {min(6, K)} topics whose proportions differ most across "
                "collections, one bar per collection"
                + (f", with {_pct(ctx['interval'], 0)} posterior intervals."
                   if n_draws > 1 else ".")))
    add("</section>\n")

    # -- distinctive ---------------------------------------------------------
    add('<section id="distinctive"><h2>What distinguishes each collection</h2>')
    if J < 2:
        add("<p>The model was fitted on a single collection, so there is nothing to "
            "compare.</p>")
    else:
        add("<p>For each collection, the topics most over-represented relative to the "
            "corpus-wide mixture, i.e. the average of the collections' mixtures "
            "weighted by their numbers of documents. <strong>Here</strong> is the "
            f"topic's share in the collection with its {_pct(ctx['interval'], 0)} "
            "posterior interval; <strong>Difference</strong> is the share here minus "
            "the corpus-wide share, in percentage points, with its interval; "
            "<strong>Ratio</strong> is the share here divided by the corpus-wide share. "
            + ("A difference marked <span class=\"clear\">clear</span> has its interval "
               "above 0; one marked <span class=\"unsure\">uncertain</span> may be chance."
               if n_draws >= 10 else
               f"With only {_int(n_draws)} kept draw(s) the intervals are too rough to "
               "tell clear differences; run more sweeps.")
            + "</p>")
        for entry, j in zip(ctx["distinctive"], range(J)):
            add(f'<div class="card"><h3>{_e(entry["collection"])} '
                f'<span class="muted small">{_int(stats.docs[j])} documents</span></h3>')
            if not entry["topics"]:
                add("<p class=\"muted\">No topic is over-represented in this "
                    "collection.</p></div>")
                continue
            rows = []
            for row in entry["topics"]:
                k = row["topic"]
                ratio = "n/a" if row["ratio"] is None else f"{row['ratio']:.1f}&times;"
                mark = ""
                if row["clear"]:
                    mark = ' <span class="clear">clear</span>'
                elif n_draws >= 10:
                    mark = ' <span class="unsure">uncertain</span>'
                rows.append(
                    f"<tr><td class=\"num\">{k}</td><td>{_words(ctx['words'][k][:8])}</td>"
                    f"<td class=\"num\">{_pct(row['share'])} <span class=\"muted\">"
                    f"({_pct(row['lower'])}&ndash;{_pct(row['upper'])})</span></td>"
                    f"<td class=\"num\">{_pct(row['corpus_share'])}</td>"
                    f"<td class=\"num\">{_pp(row['difference'])} <span class=\"muted\">"
                    f"({100 * row['difference_lower']:+.1f} to {_pp(row['difference_upper'])})"
                    f"</span>{mark}</td><td class=\"num\">{ratio}</td></tr>"
                )
            add('<table><thead><tr><th class="num">Topic</th><th>Top words</th>'
                '<th class="num">Here</th><th class="num">Corpus-wide</th>'
                '<th class="num">Difference</th><th class="num">Ratio</th></tr></thead>'
                f"<tbody>{''.join(rows)}</tbody></table></div>")
    add("</section>\n")

    # -- diagnostics ---------------------------------------------------------
    diag = ctx["diagnostics"]
    facts = [
        ("Sweeps", f"{_int(model.n_iter_)}"),
        ("Burn-in", f"{_int(model.burn_in_)} sweeps (discarded)"),
        ("Kept draws", f"{_int(n_draws)} ({_every(model.thin)} after burn-in)"),
        ("Sampler time", _e(_seconds(diag["sampler_seconds"]))),
        ("Final log-likelihood", _e(f"{diag['final_log_likelihood']:,.1f}")),
    ]
    if diag["ess_median"] is not None:
        facts.append(("Effective sample size of \u03c0",
                      f"median {diag['ess_median']:.0f}, minimum {diag['ess_min']:.0f} "
                      f"(of {_int(n_draws)} draws)"))
    add('<section id="diagnostics"><h2>Fit diagnostics</h2>')
    add("<p>Is the sampler's answer trustworthy? The log-likelihood should rise and "
        "level off before the end of burn-in (dashed line); the kept draws of the "
        "collection mixtures should wander around a stable level and their "
        "autocorrelations fall to about 0 within a few lags. If not, fit again with "
        "more sweeps (<code>--max-iter</code>).</p>")
    add(_facts(facts))
    for note in diag["notes"]:
        add(f'<p class="note">{_e(note)}</p>')
    add(_figure(ctx["files"], "trace", "Log-likelihood trace",
                "Joint log-likelihood log p(w, z | &pi;) + log p(&pi;) against the "
                "Gibbs sweep; the dashed line marks the end of burn-in."))
    shown = ("" if J <= _MAX_TRACE_PANELS else
             f" (the {_MAX_TRACE_PANELS} largest collections)")
    add(_figure(ctx["files"], "pi_trace", "Trace of the collection mixtures",
                "Kept draws of the collection mixtures &pi;<sub>j</sub> for the 5 "
                f"topics that differ most across collections, one panel per "
                f"collection{shown}."))
    add(_figure(ctx["files"], "pi_acf", "Autocorrelation of the collection mixtures",
                "Autocorrelation of the same draws against the lag (in kept draws); "
                "the grey band is where about 95% of the autocorrelations of "
                "independent draws fall."))
    add("</section>\n")

    # -- model ---------------------------------------------------------------
    labels = ", ".join(repr(label) for label in stats.labels[:6])
    labels += ", ..." if J > 6 else ""
    add(_model_section(ctx, labels))
    add("<footer>The page needs no network access: the figures are PNG files in the "
        "same folder; keep them together when moving the report.</footer>\n"
        "</body>\n</html>\n")
    return "".join(parts)


# ---------------------------------------------------------------------------
# The report
# ---------------------------------------------------------------------------


def _jsonable(value):
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return _jsonable(value.tolist())
    if isinstance(value, np.generic):
        return _jsonable(value.item())
    if isinstance(value, float) and not np.isfinite(value):
        return None
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


def _check_inputs(model, X, feature_names, groups):
    from sklearn.pipeline import Pipeline
    from sklearn.utils.validation import check_array, check_is_fitted

    pipeline = None
    if isinstance(model, Pipeline):
        pipeline, model = model, model[-1]
    check_is_fitted(model, "components_")
    if not hasattr(model, "collection_topic_samples_"):
        raise ValueError(
            "write_report needs a fitted CompoundLDA (with collection_topic_), got "
            f"{type(model).__name__}."
        )
    X = check_sparse_structure(X, "write_report")
    X = sp.csr_matrix(check_array(X, accept_sparse="csr"))
    n_features = model.components_.shape[1]
    if X.shape[1] != n_features:
        raise ValueError(
            f"X has {X.shape[1]} columns but the model has {n_features} features."
        )
    names = np.asarray(feature_names, dtype=object).ravel()
    if names.shape[0] != n_features:
        raise ValueError(
            f"feature_names has {names.shape[0]} entries but the model has "
            f"{n_features} features."
        )
    names = np.array([str(n) for n in names], dtype=object)
    broken = [n for n in names if n.splitlines() not in ([n], [])]
    if broken:
        raise ValueError(
            f"feature_names must not hold line breaks (vocabulary.txt lists one per "
            f"line), got {broken[0]!r}."
        )
    if groups is not None:
        groups = list(np.asarray(groups, dtype=object).ravel())
        if len(groups) != X.shape[0]:
            raise ValueError(
                f"groups has {len(groups)} labels but X has {X.shape[0]} rows."
            )
    return model, pipeline, X, names, groups


def write_report(
    model,
    X,
    feature_names,
    out_dir,
    *,
    title="Compound LDA report",
    groups=None,
    texts_info=None,
    pipeline=None,
    settings=None,
    fit_seconds=None,
    top_words=10,
    n_distinctive=3,
    interval=0.9,
    model_note=None,
    dpi=110,
):
    """Write an HTML report of a fitted CompoundLDA to a folder.

    The folder gets ``index.html`` (one self-contained page: inline CSS, no
    scripts, nothing fetched from the network; figures are the PNG files
    next to it), the PNG figures, ``report.json`` with the main numbers,
    ``model.npz`` (``model`` saved by :func:`sklearn_clda.save_model`,
    which :func:`sklearn_clda.load_model` reads without pickle),
    ``vocabulary.txt`` (``feature_names``, one per line) and
    ``model.joblib`` (``pipeline`` if given, else ``model``; a pickle, to be
    loaded only from a trusted source, as the page says).

    Existing files of these names are replaced: each file is written to a
    temporary file in ``out_dir`` and then moved over the old one with
    ``os.replace``, so that a failed write leaves the old file intact. If
    one of these files in ``out_dir`` is a symbolic link (which could point
    outside the folder), or is not a regular file, nothing is written and
    :class:`InputError` is raised. ``out_dir`` itself may be a symbolic
    link to a folder.

    The page shows: a summary (documents, collections with their document
    and token counts, vocabulary, tokens, settings, fit time); a table of
    the topics with their top words, size (share of tokens) and coherence;
    the collections' topic mixtures as a heatmap and as bars with posterior
    intervals; for each collection the topics most over-represented
    relative to the corpus-wide mixture; and fit diagnostics
    (log-likelihood trace, traces and autocorrelations of the draws of
    ``pi``). All user text (words, labels, title) is HTML-escaped.

    Parameters
    ----------
    model : CompoundLDA or Pipeline
        A fitted :class:`~sklearn_clda.CompoundLDA`, or a fitted Pipeline
        ending with one (it is then also the saved ``pipeline``). Fit it
        with ``evaluate_every > 0`` to get a log-likelihood curve, and keep
        enough draws (``max_iter``, ``thin``) for posterior intervals.

    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Document-term counts of the documents the model was fitted on, used
        for coherence, topic sizes and token counts.

    feature_names : array-like of str of shape (n_features,)
        The vocabulary, in column order.

    out_dir : str or path-like
        Folder to write to; created if needed. An empty string is refused
        (it would mean the current folder).

    title : str, default="Compound LDA report"
        Title of the page.

    groups : array-like of shape (n_samples,), default=None
        Collection label of each row of ``X``; gives the collections'
        token counts.

    texts_info : dict, default=None
        Description of the input shown in the summary: ``"source"``,
        ``"format"``, ``"text_column"``, ``"group_column"``, ``"n_read"``,
        ``"n_skipped"`` and ``"notes"`` (list of str), as returned by
        :func:`load_documents`.

    pipeline : Pipeline, default=None
        The fitted pipeline (e.g. ``CountVectorizer`` + ``CompoundLDA``)
        saved as ``model.joblib``. ``None`` saves ``model`` alone.
        ``model.npz`` always holds ``model`` alone.

    settings : dict, default=None
        Further settings to list (e.g. the vectorizer's), name -> value.

    fit_seconds : float, default=None
        Wall-clock fit time; ``None`` uses the sampler's own timing.

    top_words : int, default=10
        Words per topic in the tables (and for the coherence).

    n_distinctive : int, default=3
        Topics listed per collection in "what distinguishes each
        collection".

    interval : float, default=0.9
        Mass of the equal-tailed posterior intervals.

    model_note : str, default=None
        A sentence about the saved model, shown in the page.

    dpi : int, default=110
        Resolution of the PNG figures.

    Returns
    -------
    summary : dict
        The content of ``report.json``; ``summary["files"]`` lists the
        files written and ``summary["index_html"]`` is the page's path.

    Raises
    ------
    InputError
        If ``out_dir`` cannot hold the report (see above).
    ValueError
        If the model is not a fitted CompoundLDA or the inputs do not match
        it (e.g. a feature name with a line break).
    """
    from . import __version__

    model, given_pipeline, X, names, groups = _check_inputs(
        model, X, feature_names, groups
    )
    pipeline = pipeline if pipeline is not None else given_pipeline
    if os.fspath(out_dir) == "":
        raise InputError("the output folder is an empty path; name a folder")
    out = Path(out_dir)
    problem = output_problem(out)
    if problem:
        raise InputError(problem)
    out.mkdir(parents=True, exist_ok=True)

    texts_info = {
        key: texts_info[key] for key in _INFO_KEYS if key in (texts_info or {})
    }
    topics = _topic_summary(model, X, names, groups, top_words)
    notes = list(texts_info.get("notes", [])) + topics.notes
    stats = _collection_statistics(model, X, groups, interval)
    n_draws = stats.samples.shape[0]
    distinctive = _distinctive(stats, max(1, int(n_distinctive)), n_draws)

    files, figure_notes = _draw_figures(
        model, names, out, stats, topics.n_words, interval, dpi
    )
    diagnostics = _diagnostics(model, stats, figure_notes)
    extra_files = _write_models(out, model, pipeline, names)
    if fit_seconds is None:
        fit_seconds = diagnostics["sampler_seconds"]
    generated = datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z").strip()

    ctx = {
        "model": model, "stats": stats, "title": title, "generated": generated,
        "version": __version__, "texts_info": texts_info, "n_docs": X.shape[0],
        "n_features": names.shape[0], "n_tokens": topics.n_tokens,
        "fit_seconds": None if fit_seconds is None else float(fit_seconds),
        "notes": notes, "settings": settings, "shares": topics.shares,
        "words": topics.words, "coherence": topics.coherence,
        "n_words": topics.n_words, "files": files, "interval": interval,
        "distinctive": distinctive, "diagnostics": diagnostics,
        "pipeline_saved": pipeline is not None, "model_note": model_note,
        "extra_files": extra_files,
    }
    _write_text(out, "index.html", _render_html(ctx))
    summary = _jsonable(_summary(ctx, topics))
    _write_text(out, "report.json", json.dumps(summary, indent=2, ensure_ascii=False) + "\n")
    summary["index_html"] = str(out / "index.html")
    return summary


def _topic_summary(model, X, names, groups, top_words):
    """Top words, coherence, sizes and shares of the topics, and notes."""
    from .metrics import top_word_indices, topic_coherence, topic_sizes

    K, V = model.components_.shape
    n_words = max(1, min(int(top_words), V))
    words = names[top_word_indices(model.components_, n=n_words)].tolist()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        coherence = topic_coherence(X, model.components_, top_n=n_words)
    notes = [str(w.message) for w in caught]
    doc_topic = getattr(model, "doc_topic_", None)
    if doc_topic is not None and doc_topic.shape[0] == X.shape[0]:
        sizes = topic_sizes(doc_topic, X)
    else:
        sizes = topic_sizes(model, X, groups=groups)
    total = sizes.sum()
    empty_docs = int(np.sum(np.asarray(X.sum(axis=1)).ravel() == 0))
    if empty_docs:
        notes.append(
            f"{empty_docs} document(s) have no word of the vocabulary (only stop "
            "words or rare words); they are kept but do not shape the topics."
        )
    return Bunch(
        n_words=n_words, words=words, coherence=coherence, sizes=sizes,
        shares=sizes / total if total > 0 else np.zeros(K), n_tokens=int(X.sum()),
        notes=notes,
    )


def _diagnostics(model, stats, figure_notes):
    """The numbers and notes of the "Fit diagnostics" section."""
    n_draws = stats.samples.shape[0]
    trace = getattr(model, "trace_", {}) or {}
    ll = np.asarray(trace.get("log_likelihood", [np.nan]), dtype=np.float64)
    seconds = trace.get("seconds")
    sampler_seconds = float(seconds[-1]) if seconds is not None and len(seconds) else None
    ess = _effective_sample_size(stats.samples)
    notes = list(figure_notes)
    if len(ll) < 3:
        notes.append(
            "The log-likelihood was recorded at too few sweeps to show a curve; fit "
            "with evaluate_every > 0."
        )
    trend = _trend_after_burn_in(trace, model.burn_in_)
    if trend is not None and trend > 0.05:
        notes.append(
            f"The log-likelihood was still rising after burn-in ({_pct(trend, 0)} of "
            "its total rise came after it): the chain may not have converged; fit "
            "again with more sweeps."
        )
    if ess is not None and np.median(ess) < 10:
        notes.append(
            f"The draws of the collection mixtures are strongly autocorrelated "
            f"(median effective sample size {np.median(ess):.0f}): the posterior "
            "intervals are rough; fit with more sweeps."
        )
    return {
        "n_iter": int(model.n_iter_),
        "burn_in": int(model.burn_in_),
        "thin": int(model.thin),
        "n_draws": int(n_draws),
        "sampler_seconds": sampler_seconds,
        "final_log_likelihood": float(ll[-1]),
        "log_likelihood_rise_after_burn_in": trend,
        "ess_median": None if ess is None else float(np.median(ess)),
        "ess_min": None if ess is None else float(np.min(ess)),
        "notes": notes,
    }


def _write_models(out, model, pipeline, names):
    """Write model.npz, vocabulary.txt and model.joblib; return the files' names."""
    import joblib

    from ._io import _dump_npz

    files = ["index.html", "report.json"]
    files.append(_write_file(out, "model.npz", lambda fh: _dump_npz(model, fh)))
    files.append(_write_text(out, "vocabulary.txt", "".join(f"{n}\n" for n in names)))
    saved = pipeline if pipeline is not None else model
    files.append(_write_file(out, "model.joblib", lambda fh: joblib.dump(saved, fh)))
    return files


def _summary(ctx, topics):
    """The content of report.json (before :func:`_jsonable`)."""
    model, stats = ctx["model"], ctx["stats"]
    K = model.components_.shape[0]
    return {
        "title": ctx["title"],
        "generated": ctx["generated"],
        "sklearn_clda_version": ctx["version"],
        "input": ctx["texts_info"],
        "n_documents": ctx["n_docs"],
        "n_tokens": topics.n_tokens,
        "vocabulary_size": ctx["n_features"],
        "n_components": K,
        "collections": [
            {"name": label, "documents": int(stats.docs[j]),
             "tokens": None if stats.tokens is None else int(stats.tokens[j])}
            for j, label in enumerate(stats.labels)
        ],
        "groups": [] if model.groups_ is None else model.groups_.tolist(),
        "settings": dict(ctx["settings"] or {}),
        "model": {
            "n_components": K, "alpha": model.alpha_, "gamma": model.gamma_,
            "eta": model.eta_, "algorithm": model.algorithm,
            "max_iter": model.max_iter, "random_state": model.random_state,
        },
        "fit_seconds": ctx["fit_seconds"],
        "topics": [
            {"topic": k, "top_words": topics.words[k], "tokens": float(topics.sizes[k]),
             "share": float(topics.shares[k]), "coherence": float(topics.coherence[k])}
            for k in range(K)
        ],
        "collection_topic": {
            "collections": stats.labels,
            "mean": stats.pi,
            "lower": stats.lower,
            "upper": stats.upper,
            "interval": ctx["interval"],
            "corpus_wide": stats.corpus,
            "corpus_weights": "documents per collection",
        },
        "distinctive": ctx["distinctive"],
        "diagnostics": ctx["diagnostics"],
        "notes": ctx["notes"],
        "model_file": "model.joblib",
        "model_file_contents": "pipeline" if ctx["pipeline_saved"] else "CompoundLDA",
        "safe_model_file": "model.npz",
        "safe_model_file_contents": "CompoundLDA, read with sklearn_clda.load_model",
        "files": sorted(set(ctx["files"].values())) + ctx["extra_files"],
    }

"""Loading documents and their collection labels from files.

:func:`load_documents` reads texts and their collection labels from a CSV
(or TSV) file, a JSON-lines file, or a folder holding one sub-folder of
``.txt`` files per collection; problems with the input raise
:class:`InputError` with a one-line message.
"""

import contextlib
import csv
import json
import math
import os
import re
import sys
from pathlib import Path

from sklearn.utils import Bunch
from sklearn.utils._param_validation import validate_params

__all__ = ["InputError", "load_documents"]

#: File name endings read by :func:`load_documents`, and their formats.
SUPPORTED_EXTENSIONS = {
    ".csv": "csv",
    ".tsv": "tsv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "json",
}

_MAX_LISTED = 5  # documents named in a note about skipped documents


class InputError(ValueError):
    """A problem with the input documents or the report's options.

    Its message is one line meant for the person who ran the command: it
    names the file (and line) at fault and says what to do.
    """


# ---------------------------------------------------------------------------
# Loading documents
# ---------------------------------------------------------------------------


@validate_params(
    {"path": [str, os.PathLike], "text_column": [str], "group_column": [str],
     "covariate_columns": [list, tuple]},
    prefer_skip_nested_validation=True,
)
def load_documents(path, text_column="text", group_column="group", covariate_columns=()):
    r"""Read documents and their collection labels from files.

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

    covariate_columns : list or tuple of str, default=()
        Columns or fields holding a number per document, its covariates
        (for :func:`~sklearn_clda.inspection.topic_effects`): a number, an
        ISO date (``2021-07-01``, read as a decimal year, 2021.496), or
        nothing (an empty cell, ``NA``, ``NaN``, ``null`` or ``None`` in
        any case; a JSON ``null``, or a field an object lacks). JSON
        ``true`` and ``false`` are 1 and 0. Not available for a folder.

    Returns
    -------
    documents : :class:`~sklearn.utils.Bunch`
        With ``texts`` (list of str), ``groups`` (list of str, the
        collection of each text), ``source`` (the path, as str),
        ``format`` (``"CSV"``, ``"TSV"``, ``"JSON lines"``, ``"JSON"`` or
        ``"folder of .txt files"``), ``n_read`` (documents read),
        ``n_skipped`` (documents left out), ``notes`` (list of str, one
        per kind of skipped or mended document, and per covariate with
        missing values or dates) and ``covariates`` (a dict: each covariate
        column's name to a float64 array of one value per text, NaN where
        it is missing; empty without ``covariate_columns``).

    Raises
    ------
    InputError
        If the path does not exist, has an unsupported type, is not UTF-8,
        cannot be parsed, lacks the named columns, or holds no document
        with text; if a covariate cell holds something other than a number,
        a date or nothing, or a covariate column has no value at all; if a
        folder is given covariate columns.

    Notes
    -----
    Documents whose text is empty or only whitespace, and documents
    without a collection label, are skipped; ``notes`` says how many and
    which (rows, lines or files). A label is missing when its CSV cell is
    empty or only whitespace, or its JSON value is ``null`` or ``NaN`` (or
    an infinity): such a document is skipped rather than put in a
    collection named ``"nan"``. JSON numbers are read as strings, e.g.
    ``2024`` as ``"2024"``. JSON lines are split at line ends only (a
    string may hold U+2028 unescaped). A CSV or TSV row that a quoted cell
    carries over several lines yet lacks columns (an unmatched quote that
    swallowed the rows after it) raises ``InputError`` with the line the
    quote opened. Lone surrogates (``"\ud800"`` escapes, file names that
    are not UTF-8) and NUL characters become U+FFFD in texts, with a note,
    and raise ``InputError`` in collection labels.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from sklearn_clda.report import load_documents
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = Path(folder) / "docs.csv"
    ...     _ = path.write_text("text,group\ngoals and matches,sport\n,sport\n"
    ...                         "rates and bonds,money\n", encoding="utf-8")
    ...     docs = load_documents(path)
    >>> docs.texts, docs.groups, docs.n_skipped
    (['goals and matches', 'rates and bonds'], ['sport', 'money'], 1)

    A covariate per document, read as numbers (a date as a decimal year):

    >>> with tempfile.TemporaryDirectory() as folder:
    ...     path = Path(folder) / "dated.csv"
    ...     _ = path.write_text("text,group,date\ngoals,sport,2021-07-01\n"
    ...                         "bonds,money,NA\n", encoding="utf-8")
    ...     docs = load_documents(path, covariate_columns=["date"])
    >>> docs.covariates["date"].round(3).tolist()
    [2021.496, nan]
    """
    path = Path(path)
    try:
        path.stat()  # not exists(), which says False for any error from Python 3.14
    except FileNotFoundError:
        raise InputError(f"no such file or folder: {path}") from None
    except OSError as exc:  # e.g. a name too long for the file system
        raise InputError(f"cannot read {path}: {exc.strerror}") from None
    if path.is_dir():
        if covariate_columns:
            raise InputError(
                f"{path} is a folder of .txt files, which has no columns for "
                "--covariate-column; give the documents as a .csv, .tsv, .jsonl or .json "
                "file with a column of numbers per covariate"
            )
        fmt, records, columns = "folder of .txt files", _read_folder(path), None
    else:
        kind = _table_kind(path)
        columns = _check_columns(text_column, group_column, covariate_columns)
        fmt, records = _read_table(path, kind, columns)

    kept = _kept_documents(records, path, columns)
    return Bunch(
        texts=kept.texts,
        groups=kept.groups,
        source=str(path),
        format=fmt,
        text_column=columns[0] if columns else None,
        group_column=columns[1] if columns else None,
        n_read=len(records),
        n_skipped=len(records) - len(kept.texts),
        notes=kept.notes,
        covariates=kept.covariates,
    )


def _check_columns(text_column, group_column, covariate_columns):
    """The columns to read, texts first, then labels and covariates;
    InputError if one is named twice."""
    if text_column == group_column:
        raise InputError(
            f"--text-column and --group-column both name {text_column!r}; "
            "the texts and their collections must be different columns"
        )
    seen = {text_column: "--text-column", group_column: "--group-column"}
    for name in covariate_columns:
        if not isinstance(name, str):
            raise InputError(f"covariate columns are named by strings, got {name!r}")
        if name in seen:
            twice = "twice" if seen[name] == "--covariate-column" else f"and {seen[name]}"
            raise InputError(f"{name!r} is given as --covariate-column {twice}; each "
                             "column is read once, as one thing")
        seen[name] = "--covariate-column"
    return (text_column, group_column, *covariate_columns)


def _table_kind(path):
    """The kind of a file of documents by its name's ending; InputError
    for one that is not read."""
    kind = SUPPORTED_EXTENSIONS.get(path.suffix.lower())
    if kind is None:
        shown = f"'{path.suffix}'" if path.suffix else "(no extension)"
        raise InputError(
            f"cannot read {path}: unsupported file type {shown}; give a .csv, "
            ".tsv, .jsonl, .ndjson or .json file, or a folder with one "
            "sub-folder of .txt files per collection"
        )
    return kind


def _read_table(path, kind, columns):
    """``(format, records)`` of a .csv/.tsv/.jsonl/.json file."""
    if kind in ("csv", "tsv"):
        return kind.upper(), _read_csv(path, columns, kind)
    return ("JSON lines" if kind == "jsonl" else "JSON"), _read_json(path, columns, kind)


#: Code points that are no characters: lone UTF-16 surrogates, which JSON's
#: "\ud800" escapes and undecodable file names (os.fsdecode) give.
_SURROGATE = re.compile("[\ud800-\udfff]")


def _kept_documents(records, path, columns):
    """The documents of ``records`` (``(where, text, group, cells)``, the
    cells of the covariate columns ``columns[2:]``) with text and a label,
    their covariates, and notes on the others; lone surrogates and NUL characters
    in a text become U+FFFD (with a note: UTF-8 cannot hold the first; HTML
    drops the second from the page, and other tools' CSV readers refuse it
    or cut the cell at it), in a label an InputError (collections that
    could not be told apart or written)."""
    texts, groups, empty, unlabelled, mended, nul = [], [], [], [], [], []
    places, cells = [], []
    for where, text, group, row_cells in records:
        if not text.strip():
            empty.append(where)
        elif not group.strip():
            unlabelled.append(where)
        else:
            _check_label(group, where, path)
            if _SURROGATE.search(text):
                mended.append(where)
                text = _SURROGATE.sub("\ufffd", text)
            if "\x00" in text:
                nul.append(where)
                text = text.replace("\x00", "\ufffd")
            texts.append(text)
            groups.append(group.strip())
            places.append(where)
            cells.append(row_cells)
    notes = []
    for skipped, what in ((empty, "skipped {} empty or whitespace-only document(s)"),
                         (unlabelled, "skipped {} document(s) without a collection label"
                          + (f" (column {columns[1]!r})" if columns else "")),
                         (mended, "replaced lone surrogates (code points that are no "
                          "characters) by U+FFFD in {} document(s)"),
                         (nul, "replaced NUL characters by U+FFFD in {} document(s)")):
        if skipped:
            notes.append(f"{what.format(len(skipped))} ({list_places(skipped)})")
    if not texts:
        if not records:
            raise InputError(f"{path} holds no documents")
        raise InputError(
            f"{path} holds no document with text: all {len(records)} document(s) "
            "are empty, whitespace-only or unlabelled"
        )
    covariates = {}
    for c, name in enumerate(columns[2:] if columns else ()):
        from ._covariates import read_column

        covariates[name], column_notes = read_column(name, [row[c] for row in cells],
                                                     places, path)
        notes += column_notes
    return Bunch(texts=texts, groups=groups, notes=notes, covariates=covariates)


def _check_label(group, where, path):
    """An InputError for a collection label that cannot name a collection."""
    if _SURROGATE.search(group):
        raise InputError(
            f"{path}, {where}: the collection label {group!r} holds a code "
            "point that is no character (a lone surrogate, from a \\ud800-style "
            "JSON escape or a file name that is not UTF-8); rename it"
        )
    if "\x00" in group:
        raise InputError(
            f"{path}, {where}: the collection label {group!r} holds a NUL "
            "character, which collection labels cannot (it would be dropped at "
            "the label's end, merging collections); remove it"
        )


def list_places(places):
    """The first places (lines, files) of a list, and how many more."""
    shown = ", ".join(places[:_MAX_LISTED])
    more = f" and {len(places) - _MAX_LISTED} more" if len(places) > _MAX_LISTED else ""
    return shown + more


def _not_utf8(path, exc):
    bad = exc.object[exc.start:exc.start + 1]
    byte = f" (byte 0x{bad[0]:02x})" if bad else ""
    # A UTF-16 byte-order mark says which encoding it is; else latin-1 is a guess.
    source = "utf-16" if exc.object[:2] in (b"\xff\xfe", b"\xfe\xff") else "latin1"
    return InputError(
        f"{path} is not UTF-8 text{byte}; re-encode it as UTF-8, e.g. "
        f"`iconv -f {source} -t utf-8 {path.name} > utf8-{path.name}`, or save it "
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


#: The option naming each of the columns read (texts, labels, covariates).
_OPTIONS = ("--text-column", "--group-column")


def _read_csv(path, columns, kind):
    """``(where, text, group, cells)`` per row; ``columns``: the texts', the
    labels' and the covariates' (their ``cells``)."""
    delimiter = "\t" if kind == "tsv" else ","
    records = []
    with _open_text(path) as fh, _large_csv_fields():
        reader = csv.reader(fh, delimiter=delimiter)
        try:
            header = next(reader, None)
            if header is None:
                raise InputError(
                    f"{path} is empty; expected a header row naming the columns "
                    f"(e.g. {columns[0]}{delimiter}{columns[1]}) and one row "
                    "per document"
                )
            header = [h.strip() for h in header]
            at = [_find_column(header, name, (_OPTIONS + ("--covariate-column",) * c)[c],
                               path, delimiter) for c, name in enumerate(columns)]
            last = reader.line_num
            for row in reader:
                if not row:
                    last = reader.line_num
                    continue  # a blank line
                if reader.line_num - last > 1 and len(row) < len(header):
                    raise _runaway_quote(path, kind, last + 1, reader.line_num)
                text, group, *cells = (row[i] if i < len(row) else "" for i in at)
                records.append((f"line {reader.line_num}", text, group, cells))
                last = reader.line_num
        except UnicodeDecodeError as exc:
            raise _not_utf8(path, exc) from None
        except csv.Error as exc:
            raise InputError(
                f"{path}, line {reader.line_num}: cannot parse the {kind.upper()} "
                f"file ({exc})"
            ) from None
    return records


def _runaway_quote(path, kind, first, last):
    """A row that a quoted cell carries over several lines yet lacks cells
    of the header's: an unmatched double quote swallowed the rows after it."""
    return InputError(
        f"{path}, line {first}: a cell opened with a double quote runs to line {last}, "
        f"and the row lacks columns: is a quote unmatched? In a {kind.upper()} file a "
        'cell that starts with " must end with " (a quote inside it written ""); '
        "fix that cell or remove its opening quote"
    )


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
    except ValueError as exc:  # e.g. an integer of more digits than Python converts
        where = f", line {lineno}" if lineno else ""
        raise InputError(f"{path}{where}: cannot read the JSON ({exc})") from None
    except RecursionError:
        where = f", line {lineno}" if lineno else ""
        raise InputError(
            f"{path}{where}: the JSON is nested too deeply to read; expected "
            f"objects such as {{\"text\": \"...\", \"group\": \"...\"}}"
        ) from None


_LINE_END = re.compile(r"\r\n|\r|\n")


def _refuse_one_object(content, path, kind):
    """A .json file holding one object spread over lines (pretty-printed)
    is not one object per line: say so, rather than that line 1 is bad."""
    if kind != "json":
        return
    try:
        whole = json.loads(content)
    except (ValueError, RecursionError):
        return
    raise InputError(
        f"{path} holds a single JSON {_json_type(whole)} spread over several lines; "
        "give one JSON object per line (JSON lines), or one array of objects "
        '([{"text": "...", "group": "..."}, ...])'
    )


def _read_json(path, columns, kind):
    """``(where, text, group, cells)`` per object, as :func:`_read_csv`'s; a
    covariate field an object lacks is a missing value."""
    text_column, group_column, *covariate_columns = columns
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
        # Line ends only: str.splitlines would also split at U+2028, U+2029 and
        # U+0085, which JSON strings may hold unescaped.
        for lineno, line in enumerate(_LINE_END.split(content), start=1):
            if not line.strip():
                continue
            try:
                obj = _parse_json(line, path, lineno)
            except InputError:
                _refuse_one_object(content, path, kind)
                raise
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
        records.append((where, text, group, [obj.get(name) for name in covariate_columns]))
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
            records.append((str(file.relative_to(path)), text, folder.name, ()))
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

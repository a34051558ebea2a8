"""The report's output folder: its file names, checks and atomic writes.

Every file is written to a new temporary file in the folder and then moved
over the old one with ``os.replace``: a failed write leaves the old file as
it was, and a symbolic link in place of a report file is refused (it could
point outside the folder) or, if it appears after the check, replaced
rather than followed. A command's files as a whole are written into a
hidden folder inside the output folder first (:func:`staged_output`), so
that a run that fails or is interrupted leaves the earlier run's files, not
a mix.
"""

import contextlib
import csv
import io
import json
import os
import re
import secrets
import shutil
import tempfile
from importlib import resources
from pathlib import Path

from sklearn.utils._param_validation import validate_params

from ._load import InputError

#: Figures of the report: key -> file name.
FIGURE_FILES = {
    "heatmap": "collection_topics_heatmap.png",
    "bars": "collection_topics_bars.png",
    "map": "topic_map.png",
    "distances": "collection_distances.png",
    "trend": "collection_trends.png",
    "words": "topic_words.png",
    "quality": "topic_quality.png",
    "tree": "topic_tree.png",
    "correlation": "topic_correlations.png",
    "effects": "topic_effects.png",
    "curves": "topic_share_curves.png",
    "trace": "log_likelihood_trace.png",
    "pi_trace": "pi_trace.png",
    "pi_acf": "pi_autocorrelation.png",
}

#: Tables offered as CSV downloads: key -> file name.
TABLE_FILES = {
    "collections": "collections.csv",
    "topics": "topics.csv",
    "collection_topics": "collection_topics.csv",
    "themes": "themes.csv",
    "distinctive": "distinctive_topics.csv",
    "comparisons": "collection_comparisons.csv",
    "distances": "collection_distances.csv",
    "representative": "representative_documents.csv",
    "collection_words": "collection_words.csv",
    "topic_pairs": "topic_correlations.csv",
    "documents": "document_topics.csv",
    "reads_like": "document_collections.csv",
    "effects": "topic_effects.csv",
    "curves": "topic_share_curves.csv",
}

#: The page's style sheet and script, copied from the package next to it.
STATIC_FILES = ("report.css", "report.js")

#: The model files and the page.
MAIN_FILES = ("index.html", "report.json", "model.npz", "model.joblib", "vocabulary.txt")

#: The files of the command line's ``select`` (numbers of topics compared).
SELECT_FILES = ("select_n_components.csv", "select_n_components.png")

#: Every file the report (or ``select``) may write.
REPORT_FILES = (
    MAIN_FILES + STATIC_FILES + tuple(TABLE_FILES.values()) + tuple(FIGURE_FILES.values())
    + SELECT_FILES
)


def _symlink_problem(path):
    return (
        f"{path} is a symbolic link; the report does not write through links "
        "(it could overwrite a file outside the output folder): remove the link "
        "or choose another output folder"
    )


@validate_params({"out": [str, os.PathLike]}, prefer_skip_nested_validation=True)
def output_problem(out):
    """Why the report cannot be written to the folder ``out``, or None.

    Checked before fitting, and again by
    :func:`~sklearn_clda.report.write_report` before it writes anything.
    The folder may itself be a symbolic link to a folder (it is then
    written into), but none of the report's files in it may be a symbolic
    link or anything other than a regular file. The permission bits are
    not trusted alone (root may pass them where nothing can be written):
    an empty folder is created where the report's would be, and removed.

    Parameters
    ----------
    out : str or path-like
        The folder the report would be written to (it need not exist yet).

    Returns
    -------
    problem : str or None
        A one-line reason, or ``None`` when the report can be written there.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from sklearn_clda.report import output_problem
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     fine = output_problem(Path(folder) / "report")
    ...     _ = (Path(folder) / "taken").write_text("not a folder")
    ...     taken = output_problem(Path(folder) / "taken")
    >>> fine is None, taken.startswith("the output path")
    (True, True)
    """
    out = Path(out)
    try:
        return _folder_problem(out)
    except OSError as exc:  # e.g. a name too long for the file system
        return f"cannot use the output folder {out}: {exc.strerror}"


def _folder_problem(out):
    """:func:`output_problem` of a Path, which may raise OSError."""
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
        return _creation_problem(out, parent)
    if not out.is_dir():
        return f"the output path {out} is an existing file; give a folder for --out"
    for name in REPORT_FILES:
        target = out / name
        if target.is_symlink():
            return _symlink_problem(target)
        if target.exists() and not target.is_file():
            return f"{target} exists and is not a file; remove it or choose another folder"
    if not os.access(out, os.W_OK):
        return f"cannot write to the output folder {out}: permission denied"
    return _writing_problem(out)


# ``os.access`` answers from the permission bits: for root it says yes on a
# folder no one can write to (``/proc``, a read-only network mount), and
# the fit would fail only when its files are written. So the folder is
# also tried, by creating (and removing) what the report would create.


def _creation_problem(out, parent):
    """Why the missing folder ``out`` cannot be created under its nearest
    existing ``parent``: its first missing part is made and removed again."""
    first = out
    while first.parent != parent:
        first = first.parent
    try:
        first.mkdir()
    except FileExistsError:  # made meanwhile: nothing of ours to remove
        return None
    except OSError as exc:
        return f"cannot create the output folder {out} in {parent}: {exc.strerror}"
    first.rmdir()
    return None


def _writing_problem(out):
    """Why nothing can be created in the existing folder ``out``: a staging
    folder like :func:`staged_output`'s is made and removed again."""
    try:
        probe = tempfile.mkdtemp(prefix=".output.", suffix=".probe", dir=out)
    except OSError as exc:
        return f"cannot write to the output folder {out}: {exc.strerror}"
    os.rmdir(probe)
    return None


#: The files whose presence says a report is complete: replaced last.
_COMPLETE_MARKERS = ("report.json", "index.html")


@contextlib.contextmanager
def staged_output(out, owned=None, markers=_COMPLETE_MARKERS):
    """A new hidden folder in ``out`` to write a command's files into; on
    success its files replace the old ones in ``out`` (:func:`_commit`),
    on failure (or Ctrl-C) it is removed and ``out`` is left as it was.

    So ``out`` holds the old files or the new ones, never a mix of the two
    under the files that say they are complete (``markers``). ``owned``:
    the names of the command's files, of which those the new run lacks
    are removed (the report's by default: :data:`REPORT_FILES` but
    ``select``'s). The folder is inside ``out``, so that the moves are
    renames within one file system and nothing is written outside it.
    """
    owned = set(REPORT_FILES) - set(SELECT_FILES) if owned is None else set(owned)
    stage = Path(out) / f".output.{secrets.token_hex(6)}.part"
    stage.mkdir()
    try:
        yield stage
        _commit(stage, Path(out), owned, markers)
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def _commit(stage, out, owned, markers):
    """Move the staged files into ``out``: first the old ``markers`` are
    removed (an interruption from here on leaves none), then the other
    files replace theirs, the ``owned`` files of an older run that this
    one lacks (a trend figure, say) are removed, and the markers come last."""
    new = {path.name for path in stage.iterdir()}
    for name in markers:
        _remove_report_file(out / name)
    for name in sorted(new - set(markers)):
        os.replace(stage / name, out / name)
    for name in owned - new:
        _remove_report_file(out / name)
    for name in markers:
        if name in new:
            os.replace(stage / name, out / name)


def _remove_report_file(path):
    """Remove a report file of an earlier run (never a link's target)."""
    if path.is_symlink() or path.is_file():
        path.unlink()


def write_file(out_dir, name, write):
    """Write the file ``out_dir / name`` with ``write(binary file)``; return ``name``.

    The content goes to a new temporary file in ``out_dir`` that then
    replaces ``name`` (``os.replace``): a symbolic link at ``name`` is
    refused, and even one created meanwhile would be replaced rather than
    followed, so nothing outside ``out_dir`` is written. A failed write
    leaves the old file as it was and no temporary file.
    """
    target = Path(out_dir) / name
    if target.is_symlink():
        raise InputError(_symlink_problem(target))
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    tmp = Path(out_dir) / f".{name}.{secrets.token_hex(6)}.part"
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


def json_text(summary):
    """``summary`` (a dict of JSON values) as JSON text: one top-level key
    per line, each value on its line without indentation. An indented file
    is written by the json module's Python encoder, and only an unindented
    value by its C one, several times faster on the summary of thousands of
    collections."""
    return "{\n" + ",\n".join(
        f"  {json.dumps(str(key))}: {json.dumps(value, ensure_ascii=False, allow_nan=False)}"
        for key, value in summary.items()
    ) + "\n}\n"


def write_text(out_dir, name, text):
    """Write ``text`` (UTF-8) to ``out_dir / name`` with :func:`write_file`.

    Lone surrogates, which UTF-8 cannot hold (a file name or a command-line
    argument that was not UTF-8 gives them), are written as U+FFFD.
    """
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:
        data = re.sub("[\ud800-\udfff]", "\ufffd", text).encode("utf-8")
    return write_file(out_dir, name, lambda fh: fh.write(data))


def write_csv(out_dir, name, header, rows):
    """Write a CSV file (UTF-8, a header row, then ``rows``); return ``name``.

    Numbers are written as they are (``repr`` of floats, full precision);
    ``None`` is an empty cell. Text that a spreadsheet would run as a
    formula gets an apostrophe in front (:func:`spreadsheet_text`).
    """
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(map(spreadsheet_text, header))
    writer.writerows(map(spreadsheet_text, row) for row in rows)
    return write_text(out_dir, name, buffer.getvalue())


#: First characters that make a spreadsheet read a text cell as a formula
#: (OWASP's list for CSV injection).
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_text(cell):
    """``cell`` as a CSV cell that spreadsheets show rather than run.

    Texts of the corpus (a document's snippet, a collection label) reach
    the report's CSV files; opened in Excel or LibreOffice, a cell such as
    ``=HYPERLINK("http://...")`` or ``=cmd|' /C calc'!A0`` would be
    evaluated. Text starting with one of ``= + - @``, a tab or a carriage
    return gets a leading apostrophe, which spreadsheets show as text;
    text that reads as a number (``-1``, ``+2.5``) and everything that is
    not text are left as they are.

    >>> print(spreadsheet_text('=HYPERLINK("http://example.com")'))
    '=HYPERLINK("http://example.com")
    >>> spreadsheet_text("-1"), spreadsheet_text(-1.5), spreadsheet_text("sci")
    ('-1', -1.5, 'sci')
    """
    if not (isinstance(cell, str) and cell.startswith(_FORMULA_STARTS)):
        return cell
    try:
        float(cell)
    except ValueError:
        return "'" + cell
    return cell


def copy_static(out_dir):
    """Copy the page's style sheet and script into ``out_dir``; return their names."""
    folder = resources.files(__package__) / "static"
    return [
        write_file(out_dir, name, lambda fh, n=name: fh.write((folder / n).read_bytes()))
        for name in STATIC_FILES
    ]

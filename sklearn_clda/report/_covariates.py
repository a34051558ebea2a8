"""Reading the documents' covariates (``--covariate-column``) from their cells.

A covariate is a number per document: a date, an author's age, a rating.
Its cell holds a number (``12``, ``-0.5``, ``1e3``), an ISO date
(``2021-07-01``, with or without a time), which is read as a decimal year,
or nothing: an empty cell or one of :data:`MISSING` (any case), a JSON
``null`` or ``NaN``. JSON ``true`` and ``false`` are 1 and 0. Anything else
(a number too large for a float among them) is an
:class:`~._load.InputError` naming the file, the line and the cell.
"""

import calendar
import math
import re
from datetime import datetime

import numpy as np

from ._load import InputError, list_places

__all__ = []

#: Cells that mean "no value" (compared case-insensitively, stripped).
MISSING = frozenset({"", "na", "n/a", "nan", "null", "none"})

_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}(?:[T ]\S.*)?")
_SHOWN = 40  # characters of a bad cell named in an error


def decimal_year(moment):
    """``moment`` (a datetime) as a year and the share of that year gone
    by at it: 2021-07-01 00:00 is 2021 + 181 / 365. A time zone is
    ignored (the clock time is read)."""
    moment = moment.replace(tzinfo=None)
    days = 366 if calendar.isleap(moment.year) else 365
    gone = (moment - datetime(moment.year, 1, 1)).total_seconds()
    return moment.year + gone / (days * 86400.0)


def cell_value(raw):
    """``(value, kind)`` of one cell: kind ``"number"``, ``"date"`` or
    ``"missing"`` (value NaN); None when the cell is none of them."""
    if raw is None:
        return math.nan, "missing"
    if isinstance(raw, bool):
        return float(raw), "number"
    if isinstance(raw, (int, float)):
        value = float(raw)  # (an int too large for a float raises OverflowError)
        return (math.nan, "missing") if math.isnan(value) else (value, "number")
    if not isinstance(raw, str):
        return None
    text = raw.strip()
    if text.casefold() in MISSING:
        return math.nan, "missing"
    if _NUMBER.fullmatch(text):
        return float(text), "number"
    if _DATE.fullmatch(text):
        try:
            return decimal_year(datetime.fromisoformat(text)), "date"
        except ValueError:
            return None
    return None


def _shown(raw):
    """A cell as an error names it: its text (cut), or its JSON type."""
    if isinstance(raw, (dict, list)):
        return {dict: "a JSON object", list: "a JSON array"}[type(raw)]
    text = raw if isinstance(raw, str) else str(raw)
    return repr(text if len(text) <= _SHOWN else text[:_SHOWN - 1] + "\u2026")


def _unreadable(path, where, name, raw):
    shown = _shown(raw)
    return InputError(
        f"{path}, {where}: column {name!r} holds {shown}, not a number or an ISO date "
        "(2021-07-01); --covariate-column takes numbers: give a category as indicator "
        "columns of 0 and 1, or as the collections (--group-column)"
    )


def read_column(name, cells, places, path):
    """``(values, notes)``: the column ``name`` of the kept documents
    (``cells``, their raw cells, and ``places``, where each is) as a float64
    array with NaN where a value is missing, and notes on the missing values
    and dates; InputError for a cell that is not a number, a date or
    missing, and for a column without a value."""
    values = np.empty(len(cells))
    missing, dates = [], 0
    for row, (raw, where) in enumerate(zip(cells, places)):
        try:
            read = cell_value(raw)
        except OverflowError:  # a JSON integer of over 308 digits
            read = math.inf, "number"
        if read is None:
            raise _unreadable(path, where, name, raw)
        values[row], kind = read
        if math.isinf(values[row]):
            raise InputError(f"{path}, {where}: column {name!r} holds {_shown(raw)}, too "
                             "large for a number; give it in other units")
        missing += [where] if kind == "missing" else []
        dates += kind == "date"
    if len(missing) == len(cells):
        raise InputError(f"{path}: column {name!r} (--covariate-column) has no value in any "
                         "document with text; is it the right column?")
    notes = []
    if missing:
        notes.append(f"{len(missing)} document(s) have no value in column {name!r} "
                     f"({list_places(missing)}): they are fitted, and left out of the "
                     "covariate effects")
    if dates:
        notes.append(f"column {name!r} holds dates, read as decimal years (2021-07-01 is "
                     f"{decimal_year(datetime(2021, 7, 1)):.3f})")
    return values, notes

"""The report's section on the documents' covariates: how each moves the
topics' shares (:func:`~sklearn_clda.inspection.topic_effects`), as rows of
the page, a CSV table and a figure."""

import warnings
from collections.abc import Mapping

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from ..inspection._effects import check_rank, design_matrix
from ..inspection._utils import require_pandas

#: Covariates the report takes at most: the page gives each a table of
#: every topic and the figure a panel.
MAX_COVARIATES = 8

#: Distinct values a covariate needs for its curve (fewer: a date by year
#: over a few years, a rating of five stars, an indicator), which the
#: spline's seven columns need with room to spare.
MIN_CURVE_VALUES = 10

_CALLER = "the report"
_SEED = 0  # the effects' draws are seeded, as the rest of the report


def check_covariates(covariates, n_samples):
    """``covariates`` (a dict of columns, a DataFrame, a Series or an
    array) as a DataFrame of float64 columns with string names, NaN where
    a value is missing; None for None. ValueError for another number of
    rows, no or too many columns, names used twice or ``intercept``, values
    that are not numbers, or infinite ones."""
    if covariates is None:
        return None
    pd = require_pandas("write_report")
    if isinstance(covariates, Mapping):
        covariates = pd.DataFrame(dict(covariates))
    elif not hasattr(covariates, "columns"):
        named = getattr(covariates, "name", None) is not None and np.ndim(covariates) == 1
        values = np.asarray(covariates, dtype=object)
        values = values.reshape(-1, 1) if values.ndim == 1 else values
        if values.ndim != 2:
            raise ValueError(f"covariates must be a table of one row per document, got "
                             f"shape {np.shape(covariates)}.")
        names = ([str(covariates.name)] if named
                 else [f"x{i}" for i in range(values.shape[1])])
        covariates = pd.DataFrame(values, columns=names)
    names = [str(c) for c in covariates.columns]
    if covariates.shape[0] != n_samples:
        raise ValueError(f"covariates have {covariates.shape[0]} rows but X has "
                         f"{n_samples}: give one row per document.")
    if not 1 <= len(names) <= MAX_COVARIATES:
        raise ValueError(f"covariates must have 1 to {MAX_COVARIATES} columns (the page shows "
                         f"a table of every topic for each), got {len(names)}; use "
                         "sklearn_clda.inspection.topic_effects for more.")
    if len(set(names)) < len(names) or "intercept" in names:
        raise ValueError(f"covariates need distinct column names other than 'intercept' "
                         f"(the regression's first term), got {names}.")
    try:
        values = np.asarray(covariates, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError("covariates must be numbers (NaN where a value is missing); give "
                         "a category as indicator columns of 0 and 1.") from None
    infinite = np.isinf(values).any(axis=0)
    if infinite.any():
        raise ValueError(f"covariates hold an infinite value in column "
                         f"{names[int(np.argmax(infinite))]!r}.")
    return pd.DataFrame(values, columns=names)


def regressed(frame, X):
    """Whether each document enters the regressions: it has a word of the
    vocabulary and a value of every covariate."""
    has_words = np.diff(X.tocsr().indptr) > 0
    return has_words & np.isfinite(frame.to_numpy()).all(axis=1)


def covariate_problem(frame, X):
    """Why the covariates cannot be regressed on (too few documents with
    words and values, a column the others determine), or None."""
    rows = regressed(frame, X)
    try:
        design, names = design_matrix(frame[rows], int(rows.sum()), True, _CALLER)
        check_rank(design, names, _CALLER)
    except ValueError as exc:
        return str(exc)
    return None


def covariate_effects(model, X, frame, groups, interval):
    """``(section, table, curves)``: the page's section (JSON values: one
    entry per covariate, its topics' rows sorted by slope), the table of
    :func:`~sklearn_clda.inspection.topic_effects` with each slope's change
    over the covariate's span (the CSV's rows), and the curves of
    :func:`~sklearn_clda.inspection.topic_share_curves` along each
    covariate of at least :data:`MIN_CURVE_VALUES` distinct values, with a
    column ``covariate`` (None when there is none)."""
    from ..inspection import topic_effects

    rows = regressed(frame, X)
    used = np.flatnonzero(rows)
    used_groups = None if groups is None else [groups[i] for i in used]
    notes = []
    table = _noting(notes, lambda: topic_effects(model, X[used], frame.iloc[used], used_groups,
                                                 ci=interval, random_state=_SEED))
    terms = [_term(table, name, frame[name].to_numpy()[rows]) for name in frame.columns]
    table = _with_changes(table, terms)
    curves = _curves(model, X[used], frame.iloc[used], used_groups, interval, notes)
    section = {
        "terms": terms,
        "n_documents": int(rows.sum()),
        "n_left_out": int(rows.size - rows.sum()),
        "interval": float(interval),
        "n_samples": int(table.attrs["n_samples"]),
        "prior": table.attrs["prior"],
        "by_chance": (1.0 - interval) * int(np.unique(table["topic"]).size),
        "curves": [] if curves is None else list(dict.fromkeys(curves["covariate"])),
        "notes": notes,
    }
    return section, table, curves


def _noting(notes, call):
    """``call()``, its ConvergenceWarnings' messages added to ``notes`` (the
    page says them) and its other warnings passed on."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = call()
    for record in caught:
        if issubclass(record.category, ConvergenceWarning):
            notes.append(str(record.message))
        else:
            warnings.warn(record.message, record.category, stacklevel=3)
    return result


def _curves(model, X, frame, groups, interval, notes):
    """The curves along each covariate of at least :data:`MIN_CURVE_VALUES`
    distinct values, the others held at their medians, in one table with
    a column ``covariate``; None without such a covariate. A covariate
    whose spline cannot be fitted (knots without documents) gets a note
    instead."""
    from ..inspection import topic_share_curves

    pd = require_pandas("write_report")
    found = []
    for name in frame.columns:
        if np.unique(frame[name]).size < MIN_CURVE_VALUES:
            continue
        controls = frame.drop(columns=name)
        try:
            curve = _noting(notes, lambda: topic_share_curves(
                model, X, frame[name], groups,
                controls=controls if controls.shape[1] else None, ci=interval,
                random_state=_SEED))
        except ValueError as exc:
            notes.append(f"no curve along {name!r}: {exc}")
            continue
        found.append(curve.assign(covariate=name))
    return pd.concat(found, ignore_index=True) if found else None


def span(values):
    """``(low, high, how)``: the two values of the covariate a slope's
    change is given between: the lowest and the highest for a covariate
    of two values (an indicator), else its 10th and 90th percentiles
    (the lowest and the highest where those coincide)."""
    distinct = np.unique(values)
    if distinct.size > 2:
        low, high = np.percentile(values, [10, 90])
        if high > low:
            return float(low), float(high), "10th to 90th percentile"
    return float(distinct[0]), float(distinct[-1]), "lowest to highest value"


def change(slope, low, high):
    """The change of a share of slope ``slope`` from ``low`` to ``high``:
    ``slope * (high - low)``, taken as a difference of two products, which
    stay finite where the width of a span from -1e308 to 1e308 would not."""
    return slope * high - slope * low


def _term(table, name, values):
    """One covariate's entry: its span and its topics' rows, the steepest
    rise first."""
    low, high, how = span(values)
    rows = []
    for row in table[table["term"] == name].itertuples(index=False):
        rows.append({
            "topic": int(row.topic), "estimate": row.estimate, "std_error": row.std_error,
            "lower": row.lower, "upper": row.upper, "p_value": row.p_value,
            "change": change(row.estimate, low, high),
            "change_lower": change(row.lower, low, high),
            "change_upper": change(row.upper, low, high),
            "verdict": "clear" if row.lower > 0 or row.upper < 0 else "uncertain",
        })
    rows.sort(key=lambda row: -row["estimate"])
    return {"name": name, "low": low, "high": high, "span": how, "rows": rows,
            "n_up": sum(row["verdict"] == "clear" and row["estimate"] > 0 for row in rows),
            "n_down": sum(row["verdict"] == "clear" and row["estimate"] < 0 for row in rows)}


def _with_changes(table, terms):
    """``table`` with each slope's span (``low``, ``high``) and change
    over it (``change``, ``change_lower``, ``change_upper``); empty for
    the intercept."""
    table = table.copy()
    for column in ("low", "high", "change", "change_lower", "change_upper"):
        table[column] = np.nan
    for term in terms:
        at = (table["term"] == term["name"]).to_numpy()
        table.loc[at, "low"], table.loc[at, "high"] = term["low"], term["high"]
        for column, source in (("change", "estimate"), ("change_lower", "lower"),
                               ("change_upper", "upper")):
            table.loc[at, column] = change(table.loc[at, source], term["low"], term["high"])
    return table

"""Shared helpers of the plotting displays: matplotlib checks, axes, inputs."""

import warnings

import numpy as np
from sklearn.utils._param_validation import (
    InvalidParameterError,
    validate_parameter_constraints,
)

from ..inspection._utils import (  # noqa: F401 (re-exported for the displays)
    check_clda,
    check_topics,
    collection_position,
    resolve_feature_names,
    topic_word,
    unwrap,
)
from ..metrics import top_word_indices

__all__ = []

#: Number of topics a display picks by default when ``topics=None``.
DEFAULT_N_TOPICS = 6


def check_matplotlib(caller):
    """Raise an informative ImportError if matplotlib cannot be imported.

    Parameters
    ----------
    caller : str
        Name of the function or method that needs matplotlib, shown in the
        message.
    """
    try:
        import matplotlib  # noqa: F401
    except ImportError as exc:
        raise ImportError(
            f"matplotlib is required by {caller} but could not be imported. "
            "Install it with `pip install matplotlib` (or `pip install "
            "sklearn-clda[plot]`)."
        ) from exc


def _is_axes(obj):
    from matplotlib.axes import Axes

    return isinstance(obj, Axes)


def single_axes(ax, figsize=None):
    """Return ``(figure, axes)``: ``ax`` itself, or a new figure's axes."""
    import matplotlib.pyplot as plt

    if ax is None:
        fig, ax = plt.subplots(figsize=figsize, layout="constrained")
        return fig, ax
    if not _is_axes(ax):
        raise ValueError(
            f"ax must be a matplotlib Axes or None, got {type(ax).__name__}."
        )
    return ax.figure, ax


def axes_grid(ax, n_panels, n_cols, figsize=None, sharex=False, sharey=False):
    """Axes for ``n_panels`` small multiples laid out in ``n_cols`` columns.

    Parameters
    ----------
    ax : None, Axes or array-like of Axes
        ``None`` creates a new figure. A single Axes is used directly for
        one panel; for several it is hidden and its area is divided into
        the grid. An array-like must hold at least ``n_panels`` Axes, used
        in order (the others are switched off).

    Returns
    -------
    figure : Figure
    axes : ndarray of Axes
        The grid (shape ``(n_rows, n_cols)``, unused cells switched off) or
        the array passed in, in its own shape.
    panels : list of Axes
        The ``n_panels`` axes to draw in, in order.
    bounding_ax : Axes or None
        The Axes that was divided into the grid, if any.
    """
    import matplotlib.pyplot as plt

    n_cols = max(1, min(int(n_cols), n_panels))
    n_rows = -(-n_panels // n_cols)
    if ax is None:
        fig, axes = plt.subplots(
            n_rows, n_cols, figsize=figsize, squeeze=False, layout="constrained",
            sharex=sharex, sharey=sharey,
        )
        for extra in axes.ravel()[n_panels:]:
            extra.set_axis_off()
        return fig, axes, list(axes.ravel()[:n_panels]), None
    if _is_axes(ax):
        if n_panels == 1:
            return ax.figure, np.array([[ax]], dtype=object), [ax], None
        spec = ax.get_subplotspec()
        if spec is None:
            raise ValueError(
                f"A single ax can only be divided into {n_panels} panels when "
                "it was created as a subplot (e.g. by plt.subplots); pass "
                f"an array of {n_panels} Axes instead."
            )
        fig = ax.figure
        ax.set_axis_off()
        grid = spec.subgridspec(n_rows, n_cols)
        axes = np.empty((n_rows, n_cols), dtype=object)
        for i in range(n_rows):
            for j in range(n_cols):
                share_x = axes[0, 0] if sharex and (i or j) else None
                share_y = axes[0, 0] if sharey and (i or j) else None
                axes[i, j] = fig.add_subplot(grid[i, j], sharex=share_x, sharey=share_y)
        for extra in axes.ravel()[n_panels:]:
            extra.set_axis_off()
        return fig, axes, list(axes.ravel()[:n_panels]), ax
    axes = np.asarray(ax, dtype=object)
    if axes.size < n_panels or not all(_is_axes(a) for a in axes.ravel()):
        raise ValueError(
            f"ax must be None, one Axes or an array-like of at least {n_panels} "
            f"Axes (one per panel), got {axes.size} object(s)."
        )
    for extra in axes.ravel()[n_panels:]:  # e.g. the sixth of a 2 x 3 grid
        extra.set_axis_off()
    return axes.ravel()[0].figure, axes, list(axes.ravel()[:n_panels]), None


def finite_values(display, name, value, what):
    """A display's ``value`` (its attribute ``name``) as a float array of at
    least 2 dimensions, each non-empty, all finite; ``ValueError`` saying
    which otherwise. ``what`` names the axes, e.g. "(n_collections, n_topics)"."""
    try:
        array = np.atleast_2d(np.asarray(value, dtype=np.float64))
    except (TypeError, ValueError) as exc:  # text, complex numbers, ragged rows
        raise ValueError(
            f"{type(display).__name__} needs {name} as real numbers of shape {what}; "
            f"{exc}"
        ) from None
    if array.ndim != 2 or 0 in array.shape:
        raise ValueError(
            f"{type(display).__name__} needs {name} of shape {what}, with at least one "
            f"row and one column; got shape {array.shape}."
        )
    if not np.all(np.isfinite(array)):
        raise ValueError(
            f"{type(display).__name__} got NaN or infinite values in {name}; there is "
            "nothing to draw for them."
        )
    return array


def shares_and_labels(display, n, default_label="Topic {}"):
    """A topic display's ``shares`` (ones if None) and labels
    (``topic_labels``, or ``default_label`` of each of its ``topics``, by
    default ``0 .. n - 1``), checked: ``n`` finite shares >= 0, ``n``
    topics and labels; ``ValueError`` saying which otherwise."""
    name = type(display).__name__
    given = display.shares
    shares = np.ones(n) if given is None else finite_values(display, "shares", given,
                                                            "(n_topics,)")
    if np.ndim(given if given is not None else [0] * n) != 1 or shares.size != n:
        raise ValueError(f"shares of {name} must be {n} numbers >= 0, got shape "
                         f"{np.shape(given)}.")
    shares = shares.ravel()
    if np.any(shares < 0):
        raise ValueError(f"shares of {name} must be {n} numbers >= 0.")
    topics = np.arange(n) if display.topics is None else np.atleast_1d(display.topics)
    labels = ([default_label.format(k) for k in topics] if display.topic_labels is None
              else [str(label) for label in display.topic_labels])
    if topics.shape != (n,) or len(labels) != n:
        raise ValueError(f"topics and topic_labels of {name} need {n} entries each.")
    return shares, labels


def interval_bounds(display, props):
    """A display's ``(lower, upper)`` intervals as float arrays of the shape
    of ``props`` (``ValueError`` otherwise), or ``(None, None)`` when it
    has none."""
    if display.lower is None or display.upper is None:
        return None, None
    lower = np.atleast_2d(np.asarray(display.lower, dtype=np.float64))
    upper = np.atleast_2d(np.asarray(display.upper, dtype=np.float64))
    if lower.shape != props.shape or upper.shape != props.shape:
        raise ValueError(
            f"lower and upper must have the shape of proportions "
            f"{props.shape}, got {lower.shape} and {upper.shape}."
        )
    return lower, upper


def merge_kw(defaults, user):
    """``defaults`` updated with the user's keyword dict (which may be None)."""
    out = dict(defaults)
    if user:
        out.update(user)
    return out


def unwrap_estimator(estimator):
    """Return ``(model, feature_names)`` for an estimator or a Pipeline
    (:func:`sklearn_clda.inspection._utils.unwrap` without the preprocessor)."""
    model, _, names = unwrap(estimator)
    return model, names


def topic_word_distributions(model, caller):
    """Row-normalized ``components_`` of a fitted topic model, (K, V), checked
    as :func:`~sklearn_clda.inspection._utils.topic_word` checks it."""
    components = topic_word(model, caller)
    return components / components.sum(axis=1, keepdims=True)


def top_words(phi, topics, feature_names, n_words):
    """Indices, names and probabilities of the top words of the given topics.

    ``n_words`` (a positive int) is clipped to the vocabulary size; words
    are ranked by :func:`~sklearn_clda.metrics.top_word_indices`.
    """
    rows = phi[topics]
    index = top_word_indices(rows, n=min(n_words, phi.shape[1]))
    weights = np.take_along_axis(rows, index, axis=1)
    if feature_names is None:
        names = np.array([[f"word {i}" for i in row] for row in index], dtype=object)
    else:
        names = feature_names[index]
    return index, names, weights


def check_attribute(display, name, constraints):
    """Validate a display attribute that ``plot`` uses when its argument is None.

    The ``plot`` arguments themselves are checked by ``validate_params``;
    this applies the same constraints to the value stored by ``__init__``.
    The error is a plain ``ValueError``: ``validate_params`` would otherwise
    rename it after ``plot``, whose argument was not at fault.
    """
    value = getattr(display, name)
    try:
        validate_parameter_constraints(
            {name: constraints}, {name: value}, caller_name=type(display).__name__
        )
    except InvalidParameterError as exc:
        raise ValueError(
            f"{exc} It was given to the constructor and used because plot was "
            f"called with {name}=None."
        ) from None
    return value


def select_topics(pi, n_topics):
    """The ``n_topics`` topics whose collection proportions differ most.

    ``pi`` has shape (n_collections, n_components). Topics are ranked by
    their spread across collections (max - min) and ties, e.g. with a
    single collection where every spread is 0, by their mean proportion.
    """
    spread = pi.max(axis=0) - pi.min(axis=0)
    mean = pi.mean(axis=0)
    order = np.lexsort((-mean, -spread))
    return order[: min(n_topics, pi.shape[1])].astype(np.intp)


def collection_labels(model):
    """Labels of a fitted CompoundLDA's collections; ``["all"]`` without groups."""
    groups = getattr(model, "groups_", None)
    if groups is None:
        return np.array(["all"], dtype=object)
    return np.asarray(groups, dtype=object)


#: Collections a display draws when not told which; beyond it, the ones with
#: the most documents (a panel, bar or row each: thousands took minutes and
#: could not be read).
MAX_COLLECTIONS = 40


def largest_collections(sizes, n=MAX_COLLECTIONS):
    """Positions of the ``n`` collections with the most documents (ties: the
    first), in their order."""
    return np.sort(np.argsort(-np.asarray(sizes), kind="stable")[:n])


def default_collections(labels, sizes, caller):
    """Positions of the collections a display draws unasked: all of them, or
    the :data:`MAX_COLLECTIONS` with the most documents, with a warning."""
    if len(labels) <= MAX_COLLECTIONS:
        return np.arange(len(labels))
    warnings.warn(
        f"{caller} draws the {MAX_COLLECTIONS} of the {len(labels)} collections with the "
        "most documents; pass collections= (their labels) to choose which.",
        UserWarning, stacklevel=4,
    )
    return largest_collections(sizes)


def shown_collections(model, collections, caller):
    """:func:`check_collections` of a display that draws each collection:
    ``None`` means :func:`default_collections` (by ``collection_sizes_``)."""
    if collections is None:
        labels = collection_labels(model)
        positions = default_collections(labels, model.collection_sizes_, caller)
        return positions, labels[positions]
    return check_collections(model, collections, caller)


def check_collections(model, collections, caller, name="collections"):
    """Positions (into ``collection_topic_``) and labels of chosen collections
    (all of them for ``None``)."""
    labels = collection_labels(model)
    among = "the model; its collections (groups_) are"
    if getattr(model, "groups_", None) is None:
        among = "a model fitted as a single collection, labelled"
    positions = collection_positions(labels, collections, caller, name, among)
    return positions, labels[positions]


def collection_positions(labels, collections, caller, name="collections",
                         among="the model; its collections (groups_) are"):
    """Positions in ``labels`` of the collections named, in their order
    (all of them for ``None``): each named once, and at least one."""
    if collections is None:
        return np.arange(len(labels))
    if isinstance(collections, str) or np.ndim(collections) == 0:
        collections = [collections]
    positions = [collection_position(labels, value, name, caller, among)
                 for value in collections]
    if not positions:
        raise ValueError(f"{name} passed to {caller} must name at least one collection.")
    if len(set(positions)) != len(positions):
        raise ValueError(
            f"{name} passed to {caller} repeats collections: {list(collections)}."
        )
    return np.asarray(positions, dtype=np.intp)


def std_of(display, name, n_points):
    """The spread ``display.std[name]`` as a float array of ``n_points``
    values, or None (no ``std``, or none for ``name``)."""
    owner = type(display).__name__
    if display.std is None:
        return None
    if not isinstance(display.std, dict):
        raise ValueError(
            f"std passed to {owner} must be a dict {{name: spreads}} like scores, "
            f"got {type(display.std).__name__}."
        )
    if display.std.get(name) is None:
        return None
    std = np.asarray(display.std[name], dtype=np.float64).ravel()
    if std.shape != (n_points,):
        raise ValueError(
            f"std[{name!r}] passed to {owner} has {std.size} values for "
            f"{n_points} points; it needs one spread per score."
        )
    return std


def text_color_for(rgba):
    """Black or white, whichever reads better on a cell of colour ``rgba``."""
    r, g, b = rgba[:3]
    return "black" if 0.299 * r + 0.587 * g + 0.114 * b > 0.5 else "white"


# Where a label may go around its point: offset (points) and alignment.
_LABEL_PLACES = ((4, 4, "left", "bottom"), (4, -4, "left", "top"),
                 (-4, 4, "right", "bottom"), (-4, -4, "right", "top"))


def _place(text, place):
    """Put a label at one of ``_LABEL_PLACES``; its box on the canvas."""
    dx, dy, ha, va = place
    text.set_position((dx, dy))
    text.set_horizontalalignment(ha)
    text.set_verticalalignment(va)
    return text.get_window_extent()


def spread_labels(ax, labels):
    """Put each label at the first place around its point where it covers
    no label placed before it (the first place if there is none), so that
    the labels of close points do not print over each other."""
    ax.autoscale_view()  # the points' places on the canvas, as they will be drawn
    placed = []
    for text in labels:
        for place in _LABEL_PLACES:
            box = _place(text, place)
            if not any(box.overlaps(other) for other in placed):
                break
        else:  # every place covers a label: the first
            box = _place(text, _LABEL_PLACES[0])
        placed.append(box)

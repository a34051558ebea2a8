"""Which collections talk about the same things: their distances as a matrix."""

import numpy as np
from sklearn.utils._param_validation import HasMethods, StrOptions, validate_params

from ..inspection._utils import require_pandas
from ..metrics._topics import _ALIGN_METRICS
from ._base import (
    check_matplotlib,
    finite_values,
    merge_kw,
    shown_collections,
    single_axes,
    text_color_for,
    unwrap_estimator,
)

__all__ = ["CollectionDistanceDisplay"]

#: Most collections whose cells carry their distance as text by default.
MAX_ANNOTATED = 12

#: How each metric's distances are named on the colour bar.
METRIC_NAMES = {"hellinger": "Hellinger distance", "tv": "Total variation distance",
                "jsd": "Jensen-Shannon divergence (bits)"}


def distance_order(distances):
    """The collections in the leaf order of an average-linkage clustering of
    ``distances`` (SciPy, optimal leaf ordering): alike collections are
    neighbours."""
    from scipy.cluster.hierarchy import leaves_list, linkage
    from scipy.spatial.distance import squareform

    n = distances.shape[0]
    if n < 3:
        return np.arange(n)
    return leaves_list(linkage(squareform(distances, checks=False), method="average",
                               optimal_ordering=True))


def distance_matrix(table, labels):
    """The square matrix of the ``distance`` column of a table of
    :func:`~sklearn_clda.inspection.collection_distances` over ``labels``
    (in their order), zero on the diagonal."""
    where = {label: i for i, label in enumerate(labels)}
    matrix = np.zeros((len(labels), len(labels)))
    a = np.array([where[label] for label in table["a"]], dtype=np.intp)
    b = np.array([where[label] for label in table["b"]], dtype=np.intp)
    matrix[a, b] = matrix[b, a] = table["distance"].to_numpy()
    return matrix


class CollectionDistanceDisplay:
    """How far apart the collections' topic mixtures are, as a matrix.

    Each cell is the distance between two collections' topic mixtures
    ``pi_j`` (by default the posterior mean of the Hellinger distance,
    :func:`~sklearn_clda.inspection.collection_distances`), darker for
    closer. The collections are ordered by a hierarchical clustering of
    the distances, so that alike collections sit side by side and groups
    of them show as dark blocks along the diagonal.

    Use :meth:`from_estimator` to build it from a fitted
    :class:`~sklearn_clda.CompoundLDA`; the constructor takes precomputed
    distances. All attributes are set in :meth:`plot`.

    Parameters
    ----------
    distances : array-like of shape (n_collections, n_collections)
        Symmetric, non-negative distances with a zero diagonal.

    collection_labels : list of str of shape (n_collections,), default=None
        The collections' names; ``None`` means ``"0"``, ``"1"``, ...

    distance_name : str, default="Hellinger distance"
        The colour bar's label.

    Attributes
    ----------
    order_ : ndarray of shape (n_collections,)
        The collections from the top row (and left column) down.

    image_ : matplotlib AxesImage
        The matrix; the diagonal is left blank.

    texts_ : list of matplotlib Text
        The distances written in the cells (empty when not annotated).

    colorbar_ : matplotlib Colorbar
        The colour bar.

    ax_ : matplotlib Axes
        Axes with the plot.

    figure_ : matplotlib Figure
        Figure containing the plot.

    See Also
    --------
    sklearn_clda.inspection.collection_distances : The distances with
        their intervals.
    CollectionDifferenceDisplay : Where two collections differ, topic by
        topic.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> from sklearn_clda.plotting import CollectionDistanceDisplay
    >>> distances = [[0.0, 0.8, 0.2], [0.8, 0.0, 0.7], [0.2, 0.7, 0.0]]
    >>> disp = CollectionDistanceDisplay(distances, collection_labels=["A", "B", "C"])
    >>> disp = disp.plot()
    >>> disp.order_.tolist()  # A and C, the closest, side by side
    [1, 2, 0]
    >>> [text.get_text() for text in disp.texts_][:2]
    ['0.70', '0.80']
    >>> plt.close("all")
    """

    def __init__(self, distances, *, collection_labels=None,
                 distance_name="Hellinger distance"):
        self.distances = distances
        self.collection_labels = collection_labels
        self.distance_name = distance_name

    def _checked(self):
        """``(distances, labels)`` validated."""
        name = type(self).__name__
        distances = finite_values(self, "distances", self.distances,
                                  "(n_collections, n_collections)")
        n = distances.shape[0]
        if (np.ndim(self.distances) != 2 or distances.shape != (n, n)
                or not np.allclose(distances, distances.T, atol=1e-9)):
            raise ValueError(f"{name} needs a square, symmetric matrix of distances; got "
                             f"shape {np.shape(self.distances)}.")
        if (distances < 0).any() or np.abs(np.diag(distances)).max() > 1e-9:
            raise ValueError(f"{name} needs distances >= 0 with zeros on the diagonal.")
        labels = ([str(j) for j in range(n)] if self.collection_labels is None
                  else [str(label) for label in self.collection_labels])
        if len(labels) != n:
            raise ValueError(f"collection_labels of {name} needs {n} labels, got "
                             f"{len(labels)}.")
        return distances, labels

    def _annotate(self, ax, shown, image, text_kw):
        """The distance written in each off-diagonal cell, black or white
        to read on the cell's colour."""
        texts = []
        for (i, j), value in np.ndenumerate(shown):
            if i != j:
                texts.append(ax.text(j, i, f"{value:.2f}", **merge_kw(
                    {"ha": "center", "va": "center", "fontsize": "small",
                     "color": text_color_for(image.cmap(image.norm(value)))}, text_kw)))
        return texts

    def plot(self, ax=None, *, order="cluster", annotate=None, cmap="viridis",
             imshow_kw=None, text_kw=None):
        """Draw the matrix.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes to draw on; ``None`` creates a new figure.

        order : {"cluster", "given"}, default="cluster"
            ``"cluster"`` puts alike collections side by side (the leaf
            order of an average-linkage clustering); ``"given"`` keeps the
            order of ``distances``, e.g. years in time.

        annotate : bool, default=None
            Write each distance in its cell; ``None`` does so for at most
            12 collections.

        cmap : str or matplotlib Colormap, default="viridis"
            The colours, from the closest to the farthest pair.

        imshow_kw : dict, default=None
            Keyword arguments of :meth:`matplotlib.axes.Axes.imshow`
            (e.g. ``vmax``; the default range is 0 to the largest distance).

        text_kw : dict, default=None
            Keyword arguments of :meth:`matplotlib.axes.Axes.text` for the
            written distances.

        Returns
        -------
        display : CollectionDistanceDisplay
            The display, with the artists stored as attributes.
        """
        check_matplotlib(f"{type(self).__name__}.plot")
        if order not in ("cluster", "given"):
            raise ValueError(f"order must be 'cluster' or 'given', got {order!r}.")
        distances, labels = self._checked()
        n = distances.shape[0]
        fig, ax = single_axes(ax, figsize=(2.5 + 0.45 * n, 2.0 + 0.4 * n))
        self.order_ = distance_order(distances) if order == "cluster" else np.arange(n)
        shown = distances[np.ix_(self.order_, self.order_)]
        masked = np.ma.masked_array(shown, mask=np.eye(n, dtype=bool))
        self.image_ = ax.imshow(masked, **merge_kw(
            {"cmap": cmap, "vmin": 0.0, "vmax": max(float(shown.max()), 1e-12),
             "interpolation": "nearest", "aspect": "equal"}, imshow_kw))
        names = [labels[j] for j in self.order_]
        ax.set_xticks(range(n), names, rotation=45, ha="right", rotation_mode="anchor")
        ax.set_yticks(range(n), names)
        self.texts_ = (self._annotate(ax, shown, self.image_, text_kw)
                       if (n <= MAX_ANNOTATED if annotate is None else annotate) else [])
        self.colorbar_ = fig.colorbar(self.image_, ax=ax, label=self.distance_name)
        self.ax_ = ax
        self.figure_ = fig
        return self

    @classmethod
    @validate_params(
        {
            "estimator": [HasMethods(["fit"])],
            "metric": [StrOptions(set(_ALIGN_METRICS))],
            "collections": ["array-like", None],
            "topic_groups": [dict, "array-like", None],
        },
        # plot_kw is checked by plot.
        prefer_skip_nested_validation=False,
    )
    def from_estimator(cls, estimator, *, metric="hellinger", collections=None,
                       topic_groups=None, ax=None, **plot_kw):
        """Draw the distances between a fitted CompoundLDA's collections.

        Parameters
        ----------
        estimator : CompoundLDA or Pipeline
            A fitted :class:`~sklearn_clda.CompoundLDA` (Gibbs sampler) with
            groups and at least 4 kept draws, or a Pipeline ending with one.

        metric : {"hellinger", "tv", "jsd"}, default="hellinger"
            The distance; see
            :func:`~sklearn_clda.inspection.collection_distances`.

        collections : array-like of collection labels, default=None
            The collections to draw (two or more). ``None`` draws every
            collection, or the 40 with the most documents, with a warning.

        topic_groups : dict or array-like of shape (n_components,), default=None
            Themes to measure the distances between, as in
            :func:`~sklearn_clda.inspection.collection_distances`.

        ax : matplotlib Axes, default=None
            Axes to draw on; ``None`` creates a new figure.

        **plot_kw : dict
            Further keyword arguments of :meth:`plot`.

        Returns
        -------
        display : CollectionDistanceDisplay
            The plotted display.
        """
        from ..inspection import collection_distances

        caller = f"{cls.__name__}.from_estimator"
        check_matplotlib(caller)
        require_pandas(caller, via="collection_distances")
        model, _ = unwrap_estimator(estimator)
        _, labels = shown_collections(model, collections, caller)
        table = collection_distances(estimator, metric=metric, collections=labels,
                                     topic_groups=topic_groups)
        labels = table.attrs["collections"]
        display = cls(distance_matrix(table, labels), collection_labels=labels,
                      distance_name=METRIC_NAMES[metric])
        return display.plot(ax=ax, **plot_kw)

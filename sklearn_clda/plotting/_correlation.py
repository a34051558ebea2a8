"""The graph of topics that appear together (stm's ``plot.topicCorr``)."""

from numbers import Integral

import numpy as np
from sklearn.utils._param_validation import HasMethods, StrOptions, validate_params

from .._corpus import StrictInterval
from ..inspection._labels import LABEL_METHODS
from ..inspection._utils import require_pandas
from ._base import (
    check_matplotlib,
    finite_values,
    merge_kw,
    shares_and_labels,
    single_axes,
    unwrap_estimator,
)
from ._trend import _topic_labels

__all__ = ["TopicCorrelationDisplay"]


def correlation_order(correlation):
    """The topics in the leaf order of an average-linkage clustering of the
    distances ``1 - r`` (scipy), so that correlated topics are neighbours."""
    from scipy.cluster.hierarchy import leaves_list, linkage
    from scipy.spatial.distance import squareform

    n = correlation.shape[0]
    if n < 3:
        return np.arange(n)
    distance = np.clip(1.0 - correlation, 0.0, 2.0)
    np.fill_diagonal(distance, 0.0)
    return leaves_list(linkage(squareform(distance, checks=False), method="average"))


def circle_positions(order):
    """Points on the unit circle, clockwise from the top, in ``order``."""
    n = len(order)
    angles = np.pi / 2 - 2 * np.pi * np.arange(n) / max(n, 1)
    xy = np.empty((n, 2))
    xy[order] = np.column_stack([np.cos(angles), np.sin(angles)])
    return xy


class TopicCorrelationDisplay:
    """Topics as a graph: an edge joins topics that appear together.

    Each topic is a circle, its area in proportion to its share of the
    documents; an edge joins two topics whose correlation is an edge of
    :func:`~sklearn_clda.inspection.topic_correlation`, its width in
    proportion to the correlation. Topics sit on a circle in the order of
    a hierarchical clustering of their correlations, so that topics that
    go together are neighbours and the labels never overlap (the question
    of stm's ``plot.topicCorr``, without a network library).

    Use :meth:`from_estimator` to build it from a fitted topic model; the
    constructor takes precomputed values. All attributes are set in
    :meth:`plot`.

    Parameters
    ----------
    correlation : array-like of shape (n_topics, n_topics)
        Symmetric correlations between the topics.

    adjacency : array-like of bool of shape (n_topics, n_topics), default=None
        The edges (symmetric); ``None`` means every positive off-diagonal
        correlation. An edge on a negative correlation is drawn dashed, in
        red.

    shares : array-like of shape (n_topics,), default=None
        Each topic's share, for the circles' areas; ``None`` draws equal
        circles.

    topics : array-like of int of shape (n_topics,), default=None
        Model indices of the topics, used in the default labels.

    topic_labels : list of str of shape (n_topics,), default=None
        Node labels. ``None`` means ``"Topic k"``.

    Attributes
    ----------
    positions_ : ndarray of shape (n_topics, 2)
        Where each topic is drawn, on the unit circle.

    order_ : ndarray of shape (n_topics,)
        The topics clockwise from the top.

    nodes_ : matplotlib PathCollection
        The circles.

    edges_ : list of matplotlib Line2D
        The edges, one line each, strongest last (drawn on top).

    labels_ : list of matplotlib Text
        The topic labels.

    ax_ : matplotlib Axes
        Axes with the plot.

    figure_ : matplotlib Figure
        Figure containing the plot.

    See Also
    --------
    sklearn_clda.inspection.topic_correlation : The plotted numbers.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> import numpy as np
    >>> from sklearn_clda.plotting import TopicCorrelationDisplay
    >>> corr = np.array([[1.0, 0.4, -0.2], [0.4, 1.0, -0.3], [-0.2, -0.3, 1.0]])
    >>> disp = TopicCorrelationDisplay(corr, shares=[0.5, 0.3, 0.2]).plot()
    >>> len(disp.edges_)  # one positive pair: topics 0 and 1
    1
    >>> disp.order_.tolist()  # topics 0 and 1 are neighbours
    [2, 0, 1]
    >>> plt.close("all")
    """

    def __init__(self, correlation, adjacency=None, *, shares=None, topics=None,
                 topic_labels=None):
        self.correlation = correlation
        self.adjacency = adjacency
        self.shares = shares
        self.topics = topics
        self.topic_labels = topic_labels

    def _checked(self):
        """``(correlation, adjacency, shares, labels)`` validated."""
        name = type(self).__name__
        if np.ndim(self.correlation) != 2:
            raise ValueError(f"{name} needs a square, symmetric correlation matrix; got "
                             f"{np.ndim(self.correlation)} dimensions.")
        corr = finite_values(self, "correlation", self.correlation, "(n_topics, n_topics)")
        n = corr.shape[0]
        if corr.shape != (n, n) or not np.allclose(corr, corr.T, atol=1e-9):
            raise ValueError(f"{name} needs a square, symmetric correlation matrix; got "
                             f"shape {corr.shape}.")
        if np.abs(corr).max() > 1 + 1e-9:
            raise ValueError(f"{name} needs correlations in [-1, 1]; got "
                             f"{corr.flat[np.argmax(np.abs(corr))]:g}.")
        if self.adjacency is None:
            adjacency = (corr > 0) & ~np.eye(n, dtype=bool)
        else:
            adjacency = np.asarray(self.adjacency)
            if (adjacency.shape != (n, n) or adjacency.dtype != bool
                    or not np.array_equal(adjacency, adjacency.T)):
                raise ValueError(f"adjacency of {name} must be a symmetric boolean array "
                                 f"of shape {(n, n)}, got {adjacency.dtype} of shape "
                                 f"{adjacency.shape}.")
        shares, labels = shares_and_labels(self, n)
        return corr, adjacency, shares, labels

    @staticmethod
    def _edges(ax, corr, adjacency, xy, edge_kw):
        """One line per edge, its width in proportion to the correlation,
        the strongest drawn last (on top)."""
        a, b = np.nonzero(np.triu(adjacency, k=1))
        strongest = max(float(np.max(np.abs(corr[a, b]), initial=0.0)), 1e-12)
        lines = []
        for i, j in sorted(zip(a, b), key=lambda pair: corr[pair]):
            lines.extend(ax.plot(
                xy[[i, j], 0], xy[[i, j], 1],
                **merge_kw({"color": "0.5" if corr[i, j] >= 0 else "C3",
                            "linestyle": "-" if corr[i, j] >= 0 else "--",
                            "linewidth": 0.5 + 4.0 * abs(corr[i, j]) / strongest,
                            "alpha": 0.8, "zorder": 1}, edge_kw)))
        return lines

    def plot(self, ax=None, *, node_kw=None, edge_kw=None):
        """Draw the graph.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes to draw on; ``None`` creates a new figure.

        node_kw : dict, default=None
            Keyword arguments of :meth:`matplotlib.axes.Axes.scatter` for
            the circles.

        edge_kw : dict, default=None
            Keyword arguments of :meth:`matplotlib.axes.Axes.plot` for the
            edges.

        Returns
        -------
        display : TopicCorrelationDisplay
            The display, with the artists stored as attributes.
        """
        check_matplotlib(f"{type(self).__name__}.plot")
        corr, adjacency, shares, labels = self._checked()
        fig, ax = single_axes(ax, figsize=(8.0, 8.0))
        order = correlation_order(corr)
        xy = circle_positions(order)
        self.edges_ = self._edges(ax, corr, adjacency, xy, edge_kw)
        area = 1200.0 * shares / max(float(shares.max()), 1e-12)
        self.nodes_ = ax.scatter(xy[:, 0], xy[:, 1], **merge_kw(
            {"s": np.maximum(area, 30.0), "color": "C0", "alpha": 0.8, "zorder": 2,
             "edgecolors": "white"}, node_kw))
        self.labels_ = []
        for k, label in enumerate(labels):
            x, y = 1.12 * xy[k]
            angle = np.degrees(np.arctan2(y, x))
            left = x < -1e-9
            self.labels_.append(ax.text(
                x, y, label, fontsize="small", va="center", ha="right" if left else "left",
                rotation=angle + 180 if left else angle, rotation_mode="anchor"))
        ax.set_aspect("equal")
        # room for the labels outside the circle
        ax.set_xlim(-2.2, 2.2)
        ax.set_ylim(-2.2, 2.2)
        ax.set_axis_off()
        self.order_ = order
        self.positions_ = xy
        self.ax_ = ax
        self.figure_ = fig
        return self

    @classmethod
    @validate_params(
        {
            "estimator": [HasMethods(["fit"])],
            "X": ["array-like", "sparse matrix", None],
            "groups": ["array-like", None],
            "feature_names": ["array-like", None],
            "label_method": [StrOptions(set(LABEL_METHODS))],
            "top_words": [StrictInterval(Integral, 0, None, closed="left")],
        },
        # topic_correlation checks the rest; plot_kw is checked by plot.
        prefer_skip_nested_validation=False,
    )
    def from_estimator(cls, estimator, X=None, groups=None, *, method="simple", cutoff=0.01,
                       within_collections=False, collection=None, feature_names=None,
                       label_method="frex", top_words=3, ax=None, **plot_kw):
        """Draw the topic correlation graph of a fitted topic model.

        Parameters
        ----------
        estimator : estimator or Pipeline
            A fitted topic model or a Pipeline ending with one, as for
            :func:`~sklearn_clda.inspection.topic_correlation`.

        X, groups, method, cutoff, within_collections, collection
            As for :func:`~sklearn_clda.inspection.topic_correlation`.

        feature_names : array-like of str of shape (n_features,), default=None
            Vocabulary for the topic labels. ``None`` uses the Pipeline's
            vocabulary or ``feature_names_in_`` when available, and topic
            numbers otherwise.

        label_method : {"prob", "frex", "lift", "score", "relevance"}, \
                default="frex"
            How the label words are chosen; see
            :func:`~sklearn_clda.inspection.topic_labels`.

        top_words : int, default=3
            Number of words in each topic's label (0 for none).

        ax : matplotlib Axes, default=None
            Axes to draw on; ``None`` creates a new figure.

        **plot_kw : dict
            Further keyword arguments of :meth:`plot`.

        Returns
        -------
        display : TopicCorrelationDisplay
            The plotted display.
        """
        from ..inspection import topic_correlation

        check_matplotlib(f"{cls.__name__}.from_estimator")
        require_pandas(f"{cls.__name__}.from_estimator", via="topic_correlation")
        found = topic_correlation(estimator, X, groups, method=method, cutoff=cutoff,
                                  within_collections=within_collections,
                                  collection=collection)
        model, pipeline_names = unwrap_estimator(estimator)
        topics = np.arange(found.correlation.shape[0])
        labels = _topic_labels(model, topics, feature_names, pipeline_names, label_method,
                               top_words, f"{cls.__name__}.from_estimator")
        display = cls(found.correlation, found.adjacency, shares=found.shares,
                      topics=topics, topic_labels=labels)
        return display.plot(ax=ax, **plot_kw)

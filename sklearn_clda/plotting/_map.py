"""The topics on a plane as circles sized by their share, once per collection
(LDAvis's intertopic distance map)."""

from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import HasMethods, StrOptions, validate_params

from .._corpus import StrictInterval
from ..inspection._labels import LABEL_METHODS
from ..inspection._map import placed_topics, topic_coordinates
from ..inspection._utils import topic_shares
from ..metrics._topics import _ALIGN_METRICS
from ._base import (
    axes_grid,
    check_matplotlib,
    finite_values,
    merge_kw,
    shown_collections,
    spread_labels,
    unwrap,
)
from ._trend import _topic_labels

__all__ = ["TopicMapDisplay"]

#: The diverging colour map of the ratios: blue below 1, red above.
_RATIO_CMAP = "RdBu_r"

#: The largest circle's area in points squared: on one map, and on each panel.
_MAX_AREA = {True: 2500.0, False: 900.0}


class TopicMapDisplay:
    """Topics as circles on a plane: alike topics close, area by share.

    Each topic is a circle at its place on the map (e.g. the principal
    coordinates of the distances between the topics' word distributions,
    :func:`~sklearn_clda.inspection.topic_map`), its area in proportion to
    its share: LDAvis's intertopic distance map. Given several rows of
    shares, the map is drawn once per row on the same places (small
    multiples), e.g. once per collection of a
    :class:`~sklearn_clda.CompoundLDA`, so that the eye finds at once which
    regions of the map a collection talks about. Given ``reference``
    shares (e.g. the corpus's), each panel outlines them and colours its
    circles by their ratio to them: red where the panel's share is larger,
    blue where smaller.

    Use :meth:`from_estimator` to build it from a fitted topic model; the
    constructor takes precomputed values. All attributes are set in
    :meth:`plot`.

    Parameters
    ----------
    coordinates : array-like of shape (n_topics, 2)
        Each topic's place.

    shares : array-like of shape (n_topics,) or (n_panels, n_topics)
        The topics' shares (numbers >= 0), one row per panel.

    reference : array-like of shape (n_topics,), default=None
        Shares to compare each panel's with: outlined, and the circles
        coloured by the ratio of their shares to these. ``None`` draws
        the circles in one colour.

    topics : array-like of int of shape (n_topics,), default=None
        Model indices of the topics, used in the default labels.

    topic_labels : list of str of shape (n_topics,), default=None
        Circle labels. ``None`` means the topic numbers.

    panel_labels : list of str of shape (n_panels,), default=None
        Panel titles, e.g. the collections. ``None`` gives no titles.

    axis_labels : tuple of two str, default=None
        The x and y axis labels; ``None`` gives none.

    ratio_label : str, default=None
        The label of the colour scale (with a reference); ``None`` means
        "share / reference share (dashed)".

    Attributes
    ----------
    circles_ : list of matplotlib PathCollection
        The circles of each panel.

    reference_circles_ : list of matplotlib PathCollection or None
        The outlines of the reference shares in each panel, if any.

    labels_ : list of list of matplotlib Text
        The topic labels of each panel.

    colorbar_ : matplotlib Colorbar or None
        The colour scale of the ratios, if there is a reference.

    axes_ : ndarray of matplotlib Axes
        The panels' axes.

    ax_ : matplotlib Axes
        The first panel's axes (the only one with one row of shares).

    figure_ : matplotlib Figure
        Figure containing the plot.

    See Also
    --------
    sklearn_clda.inspection.topic_map : The places, and the topics' words.
    TopicHierarchyDisplay : The same distances, as a tree.
    CollectionTopicDisplay : The collections' shares with their intervals.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> from sklearn_clda.plotting import TopicMapDisplay
    >>> disp = TopicMapDisplay([[-1.0, 0.0], [1.0, 0.5], [1.0, -0.5]],
    ...                        [[0.6, 0.3, 0.1], [0.2, 0.2, 0.6]],
    ...                        reference=[0.4, 0.25, 0.35],
    ...                        panel_labels=["news", "blogs"]).plot()
    >>> [ax.get_title() for ax in disp.axes_.ravel()]
    ['news', 'blogs']
    >>> disp.circles_[1].get_offsets().tolist()
    [[-1.0, 0.0], [1.0, 0.5], [1.0, -0.5]]
    >>> plt.close("all")
    """

    def __init__(self, coordinates, shares, *, reference=None, topics=None, topic_labels=None,
                 panel_labels=None, axis_labels=None, ratio_label=None):
        self.coordinates = coordinates
        self.shares = shares
        self.reference = reference
        self.topics = topics
        self.topic_labels = topic_labels
        self.panel_labels = panel_labels
        self.axis_labels = axis_labels
        self.ratio_label = ratio_label

    def _checked(self):
        """``(coordinates, shares, reference, labels, titles)`` validated:
        shares as (n_panels, n_topics), reference None or (n_topics,)."""
        name = type(self).__name__
        xy = finite_values(self, "coordinates", self.coordinates, "(n_topics, 2)")
        if np.ndim(self.coordinates) != 2 or xy.shape[1] != 2:
            raise ValueError(f"coordinates of {name} must have shape (n_topics, 2), got "
                             f"{np.shape(self.coordinates)}.")
        if np.abs(xy).max() > np.finfo(np.float64).max / 3.0:  # the window's ends overflow
            raise ValueError(f"coordinates of {name} are too large to draw (up to "
                             f"{np.abs(xy).max():.3g}); scale them down.")
        n = xy.shape[0]
        shares = finite_values(self, "shares", self.shares, "(n_panels, n_topics)")
        if np.ndim(self.shares) not in (1, 2) or shares.shape[1] != n or (shares < 0).any():
            raise ValueError(f"shares of {name} must be {n} numbers >= 0 per panel (one per "
                             f"topic), got shape {np.shape(self.shares)}.")
        reference = None
        if self.reference is not None:
            reference = finite_values(self, "reference", self.reference, "(n_topics,)")
            if np.ndim(self.reference) != 1 or reference.size != n or (reference < 0).any():
                raise ValueError(f"reference of {name} must be {n} numbers >= 0 (one per "
                                 f"topic), got shape {np.shape(self.reference)}.")
            reference = reference.ravel()
        if self.axis_labels is not None and np.shape(self.axis_labels) != (2,):
            raise ValueError(f"axis_labels of {name} must be two labels (x, y), got "
                             f"{self.axis_labels!r}.")
        return xy, shares, reference, self._labels(n), self._titles(shares.shape[0])

    def _labels(self, n):
        topics = np.arange(n) if self.topics is None else np.atleast_1d(self.topics)
        labels = ([str(k) for k in topics] if self.topic_labels is None
                  else [str(label) for label in self.topic_labels])
        if topics.shape != (n,) or len(labels) != n:
            raise ValueError(f"topics and topic_labels of {type(self).__name__} need {n} "
                             "entries each (one per topic).")
        return labels

    def _titles(self, n_panels):
        if self.panel_labels is None:
            return [""] * n_panels
        titles = [str(label) for label in np.atleast_1d(np.asarray(self.panel_labels,
                                                                   dtype=object))]
        if len(titles) != n_panels:
            raise ValueError(f"panel_labels of {type(self).__name__} has {len(titles)} "
                             f"entries for {n_panels} panels (rows of shares).")
        return titles

    def plot(self, ax=None, *, n_cols=None, max_ratio=4.0, scatter_kw=None, text_kw=None):
        """Draw the map, once per row of shares.

        Parameters
        ----------
        ax : matplotlib Axes or array-like of Axes, default=None
            Axes to draw on: one per panel, or one subplot divided into the
            panels; ``None`` creates a new figure.

        n_cols : int, default=None
            Panels per row; ``None`` lays them out near a square, at most
            4 a row.

        max_ratio : float, default=4.0
            With a reference, the ratio of shares at which the colour scale
            ends (``1 / max_ratio`` at the other end); larger ratios get
            its end colour. More than 1.

        scatter_kw : dict, default=None
            Keyword arguments of :meth:`matplotlib.axes.Axes.scatter` for
            the circles.

        text_kw : dict, default=None
            Keyword arguments of :meth:`matplotlib.axes.Axes.annotate` for
            the labels, each put at the first of four places around its
            circle's centre where it covers no label placed before it,
            unless ``text_kw`` gives ``xytext``.

        Returns
        -------
        display : TopicMapDisplay
            The display, with the artists stored as attributes.
        """
        check_matplotlib(f"{type(self).__name__}.plot")
        if not (n_cols is None or isinstance(n_cols, Integral) and n_cols >= 1):
            raise ValueError(f"n_cols must be a positive int or None, got {n_cols!r}.")
        if not (isinstance(max_ratio, Real) and 1.0 < max_ratio < np.inf):
            raise ValueError(f"max_ratio must be a finite number > 1, got {max_ratio!r}.")
        xy, shares, reference, labels, titles = self._checked()
        n_panels = shares.shape[0]
        n_cols = min(n_panels, n_cols or min(4, int(np.ceil(np.sqrt(n_panels)))))
        fig, axes, panels, _ = axes_grid(
            ax, n_panels, n_cols,
            figsize=(7.0, 6.0) if n_panels == 1 else (3.6 * n_cols, 3.6 * -(-n_panels // n_cols)))
        peak = max(float(shares.max()), 0.0 if reference is None else float(reference.max()))
        scale = _MAX_AREA[n_panels == 1] / max(peak, 1e-300)
        colours = self._colours(shares, reference, max_ratio)
        self.circles_, self.labels_ = [], []
        self.reference_circles_ = None if reference is None else []
        for i, panel in enumerate(panels):
            if reference is not None:
                self.reference_circles_.append(panel.scatter(
                    xy[:, 0], xy[:, 1], s=scale * reference, facecolors="none",
                    edgecolors="0.45", linewidths=0.8, linestyles="--", zorder=3))
            self.circles_.append(panel.scatter(xy[:, 0], xy[:, 1], **merge_kw(
                {"s": scale * shares[i], "c": colours[i], "alpha": 0.75, "zorder": 2,
                 "edgecolors": "white", "linewidths": 0.5}, scatter_kw)))
            self._frame(panel, xy, titles[i])
            self.labels_.append(self._annotate(panel, xy, labels, text_kw, n_panels == 1))
        self.colorbar_ = None
        if reference is not None:
            self.colorbar_ = self._colorbar(fig, panels, max_ratio)
            self.colorbar_.set_label("share / reference share (dashed)"
                                     if self.ratio_label is None else str(self.ratio_label))
        self.axes_, self.ax_, self.figure_ = axes, panels[0], fig
        return self

    @staticmethod
    def _colours(shares, reference, max_ratio):
        """RGBA colours of each panel's circles: one colour without a
        reference, else the log ratio of the shares to it on a diverging
        scale (a share of 0 against 0 is a ratio of 1)."""
        import matplotlib as mpl

        if reference is None:
            return np.tile(mpl.colors.to_rgba("C0"), (*shares.shape, 1))
        with np.errstate(divide="ignore", invalid="ignore"):  # 0 / 0 is nan: ratio 1
            ratio = np.log2(shares) - np.log2(reference)
        ratio = np.where(np.isnan(ratio), 0.0, ratio)
        limit = np.log2(max_ratio)
        norm = mpl.colors.Normalize(-limit, limit, clip=True)
        return mpl.colormaps[_RATIO_CMAP](norm(ratio))

    def _frame(self, ax, xy, title):
        """The same square window on every panel, no ticks (only distances
        on the map mean something), the axis labels and the title."""
        low, high = 0.5 * xy.min(axis=0), 0.5 * xy.max(axis=0)  # halves: no overflow
        centre, half = low + high, 1.3 * max(float((high - low).max()), 1e-12)
        ax.set_xlim(centre[0] - half, centre[0] + half)
        ax.set_ylim(centre[1] - half, centre[1] + half)
        ax.set_aspect("equal", adjustable="box")
        ax.set_xticks([])
        ax.set_yticks([])
        ax.axhline(centre[1], color="0.9", linewidth=0.8, zorder=0)
        ax.axvline(centre[0], color="0.9", linewidth=0.8, zorder=0)
        if self.axis_labels is not None:
            x_label, y_label = self.axis_labels
            ax.set_xlabel(str(x_label), fontsize="small")
            ax.set_ylabel(str(y_label), fontsize="small")
        if title:
            ax.set_title(title)

    @staticmethod
    def _annotate(ax, xy, labels, text_kw, single):
        texts = [
            ax.annotate(label, (x, y), **merge_kw(
                {"xytext": (4, 4), "textcoords": "offset points",
                 "fontsize": "small" if single else "x-small", "zorder": 4}, text_kw))
            for label, (x, y) in zip(labels, xy)
        ]
        if "xytext" not in (text_kw or {}):
            spread_labels(ax, texts)
        return texts

    @staticmethod
    def _colorbar(fig, panels, max_ratio):
        """The ratio scale, ticks at 1/max_ratio .. max_ratio by powers of 2."""
        import matplotlib as mpl

        limit = np.log2(max_ratio)
        mappable = mpl.cm.ScalarMappable(mpl.colors.Normalize(-limit, limit),
                                         cmap=mpl.colormaps[_RATIO_CMAP])
        bar = fig.colorbar(mappable, ax=panels, shrink=0.8, aspect=30)
        ticks = np.arange(-np.floor(limit), np.floor(limit) + 1)
        bar.set_ticks(ticks, labels=[f"{2.0 ** t:g}x" for t in ticks])
        return bar

    @classmethod
    @validate_params(
        {
            "estimator": [HasMethods(["fit"])],
            "metric": [StrOptions(set(_ALIGN_METRICS))],
            "by_collection": ["boolean"],
            "collections": ["array-like", None],
            "feature_names": ["array-like", None],
            "label_method": [StrOptions(set(LABEL_METHODS))],
            "top_words": [StrictInterval(Integral, 0, None, closed="left"), None],
        },
        prefer_skip_nested_validation=True,
    )
    def from_estimator(cls, estimator, *, metric="hellinger", by_collection=True,
                       collections=None, feature_names=None, label_method="frex",
                       top_words=None, ax=None, **plot_kw):
        """Draw the map of a fitted topic model's topics.

        The places are those of :func:`~sklearn_clda.inspection.topic_map`
        (the first two principal coordinates of ``metric``'s distances
        between the topics). For a :class:`~sklearn_clda.CompoundLDA`
        fitted with groups, the map is drawn once per collection: each
        circle's area is the collection's share of the topic (the
        posterior mean of ``pi_j``, ``collection_topic_``), the dashed
        circle the corpus's (the mean of ``pi_j`` over its documents), and
        the colour their ratio. Otherwise (or with
        ``by_collection=False``) it is drawn once, each area the topic's
        share of the weight of ``components_`` (of the training tokens,
        for the Gibbs models).

        The colours are posterior means: whether a collection's share
        surely differs is what
        :class:`~sklearn_clda.plotting.CollectionDifferenceDisplay` shows.

        Parameters
        ----------
        estimator : estimator or Pipeline
            A fitted topic model with ``components_``
            (:class:`~sklearn_clda.CompoundLDA`,
            :class:`~sklearn_clda.LDAGibbs`,
            :class:`~sklearn.decomposition.LatentDirichletAllocation`), or
            a fitted Pipeline ending with one.

        metric : {"hellinger", "jsd", "tv"}, default="hellinger"
            Distance between topics (:func:`~sklearn_clda.inspection.topic_map`).

        by_collection : bool, default=True
            Whether a CompoundLDA fitted with groups gets a panel per
            collection; ``False`` draws the one map of the corpus.

        collections : array-like of labels, default=None
            The collections to draw, in this order (labels of ``groups_``);
            ``None`` draws all of them (the 40 with the most documents,
            with a warning, when there are more).

        feature_names : array-like of str of shape (n_features,), default=None
            Vocabulary for the labels. ``None`` uses the Pipeline's
            vocabulary or ``feature_names_in_`` when available, and topic
            numbers otherwise.

        label_method : {"prob", "frex", "lift", "score", "relevance"}, \
                default="frex"
            How the label words are chosen; see
            :func:`~sklearn_clda.inspection.topic_labels`.

        top_words : int, default=None
            Number of words in each topic's label (0 for the number
            alone). ``None`` means 2 on one map and 0 on panels, whose
            numbers the first map's words explain.

        ax : matplotlib Axes or array-like of Axes, default=None
            Axes to draw on (see :meth:`plot`); ``None`` creates a new
            figure.

        **plot_kw : dict
            Further keyword arguments of :meth:`plot`.

        Returns
        -------
        display : TopicMapDisplay
            The plotted display.
        """
        caller = f"{cls.__name__}.from_estimator"
        check_matplotlib(caller)
        model, _, pipeline_names = unwrap(estimator)
        components = placed_topics(model, caller)
        coordinates, explained = topic_coordinates(components, metric)
        panels = by_collection and getattr(model, "groups_", None) is not None
        if panels:
            shares, reference, titles = _collection_shares(model, collections, caller)
        else:
            shares, reference, titles = topic_shares(components), None, None
        if top_words is None:
            top_words = 0 if panels else 2
        topics = np.arange(components.shape[0])
        labels = _topic_labels(model, topics, feature_names, pipeline_names, label_method,
                               top_words, caller, prefix="")
        display = cls(coordinates, shares, reference=reference, topics=topics,
                      topic_labels=labels, panel_labels=titles,
                      axis_labels=axis_labels(explained), ratio_label=COLLECTION_RATIO)
        return display.plot(ax=ax, **plot_kw)


#: The colour scale's label when the panels are collections and the reference the corpus.
COLLECTION_RATIO = "collection's share / corpus share (dashed)"


def axis_labels(explained):
    """The axes' labels: each principal coordinate with its share of the spread."""
    return tuple(f"{axis} ({100 * share:.0f}% of the spread)"
                 for axis, share in zip(("PC1", "PC2"), explained))


def _collection_shares(model, collections, caller):
    """``(shares, reference, titles)`` of a CompoundLDA's panels: the chosen
    collections' ``collection_topic_`` rows, the mean row over the
    training documents, and the collections' labels."""
    positions, labels = shown_collections(model, collections, caller)
    pi = np.asarray(model.collection_topic_, dtype=np.float64)
    sizes = np.asarray(model.collection_sizes_, dtype=np.float64)
    reference = sizes @ pi / sizes.sum() if sizes.sum() > 0 else pi.mean(axis=0)
    return pi[positions], reference, [str(label) for label in labels]

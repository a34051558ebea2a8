"""The tree of topics merged by how alike their words are (BERTopic's
``visualize_hierarchy``)."""

from numbers import Integral

import numpy as np
from sklearn.utils._param_validation import HasMethods, StrOptions, validate_params

from .._corpus import StrictInterval
from ..inspection._hierarchy import LINKAGE_METHODS, check_linkage_method, topic_linkage
from ..inspection._labels import LABEL_METHODS
from ..inspection._utils import topic_word, unwrap
from ..metrics._topics import _ALIGN_METRICS
from ._base import check_matplotlib, merge_kw, single_axes
from ._trend import _topic_labels

__all__ = ["TopicHierarchyDisplay"]

#: Most leaves drawn: a larger tree is drawn from its top groups.
MAX_LEAVES = 100

_METRIC_NAMES = {"hellinger": "Hellinger distance", "jsd": "Jensen-Shannon divergence (bits)",
                 "tv": "Total variation distance"}


def _checked_linkage(linkage, name):
    """``linkage`` as a valid float64 linkage matrix of at least 2 topics,
    a ``ValueError`` naming the display otherwise."""
    from scipy.cluster.hierarchy import is_valid_linkage

    try:
        Z = np.asarray(linkage, dtype=np.float64)
    except (TypeError, ValueError):
        Z = None
    if Z is None or Z.ndim != 2 or Z.shape[0] < 1 or Z.shape[1] != 4 \
            or not np.all(np.isfinite(Z)) or not _valid_nodes(Z) or not is_valid_linkage(Z):
        raise ValueError(
            f"{name} needs a linkage matrix of shape (n_topics - 1, 4) as "
            "scipy.cluster.hierarchy.linkage returns it (each row: two nodes "
            "merged, their distance and the number of topics under them), got "
            f"{'shape ' + str(Z.shape) if Z is not None else 'no numbers'}"
            f"{'' if Z is None or Z.shape[1:] != (4,) else ' that is not one'}."
        )
    return Z


def _valid_nodes(Z):
    """Whether each row merges two whole nodes made before it (scipy's own
    check indexes with them unchecked)."""
    nodes = Z[:, :2]
    made = Z.shape[0] + 1 + np.arange(Z.shape[0])[:, None]
    return bool(np.all((nodes == np.round(nodes)) & (nodes >= 0) & (nodes < made)))


def cut_height(Z, n_clusters):
    """The distance at which the tree falls into ``n_clusters`` groups (fewer
    where merges tie): that of the merge which would leave one group less."""
    return float(Z[Z.shape[0] + 1 - n_clusters, 2])


class TopicHierarchyDisplay:
    """The topics as the leaves of a tree, the most alike merged first.

    A dendrogram of the topics' agglomerative clustering: each topic is a
    leaf, labelled with its number and words, and two branches join at the
    distance between their groups of topics. Topics that join low use the
    same words (one theme split in several topics); the highest joins
    separate the corpus's broad themes. This is BERTopic's
    ``visualize_hierarchy``; :func:`~sklearn_clda.inspection.topic_hierarchy`
    gives the same tree as a table, each merged group with its words.

    Use :meth:`from_estimator` to build it from a fitted topic model; the
    constructor takes a linkage matrix. All attributes are set in
    :meth:`plot`.

    Parameters
    ----------
    linkage : array-like of shape (n_topics - 1, 4)
        The tree, as :func:`scipy.cluster.hierarchy.linkage` returns it
        (``topic_hierarchy(...)[["left", "right", "distance",
        "n_topics"]]`` is one).

    topic_labels : list of str of shape (n_topics,), default=None
        Leaf labels, in topic order. ``None`` means the topic numbers.

    distance_name : str, default="Distance"
        The distance axis label.

    Attributes
    ----------
    dendrogram_ : dict
        What :func:`scipy.cluster.hierarchy.dendrogram` returns (the links'
        coordinates and colours, the leaves' order and labels).

    leaves_ : ndarray of shape (n_leaves,)
        The leaves in the order drawn, from the bottom up: the topics, and
        in a tree cut short (more than 100 topics) the groups drawn as
        leaves, numbered as :func:`~sklearn_clda.inspection.topic_hierarchy`
        numbers its nodes (``n_topics`` and up).

    ax_ : matplotlib Axes
        Axes with the tree.

    figure_ : matplotlib Figure
        Figure containing the tree.

    See Also
    --------
    sklearn_clda.inspection.topic_hierarchy : The tree as a table.
    TopicCorrelationDisplay : Topics that appear in the same documents.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> from sklearn_clda.plotting import TopicHierarchyDisplay
    >>> linkage = [[0, 1, 0.2, 2], [2, 3, 0.3, 2], [4, 5, 0.8, 4]]
    >>> disp = TopicHierarchyDisplay(linkage, topic_labels=["goal", "match", "vote",
    ...                                                     "party"]).plot(n_clusters=2)
    >>> disp.leaves_.tolist()
    [0, 1, 2, 3]
    >>> [label.get_text() for label in disp.ax_.get_yticklabels()]
    ['goal', 'match', 'vote', 'party']
    >>> len(set(disp.dendrogram_["color_list"]))  # a colour per group, grey above
    3
    >>> plt.close("all")
    """

    def __init__(self, linkage, *, topic_labels=None, distance_name="Distance"):
        self.linkage = linkage
        self.topic_labels = topic_labels
        self.distance_name = distance_name

    def _checked(self):
        """``(Z, labels)`` validated."""
        name = type(self).__name__
        Z = _checked_linkage(self.linkage, name)
        n = Z.shape[0] + 1
        labels = ([str(k) for k in range(n)] if self.topic_labels is None
                  else [str(label) for label in self.topic_labels])
        if len(labels) != n:
            raise ValueError(f"topic_labels of {name} needs {n} entries (one per topic), "
                             f"got {len(labels)}.")
        return Z, labels

    def plot(self, ax=None, *, n_clusters=None, dendrogram_kw=None):
        """Draw the tree, the leaves on the left axis.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes to draw on; ``None`` creates a new figure, taller with more
            topics.

        n_clusters : int, default=None
            Cut the tree into this many groups (from 2 to the number of
            topics; fewer where merges tie) and draw each group's links in
            its own colour, the links above the cut in grey; ``None`` draws
            every link in grey.

        dendrogram_kw : dict, default=None
            Keyword arguments of :func:`scipy.cluster.hierarchy.dendrogram`
            (e.g. ``{"orientation": "top"}``). A tree of more than 100
            topics is drawn from its top 100 groups
            (``truncate_mode="lastp"``), a group drawn as a leaf labelled
            with its number of topics; ``{"truncate_mode": None}`` draws
            every topic.

        Returns
        -------
        display : TopicHierarchyDisplay
            The display, with the artists stored as attributes.
        """
        from scipy.cluster.hierarchy import dendrogram

        check_matplotlib(f"{type(self).__name__}.plot")
        Z, labels = self._checked()
        n = len(labels)
        if n_clusters is not None and (
                not isinstance(n_clusters, Integral) or isinstance(n_clusters, bool)
                or not 2 <= n_clusters <= n):
            raise ValueError(f"n_clusters must be an int from 2 to the number of topics "
                             f"({n}), or None; got {n_clusters!r}.")
        fig, ax = single_axes(ax, figsize=(8.0, max(3.0, 0.28 * min(n, MAX_LEAVES) + 1.0)))
        threshold = 0.0 if n_clusters is None else cut_height(Z, n_clusters)
        defaults = {"ax": ax, "orientation": "left", "color_threshold": threshold,
                    "above_threshold_color": "0.45", "leaf_font_size": 9,
                    "leaf_label_func": lambda node: (labels[node] if node < n else
                                                     f"({int(Z[node - n, 3])} topics)")}
        if n > MAX_LEAVES:  # leaves past a hundred cannot be read
            defaults.update(truncate_mode="lastp", p=MAX_LEAVES)
        self.dendrogram_ = dendrogram(Z, **merge_kw(defaults, dendrogram_kw))
        self.leaves_ = np.asarray(self.dendrogram_["leaves"], dtype=np.intp)
        vertical = merge_kw({"orientation": "left"}, dendrogram_kw)["orientation"] in (
            "left", "right")
        (ax.set_xlabel if vertical else ax.set_ylabel)(str(self.distance_name))
        ax.grid(True, axis="x" if vertical else "y", color="0.92")
        ax.set_axisbelow(True)
        for side in ("top", "right"):
            ax.spines[side].set_visible(False)
        self.ax_ = ax
        self.figure_ = fig
        return self

    @classmethod
    @validate_params(
        {
            "estimator": [HasMethods(["fit"])],
            "metric": [StrOptions(set(_ALIGN_METRICS))],
            "method": [StrOptions(set(LINKAGE_METHODS)), None],
            "feature_names": ["array-like", None],
            "label_method": [StrOptions(set(LABEL_METHODS))],
            "top_words": [StrictInterval(Integral, 0, None, closed="left")],
        },
        # the vocabulary is checked by the labels; plot_kw by plot.
        prefer_skip_nested_validation=False,
    )
    def from_estimator(cls, estimator, *, metric="hellinger", method=None,
                       feature_names=None, label_method="frex", top_words=3, ax=None,
                       **plot_kw):
        """Draw the tree of a fitted topic model's topics.

        The tree is that of
        :func:`~sklearn_clda.inspection.topic_hierarchy` with the same
        ``metric`` and ``method``.

        Parameters
        ----------
        estimator : estimator or Pipeline
            A fitted topic model with at least 2 topics
            (:class:`~sklearn_clda.CompoundLDA`,
            :class:`~sklearn_clda.LDAGibbs`,
            :class:`~sklearn.decomposition.LatentDirichletAllocation`) or a
            Pipeline ending with one.

        metric : {"hellinger", "jsd", "tv"}, default="hellinger"
            Distance between two topics' word distributions.

        method : {"ward", "average", "complete", "single", "weighted"} or None, \
                default=None
            How groups of topics are compared (``"ward"`` with Hellinger
            only); ``None`` means "ward" with Hellinger and "average"
            otherwise.

        feature_names : array-like of str of shape (n_features,), default=None
            Vocabulary for the leaf labels. ``None`` uses the Pipeline's
            vocabulary or ``feature_names_in_`` when available, and topic
            numbers otherwise.

        label_method : {"prob", "frex", "lift", "score", "relevance"}, \
                default="frex"
            How the label words are chosen; see
            :func:`~sklearn_clda.inspection.topic_labels`.

        top_words : int, default=3
            Number of words in each leaf's label (0 for the number alone).

        ax : matplotlib Axes, default=None
            Axes to draw on; ``None`` creates a new figure.

        **plot_kw : dict
            Further keyword arguments of :meth:`plot` (``n_clusters``,
            ``dendrogram_kw``).

        Returns
        -------
        display : TopicHierarchyDisplay
            The plotted display.
        """
        caller = f"{cls.__name__}.from_estimator"
        check_matplotlib(caller)
        model, _, pipeline_names = unwrap(estimator)
        components = topic_word(model, caller)
        if components.shape[0] < 2:
            raise ValueError(f"{caller} draws a tree of topics, but {type(model).__name__} "
                             f"has {components.shape[0]} topic.")
        method = check_linkage_method(metric, method, caller)
        topics = np.arange(components.shape[0])
        labels = _topic_labels(model, topics, feature_names, pipeline_names, label_method,
                               top_words, caller, prefix="")
        display = cls(topic_linkage(components, metric, method), topic_labels=labels,
                      distance_name=f"{_METRIC_NAMES[metric]}, "
                                    f"{'Ward' if method == 'ward' else method} linkage")
        return display.plot(ax=ax, **plot_kw)

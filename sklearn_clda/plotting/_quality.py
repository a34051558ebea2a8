"""Each topic's coherence against its exclusivity (stm's ``topicQuality``)."""

from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import HasMethods, StrOptions, validate_params

from .._corpus import StrictInterval
from ..inspection._labels import LABEL_METHODS
from ..inspection._utils import topic_shares, topic_word, unwrap
from ..metrics._coherence import COHERENCE_MEASURES
from ._base import (
    check_matplotlib,
    finite_values,
    merge_kw,
    shares_and_labels,
    single_axes,
    spread_labels,
)
from ._trend import _topic_labels

__all__ = ["TopicQualityDisplay"]

_COHERENCE_NAMES = {"umass": "UMass", "umass_mean": "UMass, mean over pairs",
                    "npmi": "NPMI", "c_v": "C_V"}


class TopicQualityDisplay:
    """Topics as points: the coherence of their top words against their exclusivity.

    One point per topic, at the coherence of its top words (x) and their
    exclusivity (y), its area in proportion to the topic's share of the
    corpus, labelled with the topic's number and words: the plot of stm's
    ``topicQuality``. Topics up and to the right have top words that occur
    together and that the other topics use little; a topic far to the left
    mixes words that seldom meet, and one far down shares its words with
    other topics. Compare the topics of one model, or two models' clouds.

    Use :meth:`from_estimator` to build it from a fitted topic model; the
    constructor takes precomputed values. All attributes are set in
    :meth:`plot`.

    Parameters
    ----------
    coherence : array-like of shape (n_topics,)
        Each topic's coherence (higher is more coherent), e.g. from
        :func:`~sklearn_clda.metrics.topic_coherence`.

    exclusivity : array-like of shape (n_topics,)
        Each topic's exclusivity, e.g. from
        :func:`~sklearn_clda.metrics.topic_exclusivity`.

    shares : array-like of shape (n_topics,), default=None
        Each topic's share, for the points' areas; ``None`` draws equal
        points.

    topics : array-like of int of shape (n_topics,), default=None
        Model indices of the topics, used in the default labels.

    topic_labels : list of str of shape (n_topics,), default=None
        Point labels. ``None`` means the topic numbers.

    coherence_name : str, default="Coherence"
        The x axis label.

    Attributes
    ----------
    points_ : matplotlib PathCollection
        The points.

    labels_ : list of matplotlib Text
        The topic labels.

    ax_ : matplotlib Axes
        Axes with the plot.

    figure_ : matplotlib Figure
        Figure containing the plot.

    See Also
    --------
    sklearn_clda.metrics.topic_coherence : The x values.
    sklearn_clda.metrics.topic_exclusivity : The y values.
    SelectNComponentsDisplay : Their means over the topics, against K.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> from sklearn_clda.plotting import TopicQualityDisplay
    >>> disp = TopicQualityDisplay([-60.0, -45.0, -80.0], [9.1, 9.6, 8.2],
    ...                            shares=[0.5, 0.3, 0.2]).plot()
    >>> disp.points_.get_offsets().tolist()
    [[-60.0, 9.1], [-45.0, 9.6], [-80.0, 8.2]]
    >>> [label.get_text() for label in disp.labels_]
    ['0', '1', '2']
    >>> plt.close("all")
    """

    def __init__(self, coherence, exclusivity, *, shares=None, topics=None,
                 topic_labels=None, coherence_name="Coherence"):
        self.coherence = coherence
        self.exclusivity = exclusivity
        self.shares = shares
        self.topics = topics
        self.topic_labels = topic_labels
        self.coherence_name = coherence_name

    def _vector(self, name, n=None):
        """Attribute ``name`` as ``n`` finite numbers (any number if None)."""
        value = getattr(self, name)
        array = finite_values(self, name, value, "(n_topics,)").ravel()
        if np.ndim(value) != 1 or (n is not None and array.size != n):
            raise ValueError(
                f"{name} of {type(self).__name__} must be one number per topic"
                f"{'' if n is None else f' ({n})'}, got shape {np.shape(value)}."
            )
        return array

    def _checked(self):
        """``(coherence, exclusivity, shares, labels)`` validated."""
        x = self._vector("coherence")
        n = x.size
        y = self._vector("exclusivity", n)
        shares, labels = shares_and_labels(self, n, default_label="{}")
        return x, y, shares, labels

    def plot(self, ax=None, *, scatter_kw=None, text_kw=None):
        """Draw the topics.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes to draw on; ``None`` creates a new figure.

        scatter_kw : dict, default=None
            Keyword arguments of :meth:`matplotlib.axes.Axes.scatter` for
            the points.

        text_kw : dict, default=None
            Keyword arguments of :meth:`matplotlib.axes.Axes.annotate` for
            the labels. Each label goes to the first of four places
            around its point (above right, below right, above left, below
            left) where it covers no label placed before it, unless
            ``text_kw`` gives ``xytext``.

        Returns
        -------
        display : TopicQualityDisplay
            The display, with the artists stored as attributes.
        """
        check_matplotlib(f"{type(self).__name__}.plot")
        x, y, shares, labels = self._checked()
        fig, ax = single_axes(ax, figsize=(8.0, 6.0))
        area = 600.0 * shares / max(float(shares.max()), 1e-12)
        self.points_ = ax.scatter(x, y, **merge_kw(
            {"s": np.maximum(area, 20.0), "color": "C0", "alpha": 0.6, "zorder": 2,
             "edgecolors": "white"}, scatter_kw))
        self.labels_ = [
            ax.annotate(label, (xk, yk), **merge_kw(
                {"xytext": (4, 4), "textcoords": "offset points", "fontsize": "small",
                 "zorder": 3}, text_kw))
            for label, xk, yk in zip(labels, x, y)
        ]
        ax.margins(x=0.15, y=0.08)  # room for the labels beside their points
        ax.set_xlabel(str(self.coherence_name))
        ax.set_ylabel("Exclusivity")
        ax.grid(True, color="0.92")
        if "xytext" not in (text_kw or {}):
            spread_labels(ax, self.labels_)
        self.ax_ = ax
        self.figure_ = fig
        return self

    @classmethod
    @validate_params(
        {
            "estimator": [HasMethods(["fit"])],
            "X": ["array-like", "sparse matrix"],
            "top_n": [StrictInterval(Integral, 2, None, closed="left")],
            "coherence": [StrOptions(set(COHERENCE_MEASURES))],
            "frex_weight": [StrictInterval(Real, 0, 1, closed="both")],
            "feature_names": ["array-like", None],
            "label_method": [StrOptions(set(LABEL_METHODS))],
            "top_words": [StrictInterval(Integral, 0, None, closed="left")],
        },
        # the metrics check X and the vocabulary; plot_kw is checked by plot.
        prefer_skip_nested_validation=False,
    )
    def from_estimator(cls, estimator, X, *, top_n=10, coherence="umass", frex_weight=0.7,
                       feature_names=None, label_method="frex", top_words=2, ax=None,
                       **plot_kw):
        """Draw the coherence and exclusivity of a fitted topic model's topics.

        Each topic's ``top_n`` most probable words are scored by
        :func:`~sklearn_clda.metrics.topic_coherence` on ``X`` (documents
        as the reference corpus) and by
        :func:`~sklearn_clda.metrics.topic_exclusivity`; a topic's share is
        its share of the weight of ``components_`` (of the tokens, for the
        Gibbs models).

        Parameters
        ----------
        estimator : estimator or Pipeline
            A fitted topic model (:class:`~sklearn_clda.CompoundLDA`,
            :class:`~sklearn_clda.LDAGibbs`,
            :class:`~sklearn.decomposition.LatentDirichletAllocation`) or a
            Pipeline ending with one, whose other steps turn ``X`` into
            counts.

        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The reference corpus for the coherence, usually the training
            documents: counts, or the Pipeline's input.

        top_n : int, default=10
            Number of top words of each topic scored (stm's ``M``); at
            most the number of features.

        coherence : {"umass", "umass_mean", "npmi", "c_v"}, default="umass"
            The coherence measure; ``"umass"`` is stm's
            ``semanticCoherence``.

        frex_weight : float, default=0.7
            Weight of exclusivity against frequency in the exclusivity
            (stm's default).

        feature_names : array-like of str of shape (n_features,), default=None
            Vocabulary for the topic labels. ``None`` uses the Pipeline's
            vocabulary or ``feature_names_in_`` when available, and topic
            numbers otherwise.

        label_method : {"prob", "frex", "lift", "score", "relevance"}, \
                default="frex"
            How the label words are chosen; see
            :func:`~sklearn_clda.inspection.topic_labels`.

        top_words : int, default=2
            Number of words in each topic's label (0 for the number alone).

        ax : matplotlib Axes, default=None
            Axes to draw on; ``None`` creates a new figure.

        **plot_kw : dict
            Further keyword arguments of :meth:`plot`.

        Returns
        -------
        display : TopicQualityDisplay
            The plotted display.
        """
        from ..metrics import topic_coherence, topic_exclusivity

        caller = f"{cls.__name__}.from_estimator"
        check_matplotlib(caller)
        model, pre, pipeline_names = unwrap(estimator)
        components = topic_word(model, caller)
        counts = X if pre is None else pre.transform(X)
        n = min(top_n, components.shape[1])
        scores = topic_coherence(counts, components, n, measure=coherence)
        exclusivity = topic_exclusivity(components, n, frex_weight=frex_weight)
        topics = np.arange(components.shape[0])
        labels = _topic_labels(model, topics, feature_names, pipeline_names, label_method,
                               top_words, caller, prefix="")
        display = cls(scores, exclusivity, shares=topic_shares(components),
                      topics=topics, topic_labels=labels,
                      coherence_name=f"Coherence ({_COHERENCE_NAMES[coherence]}) of the "
                                     f"top {n} words")
        return display.plot(ax=ax, **plot_kw)

"""Top words of topics as small multiples of horizontal bar charts."""

from numbers import Integral

import numpy as np
from sklearn.utils._param_validation import validate_params

from .._corpus import StrictInterval
from ._base import (
    axes_grid,
    check_matplotlib,
    finite_values,
    check_topics,
    merge_kw,
    resolve_feature_names,
    topic_word_distributions,
    unwrap_estimator,
)
from ._base import top_words as _top_words

__all__ = ["TopicWordsDisplay"]

_POSITIVE_INT = StrictInterval(Integral, 1, None, closed="left")


def draw_word_bars(display, ax, words, values, titles, *, n_cols, sharex, bar_kw, figsize,
                   xlabel):
    """Panels of horizontal word bars (first word on top), one per row of
    ``words`` and ``values`` (2-D, the same shape): ``display``'s
    ``axes_``, ``bounding_ax_``, ``bars_`` and ``figure_`` are set, and it
    is returned. The value axis starts at 0 unless a value is negative."""
    n_panels, n_words = words.shape
    n_cols = min(4 if n_cols is None else n_cols, n_panels)
    n_rows = -(-n_panels // n_cols)
    if figsize is None:
        longest = max((len(str(w)) for w in words.ravel()), default=4)
        figsize = (n_cols * (1.9 + 0.075 * longest), n_rows * (0.6 + 0.2 * n_words) + 0.2)
    fig, axes, panels, bounding = axes_grid(ax, n_panels, n_cols, figsize=figsize,
                                            sharex=sharex)
    y = np.arange(n_words)
    # Each value axis starts at 0, or at the lowest value (of all panels, when shared).
    lows = np.minimum(0.0, values.min(axis=1, initial=0.0))
    if sharex:
        lows[:] = lows.min(initial=0.0)
    display.bars_ = []
    for i, panel in enumerate(panels):
        bars = panel.barh(y, values[i], **merge_kw({"color": "C0", "height": 0.7}, bar_kw))
        display.bars_.append(bars)
        panel.set_yticks(y, [str(w) for w in words[i]])
        panel.set_ylim(n_words - 0.5, -0.5)  # first word on top
        panel.set_xlim(left=lows[i])
        panel.set_title(titles[i])
        panel.tick_params(axis="y", length=0)
        panel.tick_params(axis="x", labelsize="small")
        panel.xaxis.grid(True, color="0.9")
        panel.set_axisbelow(True)
        for side in ("top", "right"):
            panel.spines[side].set_visible(False)
        # The value axis is labelled once per column, on the bottom panels.
        if i + n_cols >= n_panels:
            panel.set_xlabel(xlabel)
    display.axes_ = axes
    display.bounding_ax_ = bounding
    display.figure_ = fig
    return display


class TopicWordsDisplay:
    """Top words of each topic with their probabilities.

    One panel per topic, with a horizontal bar for each of its most
    probable words (largest at the top), laid out in a grid of small
    multiples, as in the paper's topic figures.

    Use :meth:`from_estimator` to build it from any fitted topic model with
    ``components_`` (:class:`~sklearn_clda.LDAGibbs`,
    :class:`~sklearn_clda.CompoundLDA`, scikit-learn's
    ``LatentDirichletAllocation``); the constructor takes precomputed
    values. All attributes are set in :meth:`plot`.

    Parameters
    ----------
    words : array-like of str of shape (n_topics, n_words)
        Top words of each shown topic, most probable first.

    weights : array-like of shape (n_topics, n_words)
        Their probabilities in the topic (or any word weights).

    topics : array-like of int of shape (n_topics,), default=None
        Model indices of the shown topics, used in the default titles.
        ``None`` means ``0..n_topics-1``.

    topic_labels : list of str of shape (n_topics,), default=None
        Panel titles. ``None`` means ``"Topic k"``.

    Attributes
    ----------
    axes_ : ndarray of matplotlib Axes
        The panels: of shape ``(n_rows, n_cols)`` (cells beyond the last
        topic are switched off) or the shape of the ``ax`` passed.

    bounding_ax_ : matplotlib Axes or None
        The single Axes passed as ``ax`` and divided into the grid, if any.

    bars_ : list of matplotlib BarContainer
        One container per topic, with one bar per word.

    figure_ : matplotlib Figure
        Figure containing the panels.

    See Also
    --------
    CollectionTopicDisplay : Topic proportions of the collections.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> from sklearn_clda import LDAGibbs
    >>> from sklearn_clda.datasets import make_lda_corpus
    >>> from sklearn_clda.plotting import TopicWordsDisplay
    >>> corpus = make_lda_corpus(n_topics=3, n_features=30, n_samples=60,
    ...                          doc_length=50, random_state=0)
    >>> lda = LDAGibbs(n_components=3, max_iter=100, random_state=0).fit(corpus.data)
    >>> vocabulary = [f"w{i}" for i in range(30)]
    >>> disp = TopicWordsDisplay.from_estimator(lda, vocabulary, n_words=5)
    >>> disp.axes_.shape
    (1, 3)
    >>> len(disp.bars_[0])  # five words in the first panel
    5
    >>> plt.close("all")
    """

    def __init__(self, words, weights, *, topics=None, topic_labels=None):
        self.words = words
        self.weights = weights
        self.topics = topics
        self.topic_labels = topic_labels

    @validate_params(
        {"n_cols": [_POSITIVE_INT, None], "sharex": ["boolean"]},
        prefer_skip_nested_validation=False,
    )
    def plot(self, ax=None, *, n_cols=None, sharex=False, bar_kw=None, figsize=None):
        """Plot the top words of each topic.

        Parameters
        ----------
        ax : matplotlib Axes or array-like of Axes, default=None
            ``None`` creates a new figure. One Axes (created as a subplot)
            is divided into the grid; an array-like gives one Axes per
            topic.

        n_cols : int, default=None
            Number of columns of the grid. ``None`` means
            ``min(4, n_topics)``.

        sharex : bool, default=False
            Whether the panels share one probability axis (easier to
            compare; less detail for flat topics).

        bar_kw : dict, default=None
            Keyword arguments of :meth:`matplotlib.axes.Axes.barh`.

        figsize : tuple of float, default=None
            Size of a new figure; ``None`` sizes it to the grid.

        Returns
        -------
        display : TopicWordsDisplay
            The display, with the artists stored as attributes.
        """
        check_matplotlib(f"{type(self).__name__}.plot")
        words = np.asarray(self.words, dtype=object)
        weights = finite_values(self, "weights", self.weights, "(n_topics, n_words)")
        if words.ndim != 2 or words.shape != weights.shape:
            raise ValueError(
                "words and weights must be 2-D arrays of the same shape "
                f"(n_topics, n_words), got {words.shape} and {weights.shape}."
            )
        n_topics = words.shape[0]
        topics = np.arange(n_topics) if self.topics is None else np.asarray(self.topics)
        if self.topic_labels is None:
            titles = [f"Topic {k}" for k in topics]
        else:
            titles = [str(label) for label in self.topic_labels]
        if len(titles) != n_topics:
            raise ValueError(f"topic_labels has {len(titles)} entries for {n_topics} topics.")
        return draw_word_bars(self, ax, words, weights, titles, n_cols=n_cols, sharex=sharex,
                              bar_kw=bar_kw, figsize=figsize, xlabel="Probability")

    @classmethod
    @validate_params(
        {
            "feature_names": ["array-like", None],
            "n_words": [_POSITIVE_INT],
            "n_cols": [_POSITIVE_INT, None],
        },
        # plot_kw is checked by plot, and the vocabulary by top_word_indices.
        prefer_skip_nested_validation=False,
    )
    def from_estimator(
        cls,
        estimator,
        feature_names=None,
        *,
        topics=None,
        n_words=10,
        n_cols=None,
        ax=None,
        **plot_kw,
    ):
        """Plot the top words of the topics of a fitted topic model.

        Parameters
        ----------
        estimator : estimator or Pipeline
            A fitted topic model with ``components_`` of shape
            ``(n_components, n_features)`` (topic-word pseudo-counts or
            weights; rows are normalized to probabilities), or a fitted
            Pipeline ending with one.

        feature_names : array-like of str of shape (n_features,), default=None
            The vocabulary. ``None`` uses the Pipeline's vocabulary (e.g.
            from a CountVectorizer) or the estimator's
            ``feature_names_in_``, and ``"word i"`` otherwise.

        topics : array-like of int, default=None
            Indices of the topics to show, in this order. ``None`` shows
            every topic.

        n_words : int, default=10
            Number of words per topic (at most the vocabulary size).

        n_cols : int, default=None
            Number of columns of the grid; ``None`` means
            ``min(4, n_topics)``.

        ax : matplotlib Axes or array-like of Axes, default=None
            Where to draw; see :meth:`plot`.

        **plot_kw : dict
            Further keyword arguments of :meth:`plot`.

        Returns
        -------
        display : TopicWordsDisplay
            The plotted display.
        """
        caller = f"{cls.__name__}.from_estimator"
        check_matplotlib(caller)
        model, pipeline_names = unwrap_estimator(estimator)
        phi = topic_word_distributions(model, caller)
        topics = (
            np.arange(phi.shape[0]) if topics is None else check_topics(topics, phi.shape[0])
        )
        names = resolve_feature_names(model, feature_names, pipeline_names, phi.shape[1],
                                      caller, placeholders=False)
        _, words, weights = _top_words(phi, topics, names, n_words)
        display = cls(words, weights, topics=topics)
        return display.plot(ax=ax, n_cols=n_cols, **plot_kw)

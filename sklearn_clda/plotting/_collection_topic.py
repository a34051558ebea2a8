"""Topic proportions of the collections of a fitted CompoundLDA."""

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import StrOptions, validate_params

from .._corpus import StrictInterval
from ..inspection._labels import LABEL_METHODS, word_scores
from ..inspection._topic_groups import group_draws
from ..inspection._utils import MIN_DRAWS
from ..metrics._topics import _top_indices
from ._base import (
    DEFAULT_N_TOPICS,
    axes_grid,
    check_attribute,
    check_clda,
    check_matplotlib,
    finite_values,
    check_topics,
    interval_bounds,
    merge_kw,
    resolve_feature_names,
    select_topics,
    shown_collections,
    single_axes,
    text_color_for,
    topic_word_distributions,
    unwrap_estimator,
)

__all__ = ["CollectionTopicDisplay"]

_KINDS = ("bars", "points", "heatmap")
_KIND = StrOptions(set(_KINDS))
_WIDE_HEATMAP_COLLECTIONS = 12  # more: the heatmap's collection labels stand upright
_CHAR_INCHES = 0.075  # the width of a tick label's character at the default size


class CollectionTopicDisplay:
    """Collection topic proportions ``pi_j`` of a compound LDA model.

    Three views of the estimated mixtures (``collection_topic_``): grouped
    bars of a few topics with one bar per collection and posterior
    intervals as error bars (the paper's Figure 1); points, one panel per
    topic with a row per collection, its posterior mean and interval (for
    many collections, where grouped bars and their legend no longer
    read); or a heatmap of every topic in every collection.

    Use :meth:`from_estimator` to build it from a fitted
    :class:`~sklearn_clda.CompoundLDA`; the constructor takes precomputed
    values. All attributes are set in :meth:`plot`.

    Parameters
    ----------
    proportions : ndarray of shape (n_collections, n_topics)
        Estimated proportion of each shown topic in each collection.

    lower : ndarray of shape (n_collections, n_topics), default=None
        Lower ends of the posterior intervals; ``None`` draws no intervals.

    upper : ndarray of shape (n_collections, n_topics), default=None
        Upper ends of the posterior intervals.

    topics : array-like of int of shape (n_topics,), default=None
        Model indices of the shown topics, used in the default labels.
        ``None`` means ``0..n_topics-1``.

    topic_labels : list of str of shape (n_topics,), default=None
        Topic names. ``None`` means ``"Topic k"``.

    topic_words : list of list of str, default=None
        Top words of each shown topic, appended to its label.

    collection_labels : list of str of shape (n_collections,), default=None
        Collection names. ``None`` means ``"0".."n_collections-1"``.

    interval : float, default=None
        Probability mass of the intervals, only used in the title.

    kind : {"bars", "points", "heatmap"}, default="bars"
        View drawn by :meth:`plot` when its ``kind`` is not given.

    Attributes
    ----------
    ax_ : matplotlib Axes
        Axes with the plot (``kind="points"``: the first panel).

    axes_ : ndarray of matplotlib Axes or None
        ``kind="points"``: the grid of panels, one per topic.

    figure_ : matplotlib Figure
        Figure containing the plot.

    bars_ : list of matplotlib BarContainer or None
        ``kind="bars"``: one container per collection, with one bar per
        topic.

    errorbars_ : list of matplotlib ErrorbarContainer or None
        ``kind="bars"`` with intervals: one container per collection.

    legend_ : matplotlib Legend or None
        ``kind="bars"``: the legend of the collections.

    points_ : list of matplotlib ErrorbarContainer or None
        ``kind="points"``: one container per topic, with a marker per
        collection and, with intervals, its interval.

    im_ : matplotlib AxesImage or None
        ``kind="heatmap"``: the image of the topics x collections matrix.

    colorbar_ : matplotlib Colorbar or None
        ``kind="heatmap"``: the colorbar.

    text_ : ndarray of shape (n_topics, n_collections) of Text or None
        ``kind="heatmap"`` with annotations: the cell labels.

    See Also
    --------
    PiTraceDisplay : Trace and autocorrelation plots of the draws of ``pi``.
    TopicWordsDisplay : Top words of each topic.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> from sklearn_clda import CompoundLDA
    >>> from sklearn_clda.datasets import make_compound_corpus
    >>> from sklearn_clda.plotting import CollectionTopicDisplay
    >>> corpus = make_compound_corpus(n_topics=4, n_features=30, n_collections=3,
    ...                               docs_per_collection=30, doc_length=40,
    ...                               random_state=0)
    >>> clda = CompoundLDA(n_components=4, max_iter=100, thin=2, random_state=0)
    >>> clda = clda.fit(corpus.data, groups=corpus.groups)
    >>> disp = CollectionTopicDisplay.from_estimator(clda, interval=0.9)
    >>> len(disp.bars_)  # one bar container per collection
    3
    >>> disp = CollectionTopicDisplay.from_estimator(clda, kind="heatmap")
    >>> disp.im_.get_array().shape  # topics x collections
    (4, 3)
    >>> disp = CollectionTopicDisplay.from_estimator(clda, kind="points", n_cols=2)
    >>> disp.axes_.shape, len(disp.points_)  # a panel per topic, in a 2 x 2 grid
    ((2, 2), 4)
    >>> plt.close("all")
    """

    def __init__(
        self,
        proportions,
        *,
        lower=None,
        upper=None,
        topics=None,
        topic_labels=None,
        topic_words=None,
        collection_labels=None,
        interval=None,
        kind="bars",
    ):
        self.proportions = proportions
        self.lower = lower
        self.upper = upper
        self.topics = topics
        self.topic_labels = topic_labels
        self.topic_words = topic_words
        self.collection_labels = collection_labels
        self.interval = interval
        self.kind = kind

    # ---------------------------------------------------------------- labels
    def _labels(self, n_collections, n_topics):
        topics = np.arange(n_topics) if self.topics is None else np.asarray(self.topics)
        if self.topic_labels is None:
            names = [f"Topic {k}" for k in topics]
        else:
            names = [str(name) for name in self.topic_labels]
        if len(names) != n_topics:
            raise ValueError(
                f"topic_labels has {len(names)} entries for {n_topics} topics."
            )
        if self.collection_labels is None:
            collections = [str(j) for j in range(n_collections)]
        else:
            collections = [str(name) for name in self.collection_labels]
        if len(collections) != n_collections:
            raise ValueError(
                f"collection_labels has {len(collections)} entries for "
                f"{n_collections} collections."
            )
        words = self.topic_words
        if words is not None and len(words) != n_topics:
            raise ValueError(f"topic_words has {len(words)} entries for {n_topics} topics.")
        return names, collections, words

    # ------------------------------------------------------------------ plot
    @validate_params(
        {"kind": [_KIND, None], "n_cols": [StrictInterval(Integral, 1, None, closed="left"), None]},
        prefer_skip_nested_validation=False,
    )
    def plot(
        self,
        ax=None,
        *,
        kind=None,
        bar_kw=None,
        errorbar_kw=None,
        legend=True,
        n_cols=None,
        cmap="Blues",
        colorbar=True,
        annotate="auto",
        values_format=".0%",
        imshow_kw=None,
        text_kw=None,
    ):
        """Plot the collection topic proportions.

        Parameters
        ----------
        ax : matplotlib Axes or array-like of Axes, default=None
            Axes to draw on. ``None`` creates a new figure sized to the
            number of topics and collections. ``kind="points"`` divides one
            Axes (created as a subplot) into its panels, or takes an
            array-like of one Axes per topic.

        kind : {"bars", "points", "heatmap"}, default=None
            ``"bars"``: for each topic a group of bars, one per collection,
            with the intervals as error bars. ``"points"``: a panel per
            topic, a row per collection (in the order given, top to
            bottom) with its proportion and interval; the panels share the
            rows and each starts its axis at 0. ``"heatmap"``: a topics x
            collections image with a colorbar. ``None`` uses ``self.kind``.

        bar_kw : dict, default=None
            Keyword arguments of :meth:`matplotlib.axes.Axes.bar`.

        errorbar_kw : dict, default=None
            Keyword arguments of :meth:`matplotlib.axes.Axes.errorbar` (bars'
            intervals, or the points and their intervals).

        legend : bool, default=True
            Whether to add a legend of the collections (bars).

        n_cols : int, default=None
            ``kind="points"``: the number of columns of panels; ``None``
            means ``min(6, n_topics)``.

        cmap : str or matplotlib Colormap, default="Blues"
            Colormap of the heatmap.

        colorbar : bool, default=True
            Whether to add a colorbar to the heatmap.

        annotate : bool or "auto", default="auto"
            Whether to write each proportion in its heatmap cell. ``"auto"``
            annotates when there are at most 40 topics and 300 cells.

        values_format : str, default=".0%"
            Format specification of the annotations.

        imshow_kw : dict, default=None
            Keyword arguments of :meth:`matplotlib.axes.Axes.imshow`.

        text_kw : dict, default=None
            Keyword arguments of :meth:`matplotlib.axes.Axes.text` for the
            annotations.

        Returns
        -------
        display : CollectionTopicDisplay
            The display, with the artists stored as attributes.
        """
        check_matplotlib(f"{type(self).__name__}.plot")
        if kind is None:
            kind = check_attribute(self, "kind", [_KIND])
        props = finite_values(self, "proportions", self.proportions,
                              "(n_collections, n_topics)")
        n_collections, n_topics = props.shape
        names, collections, words = self._labels(n_collections, n_topics)

        self.bars_ = self.errorbars_ = self.legend_ = None
        self.points_ = self.axes_ = None
        self.im_ = self.colorbar_ = self.text_ = None
        if kind == "bars":
            self._plot_bars(ax, props, names, collections, words, bar_kw,
                            errorbar_kw, legend)
        elif kind == "points":
            self._plot_points(ax, props, names, collections, words, errorbar_kw, n_cols)
        else:
            self._plot_heatmap(ax, props, names, collections, words, cmap,
                               colorbar, annotate, values_format, imshow_kw, text_kw)
        return self

    def _plot_bars(self, ax, props, names, collections, words, bar_kw, errorbar_kw,
                   legend):
        n_collections, n_topics = props.shape
        n_lines = 1 + (max(len(w) for w in words) if words else 0)
        fig, ax = single_axes(
            ax, figsize=(max(6.4, 1.2 * n_topics + 2.0), 4.0 + 0.18 * n_lines)
        )
        if words:
            ticklabels = ["\n".join([name, *map(str, w)]) for name, w in zip(names, words)]
        else:
            ticklabels = names
        x = np.arange(n_topics)
        width = 0.8 / n_collections
        arms = self._interval_arms(props)
        has_interval = arms is not None

        self.bars_ = []
        self.errorbars_ = [] if has_interval else None
        for j in range(n_collections):
            pos = x + (j - (n_collections - 1) / 2) * width
            bars = ax.bar(
                pos, props[j], width,
                **merge_kw({"label": collections[j], "zorder": 2}, bar_kw),
            )
            self.bars_.append(bars)
            if has_interval:
                err = ax.errorbar(
                    pos, props[j], yerr=arms[:, j],
                    **merge_kw(
                        {"fmt": "none", "ecolor": "0.2", "elinewidth": 1.0,
                         "capsize": max(1.5, 6.0 * width), "zorder": 3},
                        errorbar_kw,
                    ),
                )
                self.errorbars_.append(err)
        ax.set_xticks(x, ticklabels)
        ax.set_xlim(-0.6, n_topics - 0.4)
        ax.set_ylim(bottom=0)
        ax.set_ylabel("Topic proportion")
        ax.yaxis.grid(True, color="0.9", zorder=0)
        ax.set_axisbelow(True)
        ax.set_title(self._title(n_collections, has_interval))
        if legend:
            self.legend_ = ax.legend(
                title="Collection", loc="upper left", bbox_to_anchor=(1.01, 1.0),
                frameon=False,
            )
        self.ax_ = ax
        self.figure_ = fig

    def _interval_arms(self, props):
        """The intervals as error-bar arms, ``(2, n_collections, n_topics)``
        (below and above the proportion), or ``None`` without intervals.

        A posterior mean can fall outside a narrow equal-tailed interval of
        a skewed posterior: the arms are clipped at zero."""
        lower, upper = interval_bounds(self, props)
        if lower is None:
            return None
        return np.stack([np.maximum(props - lower, 0.0), np.maximum(upper - props, 0.0)])

    def _title(self, n_collections, has_interval):
        title = "Topic proportions" + (" by collection" if n_collections > 1 else "")
        if has_interval and self.interval is not None:
            title += f" ({self.interval:.0%} posterior intervals)"
        return title

    def _plot_points(self, ax, props, names, collections, words, errorbar_kw, n_cols):
        from matplotlib.ticker import MaxNLocator

        n_collections, n_topics = props.shape
        n_cols = min(6, n_topics) if n_cols is None else n_cols
        n_rows = -(-n_topics // min(n_cols, n_topics))
        longest = max(len(label) for label in collections)
        fig, axes, panels, _ = axes_grid(
            ax, n_topics, n_cols, sharey=True,
            figsize=(0.075 * longest + 2.4 * min(n_cols, n_topics) + 0.4,
                     n_rows * (0.22 * n_collections + 1.3) + 0.4),
        )
        arms = self._interval_arms(props)
        rows = np.arange(n_collections)[::-1]  # the first collection on top
        self.points_ = []
        for k, panel in enumerate(panels):
            self.points_.append(panel.errorbar(
                props[:, k], rows, xerr=None if arms is None else arms[:, :, k],
                **merge_kw({"fmt": "o", "markersize": 4, "color": "C0", "ecolor": "0.35",
                            "elinewidth": 1.2, "capsize": 0, "zorder": 3}, errorbar_kw),
            ))
            panel.set_xlim(left=0)
            panel.xaxis.set_major_locator(MaxNLocator(nbins=4))
            panel.xaxis.grid(True, color="0.9", zorder=0)
            panel.set_axisbelow(True)
            title = names[k] if not words else f"{names[k]}\n{' '.join(map(str, words[k]))}"
            panel.set_title(title, fontsize="medium")
            panel.set_xlabel("Topic proportion")
            panel.set_yticks(rows, collections)
            panel.set_ylim(-0.7, n_collections - 0.3)
        fig.suptitle(self._title(n_collections, arms is not None))
        self.axes_ = axes
        self.ax_ = panels[0]
        self.figure_ = fig

    def _plot_heatmap(self, ax, props, names, collections, words, cmap, colorbar,
                      annotate, values_format, imshow_kw, text_kw):
        from matplotlib.ticker import PercentFormatter

        n_collections, n_topics = props.shape
        if words:
            ticklabels = [f"{name}: {' '.join(map(str, w))}" for name, w in zip(names, words)]
        else:
            ticklabels = names
        longest = max(len(label) for label in ticklabels)
        # Many collections: narrow columns under upright labels, so that the
        # figure keeps a width a page can show. Labels longer than their
        # column is wide (about 12 characters in 0.9 in) stand upright too.
        many = n_collections > _WIDE_HEATMAP_COLLECTIONS
        column = 0.3 if many else 0.9
        longest_collection = max(len(str(c)) for c in collections)
        upright = many or _CHAR_INCHES * longest_collection > column
        label_height = _CHAR_INCHES * longest_collection if upright else 0.0
        fig, ax = single_axes(
            ax,
            figsize=(
                max(4.5, column * n_collections + _CHAR_INCHES * longest + 2.5),
                max(3.0, 0.3 * n_topics + 1.6 + label_height),
            ),
        )
        matrix = props.T
        vmax = float(np.nanmax(matrix)) if matrix.size else 1.0
        im = ax.imshow(
            matrix,
            **merge_kw(
                {"cmap": cmap, "aspect": "auto", "interpolation": "nearest",
                 "vmin": 0.0, "vmax": vmax if vmax > 0 else 1.0},
                imshow_kw,
            ),
        )
        ax.set_xticks(np.arange(n_collections), collections,
                      rotation=90 if upright else None)
        ax.set_yticks(np.arange(n_topics), ticklabels)
        ax.set_xlabel("Collection")
        ax.tick_params(length=0)
        for side in ("top", "right", "bottom", "left"):
            ax.spines[side].set_visible(False)
        ax.set_title("Topic proportions by collection")
        if colorbar:
            self.colorbar_ = fig.colorbar(im, ax=ax, label="Topic proportion")
            if values_format.endswith("%"):
                self.colorbar_.formatter = PercentFormatter(xmax=1.0, decimals=0)
        if annotate == "auto":
            annotate = n_topics <= 40 and matrix.size <= 300
        if annotate:
            self.text_ = np.empty(matrix.shape, dtype=object)
            for i in range(n_topics):
                for j in range(n_collections):
                    value = matrix[i, j]
                    color = text_color_for(im.cmap(im.norm(value)))
                    self.text_[i, j] = ax.text(
                        j, i, format(value, values_format),
                        **merge_kw(
                            {"ha": "center", "va": "center", "color": color,
                             "fontsize": "small"},
                            text_kw,
                        ),
                    )
        self.im_ = im
        self.ax_ = ax
        self.figure_ = fig

    # ---------------------------------------------------------- constructors
    @classmethod
    @validate_params(
        {
            "kind": [_KIND],
            "interval": [StrictInterval(Real, 0, 1, closed="neither"), None],
            "feature_names": ["array-like", None],
            "top_words": [StrictInterval(Integral, 0, None, closed="left")],
            "label_method": [StrOptions(set(LABEL_METHODS))],
            "n_topics": [StrictInterval(Integral, 1, None, closed="left")],
            "topic_groups": [dict, "array-like", None],
        },
        # plot_kw is checked by plot, and the vocabulary by top_word_indices.
        prefer_skip_nested_validation=False,
    )
    def from_estimator(
        cls,
        estimator,
        *,
        topics=None,
        collections=None,
        kind="bars",
        interval=0.9,
        feature_names=None,
        top_words=3,
        label_method="frex",
        n_topics=DEFAULT_N_TOPICS,
        topic_groups=None,
        ax=None,
        **plot_kw,
    ):
        """Plot the collection topic proportions of a fitted CompoundLDA.

        Parameters
        ----------
        estimator : CompoundLDA or Pipeline
            A fitted :class:`~sklearn_clda.CompoundLDA`, or a fitted
            Pipeline ending with one (the vocabulary is then taken from the
            steps before it, e.g. a CountVectorizer).

        topics : array-like of int, default=None
            Indices of the topics to show, in this order. ``None`` shows,
            for ``kind="bars"`` and ``"points"``, the ``n_topics`` topics
            whose proportions differ most across collections (largest max -
            min spread; with one collection, the largest proportions) and,
            for ``kind="heatmap"``, every topic.

        collections : array-like, default=None
            Labels of the collections to show, in this order, as in
            ``groups_`` (a model fitted without groups has the single
            collection ``"all"``). ``None`` shows every collection, up to 40;
            with more, the 40 with the most documents, with a warning.

        kind : {"bars", "points", "heatmap"}, default="bars"
            ``"bars"``: grouped bars of the chosen topics, one bar per
            collection, with posterior intervals (up to about ten
            collections: their colors and legend stop reading beyond).
            ``"points"``: a panel per chosen topic, a row per collection
            with its proportion and posterior interval (any number of
            collections). ``"heatmap"``: the topics x collections matrix.

        interval : float or None, default=0.9
            Mass of the equal-tailed posterior intervals, computed from the
            kept draws ``collection_topic_samples_`` (e.g. 0.9: from the 5%
            to the 95% quantile). ``None`` draws no intervals. With few kept
            draws the intervals are rough; keep more (larger ``max_iter`` or
            smaller ``thin``) for reliable ones. With fewer than 4 (a VEM
            fit keeps one) the display warns and draws no intervals.

        feature_names : array-like of str of shape (n_features,), default=None
            Vocabulary used to add each topic's top words to its label.
            ``None`` uses the Pipeline's vocabulary or the estimator's
            ``feature_names_in_`` when available, and no words otherwise.

        top_words : int, default=3
            Number of top words in each topic label (0 for none).

        label_method : {"frex", "prob", "lift", "score", "relevance"}, \
                default="frex"
            How the label's words are ranked (see
            :func:`~sklearn_clda.inspection.topic_labels`): by default FREX,
            words frequent in the topic and exclusive to it, which keeps
            corpus-wide words out of every label; ``"prob"`` for the most
            probable words.

        n_topics : int, default=6
            Number of topics chosen when ``topics=None`` and ``kind`` is
            ``"bars"`` or ``"points"``.

        topic_groups : dict or array-like of shape (n_components,), default=None
            Draw groups of topics (themes) instead, each the sum of its
            topics' shares (in every draw, for the intervals), labelled
            with its name (see
            :func:`~sklearn_clda.inspection.collection_topic_summary`);
            ``topics`` and ``n_topics`` then pick among the groups.

        ax : matplotlib Axes or array-like of Axes, default=None
            Where to draw; see :meth:`plot`.

        **plot_kw : dict
            Further keyword arguments of :meth:`plot`.

        Returns
        -------
        display : CollectionTopicDisplay
            The plotted display.
        """
        caller = f"{cls.__name__}.from_estimator"
        check_matplotlib(caller)
        model, pipeline_names = unwrap_estimator(estimator)
        samples = check_clda(model, caller)
        positions, labels = shown_collections(model, collections, caller)
        pi = np.asarray(model.collection_topic_, dtype=np.float64)[positions]
        samples = samples[:, positions]
        group_names = None
        if topic_groups is not None:
            none = np.array([], dtype=np.intp)
            samples, group_names, _ = group_draws(samples, none, topic_groups, caller)
            pi = group_draws(pi[None], none, topic_groups, caller)[0][0]
        n_components = pi.shape[1]
        if topics is None:
            if kind != "heatmap":
                topics = select_topics(pi, n_topics)
            else:
                topics = np.arange(n_components)
        else:
            topics = check_topics(topics, n_components)

        lower = upper = None
        if interval is not None and samples.shape[0] < MIN_DRAWS:
            warnings.warn(
                f"{caller} draws no intervals: the model kept {samples.shape[0]} "
                f"draw(s) of pi, fewer than {MIN_DRAWS} (algorithm='vem' gives a "
                "point estimate; a Gibbs fit keeps more with a larger max_iter or "
                "a smaller thin). Pass interval=None to silence this warning.",
                UserWarning, stacklevel=3,
            )
            interval = None
        if interval is not None:
            tail = (1.0 - interval) / 2.0
            lower, upper = np.quantile(samples[:, :, topics], [tail, 1.0 - tail], axis=0)

        words = None
        if top_words and group_names is None:
            phi = topic_word_distributions(model, caller)
            names = resolve_feature_names(model, feature_names, pipeline_names, phi.shape[1],
                                          caller, placeholders=False)
            if names is not None:
                scores = word_scores(np.asarray(model.components_, dtype=np.float64),
                                     label_method)
                index = _top_indices(scores[topics], min(top_words, phi.shape[1]))
                words = [list(row) for row in names[index]]

        display = cls(
            pi[:, topics],
            lower=lower,
            upper=upper,
            topics=topics,
            topic_labels=None if group_names is None else [str(group_names[k]) for k in topics],
            topic_words=words,
            collection_labels=list(labels),
            interval=interval,
            kind=kind,
        )
        return display.plot(ax=ax, **plot_kw)


"""Each topic's share across ordered collections (years, ratings), with bands."""

import re
from numbers import Integral, Real

import numpy as np
from sklearn.utils import Bunch
from sklearn.utils._param_validation import StrOptions, validate_params

from .._corpus import StrictInterval
from ..inspection._collections import _draws, equal_tailed_interval
from ..inspection._labels import LABEL_METHODS, word_scores
from ..metrics._topics import _top_indices
from ..inspection._topic_groups import group_draws
from ..inspection._utils import collection_draws
from ._bands import draw_bands, legend_outside
from ._base import (
    DEFAULT_N_TOPICS,
    check_clda,
    check_collections,
    check_matplotlib,
    check_topics,
    interval_bounds,
    resolve_feature_names,
    select_topics,
    single_axes,
    unwrap_estimator,
)

__all__ = ["CollectionTrendDisplay"]


#: An ISO 8601 date or date and time ("2021-05", "2021-05-04T10:30").
_ISO_DATE = re.compile(r"\d{4}(-\d{2}(-\d{2}([T ]\d{2}(:\d{2}(:\d{2}(\.\d+)?)?)?)?)?)?")


def _as_numbers(labels):
    """The labels as floats, or None if some label is not a finite number
    or their range is not (1e308 and -1e308: no axis spans them)."""
    try:
        x = np.asarray([float(label) for label in labels.tolist()])
    except (TypeError, ValueError):
        return None
    if not np.all(np.isfinite(x)):
        return None
    with np.errstate(over="ignore"):
        return x if np.isfinite(x.max() - x.min()) else None


def _as_dates(labels):
    """The labels as datetime64 (ISO 8601 strings such as "2021-05"), or None
    (NumPy's own words, "NaT", "now" and "today", are not dates here)."""
    text = labels.astype(str)
    if not all(_ISO_DATE.fullmatch(label) for label in text.tolist()):
        return None
    try:
        return np.asarray(text, dtype="datetime64")
    except (TypeError, ValueError):
        return None


def ordered_positions(model, order, caller):
    """``(positions, x, tick_labels)``: the collections in order along x.

    With ``order`` given, the named collections in that order, evenly
    spaced (``tick_labels`` are their labels). Otherwise every collection,
    placed at its label's value when the labels are all numbers or all
    ISO dates (``tick_labels`` None).
    """
    if getattr(model, "groups_", None) is None:
        raise ValueError(
            f"{caller} needs a model fitted on several collections (groups); "
            "this one was fitted as a single collection."
        )
    if order is not None:
        positions, labels = check_collections(model, order, caller, "order")
        return positions, np.arange(positions.size, dtype=np.float64), [str(v) for v in labels]
    labels = np.asarray(model.groups_)
    x = _as_numbers(labels)
    if x is None:
        x = _as_dates(labels)
    if x is None:
        raise ValueError(
            f"{caller} places the collections by their labels, which must be "
            f"numbers or ISO dates (e.g. 2021 or '2021-05'); got "
            f"{labels[:5].tolist()}. Pass order=[...] to list the collections "
            "in their order."
        )
    sort = np.argsort(x, kind="stable")
    return sort, x[sort], None


class CollectionTrendDisplay:
    """Each topic's share across ordered collections, with posterior bands.

    When the collections are ordered (years, review stars, or any order
    the user gives), this draws one line per topic through the posterior
    mean of its share ``pi_jk`` in each collection, with a band between
    the ends of the equal-tailed posterior intervals: the analogue of
    stm's plots of topic prevalence against a continuous covariate.

    Use :meth:`from_estimator` to build it from a fitted
    :class:`~sklearn_clda.CompoundLDA`; the constructor takes precomputed
    values. All attributes are set in :meth:`plot`.

    Parameters
    ----------
    x : array-like of shape (n_collections,)
        Position of each collection on the x axis: numbers or datetime64.

    proportions : ndarray of shape (n_collections, n_topics)
        Posterior mean share of each shown topic in each collection.

    lower : ndarray of shape (n_collections, n_topics), default=None
        Lower ends of the intervals; ``None`` draws no bands.

    upper : ndarray of shape (n_collections, n_topics), default=None
        Upper ends of the intervals.

    topics : array-like of int of shape (n_topics,), default=None
        Model indices of the shown topics, used in the default labels.

    topic_labels : list of str of shape (n_topics,), default=None
        Legend labels. ``None`` means ``"Topic k"``.

    tick_labels : list of str of shape (n_collections,), default=None
        Labels of the x ticks, one per collection (for collections placed
        at evenly spaced positions); ``None`` leaves matplotlib's ticks.

    interval : float, default=None
        Probability mass of the intervals, only used in the title.

    Attributes
    ----------
    lines_ : list of matplotlib Line2D
        The line of each topic.

    fill_between_ : list of matplotlib PolyCollection or None
        The band of each topic, when intervals are given.

    legend_ : matplotlib Legend or None
        The legend of the topics.

    ax_ : matplotlib Axes
        Axes with the plot.

    figure_ : matplotlib Figure
        Figure containing the plot.

    See Also
    --------
    CollectionTopicDisplay : Topic shares of unordered collections.
    sklearn_clda.inspection.collection_topic_summary : The plotted numbers.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> import numpy as np
    >>> from sklearn_clda import CompoundLDA
    >>> from sklearn_clda.datasets import make_compound_corpus
    >>> from sklearn_clda.plotting import CollectionTrendDisplay
    >>> corpus = make_compound_corpus(n_topics=3, n_features=30, n_collections=4,
    ...                               docs_per_collection=25, doc_length=40,
    ...                               random_state=0)
    >>> years = np.array([2001, 2002, 2005, 2010])[corpus.groups]
    >>> clda = CompoundLDA(n_components=3, max_iter=120, thin=2, random_state=0)
    >>> clda = clda.fit(corpus.data, groups=years)
    >>> disp = CollectionTrendDisplay.from_estimator(clda, ci=0.9)
    >>> disp.lines_[0].get_xdata().tolist()  # the collections at their years
    [2001.0, 2002.0, 2005.0, 2010.0]
    >>> y = np.stack([line.get_ydata() for line in disp.lines_], axis=1)
    >>> bool(np.allclose(y, clda.collection_topic_[:, disp.topics]))
    True

    Labels that are not numbers or dates need an order:

    >>> stars = np.array(["one", "two", "three", "four"])[corpus.groups]
    >>> clda = clda.fit(corpus.data, groups=stars)
    >>> disp = CollectionTrendDisplay.from_estimator(
    ...     clda, order=["one", "two", "three", "four"], ci=None)
    >>> [t.get_text() for t in disp.ax_.get_xticklabels()]
    ['one', 'two', 'three', 'four']
    >>> plt.close("all")
    """

    def __init__(
        self,
        x,
        proportions,
        *,
        lower=None,
        upper=None,
        topics=None,
        topic_labels=None,
        tick_labels=None,
        interval=None,
    ):
        self.x = x
        self.proportions = proportions
        self.lower = lower
        self.upper = upper
        self.topics = topics
        self.topic_labels = topic_labels
        self.tick_labels = tick_labels
        self.interval = interval

    def _checked(self):
        """``(x, proportions, lower, upper, labels)`` validated against each other."""
        x = np.asarray(self.x)
        props = np.atleast_2d(np.asarray(self.proportions, dtype=np.float64))
        n_collections, n_topics = props.shape
        if x.shape != (n_collections,):
            raise ValueError(
                f"x has shape {x.shape} for {n_collections} collections; pass one "
                "position per row of proportions."
            )
        lower, upper = interval_bounds(self, props)
        topics = np.arange(n_topics) if self.topics is None else np.asarray(self.topics)
        labels = (
            [f"Topic {k}" for k in topics] if self.topic_labels is None
            else [str(label) for label in self.topic_labels]
        )
        if len(labels) != n_topics:
            raise ValueError(f"topic_labels has {len(labels)} entries for {n_topics} topics.")
        if self.tick_labels is not None and len(self.tick_labels) != n_collections:
            raise ValueError(
                f"tick_labels has {len(self.tick_labels)} entries for "
                f"{n_collections} collections."
            )
        return x, props, lower, upper, labels

    @validate_params({"legend": ["boolean"]}, prefer_skip_nested_validation=False)
    def plot(self, ax=None, *, line_kw=None, fill_between_kw=None, legend=True):
        """Plot the topics' shares across the collections.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes to draw on; ``None`` creates a new figure.

        line_kw : dict, default=None
            Keyword arguments of :meth:`matplotlib.axes.Axes.plot`.

        fill_between_kw : dict, default=None
            Keyword arguments of :meth:`matplotlib.axes.Axes.fill_between`.

        legend : bool, default=True
            Whether to add a legend of the topics.

        Returns
        -------
        display : CollectionTrendDisplay
            The display, with the artists stored as attributes.
        """
        check_matplotlib(f"{type(self).__name__}.plot")
        x, props, lower, upper, labels = self._checked()
        fig, ax = single_axes(ax, figsize=(7.6 if legend else 6.4, 4.2))
        self.lines_, self.fill_between_ = draw_bands(
            ax, x, props, lower, upper, labels, {"marker": "o", "markersize": 4}, line_kw,
            fill_between_kw)
        if self.tick_labels is not None:
            ax.set_xticks(x, [str(t) for t in self.tick_labels])
        elif x.dtype.kind == "M":
            from matplotlib.dates import AutoDateLocator, ConciseDateFormatter

            locator = AutoDateLocator()
            ax.xaxis.set_major_locator(locator)
            ax.xaxis.set_major_formatter(ConciseDateFormatter(locator))
        ax.set_ylim(bottom=0)
        ax.set_xlabel("Collection")
        ax.set_ylabel("Topic proportion")
        ax.grid(True, color="0.92")
        title = "Topic proportions across collections"
        if lower is not None and self.interval is not None:
            title += f" ({self.interval:.0%} posterior intervals)"
        ax.set_title(title)
        self.legend_ = legend_outside(ax) if legend else None
        self.ax_ = ax
        self.figure_ = fig
        return self

    @classmethod
    @validate_params(
        {
            "order": ["array-like", None],
            "ci": [StrictInterval(Real, 0, 1, closed="neither"), None],
            "feature_names": ["array-like", None],
            "label_method": [StrOptions(set(LABEL_METHODS))],
            "top_words": [StrictInterval(Integral, 0, None, closed="left")],
            "n_topics": [StrictInterval(Integral, 1, None, closed="left")],
            "topic_groups": [dict, "array-like", None],
        },
        # plot_kw is checked by plot.
        prefer_skip_nested_validation=False,
    )
    def from_estimator(
        cls,
        estimator,
        *,
        order=None,
        topics=None,
        ci=0.9,
        feature_names=None,
        label_method="frex",
        top_words=3,
        n_topics=DEFAULT_N_TOPICS,
        topic_groups=None,
        ax=None,
        **plot_kw,
    ):
        """Plot the topics' shares across the ordered collections of a CompoundLDA.

        Parameters
        ----------
        estimator : CompoundLDA, Pipeline, or list of them
            A fitted :class:`~sklearn_clda.CompoundLDA` with several
            collections, a fitted Pipeline ending with one, or a list of
            fits of the same model (chains differing in ``random_state``),
            whose draws are lined up with the first fit's topics and pooled
            (:func:`~sklearn_clda.inspection.align_chains`); the topics are
            then the first fit's.

        order : array-like, default=None
            Collection labels (as in ``groups_``) in the order to draw
            them, evenly spaced; collections left out are not drawn.
            ``None`` places every collection at its label, which must then
            be a number (e.g. a year or a star rating) or an ISO date
            string (e.g. ``"2021-05"``).

        topics : array-like of int, default=None
            Indices of the topics to draw. ``None`` draws the ``n_topics``
            topics whose shares vary most across the drawn collections.

        ci : float or None, default=0.9
            Mass of the equal-tailed posterior intervals drawn as bands,
            from ``collection_topic_samples_`` (at least 4 draws; a VEM fit
            has none: pass ``None``). ``None`` draws no bands.

        feature_names : array-like of str of shape (n_features,), default=None
            Vocabulary for the topic labels. ``None`` uses the Pipeline's
            vocabulary or ``feature_names_in_`` when available, and no
            words otherwise.

        label_method : {"prob", "frex", "lift", "score", "relevance"}, \
                default="frex"
            How the label words are chosen; see
            :func:`~sklearn_clda.inspection.topic_labels`.

        top_words : int, default=3
            Number of words in each topic's label (0 for none).

        n_topics : int, default=6
            Number of topics drawn when ``topics=None``.

        topic_groups : dict or array-like of shape (n_components,), default=None
            Draw groups of topics (themes) instead, each the sum of its
            topics' shares in every draw, labelled with its name (see
            :func:`~sklearn_clda.inspection.collection_trend`); ``topics``
            and ``n_topics`` then pick among the groups.

        ax : matplotlib Axes, default=None
            Axes to draw on; ``None`` creates a new figure.

        **plot_kw : dict
            Further keyword arguments of :meth:`plot`.

        Returns
        -------
        display : CollectionTrendDisplay
            The plotted display.
        """
        caller = f"{cls.__name__}.from_estimator"
        check_matplotlib(caller)
        found = _trend_values(estimator, order, ci, topic_groups, caller)
        mean, lower, upper, positions = found.mean, found.lower, found.upper, found.positions
        if topics is None:
            topics = select_topics(mean[positions], n_topics)
        else:
            topics = check_topics(topics, mean.shape[1])
        if found.names is None:
            labels = _topic_labels(found.model, topics, feature_names, found.pipeline_names,
                                   label_method, top_words, caller)
        else:
            labels = [str(found.names[k]) for k in topics]
        display = cls(
            found.x,
            mean[np.ix_(positions, topics)],
            lower=None if lower is None else lower[np.ix_(positions, topics)],
            upper=None if upper is None else upper[np.ix_(positions, topics)],
            topics=topics,
            topic_labels=labels,
            tick_labels=found.ticks,
            interval=ci,
        )
        return display.plot(ax=ax, **plot_kw)


def _trend_values(estimator, order, ci, topic_groups, caller):
    """What a trend display of a fit (or of several fits' pooled draws)
    draws: ``model`` and ``pipeline_names``; ``positions``, ``x`` and
    ``ticks`` of the collections along the trend; the posterior ``mean``
    and ``ci`` interval (``lower``, ``upper``; None for ``ci=None``) of
    every collection's share of every topic, the topics summed into
    ``topic_groups`` if given (``names`` then holds the groups' names,
    else None)."""
    chains = isinstance(estimator, (list, tuple))
    # (a list is checked first: fewer than two fits get a clear error)
    draws = _draws(estimator, caller)[1] if chains else None
    model, pipeline_names = unwrap_estimator(estimator[0] if chains else estimator)
    samples = check_clda(model, caller)
    positions, x, ticks = ordered_positions(model, order, caller)
    if chains:
        samples = draws.reshape(-1, *draws.shape[2:])
    elif ci is not None:  # (enough draws for an interval)
        samples = collection_draws(model, caller)[1]
    names = None
    if topic_groups is not None:
        samples, names, _ = group_draws(samples, np.array([], dtype=np.intp), topic_groups,
                                        caller)
    lower = upper = None
    if ci is not None:
        lower, upper = equal_tailed_interval(samples, ci)
    return Bunch(model=model, pipeline_names=pipeline_names, positions=positions, x=x,
                 ticks=ticks, mean=samples.mean(axis=0), lower=lower, upper=upper,
                 names=names)


def _topic_labels(model, topics, feature_names, pipeline_names, method, n_words, caller,
                  prefix="Topic "):
    """``"Topic k: w1 w2 w3"`` (``prefix`` before ``k``) for each topic, or
    None without a vocabulary."""
    if not n_words:
        return None
    components = np.asarray(model.components_, dtype=np.float64)
    names = resolve_feature_names(model, feature_names, pipeline_names,
                                  components.shape[1], caller, placeholders=False)
    if names is None:
        return None
    best = _top_indices(word_scores(components, method), min(n_words, components.shape[1]))
    return [f"{prefix}{k}: {' '.join(names[best[k]])}" for k in topics]

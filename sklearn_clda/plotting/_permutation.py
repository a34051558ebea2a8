"""Two collections' differences against those of fits with shuffled labels
(stm's ``plot.STMpermute``)."""

from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import HasMethods, StrOptions, validate_params

from .._corpus import StrictInterval
from ..inspection._labels import LABEL_METHODS
from ..inspection._utils import require_pandas
from ._base import check_matplotlib, check_topics, merge_kw, unwrap_estimator
from ._difference import CollectionDifferenceDisplay
from ._interval_rows import rows_layout
from ._trend import _topic_labels

__all__ = ["PermutationTestDisplay"]

#: The p-value of :func:`~sklearn_clda.inspection.permutation_test` that
#: colors a row, by the ``p_value`` argument of the class methods.
_P_VALUE_COLUMNS = {"adjusted": "p_value_adjusted", "topic": "p_value"}

#: The class methods' parameters of the labels and colors.
_DRAWING_CONSTRAINTS = {
    "feature_names": ["array-like", None],
    "label_method": [StrOptions(set(LABEL_METHODS))],
    "top_words": [StrictInterval(Integral, 0, None, closed="left")],
    "p_value": [StrOptions(set(_P_VALUE_COLUMNS))],
    "alpha": [StrictInterval(Real, 0, 1, closed="neither")],
}


class PermutationTestDisplay(CollectionDifferenceDisplay):
    """Two collections' differences against those of fits with shuffled labels.

    One row per topic, as in :class:`CollectionDifferenceDisplay`: the
    model's posterior mean of ``pi_ak - pi_bk`` and its interval, in color
    where the permutation test's p-value is at most ``alpha``, in grey
    otherwise. Behind each row, a grey tick for every shuffled fit's
    difference of the topic matched with it; a shaded band spans plus and
    minus the largest absolute difference that any shuffled fit gave any
    topic (a difference outside it beat every shuffle, the adjusted
    p-value's smallest). This is the picture of stm's
    ``plot.STMpermute``, for all topics at once.

    Use :meth:`from_results` to draw the result of
    :func:`~sklearn_clda.inspection.permutation_test`, or
    :meth:`from_estimator` to run it; the constructor takes precomputed
    values. All attributes are set in :meth:`plot`.

    Parameters
    ----------
    difference, lower, upper : array-like of shape (n_topics,)
        The model's posterior mean differences and their intervals.

    null_differences : array-like of shape (n_permutations, n_topics)
        The shuffled fits' differences of the topics matched with these
        (NaN where a fit has no match).

    null_max : array-like of shape (n_permutations,)
        Each shuffled fit's largest absolute difference over its topics.

    p_values : array-like of shape (n_topics,)
        The p-value of each topic (NaN: never significant).

    topics, topic_labels, a, b, interval
        As in :class:`CollectionDifferenceDisplay`.

    alpha : float, default=0.05
        Rows whose p-value is at most ``alpha`` are drawn in color.

    Attributes
    ----------
    order_ : ndarray of shape (n_topics,)
        Positions (into ``difference``) of the rows, bottom to top.

    significant_ : ndarray of bool of shape (n_topics,)
        Whether each topic's p-value is at most ``alpha``.

    errorbars_ : list of matplotlib ErrorbarContainer
        The significant rows, then the others (an empty group is left out).

    null_ : matplotlib PathCollection or None
        The shuffled fits' ticks (None when no fit matched any topic).

    band_ : matplotlib Patch
        The band of the shuffled fits' largest absolute differences.

    ax_ : matplotlib Axes
        Axes with the plot.

    figure_ : matplotlib Figure
        Figure containing the plot.

    See Also
    --------
    sklearn_clda.inspection.permutation_test : The plotted numbers.
    CollectionDifferenceDisplay : The posterior differences alone.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> from sklearn_clda import CompoundLDA
    >>> from sklearn_clda.datasets import make_compound_corpus
    >>> from sklearn_clda.inspection import permutation_test
    >>> from sklearn_clda.plotting import PermutationTestDisplay
    >>> corpus = make_compound_corpus(n_topics=3, n_features=30, n_collections=2,
    ...                               docs_per_collection=40, doc_length=50,
    ...                               random_state=0)
    >>> clda = CompoundLDA(n_components=3, max_iter=100, thin=2, random_state=0)
    >>> clda = clda.fit(corpus.data, groups=corpus.groups)
    >>> result = permutation_test(clda, corpus.data, corpus.groups, 0, 1,
    ...                           n_permutations=9, random_state=0)
    >>> disp = PermutationTestDisplay.from_results(result, alpha=0.1)
    >>> disp.significant_.tolist()
    [False, True, True]
    >>> plt.close("all")
    """

    def __init__(self, difference, lower, upper, null_differences, null_max, p_values, *,
                 topics=None, topic_labels=None, a=None, b=None, interval=None, alpha=0.05):
        super().__init__(difference, lower, upper, topics=topics, topic_labels=topic_labels,
                         a=a, b=b, interval=interval)
        self.null_differences = null_differences
        self.null_max = null_max
        self.p_values = p_values
        self.alpha = alpha

    def _checked_null(self, n_topics):
        """``(null_differences, null_max, p_values)`` validated."""
        name = type(self).__name__
        null = np.asarray(self.null_differences, dtype=np.float64)
        largest = np.asarray(self.null_max, dtype=np.float64)
        p_values = np.asarray(self.p_values, dtype=np.float64)
        if null.ndim != 2 or null.shape[1] != n_topics or null.shape[0] == 0:
            raise ValueError(f"{name} needs null_differences of shape (n_permutations, "
                             f"{n_topics}), got shape {null.shape}.")
        if largest.shape != (null.shape[0],) or not np.all(np.isfinite(largest)) \
                or (largest < 0).any():
            raise ValueError(f"{name} needs null_max of shape ({null.shape[0]},), finite "
                             f"and non-negative, got shape {largest.shape}.")
        if np.isinf(null).any():
            raise ValueError(f"{name} got infinite values in null_differences.")
        if p_values.shape != (n_topics,) or ((p_values <= 0) | (p_values > 1)).any():
            raise ValueError(f"{name} needs p_values of shape ({n_topics},) in (0, 1] "
                             "(or NaN).")
        alpha = self.alpha
        if not (isinstance(alpha, Real) and 0 < alpha < 1):
            raise ValueError(f"alpha of {name} must be a number in (0, 1), got {alpha!r}.")
        return null, largest, p_values

    @validate_params({"sort": ["boolean"]}, prefer_skip_nested_validation=False)
    def plot(self, ax=None, *, sort=True, errorbar_kw=None, null_kw=None, band_kw=None):
        """Plot the differences against the shuffled fits', a row per topic.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes to draw on; ``None`` creates a new figure sized to the
            number of topics.

        sort : bool, default=True
            Order the rows by difference, the largest at the top; otherwise
            in the given order, the first at the top.

        errorbar_kw : dict, default=None
            Keyword arguments of :meth:`matplotlib.axes.Axes.errorbar`.

        null_kw : dict, default=None
            Keyword arguments of :meth:`matplotlib.axes.Axes.scatter` for
            the shuffled fits' ticks.

        band_kw : dict, default=None
            Keyword arguments of :meth:`matplotlib.axes.Axes.axvspan` for
            the band.

        Returns
        -------
        display : PermutationTestDisplay
            The display, with the artists stored as attributes.
        """
        check_matplotlib(f"{type(self).__name__}.plot")
        difference, lower, upper, labels = self._checked()
        null, largest, p_values = self._checked_null(difference.size)
        fig, ax, order, y = rows_layout(ax, difference, sort)
        reach = float(largest.max())
        band = ax.axvspan(-reach, reach, **merge_kw(
            {"color": "0.9", "zorder": 0, "label": "largest shuffled |difference|"}, band_kw))
        perm, topic = np.nonzero(np.isfinite(null))
        ticks = None
        if topic.size:
            ticks = ax.scatter(null[perm, topic], y[topic], **merge_kw(
                {"marker": "|", "color": "0.6", "s": 60, "linewidths": 0.8, "zorder": 1,
                 "label": "shuffled fits"}, null_kw))
        significant = p_values <= self.alpha  # (NaN: False)
        errorbars = self._draw_rows(ax, y, (difference, lower, upper), significant,
                                    merge_kw({"zorder": 2}, errorbar_kw))
        self._finish(ax, labels, order)
        ax.legend(handles=[band] + ([ticks] if ticks is not None else []), loc="best",
                  fontsize="small")
        self.order_, self.significant_, self.errorbars_ = order, significant, errorbars
        self.null_, self.band_, self.ax_, self.figure_ = ticks, band, ax, fig
        return self

    @classmethod
    @validate_params(
        {
            "result": [dict],
            "estimator": [HasMethods(["fit"]), None],
            **_DRAWING_CONSTRAINTS,
        },
        # plot_kw is checked by plot.
        prefer_skip_nested_validation=False,
    )
    def from_results(cls, result, *, estimator=None, topics=None, feature_names=None,
                     label_method="frex", top_words=3, p_value="adjusted", alpha=0.05,
                     ax=None, **plot_kw):
        """Plot the result of :func:`~sklearn_clda.inspection.permutation_test`.

        Parameters
        ----------
        result : Bunch
            What :func:`~sklearn_clda.inspection.permutation_test` returned.

        estimator : CompoundLDA or Pipeline, default=None
            The tested model, for the topics' label words; ``None`` labels
            the rows "Topic k". A test of groups of topics (``topic_groups``)
            labels its rows with the groups' names.

        topics : array-like of int, default=None
            The topics to draw; ``None`` draws every topic.

        feature_names, label_method, top_words
            The label words, as in
            :meth:`CollectionDifferenceDisplay.from_estimator` (used with
            ``estimator`` only).

        p_value : {"adjusted", "topic"}, default="adjusted"
            Which p-value colors a row: ``p_value_adjusted`` (family-wise
            over the topics) or the topic's own ``p_value``.

        alpha : float, default=0.05
            Rows whose p-value is at most this are drawn in color.

        ax : matplotlib Axes, default=None
            Axes to draw on; ``None`` creates a new figure.

        **plot_kw : dict
            Further keyword arguments of :meth:`plot`.

        Returns
        -------
        display : PermutationTestDisplay
            The plotted display.
        """
        check_matplotlib(f"{cls.__name__}.from_results")
        try:
            table, null, largest = result["table"], result["null_differences"], \
                result["null_max"]
        except KeyError as exc:
            raise ValueError(f"{cls.__name__}.from_results needs the result of "
                             f"permutation_test; it has no {exc.args[0]!r}.") from None
        chosen = np.arange(len(table)) if topics is None else check_topics(topics, len(table))
        labels = None
        if table.attrs.get("topic_groups"):  # rows of named groups of topics
            labels = [str(name) for name in table["topic"].iloc[chosen]]
        elif estimator is not None:
            model, pipeline_names = unwrap_estimator(estimator)
            labels = _topic_labels(model, chosen, feature_names, pipeline_names, label_method,
                                   top_words, f"{cls.__name__}.from_results")
        rows = table.iloc[chosen]
        a, b = table.attrs.get("a"), table.attrs.get("b")
        display = cls(rows["mean"].to_numpy(), rows["lower"].to_numpy(),
                      rows["upper"].to_numpy(), np.asarray(null)[:, chosen], largest,
                      rows[_P_VALUE_COLUMNS[p_value]].to_numpy(), topics=chosen,
                      topic_labels=labels, a=None if a is None else str(a),
                      b=None if b is None else str(b), interval=table.attrs.get("ci"),
                      alpha=alpha)
        return display.plot(ax=ax, **plot_kw)

    @classmethod
    @validate_params(
        {
            "estimator": [HasMethods(["fit"])],
            "topic_groups": [dict, "array-like", None],
            **_DRAWING_CONSTRAINTS,
        },
        # permutation_test checks its own; plot_kw is checked by plot.
        prefer_skip_nested_validation=False,
    )
    def from_estimator(cls, estimator, X, groups, a, b=None, *, n_permutations=19, ci=0.9,
                       n_jobs=None, random_state=None, topic_groups=None, topics=None,
                       feature_names=None, label_method="frex", top_words=3,
                       p_value="adjusted", alpha=0.05, ax=None, **plot_kw):
        """Run :func:`~sklearn_clda.inspection.permutation_test` and plot it.

        Parameters
        ----------
        estimator, X, groups, a, b, n_permutations, ci, n_jobs, random_state
            As in :func:`~sklearn_clda.inspection.permutation_test`.

        topic_groups : dict or array-like of shape (n_components,), default=None
            Test and draw groups of topics (themes), labelled with their
            names, as in :func:`~sklearn_clda.inspection.permutation_test`.

        topics, feature_names, label_method, top_words, p_value, alpha, ax
            As in :meth:`from_results`.

        **plot_kw : dict
            Further keyword arguments of :meth:`plot`.

        Returns
        -------
        display : PermutationTestDisplay
            The plotted display.
        """
        from ..inspection import permutation_test

        check_matplotlib(f"{cls.__name__}.from_estimator")
        require_pandas(f"{cls.__name__}.from_estimator", via="permutation_test")
        result = permutation_test(estimator, X, groups, a, b, n_permutations=n_permutations,
                                  ci=ci, n_jobs=n_jobs, random_state=random_state,
                                  topic_groups=topic_groups)
        return cls.from_results(result, estimator=estimator, topics=topics,
                                feature_names=feature_names, label_method=label_method,
                                top_words=top_words, p_value=p_value, alpha=alpha, ax=ax,
                                **plot_kw)

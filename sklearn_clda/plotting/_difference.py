"""The posterior difference of two collections' topic shares, topic by topic."""

from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import HasMethods, StrOptions, validate_params

from .._corpus import StrictInterval
from ..inspection._labels import LABEL_METHODS
from ..inspection._utils import require_pandas
from ._base import check_matplotlib, check_topics, unwrap_estimator
from ._interval_rows import IntervalRowsMixin
from ._trend import _topic_labels

__all__ = ["CollectionDifferenceDisplay"]


class CollectionDifferenceDisplay(IntervalRowsMixin):
    """The difference of two collections' topic shares, with its intervals.

    One row per topic: the posterior mean of ``pi_ak - pi_bk`` as a point
    and its equal-tailed posterior interval as a line, with a vertical line
    at zero; the topics whose interval leaves out zero are drawn in color,
    the others in grey. This is the picture of stm's
    ``plot.estimateEffect(method="difference")``, drawn from the joint
    posterior draws of :func:`~sklearn_clda.inspection.compare_collections`.

    Use :meth:`from_estimator` to build it from a fitted
    :class:`~sklearn_clda.CompoundLDA` (or several chains of one); the
    constructor takes precomputed values. All attributes are set in
    :meth:`plot`.

    Parameters
    ----------
    difference : array-like of shape (n_topics,)
        Posterior mean of each topic's difference.

    lower, upper : array-like of shape (n_topics,)
        Ends of each difference's interval.

    topics : array-like of int of shape (n_topics,), default=None
        Model indices of the topics, used in the default labels.

    topic_labels : list of str of shape (n_topics,), default=None
        Row labels. ``None`` means ``"Topic k"``.

    a, b : str, default=None
        Names of the two collections, for the axis label (``b=None`` with
        ``a`` given reads "the rest of the corpus").

    interval : float, default=None
        Probability mass of the intervals, for the axis label.

    Attributes
    ----------
    order_ : ndarray of shape (n_topics,)
        Positions (into ``difference``) of the rows, bottom to top.

    clear_ : ndarray of bool of shape (n_topics,)
        Whether each topic's interval leaves out zero.

    errorbars_ : list of matplotlib ErrorbarContainer
        The rows whose interval leaves out zero, then the others (an empty
        group draws nothing and is left out).

    ax_ : matplotlib Axes
        Axes with the plot.

    figure_ : matplotlib Figure
        Figure containing the plot.

    See Also
    --------
    sklearn_clda.inspection.compare_collections : The plotted numbers.
    CollectionTopicDisplay : Each collection's shares.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> from sklearn_clda import CompoundLDA
    >>> from sklearn_clda.datasets import make_compound_corpus
    >>> from sklearn_clda.inspection import compare_collections
    >>> from sklearn_clda.plotting import CollectionDifferenceDisplay
    >>> corpus = make_compound_corpus(n_topics=3, n_features=30, n_collections=2,
    ...                               docs_per_collection=40, doc_length=50,
    ...                               random_state=0)
    >>> clda = CompoundLDA(n_components=3, max_iter=200, thin=2, random_state=0)
    >>> clda = clda.fit(corpus.data, groups=corpus.groups)
    >>> disp = CollectionDifferenceDisplay.from_estimator(clda, 0, 1)
    >>> diff = compare_collections(clda, 0, 1)
    >>> disp.clear_.tolist() == ((diff.lower > 0) | (diff.upper < 0)).tolist()
    True
    >>> disp.ax_.get_xlabel()
    'Share in 0 minus share in 1 (90% interval)'
    >>> plt.close("all")
    """

    def __init__(self, difference, lower, upper, *, topics=None, topic_labels=None, a=None,
                 b=None, interval=None):
        self.difference = difference
        self.lower = lower
        self.upper = upper
        self.topics = topics
        self.topic_labels = topic_labels
        self.a = a
        self.b = b
        self.interval = interval

    @validate_params({"sort": ["boolean"]}, prefer_skip_nested_validation=False)
    def plot(self, ax=None, *, sort=True, errorbar_kw=None):
        """Plot the differences, a row per topic.

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

        Returns
        -------
        display : CollectionDifferenceDisplay
            The display, with the artists stored as attributes.
        """
        return self._plot_rows(ax, sort, errorbar_kw)

    def _axis_label(self):
        if self.a is None:
            label = "Difference of topic shares"
        else:
            other = "the rest of the corpus" if self.b is None else f"{self.b}"
            label = f"Share in {self.a} minus share in {other}"
        if self.interval is not None:
            label += f" ({self.interval:.0%} interval)"
        return label

    @classmethod
    @validate_params(
        {
            "estimator": [HasMethods(["fit"]), list, tuple],
            "a": [str, Integral],
            "b": [str, Integral, None],
            "ci": [StrictInterval(Real, 0, 1, closed="neither")],
            "feature_names": ["array-like", None],
            "label_method": [StrOptions(set(LABEL_METHODS))],
            "top_words": [StrictInterval(Integral, 0, None, closed="left")],
            "topic_groups": [dict, "array-like", None],
        },
        # compare_collections checks the rest; plot_kw is checked by plot.
        prefer_skip_nested_validation=False,
    )
    def from_estimator(cls, estimator, a, b=None, *, topics=None, ci=0.9, feature_names=None,
                       label_method="frex", top_words=3, topic_groups=None, ax=None,
                       **plot_kw):
        """Plot how collection ``a``'s topic shares differ from ``b``'s.

        Parameters
        ----------
        estimator : CompoundLDA, Pipeline, or list of them
            A fitted :class:`~sklearn_clda.CompoundLDA` with groups (Gibbs
            sampler), a Pipeline ending with one, or a list of fits of the
            same model whose draws are pooled
            (:func:`~sklearn_clda.inspection.align_chains`).

        a : str or int
            A collection label, as in ``groups_``.

        b : str, int or None, default=None
            Another collection, or None for the rest of the corpus (see
            :func:`~sklearn_clda.inspection.compare_collections`).

        topics : array-like of int, default=None
            The topics to draw; ``None`` draws every topic.

        ci : float, default=0.9
            Mass of the equal-tailed posterior intervals.

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

        topic_groups : dict or array-like of shape (n_components,), default=None
            Draw groups of topics (themes) instead, each the sum of its
            topics' shares in every draw, labelled with its name (see
            :func:`~sklearn_clda.inspection.compare_collections`);
            ``topics`` then picks among the groups, by position.

        ax : matplotlib Axes, default=None
            Axes to draw on; ``None`` creates a new figure.

        **plot_kw : dict
            Further keyword arguments of :meth:`plot`.

        Returns
        -------
        display : CollectionDifferenceDisplay
            The plotted display.
        """
        from ..inspection import compare_collections

        check_matplotlib(f"{cls.__name__}.from_estimator")
        require_pandas(f"{cls.__name__}.from_estimator", via="compare_collections")
        diff = compare_collections(estimator, a, b, ci=ci, topic_groups=topic_groups)
        chosen = (np.arange(len(diff)) if topics is None
                  else check_topics(topics, len(diff)))
        first = estimator[0] if isinstance(estimator, (list, tuple)) else estimator
        model, pipeline_names = unwrap_estimator(first)
        if topic_groups is None:
            labels = _topic_labels(model, chosen, feature_names, pipeline_names, label_method,
                                   top_words, f"{cls.__name__}.from_estimator")
        else:
            labels = [str(name) for name in diff["topic"].iloc[chosen]]
        rows = diff.iloc[chosen]
        display = cls(rows["mean"].to_numpy(), rows["lower"].to_numpy(),
                      rows["upper"].to_numpy(), topics=chosen, topic_labels=labels,
                      a=str(a), b=None if b is None else str(b), interval=ci)
        return display.plot(ax=ax, **plot_kw)

"""Each topic's share along one document covariate, a curve with its band."""

from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import HasMethods, StrOptions, validate_params

from .._corpus import StrictInterval
from ..inspection._labels import LABEL_METHODS
from ..inspection._utils import require_pandas
from ._bands import draw_bands, legend_outside
from ._base import (
    DEFAULT_N_TOPICS,
    check_matplotlib,
    finite_values,
    select_topics,
    single_axes,
    unwrap_estimator,
)
from ._trend import _topic_labels

__all__ = ["TopicShareCurveDisplay"]

_CURVE_COLUMNS = ("topic", "value", "estimate", "lower", "upper")


def _curve_arrays(curves, caller):
    """``(topics, x, estimate, lower, upper)`` of a table of
    :func:`~sklearn_clda.inspection.topic_share_curves`: the topics in the
    table's order and (n_points, n_topics) arrays; a ValueError for
    another table."""
    missing = [c for c in _CURVE_COLUMNS if c not in getattr(curves, "columns", ())]
    if missing:
        raise ValueError(f"curves passed to {caller} must be a table of topic_share_curves, "
                         f"with columns {list(_CURVE_COLUMNS)}; it lacks {missing}.")
    topics = np.asarray(list(dict.fromkeys(curves["topic"].tolist())))
    n_points = len(curves) // max(topics.size, 1)
    if topics.size == 0 or n_points * topics.size != len(curves):
        raise ValueError(f"curves passed to {caller} must hold the same points for every "
                         "topic, one row each, as topic_share_curves returns them.")
    x = curves["value"].to_numpy(dtype=np.float64)[:n_points]
    arrays = [curves[c].to_numpy(dtype=np.float64).reshape(topics.size, n_points).T
              for c in ("estimate", "lower", "upper")]
    return topics, x, *arrays


class TopicShareCurveDisplay:
    """Each topic's share along one document covariate, with its band.

    One line per topic through its expected share at each value of the
    covariate, with a band between the ends of its interval: the picture
    of stm's ``plot.estimateEffect(method="continuous")``, drawn from
    :func:`~sklearn_clda.inspection.topic_share_curves` (a spline of the
    covariate, so that a share that rises and then falls shows as such).

    Use :meth:`from_estimator` to compute and draw the curves of a fitted
    model, or :meth:`from_curves` to draw a table already computed; the
    constructor takes precomputed values. All attributes are set in
    :meth:`plot`.

    Parameters
    ----------
    x : array-like of shape (n_points,)
        The covariate's values.
    shares : array-like of shape (n_points, n_topics)
        Each shown topic's expected share at each value.
    lower, upper : array-like of shape (n_points, n_topics), default=None
        Ends of the intervals; ``None`` draws no bands.
    topics : array-like of int of shape (n_topics,), default=None
        Model indices of the shown topics, used in the default labels.
    topic_labels : list of str of shape (n_topics,), default=None
        Legend labels. ``None`` means ``"Topic k"``.
    covariate : str, default=None
        The covariate's name, for the axis label.
    interval : float, default=None
        Probability mass of the intervals, for the title.

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
    sklearn_clda.inspection.topic_share_curves : The plotted numbers.
    TopicEffectDisplay : Straight-line effects of covariates, a row per topic.
    CollectionTrendDisplay : Topic shares across ordered collections.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> import numpy as np
    >>> from sklearn_clda import LDAGibbs
    >>> from sklearn_clda.datasets import make_lda_corpus
    >>> from sklearn_clda.plotting import TopicShareCurveDisplay
    >>> corpus = make_lda_corpus(n_topics=3, n_features=30, n_samples=200, doc_length=60,
    ...                          random_state=0)
    >>> lda = LDAGibbs(n_components=3, max_iter=100, random_state=0).fit(corpus.data)
    >>> year = np.random.default_rng(0).uniform(2000, 2020, size=200)
    >>> disp = TopicShareCurveDisplay.from_estimator(lda, corpus.data, year, n_points=20,
    ...                                              random_state=0)
    >>> len(disp.lines_), disp.lines_[0].get_xdata().size
    (3, 20)
    >>> plt.close("all")
    """

    def __init__(self, x, shares, *, lower=None, upper=None, topics=None, topic_labels=None,
                 covariate=None, interval=None):
        self.x = x
        self.shares = shares
        self.lower = lower
        self.upper = upper
        self.topics = topics
        self.topic_labels = topic_labels
        self.covariate = covariate
        self.interval = interval

    def _checked(self):
        """``(x, shares, lower, upper, labels)`` validated against each other."""
        what = "(n_points, n_topics)"
        shares = finite_values(self, "shares", self.shares, what)
        n_points, n_topics = shares.shape
        x = np.asarray(self.x, dtype=np.float64)
        if x.shape != (n_points,) or not np.isfinite(x).all():
            raise ValueError(f"x must hold {n_points} finite values, one per row of shares; "
                             f"got shape {x.shape}.")
        lower = upper = None
        if self.lower is not None or self.upper is not None:
            lower, upper = (finite_values(self, name, getattr(self, name), what)
                            for name in ("lower", "upper"))
            if lower.shape != shares.shape or upper.shape != shares.shape:
                raise ValueError(f"lower and upper must have the shape of shares "
                                 f"{shares.shape}, got {lower.shape} and {upper.shape}.")
        topics = np.arange(n_topics) if self.topics is None else np.asarray(self.topics)
        labels = ([f"Topic {k}" for k in topics] if self.topic_labels is None
                  else [str(label) for label in self.topic_labels])
        if len(labels) != n_topics:
            raise ValueError(f"topic_labels has {len(labels)} entries for {n_topics} topics.")
        return x, shares, lower, upper, labels

    @validate_params({"legend": ["boolean"]}, prefer_skip_nested_validation=False)
    def plot(self, ax=None, *, line_kw=None, fill_between_kw=None, legend=True):
        """Plot the topics' shares along the covariate.

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
        display : TopicShareCurveDisplay
            The display, with the artists stored as attributes.
        """
        check_matplotlib(f"{type(self).__name__}.plot")
        from matplotlib.ticker import MaxNLocator

        x, shares, lower, upper, labels = self._checked()
        fig, ax = single_axes(ax, figsize=(7.6 if legend else 6.4, 4.2))
        self.lines_, self.fill_between_ = draw_bands(ax, x, shares, lower, upper, labels, {},
                                                     line_kw, fill_between_kw)
        ax.set_ylim(bottom=0)
        ax.xaxis.set_major_locator(MaxNLocator(nbins=6))
        ax.set_xlabel("Covariate" if self.covariate is None else str(self.covariate))
        ax.set_ylabel("Topic share")
        ax.grid(True, color="0.92")
        title = "Topic shares along " + ("the covariate" if self.covariate is None
                                         else str(self.covariate))
        if lower is not None and self.interval is not None:
            title += f" ({self.interval:.0%} intervals)"
        ax.set_title(title)
        self.legend_ = legend_outside(ax) if legend else None
        self.ax_, self.figure_ = ax, fig
        return self

    @classmethod
    @validate_params(
        {"curves": [HasMethods(["to_numpy"])], "topics": ["array-like", None],
         "n_topics": [StrictInterval(Integral, 1, None, closed="left")],
         "topic_labels": ["array-like", None]},
        # plot_kw is checked by plot.
        prefer_skip_nested_validation=False,
    )
    def from_curves(cls, curves, *, topics=None, n_topics=DEFAULT_N_TOPICS, topic_labels=None,
                    ax=None, **plot_kw):
        """Plot a table of :func:`~sklearn_clda.inspection.topic_share_curves`.

        Parameters
        ----------
        curves : pandas.DataFrame
            What :func:`~sklearn_clda.inspection.topic_share_curves`
            returned.
        topics : array-like of int, default=None
            The topics drawn (model indices, among the table's); ``None``
            draws the ``n_topics`` whose curves vary most.
        n_topics : int, default=6
            Number of topics drawn when ``topics=None``.
        topic_labels : array-like of str, default=None
            One label per topic of the table, in its order; ``None`` labels
            them "Topic k".
        ax : matplotlib Axes, default=None
            Axes to draw on; ``None`` creates a new figure.
        **plot_kw : dict
            Further keyword arguments of :meth:`plot`.

        Returns
        -------
        display : TopicShareCurveDisplay
            The plotted display.
        """
        caller = f"{cls.__name__}.from_curves"
        check_matplotlib(caller)
        table_topics, x, estimate, lower, upper = _curve_arrays(curves, caller)
        if topic_labels is not None and len(topic_labels) != table_topics.size:
            raise ValueError(f"topic_labels has {len(topic_labels)} entries for the table's "
                             f"{table_topics.size} topics.")
        if topics is None:
            drawn = select_topics(estimate, n_topics)
        else:
            position = {k: i for i, k in enumerate(table_topics.tolist())}
            unknown = [k for k in np.asarray(topics).tolist() if k not in position]
            if unknown:
                raise ValueError(f"topics passed to {caller} are not all in the table: "
                                 f"{unknown} are not among {table_topics.tolist()}.")
            drawn = np.array([position[k] for k in np.asarray(topics).tolist()], dtype=np.intp)
        attrs = getattr(curves, "attrs", {})
        display = cls(x, estimate[:, drawn], lower=lower[:, drawn], upper=upper[:, drawn],
                      topics=table_topics[drawn],
                      topic_labels=None if topic_labels is None
                      else [str(topic_labels[i]) for i in drawn],
                      covariate=attrs.get("covariate"), interval=attrs.get("ci"))
        return display.plot(ax=ax, **plot_kw)

    @classmethod
    @validate_params(
        {
            "estimator": [HasMethods(["fit"])],
            "topics": ["array-like", None],
            "n_topics": [StrictInterval(Integral, 1, None, closed="left")],
            "ci": [StrictInterval(Real, 0, 1, closed="neither")],
            "feature_names": ["array-like", None],
            "label_method": [StrOptions(set(LABEL_METHODS))],
            "top_words": [StrictInterval(Integral, 0, None, closed="left")],
        },
        # topic_share_curves checks the rest; plot_kw is checked by plot.
        prefer_skip_nested_validation=False,
    )
    def from_estimator(cls, estimator, X, covariate, groups=None, *, controls=None,
                       topics=None, n_topics=DEFAULT_N_TOPICS, n_knots=5, degree=3,
                       n_points=50, ci=0.9, n_samples=25, burn_in=10, random_state=None,
                       feature_names=None, label_method="frex", top_words=3, ax=None,
                       **plot_kw):
        """Compute each topic's share along a covariate, and plot it.

        Parameters
        ----------
        estimator : LDAGibbs, CompoundLDA, LatentDirichletAllocation or Pipeline
            A fitted topic model, or a fitted Pipeline ending with one.
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Document-term counts (or the Pipeline's input).
        covariate : array-like of shape (n_samples,)
            One number per document (see
            :func:`~sklearn_clda.inspection.topic_share_curves`).
        groups : array-like of shape (n_samples,), default=None
            The documents' collections, for a CompoundLDA.
        controls : array-like, dict or DataFrame, default=None
            Further covariates, held at their medians along the curves.
        topics : array-like of int, default=None
            The topics to draw; ``None`` draws the ``n_topics`` whose
            curves vary most.
        n_topics : int, default=6
            Number of topics drawn when ``topics=None``.
        n_knots, degree, n_points : int, default=5, 3, 50
            The spline and the points of each curve.
        ci : float, default=0.9
            Mass of the intervals drawn as bands.
        n_samples, burn_in : int, default=25, 10
            Draws of the shares and sweeps before them.
        random_state : int, RandomState instance or None, default=None
            Seeds the draws.
        feature_names : array-like of str, default=None
            Vocabulary for the topic labels; ``None`` uses the Pipeline's
            or ``feature_names_in_`` when available, and no words otherwise.
        label_method : {"prob", "frex", "lift", "score", "relevance"}, \
                default="frex"
            How the label words are chosen.
        top_words : int, default=3
            Words in each topic's label (0 for none).
        ax : matplotlib Axes, default=None
            Axes to draw on; ``None`` creates a new figure.
        **plot_kw : dict
            Further keyword arguments of :meth:`plot`.

        Returns
        -------
        display : TopicShareCurveDisplay
            The plotted display.
        """
        from ..inspection import topic_share_curves

        caller = f"{cls.__name__}.from_estimator"
        check_matplotlib(caller)
        require_pandas(caller, via="topic_share_curves")
        model, pipeline_names = unwrap_estimator(estimator)
        curves = topic_share_curves(estimator, X, covariate, groups, controls=controls,
                                    topics=topics, n_knots=n_knots, degree=degree,
                                    n_points=n_points, prior="covariates",
                                    n_samples=n_samples, burn_in=burn_in, ci=ci,
                                    random_state=random_state)
        table_topics = np.asarray(list(dict.fromkeys(curves["topic"].tolist())))
        labels = _topic_labels(model, table_topics, feature_names, pipeline_names,
                               label_method, top_words, caller)
        return cls.from_curves(curves, topics=topics, n_topics=n_topics, topic_labels=labels,
                               ax=ax, **plot_kw)

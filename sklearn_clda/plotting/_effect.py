"""How one document covariate moves each topic's share, with intervals."""

from numbers import Integral, Real

from sklearn.utils._param_validation import HasMethods, StrOptions, validate_params

from .._corpus import StrictInterval
from ..inspection._labels import LABEL_METHODS
from ..inspection._utils import require_pandas
from ._base import check_matplotlib, unwrap_estimator
from ._interval_rows import IntervalRowsMixin
from ._trend import _topic_labels

__all__ = ["TopicEffectDisplay"]

_EFFECT_COLUMNS = ("topic", "term", "estimate", "lower", "upper")


def _term_rows(effects, term, caller):
    """The rows of ``effects`` (a table of
    :func:`~sklearn_clda.inspection.topic_effects`) for ``term``: by
    default the one term besides the intercept. A ValueError names the
    terms to choose from."""
    missing = [c for c in _EFFECT_COLUMNS if c not in getattr(effects, "columns", ())]
    if missing:
        raise ValueError(f"effects passed to {caller} must be a table of topic_effects, "
                         f"with columns {list(_EFFECT_COLUMNS)}; it lacks {missing}.")
    terms = list(dict.fromkeys(effects["term"].tolist()))
    if term is None:
        slopes = [t for t in terms if t != "intercept"]
        if len(slopes) != 1:
            raise ValueError(f"{caller} draws one term; the table has {terms}, pass "
                             "term=... to choose one.")
        term = slopes[0]
    elif term not in terms:
        raise ValueError(f"term passed to {caller} is {term!r}, not one of the table's "
                         f"terms {terms}.")
    return effects[effects["term"] == term], term


class TopicEffectDisplay(IntervalRowsMixin):
    """How one covariate moves each topic's share, with its intervals.

    One row per topic: the coefficient of the covariate in the regression
    of the topic's share on the documents' covariates, as a point, and its
    interval as a line, with a vertical line at zero; the topics whose
    interval leaves out zero are drawn in color, the others in grey. This
    is the picture of stm's ``plot.estimateEffect(method="difference")``
    for a document covariate, drawn from
    :func:`~sklearn_clda.inspection.topic_effects`.

    Use :meth:`from_estimator` to compute and draw the effects of a fitted
    model, or :meth:`from_effects` to draw a table already computed (one
    term at a time); the constructor takes precomputed values. All
    attributes are set in :meth:`plot`.

    Parameters
    ----------
    estimate : array-like of shape (n_topics,)
        Each topic's coefficient.

    lower, upper : array-like of shape (n_topics,)
        Ends of each coefficient's interval.

    topics : array-like of int of shape (n_topics,), default=None
        Model indices of the topics, used in the default labels.

    topic_labels : list of str of shape (n_topics,), default=None
        Row labels. ``None`` means ``"Topic k"``.

    term : str, default=None
        The covariate's name, for the axis label.

    interval : float, default=None
        Probability mass of the intervals, for the axis label.

    Attributes
    ----------
    order_ : ndarray of shape (n_topics,)
        Positions (into ``estimate``) of the rows, bottom to top.

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
    sklearn_clda.inspection.topic_effects : The plotted numbers.
    CollectionDifferenceDisplay : The same picture for two collections.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> import numpy as np
    >>> from sklearn_clda import LDAGibbs
    >>> from sklearn_clda.datasets import make_lda_corpus
    >>> from sklearn_clda.plotting import TopicEffectDisplay
    >>> corpus = make_lda_corpus(n_topics=3, n_features=30, n_samples=200,
    ...                          doc_length=(30, 90), random_state=0)
    >>> lda = LDAGibbs(n_components=3, max_iter=100, random_state=0).fit(corpus.data)
    >>> length = np.log(corpus.data.sum(axis=1).A1)
    >>> disp = TopicEffectDisplay.from_estimator(lda, corpus.data, {"log length": length},
    ...                                          random_state=0)
    >>> disp.ax_.get_xlabel()
    'Effect of log length on the topic share (90% interval)'
    >>> plt.close("all")
    """

    _value_name, _values_name = "estimate", "estimates"

    def __init__(self, estimate, lower, upper, *, topics=None, topic_labels=None, term=None,
                 interval=None):
        self.estimate = estimate
        self.lower = lower
        self.upper = upper
        self.topics = topics
        self.topic_labels = topic_labels
        self.term = term
        self.interval = interval

    @validate_params({"sort": ["boolean"]}, prefer_skip_nested_validation=False)
    def plot(self, ax=None, *, sort=True, errorbar_kw=None):
        """Plot the coefficients, a row per topic.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes to draw on; ``None`` creates a new figure sized to the
            number of topics.

        sort : bool, default=True
            Order the rows by coefficient, the largest at the top;
            otherwise in the given order, the first at the top.

        errorbar_kw : dict, default=None
            Keyword arguments of :meth:`matplotlib.axes.Axes.errorbar`.

        Returns
        -------
        display : TopicEffectDisplay
            The display, with the artists stored as attributes.
        """
        return self._plot_rows(ax, sort, errorbar_kw)

    def _axis_label(self):
        label = ("Effect on the topic share" if self.term is None
                 else f"Effect of {self.term} on the topic share")
        if self.interval is not None:
            label += f" ({self.interval:.0%} interval)"
        return label

    @classmethod
    @validate_params(
        {"effects": [HasMethods(["to_numpy"])], "term": [str, None],
         "topic_labels": ["array-like", None]},
        # plot_kw is checked by plot.
        prefer_skip_nested_validation=False,
    )
    def from_effects(cls, effects, term=None, *, topic_labels=None, ax=None, **plot_kw):
        """Plot one term of a table of
        :func:`~sklearn_clda.inspection.topic_effects`.

        Parameters
        ----------
        effects : pandas.DataFrame
            What :func:`~sklearn_clda.inspection.topic_effects` returned.

        term : str, default=None
            The term drawn; ``None`` draws the only term besides the
            intercept.

        topic_labels : array-like of str, default=None
            One label per topic of the table, in its order; ``None`` labels
            the rows "Topic k".

        ax : matplotlib Axes, default=None
            Axes to draw on; ``None`` creates a new figure.

        **plot_kw : dict
            Further keyword arguments of :meth:`plot`.

        Returns
        -------
        display : TopicEffectDisplay
            The plotted display.
        """
        check_matplotlib(f"{cls.__name__}.from_effects")
        rows, term = _term_rows(effects, term, f"{cls.__name__}.from_effects")
        ci = getattr(effects, "attrs", {}).get("ci")
        display = cls(rows["estimate"].to_numpy(), rows["lower"].to_numpy(),
                      rows["upper"].to_numpy(), topics=rows["topic"].to_numpy(),
                      topic_labels=None if topic_labels is None else list(topic_labels),
                      term=str(term), interval=ci)
        return display.plot(ax=ax, **plot_kw)

    @classmethod
    @validate_params(
        {
            "estimator": [HasMethods(["fit"])],
            "term": [str, None],
            "ci": [StrictInterval(Real, 0, 1, closed="neither")],
            "feature_names": ["array-like", None],
            "label_method": [StrOptions(set(LABEL_METHODS))],
            "top_words": [StrictInterval(Integral, 0, None, closed="left")],
        },
        # topic_effects checks the rest; plot_kw is checked by plot.
        prefer_skip_nested_validation=False,
    )
    def from_estimator(cls, estimator, X, covariates, groups=None, *, term=None, topics=None,
                       ci=0.9, n_samples=25, burn_in=10, random_state=None,
                       feature_names=None, label_method="frex", top_words=3, ax=None,
                       **plot_kw):
        """Compute how a covariate moves each topic's share, and plot it.

        Parameters
        ----------
        estimator : LDAGibbs, CompoundLDA, LatentDirichletAllocation or Pipeline
            A fitted topic model, or a fitted Pipeline ending with one.

        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Document-term counts (or the Pipeline's input).

        covariates : array-like, dict or DataFrame of shape (n_samples, n_covariates)
            The documents' covariates (see
            :func:`~sklearn_clda.inspection.topic_effects`).

        groups : array-like of shape (n_samples,), default=None
            The documents' collections, for a CompoundLDA.

        term : str, default=None
            The term drawn; ``None`` draws the only covariate.

        topics : array-like of int, default=None
            The topics to draw; ``None`` draws every topic.

        ci : float, default=0.9
            Mass of the equal-tailed intervals.

        n_samples, burn_in, random_state
            As in :func:`~sklearn_clda.inspection.topic_effects`.

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

        ax : matplotlib Axes, default=None
            Axes to draw on; ``None`` creates a new figure.

        **plot_kw : dict
            Further keyword arguments of :meth:`plot`.

        Returns
        -------
        display : TopicEffectDisplay
            The plotted display.
        """
        from ..inspection import topic_effects

        caller = f"{cls.__name__}.from_estimator"
        check_matplotlib(caller)
        require_pandas(caller, via="topic_effects")
        effects = topic_effects(estimator, X, covariates, groups, topics=topics, ci=ci,
                                n_samples=n_samples, burn_in=burn_in,
                                random_state=random_state)
        rows, _ = _term_rows(effects, term, caller)
        model, pipeline_names = unwrap_estimator(estimator)
        labels = _topic_labels(model, rows["topic"].to_numpy(), feature_names,
                               pipeline_names, label_method, top_words, caller)
        return cls.from_effects(effects, term, topic_labels=labels, ax=ax, **plot_kw)

"""Topic shares along one covariate, a smooth curve with its intervals: the
regressions of :func:`topic_effects` on a spline of the covariate, predicted
along it (stm's ``plot.estimateEffect(method="continuous")`` with ``s()``)."""

from numbers import Integral, Real

import numpy as np
from sklearn.preprocessing import SplineTransformer
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import HasMethods, StrOptions, validate_params

from .._corpus import StrictInterval
from ._composition import composition_summary
from ._document_collections import checked_counts
from ._effects import (
    check_rank,
    check_topic_model,
    design_matrix,
    nonempty,
    prior_rows,
    regression_fits,
)
from ._share_draws import ModelPrior, ShareSampler
from ._utils import check_topics, require_pandas, topic_word, unwrap

__all__ = ["topic_share_curves"]

#: The least value some document must give each spline column (B-splines
#: peak at 1 or less).
_REACHED = 1e-6


def _covariate(covariate, n_docs, caller):
    """``(x, name)``: the covariate as a float64 vector of one finite value
    per document, and its name (a Series' name, a one-column DataFrame's
    column, or ``"x"``)."""
    columns = getattr(covariate, "columns", None)
    name = columns[0] if columns is not None and len(columns) == 1 else getattr(
        covariate, "name", None)
    try:
        x = np.asarray(covariate, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"covariate passed to {caller} must be numbers, one per "
                         "document.") from None
    if x.ndim == 2 and x.shape[1] == 1:
        x = x[:, 0]
    if x.shape != (n_docs,):
        raise ValueError(f"covariate passed to {caller} must be one number per document "
                         f"({n_docs}), got shape {np.shape(covariate)}.")
    if not np.isfinite(x).all():
        raise ValueError(f"covariate passed to {caller} has values that are not finite "
                         "(NaN or infinite).")
    return x, "x" if name is None else str(name)


class _Design:
    """The regression's design: an intercept, the covariate's B-spline
    basis (uniform knots over its range, the last function left out as the
    intercept stands for it) and the controls; and the design rows of the
    points of the curve, the controls at their medians."""

    def __init__(self, x, name, controls, control_names, n_knots, degree, caller):
        distinct = np.unique(x).size
        n_basis = n_knots + degree - 2
        if distinct <= n_basis:
            raise ValueError(
                f"{caller}: the covariate {name!r} has {distinct} distinct value(s) among "
                f"the documents with words, too few for a spline of {n_basis} columns "
                f"(n_knots={n_knots}, degree={degree}); lower n_knots or degree, or use "
                "topic_effects for a straight line."
            )
        self.spline = SplineTransformer(n_knots=n_knots, degree=degree,
                                        include_bias=False).fit(x[:, None])
        self.controls = controls
        self.matrix = np.hstack([np.ones((x.size, 1)), self.spline.transform(x[:, None]),
                                 controls])
        self.names = ["intercept", *(f"{name} spline {i}" for i in range(n_basis)),
                      *control_names]

    def check_rank(self, caller):
        """:func:`check_rank` of the design, a spline column determined by
        the others (a piece of the range without documents) said as such."""
        n_spline = len(self.names) - self.controls.shape[1]
        # (a B-spline's values are at most 1: one that no document reaches
        # 1e-6 of has no documents on its piece, whatever a rescaling says)
        reached = np.abs(self.matrix[:, 1:n_spline]).max(axis=0, initial=0.0) >= _REACHED
        try:
            if not reached.all():
                raise ValueError
            check_rank(self.matrix[:, :n_spline], self.names[:n_spline], caller)
        except ValueError:
            raise ValueError(
                f"{caller}: the spline of {self.names[1].rsplit(' spline', 1)[0]!r} has "
                "pieces of its range with too few documents to fit (the covariate's values "
                "leave gaps); lower n_knots, or transform the covariate (a logarithm, "
                "ranks)."
            ) from None
        check_rank(self.matrix, self.names, caller)

    def at(self, values):
        """The design rows of the covariate at ``values``, the controls at
        their medians."""
        held = np.median(self.controls, axis=0) if self.controls.shape[1] else []
        return np.hstack([np.ones((values.size, 1)), self.spline.transform(values[:, None]),
                          np.tile(held, (values.size, 1))])


@validate_params(
    {
        "estimator": [HasMethods(["fit"])],
        "X": ["array-like", "sparse matrix"],
        "covariate": ["array-like"],
        "groups": ["array-like", None],
        "controls": ["array-like", None],
        "topics": ["array-like", None],
        "n_knots": [StrictInterval(Integral, 2, 50, closed="both")],
        "degree": [StrictInterval(Integral, 1, 5, closed="both")],
        "n_points": [StrictInterval(Integral, 2, 1000, closed="both")],
        "prior": [StrOptions({"covariates", "model"})],
        "n_samples": [StrictInterval(Integral, 1, None, closed="left")],
        "burn_in": [StrictInterval(Integral, 0, None, closed="left")],
        "ci": [StrictInterval(Real, 0, 1, closed="neither")],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def topic_share_curves(estimator, X, covariate, groups=None, *, controls=None, topics=None,
                       n_knots=5, degree=3, n_points=50, prior="covariates", n_samples=25,
                       burn_in=10, ci=0.9, random_state=None):
    """Each topic's expected share along one covariate, with its interval.

    The curve of stm's ``plot.estimateEffect(method="continuous")`` for a
    spline of the covariate (stm's ``s()``): each topic's share of each
    document is regressed, as :func:`topic_effects` does, on a B-spline
    basis of the covariate (and on ``controls``), by the method of
    composition, and the fit is predicted at ``n_points`` values evenly
    spaced from the covariate's smallest to its largest value, the
    controls at their medians. A share that rises and then falls (a topic
    of an event, along the documents' dates) shows as such, which a
    straight line cannot.

    Parameters
    ----------
    estimator : LDAGibbs, CompoundLDA, LatentDirichletAllocation or Pipeline
        A fitted topic model, or a fitted Pipeline ending with one (``X``
        is then its input, e.g. texts). A CompoundLDA gives each document
        its collection's prior ``gamma * pi_j``, as ``transform`` does.

    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Document-term counts (or the Pipeline's input).

    covariate : array-like of shape (n_samples,)
        One finite number per document: a date as a decimal year, an age.
        A Series' name (or a one-column DataFrame's column) names it.

    groups : array-like of shape (n_samples,), default=None
        The documents' collections, for a CompoundLDA.

    controls : array-like, dict or DataFrame of shape (n_samples, n_controls), default=None
        Further covariates in the regression, held at their medians along
        the curve (as stm does for the other terms).

    topics : array-like of int, default=None
        The topics reported; ``None`` reports every topic.

    n_knots : int, default=5
        Knots of the spline, evenly spaced over the covariate's range
        (:class:`~sklearn.preprocessing.SplineTransformer`); the basis has
        ``n_knots + degree - 2`` columns besides the intercept.

    degree : int, default=3
        Degree of the spline's pieces (1: a broken line).

    n_points : int, default=50
        Points of each curve.

    prior : {"covariates", "model"}, default="covariates"
        The prior of the tokens' topics, as for :func:`topic_effects`;
        "covariates" follows the spline (and the collections).

    n_samples : int, default=25
        Draws of the shares (and regressions).

    burn_in : int, default=10
        Gibbs sweeps run before the first draw.

    ci : float, default=0.9
        Mass of the equal-tailed intervals.

    random_state : int, RandomState instance or None, default=None
        Seeds the draws; an int gives the same table every call.

    Returns
    -------
    table : pandas.DataFrame
        One row per topic and point, in the order of ``topics`` and of the
        points, with columns ``topic``, ``value`` (the covariate's value),
        ``estimate`` (the expected share's mean over the method of
        composition's mixture), ``std_error`` (its standard deviation),
        ``lower`` and ``upper`` (its equal-tailed ``ci`` interval,
        computed exactly for the mixture of the fits' scaled t
        distributions). ``attrs`` holds ``covariate`` (its name), ``ci``,
        ``n_samples``, ``n_documents``, ``df``, ``prior``, ``n_knots`` and
        ``degree``.

    Raises
    ------
    ValueError
        If the covariate is not one finite number per document, has too
        few distinct values for the spline, or a column (of the spline or
        the controls) is determined by the others; as
        :func:`topic_effects` otherwise.

    Warns
    -----
    UserWarning
        When documents have no word of the vocabulary: they are left out.
    ConvergenceWarning
        When the covariate prior would need more than 50 refits (see
        :func:`topic_effects`).

    See Also
    --------
    topic_effects : Straight-line slopes, for any number of covariates.
    sklearn_clda.plotting.TopicShareCurveDisplay : Draws the curves.

    Notes
    -----
    The interval of a point is that of a combination of the coefficients,
    the point's design row, whose sandwich variance each fit gives
    exactly; its cost is that of :func:`topic_effects` on the spline's
    columns, plus ``n_points`` such variances per fit. Near the ends of
    the range a spline rests on fewer documents, and its intervals widen.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_clda import LDAGibbs
    >>> from sklearn_clda.datasets import make_lda_corpus
    >>> from sklearn_clda.inspection import topic_share_curves
    >>> corpus = make_lda_corpus(n_topics=3, n_features=30, n_samples=200, doc_length=60,
    ...                          random_state=0)
    >>> lda = LDAGibbs(n_components=3, max_iter=100, random_state=0).fit(corpus.data)
    >>> year = np.random.default_rng(0).uniform(2000, 2020, size=200)
    >>> curves = topic_share_curves(lda, corpus.data, year, n_points=5, random_state=0)
    >>> curves.columns.tolist()
    ['topic', 'value', 'estimate', 'std_error', 'lower', 'upper']
    >>> curves.shape
    (15, 6)
    >>> bool((curves.lower <= curves.estimate).all() and (curves.estimate <= curves.upper).all())
    True
    """
    caller = "topic_share_curves"
    pd = require_pandas(caller)
    model, pre, _ = unwrap(estimator)
    check_topic_model(model, caller)
    components = topic_word(model, caller)
    counts = checked_counts(model, pre, X, caller)
    n_docs = counts.shape[0]
    x, name = _covariate(covariate, n_docs, caller)
    if controls is None:
        held, held_names = np.empty((n_docs, 0)), []
    else:
        held, held_names = design_matrix(pd.DataFrame(dict(controls)) if isinstance(
            controls, dict) else controls, n_docs, False, caller)
    doc_priors, doc_rows = prior_rows(model, groups, n_docs, caller)
    chosen = check_topics(topics, components.shape[0]) if topics is not None else None
    counts, columns, doc_rows = nonempty(counts, np.c_[x, held], doc_rows, caller)
    design = _Design(columns[:, 0], name, columns[:, 1:], held_names, n_knots, degree, caller)
    design.check_rank(caller)
    sampler = ShareSampler(
        np.ascontiguousarray((components / components.sum(axis=1, keepdims=True)).T),
        counts, ModelPrior(doc_priors, doc_rows), check_random_state(random_state), caller)
    points = np.linspace(columns[:, 0].min(), columns[:, 0].max(), n_points)
    unit = np.abs(design.matrix).max(axis=0)  # (any units of the controls)
    values, scale = regression_fits(sampler, design.matrix / unit, prior, n_samples, burn_in,
                                    caller, contrasts=(design.at(points) / unit).T)
    n, p = design.matrix.shape
    estimate, std_error, lower, upper, _ = composition_summary(values, scale, ci, n - p)
    chosen = np.arange(components.shape[0]) if chosen is None else chosen
    table = pd.DataFrame({
        "topic": np.repeat(chosen, n_points), "value": np.tile(points, chosen.size),
        **{column: summary[:, chosen].T.ravel() for column, summary in (
            ("estimate", estimate), ("std_error", std_error), ("lower", lower),
            ("upper", upper))},
    })
    table.attrs.update(covariate=name, ci=float(ci), n_samples=int(n_samples),
                       n_documents=int(n), df=int(n - p), prior=prior, n_knots=int(n_knots),
                       degree=int(degree))
    return table

"""How document covariates move topic shares: regressions of ``theta`` with
its uncertainty, by the method of composition (stm's ``estimateEffect``)."""

import warnings
from collections.abc import Mapping
from numbers import Integral, Real

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import HasMethods, StrOptions, validate_params

from .._corpus import StrictInterval
from ._composition import WeightedFits, composition_summary
from ._document_collections import checked_counts
from ._share_draws import MAX_ROUNDS, ModelPrior, ShareSampler
from ._utils import check_topics, require_pandas, topic_word, unwrap

__all__ = ["topic_effects"]


def design_matrix(covariates, n_docs, fit_intercept, caller):
    """``(design, names)``: the covariates as a float64 (n_docs, p) matrix,
    with a first column of ones when ``fit_intercept``, and the terms'
    names (a DataFrame's columns, a Series' name, else ``x0, x1, ...``).

    A ValueError names what a regression cannot use: a row count other
    than the documents', a column that is not numeric or a value that is
    not finite (:func:`check_rank` checks the columns against each
    other)."""
    names = _column_names(covariates)
    try:
        values = np.asarray(covariates, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(
            f"covariates passed to {caller} must be numbers; encode a categorical "
            "column as indicator columns first, e.g. with pandas.get_dummies(..., "
            "drop_first=True, dtype=float) or sklearn's OneHotEncoder(drop='first')."
        ) from None
    if values.ndim == 1:
        values = values[:, None]
    if values.ndim != 2 or values.shape[0] != n_docs:
        raise ValueError(
            f"covariates passed to {caller} must have one row per document ({n_docs}), "
            f"got shape {np.shape(covariates)}."
        )
    if names is None or len(names) != values.shape[1]:
        names = [f"x{i}" for i in range(values.shape[1])]
    bad = np.flatnonzero(~np.isfinite(values).all(axis=0))
    if bad.size:
        raise ValueError(f"covariates passed to {caller} has values that are not finite "
                         f"(NaN or infinite) in column {names[bad[0]]!r}.")
    if fit_intercept:
        values = np.hstack([np.ones((n_docs, 1)), values])
        names = ["intercept", *names]
    return values, names


def _column_names(covariates):
    """The terms' names of a DataFrame or a named Series, else None."""
    columns = getattr(covariates, "columns", None)
    if columns is not None:
        return [str(c) for c in columns]
    name = getattr(covariates, "name", None)
    return None if name is None or np.ndim(covariates) != 1 else [str(name)]


def check_rank(design, names, caller):
    """A ValueError naming the first column that the columns before it
    determine (a constant beside the intercept, a copy, a sum of others),
    or saying that there are too few documents for the terms."""
    n_docs, n_terms = design.shape
    if n_terms == 0:
        raise ValueError(f"{caller} needs at least one covariate or fit_intercept=True.")
    if n_docs < n_terms + 3:
        raise ValueError(
            f"{caller} regresses topic shares on {n_terms} terms and needs at least "
            f"{n_terms + 3} documents with words of the vocabulary (for standard errors, "
            f"more than 2 degrees of freedom), got {n_docs}."
        )
    scale = np.abs(design).max(axis=0)
    scaled = design / np.where(scale > 0, scale, 1.0)
    if np.linalg.matrix_rank(scaled) == n_terms:
        return
    for j in range(n_terms):
        if np.linalg.matrix_rank(scaled[:, :j + 1]) <= j:
            others = "the columns before it" if j else "nothing (it is all zeros)"
            raise ValueError(
                f"covariates passed to {caller}: column {names[j]!r} is determined by "
                f"{others}{' (with the intercept)' if names[0] == 'intercept' and j else ''};"
                " leave it out (a constant column beside the intercept, a copy, or one "
                "indicator per category of a variable with the intercept are such)."
            )


def check_topic_model(model, caller):
    """A ValueError unless ``model`` is one whose documents' prior the
    share draws know (fitted or not is checked by ``topic_word``)."""
    if not (hasattr(model, "_inference_prior") or hasattr(model, "doc_topic_prior")):
        raise ValueError(f"{caller} needs a fitted LDAGibbs, CompoundLDA or scikit-learn "
                         f"LatentDirichletAllocation, got {type(model).__name__}.")


def prior_rows(model, groups, n_docs, caller):
    """``(prior_rows, doc_rows)``: the documents' Dirichlet priors over the
    topics, as the model's ``transform`` uses them (a collection's ``gamma
    pi_j`` for CompoundLDA), or scikit-learn's LDA's ``doc_topic_prior_``."""
    if groups is not None and not hasattr(model, "collection_topic_"):
        raise ValueError(f"groups passed to {caller} are collection labels for a "
                         f"CompoundLDA; {type(model).__name__} has no collections, pass "
                         "groups=None.")
    if hasattr(model, "_inference_prior"):
        rows, doc_rows = model._inference_prior(groups, n_docs, caller)
    else:
        K = np.shape(model.components_)[0]
        rows = np.broadcast_to(np.asarray(model.doc_topic_prior_, dtype=np.float64), (1, K))
        doc_rows = np.zeros(n_docs, dtype=np.intp)
    rows = np.asarray(rows, dtype=np.float64)
    if not (np.isfinite(rows).all() and (rows >= 0).all() and (rows.sum(axis=1) > 0).all()):
        raise ValueError(f"{caller} needs the model's document prior to be finite, "
                         f"non-negative and positive in sum; {type(model).__name__} has "
                         "another (set by hand?).")
    return rows, doc_rows


def nonempty(counts, design, doc_rows, caller):
    """The documents with tokens, their design rows and prior rows; a
    warning says how many empty ones (no word of the vocabulary) are left
    out, since their shares would be their prior's and nothing else."""
    keep = np.diff(counts.indptr) > 0
    if not keep.all():
        warnings.warn(
            f"{caller} leaves out {int((~keep).sum())} of {keep.size} documents with no "
            "word of the model's vocabulary: their topic shares are their prior's, not "
            "measured, and would only add noise to the regression.",
            UserWarning,
            stacklevel=3,
        )
    return counts[keep], design[keep], doc_rows[keep]


def _settled_prior(sampler, design, caller):
    """The covariate prior of ``sampler.settle`` on ``design``, to which the
    indicators of the model's prior rows (the collections) are added when
    there are several; a ConvergenceWarning if it did not settle."""
    labels, positions = np.unique(sampler.first_prior.doc_rows, return_inverse=True)
    if labels.size > 1:
        design = np.hstack([design, np.eye(labels.size)[positions]])
    prior, settled = sampler.settle(design)
    if not settled:
        warnings.warn(
            f"{caller}: the documents' words say so little against the model's prior "
            f"(short documents, topics that share words) that the prior following the "
            f"covariates would need more than {MAX_ROUNDS} refits to settle; the slopes "
            "may still lean toward 0. Compare with prior='model', which leans more.",
            ConvergenceWarning,
            stacklevel=3,
        )
    return prior


def regression_fits(sampler, design, prior, n_samples, burn_in, caller, contrasts=None):
    """``(values, scale)`` of :meth:`WeightedFits.coefficients`: ``burn_in``
    sweeps under the model's prior, then (with ``prior="covariates"``) the
    covariate prior settled, then one weighted fit per sweep of
    ``n_samples``, each document weighted by ``n_d / (n_d + mass_d)``, the
    weight its shares get against the prior's ``mass_d``; of the
    coefficients, or of their ``contrasts``."""
    model_prior = sampler.first_prior
    sampler.burn(burn_in, model_prior)
    draw_prior = _settled_prior(sampler, design, caller) if prior == "covariates" else model_prior
    weights = sampler.lengths / (sampler.lengths + model_prior.mass)
    fits = WeightedFits(design, weights, n_samples, sampler.n_topics, caller, contrasts)
    for lo, hi, s, shares in sampler.share_draws(n_samples, draw_prior):
        fits.add(lo, hi, s, shares)
    return fits.coefficients()


def _table(pd, summary, names, topics):
    """One row per topic (of ``topics``) and term from the (p, K) arrays
    of :func:`composition_summary`."""
    columns = dict(zip(("estimate", "std_error", "lower", "upper", "p_value"),
                       (values[:, topics].T.ravel() for values in summary)))
    return pd.DataFrame({"topic": np.repeat(topics, len(names)),
                         "term": np.tile(np.asarray(names, dtype=object), topics.size),
                         **columns})


@validate_params(
    {
        "estimator": [HasMethods(["fit"])],
        "X": ["array-like", "sparse matrix"],
        "covariates": ["array-like"],
        "groups": ["array-like", None],
        "topics": ["array-like", None],
        "fit_intercept": ["boolean"],
        "prior": [StrOptions({"covariates", "model"})],
        "n_samples": [StrictInterval(Integral, 1, None, closed="left")],
        "burn_in": [StrictInterval(Integral, 0, None, closed="left")],
        "ci": [StrictInterval(Real, 0, 1, closed="neither")],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def topic_effects(estimator, X, covariates, groups=None, *, topics=None, fit_intercept=True,
                  prior="covariates", n_samples=25, burn_in=10, ci=0.9, random_state=None):
    """How document covariates move topic shares, with the shares' uncertainty.

    Each topic's share of each document is regressed on the documents'
    covariates, the question of stm's ``estimateEffect``. A document's
    shares are not observed but inferred from its words, more surely for a
    long document than for a short one, so the coefficients follow the
    method of composition (Tanner 1996, as stm does): ``n_samples`` draws of
    the topics of every document's tokens from their posterior given its
    words (Gibbs sweeps with the topics held fixed), and per draw one
    weighted least-squares fit of the documents' shares of those topics,
    ``n_dk / n_d``, each document weighted by ``n_d / (n_d + mass_d)``
    (``mass_d`` the prior's total) and with heteroskedasticity-robust
    (HC1) standard errors. The coefficients' distribution is the mixture
    of the fits' sampling distributions, which stm samples once per fit;
    here its mean, standard deviation and quantiles are computed exactly,
    so they carry the regression's uncertainty and that of the shares
    with no further sampling noise.

    Use it for covariates that vary within collections (a date, an
    author's trait, a document's length). For the collections themselves,
    :func:`compare_collections` and :func:`collection_trend` read their
    mixtures' posterior directly.

    Parameters
    ----------
    estimator : LDAGibbs, CompoundLDA, LatentDirichletAllocation or Pipeline
        A fitted topic model, or a fitted Pipeline ending with one (``X``
        is then its input, e.g. texts). A CompoundLDA gives each document
        its collection's prior ``gamma * pi_j``, as ``transform`` does.

    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Document-term counts (or the Pipeline's input).

    covariates : array-like, dict or DataFrame of shape (n_samples, n_covariates)
        One row of numbers per document. The names of a DataFrame's columns
        (or a dict's keys, read as one, or a Series' name) name the terms,
        else ``x0, x1, ...``. Categorical
        variables go in as indicator columns (``pandas.get_dummies(...,
        drop_first=True)``), a smooth curve as a spline basis
        (:class:`~sklearn.preprocessing.SplineTransformer`).

    groups : array-like of shape (n_samples,), default=None
        The documents' collections, for a CompoundLDA (see its
        ``transform``).

    topics : array-like of int, default=None
        The topics reported; ``None`` reports every topic.

    fit_intercept : bool, default=True
        Whether to add a first term ``intercept`` of ones.

    prior : {"covariates", "model"}, default="covariates"
        The prior of the tokens' topics. "model" is the model's own (as
        ``transform``'s), which knows nothing of the covariates: where a
        document's words say little (few tokens, topics that share words)
        its topics lean toward the corpus's (or its collection's) mixture,
        and every slope toward 0. "covariates" (empirical Bayes, as stm's
        prevalence model) gives each document a prior of the model's mass
        whose mean follows the covariates (and the collections, for a
        CompoundLDA): a least-squares fit of the documents' posterior mean
        shares, refitted until what is left of the model prior's pull is
        below 1% (measured from the refits' successive changes; 3 to 50
        refits of two sweeps each).

    n_samples : int, default=25
        Draws of the shares (and regressions), stm's ``nsims``. More give
        steadier intervals.

    burn_in : int, default=10
        Gibbs sweeps run before the first draw.

    ci : float, default=0.9
        Mass of the equal-tailed intervals.

    random_state : int, RandomState instance or None, default=None
        Seeds the draws; an int gives the same table every call.

    Returns
    -------
    table : pandas.DataFrame
        One row per topic and term, in the order of ``topics`` (increasing
        by default) and of the terms, with columns ``topic``, ``term``,
        ``estimate`` (the coefficient's mean), ``std_error`` (its standard
        deviation), ``lower`` and ``upper`` (its equal-tailed ``ci``
        interval) and ``p_value`` (twice the smaller of its masses below
        and above 0: the interval leaves out 0 exactly when ``p_value < 1
        - ci``). Each fit's sampling distribution is Student's t with ``df
        = n - p`` degrees of freedom, as in stm's ``summary``. ``attrs``
        holds ``ci``, ``n_samples``, ``n_documents`` (those regressed),
        ``df`` and ``prior``.

    Raises
    ------
    ValueError
        If ``covariates`` do not have one finite numeric row per document,
        if a column is determined by the others, if there are fewer
        than ``p + 3`` documents with words for ``p`` terms, if ``X`` is not a matrix of counts
        of the model's vocabulary, or ``groups`` are given for a model
        without collections.

    Warns
    -----
    UserWarning
        When documents have no word of the vocabulary: they are left out.
    ConvergenceWarning
        When the covariate prior would need more than 50 refits: its
        slopes may still lean toward 0.

    See Also
    --------
    compare_collections : The difference of two collections' topic shares.
    collection_trend : Topic shares' trend across ordered collections.

    Notes
    -----
    The topics are held at the model's ``components_`` (normalized), so
    their own uncertainty is not carried, as in stm. A linear model of
    shares is a first look, not a model of compositions: shares near 0 or
    1 bend any line. The user guide measures the intervals' coverage and
    the slopes' shrinkage under both priors. The cost is that of
    ``burn_in + n_samples`` Gibbs sweeps over ``X`` with the topics fixed,
    O(tokens x topics) each, compiled, plus two per refit of the
    covariate prior; the assignments of every token are kept between
    sweeps, 12 bytes a token.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_clda import LDAGibbs
    >>> from sklearn_clda.datasets import make_lda_corpus
    >>> from sklearn_clda.inspection import topic_effects
    >>> corpus = make_lda_corpus(n_topics=3, n_features=30, n_samples=200, doc_length=60,
    ...                          random_state=0)
    >>> lda = LDAGibbs(n_components=3, max_iter=100, random_state=0).fit(corpus.data)
    >>> x = np.random.default_rng(0).normal(size=200)   # unrelated to the topics
    >>> table = topic_effects(lda, corpus.data, x, random_state=0)
    >>> table.columns.tolist()
    ['topic', 'term', 'estimate', 'std_error', 'lower', 'upper', 'p_value']
    >>> table["term"].unique().tolist()
    ['intercept', 'x0']
    >>> slopes = table[table.term == "x0"]
    >>> bool(((slopes.lower < 0) & (slopes.upper > 0)).all())
    True
    """
    caller = "topic_effects"
    pd = require_pandas(caller)
    model, pre, _ = unwrap(estimator)
    if isinstance(covariates, Mapping):
        covariates = pd.DataFrame(covariates)
    check_topic_model(model, caller)
    components = topic_word(model, caller)
    counts = checked_counts(model, pre, X, caller)
    design, names = design_matrix(covariates, counts.shape[0], fit_intercept, caller)
    doc_priors, doc_rows = prior_rows(model, groups, counts.shape[0], caller)
    K = np.shape(model.components_)[0]
    chosen = np.arange(K) if topics is None else check_topics(topics, K)
    counts, design, doc_rows = nonempty(counts, design, doc_rows, caller)
    check_rank(design, names, caller)
    sampler = ShareSampler(
        np.ascontiguousarray((components / components.sum(axis=1, keepdims=True)).T),
        counts, ModelPrior(doc_priors, doc_rows), check_random_state(random_state), caller)
    # Columns scaled to a largest value of 1 for the fits, whatever their units.
    unit = np.abs(design).max(axis=0)
    coef, scale = regression_fits(sampler, design / unit, prior, n_samples, burn_in, caller)
    n_docs, p = design.shape
    *values, p_value = composition_summary(coef, scale, ci, n_docs - p)
    with np.errstate(over="ignore"):
        values = [v / unit[:, None] for v in values]
    if not all(np.isfinite(v).all() for v in values):
        raise ValueError(f"covariates passed to {caller} are so small that their "
                         "coefficients overflow; give them in larger units.")
    table = _table(pd, (*values, p_value), names, chosen)
    table.attrs.update(ci=float(ci), n_samples=int(n_samples), n_documents=int(n_docs),
                       df=int(n_docs - p), prior=prior)
    return table

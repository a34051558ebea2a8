"""Taddy's residual dispersion of a topic model (stm's ``checkResiduals``)."""

import warnings
from numbers import Real

import numpy as np
from scipy.stats import chi2
from sklearn.utils import Bunch
from sklearn.utils._param_validation import HasMethods, validate_params

from .._chunking import budget_pieces
from .._corpus import StrictInterval
from ._perplexity import _check_theta_phi
from ._topics import _check_count_matrix, _check_topic_model, _infer_doc_topic

__all__ = ["residual_dispersion", "residual_dispersion_from_estimates"]

# float64 temporaries of a piece of documents, per document and word: the
# word probabilities, the expected counts and the residual terms.
_BYTES_PER_CELL = 3 * 8


def _pearson_sum(theta, phi, X, tol):
    """The residual sum of squares of ``X`` under ``theta @ phi`` and the
    number of cells whose expected count exceeds ``tol``.

    ``theta`` (n_docs, K) and ``phi`` (K, V) are row-stochastic, ``X``
    canonical CSR counts. Every cell ``(d, w)`` of a document with
    ``m_d`` tokens adds the Pearson term of a binomial count::

        q = theta @ phi                    # the documents' word probabilities
        mu = m[:, None] * q                # expected counts
        terms = (X - mu) ** 2 / (mu * (1 - q))
        statistic = terms.sum()            # with 0 / 0 = 0, a / 0 = inf, and inf
                                           # for a sum past the largest double
        n_cells = np.count_nonzero(mu > tol)

    computed by pieces of documents (the counts are zero outside the
    nonzeros of ``X``, where a term is ``mu / (1 - q)``).
    """
    m = np.asarray(X.sum(axis=1), dtype=np.float64).ravel()
    statistic, n_cells = 0.0, 0
    for lo, hi in budget_pieces(np.arange(X.shape[0] + 1), _BYTES_PER_CELL * X.shape[1]):
        q = np.clip(theta[lo:hi] @ phi, 0.0, 1.0)
        mu = m[lo:hi, None] * q
        n_cells += int(np.count_nonzero(mu > tol))
        block = X[lo:hi]
        rows = np.repeat(np.arange(hi - lo), np.diff(block.indptr))
        cols = block.indices
        excess = (block.data - mu[rows, cols]) ** 2
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            terms = np.where(mu > 0, mu / (1.0 - q), 0.0)
            terms[rows, cols] = np.where(
                excess > 0, excess / (mu[rows, cols] * (1.0 - q[rows, cols])), 0.0)
            statistic += float(terms.sum())  # past the largest double: inf
    return statistic, n_cells


def _dispersion(theta, phi, X, tol, caller, stacklevel):
    """The result of the public functions, from checked inputs (NaN
    dispersion and p-value where there are no degrees of freedom left,
    with a warning at ``stacklevel`` unless it is None)."""
    n_docs = int(np.count_nonzero(np.diff(X.indptr)))
    if n_docs == 0:
        raise ValueError(
            f"X passed to {caller} contains no tokens; the residual dispersion "
            "is undefined."
        )
    statistic, n_cells = _pearson_sum(theta, phi, X, tol)
    result = _dispersion_from_sum(statistic, n_cells, n_docs, *phi.shape)
    if stacklevel is not None and np.isnan(result.dispersion):
        warnings.warn(
            f"{caller}: the model has {result.n_params:,} free parameters (topic "
            f"mixtures and topics), which with the {phi.shape[1]:,} words leaves no "
            f"degrees of freedom in the {n_cells:,} cells whose expected count exceeds "
            f"tol={tol}; the dispersion and p-value are NaN. It takes fewer topics, "
            "more or longer documents, or a smaller tol.",
            UserWarning,
            stacklevel=stacklevel,
        )
    return result


def estimator_dispersion(estimator, X, groups, tol, caller, warn=True):
    """:func:`residual_dispersion` after its parameters' validation (its
    warning left out unless ``warn``)."""
    _check_topic_model(estimator, caller)
    counts = _check_count_matrix(X, "X", caller)
    theta = _infer_doc_topic(estimator, X, groups, caller)
    theta, phi = _check_theta_phi(theta, estimator.components_, counts, caller,
                                  names=("transform(X)", "components_", "X"))
    # (the caller's caller: the user, past validate_params' wrapper)
    return _dispersion(theta, phi, counts, float(tol), caller, 5 if warn else None)


def _dispersion_from_sum(statistic, n_cells, n_docs, n_topics, n_words):
    """The dispersion and its test from the residual sum of squares and the
    number of cells above the tolerance: ``df = n_cells - n_words -
    n_params`` with ``n_params = n_docs (K - 1) + K (V - 1)``, as stm
    counts them."""
    n_params = n_docs * (n_topics - 1) + n_topics * (n_words - 1)
    df = n_cells - n_words - n_params
    if df > 0:
        dispersion, pvalue = statistic / df, float(chi2.sf(statistic, df))
    else:
        dispersion = pvalue = float("nan")
    return Bunch(dispersion=float(dispersion), pvalue=pvalue, df=int(df),
                 statistic=float(statistic), n_cells=int(n_cells), n_params=int(n_params))


_RESULT_DOC = """
    result : :class:`~sklearn.utils.Bunch`
        With attributes:

        dispersion : float
            ``statistic / df``: about 1 when the documents vary as the model
            says, above 1 when they vary more (too few topics). NaN, with a
            warning, when ``df <= 0``.
        pvalue : float
            ``P(chi2(df) >= statistic)``, the chance of a statistic at least
            this large if the model were right. NaN when ``df <= 0``.
        df : int
            Degrees of freedom, ``n_cells - n_features - n_params``.
        statistic : float
            The sum of squared Pearson residuals over all documents and
            words; ``inf`` when a word the model gives probability zero
            occurs in a document.
        n_cells : int
            Document-word cells whose expected count exceeds ``tol``.
        n_params : int
            ``n_docs * (n_topics - 1) + n_topics * (n_features - 1)``, the
            topic mixtures' and the topics' free parameters (``n_docs``: the
            documents with a token).
"""


@validate_params(
    {
        "estimator": [HasMethods(["fit", "transform"])],
        "X": ["array-like", "sparse matrix"],
        "groups": ["array-like", None],
        "tol": [StrictInterval(Real, 0, None, closed="left")],
    },
    # The estimator's transform is called: keep its own validation.
    prefer_skip_nested_validation=False,
)
def residual_dispersion(estimator, X, groups=None, *, tol=0.01):
    """Residual dispersion of a fitted topic model on documents (stm's ``checkResiduals``).

    Taddy's (2012) check of the number of topics. If the documents were
    drawn from the model, each word count ``x_dw`` of a document with
    ``m_d`` tokens would be binomial, with mean ``mu_dw = m_d q_dw`` and
    variance ``mu_dw (1 - q_dw)``, where ``q_d = theta_d @ phi`` are the
    document's word probabilities. The squared Pearson residuals
    ``(x_dw - mu_dw)^2 / (mu_dw (1 - q_dw))``, summed over all documents
    and words, then make a statistic of about ``df`` (chi-squared), and
    their ratio, the *dispersion*, is about 1. Above 1, the documents vary
    more than the topics can explain, which says that there are too few
    topics. Here ``theta_d`` is inferred by ``estimator.transform(X)`` and
    ``phi`` is the row-normalized ``estimator.components_``.

    As in Taddy's paper and stm, the degrees of freedom count only the
    cells whose expected count exceeds ``tol`` (a cell of tiny expected
    count adds 1 to the statistic on average, but almost always far less,
    and now and then a lot), less the number of words and the model's
    free parameters: ``df = n_cells - V - (n_docs (K - 1) + K (V - 1))``.

    On real corpora the dispersion is usually well above 1 at every
    practical ``K`` (stm's documentation calls it "a very demanding
    criterion, especially if the documents are long"): read it as a curve
    over ``K``, as :func:`~sklearn_clda.inspection.select_n_components`
    reports it, looking for where it stops falling, beside the held-out
    perplexity and coherence.

    Parameters
    ----------
    estimator : fitted estimator
        :class:`~sklearn_clda.LDAGibbs`, :class:`~sklearn_clda.CompoundLDA`,
        :class:`~sklearn.decomposition.LatentDirichletAllocation` or any
        model with ``components_`` and a ``transform`` returning topic
        proportions (for a Pipeline, its last step and the counts its
        other steps make).

    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Document-word counts, usually the training documents (stm checks
        those); passed to ``transform``.

    groups : array-like of shape (n_samples,), default=None
        Collection labels of the documents, passed to ``transform`` if it
        accepts ``groups`` (:class:`~sklearn_clda.CompoundLDA`).

    tol : float, default=0.01
        Cells whose expected count exceeds ``tol`` count towards the
        degrees of freedom (Taddy's and stm's default).

    Returns
    -------
    {result}

    See Also
    --------
    residual_dispersion_from_estimates : From given topic proportions, e.g.
        the chain's own estimates ``doc_topic_`` of the training documents,
        as stm uses its fitted ``theta``.
    sklearn_clda.inspection.select_n_components : The dispersion over
        ``K``, with perplexity, coherence, exclusivity and stability.

    Notes
    -----
    Documents without tokens carry no residual and are left out, also of
    ``n_docs``. The statistic sums every document-word cell: its cost is
    that of ``transform`` plus ``n_samples * n_features * n_topics``
    multiply-adds, made by pieces of documents in bounded memory.

    References
    ----------
    .. [1] M. Taddy, "On estimation and selection for topic models",
       AISTATS 2012.
    .. [2] M. E. Roberts, B. M. Stewart and D. Tingley, "stm: An R package
       for structural topic models", Journal of Statistical Software
       91(2), 2019 (``checkResiduals``).

    Examples
    --------
    >>> from sklearn_clda import LDAGibbs
    >>> from sklearn_clda.datasets import make_lda_corpus
    >>> from sklearn_clda.metrics import residual_dispersion
    >>> corpus = make_lda_corpus(n_topics=4, n_features=100, n_samples=200,
    ...                          doc_length=200, random_state=0)
    >>> for k in (1, 4):
    ...     lda = LDAGibbs(n_components=k, max_iter=100, random_state=0)
    ...     result = residual_dispersion(lda.fit(corpus.data), corpus.data)
    ...     print(k, round(result.dispersion, 2))
    1 15.28
    4 0.76

    One topic leaves the documents far more varied than it explains; the
    corpus' four topics explain them.
    """
    return estimator_dispersion(estimator, X, groups, tol, "residual_dispersion")


@validate_params(
    {
        "doc_topic": ["array-like"],
        "topic_word": ["array-like"],
        "X": ["array-like", "sparse matrix"],
        "tol": [StrictInterval(Real, 0, None, closed="left")],
    },
    prefer_skip_nested_validation=True,
)
def residual_dispersion_from_estimates(doc_topic, topic_word, X, *, tol=0.01):
    """Residual dispersion of documents under given topic proportions and topics.

    :func:`residual_dispersion` with the topic proportions given instead of
    inferred by ``transform``: for a fitted
    :class:`~sklearn_clda.LDAGibbs` or :class:`~sklearn_clda.CompoundLDA`,
    the chain's own estimates of its training documents, ``doc_topic_``,
    which is what stm's ``checkResiduals`` does with its fitted
    ``theta``; or point estimates from another library.

    Parameters
    ----------
    doc_topic : array-like of shape (n_samples, n_topics)
        Topic proportions of the documents of ``X``. Rows are normalized to
        sum to one.

    topic_word : array-like of shape (n_topics, n_features)
        Topic-word weights, e.g. ``components_``. Rows are normalized to
        sum to one.

    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Document-word counts.

    tol : float, default=0.01
        Cells whose expected count exceeds ``tol`` count towards the
        degrees of freedom.

    Returns
    -------
    {result}

    See Also
    --------
    residual_dispersion : The definition, with ``transform``'s proportions.

    Examples
    --------
    >>> from sklearn_clda import LDAGibbs
    >>> from sklearn_clda.datasets import make_lda_corpus
    >>> from sklearn_clda.metrics import residual_dispersion_from_estimates
    >>> corpus = make_lda_corpus(n_topics=4, n_features=100, n_samples=200,
    ...                          doc_length=200, random_state=0)
    >>> lda = LDAGibbs(n_components=4, max_iter=100, random_state=0).fit(corpus.data)
    >>> result = residual_dispersion_from_estimates(lda.doc_topic_, lda.components_,
    ...                                             corpus.data)
    >>> round(result.dispersion, 2), result.df
    (0.77, 4457)
    """
    caller = "residual_dispersion_from_estimates"
    counts = _check_count_matrix(X, "X", caller)
    theta, phi = _check_theta_phi(doc_topic, topic_word, counts, caller,
                                  names=("doc_topic", "topic_word", "X"))
    return _dispersion(theta, phi, counts, float(tol), caller, 4)


# (the two share the description of their result)
for _function in (residual_dispersion, residual_dispersion_from_estimates):
    _function.__doc__ = _function.__doc__.replace("{result}", _RESULT_DOC.strip())
del _function

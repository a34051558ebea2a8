"""Topic summaries: top words, topic sizes and topic alignment.

Also holds the input checks shared by the metrics module.
"""

from numbers import Integral

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linear_sum_assignment
from scipy.special import xlogy
from sklearn.utils._param_validation import HasMethods, StrOptions, validate_params
from sklearn.utils.validation import check_is_fitted

from .._corpus import StrictInterval, quiet_check_array, to_count_csr

__all__ = ["align_topics", "top_word_indices", "top_words", "topic_sizes"]

_ALIGN_METRICS = ("tv", "hellinger", "jsd")


# --------------------------------------------------------------------------
# Shared input checks
# --------------------------------------------------------------------------


def _check_count_matrix(X, name, caller):
    """Validate a document-term count matrix and return canonical CSR.

    Dense or sparse, non-negative and finite; non-integer values are
    rounded to the nearest integer with a ``UserWarning``. The result has
    int64 data (positive counts only), sorted indices and no duplicates.
    The sparse structure is checked first, before SciPy reads it.
    """
    if X is None:
        raise ValueError(f"{name} passed to {caller} must be a count matrix, got None.")
    X = quiet_check_array(
        X,
        caller=caller,
        accept_sparse=["csr", "csc", "coo"],
        dtype=[np.float64, np.float32, np.int64, np.int32],
        ensure_all_finite=True,
        ensure_min_samples=0,
        ensure_min_features=1,
        input_name=name,
    )
    return to_count_csr(X, caller, name)


def _check_nonneg_matrix(A, name, caller, *, rows_positive=True):
    """Validate a 2-D non-negative finite float matrix (dense result).

    With ``rows_positive``, every row must have a positive sum (so that it
    can be normalized into a probability distribution).
    """
    A = quiet_check_array(
        A, caller=caller, dtype=np.float64, ensure_all_finite=True, input_name=name,
        ensure_min_samples=1, ensure_min_features=1,
    )
    if sp.issparse(A):  # pragma: no cover - check_array refuses sparse here
        A = A.toarray()
    if (A < 0).any():
        raise ValueError(f"{name} passed to {caller} must be non-negative.")
    if rows_positive:
        bad = np.flatnonzero(A.max(axis=1) <= 0)  # (a sum could overflow)
        if bad.size:
            raise ValueError(
                f"{name} passed to {caller} has rows summing to zero (rows "
                f"{bad[:5].tolist()}{'...' if bad.size > 5 else ''}); each row "
                "must be a non-zero weight vector."
            )
    return A


def _normalize_rows(A):
    """Rows as distributions; scaled by their maximum first, so that rows of
    huge finite weights (near 1e308) do not overflow their sum."""
    A = A / A.max(axis=1, keepdims=True)
    return A / A.sum(axis=1, keepdims=True)


def _check_at_most_features(n, name, n_features, caller):
    """``n`` must not exceed the number of features.

    ``validate_params`` has already checked that ``n`` is a positive int;
    this bound depends on the data.
    """
    if n > n_features:
        raise ValueError(
            f"{name} passed to {caller} must be at most the number of features "
            f"({n_features}), got {n}."
        )
    return int(n)


# --------------------------------------------------------------------------
# Top words
# --------------------------------------------------------------------------


@validate_params(
    {
        "components": ["array-like"],
        "n": [StrictInterval(Integral, 1, None, closed="left")],
    },
    prefer_skip_nested_validation=True,
)
def top_word_indices(components, n=10):
    """Indices of each topic's ``n`` largest words.

    Parameters
    ----------
    components : array-like of shape (n_topics, n_features)
        Topic-word weights, e.g. a fitted model's ``components_``;
        non-negative. Rows need not be normalized: only the order of the
        weights within a row matters.

    n : int, default=10
        Number of words per topic, between 1 and ``n_features``.

    Returns
    -------
    indices : ndarray of shape (n_topics, n), dtype int64
        ``indices[k]`` lists the feature indices of topic ``k`` by
        decreasing weight. Ties keep the lower feature index first, so the
        result is deterministic.

    See Also
    --------
    top_words : The same, as feature names.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_clda.metrics import top_word_indices
    >>> components = np.array([[0.1, 0.5, 0.4],
    ...                        [0.7, 0.1, 0.2]])
    >>> top_word_indices(components, n=2)
    array([[1, 2],
           [0, 2]])
    """
    caller = "top_word_indices"
    components = _check_nonneg_matrix(
        components, "components", caller, rows_positive=False
    )
    n = _check_at_most_features(n, "n", components.shape[1], caller)
    return _top_indices(components, n)


def _top_indices(values, n):
    """The columns of the ``n`` largest values of each row, largest first,
    ties by column (NaN last), row by row without sorting whole rows.

    NumPy equivalent: ``np.argsort(-values, axis=1, kind="stable")[:, :n]``
    (a test holds it to that). A full sort of a ``(K, V)`` matrix costs
    ``O(K V log V)`` time and two more ``(K, V)`` arrays (15 s and 3 GB at
    ``K = 100``, ``V = 2,000,000``); a partition of one row at a time costs
    ``O(V)`` and one row's indices.
    """
    values = np.asarray(values)
    n_rows, n_cols = values.shape
    n = min(n, n_cols)
    out = np.empty((n_rows, n), dtype=np.int64)
    for i, row in enumerate(values):
        if n == n_cols or np.isnan(row).any():
            out[i] = np.argsort(-row, kind="stable")[:n]
            continue
        # The n-th largest value; every column tied with it is a candidate,
        # so that ties are settled by column.
        cut = np.partition(row, n_cols - n)[n_cols - n]
        candidates = np.flatnonzero(row >= cut)
        order = np.lexsort((candidates, -row[candidates]))
        out[i] = candidates[order[:n]]
    return out


@validate_params(
    {
        "components": ["array-like"],
        "feature_names": ["array-like"],
        "n": [StrictInterval(Integral, 1, None, closed="left")],
    },
    prefer_skip_nested_validation=True,
)
def top_words(components, feature_names, n=10):
    """Each topic's ``n`` largest words, as feature names.

    Parameters
    ----------
    components : array-like of shape (n_topics, n_features)
        Topic-word weights, e.g. a fitted model's ``components_``.

    feature_names : array-like of shape (n_features,)
        Name of every feature, e.g.
        ``CountVectorizer().get_feature_names_out()``.

    n : int, default=10
        Number of words per topic, between 1 and ``n_features``.

    Returns
    -------
    words : ndarray of shape (n_topics, n)
        ``words[k]`` holds topic ``k``'s words by decreasing weight (ties:
        lower feature index first), with the dtype of ``feature_names``.
        ``words.tolist()`` gives a list of lists.

    See Also
    --------
    top_word_indices : The same, as feature indices.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_clda.metrics import top_words
    >>> components = np.array([[0.1, 0.5, 0.4],
    ...                        [0.7, 0.1, 0.2]])
    >>> top_words(components, ["apple", "banana", "cherry"], n=2).tolist()
    [['banana', 'cherry'], ['apple', 'cherry']]
    """
    caller = "top_words"
    names = np.asarray(feature_names)
    if names.ndim != 1:
        raise ValueError(
            f"feature_names passed to {caller} must be 1-dimensional, got "
            f"shape {names.shape}."
        )
    indices = top_word_indices(components, n)
    n_features = np.shape(components)[1]
    if names.shape[0] != n_features:
        raise ValueError(
            f"feature_names passed to {caller} has {names.shape[0]} names but "
            f"components has {n_features} features."
        )
    return names[indices]


# --------------------------------------------------------------------------
# Topic sizes
# --------------------------------------------------------------------------


def _transform_accepts_groups(estimator):
    import inspect

    try:
        params = inspect.signature(estimator.transform).parameters
    except (TypeError, ValueError):  # pragma: no cover - builtins
        return False
    return "groups" in params


def _check_topic_model(estimator, caller):
    """A fitted estimator with ``components_``, else the error that says so."""
    check_is_fitted(estimator)
    if not hasattr(estimator, "components_"):
        raise ValueError(
            f"estimator passed to {caller} must be a fitted topic model with "
            f"components_, got {type(estimator).__name__}."
        )


def _infer_doc_topic(estimator, X, groups, caller):
    """``estimator.transform(X)``, with ``groups`` if its transform takes them."""
    if not hasattr(estimator, "transform"):
        raise ValueError(
            f"estimator passed to {caller} must be a fitted topic model with a "
            f"transform method, got {type(estimator).__name__}."
        )
    if groups is not None and _transform_accepts_groups(estimator):
        return np.asarray(estimator.transform(X, groups=groups), dtype=np.float64)
    return np.asarray(estimator.transform(X), dtype=np.float64)


@validate_params(
    {
        "doc_topic": ["array-like", HasMethods(["fit", "transform"])],
        "X": ["array-like", "sparse matrix"],
        "groups": ["array-like", None],
    },
    # A fitted model's transform is called: keep its own validation.
    prefer_skip_nested_validation=False,
)
def topic_sizes(doc_topic, X, *, groups=None):
    """Expected number of tokens of each topic in a corpus.

    The topic size of Mimno et al. (2011), used in the paper to compare
    models: the number of tokens of the corpus assigned to each topic. It
    is estimated from the documents' topic proportions as
    ``sum_d n_d * theta_d``, where ``n_d`` is the length of document ``d``,
    i.e. ``(doc_topic * X.sum(axis=1)).sum(axis=0)``.

    Parameters
    ----------
    doc_topic : array-like of shape (n_samples, n_topics) or fitted estimator
        Topic proportions of the documents of ``X`` (rows are normalized to
        sum to one), e.g. ``lda.doc_topic_`` of a model fitted on ``X``
        (the sampler's estimate) or ``lda.transform(X)``. A fitted topic
        model (:class:`~sklearn_clda.LDAGibbs`,
        :class:`~sklearn_clda.CompoundLDA`,
        :class:`~sklearn.decomposition.LatentDirichletAllocation`) is
        replaced by its ``transform(X)`` (``transform(X, groups=groups)``
        when its ``transform`` accepts ``groups``).

    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Document-term counts of the same documents (only the row sums, the
        document lengths, are used).

    groups : array-like of shape (n_samples,), default=None
        Collection labels passed to the estimator's ``transform`` when
        ``doc_topic`` is a :class:`~sklearn_clda.CompoundLDA`; ignored
        otherwise.

    Returns
    -------
    sizes : ndarray of shape (n_topics,)
        Expected number of tokens of each topic; the sizes add up to the
        number of tokens in ``X``.

    Notes
    -----
    For the Gibbs models, ``doc_topic_`` averages
    ``(n_dk + alpha_k) / (n_d + sum_k alpha_k)`` over the kept samples, so
    ``n_d * doc_topic_[d, k]`` is the document's average topic count
    ``n_dk`` shrunk slightly towards the prior. The unshrunk sampler count
    of a model fitted with ``n_features`` words and topic-word prior
    ``eta`` is ``components_.sum(axis=1) - n_features * eta``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_clda.metrics import topic_sizes
    >>> doc_topic = np.array([[0.5, 0.5], [1.0, 0.0]])
    >>> X = np.array([[2, 2, 0], [0, 1, 5]])
    >>> topic_sizes(doc_topic, X)
    array([8., 2.])
    """
    caller = "topic_sizes"
    Xc = _check_count_matrix(X, "X", caller)
    if hasattr(doc_topic, "fit") and hasattr(doc_topic, "transform"):
        doc_topic = _infer_doc_topic(doc_topic, X, groups, caller)
    theta = _check_nonneg_matrix(doc_topic, "doc_topic", caller)
    if theta.shape[0] != Xc.shape[0]:
        raise ValueError(
            f"doc_topic passed to {caller} has {theta.shape[0]} rows but X has "
            f"{Xc.shape[0]} documents."
        )
    lengths = np.asarray(Xc.sum(axis=1), dtype=np.float64).ravel()
    return lengths @ _normalize_rows(theta)


# --------------------------------------------------------------------------
# Topic alignment
# --------------------------------------------------------------------------


def _topic_distances(P, Q, metric):
    """Distance matrix (n_p, n_q) between the rows of two row-stochastic matrices."""
    if metric == "hellinger":
        bc = np.sqrt(P) @ np.sqrt(Q).T  # Bhattacharyya coefficients
        return np.sqrt(np.clip(1.0 - bc, 0.0, None))
    D = np.empty((P.shape[0], Q.shape[0]))
    for i, p in enumerate(P):  # one row at a time bounds memory to n_q * V
        if metric == "tv":
            D[i] = 0.5 * np.abs(Q - p).sum(axis=1)
        else:  # jsd, in bits
            m = 0.5 * (Q + p)
            kl_p = xlogy(p, p).sum() - xlogy(p, m).sum(axis=1)
            kl_q = xlogy(Q, Q).sum(axis=1) - xlogy(Q, m).sum(axis=1)
            D[i] = np.clip(0.5 * (kl_p + kl_q) / np.log(2.0), 0.0, 1.0)
    return D


def _topic_distance_matrix(components, metric):
    """The square matrix of distances between the topics (rows of
    ``components``), exactly symmetric with a zero diagonal."""
    phi = _normalize_rows(components)
    distances = _topic_distances(phi, phi, metric)
    distances = 0.5 * (distances + distances.T)
    np.fill_diagonal(distances, 0.0)
    return distances


@validate_params(
    {
        "beta_a": ["array-like"],
        "beta_b": ["array-like"],
        "metric": [StrOptions(set(_ALIGN_METRICS))],
    },
    prefer_skip_nested_validation=True,
)
def align_topics(beta_a, beta_b, metric="tv"):
    """Match the topics of two models one-to-one (Hungarian algorithm).

    Topic models identify topics only up to a permutation. This finds the
    assignment of the rows of ``beta_b`` to the rows of ``beta_a`` that
    minimizes the total distance between matched topics
    (:func:`scipy.optimize.linear_sum_assignment`), to compare two fits or
    a fit with the true topics of a simulated corpus.

    Parameters
    ----------
    beta_a : array-like of shape (n_topics_a, n_features)
        Reference topics, e.g. the true ``beta`` of
        :func:`~sklearn_clda.datasets.make_lda_corpus` or a model's
        ``components_``. Rows are normalized to sum to one; they must be
        non-negative with a positive sum.

    beta_b : array-like of shape (n_topics_b, n_features)
        Topics to align with ``beta_a`` (normalized likewise).

    metric : {"tv", "hellinger", "jsd"}, default="tv"
        Distance between two topic-word distributions ``p`` and ``q``; each
        lies in ``[0, 1]``:

        - ``"tv"``: total variation, ``0.5 * sum_w |p_w - q_w|``;
        - ``"hellinger"``: ``sqrt(0.5 * sum_w (sqrt(p_w) - sqrt(q_w))**2)``;
        - ``"jsd"``: Jensen-Shannon divergence in bits,
          ``0.5 * KL(p || m) + 0.5 * KL(q || m)`` with ``m = (p + q) / 2``.

    Returns
    -------
    permutation : ndarray of shape (n_topics_a,), dtype int64
        ``permutation[i]`` is the row of ``beta_b`` matched with row ``i``
        of ``beta_a``, so that ``beta_b[permutation]`` lines up with
        ``beta_a`` (and ``model_b.transform(X)[:, permutation]`` with
        ``model_a``'s topics). With more topics in ``beta_a`` than in
        ``beta_b``, only ``n_topics_b`` rows of ``beta_a`` can be matched:
        the others get ``-1``; use ``matched = permutation >= 0`` and
        compare ``beta_a[matched]`` with ``beta_b[permutation[matched]]``.
        With fewer, the unmatched rows of ``beta_b`` are left out.

    distances : ndarray of shape (n_topics_a,)
        Distance between each row of ``beta_a`` and its match, ``nan`` for
        unmatched rows.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_clda.metrics import align_topics
    >>> beta_a = np.array([[0.8, 0.1, 0.1],
    ...                    [0.1, 0.8, 0.1],
    ...                    [0.1, 0.1, 0.8]])
    >>> beta_b = beta_a[[2, 0, 1]]
    >>> permutation, distances = align_topics(beta_a, beta_b)
    >>> permutation
    array([1, 2, 0])
    >>> distances
    array([0., 0., 0.])
    """
    caller = "align_topics"
    P = _normalize_rows(_check_nonneg_matrix(beta_a, "beta_a", caller))
    Q = _normalize_rows(_check_nonneg_matrix(beta_b, "beta_b", caller))
    if P.shape[1] != Q.shape[1]:
        raise ValueError(
            f"beta_a and beta_b passed to {caller} must have the same number of "
            f"features, got {P.shape[1]} and {Q.shape[1]}."
        )
    D = _topic_distances(P, Q, metric)
    rows, cols = linear_sum_assignment(D)
    permutation = np.full(P.shape[0], -1, dtype=np.int64)
    permutation[rows] = cols
    distances = np.full(P.shape[0], np.nan)
    distances[rows] = D[rows, cols]
    return permutation, distances

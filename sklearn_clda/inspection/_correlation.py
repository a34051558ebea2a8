"""Which topics appear together in documents (stm's ``topicCorr``)."""

import warnings
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.utils import Bunch
from sklearn.utils._param_validation import HasMethods, StrOptions, validate_params
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted
from threadpoolctl import threadpool_limits

from .._corpus import StrictInterval, check_group_labels
from ._collections import equal_tailed_interval
from ._documents import _doc_topic
from ._ranks import average_ranks
from ._utils import require_pandas, unwrap

__all__ = ["topic_correlation"]

_METHODS = ("simple", "glasso")
_GLASSO_MIN_DOCUMENTS = 10
# Most bytes the bootstrap's correlation matrices may take (n_bootstrap * K^2
# float64 values, held at once for their quantiles).
_BOOTSTRAP_MAX_BYTES = 2**30


def _proportions(estimator, X, groups, caller):
    """``(theta, labels)``: the documents' topic proportions (the fit's
    ``doc_topic_`` without ``X``, else ``X`` folded in) and their checked
    collection labels as str, or None without groups."""
    model, _, _ = unwrap(estimator)
    check_is_fitted(model, "components_")
    if X is not None:
        theta = _doc_topic(estimator, X, groups)
    elif getattr(model, "doc_topic_", None) is not None:
        theta = np.asarray(model.doc_topic_, dtype=np.float64)
    else:
        raise ValueError(
            f"{caller} without X reads the fitted documents' doc_topic_, which "
            f"this {type(model).__name__} does not have; pass X (the documents)."
        )
    if groups is None:
        return theta, None
    labels = np.asarray(check_group_labels(groups, theta.shape[0], method=caller),
                        dtype=object).astype(str)
    fitted = getattr(model, "groups_", None)
    if X is None and fitted is not None:
        unknown = sorted(set(labels.tolist()) - {str(g) for g in fitted})
        if unknown:
            raise ValueError(
                f"groups passed to {caller} without X label the fitted documents, but "
                f"hold labels the model was not fitted with: {unknown[:5]}."
            )
    return theta, labels


def _within(theta, labels):
    """``theta`` minus the mean proportions of each row's collection."""
    return _centered(theta, np.unique(labels, return_inverse=True)[1].ravel())


def _centered(theta, codes):
    """``theta`` minus the mean of the rows of the same code (0..J-1), in
    one pass (a sparse sum), however many collections.

    NumPy equivalent: ``theta - means[codes]`` with ``means[j] =
    theta[codes == j].mean(axis=0)``.
    """
    n = theta.shape[0]
    members = sp.csr_matrix((np.ones(n), (codes, np.arange(n))))
    means = (members @ theta) / np.bincount(codes)[:, None]
    return theta - means[codes]


def _gaussianized(values):
    """Each column ranked and mapped to normal scores (the nonparanormal
    transform of Liu, Lafferty and Wasserman 2009, with ranks / (n + 1))."""
    from scipy.stats import norm

    n = values.shape[0]
    return norm.ppf(average_ranks(values) / (n + 1.0))


def _partial_correlation(values):
    """Partial correlations from a graphical lasso fit, its penalty chosen by
    cross-validation (scikit-learn's ``GraphicalLassoCV``)."""
    from sklearn.covariance import GraphicalLassoCV

    scores = _gaussianized(values)
    with warnings.catch_warnings():
        # the cross-validation scores of the smallest penalties can be -inf
        # (no positive-definite estimate); their spread, which we do not
        # read, is then NaN, with a RuntimeWarning
        warnings.simplefilter("ignore", RuntimeWarning)
        precision = GraphicalLassoCV().fit(scores).precision_
    scale = np.sqrt(np.diag(precision))
    partial = -precision / np.outer(scale, scale)
    np.fill_diagonal(partial, 1.0)
    return partial


def _correlations(values, method):
    """The (partial) correlation matrix of the columns of ``values``: 1 on
    the diagonal, 0 off it for a column that does not vary."""
    # (a share the same in every document, up to rounding, has no correlation)
    varies = np.ptp(values, axis=0) > 1e-12
    correlation = np.zeros((values.shape[1],) * 2)
    if varies.sum() >= 2:
        kept = np.ix_(varies, varies)
        if method == "simple":
            correlation[kept] = np.corrcoef(values[:, varies], rowvar=False)
        else:
            correlation[kept] = _partial_correlation(values[:, varies])
    np.fill_diagonal(correlation, 1.0)
    return correlation


def _resampled_rows(codes, n, rng):
    """Row indices of one bootstrap sample: ``n`` rows drawn with
    replacement, within each collection when ``codes`` (each row's
    collection, 0..J-1) are given, so that every collection keeps its
    number of documents; the rows come collection by collection."""
    if codes is None:
        return rng.integers(0, n, size=n)
    order = np.argsort(codes, kind="stable")
    sizes = np.bincount(codes)
    slot = np.repeat(np.arange(sizes.size), sizes)  # each drawn row's collection
    starts = np.cumsum(sizes) - sizes
    return order[starts[slot] + (rng.random(n) * sizes[slot]).astype(np.intp)]


def _bootstrap(theta, labels, within, n_bootstrap, ci, random_state, caller):
    """``(lower, upper)``: equal-tailed intervals of the correlations over
    ``n_bootstrap`` resamples of the documents."""
    K = theta.shape[1]
    if n_bootstrap * K * K * 8 > _BOOTSTRAP_MAX_BYTES:
        raise ValueError(
            f"{caller} with n_bootstrap={n_bootstrap} and {K} topics would hold "
            f"{n_bootstrap * K * K * 8 / 2**30:.1f} GiB of correlation matrices (at most "
            f"{_BOOTSTRAP_MAX_BYTES / 2**30:.0f}); lower n_bootstrap."
        )
    rng = np.random.default_rng(check_random_state(random_state).randint(0, 2**31 - 1))
    codes = np.unique(labels, return_inverse=True)[1].ravel() if within else None
    draws = np.empty((n_bootstrap, K, K))
    # One BLAS thread: each resample's product is small (K x K out of a long
    # inner dimension), and OpenBLAS's threads on it cost up to 35 times one
    # thread's time on a busy 2-core machine (news16, K = 20: 54 s against
    # 1.9 s for 200 resamples).
    with threadpool_limits(limits=1, user_api="blas"):
        for b in range(n_bootstrap):
            rows = _resampled_rows(codes, theta.shape[0], rng)
            sample = theta[rows]
            draws[b] = _correlations(_centered(sample, codes[rows]) if within else sample,
                                     "simple")
    return equal_tailed_interval(draws, ci)


def _edges(pd, correlation, adjacency, interval, cutoff):
    """The edges as a table, strongest first (with their intervals)."""
    a, b = np.nonzero(np.triu(adjacency, k=1))
    columns = {"topic_a": a, "topic_b": b, "correlation": correlation[a, b]}
    if interval is not None:
        lower, upper = interval
        columns.update(lower=lower[a, b], upper=upper[a, b], clear=lower[a, b] > cutoff)
    edges = pd.DataFrame(columns)
    return edges.sort_values("correlation", ascending=False, kind="stable").reset_index(
        drop=True)


def _rows(theta, labels, collection, caller):
    """The rows of ``collection`` (all rows when None) and their labels."""
    if collection is None:
        return theta, labels
    if labels is None:
        raise ValueError(f"{caller} with collection={collection!r} needs groups.")
    rows = labels == str(collection)
    if not rows.any():
        raise ValueError(
            f"collection={collection!r} passed to {caller} is not among the labels of "
            f"groups: {sorted(set(labels.tolist()))[:20]}."
        )
    return theta[rows], labels[rows]


@validate_params(
    {
        "estimator": [HasMethods(["fit"])],
        "X": ["array-like", "sparse matrix", None],
        "groups": ["array-like", None],
        "method": [StrOptions(set(_METHODS))],
        "cutoff": [StrictInterval(Real, -1, 1, closed="both")],
        "within_collections": ["boolean"],
        "collection": [str, Real, None],
        "n_bootstrap": [StrictInterval(Integral, 0, None, closed="left")],
        "ci": [StrictInterval(Real, 0, 1, closed="neither")],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def topic_correlation(estimator, X=None, groups=None, *, method="simple", cutoff=0.01,
                      within_collections=False, collection=None, n_bootstrap=0, ci=0.9,
                      random_state=None):
    """Which topics appear together in the same documents.

    The correlation across documents of the topics' proportions (the
    question of stm's ``topicCorr``): two topics with a positive
    correlation tend to share documents, and a graph of the positive ones
    shows clusters of topics that are discussed together.

    In a corpus of collections, topics correlate also because they share
    collections: every political topic is frequent in a politics outlet,
    so the political topics correlate across all documents even if no
    single document joins them. ``within_collections=True`` removes that
    part: each document's proportions are taken relative to its
    collection's mean, so that only co-occurrence beyond what the
    collections' mixtures explain is left. ``collection`` restricts the
    documents to one collection: which topics go together in it.

    Parameters
    ----------
    estimator : estimator or Pipeline
        A fitted topic model (:class:`~sklearn_clda.CompoundLDA`,
        :class:`~sklearn_clda.LDAGibbs`, or any estimator with
        ``doc_topic_`` or ``transform``), or a fitted Pipeline ending with
        one.

    X : {array-like, sparse matrix} of shape (n_samples, n_features), default=None
        Documents (counts, or the Pipeline's input) whose proportions are
        inferred by ``transform``. ``None`` uses the proportions of the
        fitted documents (``doc_topic_``).

    groups : array-like of shape (n_samples,), default=None
        Collection label of each document (of ``X``, or of the fitted
        documents in their order). Needed for ``within_collections`` and
        ``collection``; passed to ``transform`` when it accepts it.

    method : {"simple", "glasso"}, default="simple"
        ``"simple"``: Pearson correlations of the proportions, with an edge
        where one exceeds ``cutoff`` (stm's ``method="simple"``).
        ``"glasso"``: partial correlations (given all other topics) from a
        graphical lasso of the proportions' normal scores, the penalty
        chosen by cross-validation (scikit-learn's ``GraphicalLassoCV``;
        the role of stm's ``method="huge"``), with an edge where one is
        positive: a sparser graph, without the links that only pass
        through a third topic. It needs 10 documents or more; scikit-learn
        may warn that the lasso did not converge for some penalties.

    cutoff : float, default=0.01
        ``method="simple"``: the correlation an edge must exceed.

    within_collections : bool, default=False
        Correlate each document's proportions minus its collection's mean
        proportions (needs ``groups``).

    collection : str or int, default=None
        Only use the documents of this collection (its label in
        ``groups``).

    n_bootstrap : int, default=0
        ``method="simple"``: resample the documents this many times (with
        replacement; within each collection when ``within_collections``)
        and give each correlation an equal-tailed bootstrap interval, as
        uncertain as the documents are few. 0 gives none. Costs
        ``n_bootstrap`` correlation matrices (about 1 s for 200 on
        10,000 documents and 20 topics).

    ci : float, default=0.9
        Mass of the bootstrap intervals.

    random_state : int, RandomState instance or None, default=None
        Draws the bootstrap resamples.

    Returns
    -------
    result : :class:`~sklearn.utils.Bunch`
        - ``correlation``: ndarray of shape (n_components, n_components),
          the correlations (``"glasso"``: partial correlations), 1 on the
          diagonal; 0 for a topic whose proportion does not vary;
        - ``adjacency``: bool ndarray of the same shape, the edges (no
          self-edges);
        - ``edges``: pandas DataFrame of the edges, ``topic_a < topic_b``
          and ``correlation``, strongest first; with ``n_bootstrap``, also
          the interval (``lower``, ``upper``) and ``clear``: whether
          ``lower`` exceeds the cutoff (the edge holds in all but
          ``(1 - ci) / 2`` of the resamples);
        - ``lower``, ``upper``: ndarrays of the same shape as
          ``correlation``, the bootstrap intervals (None without
          ``n_bootstrap``);
        - ``shares``: ndarray of shape (n_components,), each topic's mean
          proportion over the documents used;
        - ``method``, ``cutoff``, ``within_collections``, ``collection``,
          ``n_documents`` (the documents used), ``n_bootstrap`` and ``ci``.

    Raises
    ------
    ValueError
        If fewer than 3 documents are used (10 for ``"glasso"``), if
        ``within_collections`` or
        ``collection`` is asked without ``groups``, if ``groups`` does
        not have one label per document, or if ``n_bootstrap`` is asked
        with ``"glasso"`` or would hold more than 1 GiB of matrices.

    See Also
    --------
    sklearn_clda.plotting.TopicCorrelationDisplay : The graph drawn.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_clda import CompoundLDA
    >>> from sklearn_clda.datasets import make_compound_corpus
    >>> from sklearn_clda.inspection import topic_correlation
    >>> corpus = make_compound_corpus(n_topics=4, n_features=40, n_collections=2,
    ...                               docs_per_collection=60, doc_length=60,
    ...                               random_state=0)
    >>> clda = CompoundLDA(n_components=4, max_iter=100, random_state=0)
    >>> clda = clda.fit(corpus.data, groups=corpus.groups)
    >>> corr = topic_correlation(clda, groups=corpus.groups)
    >>> corr.correlation.shape, corr.n_documents
    ((4, 4), 120)
    >>> bool(np.allclose(corr.correlation, np.corrcoef(clda.doc_topic_.T)))
    True

    The strongest pairs are in ``edges`` (none here: the simulated
    documents are each about one topic, so the topics never go together):

    >>> corr.edges.columns.tolist()
    ['topic_a', 'topic_b', 'correlation']
    >>> bool((corr.correlation[~np.eye(4, dtype=bool)] < 0).all())
    True

    With bootstrap intervals (here of 120 documents: wide):

    >>> corr = topic_correlation(clda, groups=corpus.groups, n_bootstrap=200,
    ...                          random_state=0)
    >>> bool(((corr.lower <= corr.correlation) & (corr.correlation <= corr.upper)).all())
    True
    """
    caller = "topic_correlation"
    pd = require_pandas(caller)
    if within_collections and groups is None:
        raise ValueError(f"{caller} with within_collections=True needs groups.")
    theta, labels = _proportions(estimator, X, groups, caller)
    theta, labels = _rows(theta, labels, collection, caller)
    if theta.shape[0] < 3:
        raise ValueError(
            f"{caller} needs at least 3 documents to correlate their topics, got "
            f"{theta.shape[0]}."
        )
    if method == "glasso" and theta.shape[0] < _GLASSO_MIN_DOCUMENTS:
        raise ValueError(
            f"{caller} with method='glasso' needs at least {_GLASSO_MIN_DOCUMENTS} "
            f"documents (the penalty is chosen by 5-fold cross-validation), got "
            f"{theta.shape[0]}; use method='simple'."
        )
    if n_bootstrap and method != "simple":
        raise ValueError(
            f"{caller} with n_bootstrap={n_bootstrap} needs method='simple': the "
            "graphical lasso's cross-validated fit is too slow to repeat per resample."
        )
    correlation = _correlations(_within(theta, labels) if within_collections else theta,
                                method)
    threshold = cutoff if method == "simple" else 0.0
    adjacency = correlation > threshold
    np.fill_diagonal(adjacency, False)
    interval = None if not n_bootstrap else _bootstrap(
        theta, labels, within_collections, n_bootstrap, ci, random_state, caller)
    return Bunch(
        correlation=correlation, adjacency=adjacency,
        edges=_edges(pd, correlation, adjacency, interval, threshold),
        lower=None if interval is None else interval[0],
        upper=None if interval is None else interval[1],
        shares=theta.mean(axis=0), method=method, cutoff=float(cutoff),
        within_collections=bool(within_collections), collection=collection,
        n_documents=int(theta.shape[0]), n_bootstrap=int(n_bootstrap), ci=float(ci),
    )

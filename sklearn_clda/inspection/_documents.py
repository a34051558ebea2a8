"""The documents most about each topic (stm's ``findThoughts``)."""

from numbers import Integral

import numpy as np
from sklearn.utils import _safe_indexing
from sklearn.utils._param_validation import HasMethods, validate_params
from sklearn.utils.validation import _num_samples

from .._corpus import StrictInterval, check_group_labels
from ._utils import accepts, check_topics, require_pandas, unwrap

__all__ = ["representative_documents"]


def _doc_topic(estimator, X, groups):
    """``transform`` of a model or Pipeline, passing ``groups`` when it takes them."""
    model, pre, _ = unwrap(estimator)
    Xt = X if pre is None else pre.transform(X)
    if groups is not None and accepts(model.transform, "groups"):
        theta = model.transform(Xt, groups=groups)
    else:
        theta = model.transform(Xt)
    return np.asarray(theta, dtype=np.float64)


def _candidate_rows(labels, collection, caller):
    """Row indices of the documents of ``collection`` (all rows when None)."""
    if collection is None:
        return None
    if labels is None:
        raise ValueError(
            f"collection={collection!r} passed to {caller} needs groups, the "
            "collection label of each document of X."
        )
    rows = np.flatnonzero([value == collection for value in labels.tolist()])
    if rows.size == 0:
        present = np.unique(labels).tolist()
        raise ValueError(
            f"collection={collection!r} passed to {caller} labels none of the "
            f"documents; the labels in groups are {present[:20]}"
            f"{'...' if len(present) > 20 else ''}."
        )
    return rows


@validate_params(
    {
        "estimator": [HasMethods(["fit", "transform"])],
        "X": ["array-like", "sparse matrix"],
        "groups": ["array-like", None],
        "n": [StrictInterval(Integral, 1, None, closed="left")],
        "topic": [Integral, "array-like", None],
        "collection": [str, Integral, None],
    },
    # The estimator's transform validates X itself.
    prefer_skip_nested_validation=False,
)
def representative_documents(estimator, X, groups=None, *, n=3, topic=None, collection=None):
    """The documents with the largest share of each topic.

    Reading a topic's most typical documents tells more than its words.
    For each topic ``k`` this returns the ``n`` documents of ``X`` with the
    largest topic proportion ``theta[d, k]``, inferred by the model's
    ``transform`` (the idea of stm's ``findThoughts``). With ``collection``
    given, only the documents of that collection are considered: what a
    topic looks like within one outlet, year or rating.

    Parameters
    ----------
    estimator : estimator or Pipeline
        A fitted topic model with ``transform``
        (:class:`~sklearn_clda.CompoundLDA`,
        :class:`~sklearn_clda.LDAGibbs`,
        :class:`~sklearn.decomposition.LatentDirichletAllocation`), or a
        fitted Pipeline ending with one (e.g. CountVectorizer + model, with
        ``X`` the raw texts).

    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        The documents to choose from (counts, or the Pipeline's input).
        The returned ``document`` indices are rows of ``X``.

    groups : array-like of shape (n_samples,), default=None
        Collection label of each document. Passed to ``transform`` when it
        accepts it (:class:`~sklearn_clda.CompoundLDA` then uses each
        document's collection mixture as its prior); needed for
        ``collection``.

    n : int, default=3
        Number of documents per topic (fewer when ``X``, or the collection,
        has fewer documents).

    topic : int or array-like of int, default=None
        The topic(s) to return documents for; ``None`` means every topic.

    collection : str or int, default=None
        Only consider the documents whose label in ``groups`` equals
        ``collection``.

    Returns
    -------
    documents : pandas.DataFrame
        One row per (topic, rank), topics in the order asked and ranks
        increasing, with columns ``topic``, ``rank`` (1 for the document
        with the largest share), ``document`` (row index into ``X``),
        ``theta`` (the document's proportion of the topic) and, when
        ``groups`` is given, ``collection`` (the document's label). Ties
        rank the lower row first.

    See Also
    --------
    topic_labels : Words that label each topic.

    Notes
    -----
    The proportions come from ``transform`` (the fold-in, with the topics
    held fixed), not from the training chain's ``doc_topic_``, so ``X``
    need not be the training corpus. Short documents get extreme
    proportions easily; drop very short documents from ``X`` to see
    typical rather than tiny ones.

    References
    ----------
    .. [1] M. E. Roberts, B. M. Stewart and D. Tingley, "stm: An R package
       for structural topic models", Journal of Statistical Software
       91(2), 2019.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_clda import LDAGibbs
    >>> from sklearn_clda.inspection import representative_documents
    >>> X = np.array([[5, 4, 0, 0],    # about words 0-1
    ...               [0, 0, 6, 3],    # about words 2-3
    ...               [3, 2, 2, 1],    # mixed
    ...               [6, 6, 0, 1],    # about words 0-1
    ...               [1, 0, 5, 5]])   # about words 2-3
    >>> lda = LDAGibbs(n_components=2, max_iter=200, random_state=0).fit(X)
    >>> docs = representative_documents(lda, X, n=2)
    >>> docs.shape, docs.columns.tolist()
    ((4, 4), ['topic', 'rank', 'document', 'theta'])
    >>> sorted(sorted(g) for g in docs.groupby("topic")["document"].apply(list))
    [[0, 3], [1, 4]]

    Within one collection:

    >>> groups = ["a", "b", "a", "b", "a"]
    >>> docs = representative_documents(lda, X, groups, n=1, collection="b")
    >>> sorted(docs["document"].tolist()), docs["collection"].tolist()
    ([1, 3], ['b', 'b'])
    """
    caller = "representative_documents"
    pd = require_pandas(caller)
    n_docs = _num_samples(X)
    labels = None if groups is None else check_group_labels(groups, n_docs, method=caller)
    rows = _candidate_rows(labels, collection, caller)
    if rows is None:
        rows = np.arange(n_docs)
        theta = _doc_topic(estimator, X, groups)
    else:
        # Only the collection's documents are folded in (each document's
        # proportions depend on it and its collection alone).
        theta = _doc_topic(estimator, _safe_indexing(X, rows), _safe_indexing(groups, rows))
    topics = (np.arange(theta.shape[1]) if topic is None
              else check_topics(topic, theta.shape[1], name=f"topic passed to {caller}"))
    columns = {"topic": [], "rank": [], "document": [], "theta": []}
    for k in topics:
        best = np.argsort(-theta[:, k], kind="stable")[:n]
        columns["topic"].extend([int(k)] * best.size)
        columns["rank"].extend(range(1, best.size + 1))
        columns["document"].extend(rows[best].tolist())
        columns["theta"].extend(theta[best, k].tolist())
    out = pd.DataFrame(columns)
    if labels is not None:
        out["collection"] = labels[out["document"].to_numpy(dtype=np.intp)]
    return out

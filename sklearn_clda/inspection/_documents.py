"""The documents most about each topic (stm's ``findThoughts``)."""

from numbers import Integral

import numpy as np
from sklearn.utils import _safe_indexing
from sklearn.utils._param_validation import HasMethods, validate_params
from sklearn.utils.validation import _num_samples

from .._corpus import StrictInterval, check_group_labels, quiet_check_array
from ._utils import accepts, check_topics, require_pandas, unwrap

__all__ = ["representative_documents", "top_rows"]


def _doc_topic(estimator, X, groups):
    """``transform`` of a model or Pipeline, passing ``groups`` when it takes them."""
    model, pre, _ = unwrap(estimator)
    return _fold_in(model, X if pre is None else pre.transform(X), groups)


def _fold_in(model, counts, groups):
    """``model.transform(counts)``, with ``groups`` when it takes them, as float64."""
    if groups is not None and accepts(model.transform, "groups"):
        theta = model.transform(counts, groups=groups)
    else:
        theta = model.transform(counts)
    return np.asarray(theta, dtype=np.float64)


def document_counts(Xt, caller):
    """``Xt`` (the documents after a Pipeline's first steps) as a float64
    CSR matrix of counts; a ValueError naming ``caller`` otherwise."""
    try:
        return quiet_check_array(Xt, caller=caller, accept_sparse="csr", dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(
            f"X passed to {caller} must hold document-term counts (or be the input of "
            f"a Pipeline whose first steps make them, e.g. a CountVectorizer): {exc}"
        ) from None


def _long_enough(estimator, X, groups, rows, min_length, caller, collection):
    """``(rows, theta)``: the rows (of the caller's X) among ``rows`` whose
    documents have ``min_length`` tokens or more, and their proportions."""
    model, pre, _ = unwrap(estimator)
    Xt = X if pre is None else pre.transform(X)
    counts = document_counts(Xt, caller)
    lengths = np.asarray(counts.sum(axis=1)).ravel()
    keep = np.flatnonzero(lengths >= min_length)
    if keep.size == 0:
        where = "X" if collection is None else f"collection {collection!r}"
        raise ValueError(
            f"{caller} found no document of {where} with min_length={min_length} "
            f"tokens or more; the longest has {lengths.max(initial=0):g}."
        )
    if keep.size < lengths.size:
        Xt = _safe_indexing(Xt, keep)
        groups = None if groups is None else _safe_indexing(groups, keep)
    return rows[keep], _fold_in(model, Xt, groups)


def top_rows(shares, n):
    """Positions of the ``n`` largest ``shares``, largest first, ties by
    position: ``np.argsort(-shares, kind="stable")[:n]``."""
    return np.argsort(-shares, kind="stable")[:n]


def _candidate_rows(labels, collection, caller):
    """Row indices of the documents of ``collection`` (all rows when None)."""
    if collection is None:
        return None
    if isinstance(collection, (bool, np.bool_)):
        raise ValueError(
            f"collection passed to {caller} must be a collection label (str or int "
            f"as in groups), got bool {collection!r}."
        )
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
        "min_length": [StrictInterval(Integral, 1, None, closed="left")],
        "texts": ["array-like", None],
    },
    # The estimator's transform validates X itself.
    prefer_skip_nested_validation=False,
)
def representative_documents(estimator, X, groups=None, *, n=3, topic=None, collection=None,
                             min_length=1, texts=None):
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

    min_length : int, default=1
        Only consider the documents with at least this many tokens (after
        a Pipeline's vectorizer). Short documents get extreme proportions
        easily: a signature line of three words can be "100% about" a
        topic. The default leaves out empty documents only.

    texts : array-like of shape (n_samples,), default=None
        The documents' texts (or any description of them), row by row
        with ``X``; they are returned in a ``text`` column, to read beside
        the proportions as stm's ``findThoughts`` prints them. With a
        Pipeline that takes raw texts, pass ``texts=X``.

    Returns
    -------
    documents : pandas.DataFrame
        One row per (topic, rank), topics in the order asked and ranks
        increasing, with columns ``topic``, ``rank`` (1 for the document
        with the largest share), ``document`` (row index into ``X``),
        ``theta`` (the document's proportion of the topic), when
        ``groups`` is given ``collection`` (the document's label), and
        when ``texts`` is given ``text``. Ties rank the lower row first.

    See Also
    --------
    topic_labels : Words that label each topic.

    Notes
    -----
    The proportions come from ``transform`` (the fold-in, with the topics
    held fixed), not from the training chain's ``doc_topic_``, so ``X``
    need not be the training corpus. Short documents get extreme
    proportions easily; raise ``min_length`` to see typical rather than
    tiny ones.

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

    With the texts beside, and only documents of 10 tokens or more:

    >>> texts = ["sport", "politics", "mixed", "sport again", "politics again"]
    >>> docs = representative_documents(lda, X, n=1, min_length=10, texts=texts)
    >>> sorted(docs["text"].tolist())
    ['politics again', 'sport again']
    """
    caller = "representative_documents"
    pd = require_pandas(caller)
    n_docs = _num_samples(X)
    labels = None if groups is None else check_group_labels(groups, n_docs, method=caller)
    if texts is not None and _num_samples(texts) != n_docs:
        raise ValueError(
            f"texts passed to {caller} has {_num_samples(texts)} entries, but X has "
            f"{n_docs} documents; pass one text per row of X."
        )
    rows = _candidate_rows(labels, collection, caller)
    if rows is None:
        rows, candidates, candidate_groups = np.arange(n_docs), X, groups
    else:
        # Only the collection's documents are folded in (each document's
        # proportions depend on it and its collection alone).
        candidates, candidate_groups = _safe_indexing(X, rows), _safe_indexing(groups, rows)
    rows, theta = _long_enough(estimator, candidates, candidate_groups, rows, min_length,
                               caller, collection)
    topics = (np.arange(theta.shape[1]) if topic is None
              else check_topics(topic, theta.shape[1], name=f"topic passed to {caller}"))
    columns = {"topic": [], "rank": [], "document": [], "theta": []}
    for k in topics:
        best = top_rows(theta[:, k], n)
        columns["topic"].extend([int(k)] * best.size)
        columns["rank"].extend(range(1, best.size + 1))
        columns["document"].extend(rows[best].tolist())
        columns["theta"].extend(theta[best, k].tolist())
    out = pd.DataFrame(columns)
    if labels is not None:
        out["collection"] = labels[out["document"].to_numpy(dtype=np.intp)]
    if texts is not None:
        out["text"] = list(_safe_indexing(texts, out["document"].to_numpy(dtype=np.intp)))
    return out

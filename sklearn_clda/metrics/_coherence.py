"""Topic coherence of Mimno et al. (2011) (UMass coherence)."""

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import validate_params

from .._corpus import StrictInterval
from ._topics import (
    _check_at_most_features,
    _check_count_matrix,
    _check_nonneg_matrix,
    _top_indices,
)

__all__ = ["topic_coherence"]


@validate_params(
    {
        "X": ["array-like", "sparse matrix"],
        "components": ["array-like"],
        "top_n": [StrictInterval(Integral, 1, None, closed="left")],
        "smoothing": [StrictInterval(Real, 0, np.inf, closed="neither")],
    },
    prefer_skip_nested_validation=True,
)
def topic_coherence(X, components, top_n=20, *, smoothing=1.0):
    """Topic coherence of Mimno et al. (2011) of every topic.

    For topic ``k`` with top words ``v_1, ..., v_m`` (``m = top_n``, by
    decreasing weight in ``components[k]``), the coherence is::

        sum_{i=2..m} sum_{j=1..i-1} log((df(v_i, v_j) + smoothing) / df(v_j))

    where ``df(v)`` is the number of documents of ``X`` that contain word
    ``v`` and ``df(v_i, v_j)`` the number that contain both. Values are
    at most about 0 and higher (closer to 0) means more coherent: the top
    words tend to occur in the same documents.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Document-term counts of the reference corpus, usually the training
        corpus. Only whether a count is positive matters.

    components : array-like of shape (n_topics, n_features)
        Topic-word weights, e.g. a fitted model's ``components_``; only
        their order within each row matters.

    top_n : int, default=20
        Number of top words per topic (``m``), between 1 and ``n_features``.
        One word gives no pairs and a coherence of 0.

    smoothing : float, default=1.0
        Count added to every co-document frequency to avoid ``log(0)``.
        Mimno et al. use 1. See Notes for the value matching gensim.

    Returns
    -------
    coherence : ndarray of shape (n_topics,)
        Coherence of each topic, in nats (a sum over ``m (m - 1) / 2``
        word pairs, not a mean).

    See Also
    --------
    top_word_indices : The top words whose co-occurrences are scored.

    Notes
    -----
    The inner sum runs over ``j < i`` as in Mimno et al. (2011, eq. 1):
    every pair of distinct top words is scored once, conditioning on the
    more probable word ``v_j``. The paper's eq. (mimno-topic-coherence)
    prints the upper limit as ``j = i``, which would add the
    self-pair terms ``log((df(v_i) + 1) / df(v_i))``; those carry no
    co-occurrence information, so this function follows Mimno et al.

    A top word that never occurs in ``X`` has ``df = 0``: the pairs that
    condition on it are skipped (they add 0, as in gensim) with a
    ``UserWarning``.

    gensim's ``CoherenceModel(coherence="u_mass")`` scores the same pairs
    with ``log((df(v_i, v_j) / D + 1e-12) / (df(v_j) / D))`` for a corpus
    of ``D`` documents and averages them, so for the same top words
    ``topic_coherence(X, components, m, smoothing=1e-12 * D)`` equals
    ``m (m - 1) / 2`` times gensim's per-topic value
    (``get_coherence_per_topic``). With the default ``smoothing=1`` the
    two differ: gensim's tiny epsilon makes every pair that never
    co-occurs cost about ``log(1e-12 D / df(v_j))``, i.e. more than 20
    nats, instead of ``log(1 / df(v_j))``.

    Co-document frequencies come from one sparse product of the binary
    document-word matrix restricted to the union of all top words.

    References
    ----------
    .. [1] D. Mimno, H. M. Wallach, E. Talley, M. Leenders and
       A. McCallum, "Optimizing semantic coherence in topic models",
       EMNLP 2011.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_clda.metrics import topic_coherence
    >>> X = np.array([[1, 1, 0, 0],
    ...               [2, 1, 0, 0],
    ...               [0, 0, 1, 1],
    ...               [1, 0, 0, 3]])
    >>> components = np.array([[5.0, 4.0, 0.1, 0.1],
    ...                        [0.1, 4.0, 0.1, 5.0]])
    >>> coherence = topic_coherence(X, components, top_n=2)
    >>> coherence.round(4)  # log((2 + 1) / 3), log((0 + 1) / 2)
    array([ 0.    , -0.6931])
    """
    caller = "topic_coherence"
    Xc = _check_count_matrix(X, "X", caller)
    components = _check_nonneg_matrix(
        components, "components", caller, rows_positive=False
    )
    if components.shape[1] != Xc.shape[1]:
        raise ValueError(
            f"components passed to {caller} has {components.shape[1]} features "
            f"but X has {Xc.shape[1]}."
        )
    top_n = _check_at_most_features(top_n, "top_n", components.shape[1], caller)
    top = _top_indices(components, top_n)
    n_topics, m = top.shape

    # Binary document-word matrix on the union of the top words.
    vocab, pos = np.unique(top, return_inverse=True)
    pos = pos.reshape(top.shape)
    B = Xc[:, vocab]
    B.data = np.ones_like(B.data)
    co = (B.T @ B).toarray()  # co[a, b]: documents containing both words
    df = np.diag(co)

    pair_df = co[pos[:, :, None], pos[:, None, :]]  # [k, i, j] = df(v_i, v_j)
    cond_df = np.broadcast_to(df[pos][:, None, :], pair_df.shape)  # df(v_j)
    below = np.tril(np.ones((m, m), dtype=bool), k=-1)  # j < i
    scored = below & (cond_df > 0)
    unseen = np.unique(top[df[pos] == 0])
    if unseen.size:
        warnings.warn(
            f"{unseen.size} top word(s) of the topics never occur in X (feature "
            f"indices {unseen[:5].tolist()}{'...' if unseen.size > 5 else ''}); "
            "the word pairs conditioning on them are skipped.",
            UserWarning,
            stacklevel=2,
        )
    terms = np.zeros(pair_df.shape)
    terms[scored] = np.log((pair_df[scored] + smoothing) / cond_df[scored])
    return terms.sum(axis=(1, 2))

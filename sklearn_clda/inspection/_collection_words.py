"""How each collection words a topic: the distinctive words of its tokens
in the topic, by log-odds with an informative Dirichlet prior."""

from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.utils._param_validation import HasMethods, validate_params

from .._base import _BaseGibbsTopicModel
from .._corpus import StrictInterval, check_group_labels, quiet_check_array
from ..metrics._topics import _top_indices
from ._documents import _doc_topic
from ._utils import (
    check_topics,
    collection_position,
    require_pandas,
    resolve_feature_names,
    topic_word,
    unwrap,
)

__all__ = ["ExpectedTopicWordCounts", "topic_words_by_collection"]

# Bytes of (n_tokens_at_once, K) temporaries when attributing tokens, and of
# each dense (collections, V) array of one topic's z-scores at a time (small
# enough for the cache: NumPy's log ran 2.5 times as fast on such arrays as
# on arrays of 64 MB).
_CHUNK_BYTES = 32 << 20
_BLOCK_BYTES = 1 << 20
_TINY = np.finfo(np.float64).tiny
# Where the four terms of a log-odds lie, their ratio is a normal double.
_RATIO_RANGE = (1e-75, 1e75)


def _word_topic(components):
    """``phi.T``, shape (V, K): each word's probability in each topic (rows
    of ``components`` normalized), made in one new array."""
    phi_t = np.array(components.T, dtype=np.float64, order="C")
    phi_t /= components.max(axis=1)  # (no overflow in the sums)
    phi_t /= phi_t.sum(axis=0)
    return phi_t


def _attribution_weights(counts, theta, phi_t):
    """``counts`` (CSR) divided, at each non-zero ``(d, w)``, by
    ``sum_k theta[d, k] * phi[k, w]`` (``phi_t = phi.T``): token ``(d, w)``
    then belongs to topic ``k`` with probability ``theta[d, k] * phi[k, w]``
    times it. Non-zeros whose sum is 0 (no topic can have made them) get
    weight 0."""
    rows = np.repeat(np.arange(counts.shape[0]), np.diff(counts.indptr))
    cols = counts.indices
    norms = np.full(counts.nnz, np.nan)  # (a token left out shows as NaN)
    step = max(1, _CHUNK_BYTES // (16 * phi_t.shape[1]))
    for a in range(0, counts.nnz, step):
        b = min(a + step, counts.nnz)
        norms[a:b] = np.einsum("ik,ik->i", theta[rows[a:b]], phi_t[cols[a:b]])
    data = np.divide(counts.data, norms, out=np.zeros(counts.nnz), where=norms > 0)
    return sp.csr_matrix((data, cols, counts.indptr), shape=counts.shape)


class ExpectedTopicWordCounts:
    """Expected tokens of each word in a topic, by collection, from
    :func:`_attribution_weights`: ``topic(k)`` is a CSR matrix of shape
    ``(len(members), V)``, a collection's row non-zero only at the words its
    documents hold.

    NumPy equivalent of ``topic(k)``, with ``C`` the dense counts,
    ``phi = phi_t.T`` and ``S = theta @ phi``::

        n[j, w] = sum(C[d, w] * theta[d, k] * phi[k, w] / S[d, w]
                      for d in members[j])

    The cells (collection, word) of the non-zeros are found once; a topic
    then costs one weighted count of the non-zeros into their cells.
    """

    def __init__(self, weights, theta, phi_t, members):
        # topics in rows: a topic's column of theta or phi_t, read at every
        # non-zero, is then one contiguous row
        self.theta_t, self.phi = np.ascontiguousarray(theta.T), np.ascontiguousarray(phi_t.T)
        n_docs, V = weights.shape
        collection = np.full(n_docs, -1, dtype=np.int64)
        for j, rows in enumerate(members):
            collection[np.asarray(rows, dtype=np.intp)] = j
        doc = np.repeat(np.arange(n_docs), np.diff(weights.indptr))
        kept = collection[doc] >= 0
        self.doc, self.value = doc[kept], weights.data[kept]
        cells, self.cell = np.unique(collection[self.doc] * V + weights.indices[kept],
                                     return_inverse=True)
        self.word = cells % V
        self.indptr = np.searchsorted(cells // V, np.arange(len(members) + 1))
        self.shape = (len(members), V)

    def topic(self, k):
        counts = np.bincount(self.cell, weights=self.value * self.theta_t[k][self.doc],
                             minlength=self.word.size)
        counts *= self.phi[k][self.word]
        return sp.csr_matrix((counts, self.word, self.indptr), shape=self.shape)


def _log_odds_z(counts, rest, phi_k, prior):
    """z-scores of each collection's log-odds of every word against
    ``rest`` (the other collections' counts, or one collection's), by
    Monroe, Colaresi and Quinn (2008, eq. 16 and 22), with the prior
    ``prior * phi_k``; ``counts`` and ``rest`` of shape (J, V).

    NumPy equivalent, with ``a = max(prior * phi_k, tiny)``, ``n`` and
    ``m`` the row totals of ``counts`` and ``rest``::

        delta = (log(counts + a) - log(max(n + prior - counts - a, tiny))
                 - log(rest + a) + log(max(m + prior - rest - a, tiny)))
        z = delta / sqrt(1 / (counts + a) + 1 / (rest + a))

    computed as one log of the ratio of the four terms (the four logs cost
    most of the time) where each lies in ``[1e-75, 1e75]``, so that the
    ratio is a normal double, and as the four logs elsewhere.
    """
    alpha = np.maximum(prior * phi_k, _TINY)
    n_own = counts.sum(axis=1, keepdims=True)
    n_rest = rest.sum(axis=1, keepdims=True)
    own = counts + alpha
    other = rest + alpha
    own_out = np.maximum(n_own + prior - counts - alpha, _TINY)  # the topic's other words
    other_out = np.maximum(n_rest + prior - rest - alpha, _TINY)
    lo, hi = _RATIO_RANGE
    odd = (own_out < lo) | (other_out < lo)
    odd |= alpha < lo  # (own, other >= alpha; <= the row's total + prior)
    odd |= np.maximum(n_own, n_rest) + prior > hi
    with np.errstate(divide="ignore", over="ignore", under="ignore"):
        delta = own * other_out
        delta /= own_out
        delta /= other
        np.log(delta, out=delta)
    if odd.any():
        delta[odd] = (np.log(own[odd]) - np.log(own_out[odd])
                      - np.log(other[odd]) + np.log(other_out[odd]))
    scale = 1.0 / own
    scale += 1.0 / other
    np.sqrt(scale, out=scale)
    delta /= scale
    return delta, n_own[:, 0], n_rest[:, 0]


def _topic_rows(topic, expected, phi_k, prior, against, names, words, n):
    """The table's columns for one topic, from its expected counts (CSR,
    collections x words), a block of collections at a time (the z-scores
    need dense rows, which for every collection at once could take GBs).
    ``against``: the row compared with (left out of the rows), or None for
    all the others together."""
    J, V = expected.shape
    if against is None:
        totals = np.asarray(expected.sum(axis=0)).ravel()
        positions = np.arange(J)
    else:
        base = expected[against].toarray()
        positions = np.delete(np.arange(J), against)
    step = max(1, _BLOCK_BYTES // (8 * V))
    parts = []
    for a in range(0, positions.size, step):
        block = positions[a:a + step]
        counts = expected[block].toarray()
        rest = (np.maximum(totals[None] - counts, 0.0) if against is None
                else np.broadcast_to(base, counts.shape))
        z, n_own, n_rest = _log_odds_z(counts, rest, phi_k, prior)
        parts.append(_rows(topic, names[block], words, (z, counts, rest, n_own, n_rest), n))
    return {key: np.concatenate([part[key] for part in parts]) for key in parts[0]}


def _check_collections(groups, n_docs, caller):
    """``(labels, members)``: the sorted distinct labels, and the rows of each."""
    if groups is None:
        raise ValueError(f"{caller} needs groups, the collection label of each document of X.")
    labels = check_group_labels(groups, n_docs, method=caller)
    names, index = np.unique(labels, return_inverse=True)
    if names.size < 2:
        raise ValueError(
            f"{caller} compares collections, but groups holds one label "
            f"({names.tolist()[0]!r}); pass documents of two collections or more."
        )
    return names, [np.flatnonzero(index == j) for j in range(names.size)]


def _word_counts(estimator, X, n_features):
    """The document-word counts of ``X`` (after a Pipeline's first steps),
    as canonical float64 CSR; the caller's arrays are left as they are.
    For this package's models, rounded to integers as their ``transform``
    rounds them (with its warning), so that the table counts what the
    model saw."""
    model, pre, _ = unwrap(estimator)
    Xt = X if pre is None else pre.transform(X)
    counts = sp.csr_matrix(quiet_check_array(Xt, caller="topic_words_by_collection",
                                             accept_sparse="csr", dtype=np.float64))
    if counts.shape[1] != n_features:  # pragma: no cover - transform checked it
        raise ValueError(f"X has {counts.shape[1]} features, the model {n_features}.")
    if not counts.has_canonical_format:
        counts = counts.copy()  # (may share the caller's arrays)
        counts.sum_duplicates()
    if isinstance(model, _BaseGibbsTopicModel):
        counts = sp.csr_matrix((np.rint(counts.data), counts.indices, counts.indptr),
                               shape=counts.shape)
        counts.eliminate_zeros()
    return counts


def _rows(topic, names, words, stats, n):
    """The table's columns for one topic and the collections ``names``:
    ``stats`` = (z, counts, rest, n_own, n_rest), a row per collection."""
    z, counts, rest, n_own, n_rest = stats
    top = _top_indices(z, n)
    return {
        "topic": np.full(top.size, topic),
        "collection": np.repeat(names, top.shape[1]),
        "collection_tokens": np.repeat(n_own, top.shape[1]),
        "rank": np.tile(np.arange(1, top.shape[1] + 1), len(names)),
        "word": words[top].ravel(),
        "z": np.take_along_axis(z, top, axis=1).ravel(),
        "count": np.take_along_axis(counts, top, axis=1).ravel(),
        "rate": (np.take_along_axis(counts, top, axis=1)
                 / np.maximum(n_own, _TINY)[:, None]).ravel(),
        "rest_rate": (np.take_along_axis(rest, top, axis=1)
                      / np.maximum(n_rest, _TINY)[:, None]).ravel(),
    }


@validate_params(
    {
        "estimator": [HasMethods(["fit", "transform"])],
        "X": ["array-like", "sparse matrix"],
        "groups": ["array-like"],
        "topic": [Integral, "array-like", None],
        "n_words": [StrictInterval(Integral, 1, None, closed="left")],
        "prior": [StrictInterval(Real, 0, None, closed="neither")],
        "feature_names": ["array-like", None],
        "against": [str, Integral, None],
    },
    # The estimator's transform validates X itself.
    prefer_skip_nested_validation=False,
)
def topic_words_by_collection(estimator, X, groups, *, topic=None, n_words=10,
                              prior=100.0, feature_names=None, against=None):
    """The words each collection uses in a topic more than the others do.

    Compound LDA shares one set of topics across the collections; its
    collection mixtures say how much each collection talks about a topic.
    This says *how*: among the tokens that the model attributes to topic
    ``k``, the words that collection ``j`` uses more often than the other
    collections together (the same topic framed differently: "gun" and
    "rights" in one outlet, "gun" and "violence" in another). It answers
    the question of stm's content covariates and BERTopic's
    ``topics_per_class`` for any fitted topic model, after the fit.

    Each token of word ``w`` in document ``d`` is attributed to topic ``k``
    with probability ``theta[d, k] * phi[k, w] / sum_l theta[d, l] *
    phi[l, w]`` (``theta`` from the model's ``transform``, ``phi`` the
    normalized ``components_``), which gives the expected count
    ``y[j, k, w]`` of word ``w`` among collection ``j``'s tokens of topic
    ``k``. Words are ranked by the z-score of the log-odds ratio of the
    word in collection ``j`` against the other collections, with an
    informative Dirichlet prior (Monroe, Colaresi and Quinn 2008):

    ``delta = log((y_j + a) / (n_j + a0 - y_j - a)) - log((y_r + a) / (n_r +
    a0 - y_r - a))``, ``z = delta / sqrt(1 / (y_j + a) + 1 / (y_r + a))``

    where ``y_r`` are the other collections' counts of the word in the
    topic, ``n_j`` and ``n_r`` the topic's token totals, ``a0 = prior`` and
    ``a = prior * phi[k, w]``. The prior shrinks the log-odds of rare
    words towards the topic's own distribution and the z-score weighs the
    evidence, so neither a word seen twice nor a word every collection
    uses tops the list.

    Parameters
    ----------
    estimator : estimator or Pipeline
        A fitted topic model with ``transform`` and ``components_``
        (:class:`~sklearn_clda.CompoundLDA`,
        :class:`~sklearn_clda.LDAGibbs`,
        :class:`~sklearn.decomposition.LatentDirichletAllocation`), or a
        fitted Pipeline ending with one (e.g. CountVectorizer + model, with
        ``X`` the raw texts; the vocabulary is then the Pipeline's).

    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        The documents whose words are counted (usually the training
        corpus; counts, or the Pipeline's input).

    groups : array-like of shape (n_samples,)
        Collection label of each document: at least two distinct labels.
        Passed to ``transform`` when it accepts it.

    topic : int or array-like of int, default=None
        The topic(s) to describe; ``None`` means every topic.

    n_words : int, default=10
        Words per topic and collection (at most the vocabulary size).

    prior : float, default=100.0
        ``a0``, the prior's number of pseudo-tokens, spread over the words
        as the topic's word distribution. Larger values shrink the rare
        words' log-odds more.

    feature_names : array-like of str of shape (n_features,), default=None
        The vocabulary. ``None`` uses the Pipeline's vocabulary, else the
        model's ``feature_names_in_``, else ``"word 0"``, ``"word 1"``, ...

    against : str or int, default=None
        A collection's label in ``groups``: compare every other collection
        with this one alone (``y_r``, ``n_r`` its counts) instead of with
        all the others together, as stm contrasts two covariate levels.
        The rows then cover the other collections; with two collections
        the words of one against the other are those of ``None``.

    Returns
    -------
    words : pandas.DataFrame
        One row per (topic, collection, rank): topics in the order asked,
        collections sorted, ranks increasing. Columns:

        - ``topic``, ``collection``;
        - ``collection_tokens``: ``n_j``, the expected number of the
          collection's tokens in the topic (little evidence when small);
        - ``rank`` (1 for the most distinctive word) and ``word``;
        - ``z``: the word's z-score (positive: used more by this
          collection; above about 2, more than chance would give);
        - ``count``: ``y_j``, the expected number of the collection's
          tokens of the word in the topic;
        - ``rate`` and ``rest_rate``: the word's share of the collection's
          tokens in the topic, and of the other collections' (of
          ``against``'s).

    See Also
    --------
    topic_labels : Words that label each topic, for the whole corpus.
    compare_collections : How much two collections use each topic.
    representative_documents : The documents most about each topic.

    Notes
    -----
    Compound LDA does not give collections topics of their own: the words
    found here are those of the tokens the shared topic explains in each
    collection. A collection that barely uses a topic (small
    ``collection_tokens``) has z-scores near zero. With a Gibbs model, the
    attribution uses the fitted topics, not the chain's assignments; it
    also works on documents the model was not fitted on.

    References
    ----------
    .. [1] B. L. Monroe, M. P. Colaresi and K. M. Quinn, "Fightin' words:
       Lexical feature selection and evaluation for identifying the content
       of political conflict", Political Analysis 16(4), 2008.
    .. [2] M. E. Roberts, B. M. Stewart and D. Tingley, "stm: An R package
       for structural topic models", Journal of Statistical Software
       91(2), 2019.

    Examples
    --------
    Sport and politics in two countries' newspapers, each with its own
    word for a match and for the legislature:

    >>> import numpy as np
    >>> from sklearn_clda import CompoundLDA
    >>> from sklearn_clda.inspection import topic_words_by_collection
    >>> vocab = ["team", "ball", "match", "game", "vote", "party", "parliament", "congress"]
    >>> X = np.array([[6, 5, 3, 0, 0, 0, 0, 0], [0, 0, 0, 0, 6, 5, 3, 0]] * 10
    ...              + [[6, 5, 0, 3, 0, 0, 0, 0], [0, 0, 0, 0, 6, 5, 0, 3]] * 10)
    >>> groups = ["uk"] * 20 + ["us"] * 20
    >>> clda = CompoundLDA(n_components=2, max_iter=200, random_state=0).fit(X, groups=groups)
    >>> table = topic_words_by_collection(clda, X, groups, n_words=1, feature_names=vocab)
    >>> sport = int(np.argmax(clda.components_[:, vocab.index("ball")]))
    >>> table[table.topic == sport][["collection", "word"]].to_dict("list")
    {'collection': ['uk', 'us'], 'word': ['match', 'game']}
    """
    caller = "topic_words_by_collection"
    pd = require_pandas(caller)
    model, _, pipeline_names = unwrap(estimator)
    theta = _doc_topic(estimator, X, groups)
    phi_t = _word_topic(topic_word(model, caller))
    V, K = phi_t.shape
    names, members = _check_collections(groups, theta.shape[0], caller)
    base = None if against is None else collection_position(
        names, against, "against", caller, among="X; the labels in groups are")
    words = resolve_feature_names(model, feature_names, pipeline_names, V, caller)
    topics = (np.arange(K) if topic is None
              else check_topics(topic, K, name=f"topic passed to {caller}"))
    weights = _attribution_weights(_word_counts(estimator, X, V), theta, phi_t)
    n = min(n_words, V)
    expected = ExpectedTopicWordCounts(weights, theta, phi_t, members)
    parts = [_topic_rows(int(k), expected.topic(k), phi_t[:, k], float(prior), base, names,
                         words, n)
             for k in topics]
    return pd.DataFrame({key: np.concatenate([part[key] for part in parts])
                         for key in parts[0]})

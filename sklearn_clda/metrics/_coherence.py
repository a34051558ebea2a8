"""Topic coherence on a reference corpus: UMass, NPMI and C_V."""

import warnings
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.utils._param_validation import StrOptions, validate_params

from .._corpus import StrictInterval
from ._topics import (
    _check_at_most_features,
    _check_count_matrix,
    _check_nonneg_matrix,
    _top_indices,
)

__all__ = ["topic_coherence"]

#: The measures of ``topic_coherence``.
COHERENCE_MEASURES = ("umass", "umass_mean", "npmi", "c_v")

# gensim's epsilon, added to co-occurrence probabilities (not counts).
_GENSIM_EPSILON = 1e-12

# Largest (rows x words) block of window indicators built at once.
_BLOCK_CELLS = 1 << 22


@validate_params(
    {
        "X": ["array-like", "sparse matrix"],
        "components": ["array-like"],
        "top_n": [StrictInterval(Integral, 1, None, closed="left")],
        "measure": [StrOptions(set(COHERENCE_MEASURES))],
        "smoothing": [StrictInterval(Real, 0, np.inf, closed="neither"), None],
        "window_size": [StrictInterval(Integral, 1, None, closed="left"), None],
        "feature_names": ["array-like", None],
    },
    prefer_skip_nested_validation=True,
)
def topic_coherence(
    X,
    components,
    top_n=20,
    *,
    measure="umass",
    smoothing=None,
    window_size=None,
    feature_names=None,
):
    """Coherence of every topic's top words on a reference corpus.

    Each topic's ``m = top_n`` top words ``v_1, ..., v_m`` (by decreasing
    weight in ``components[k]``) are scored by how often they occur
    together in the reference corpus ``X``: in the same document (a count
    matrix) or in the same sliding window of ``window_size`` tokens
    (texts). With ``N`` documents or windows, ``n(v)`` of them containing
    ``v``, ``n(v, u)`` containing both and ``s = smoothing``:

    - ``"umass"`` (Mimno et al., 2011), the sum over ``j < i`` of
      ``log((n(v_i, v_j) + s) / n(v_j))``; ``s = 1`` by default.
    - ``"umass_mean"``, the same terms averaged over the ``m (m - 1) / 2``
      pairs, with ``s = 1e-12 N`` by default: gensim's ``"u_mass"``.
    - ``"npmi"`` (Bouma, 2009), the mean over pairs ``i < j`` of
      ``log(P(v_i, v_j) / (P(v_i) P(v_j))) / -log P(v_i, v_j)``, with
      ``P(v) = n(v) / N`` and ``P(v, u) = (n(v, u) + s) / N``, in
      ``[-1, 1]``; gensim's ``"c_npmi"``.
    - ``"c_v"`` (Röder et al., 2015): word ``v_i`` gets the vector of its
      NPMI with each top word; the topic's value is the mean over ``i``
      of the cosine between that vector and the sum of all ``m``
      vectors; gensim's ``"c_v"``.

    Higher is more coherent for every measure.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features) or list of texts
        The reference corpus, usually the training corpus. Without
        ``window_size``: a document-term count matrix (only whether a count
        is positive matters). With ``window_size``: a list of texts, each a
        sequence of tokens in their order, that are feature indices, or
        strings looked up in ``feature_names`` when it is given.

    components : array-like of shape (n_topics, n_features)
        Topic-word weights, e.g. a fitted model's ``components_``; only
        their order within each row matters.

    top_n : int, default=20
        Number of top words per topic (``m``), between 1 and ``n_features``
        (at least 2 for the measures that average over pairs). For
        ``"umass"``, one word gives no pairs and a coherence of 0.

    measure : {"umass", "umass_mean", "npmi", "c_v"}, default="umass"
        The coherence measure, see above.

    smoothing : float, default=None
        Count ``s`` added to every co-occurrence count, to avoid
        ``log(0)``. ``None`` means 1 for ``"umass"`` (Mimno et al.) and
        ``1e-12 N`` for the others (gensim's ``1e-12`` added to
        probabilities). For ``"npmi"`` and ``"c_v"`` it must be below 1.

    window_size : int, default=None
        Slide a window of this many tokens over each text of ``X``, one
        token per step, and count co-occurrences in the windows instead of
        the documents (a text shorter than the window is one window). Needs
        ``X`` as texts: a count matrix has no word order. gensim uses 110
        for ``"c_v"`` and 10 for ``"c_npmi"``.

    feature_names : array-like of str of shape (n_features,), default=None
        Names of the features, to look up the tokens of texts (only with
        ``window_size``). Tokens that are not features keep their place in
        the windows but are not counted.

    Returns
    -------
    coherence : ndarray of shape (n_topics,)
        Coherence of each topic: a sum over pairs in nats for
        ``"umass"``, a mean for the other measures.

    See Also
    --------
    top_word_indices : The top words that are scored.
    topic_exclusivity : How exclusive each topic's top words are.

    Notes
    -----
    The UMass sum runs over ``j < i`` as in Mimno et al. (2011, eq. 1):
    every pair of distinct top words is scored once, conditioning on the
    more probable word ``v_j``. The paper's eq. (mimno-topic-coherence)
    prints the upper limit as ``j = i``, which would add the self-pair
    terms ``log((df(v_i) + 1) / df(v_i))``; those carry no co-occurrence
    information, so this function follows Mimno et al. ``"umass_mean"``
    with the same ``smoothing`` is ``"umass"`` divided by the number of
    pairs ``m (m - 1) / 2``.

    **Relation to gensim.** For the same top words (in the same order)
    and reference corpus, ``"umass_mean"``, ``"npmi"`` and ``"c_v"``
    reproduce ``CoherenceModel(coherence=...).get_coherence_per_topic()``
    for ``"u_mass"`` (``corpus=`` a bag-of-words corpus of ``X``),
    ``"c_npmi"`` and ``"c_v"`` (``texts=`` the texts of ``X`` and the same
    ``window_size``) up to rounding. A count matrix ``X`` matches
    gensim's sliding windows with a window longer than every text.
    Three cases differ on purpose: a top word that never occurs in
    ``X`` (see below; gensim returns ``inf`` or ``nan`` for ``"c_npmi"``
    and ``"c_v"``); a pair that occurs in every document or window, whose
    NPMI is 1 here (perfect association, the limit of the formula) but
    -1 in gensim, whose epsilon then flips the sign of the denominator;
    and ``"umass"``, which sums and smooths by 1 as Mimno et al. do.

    A top word that never occurs in ``X`` has ``n = 0``: for the UMass
    measures the pairs that condition on it add 0 (as in gensim), for
    NPMI its pairs score 0 (no evidence either way), and for C_V its NPMI
    vector is 0 and so is its cosine; a ``UserWarning`` names the words.

    Co-document counts come from one sparse product of the binary
    document-word matrix restricted to the union of all top words; window
    counts from a cumulative sum over each text's tokens.

    References
    ----------
    .. [1] D. Mimno, H. M. Wallach, E. Talley, M. Leenders and
       A. McCallum, "Optimizing semantic coherence in topic models",
       EMNLP 2011.
    .. [2] G. Bouma, "Normalized (pointwise) mutual information in
       collocation extraction", GSCL 2009.
    .. [3] M. Röder, A. Both and A. Hinneburg, "Exploring the space of
       topic coherence measures", WSDM 2015.

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

    NPMI of topic 0: words 0 and 1 share 2 of 4 documents and word 0 is
    in 3, so ``log(0.5 / (0.75 * 0.5)) / -log(0.5) = 0.415``; words 3 and
    1 never meet, which gives nearly -1:

    >>> topic_coherence(X, components, top_n=2, measure="npmi").round(4)
    array([ 0.415 , -0.9498])

    In windows of 2 neighbouring tokens, here 6 windows over 3 texts,
    words 0 and 1 meet in 2 windows and each is in 3, so
    ``log((2/6) / (3/6)**2) / -log(2/6) = 0.2619``:

    >>> texts = [["apple", "banana", "date", "date"], ["cherry", "date"],
    ...          ["banana", "apple", "cherry"]]
    >>> names = ["apple", "banana", "cherry", "date"]
    >>> topic_coherence(texts, components, top_n=2, measure="npmi",
    ...                 window_size=2, feature_names=names).round(4)
    array([ 0.2619, -0.2263])
    """
    caller = "topic_coherence"
    components = _check_nonneg_matrix(
        components, "components", caller, rows_positive=False
    )
    # The reference corpus first: a vocabulary that does not match the
    # components is the problem to name, not a top_n beyond it.
    reference = _check_reference(X, components.shape[1], window_size, feature_names, caller)
    top_n = _check_at_most_features(top_n, "top_n", components.shape[1], caller)
    _check_measure_args(measure, top_n, smoothing, caller)
    top = _top_indices(components, top_n)
    vocab, pos = np.unique(top, return_inverse=True)
    pos = pos.reshape(top.shape)
    co, n_windows = _reference_counts(reference, vocab, components.shape[1], window_size,
                                      caller)
    _warn_unseen(top, np.diag(co)[pos], measure)
    if smoothing is None:
        smoothing = 1.0 if measure == "umass" else _GENSIM_EPSILON * n_windows
    if measure in ("umass", "umass_mean"):
        terms = _umass_terms(co, pos, smoothing)
        if measure == "umass":
            return terms.sum(axis=(1, 2))
        return terms.sum(axis=(1, 2)) / (top_n * (top_n - 1) / 2)
    npmi = _npmi_matrix(co, n_windows, smoothing)
    if measure == "npmi":
        return _mean_pair_npmi(npmi, pos)
    return _c_v(npmi, pos)


def _check_measure_args(measure, top_n, smoothing, caller):
    """Bounds of ``top_n`` and ``smoothing`` that depend on the measure."""
    if measure != "umass" and top_n < 2:
        raise ValueError(
            f"top_n passed to {caller} must be at least 2 with "
            f"measure={measure!r} (a mean over word pairs), got {top_n}."
        )
    if measure in ("npmi", "c_v") and smoothing is not None and smoothing >= 1:
        raise ValueError(
            f"smoothing passed to {caller} must be below 1 with "
            f"measure={measure!r}, got {smoothing}: a whole count or more "
            "makes -log P(v, u) vanish or change sign for pairs that miss "
            "one document."
        )


def _warn_unseen(top, top_counts, measure):
    """Warn about top words that never occur in the reference corpus."""
    unseen = np.unique(top[top_counts == 0])
    if not unseen.size:
        return
    effect = {
        "umass": "the word pairs conditioning on them are skipped",
        "umass_mean": "the word pairs conditioning on them score 0",
        "npmi": "their word pairs score 0",
        "c_v": "their NPMI vectors are 0",
    }[measure]
    warnings.warn(
        f"{unseen.size} top word(s) of the topics never occur in X (feature "
        f"indices {unseen[:5].tolist()}{'...' if unseen.size > 5 else ''}); "
        f"{effect}.",
        UserWarning,
        stacklevel=4,  # the caller of topic_coherence (through validate_params)
    )


# --------------------------------------------------------------------------
# Co-occurrence counts of the top words
# --------------------------------------------------------------------------


def _check_reference(X, n_features, window_size, feature_names, caller):
    """The reference corpus, checked: the count matrix (``window_size``
    None), or ``(texts, lookup)`` of token sequences and the token -> feature
    lookup."""
    if window_size is None:
        if feature_names is not None:
            raise ValueError(
                f"feature_names passed to {caller} is used only to read texts, "
                "with window_size; X is then a list of token sequences."
            )
        if _looks_like_texts(X):
            raise ValueError(
                f"X passed to {caller} looks like tokenized texts; pass "
                "window_size (and feature_names for string tokens) to count "
                "co-occurrences in sliding windows, or pass a count matrix."
            )
        Xc = _check_count_matrix(X, "X", caller)
        if Xc.shape[1] != n_features:
            raise ValueError(
                f"components passed to {caller} has {n_features} features "
                f"but X has {Xc.shape[1]}."
            )
        return Xc
    return _check_texts(X, caller), _token_lookup(feature_names, n_features, caller)


def _reference_counts(reference, vocab, n_features, window_size, caller):
    """Co-occurrence counts among ``vocab`` and the number of documents/windows
    in the checked ``reference`` (:func:`_check_reference`).

    Returns ``(co, n)``: ``co[a, b]`` is the number of documents (or
    windows) containing both ``vocab[a]`` and ``vocab[b]``, ``co[a, a]``
    the number containing ``vocab[a]``.
    """
    if window_size is None:
        return _document_cooccurrence(reference, vocab), reference.shape[0]
    texts, lookup = reference
    return _window_cooccurrence(texts, vocab, n_features, window_size, lookup, caller)


def _document_cooccurrence(Xc, vocab):
    """Co-document counts: one product of the binary matrix on ``vocab``."""
    B = Xc[:, vocab]
    B.data = np.ones_like(B.data)
    return (B.T @ B).toarray()


def _looks_like_texts(X):
    """A list or tuple of strings, of token strings, or of rows of unequal length."""
    if not isinstance(X, (list, tuple)):
        return False
    lengths = set()
    for row in X:
        if isinstance(row, str) or not hasattr(row, "__len__"):
            return isinstance(row, str)
        if len(row) and isinstance(row[0], str):
            return True
        lengths.add(len(row))
    return len(lengths) > 1


def _check_texts(X, caller):
    """``X`` must be a list or tuple of token sequences (not strings)."""
    if sp.issparse(X) or not isinstance(X, (list, tuple)):
        raise ValueError(
            f"X passed to {caller} with window_size must be a list of texts "
            f"(token sequences), got {type(X).__name__}: a count matrix has "
            "no word order to slide a window over."
        )
    for d, text in enumerate(X):
        if isinstance(text, (str, bytes)) or not hasattr(text, "__len__"):
            raise ValueError(
                f"X passed to {caller} must be a list of token sequences; text "
                f"{d} is a {type(text).__name__} (split it into tokens first)."
            )
    return X


def _token_lookup(feature_names, n_features, caller):
    """Token -> feature index mapping, or ``None`` for integer tokens."""
    if feature_names is None:
        return None
    names = np.asarray(feature_names, dtype=object)
    if names.ndim != 1 or names.shape[0] != n_features:
        raise ValueError(
            f"feature_names passed to {caller} must be 1-D with one name per "
            f"feature ({n_features}), got shape {names.shape}."
        )
    lookup = {name: i for i, name in enumerate(names.tolist())}
    if len(lookup) != n_features:
        raise ValueError(f"feature_names passed to {caller} has duplicate names.")
    return lookup


def _hashable(token):
    try:
        hash(token)
    except TypeError:
        return False
    return True


def _text_ids(text, lookup, n_features, d, caller):
    """Feature indices of one text's tokens; -1 for tokens that are no feature."""
    if lookup is not None:
        try:
            return np.fromiter(
                (lookup.get(token, -1) for token in text), dtype=np.int64, count=len(text)
            )
        except TypeError:  # an unhashable token (a list, ...)
            bad = next(t for t in text if not _hashable(t))
            raise ValueError(
                f"Text {d} of X passed to {caller} has a token that is no word: "
                f"{type(bad).__name__} {bad!r:.60} (texts must be flat sequences "
                "of tokens)."
            ) from None
    ids = np.asarray(text)
    if ids.size == 0:
        return np.zeros(0, dtype=np.int64)
    if ids.ndim != 1 or ids.dtype.kind not in "iu":
        raise ValueError(
            f"Text {d} of X passed to {caller} must be a sequence of integer "
            "feature indices (or pass feature_names for string tokens)."
        )
    if ids.min() < 0 or ids.max() >= n_features:
        raise ValueError(
            f"Text {d} of X passed to {caller} has token indices outside "
            f"[0, {n_features})."
        )
    return ids.astype(np.int64, copy=False)


def _window_cooccurrence(texts, vocab, n_features, window_size, lookup, caller):
    """Co-occurrence counts in sliding windows, as gensim's boolean sliding window.

    A text of ``n`` tokens gives ``max(1, n - window_size + 1)`` windows
    (an empty text one empty window).
    """
    where = np.full(n_features + 1, -1, dtype=np.int64)  # index -1: no feature
    where[vocab] = np.arange(vocab.size)
    co = np.zeros((vocab.size, vocab.size), dtype=np.int64)
    n_windows = 0
    for d, text in enumerate(texts):
        ids = where[_text_ids(text, lookup, n_features, d, caller)]
        n_windows += max(1, ids.size - window_size + 1)
        present = np.unique(ids[ids >= 0])
        if present.size:
            local = np.searchsorted(present, ids)  # only used where ids >= 0
            block = _window_presence(np.where(ids >= 0, local, -1), present.size,
                                     window_size)
            co[np.ix_(present, present)] += block
    return co, n_windows


def _window_presence(local, n_present, window_size):
    """Co-occurrence counts among a text's ``n_present`` words over its windows.

    ``local`` holds each token's word in ``0..n_present - 1`` or -1. Window
    indicators come from a cumulative count of each word, built for blocks
    of windows so that memory stays bounded on long texts.
    """
    n = local.size
    if n <= window_size:
        return np.ones((n_present, n_present), dtype=np.int64)
    n_win = n - window_size + 1
    step = max(1, _BLOCK_CELLS // n_present - window_size)
    co = np.zeros((n_present, n_present))
    for start in range(0, n_win, step):
        stop = min(n_win, start + step)
        seg = local[start : stop + window_size - 1]
        counts = np.zeros((seg.size + 1, n_present), dtype=np.int32)
        hit = seg >= 0
        counts[np.flatnonzero(hit) + 1, seg[hit]] = 1
        np.cumsum(counts, axis=0, out=counts)
        inside = (counts[window_size:] - counts[:-window_size]) > 0
        inside = inside.astype(np.float64)
        co += inside.T @ inside  # exact: integers far below 2**53
    return np.rint(co).astype(np.int64)


# --------------------------------------------------------------------------
# Measures
# --------------------------------------------------------------------------


def _umass_terms(co, pos, smoothing):
    """``[k, i, j] = log((n(v_i, v_j) + s) / n(v_j))`` for ``j < i``, else 0.

    Pairs conditioning on a word that never occurs are 0.
    """
    m = pos.shape[1]
    pair = co[pos[:, :, None], pos[:, None, :]]  # [k, i, j] = n(v_i, v_j)
    cond = np.broadcast_to(np.diag(co)[pos][:, None, :], pair.shape)  # n(v_j)
    scored = np.tril(np.ones((m, m), dtype=bool), k=-1) & (cond > 0)
    terms = np.zeros(pair.shape)
    # A difference of logs: the ratio of a tiny smoothing and a count can
    # underflow to 0 where the logs stay finite.
    terms[scored] = np.log(pair[scored] + smoothing) - np.log(cond[scored])
    return terms


def _npmi_matrix(co, n, smoothing):
    """NPMI of every pair of words of ``co`` (including each word with itself).

    ``log((n(u, v) + s) n / (n(u) n(v))) / -log((n(u, v) + s) / n)``; 1 for
    pairs in every document or window, 0 for pairs with an unseen word.
    """
    df = np.diag(co).astype(np.float64)
    npmi = np.zeros(co.shape)
    seen = (df[:, None] > 0) & (df[None, :] > 0)
    everywhere = seen & (co == n)
    scored = seen & ~everywhere
    # In logs, as in _umass_terms: (0 + a tiny smoothing) / n can underflow.
    log_joint = np.log(co[scored] + smoothing) - np.log(n)
    log_marginals = np.log(np.outer(df, df)[scored]) - 2 * np.log(n)
    npmi[scored] = (log_joint - log_marginals) / -log_joint
    npmi[everywhere] = 1.0
    return npmi


def _mean_pair_npmi(npmi, pos):
    """Mean NPMI over each topic's pairs ``i < j``."""
    m = pos.shape[1]
    i, j = np.triu_indices(m, k=1)
    return npmi[pos[:, i], pos[:, j]].mean(axis=1)


def _c_v(npmi, pos):
    """C_V: mean cosine of each word's NPMI vector with the topic's summed vector."""
    vectors = npmi[pos[:, :, None], pos[:, None, :]]  # [k, i, l] = NPMI(v_i, v_l)
    total = vectors.sum(axis=1, keepdims=True)  # [k, 1, l]
    dot = (vectors * total).sum(axis=2)
    norms = np.linalg.norm(vectors, axis=2) * np.linalg.norm(total, axis=2)
    cosine = np.zeros(dot.shape)
    np.divide(dot, norms, out=cosine, where=norms > 0)
    return cosine.mean(axis=1)

"""Held-out evaluation by document completion: splitter, log-likelihood, perplexity."""

from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.utils import Bunch
from sklearn.utils._param_validation import HasMethods, validate_params

from .._chunking import capped_bounds, pieces
from .._corpus import (
    StrictInterval,
    check_group_labels,
    check_sparse_structure,
    perplexity_of,
)
from ..datasets._synthetic import _make_rng
from ._topics import (
    _check_count_matrix,
    _check_nonneg_matrix,
    _check_topic_model,
    _infer_doc_topic,
    _normalize_rows,
)

__all__ = [
    "doc_completion_split",
    "heldout_log_likelihood",
    "perplexity",
    "perplexity_from_estimates",
]

# Held-out tokens expanded at once by the splitter, and (nonzero x topic)
# products evaluated at once by the likelihood: both bound temporary memory.
_SPLIT_CHUNK_TOKENS = 1 << 22
# The longest row whose split numpy's multivariate hypergeometric draws.
_MAX_DRAWN_ROW = 10**9 - 1
_LL_CHUNK_ENTRIES = 1 << 22


# --------------------------------------------------------------------------
# Splitter
# --------------------------------------------------------------------------


def _n_heldout(test_size, n_samples, caller):
    """Number of held-out documents; ``test_size`` passed ``validate_params``."""
    if isinstance(test_size, Integral):
        if test_size > n_samples:
            raise ValueError(
                f"test_size={test_size} passed to {caller} must be between 1 "
                f"and the number of documents ({n_samples})."
            )
        return int(test_size)
    return int(np.ceil(test_size * n_samples))


def _split_rows(X, word_share, rng, doc_ids):
    """Split every row's tokens at random into observed and test parts
    (``doc_ids``: the rows' indices in the caller's X, for errors).

    Each row keeps ``floor(word_share * n_d + 0.5)`` of its ``n_d`` tokens
    as observed, a uniformly random subset of its token multiset. Rows are
    processed in chunks of about ``_SPLIT_CHUNK_TOKENS`` tokens
    (:func:`_observed_counts`); a row longer than that alone, whose tokens
    could not all be held in memory, gets its observed counts per word from
    a multivariate hypergeometric draw (the same distribution), up to
    NumPy's limit for it, ``_MAX_DRAWN_ROW`` tokens.
    """
    lengths = np.asarray(X.sum(axis=1)).ravel().astype(np.int64)
    n_obs = np.floor(word_share * lengths + 0.5).astype(np.int64)
    observed = np.zeros(X.nnz, dtype=np.int64)
    row_offsets = np.concatenate(([0], np.cumsum(lengths)))
    for lo, hi in pieces(capped_bounds(row_offsets, _SPLIT_CHUNK_TOKENS)):
        e0, e1 = X.indptr[lo], X.indptr[hi]
        if hi == lo + 1 and lengths[lo] > _SPLIT_CHUNK_TOKENS:
            if lengths[lo] > _MAX_DRAWN_ROW:
                raise ValueError(
                    f"document {doc_ids[lo]} has {lengths[lo]:,} tokens; a document completion "
                    f"split takes documents of at most {_MAX_DRAWN_ROW:,} (split it "
                    "into several documents)."
                )
            observed[e0:e1] = rng.multivariate_hypergeometric(
                X.data[e0:e1].astype(np.int64), n_obs[lo], method="marginals")
        else:
            observed[e0:e1] = _observed_counts(X, lo, hi, n_obs, row_offsets, rng)
    # Own index arrays: eliminate_zeros works in place.
    X_obs = sp.csr_matrix((observed, X.indices.copy(), X.indptr.copy()), shape=X.shape)
    X_test = sp.csr_matrix(
        (X.data - observed, X.indices.copy(), X.indptr.copy()), shape=X.shape
    )
    X_obs.eliminate_zeros()
    X_test.eliminate_zeros()
    return X_obs, X_test


def _observed_counts(X, lo, hi, n_obs, row_offsets, rng):
    """The observed count of each entry of rows ``lo:hi``: their tokens are
    expanded, ordered at random within their row, and the first ``n_obs``
    of each row are observed."""
    e0, e1 = X.indptr[lo], X.indptr[hi]
    entry_row = np.repeat(np.arange(lo, hi), np.diff(X.indptr[lo : hi + 1]))
    token_entry = np.repeat(np.arange(e0, e1), X.data[e0:e1])
    token_row = entry_row[token_entry - e0]
    keys = rng.random(token_entry.shape[0])
    # token_row is non-decreasing, so sorting by (row, random key) only
    # shuffles tokens within their row: token_row[order] == token_row.
    order = np.lexsort((keys, token_row))
    rank = np.arange(order.shape[0]) - (row_offsets[token_row] - row_offsets[lo])
    # rank[t]: position of the t-th sorted token within its row.
    is_obs = rank < n_obs[token_row]
    return np.bincount(token_entry[order][is_obs] - e0, minlength=e1 - e0)


@validate_params(
    {
        "X": ["array-like", "sparse matrix"],
        "groups": ["array-like", None],
        "test_size": [
            StrictInterval(Real, 0, 1, closed="right"),
            StrictInterval(Integral, 1, None, closed="left"),
        ],
        "word_share": [StrictInterval(Real, 0, 1, closed="neither")],
        "random_state": ["random_state", np.random.Generator],
    },
    prefer_skip_nested_validation=True,
)
def doc_completion_split(X, groups=None, *, test_size=0.2, word_share=0.5,
                         random_state=None):
    """Split a corpus for held-out evaluation by document completion.

    The paper's perplexity protocol (Wallach et al. 2009): a random
    ``test_size`` of the documents is held out, and the tokens of every
    held-out document are split at random into an *observed* part (a share
    ``word_share``) and a *test* part. A model is fitted on the training
    documents (and, in the paper, on the observed parts too); the test
    tokens are then predicted from the topics and each document's
    observed part (see :func:`perplexity` and
    :func:`perplexity_from_estimates`).

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Document-term counts. Non-integer values are rounded with a
        warning; negative, NaN or infinite values raise ``ValueError``.

    groups : array-like of shape (n_samples,), default=None
        Collection label of every document (for
        :class:`~sklearn_clda.CompoundLDA`), carried into the outputs.

    test_size : float or int, default=0.2
        Held-out documents: a fraction in ``(0, 1]`` (rounded up) or a
        count in ``[1, n_samples]``.

    word_share : float, default=0.5
        Share of each held-out document's tokens that is observed, in
        ``(0, 1)``. A document of ``n_d`` tokens gets
        ``floor(word_share * n_d + 0.5)`` observed tokens, the rest are
        test tokens.

    random_state : int, RandomState instance, Generator or None, default=None
        Determines the held-out documents and the token split. Pass an int
        for reproducible output across multiple function calls.
        See :term:`Glossary <random_state>`.

    Returns
    -------
    split : :class:`~sklearn.utils.Bunch`
        Dictionary-like object with the following attributes. All matrices
        are :class:`scipy.sparse.csr_matrix` of int64 counts with
        ``n_features`` columns.

        X_train : sparse matrix of shape (n_train + n_heldout, n_features)
            The matrix to fit on: the training documents (rows of ``X`` at
            ``train_index``) followed by the observed parts of the held-out
            documents. Fit on ``X_train[:n_train]`` instead to keep the
            held-out documents out of training entirely.
        X_observed : sparse matrix of shape (n_heldout, n_features)
            Observed parts of the held-out documents, one row per entry of
            ``heldout_index``.
        X_test : sparse matrix of shape (n_heldout, n_features)
            Test parts of the held-out documents;
            ``X_observed + X_test == X[heldout_index]``.
        train_index : ndarray of shape (n_train,)
            Indices into ``X`` of the training documents, increasing.
        heldout_index : ndarray of shape (n_heldout,)
            Indices into ``X`` of the held-out documents, increasing.
        heldout_rows : ndarray of shape (n_heldout,)
            Rows of ``X_train`` holding the observed parts, i.e.
            ``n_train + arange(n_heldout)``: a model fitted on ``X_train``
            has their sampler estimates in ``doc_topic_[heldout_rows]``.
        groups_train : ndarray of shape (n_train + n_heldout,) or None
            Labels of the rows of ``X_train``; ``None`` without ``groups``.
        groups_heldout : ndarray of shape (n_heldout,) or None
            Labels of the held-out documents; ``None`` without ``groups``.

    See Also
    --------
    perplexity : Perplexity of the test parts given the observed parts.
    perplexity_from_estimates : Perplexity from given topic proportions.

    Notes
    -----
    The split is per token: a held-out document's observed part is a
    uniformly random subset, of the stated size, of its token multiset (a
    multivariate hypergeometric draw over its word counts). The
    estimators' own ``score`` and ``perplexity`` instead deal every
    document's tokens deterministically into two halves and score both.

    Examples
    --------
    >>> from sklearn_clda.datasets import make_lda_corpus
    >>> from sklearn_clda.metrics import doc_completion_split
    >>> corpus = make_lda_corpus(n_topics=3, n_features=30, n_samples=50,
    ...                          doc_length=40, random_state=0)
    >>> split = doc_completion_split(corpus.data, test_size=0.2, random_state=0)
    >>> split.X_train.shape, split.X_observed.shape, split.X_test.shape
    ((50, 30), (10, 30), (10, 30))
    >>> split.X_observed.sum(axis=1).A1[:3], split.X_test.sum(axis=1).A1[:3]
    (array([20, 20, 20]), array([20, 20, 20]))
    >>> bool(((split.X_observed + split.X_test)
    ...       != corpus.data[split.heldout_index]).nnz == 0)
    True
    """
    caller = "doc_completion_split"
    X = _check_count_matrix(X, "X", caller)
    n_samples = X.shape[0]
    if n_samples == 0:
        raise ValueError(f"X passed to {caller} has no documents.")
    n_heldout = _n_heldout(test_size, n_samples, caller)
    labels = None
    if groups is not None:
        labels = check_group_labels(groups, n_samples, method=caller)

    rng = _make_rng(random_state)
    heldout = np.zeros(n_samples, dtype=bool)
    heldout[rng.permutation(n_samples)[:n_heldout]] = True
    heldout_index = np.flatnonzero(heldout)
    train_index = np.flatnonzero(~heldout)
    X_observed, X_test = _split_rows(X[heldout_index], float(word_share), rng,
                                       heldout_index)
    X_train = sp.vstack([X[train_index], X_observed], format="csr")
    n_train = train_index.shape[0]
    return Bunch(
        X_train=X_train,
        X_observed=X_observed,
        X_test=X_test,
        train_index=train_index,
        heldout_index=heldout_index,
        heldout_rows=n_train + np.arange(n_heldout),
        groups_train=(
            None if labels is None
            else np.concatenate([labels[train_index], labels[heldout_index]])
        ),
        groups_heldout=None if labels is None else labels[heldout_index],
    )


# --------------------------------------------------------------------------
# Likelihood of test tokens
# --------------------------------------------------------------------------


def _test_log_likelihood(theta, phi, X_test):
    """sum over nonzeros of X_test of count * log(theta_d . phi_w), and the token count.

    ``theta`` (n_docs, K) and ``phi`` (K, V) are row-stochastic. Nonzeros
    are processed in chunks to bound the (chunk, K) temporaries.
    """
    K = theta.shape[1]
    phi_t = np.ascontiguousarray(phi.T)  # word-major (V, K)
    rows = np.repeat(np.arange(X_test.shape[0]), np.diff(X_test.indptr))
    cols = X_test.indices
    counts = X_test.data.astype(np.float64)
    step = max(1, _LL_CHUNK_ENTRIES // K)
    total = 0.0
    with np.errstate(divide="ignore"):
        for start in range(0, counts.shape[0], step):
            stop = start + step
            p = np.einsum("ij,ij->i", theta[rows[start:stop]], phi_t[cols[start:stop]])
            total += float(counts[start:stop] @ np.log(p))
    return total, int(X_test.data.sum())


def _check_theta_phi(theta, topic_word, X_test, caller, names=("theta", "topic_word", "X_test")):
    """Both as row-stochastic float64 arrays, their shapes checked against
    each other and the counts ``X_test``; ``names``: the caller's names of
    the three, for the errors."""
    theta_name, phi_name, x_name = names
    theta = _check_nonneg_matrix(theta, theta_name, caller)
    phi = _check_nonneg_matrix(topic_word, phi_name, caller)
    if theta.shape[1] != phi.shape[0]:
        raise ValueError(
            f"{theta_name} passed to {caller} has {theta.shape[1]} topics but "
            f"{phi_name} has {phi.shape[0]}."
        )
    if phi.shape[1] != X_test.shape[1]:
        raise ValueError(
            f"{phi_name} passed to {caller} has {phi.shape[1]} features but "
            f"{x_name} has {X_test.shape[1]}."
        )
    if theta.shape[0] != X_test.shape[0]:
        raise ValueError(
            f"{theta_name} passed to {caller} has {theta.shape[0]} rows but {x_name} has "
            f"{X_test.shape[0]} documents."
        )
    return _normalize_rows(theta), _normalize_rows(phi)


def _perplexity_value(ll, n_tokens, caller):
    if n_tokens == 0:
        raise ValueError(
            f"X_test passed to {caller} contains no tokens; perplexity is undefined."
        )
    return perplexity_of(ll, n_tokens)


@validate_params(
    {
        "theta": ["array-like"],
        "topic_word": ["array-like"],
        "X_test": ["array-like", "sparse matrix"],
    },
    prefer_skip_nested_validation=True,
)
def perplexity_from_estimates(theta, topic_word, X_test):
    """Per-token perplexity of test tokens under given point estimates.

    ``exp(-sum_{d, w} X_test[d, w] * log(theta[d] @ topic_word[:, w]) /
    n_test_tokens)``: each test token of document ``d`` has probability
    ``sum_k theta[d, k] * topic_word[k, w]`` (the paper's eq.
    c-lda-perplexity-pred-ll with the estimates plugged in).

    Use it when the topic proportions do not come from ``transform``: the
    sampler's own estimates of documents that were part of training (the
    paper's protocol, below), or point estimates from another library.

    Parameters
    ----------
    theta : array-like of shape (n_samples, n_topics)
        Topic proportions of the documents of ``X_test``. Rows are
        normalized to sum to one.

    topic_word : array-like of shape (n_topics, n_features)
        Topic-word weights, e.g. a model's ``components_``. Rows are
        normalized to sum to one.

    X_test : {array-like, sparse matrix} of shape (n_samples, n_features)
        Counts of the test tokens, e.g. ``doc_completion_split(...).X_test``.

    Returns
    -------
    perplexity : float
        Lower is better. ``inf`` if a test token has probability zero, or
        if the perplexity is past the largest double (about 1.8e308).

    See Also
    --------
    perplexity : Infers ``theta`` from observed tokens with a fitted model.
    doc_completion_split : Builds the held-out split.

    Notes
    -----
    **The paper's protocol** ("observed parts trained on"): fit on
    ``split.X_train``, which contains the observed part of every held-out
    document, and take those documents' topic proportions from the chain::

        model.fit(split.X_train, groups=split.groups_train)
        perplexity_from_estimates(model.doc_topic_[split.heldout_rows],
                                  model.components_, split.X_test)

    ``doc_topic_`` averages ``(n_dk + alpha_k) / (n_d + sum_k alpha_k)``
    and ``components_`` the topic-word counts plus ``eta`` over the kept
    samples: the Rao-Blackwellized estimates of the paper's Appendix
    (perplexity), averaged before, not after, computing the probability.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_clda.metrics import perplexity_from_estimates
    >>> theta = np.array([[1.0, 0.0], [0.5, 0.5]])
    >>> topic_word = np.array([[0.5, 0.5, 0.0], [0.0, 0.5, 0.5]])
    >>> X_test = np.array([[1, 1, 0], [0, 0, 2]])
    >>> round(perplexity_from_estimates(theta, topic_word, X_test), 4)  # 64 ** 0.25
    2.8284
    """
    caller = "perplexity_from_estimates"
    X_test = _check_count_matrix(X_test, "X_test", caller)
    theta, phi = _check_theta_phi(theta, topic_word, X_test, caller)
    ll, n_tokens = _test_log_likelihood(theta, phi, X_test)
    return _perplexity_value(ll, n_tokens, caller)


def _estimator_log_likelihood(estimator, X_observed, X_test, groups, caller):
    _check_topic_model(estimator, caller)
    X_test = _check_count_matrix(X_test, "X_test", caller)
    # X_observed goes to the estimator's own transform, which may be a
    # third-party one: its structure is checked here, before anything reads it.
    X_observed = check_sparse_structure(X_observed, caller, "X_observed")
    n_obs = X_observed.shape[0] if hasattr(X_observed, "shape") else len(X_observed)
    if n_obs != X_test.shape[0]:
        raise ValueError(
            f"X_observed and X_test passed to {caller} must have the same number "
            f"of documents, got {n_obs} and {X_test.shape[0]}."
        )
    theta = _infer_doc_topic(estimator, X_observed, groups, caller)
    theta, phi = _check_theta_phi(theta, estimator.components_, X_test, caller)
    return _test_log_likelihood(theta, phi, X_test)


@validate_params(
    {
        "estimator": [HasMethods(["fit", "transform"])],
        "X_observed": ["array-like", "sparse matrix"],
        "X_test": ["array-like", "sparse matrix"],
        "groups": ["array-like", None],
    },
    # The estimator's transform is called: keep its own validation.
    prefer_skip_nested_validation=False,
)
def heldout_log_likelihood(estimator, X_observed, X_test, groups=None):
    """Log-likelihood of test tokens given observed tokens of the same documents.

    Document completion with a fitted model: the topic proportions
    ``theta_d`` of each document are inferred from its observed tokens by
    ``estimator.transform(X_observed)`` with the topics held fixed, and
    each test token of word ``w`` scores ``log(theta_d @ phi[:, w])``, with
    ``phi`` the row-normalized ``estimator.components_``.

    Parameters
    ----------
    estimator : fitted estimator
        :class:`~sklearn_clda.LDAGibbs`, :class:`~sklearn_clda.CompoundLDA`,
        :class:`~sklearn.decomposition.LatentDirichletAllocation` or any
        model with ``components_`` and a ``transform`` returning topic
        proportions.

    X_observed : {array-like, sparse matrix} of shape (n_samples, n_features)
        Observed tokens of the documents, passed to ``transform``.

    X_test : {array-like, sparse matrix} of shape (n_samples, n_features)
        Test tokens of the same documents, row by row.

    groups : array-like of shape (n_samples,), default=None
        Collection labels of the documents, passed to ``transform`` if it
        accepts ``groups`` (:class:`~sklearn_clda.CompoundLDA`) and
        ignored otherwise, so one call fits every model of a comparison.

    Returns
    -------
    log_likelihood : float
        Sum over test tokens, in nats (higher is better). ``-inf`` if a
        test token has probability zero.

    See Also
    --------
    perplexity : ``exp(-log_likelihood / n_test_tokens)``.
    doc_completion_split : Builds ``X_observed`` and ``X_test``.

    Examples
    --------
    >>> from sklearn_clda import LDAGibbs
    >>> from sklearn_clda.datasets import make_lda_corpus
    >>> from sklearn_clda.metrics import doc_completion_split, heldout_log_likelihood
    >>> corpus = make_lda_corpus(n_topics=3, n_features=30, n_samples=60,
    ...                          doc_length=50, random_state=0)
    >>> split = doc_completion_split(corpus.data, random_state=0)
    >>> lda = LDAGibbs(n_components=3, max_iter=100, random_state=0)
    >>> lda = lda.fit(split.X_train)
    >>> ll = heldout_log_likelihood(lda, split.X_observed, split.X_test)
    >>> round(ll)
    -206

    It is the log-likelihood of the test tokens under the folded-in
    topic proportions and the normalized topics:

    >>> import numpy as np
    >>> theta = lda.transform(split.X_observed)
    >>> phi = lda.components_ / lda.components_.sum(axis=1, keepdims=True)
    >>> round(float(np.sum(split.X_test.toarray() * np.log(theta @ phi))))
    -206
    """
    ll, _ = _estimator_log_likelihood(
        estimator, X_observed, X_test, groups, "heldout_log_likelihood"
    )
    return float(ll)


@validate_params(
    {
        "estimator": [HasMethods(["fit", "transform"])],
        "X_observed": ["array-like", "sparse matrix"],
        "X_test": ["array-like", "sparse matrix"],
        "groups": ["array-like", None],
    },
    # The estimator's transform is called: keep its own validation.
    prefer_skip_nested_validation=False,
)
def perplexity(estimator, X_observed, X_test, groups=None):
    """Per-token perplexity of test tokens given observed tokens (document completion).

    ``exp(-heldout_log_likelihood(...) / n_test_tokens)``, the paper's eq.
    (c-lda-perplexity) with ``theta_d`` inferred from each document's
    observed tokens by ``estimator.transform`` (fold-in, topics held
    fixed) and ``phi`` the row-normalized ``estimator.components_``. It
    works the same for every model, so it compares
    :class:`~sklearn_clda.LDAGibbs`, :class:`~sklearn_clda.CompoundLDA`
    and :class:`~sklearn.decomposition.LatentDirichletAllocation` fits.

    Parameters
    ----------
    estimator : fitted estimator
        A fitted topic model with ``components_`` and ``transform``.

    X_observed : {array-like, sparse matrix} of shape (n_samples, n_features)
        Observed tokens of the documents, passed to ``transform``.

    X_test : {array-like, sparse matrix} of shape (n_samples, n_features)
        Test tokens of the same documents.

    groups : array-like of shape (n_samples,), default=None
        Collection labels, passed to ``transform`` only if it accepts
        ``groups`` (:class:`~sklearn_clda.CompoundLDA`).

    Returns
    -------
    perplexity : float
        Lower is better; ``inf`` if a test token has probability zero, or
        if the perplexity is past the largest double (about 1.8e308).

    See Also
    --------
    heldout_log_likelihood : The summed log-likelihood.
    perplexity_from_estimates : From given ``theta`` and topics, e.g. the
        sampler's estimates of documents that were part of training.
    doc_completion_split : Builds ``X_observed`` and ``X_test``.

    Notes
    -----
    **Fold-in protocol** (this function): the held-out documents are not
    part of training; fit on the training documents only,
    ``split.X_train[:len(split.train_index)]``, or on all of
    ``split.X_train`` (then the observed parts also shape the topics), and
    call ``perplexity(model, split.X_observed, split.X_test,
    groups=split.groups_heldout)``.

    **Paper's protocol** (:func:`perplexity_from_estimates`): fit on
    ``split.X_train``, which contains the observed parts, and use the
    chain's estimates ``model.doc_topic_[split.heldout_rows]`` instead of
    re-inferring them.

    The estimators' own ``perplexity(X)`` is a third variant that needs no
    split: it deals each document of ``X`` into two halves and scores
    each half given the other.

    Examples
    --------
    >>> from sklearn_clda import CompoundLDA
    >>> from sklearn_clda.datasets import make_compound_corpus
    >>> from sklearn_clda.metrics import doc_completion_split, perplexity
    >>> corpus = make_compound_corpus(n_topics=3, n_features=40,
    ...                               docs_per_collection=40, doc_length=60,
    ...                               random_state=0)
    >>> split = doc_completion_split(corpus.data, corpus.groups, random_state=0)
    >>> n_train = len(split.train_index)
    >>> clda = CompoundLDA(n_components=3, max_iter=100, random_state=0)
    >>> clda = clda.fit(split.X_train[:n_train], groups=split.groups_train[:n_train])
    >>> score = perplexity(clda, split.X_observed, split.X_test,
    ...                    groups=split.groups_heldout)
    >>> from sklearn_clda.metrics import perplexity_from_estimates
    >>> true = perplexity_from_estimates(corpus.theta[split.heldout_index],
    ...                                  corpus.beta, split.X_test)
    >>> round(score, 1), round(true, 1)  # close to the true parameters' perplexity
    (15.6, 14.9)
    """
    caller = "perplexity"
    ll, n_tokens = _estimator_log_likelihood(estimator, X_observed, X_test, groups, caller)
    return _perplexity_value(ll, n_tokens, caller)

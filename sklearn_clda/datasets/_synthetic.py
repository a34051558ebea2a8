"""Simulate corpora from LDA and compound LDA generative models."""

from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.utils import Bunch, check_random_state
from sklearn.utils._param_validation import validate_params

from .._hyper import MAX_CONCENTRATION
from .._corpus import StrictInterval

__all__ = ["make_compound_corpus", "make_lda_corpus"]

_INT32_MAX = np.iinfo(np.int32).max

# --------------------------------------------------------------------------
# Argument validation
# --------------------------------------------------------------------------

_POSITIVE_INT = StrictInterval(Integral, 1, None, closed="left")
# Dirichlet concentrations: positive, at most the estimators' largest
# (numpy's Dirichlet returns zeros near 1e308 / dimension); tiny ones are
# the one-hot limit.
_CONCENTRATION = StrictInterval(Real, 0, MAX_CONCENTRATION, closed="right")
_DOC_LENGTH = [_POSITIVE_INT, tuple, list]
_RANDOM_STATE = ["random_state", np.random.Generator]


def _check_doc_length(doc_length):
    """Return ``(low, high)``, the inclusive range of document lengths.

    ``validate_params`` has checked that ``doc_length`` is a positive int,
    a tuple or a list; a pair must hold two positive ints with low <= high.
    """
    if isinstance(doc_length, (tuple, list)):
        if len(doc_length) != 2 or not all(
            _POSITIVE_INT.is_satisfied_by(v) for v in doc_length
        ):
            raise ValueError(
                "doc_length must be a positive integer or a (low, high) pair of "
                f"positive integers, got {doc_length!r}."
            )
        low, high = (int(v) for v in doc_length)
        if low > high:
            raise ValueError(
                f"doc_length=(low, high) needs low <= high, got {tuple(doc_length)!r}."
            )
    else:
        low = high = int(doc_length)
    if high > _INT32_MAX:
        raise ValueError(f"doc_length must not exceed {_INT32_MAX}, got {high}.")
    return low, high


def _make_rng(random_state):
    """Turn ``random_state`` into a :class:`numpy.random.Generator`.

    A Generator is used as is. Anything else goes through
    :func:`sklearn.utils.check_random_state`, and four 32-bit words drawn
    from the resulting ``RandomState`` seed a new Generator: an int seed or
    a ``RandomState(seed)`` therefore give reproducible output, and a
    ``RandomState`` instance (or the global one for None) is advanced.
    """
    if isinstance(random_state, np.random.Generator):
        return random_state
    rs = check_random_state(random_state)
    seed = rs.randint(0, 2**32, size=4, dtype=np.uint64)
    return np.random.default_rng(seed)


# --------------------------------------------------------------------------
# Sampling
# --------------------------------------------------------------------------


def _sample_doc_lengths(rng, n_docs, low, high):
    if low == high:
        return np.full(n_docs, low, dtype=np.int64)
    return rng.integers(low, high, size=n_docs, endpoint=True, dtype=np.int64)


def _sample_corpus(rng, theta, beta, doc_lengths):
    """Draw topics and words of every token, given theta and beta.

    For document ``d`` with ``doc_lengths[d]`` tokens, each token draws a
    topic ``z ~ Mult(theta[d])`` and then a word ``w ~ Mult(beta[z])``.

    The topic counts of all documents come from a single vectorized
    multinomial draw. The tokens are then laid out topic by topic (and
    document by document within a topic) and the words of all tokens of
    topic ``k`` are drawn at once by inverting the CDF of ``beta[k]``, so
    the only Python loop runs over the topics.

    Returns
    -------
    X : sparse matrix of shape (n_docs, n_features)
        CSR document-word counts (int32, canonical format).
    doc_topic_counts : ndarray of shape (n_docs, n_topics)
        Number of tokens of each document assigned to each topic (int32).
    """
    n_docs, n_topics = theta.shape
    n_features = beta.shape[1]

    doc_topic_counts = rng.multinomial(doc_lengths, theta)  # (n_docs, n_topics)

    # Topic-major token layout: all tokens of topic 0 (documents in order),
    # then all tokens of topic 1, ...
    counts_by_topic = doc_topic_counts.T  # (n_topics, n_docs), a view
    token_doc = np.repeat(
        np.tile(np.arange(n_docs, dtype=np.int32), n_topics),
        counts_by_topic.ravel(),
    )
    topic_ends = np.cumsum(counts_by_topic.sum(axis=1))
    token_word = np.empty(token_doc.shape[0], dtype=np.int32)
    start = 0
    for k in range(n_topics):
        end = topic_ends[k]
        if end > start:
            cdf = np.cumsum(beta[k])
            cdf /= cdf[-1]  # exactly 1.0 at the end, so indices stay < n_features
            # side="right": word v is hit iff cdf[v-1] <= u < cdf[v], so
            # words of probability zero are never drawn.
            token_word[start:end] = np.searchsorted(
                cdf, rng.random(end - start), side="right"
            )
        start = end

    X = sp.coo_matrix(
        (np.ones(token_doc.shape[0], dtype=np.int32), (token_doc, token_word)),
        shape=(n_docs, n_features),
    ).tocsr()  # duplicates (repeated words) are summed
    X.sum_duplicates()
    return X, doc_topic_counts.astype(np.int32, copy=False)


def _sample_dirichlet(rng, concentration, size):
    """``size`` draws from Dir(concentration); zero entries stay zero."""
    support = concentration > 0
    if support.all():
        return rng.dirichlet(concentration, size=size)
    out = np.zeros((size, concentration.shape[0]))
    out[:, support] = rng.dirichlet(concentration[support], size=size)
    return out


# --------------------------------------------------------------------------
# Public generators
# --------------------------------------------------------------------------


@validate_params(
    {
        "n_topics": [_POSITIVE_INT],
        "n_features": [_POSITIVE_INT],
        "n_collections": [_POSITIVE_INT],
        "docs_per_collection": [_POSITIVE_INT],
        "doc_length": _DOC_LENGTH,
        "alpha": [_CONCENTRATION],
        "gamma": [_CONCENTRATION],
        "eta": [_CONCENTRATION],
        "random_state": _RANDOM_STATE,
    },
    prefer_skip_nested_validation=True,
)
def make_compound_corpus(
    n_topics=3,
    n_features=40,
    n_collections=2,
    docs_per_collection=100,
    doc_length=200,
    *,
    alpha=0.1,
    gamma=1.0,
    eta=0.25,
    random_state=None,
):
    """Generate a corpus from the compound LDA generative model.

    Documents are organised into ``n_collections`` collections of
    ``docs_per_collection`` documents each. With ``K = n_topics`` and
    ``V = n_features``, the model is

    - topics: ``beta[k] ~ Dirichlet_V(eta)`` for ``k = 1..K``;
    - collection topic proportions: ``pi[j] ~ Dirichlet_K(alpha)``;
    - document topic proportions: ``theta[j, d] ~ Dirichlet_K(gamma * pi[j])``;
    - every token of document ``(j, d)``: a topic
      ``z ~ Multinomial(theta[j, d])``, then a word
      ``w ~ Multinomial(beta[z])``.

    So ``gamma`` controls how closely the documents of a collection follow
    the collection's topic proportions ``pi[j]`` (``E[theta[j, d]] = pi[j]``,
    and the documents' variance around it shrinks as ``1 / (gamma + 1)``).

    The simulation is vectorized (no loop over tokens or documents): five
    million tokens take a few seconds.

    Parameters
    ----------
    n_topics : int, default=3
        Number of topics ``K``.

    n_features : int, default=40
        Vocabulary size ``V``.

    n_collections : int, default=2
        Number of collections ``J``.

    docs_per_collection : int, default=100
        Number of documents in every collection.

    doc_length : int or tuple of (int, int), default=200
        Number of tokens per document. An int gives every document exactly
        that many tokens; a pair ``(low, high)`` draws each document's
        length uniformly from the integers ``low..high`` (inclusive).
        Lengths must be at least 1.

    alpha : float, default=0.1
        Symmetric Dirichlet concentration of the collections' topic
        proportions ``pi``.

    gamma : float, default=1.0
        Scale of the documents' Dirichlet concentration ``gamma * pi[j]``.

    eta : float, default=0.25
        Symmetric Dirichlet concentration of the topic-word distributions
        ``beta``.

    random_state : int, RandomState instance, Generator or None, default=None
        Determines the random draws. Pass an int for reproducible output
        across multiple function calls. A :class:`numpy.random.Generator`
        is used (and advanced) directly.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        Dictionary-like object, with the following attributes.

        data : sparse matrix of shape (n_collections * docs_per_collection, \
                n_features)
            Document-word counts, a :class:`scipy.sparse.csr_matrix` of
            dtype ``int32``. Documents are ordered collection by
            collection.
        groups : ndarray of shape (n_collections * docs_per_collection,)
            Collection index (``0..n_collections - 1``) of every document.
        beta : ndarray of shape (n_topics, n_features)
            The true topic-word distributions (rows sum to 1).
        pi : ndarray of shape (n_collections, n_topics)
            The true topic proportions of each collection (rows sum to 1).
        theta : ndarray of shape (n_collections * docs_per_collection, \
                n_topics)
            The true topic proportions of each document (rows sum to 1).
        doc_topic_counts : ndarray of shape (n_collections * \
                docs_per_collection, n_topics)
            Number of tokens of each document drawn from each topic
            (``int32``; rows sum to the document lengths).

    See Also
    --------
    make_lda_corpus : Corpus from the plain LDA model (no collections).

    Notes
    -----
    With small concentrations, Dirichlet draws can contain exact zeros
    (probabilities below the smallest double). These are valid
    probabilities: a topic with ``pi[j, k] == 0`` simply never occurs in
    collection ``j``, and a word with ``beta[k, v] == 0`` is never drawn
    from topic ``k``.

    Examples
    --------
    >>> from sklearn_clda.datasets import make_compound_corpus
    >>> bunch = make_compound_corpus(random_state=0)
    >>> bunch.data.shape
    (200, 40)
    >>> lengths = bunch.data.sum(axis=1)
    >>> int(lengths.min()), int(lengths.max())
    (200, 200)
    >>> bunch.groups[:3], bunch.groups[-3:]
    (array([0, 0, 0]), array([1, 1, 1]))
    >>> bunch.beta.shape, bunch.pi.shape, bunch.theta.shape
    ((3, 40), (2, 3), (200, 3))
    >>> bunch = make_compound_corpus(doc_length=(50, 150), random_state=0)
    >>> lengths = bunch.data.sum(axis=1)
    >>> int(lengths.min()), int(lengths.max())  # both ends are reached
    (50, 150)
    """
    n_topics, n_features, n_collections, docs_per_collection = (
        int(v) for v in (n_topics, n_features, n_collections, docs_per_collection)
    )
    alpha, gamma, eta = float(alpha), float(gamma), float(eta)
    low, high = _check_doc_length(doc_length)
    rng = _make_rng(random_state)

    n_docs = n_collections * docs_per_collection
    beta = rng.dirichlet(np.full(n_features, eta), size=n_topics)
    pi = rng.dirichlet(np.full(n_topics, alpha), size=n_collections)

    theta = np.empty((n_docs, n_topics))
    for j in range(n_collections):
        rows = slice(j * docs_per_collection, (j + 1) * docs_per_collection)
        concentration = gamma * pi[j]
        if concentration.any():
            theta[rows] = _sample_dirichlet(rng, concentration, docs_per_collection)
        else:
            # gamma * pi[j] underflowed to zero everywhere (gamma < ~1e-300).
            # As gamma -> 0, Dir(gamma * pi) tends to a one-hot vector whose
            # hot entry is k with probability pi[j, k]: sample that limit.
            theta[rows] = 0.0
            hot = rng.choice(n_topics, size=docs_per_collection, p=pi[j])
            theta[rows.start + np.arange(docs_per_collection), hot] = 1.0

    doc_lengths = _sample_doc_lengths(rng, n_docs, low, high)
    X, doc_topic_counts = _sample_corpus(rng, theta, beta, doc_lengths)

    return Bunch(
        data=X,
        groups=np.repeat(np.arange(n_collections), docs_per_collection),
        beta=beta,
        pi=pi,
        theta=theta,
        doc_topic_counts=doc_topic_counts,
    )


@validate_params(
    {
        "n_topics": [_POSITIVE_INT],
        "n_features": [_POSITIVE_INT],
        "n_samples": [_POSITIVE_INT],
        "doc_length": _DOC_LENGTH,
        "doc_topic_prior": [_CONCENTRATION],
        "topic_word_prior": [_CONCENTRATION],
        "random_state": _RANDOM_STATE,
    },
    prefer_skip_nested_validation=True,
)
def make_lda_corpus(
    n_topics,
    n_features,
    n_samples,
    doc_length,
    *,
    doc_topic_prior=0.1,
    topic_word_prior=0.01,
    random_state=None,
):
    """Generate a corpus from the latent Dirichlet allocation (LDA) model.

    With ``K = n_topics`` and ``V = n_features``, the model is

    - topics: ``beta[k] ~ Dirichlet_V(topic_word_prior)`` for ``k = 1..K``;
    - document topic proportions:
      ``theta[d] ~ Dirichlet_K(doc_topic_prior)``;
    - every token of document ``d``: a topic ``z ~ Multinomial(theta[d])``,
      then a word ``w ~ Multinomial(beta[z])``.

    The parameter names follow
    :class:`~sklearn.decomposition.LatentDirichletAllocation`.

    Parameters
    ----------
    n_topics : int
        Number of topics ``K``.

    n_features : int
        Vocabulary size ``V``.

    n_samples : int
        Number of documents.

    doc_length : int or tuple of (int, int)
        Number of tokens per document. An int gives every document exactly
        that many tokens; a pair ``(low, high)`` draws each document's
        length uniformly from the integers ``low..high`` (inclusive).
        Lengths must be at least 1.

    doc_topic_prior : float, default=0.1
        Symmetric Dirichlet concentration of the documents' topic
        proportions ``theta``.

    topic_word_prior : float, default=0.01
        Symmetric Dirichlet concentration of the topic-word distributions
        ``beta``.

    random_state : int, RandomState instance, Generator or None, default=None
        Determines the random draws. Pass an int for reproducible output
        across multiple function calls. A :class:`numpy.random.Generator`
        is used (and advanced) directly.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        Dictionary-like object, with the following attributes.

        data : sparse matrix of shape (n_samples, n_features)
            Document-word counts, a :class:`scipy.sparse.csr_matrix` of
            dtype ``int32``.
        beta : ndarray of shape (n_topics, n_features)
            The true topic-word distributions (rows sum to 1).
        theta : ndarray of shape (n_samples, n_topics)
            The true topic proportions of each document (rows sum to 1).
        doc_topic_counts : ndarray of shape (n_samples, n_topics)
            Number of tokens of each document drawn from each topic
            (``int32``; rows sum to the document lengths).

    See Also
    --------
    make_compound_corpus : Corpus whose documents are grouped into
        collections with their own topic proportions.

    Examples
    --------
    >>> from sklearn_clda.datasets import make_lda_corpus
    >>> bunch = make_lda_corpus(5, 100, 50, 80, random_state=0)
    >>> bunch.data.shape
    (50, 100)
    >>> int(bunch.data.sum())
    4000
    >>> bunch.beta.shape, bunch.theta.shape, bunch.doc_topic_counts.shape
    ((5, 100), (50, 5), (50, 5))
    """
    n_topics, n_features, n_samples = int(n_topics), int(n_features), int(n_samples)
    doc_topic_prior, topic_word_prior = float(doc_topic_prior), float(topic_word_prior)
    low, high = _check_doc_length(doc_length)
    rng = _make_rng(random_state)

    beta = rng.dirichlet(np.full(n_features, topic_word_prior), size=n_topics)
    theta = rng.dirichlet(np.full(n_topics, doc_topic_prior), size=n_samples)
    doc_lengths = _sample_doc_lengths(rng, n_samples, low, high)
    X, doc_topic_counts = _sample_corpus(rng, theta, beta, doc_lengths)

    return Bunch(data=X, beta=beta, theta=theta, doc_topic_counts=doc_topic_counts)

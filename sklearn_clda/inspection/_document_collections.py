"""Which collection each document reads like: ``p(collection | words)``."""

from numbers import Integral

import numpy as np
import scipy.sparse as sp
from scipy.special import gammaln, logsumexp
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import HasMethods, StrOptions, validate_params

from .._chunking import CHUNK_BYTES, budget_pieces
from .._corpus import StrictInterval, check_group_labels, to_count_csr
from .._memory import gib, physical_memory
from ..exceptions import MemoryLimitError
from ._documents import document_counts
from ._fixed_topics import FixedTopicChains
from ._utils import check_clda, require_pandas, topic_word, unwrap

__all__ = ["document_collections"]


def sample_topic_counts(phi_t, counts, prior, n_sweeps, rng):
    """Gibbs sweeps over the tokens of every document with the topics held
    fixed, all under ``prior`` (K,); yields a copy of each sweep's
    document-topic counts, shape (D, K), int64 (see
    :class:`~sklearn_clda.inspection._fixed_topics.FixedTopicChains`).
    """
    rows = np.ascontiguousarray(prior, dtype=np.float64)[None]
    doc_prior = np.zeros(counts.shape[0], dtype=np.int64)
    chains = FixedTopicChains(phi_t, counts, rows, doc_prior, rng)
    for ndk in chains.sweeps(n_sweeps, rows, doc_prior, rng):
        yield ndk.copy()


def log_prior_ratios(ndk, alphas, neutral):
    """``log p(z | alpha_s) - log p(z | neutral)`` of each document's topic
    counts ``ndk`` (D, K) under every Dirichlet prior ``alphas`` (S, J, K)
    of the same total as ``neutral`` (K,): shape (S, J, D). The Dirichlet-
    multinomial probability of a sequence of topics with counts ``n`` is
    ``Gamma(A) / Gamma(A + N) * prod_k Gamma(a_k + n_k) / Gamma(a_k)``; the
    first factor is the same for both priors. Only the topics a document
    uses count (``Gamma(a + 0) / Gamma(a) = 1``), and a topic's term
    depends only on its count, so the terms are computed once for each
    (topic, count) that occurs and summed per document, in pieces of
    documents."""
    S, J, D = alphas.shape[0], alphas.shape[1], ndk.shape[0]
    out = np.empty((S, J, D))
    rows, cols = np.nonzero(ndk)
    ptr = np.searchsorted(rows, np.arange(D + 1))
    for lo, hi in budget_pieces(ptr, 8 * 2 * S * J):
        a, b = ptr[lo], ptr[hi]
        n = ndk[rows[a:b], cols[a:b]]
        pairs, where = np.unique(cols[a:b] * (int(n.max(initial=0)) + 1) + n,
                                 return_inverse=True)
        k, count = np.divmod(pairs, int(n.max(initial=0)) + 1)
        terms = gammaln(alphas[:, :, k] + count) - gammaln(alphas[:, :, k])
        terms -= gammaln(neutral[k] + count) - gammaln(neutral[k])
        per_doc = sp.csr_matrix((np.ones(b - a), (rows[a:b] - lo, np.arange(b - a))),
                                shape=(hi - lo, b - a))
        out[:, :, lo:hi] = (per_doc @ terms[:, :, where.ravel()].reshape(S * J, -1).T).T.reshape(
            S, J, hi - lo)
    return out


def _model_parts(model, n_draws, caller):
    """``(alphas, neutral, labels, sizes)``: ``gamma * pi_j`` of up to
    ``n_draws`` kept draws, evenly spaced (S, J, K), the size-weighted
    mean mixture times ``gamma`` (K,), the collections and their numbers of
    training documents."""
    samples = check_clda(model, caller)
    labels = getattr(model, "groups_", None)
    if labels is None or len(labels) < 2:
        raise ValueError(
            f"{caller} tells collections apart, but the model was fitted with one "
            "collection; fit it with groups of two collections or more."
        )
    picked = np.unique(np.linspace(0, samples.shape[0] - 1, min(n_draws, samples.shape[0]))
                       .round().astype(np.intp))
    sizes = np.asarray(model.collection_sizes_, dtype=np.float64)
    gamma = float(model.gamma_)
    # Topics with no mass in a draw stay possible, at the smallest positive prior.
    alphas = np.maximum(gamma * samples[picked], np.finfo(np.float64).tiny)
    neutral = np.maximum(gamma * (sizes / sizes.sum()) @ np.asarray(model.collection_topic_),
                         np.finfo(np.float64).tiny)
    return alphas, neutral, np.asarray(labels), sizes


def checked_counts(model, pre, X, caller):
    """The documents as canonical CSR counts of the model's vocabulary."""
    counts = document_counts(X if pre is None else pre.transform(X), caller)
    n_features = np.shape(model.components_)[1]
    if counts.shape[1] != n_features:
        raise ValueError(f"X passed to {caller} has {counts.shape[1]} features, but the "
                         f"model has {n_features}.")
    return to_count_csr(counts, caller)


def _table(pd, log_post, labels, own):
    """The returned DataFrame: the most likely collection, its probability,
    the own collection's (with ``own``, positions or None) and every
    collection's probability."""
    post = np.exp(log_post - logsumexp(log_post, axis=1, keepdims=True))
    best = post.argmax(axis=1)
    columns = {}
    if own is not None:
        columns["collection"] = labels[own]
    columns["most_likely"] = labels[best]
    columns["probability"] = post[np.arange(post.shape[0]), best]
    if own is not None:
        columns["own"] = post[np.arange(post.shape[0]), own]
    for j, label in enumerate(labels.tolist()):
        columns[f"p_{label}"] = post[:, j]
    return pd.DataFrame(columns)


def _own_positions(labels, groups, n_docs, caller):
    """Each document's collection as a position in ``labels``; a ValueError
    names a label the model has not seen."""
    index = {label: j for j, label in enumerate(labels.tolist())}
    given = check_group_labels(groups, n_docs, method=caller).tolist()
    for label in given:
        if label not in index:
            raise ValueError(
                f"groups passed to {caller} holds {label!r}, which is not a collection of "
                f"the model ({labels.tolist()[:20]}); pass groups=None for documents of "
                "other collections."
            )
    return np.array([index[label] for label in given], dtype=np.intp)


@validate_params(
    {
        "estimator": [HasMethods(["fit"])],
        "X": ["array-like", "sparse matrix"],
        "groups": ["array-like", None],
        "prior": [StrOptions({"sizes", "uniform"})],
        "n_samples": [StrictInterval(Integral, 1, None, closed="left")],
        "burn_in": [StrictInterval(Integral, 0, None, closed="left")],
        "n_draws": [StrictInterval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def document_collections(estimator, X, groups=None, *, prior="sizes", n_samples=10,
                         burn_in=5, n_draws=10, random_state=None):
    """Which collection each document reads like: the posterior ``p(j | words)``.

    Compound LDA gives every collection ``j`` a topic mixture ``pi_j``.
    A document's words say which topics it uses, and so which collections'
    mixtures make it likely: by Bayes' rule, ``p(j | w_d) ∝ p(j) p(w_d |
    pi_j)``. For documents of known collections, this finds those that read
    like another one (a politics post that could be a science post); for
    new documents, it says which collection they fit; over a held-out set,
    how well the collections can be told apart by their topics.

    ``p(w_d | pi_j)`` sums over every assignment ``z`` of the document's
    tokens to topics. It is estimated by importance sampling: Gibbs sweeps
    draw ``z`` from its posterior under the corpus-wide mixture (the
    collections' mixtures weighted by their numbers of documents, the
    topics held fixed), and ``p(w_d | pi_j) / p(w_d | corpus)`` is the mean
    over those draws of ``p(z | gamma pi_j) / p(z | gamma pi_corpus)``,
    each a Dirichlet-multinomial probability, averaged over ``n_draws``
    posterior draws of ``pi_j`` too.

    Parameters
    ----------
    estimator : CompoundLDA or Pipeline
        A fitted :class:`~sklearn_clda.CompoundLDA` with groups of two
        collections or more, or a fitted Pipeline ending with one (``X`` is
        then its input, e.g. texts).

    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        Document-term counts (or the Pipeline's input).

    groups : array-like of shape (n_samples,), default=None
        The documents' collections, when known: the table then says how
        likely each document's own collection is (``own``). Every label
        must be one of the model's; None for documents of no collection
        or an unseen one.

    prior : {"sizes", "uniform"}, default="sizes"
        ``p(j)``: each collection's share of the training documents, or
        equal for all. "uniform" asks which collection's mixture fits the
        words best, whatever the collections' sizes.

    n_samples : int, default=10
        Gibbs sweeps after ``burn_in`` whose assignments are averaged over.

    burn_in : int, default=5
        Sweeps run first and left out.

    n_draws : int, default=10
        Posterior draws of ``pi`` (evenly spaced over the kept draws) that
        ``p(w_d | pi_j)`` is averaged over, so that an uncertain mixture
        (a small collection) is not taken for its posterior mean.

    random_state : int, RandomState instance or None, default=None
        Seeds the sweeps; an int gives the same table every call.

    Returns
    -------
    table : pandas.DataFrame
        One row per document, in the order of ``X``, with columns:

        - ``collection`` (with ``groups``): the document's own collection;
        - ``most_likely``: the collection of highest posterior probability;
        - ``probability``: that probability;
        - ``own`` (with ``groups``): the posterior probability of the
          document's own collection;
        - ``p_<label>``: the posterior probability of each collection, in
          the order of ``groups_``; they sum to 1 in each row.

    Raises
    ------
    ValueError
        If the model was fitted with one collection, if ``X`` is not a
        matrix of counts of the model's vocabulary, or if ``groups`` holds
        a label the model has not seen; a
        :class:`~sklearn_clda.exceptions.MemoryLimitError` (a ValueError)
        if one document's tokens need more than this machine's memory.

    See Also
    --------
    collection_distances : How far apart the collections' mixtures are.
    representative_documents : The documents most about each topic.

    Notes
    -----
    The cost is that of ``n_samples + burn_in`` Gibbs sweeps over ``X``
    with the topics held fixed, O(tokens x topics) each (compiled, in
    pieces of documents whose temporaries stay under 256 MB), plus the
    Dirichlet-multinomial
    terms of each document's topics for every collection and draw: about
    2 s for news16's 10,764 documents at 20 topics and 4 collections, and
    6 s against its 16 newsgroups, on one core. The second part grows with
    the documents' topics times the collections times ``n_draws`` times
    ``n_samples``: at thousands of collections, fewer draws keep it short.

    The probabilities weigh all of a document's words: a long document
    that uses a collection's characteristic topics gets a probability
    near 1 however typical of other collections its other words are. The
    importance weights of a long document vary much from draw to draw,
    and its probabilities then move between calls with other seeds; more
    ``n_samples`` steady them.

    The topics carry the evidence, not the words: two collections that
    share their topics and differ in words within them (see
    :func:`topic_words_by_collection`) are not told apart. A classifier of
    the words, such as :class:`~sklearn.naive_bayes.MultinomialNB`, tells
    collections apart better; this says how far the topics do, and
    explains each call by the collections' mixtures.

    Examples
    --------
    >>> from sklearn_clda import CompoundLDA
    >>> from sklearn_clda.datasets import make_compound_corpus
    >>> from sklearn_clda.inspection import document_collections
    >>> corpus = make_compound_corpus(n_topics=3, n_features=30, n_collections=2,
    ...                               docs_per_collection=40, doc_length=50,
    ...                               random_state=0)
    >>> clda = CompoundLDA(n_components=3, max_iter=100, random_state=0)
    >>> clda = clda.fit(corpus.data, groups=corpus.groups)
    >>> table = document_collections(clda, corpus.data, corpus.groups, random_state=0)
    >>> table.columns.tolist()
    ['collection', 'most_likely', 'probability', 'own', 'p_0', 'p_1']
    >>> float((table["most_likely"] == table["collection"]).mean())
    1.0
    """
    caller = "document_collections"
    pd = require_pandas(caller)
    model, pre, _ = unwrap(estimator)
    alphas, neutral, labels, sizes = _model_parts(model, n_draws, caller)
    counts = checked_counts(model, pre, X, caller)
    own = None if groups is None else _own_positions(labels, groups, counts.shape[0], caller)
    components = topic_word(model, caller)
    phi_t = np.ascontiguousarray((components / components.sum(axis=1, keepdims=True)).T)
    rng = check_random_state(random_state)
    log_lik = np.empty((counts.shape[0], labels.size))
    for lo, hi in _document_pieces(counts, phi_t.shape[1], alphas.shape[0] * labels.size,
                                   caller):
        total = None
        for sweep, ndk in enumerate(sample_topic_counts(phi_t, counts[lo:hi], neutral,
                                                        burn_in + n_samples, rng)):
            if sweep >= burn_in:
                ratios = log_prior_ratios(ndk, alphas, neutral)
                total = ratios if total is None else np.logaddexp(total, ratios)
        # log of the mean over the samples and the draws of pi
        log_lik[lo:hi] = logsumexp(total, axis=0).T - np.log(n_samples * alphas.shape[0])
    log_prior = np.log(sizes / sizes.sum()) if prior == "sizes" else 0.0
    return _table(pd, log_lik + log_prior, labels, own)


#: Largest temporaries of one piece of documents sampled together (their
#: tokens' first draws, counts and the position-by-position work).
PIECE_BYTES = 32 * CHUNK_BYTES


def _document_pieces(counts, n_components, n_priors, caller):
    """Pieces of documents sampled together, their temporaries within
    :data:`PIECE_BYTES`: per token its word, topic and first weights
    (``n_components + 3`` numbers), per document four rows of counts and
    two log-ratios for each of the ``n_priors`` (draws x collections). A
    ``MemoryLimitError`` if one document alone needs more than this
    machine's memory."""
    running = np.concatenate([[0], np.cumsum(counts.data, dtype=np.int64)])
    lengths = running[counts.indptr[1:]] - running[counts.indptr[:-1]]
    need = 8 * (lengths * (n_components + 3) + 4 * n_components + 2 * n_priors)
    available = physical_memory()
    if available is not None and need.size and need.max() > available:
        raise MemoryLimitError(
            f"{caller} samples every token of a document, and document "
            f"{int(need.argmax())} of {int(lengths[need.argmax()])} tokens needs at least "
            f"{gib(need.max())}, more than this machine's {gib(available)} of memory; "
            "leave it out or split it."
        )
    cumulative = np.concatenate([[0], np.cumsum(need)])
    return budget_pieces(cumulative, 1, PIECE_BYTES)

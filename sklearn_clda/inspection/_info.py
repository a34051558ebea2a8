"""One table of the topics: size, words, quality, documents and collection
(BERTopic's ``get_topic_info``)."""

from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import HasMethods, StrOptions, validate_params

from .._corpus import StrictInterval
from ..metrics._coherence import COHERENCE_MEASURES
from ..metrics._topics import _top_indices
from ._collections import _chain_stats
from ._documents import _fold_in, document_counts, top_rows
from ._labels import LABEL_METHODS, word_scores
from ._utils import (
    MIN_DRAWS,
    check_clda,
    require_pandas,
    resolve_feature_names,
    topic_word,
    unwrap,
)

__all__ = ["topic_info"]


def most_used_in(mean, lower):
    """For each topic (column), the collection (row) that surely gives it the
    largest share: the highest lower end of the posterior intervals, or the
    highest mean where they are not finite. By the means, a collection of a
    few documents, whose mixture is mostly its prior's, would win every
    small topic."""
    basis = np.where(np.isfinite(lower).all(axis=0), lower, mean)
    return np.argmax(basis, axis=0)


def _collection_columns(model, ci):
    """For a CompoundLDA fitted with groups and enough draws of ``pi``, each
    topic's collection of largest share with its posterior mean and
    interval; an empty dict otherwise."""
    groups = getattr(model, "groups_", None)
    if groups is None or not hasattr(model, "collection_topic_samples_"):
        return {}
    samples = check_clda(model, "topic_info")
    if samples.shape[0] < MIN_DRAWS:
        return {}
    mean, lower, upper, _, _ = _chain_stats(samples[None], ci)
    peak = most_used_in(mean, lower)
    topics = np.arange(mean.shape[1])
    return {"collection": np.asarray(groups)[peak], "collection_share": mean[peak, topics],
            "collection_lower": lower[peak, topics], "collection_upper": upper[peak, topics]}


@validate_params(
    {
        "estimator": [HasMethods(["fit", "transform"])],
        "X": ["array-like", "sparse matrix"],
        "groups": ["array-like", None],
        "feature_names": ["array-like", None],
        "n_words": [StrictInterval(Integral, 2, None, closed="left")],
        "label_method": [StrOptions(set(LABEL_METHODS))],
        "coherence": [StrOptions(set(COHERENCE_MEASURES))],
        "n_documents": [StrictInterval(Integral, 0, None, closed="left")],
        "ci": [StrictInterval(Real, 0, 1, closed="neither")],
    },
    prefer_skip_nested_validation=False,
)
def topic_info(estimator, X, groups=None, *, feature_names=None, n_words=10,
               label_method="frex", coherence="umass", n_documents=3, ci=0.9):
    """One row per topic, the largest first: what a fitted model found, at a glance.

    For each topic: its size in ``X``, its label words and most probable
    words, the coherence and exclusivity of its top words, the documents
    most about it and, for a :class:`~sklearn_clda.CompoundLDA` fitted with
    groups, the collection that gives it the largest share. This is
    BERTopic's ``get_topic_info``, and what the report's topic table shows;
    each column comes from a function of this package, which says more.

    Parameters
    ----------
    estimator : estimator or Pipeline
        A fitted topic model with ``components_`` and ``transform``
        (:class:`~sklearn_clda.CompoundLDA`, :class:`~sklearn_clda.LDAGibbs`,
        :class:`~sklearn.decomposition.LatentDirichletAllocation`), or a
        fitted Pipeline ending with one.

    X : {array-like, sparse matrix} of shape (n_samples, n_features)
        The documents, usually the training ones: counts, or the Pipeline's
        input.

    groups : array-like of shape (n_samples,), default=None
        The documents' collections, for a CompoundLDA's ``transform``.

    feature_names : array-like of str of shape (n_features,), default=None
        The vocabulary. ``None`` uses the Pipeline's vocabulary, else the
        model's ``feature_names_in_``, else ``"word 0"``, ``"word 1"``, ...

    n_words : int, default=10
        Number of words per topic, for the label, the most probable words
        and the coherence and exclusivity (stm's ``M``).

    label_method : {"prob", "frex", "lift", "score", "relevance"}, \
            default="frex"
        How the ``words`` are ranked (:func:`topic_labels`).

    coherence : {"umass", "umass_mean", "npmi", "c_v"}, default="umass"
        The coherence measure, on ``X``
        (:func:`~sklearn_clda.metrics.topic_coherence`).

    n_documents : int, default=3
        Number of documents listed per topic (0 for none).

    ci : float, default=0.9
        Mass of the posterior intervals of the collections' shares.

    Returns
    -------
    info : pandas.DataFrame
        One row per topic, by decreasing ``tokens``, with columns:

        - ``topic``: the topic's index;
        - ``tokens``: its expected number of tokens in ``X``,
          ``sum_d n_d theta_dk`` with ``theta`` from ``transform``
          (:func:`~sklearn_clda.metrics.topic_sizes`);
        - ``share``: ``tokens`` over all of ``X``'s tokens;
        - ``words``: the ``n_words`` words ranked by ``label_method``;
        - ``prob_words``: the ``n_words`` most probable words;
        - ``coherence``: the coherence of the most probable words;
        - ``exclusivity``: stm's exclusivity of the same words
          (:func:`~sklearn_clda.metrics.topic_exclusivity`, FREX weight
          0.7);
        - ``documents``: the rows of ``X`` with the largest proportion of
          the topic, largest first, among the documents with tokens
          (:func:`representative_documents`);
        - for a CompoundLDA fitted with groups and at least 4 kept draws:
          ``collection``, the collection whose posterior interval of the
          topic's share has the highest lower end (the one that surely uses
          it most), and ``collection_share``, ``collection_lower`` and
          ``collection_upper``, that share's posterior mean and interval
          (:func:`collection_topic_summary`).

    See Also
    --------
    topic_labels : More label words, by several methods.
    representative_documents : The documents, with their proportions.
    collection_topic_summary : Every collection's share of every topic.

    Examples
    --------
    >>> from sklearn_clda import CompoundLDA
    >>> from sklearn_clda.datasets import make_compound_corpus
    >>> from sklearn_clda.inspection import topic_info
    >>> corpus = make_compound_corpus(n_topics=3, n_features=30, n_collections=2,
    ...                               docs_per_collection=40, doc_length=50,
    ...                               random_state=0)
    >>> clda = CompoundLDA(n_components=3, max_iter=200, thin=2, random_state=0)
    >>> clda = clda.fit(corpus.data, groups=corpus.groups)
    >>> info = topic_info(clda, corpus.data, corpus.groups, n_words=4)
    >>> info.columns.tolist()  # doctest: +NORMALIZE_WHITESPACE
    ['topic', 'tokens', 'share', 'words', 'prob_words', 'coherence', 'exclusivity',
     'documents', 'collection', 'collection_share', 'collection_lower', 'collection_upper']
    >>> round(float(info["share"].sum()), 6), round(float(info["tokens"].sum()))
    (1.0, 4000)
    >>> info[["topic", "collection"]].values.tolist()
    [[1, 0], [2, 1], [0, 0]]
    """
    caller = "topic_info"
    pd = require_pandas(caller)
    model, pre, pipeline_names = unwrap(estimator)
    components = topic_word(model, caller)
    n_features = components.shape[1]
    names = resolve_feature_names(model, feature_names, pipeline_names, n_features, caller)
    counts = document_counts(X if pre is None else pre.transform(X), caller)
    theta = _fold_in(model, counts, groups)
    lengths = np.asarray(counts.sum(axis=1)).ravel()
    tokens = lengths @ theta
    n = min(n_words, n_features)
    info = {
        "topic": np.arange(components.shape[0]), "tokens": tokens,
        "share": tokens / tokens.sum() if tokens.sum() > 0 else np.zeros_like(tokens),
        "words": _ranked(names, word_scores(components, label_method), n),
        "prob_words": _ranked(names, components, n),
        **_quality(counts, components, n, coherence),
        "documents": _documents(theta, lengths, n_documents),
        **_collection_columns(model, ci),
    }
    order = np.argsort(-tokens, kind="stable")
    return pd.DataFrame(info).iloc[order].reset_index(drop=True)


def _ranked(names, scores, n):
    return [names[row].tolist() for row in _top_indices(scores, n)]


def _quality(counts, components, n, measure):
    from ..metrics import topic_coherence, topic_exclusivity

    return {"coherence": topic_coherence(counts, components, n, measure=measure),
            "exclusivity": topic_exclusivity(components, n, frex_weight=0.7)}


def _documents(theta, lengths, n):
    """The ``n`` rows with tokens of largest proportion, for each topic."""
    rows = np.flatnonzero(lengths > 0)
    return [rows[top_rows(theta[rows, k], n)].tolist() for k in range(theta.shape[1])]

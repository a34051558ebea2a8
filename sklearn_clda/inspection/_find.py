"""Which topics are about given words (stm's ``findTopic``)."""

from numbers import Integral

import numpy as np
from sklearn.utils._param_validation import HasMethods, validate_params

from .._corpus import StrictInterval
from ..metrics._topics import _normalize_rows, _top_indices
from ._labels import word_scores
from ._utils import require_pandas, resolve_feature_names, topic_shares, topic_word, unwrap

__all__ = ["find_topics"]

_LABEL_WORDS = 10  # FREX words shown beside each topic


def _query_columns(words, names, caller):
    """The distinct query words (in their order) and their columns;
    ``ValueError`` for an empty query or words outside the vocabulary."""
    query = [words] if isinstance(words, str) else [str(w) for w in np.ravel(words)]
    query = list(dict.fromkeys(query))
    if not query:
        raise ValueError(f"words passed to {caller} is empty; give at least one word.")
    column = {name: j for j, name in enumerate(names)}
    unknown = [w for w in query if w not in column]
    if unknown:
        raise ValueError(
            f"words passed to {caller} are not in the model's vocabulary: {unknown[:10]}"
            f"{'...' if len(unknown) > 10 else ''} (words are matched exactly: a "
            "CountVectorizer lowercases by default, and drops stop words and rare "
            "words if asked to)."
        )
    return query, np.array([column[w] for w in query])


@validate_params(
    {
        "estimator": [HasMethods(["fit"])],
        "words": [str, "array-like"],
        "feature_names": ["array-like", None],
        "n_words": [StrictInterval(Integral, 1, None, closed="left")],
    },
    prefer_skip_nested_validation=True,
)
def find_topics(estimator, words, feature_names=None, *, n_words=20):
    """The topics most about the given words, best first (stm's ``findTopic``).

    Every topic is scored by how probable it is given the words, read as a
    short document: with ``phi[k, v]`` the probability of word ``v`` in
    topic ``k`` (normalized ``components_``) and ``s[k]`` the topic's share
    of the corpus (its share of the weight of ``components_``: of the
    training tokens, for the Gibbs models),

        P(k | words) = s[k] prod_v phi[k, v] / sum_j s[j] prod_v phi[j, v],

    so that a topic scores high only when it uses every word (a topic that
    has one of them alone scores low). Beside it, which of the words are
    among the topic's ``n_words`` most probable words: stm's ``findTopic``
    returns the topics that have them all there (``all_in_top``).

    Parameters
    ----------
    estimator : estimator or Pipeline
        A fitted topic model with ``components_``
        (:class:`~sklearn_clda.CompoundLDA`, :class:`~sklearn_clda.LDAGibbs`,
        :class:`~sklearn.decomposition.LatentDirichletAllocation`), or a
        fitted Pipeline ending with one (its vocabulary is then that of the
        steps before, e.g. a CountVectorizer).

    words : str or array-like of str
        One word, or several (repeated words count once). Words are matched
        exactly against the vocabulary; one outside it is an error.

    feature_names : array-like of str of shape (n_features,), default=None
        The vocabulary. ``None`` uses the Pipeline's vocabulary, else the
        model's ``feature_names_in_`` (fitted on a DataFrame); without
        either, pass it.

    n_words : int, default=20
        How many of each topic's most probable words the words are looked
        for in (stm's ``n``).

    Returns
    -------
    topics : pandas.DataFrame
        One row per topic, the most probable given the words first, with
        columns:

        - ``topic``: the topic's index (row of ``components_``);
        - ``probability``: ``P(k | words)`` above (they sum to 1);
        - ``in_top_words``: the words among the topic's ``n_words`` most
          probable words, a list;
        - ``all_in_top``: whether all of them are (stm's ``findTopic``);
        - ``label_words``: the topic's 10 words of highest FREX, to read
          what it is about (:func:`topic_labels`).

    See Also
    --------
    topic_labels : Words that label each topic.
    representative_documents : The documents most about a topic.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.decomposition import LatentDirichletAllocation
    >>> from sklearn_clda.inspection import find_topics
    >>> lda = LatentDirichletAllocation(n_components=2)
    >>> lda.components_ = np.array([[40.0, 30.0, 20.0, 6.0, 4.0],
    ...                             [40.0, 2.0, 8.0, 20.0, 30.0]])
    >>> vocab = ["the", "goal", "match", "vote", "party"]
    >>> found = find_topics(lda, ["goal", "match"], vocab, n_words=3)
    >>> found[["topic", "probability", "all_in_top"]].round(3).to_dict("list")
    {'topic': [0, 1], 'probability': [0.974, 0.026], 'all_in_top': [True, False]}
    >>> found["in_top_words"].tolist()
    [['goal', 'match'], []]
    """
    caller = "find_topics"
    pd = require_pandas(caller)
    model, _, pipeline_names = unwrap(estimator)
    components = topic_word(model, caller)
    names = resolve_feature_names(model, feature_names, pipeline_names,
                                  components.shape[1], caller, placeholders=False)
    if names is None:
        raise ValueError(
            f"{caller} looks words up in the model's vocabulary, which it cannot find "
            f"({type(model).__name__} fitted on an array, not in a Pipeline with a "
            "vectorizer): pass feature_names."
        )
    query, columns = _query_columns(words, names, caller)
    phi = _normalize_rows(components)
    with np.errstate(divide="ignore"):
        log_score = (np.log(topic_shares(components))
                     + np.log(phi[:, columns]).sum(axis=1))
    if not np.isfinite(log_score.max()):
        raise ValueError(
            f"{caller}: no topic gives all of the words {query} a positive probability."
        )
    probability = np.exp(log_score - log_score.max())
    probability /= probability.sum()
    top = _top_indices(phi, min(n_words, phi.shape[1]))
    in_top = [[w for w, j in zip(query, columns) if j in row] for row in map(set, top.tolist())]
    labels = _top_indices(word_scores(components, "frex"), min(_LABEL_WORDS, phi.shape[1]))
    order = np.argsort(-probability, kind="stable")
    return pd.DataFrame({
        "topic": order,
        "probability": probability[order],
        "in_top_words": [in_top[k] for k in order],
        "all_in_top": [len(in_top[k]) == len(query) for k in order],
        "label_words": [names[labels[k]].tolist() for k in order],
    })

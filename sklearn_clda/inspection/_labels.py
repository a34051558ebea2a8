"""Words that label each topic: probability, FREX, lift, score and relevance."""

from numbers import Integral, Real
from typing import NamedTuple

import numpy as np
from sklearn.utils._param_validation import HasMethods, StrOptions, validate_params

from .._corpus import StrictInterval
from ..metrics._exclusivity import frex_scores
from ..metrics._topics import _normalize_rows, _top_indices
from ._utils import require_pandas, resolve_feature_names, topic_word, unwrap

__all__ = ["topic_labels"]

LABEL_METHODS = ("prob", "frex", "lift", "score", "relevance")


def _log(a):
    """``log(a)``, with zeros read as the smallest positive double (no -inf)."""
    return np.log(np.maximum(a, np.finfo(np.float64).tiny))


class _Columns:
    """What one topic's word scores read from the whole model, per word:
    the sum over topics of ``phi`` (for FREX), the sum of ``log phi`` and
    the number of topics (for stm's score), and ``log p_w``, the log corpus
    share (for lift and relevance); None where the method reads nothing."""

    def __init__(self, phi_sum, log_phi_sum, n_topics, log_p):
        self.phi_sum = phi_sum
        self.log_phi_sum = log_phi_sum
        self.n_topics = n_topics
        self.log_p = log_p

    @classmethod
    def of(cls, components, phi, method):
        """The columns that ``method`` reads of a model with weights
        ``components`` and rows ``phi``. The weights are scaled by the
        largest before they are summed, so that finite weights near 1e308
        do not overflow."""
        phi_sum = phi.sum(axis=0) if method == "frex" else None
        log_phi_sum = _log(phi).sum(axis=0) if method == "score" else None
        log_p = None
        if method in ("lift", "relevance"):
            scaled = components / components.max()
            log_p = _log(scaled.sum(axis=0) / scaled.sum())
        return cls(phi_sum, log_phi_sum, phi.shape[0], log_p)

    def merged(self, parts_phi, parts_log_phi, n_parts, whole):
        """The columns of the model in which ``n_parts`` topics, whose rows
        of ``phi`` and ``log phi`` sum to ``parts_phi`` and
        ``parts_log_phi``, are one topic of row ``whole`` (the corpus shares
        do not change: merging topics moves no token)."""
        rest = n_parts < self.n_topics  # all of them: no rest, not a rounding's worth
        phi_sum = log_phi_sum = None
        if self.phi_sum is not None:
            phi_sum = whole + (np.maximum(self.phi_sum - parts_phi, 0.0) if rest else 0.0)
        if self.log_phi_sum is not None:
            log_phi_sum = _log(whole) + (self.log_phi_sum - parts_log_phi if rest else 0.0)
        return _Columns(phi_sum, log_phi_sum, self.n_topics - n_parts + 1, self.log_p)


class _Group(NamedTuple):
    """Topics merged into one: its log weight and word distribution, and
    the sums over its topics of their ``phi`` and ``log phi`` rows (0 for
    a method that does not read them)."""

    log_weight: float
    phi: np.ndarray
    parts_phi: np.ndarray
    parts_log_phi: np.ndarray
    n_parts: int

    @classmethod
    def merge(cls, a, b):
        total = np.logaddexp(a.log_weight, b.log_weight)
        phi = np.exp(a.log_weight - total) * a.phi + np.exp(b.log_weight - total) * b.phi
        return cls(total, phi, a.parts_phi + b.parts_phi, a.parts_log_phi + b.parts_log_phi,
                   a.n_parts + b.n_parts)


def _scores(phi, columns, method, frex_weight, relevance_lambda):
    """The scores of the rows ``phi`` (topics of a model with ``columns``)."""
    if method == "prob":
        return phi
    if method == "frex":
        return frex_scores(phi, frex_weight, totals=columns.phi_sum)
    log_phi = _log(phi)
    if method == "score":
        return phi * (log_phi - columns.log_phi_sum / columns.n_topics)
    log_lift = log_phi - columns.log_p
    if method == "lift":
        return np.exp(log_lift)
    lam = relevance_lambda
    return lam * log_phi + (1.0 - lam) * log_lift


def word_scores(components, method, *, frex_weight=0.5, relevance_lambda=0.6):
    """The (K, V) matrix ranking the words of each topic under ``method``.

    ``components`` are non-negative topic-word weights (rows with positive
    sums). The words' corpus shares ``p_w`` are the columns' shares of the
    total weight, ``components.sum(axis=0) / components.sum()``. The
    weights are scaled before they are summed (each row by its maximum for
    ``phi``, all by the largest for ``p_w``), so that finite weights near
    1e308 do not overflow.
    """
    phi = _normalize_rows(components)
    return _scores(phi, _Columns.of(components, phi, method), method, frex_weight,
                   relevance_lambda)


def merged_word_scores(components, merges, method, *, frex_weight=0.5,
                       relevance_lambda=0.6):
    """Scores of the groups of topics that ``merges`` make, shape (len(merges), V).

    ``merges`` lists pairs of nodes, numbered as in SciPy's linkage
    matrix: the topics (rows of ``components``) are nodes ``0 .. K - 1``
    and the pair ``i`` makes node ``K + i``. Row ``i`` ranks the words of
    the topic made of node ``K + i``'s topics (their weights summed), as
    :func:`word_scores` ranks it in the model in which only those topics
    are merged and the others stay as they are. Each group's sums are
    those of its two nodes, so the cost is one pass over the vocabulary a
    merge, whatever the groups' sizes.
    """
    phi = _normalize_rows(components)
    columns = _Columns.of(components, phi, method)
    # Each topic's log weight, from its row scaled by its maximum: weights
    # near 1e308 and near 1e-300 in one model neither overflow nor vanish.
    row_max = components.max(axis=1)
    log_weight = np.log(row_max) + np.log((components / row_max[:, None]).sum(axis=1))
    n_topics = components.shape[0]
    made = {}  # groups not merged yet, by node

    def take(node):
        if node < n_topics:  # (its log phi only where the method reads it)
            log_phi = _log(phi[node]) if method == "score" else 0.0
            return _Group(log_weight[node], phi[node], phi[node], log_phi, 1)
        return made.pop(node)

    out = np.empty((len(merges), components.shape[1]))
    for i, (left, right) in enumerate(merges):
        group = made[n_topics + i] = _Group.merge(take(left), take(right))
        cut = columns.merged(group.parts_phi, group.parts_log_phi, group.n_parts, group.phi)
        out[i] = _scores(group.phi[None], cut, method, frex_weight, relevance_lambda)[0]
    return out


@validate_params(
    {
        "estimator": [HasMethods(["fit"])],
        "feature_names": ["array-like", None],
        "method": [StrOptions(set(LABEL_METHODS)), list, tuple],
        "n_words": [StrictInterval(Integral, 1, None, closed="left")],
        "frex_weight": [StrictInterval(Real, 0, 1, closed="both")],
        "relevance_lambda": [StrictInterval(Real, 0, 1, closed="both")],
    },
    prefer_skip_nested_validation=True,
)
def topic_labels(
    estimator,
    feature_names=None,
    *,
    method="frex",
    n_words=10,
    frex_weight=0.5,
    relevance_lambda=0.6,
):
    """Words that label each topic, ranked by probability, FREX, lift, score or relevance.

    The most probable words of a topic are often words that every topic
    uses ("python package library"); the other rankings favour words that
    are frequent in the topic *and* rare elsewhere. They are those of R's
    ``stm`` (``labelTopics``) and of LDAvis. With ``phi[k, v]`` the
    probability of word ``v`` in topic ``k`` (normalized ``components_``)
    and ``p[v]`` the word's share of the corpus:

    - ``"prob"``: ``phi[k, v]``;
    - ``"frex"`` (Bischof and Airoldi 2012; stm): the weighted harmonic
      mean ``1 / (w / ecdf_k(excl[k, v]) + (1 - w) / ecdf_k(phi[k, v]))`` of
      the word's rank within the topic by exclusivity
      ``excl[k, v] = phi[k, v] / sum_j phi[j, v]`` and by probability,
      where ``ecdf_k`` is the empirical CDF over the topic's words (the
      word's rank divided by the vocabulary size; tied words share their
      mean rank) and ``w = frex_weight``;
    - ``"lift"`` (Taddy 2012; stm): ``phi[k, v] / p[v]``;
    - ``"score"`` (R package ``lda``; stm):
      ``phi[k, v] * (log phi[k, v] - mean_j log phi[j, v])``;
    - ``"relevance"`` (Sievert and Shirley 2014, LDAvis):
      ``lam * log phi[k, v] + (1 - lam) * log(phi[k, v] / p[v])`` with
      ``lam = relevance_lambda``.

    Parameters
    ----------
    estimator : estimator or Pipeline
        A fitted topic model with ``components_`` of shape (n_components,
        n_features): :class:`~sklearn_clda.CompoundLDA`,
        :class:`~sklearn_clda.LDAGibbs`,
        :class:`~sklearn.decomposition.LatentDirichletAllocation`, or a
        fitted Pipeline ending with one (its vocabulary is then that of the
        steps before, e.g. a CountVectorizer).

    feature_names : array-like of str of shape (n_features,), default=None
        The vocabulary. ``None`` uses the Pipeline's vocabulary, else the
        model's ``feature_names_in_`` (fitted on a DataFrame), else
        ``"word 0"``, ``"word 1"``, ...

    method : {"prob", "frex", "lift", "score", "relevance"} or list of them, \
            default="frex"
        How the words of each topic are ranked for the ``words`` column.
        A list (e.g. ``["frex", "lift", "score"]``, stm's ``labelTopics``
        side by side) ranks them by its first method for ``words`` and adds
        a column ``{method}_words`` for each of its methods.

    n_words : int, default=10
        Number of words per topic (at most the vocabulary size: larger
        values give every word).

    frex_weight : float, default=0.5
        ``w`` of FREX: the weight of exclusivity, between 0 (rank by
        probability only) and 1 (by exclusivity only). See Notes for stm.

    relevance_lambda : float, default=0.6
        ``lam`` of relevance: 1 ranks by probability, 0 by lift. Sievert
        and Shirley's user study found 0.6 best for interpreting topics.

    Returns
    -------
    labels : pandas.DataFrame
        One row per topic, with columns:

        - ``topic``: the topic's index (row of ``components_``);
        - ``words``: list of the ``n_words`` words ranked by ``method``,
          best first;
        - ``prob_words``: list of the ``n_words`` most probable words,
          shown beside them;
        - with a list of methods, ``{method}_words`` for each of them
          (``prob_words`` stands for ``"prob"``).

        Each cell holds a Python list of str; ``labels["words"].str.join("
        ")`` gives one string per topic.

    See Also
    --------
    sklearn_clda.metrics.top_words : The most probable words, as an array.
    representative_documents : The documents most about each topic.

    Notes
    -----
    **The corpus shares** ``p[v]`` (lift and relevance) are read from the
    model: ``components_.sum(axis=0) / components_.sum()``. For the Gibbs
    models and scikit-learn's batch variational LDA, ``components_[k, v]``
    is the expected number of training tokens of word ``v`` in topic ``k``
    plus the topic-word prior ``eta``, so ``p[v] = (n_v + K eta) / (N + V K
    eta)``: the training frequency smoothed by the prior. stm uses the raw
    frequency ``n_v / N``; the smoothing keeps the lift of a word absent
    from the training corpus finite.

    **Comparing with stm.** Zero probabilities are treated as the smallest
    positive double (stm floors logs likewise). stm's ``labelTopics`` also
    shrinks the exclusivity towards uniform with a James-Stein estimator
    (Hausser and Strimmer 2009) before ranking, which this function does
    not; so FREX words can differ among rare words. In stm's code
    (``calcfrex``) ``frexweight`` multiplies the reciprocal *frequency*
    rank while its ``exclusivity`` function and the FREX paper weight
    exclusivity, as here: stm's ``labelTopics(frexweight=w)`` corresponds
    to ``frex_weight=1 - w`` (the same at the default 0.5).

    References
    ----------
    .. [1] J. M. Bischof and E. M. Airoldi, "Summarizing topical content
       with word frequency and exclusivity", ICML 2012.
    .. [2] M. E. Roberts, B. M. Stewart and D. Tingley, "stm: An R package
       for structural topic models", Journal of Statistical Software
       91(2), 2019.
    .. [3] C. Sievert and K. Shirley, "LDAvis: A method for visualizing and
       interpreting topics", Workshop on Interactive Language Learning,
       Visualization, and Interfaces, 2014.
    .. [4] M. Taddy, "Multinomial inverse regression for text analysis",
       Journal of the American Statistical Association 108(503), 2013.

    Examples
    --------
    Two topics over five words; "the" is the most probable word of both, so
    FREX (which also weighs exclusivity) ranks it below the word most
    exclusive to each topic, and lift drops it:

    >>> import numpy as np
    >>> from sklearn.decomposition import LatentDirichletAllocation
    >>> from sklearn_clda.inspection import topic_labels
    >>> lda = LatentDirichletAllocation(n_components=2)
    >>> lda.components_ = np.array([[40.0, 30.0, 20.0, 6.0, 4.0],
    ...                             [40.0, 2.0, 8.0, 20.0, 30.0]])
    >>> vocab = ["the", "goal", "match", "vote", "party"]
    >>> labels = topic_labels(lda, vocab, n_words=3)
    >>> labels.to_dict("list")  # doctest: +NORMALIZE_WHITESPACE
    {'topic': [0, 1],
     'words': [['goal', 'the', 'match'], ['party', 'the', 'vote']],
     'prob_words': [['the', 'goal', 'match'], ['the', 'party', 'vote']]}
    >>> topic_labels(lda, vocab, method="lift", n_words=2)["words"].tolist()
    [['goal', 'match'], ['party', 'vote']]

    Several rankings side by side, as stm's ``labelTopics`` prints them:

    >>> table = topic_labels(lda, vocab, method=["frex", "lift", "score"], n_words=2)
    >>> table.columns.tolist()
    ['topic', 'words', 'prob_words', 'frex_words', 'lift_words', 'score_words']
    """
    caller = "topic_labels"
    pd = require_pandas(caller)
    model, _, pipeline_names = unwrap(estimator)
    components = topic_word(model, caller)
    names = resolve_feature_names(model, feature_names, pipeline_names,
                                  components.shape[1], caller)
    n = min(n_words, components.shape[1])
    methods = _check_methods(method, caller)

    def ranked(name):
        scores = (components if name == "prob" else word_scores(
            components, name, frex_weight=frex_weight, relevance_lambda=relevance_lambda))
        return [names[row].tolist() for row in _top_indices(scores, n)]

    columns = {"topic": np.arange(components.shape[0]), "words": ranked(methods[0]),
               "prob_words": ranked("prob")}
    if not isinstance(method, str):
        columns.update({f"{name}_words": ranked(name) for name in methods if name != "prob"})
    return pd.DataFrame(columns)


def _check_methods(method, caller):
    """``method`` as a list of known, distinct label methods (at least one)."""
    methods = [method] if isinstance(method, str) else list(method)
    unknown = [m for m in methods if m not in LABEL_METHODS]
    if not methods or unknown or len(set(methods)) < len(methods):
        raise ValueError(
            f"method passed to {caller} must be one of {sorted(LABEL_METHODS)} or a list "
            f"of distinct ones, got {method!r}."
        )
    return methods


"""Topics grouped into a tree by how alike their words are (BERTopic's
``hierarchical_topics``)."""

import math
from numbers import Integral, Real

import numpy as np
from sklearn.utils._param_validation import HasMethods, StrOptions, validate_params

from .._corpus import StrictInterval
from ..metrics._topics import _ALIGN_METRICS, _top_indices, _topic_distance_matrix
from ._labels import LABEL_METHODS, merged_word_scores, word_scores
from ._utils import require_pandas, resolve_feature_names, topic_shares, topic_word, unwrap

__all__ = ["topic_hierarchy", "topic_themes"]

#: The linkages of :func:`scipy.cluster.hierarchy.linkage` that read a
#: distance matrix and give a monotone tree (no inversions).
LINKAGE_METHODS = ("average", "complete", "single", "weighted", "ward")

#: Most topics whose leaves are put in SciPy's optimal order (neighbours
#: alike): its cost grows as the cube of the topics (0.4 s at 500, 8 s at
#: 1,000 on a 2-core VM). It only swaps the two nodes of merges.
MAX_OPTIMAL_ORDER = 500


#: Fewest topics that ``n_themes="auto"`` groups into themes.
AUTO_THEMES_MIN_TOPICS = 10


def themes_for(n_themes, n_topics):
    """The number of themes of a report of ``n_themes`` (an int or "auto")
    on ``n_topics`` topics: 0 for none; ``ValueError`` for 1, or for as
    many themes as topics or more."""
    if n_themes == "auto":
        return 0 if n_topics < AUTO_THEMES_MIN_TOPICS else int(round(math.sqrt(n_topics)))
    if n_themes == 1 or n_themes >= n_topics:
        raise ValueError(
            f"n_themes={n_themes} cannot group {n_topics} topics into themes: give 2 to "
            f"{n_topics - 1} themes, or 0 for none."
        )
    return int(n_themes)


def check_linkage_method(metric, method, caller):
    """``method``, or for None the default of ``metric``. Ward's linkage is
    defined for Euclidean distances; of the topic distances only
    Hellinger's is one (of the square roots of ``phi``)."""
    if method is None:
        return "ward" if metric == "hellinger" else "average"
    if method == "ward" and metric != "hellinger":
        raise ValueError(
            f"{caller}: method='ward' needs Euclidean distances, and of the topic "
            f"distances only metric='hellinger' is one (got metric={metric!r}); use "
            "Hellinger with Ward, or another linkage with this metric."
        )
    return method


def topic_linkage(components, metric, method):
    """The linkage matrix of the topics (rows of ``components``), as
    :func:`scipy.cluster.hierarchy.linkage` returns it, shape (K - 1, 4):
    the distances between the topics' word distributions merged by
    ``method``, leaves ordered so that neighbours are alike (up to
    ``MAX_OPTIMAL_ORDER`` topics)."""
    from scipy.cluster.hierarchy import linkage
    from scipy.spatial.distance import squareform

    distances = _topic_distance_matrix(components, metric)
    return linkage(squareform(distances, checks=False), method=method,
                   optimal_ordering=components.shape[0] <= MAX_OPTIMAL_ORDER)


def merge_members(linkage, n_topics):
    """The topics under each merge of ``linkage``, a sorted array per row."""
    members = [np.array([k]) for k in range(n_topics)]
    for left, right in linkage[:, :2].astype(np.intp):
        members.append(np.sort(np.concatenate([members[left], members[right]])))
    return members[n_topics:]


def _fitted_tree(estimator, feature_names, metric, method, caller):
    """``(components, names, linkage)`` of a fitted topic model of two
    topics or more: its topic-word weights, vocabulary and tree."""
    model, _, pipeline_names = unwrap(estimator)
    components = topic_word(model, caller)
    n_topics, n_features = components.shape
    if n_topics < 2:
        raise ValueError(
            f"{caller} merges topics, but {type(model).__name__} has {n_topics} topic."
        )
    method = check_linkage_method(metric, method, caller)
    names = resolve_feature_names(model, feature_names, pipeline_names, n_features, caller)
    return components, names, topic_linkage(components, metric, method)


def cut_nodes(linkage, n_groups):
    """The nodes (scipy's numbering) right under the ``n_groups - 1``
    highest merges, the groups of a cut into ``n_groups``: exactly that
    many, ties or not (the rows of a monotone linkage rise in distance)."""
    n_topics = linkage.shape[0] + 1
    top = set(range(2 * n_topics - n_groups, 2 * n_topics - 1))
    children = linkage[n_topics - n_groups:, :2].astype(np.intp).ravel()
    return [int(node) for node in children if int(node) not in top]


@validate_params(
    {
        "estimator": [HasMethods(["fit"])],
        "feature_names": ["array-like", None],
        "metric": [StrOptions(set(_ALIGN_METRICS))],
        "method": [StrOptions(set(LINKAGE_METHODS)), None],
        "label_method": [StrOptions(set(LABEL_METHODS))],
        "n_words": [StrictInterval(Integral, 1, None, closed="left")],
        "frex_weight": [StrictInterval(Real, 0, 1, closed="both")],
        "relevance_lambda": [StrictInterval(Real, 0, 1, closed="both")],
    },
    prefer_skip_nested_validation=True,
)
def topic_hierarchy(estimator, feature_names=None, *, metric="hellinger", method=None,
                    label_method="frex", n_words=5, frex_weight=0.5, relevance_lambda=0.6):
    """Merge the topics step by step, the most alike first: a tree of themes.

    A model with many topics often splits one theme over several of them
    (three topics about hardware, two about religion). This joins the
    topics by agglomerative clustering
    (:func:`scipy.cluster.hierarchy.linkage`) of the distances between
    their word distributions (normalized ``components_``), and labels every
    merged group with its own words: those of the topic that the group's
    topics make together (their weights summed), ranked by
    ``label_method`` against the other topics, as :func:`topic_labels`
    ranks a topic's words. This is BERTopic's ``hierarchical_topics``;
    :class:`~sklearn_clda.plotting.TopicHierarchyDisplay` draws the tree.

    Parameters
    ----------
    estimator : estimator or Pipeline
        A fitted topic model with ``components_`` and at least 2 topics
        (:class:`~sklearn_clda.CompoundLDA`,
        :class:`~sklearn_clda.LDAGibbs`,
        :class:`~sklearn.decomposition.LatentDirichletAllocation`), or a
        fitted Pipeline ending with one.

    feature_names : array-like of str of shape (n_features,), default=None
        The vocabulary. ``None`` uses the Pipeline's vocabulary, else the
        model's ``feature_names_in_``, else ``"word 0"``, ``"word 1"``, ...

    metric : {"hellinger", "jsd", "tv"}, default="hellinger"
        Distance between two topics' word distributions, in ``[0, 1]``
        (as in :func:`~sklearn_clda.metrics.align_topics`). Hellinger is
        computed by one matrix product; the other two take time in
        proportion to ``K**2 * V``.

    method : {"ward", "average", "complete", "single", "weighted"} or None, \
            default=None
        How the distance between two groups of topics follows from the
        topics' (:func:`scipy.cluster.hierarchy.linkage`). "ward" merges
        the two groups whose merge adds least to the spread of the topics
        around their groups' centres (in the Hellinger geometry), which
        tends to give groups of comparable size; "average" takes the mean
        distance between the two groups' topics, and often chains the broad
        topics of common words on one by one. "ward" needs
        ``metric="hellinger"``, the one Euclidean distance here. ``None``
        means "ward" with Hellinger and "average" with the other metrics.

    label_method : {"prob", "frex", "lift", "score", "relevance"}, \
            default="frex"
        How each group's words are ranked (:func:`topic_labels`).

    n_words : int, default=5
        Number of words per group (at most the vocabulary size).

    frex_weight : float, default=0.5
        Weight of exclusivity in FREX (:func:`topic_labels`).

    relevance_lambda : float, default=0.6
        ``lam`` of relevance (:func:`topic_labels`).

    Returns
    -------
    tree : pandas.DataFrame
        One row per merge, ``K - 1`` rows from the closest pair up, with
        columns:

        - ``node``: the merged group's number, ``K`` for the first merge,
          ``K + 1`` for the next and so on (numbers below ``K`` are the
          topics);
        - ``left``, ``right``: the two nodes merged (topics or earlier
          groups);
        - ``distance``: the distance between them under ``method`` (for
          "ward", the square root of twice the spread the merge adds, which
          can exceed 1; for the others, in ``[0, 1]``);
        - ``n_topics``: the number of topics in the group;
        - ``topics``: the group's topics, a sorted list;
        - ``share``: the group's share of the weight of ``components_``
          (of the training tokens, for the Gibbs models);
        - ``words``: the group's ``n_words`` words, best first.

        ``tree[["left", "right", "distance", "n_topics"]].to_numpy(float)``
        is the linkage matrix of :mod:`scipy.cluster.hierarchy`: for
        example ``fcluster(Z, 5, criterion="maxclust")`` cuts the tree
        into (at most) five groups. (SciPy 1.13's "maxclust" can stop
        short of the number asked when it is close to the number of
        topics; a cut just below a height of the ``distance`` column,
        ``criterion="distance"``, cannot.)

    Raises
    ------
    ValueError
        For a model with one topic, or ``method="ward"`` with a metric
        other than Hellinger.

    See Also
    --------
    topic_labels : The words of each topic.
    topic_correlation : Which topics appear together in documents.
    sklearn_clda.plotting.TopicHierarchyDisplay : The tree, drawn.

    Notes
    -----
    Topics close in this tree use the same words; topics that the same
    documents use (but with different words) are found by
    :func:`topic_correlation` instead. A group's share sums its topics'
    shares, so the tree also says how much of the corpus a theme takes.

    Examples
    --------
    Four topics over six words, two about sport and two about politics:

    >>> import numpy as np
    >>> from sklearn.decomposition import LatentDirichletAllocation
    >>> from sklearn_clda.inspection import topic_hierarchy
    >>> lda = LatentDirichletAllocation(n_components=4)
    >>> lda.components_ = np.array([[30.0, 20.0, 10.0, 1.0, 1.0, 1.0],
    ...                             [20.0, 30.0, 1.0, 1.0, 2.0, 1.0],
    ...                             [1.0, 1.0, 1.0, 30.0, 20.0, 10.0],
    ...                             [1.0, 2.0, 1.0, 20.0, 30.0, 1.0]])
    >>> vocab = ["goal", "match", "league", "vote", "party", "senate"]
    >>> tree = topic_hierarchy(lda, vocab, n_words=2)
    >>> tree[["node", "left", "right", "topics"]].to_dict("list")
    {'node': [4, 5, 6], 'left': [0, 3, 4], 'right': [1, 2, 5], 'topics': [[0, 1], [2, 3], [0, 1, 2, 3]]}
    >>> tree["words"].tolist()[:2]
    [['goal', 'match'], ['vote', 'party']]
    >>> tree["distance"].round(3).tolist()
    [0.237, 0.237, 1.027]
    """
    caller = "topic_hierarchy"
    pd = require_pandas(caller)
    components, names, linkage = _fitted_tree(estimator, feature_names, metric, method,
                                              caller)
    n_topics, n_features = components.shape
    members = merge_members(linkage, n_topics)
    scores = merged_word_scores(components, linkage[:, :2].astype(np.intp), label_method,
                                frex_weight=frex_weight, relevance_lambda=relevance_lambda)
    shares = topic_shares(components)
    return pd.DataFrame({
        "node": np.arange(n_topics, 2 * n_topics - 1),
        "left": linkage[:, 0].astype(np.int64),
        "right": linkage[:, 1].astype(np.int64),
        "distance": linkage[:, 2],
        "n_topics": linkage[:, 3].astype(np.int64),
        "topics": [group.tolist() for group in members],
        "share": [float(shares[group].sum()) for group in members],
        "words": [names[row].tolist()
                  for row in _top_indices(scores, min(n_words, n_features))],
    })


@validate_params(
    {
        "estimator": [HasMethods(["fit"])],
        "n_themes": [StrictInterval(Integral, 2, None, closed="left")],
        "feature_names": ["array-like", None],
        "metric": [StrOptions(set(_ALIGN_METRICS))],
        "method": [StrOptions(set(LINKAGE_METHODS)), None],
        "label_method": [StrOptions(set(LABEL_METHODS))],
        "n_words": [StrictInterval(Integral, 1, None, closed="left")],
    },
    prefer_skip_nested_validation=True,
)
def topic_themes(estimator, n_themes, feature_names=None, *, metric="hellinger", method=None,
                 label_method="frex", n_words=3):
    """The topics cut into ``n_themes`` themes, named by their words.

    The tree of :func:`topic_hierarchy` (same ``metric`` and ``method``)
    cut below its ``n_themes - 1`` highest merges: each theme is a group
    of that tree (or a topic alone) and is named by its ``n_words`` first
    words, those of the topic its topics make together. The result is
    ready for the ``topic_groups`` parameter of
    :func:`collection_topic_summary`, :func:`compare_collections`,
    :func:`collection_trend`, :func:`permutation_test` and the collection
    displays.

    Parameters
    ----------
    estimator : estimator or Pipeline
        A fitted topic model with ``components_`` (see
        :func:`topic_hierarchy`).

    n_themes : int
        Number of themes, from 2 to the number of topics.

    feature_names : array-like of str of shape (n_features,), default=None
        The vocabulary, as in :func:`topic_hierarchy`.

    metric : {"hellinger", "jsd", "tv"}, default="hellinger"
        Distance between topics, as in :func:`topic_hierarchy`.

    method : {"ward", "average", "complete", "single", "weighted"} or None, \
            default=None
        Linkage, as in :func:`topic_hierarchy` (``None``: Ward with
        Hellinger, average otherwise).

    label_method : {"prob", "frex", "lift", "score", "relevance"}, \
            default="frex"
        How the themes' words are ranked (:func:`topic_labels`).

    n_words : int, default=3
        Number of words in each theme's name.

    Returns
    -------
    themes : dict of str to list of int
        ``{name: topics}``, the largest theme (by its topics' share of
        ``components_``) first; a name shared by two themes gets " (2)"
        after it.

    See Also
    --------
    topic_hierarchy : The whole tree, as a table.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.decomposition import LatentDirichletAllocation
    >>> from sklearn_clda.inspection import topic_themes
    >>> lda = LatentDirichletAllocation(n_components=4)
    >>> lda.components_ = np.array([[30.0, 20.0, 10.0, 1.0, 1.0, 1.0],
    ...                             [20.0, 30.0, 1.0, 1.0, 2.0, 1.0],
    ...                             [1.0, 1.0, 1.0, 30.0, 20.0, 10.0],
    ...                             [1.0, 2.0, 1.0, 20.0, 30.0, 1.0]])
    >>> vocab = ["goal", "match", "league", "vote", "party", "senate"]
    >>> topic_themes(lda, 2, vocab, n_words=2)
    {'goal match': [0, 1], 'vote party': [2, 3]}
    """
    caller = "topic_themes"
    components, names, linkage = _fitted_tree(estimator, feature_names, metric, method,
                                              caller)
    n_topics, n_features = components.shape
    if n_themes > n_topics:
        raise ValueError(f"n_themes={n_themes} passed to {caller} is more than the model's "
                         f"{n_topics} topics.")
    members = [np.array([k]) for k in range(n_topics)] + merge_members(linkage, n_topics)
    nodes = cut_nodes(linkage, n_themes)
    merged = merged_word_scores(components, linkage[:, :2].astype(np.intp), label_method)
    single = word_scores(components, label_method)
    scores = np.array([single[k] if k < n_topics else merged[k - n_topics] for k in nodes])
    words = _top_indices(scores, min(n_words, n_features))
    shares = topic_shares(components)
    shares = np.array([shares[members[node]].sum() for node in nodes])
    themes = {}
    for i in np.argsort(-shares, kind="stable"):
        name = " ".join(names[words[i]])
        unique, n = name, 1
        while unique in themes:
            n += 1
            unique = f"{name} ({n})"
        themes[unique] = members[nodes[i]].tolist()
    return themes

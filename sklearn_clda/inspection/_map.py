"""The topics on a plane, alike topics close (LDAvis's intertopic distance map)."""

from numbers import Integral

import numpy as np
from sklearn.utils._param_validation import HasMethods, StrOptions, validate_params

from .._corpus import StrictInterval
from ..metrics._topics import _ALIGN_METRICS, _top_indices, _topic_distance_matrix
from ._labels import LABEL_METHODS, word_scores
from ._utils import require_pandas, resolve_feature_names, topic_shares, topic_word, unwrap

__all__ = ["topic_map"]


def placed_topics(model, caller):
    """The ``components_`` of a fitted model with at least one topic."""
    components = topic_word(model, caller)
    if components.shape[0] == 0:
        raise ValueError(f"{caller} places topics, but {type(model).__name__} has none.")
    return components


def topic_coordinates(components, metric):
    """The topics' first two principal coordinates and the share of the
    distances' spread that each shows: ``(coordinates, explained)``, shapes
    (K, 2) and (2,).

    Principal coordinates (classical multidimensional scaling, Torgerson's
    scaling) place the topics so that their Euclidean distances on the
    plane come as close as two axes allow to ``metric``'s. They are the
    kernel PCA of ``-distances**2 / 2`` (Williams 2002), which
    :class:`sklearn.decomposition.KernelPCA` computes; an axis whose
    eigenvalue is not positive (two topics, or distances that are not
    Euclidean) is all zeros. KernelPCA turns each axis so that its
    coordinate of largest magnitude is positive, so the map does not flip
    between runs or solvers.
    ``explained`` is each eigenvalue over the trace of the centred matrix
    (for Hellinger distances, a Euclidean metric, the axis's share of the
    spread of the topics around their centre).
    """
    from sklearn.decomposition import KernelPCA

    n_topics = components.shape[0]
    coordinates = np.zeros((n_topics, 2))
    explained = np.zeros(2)
    squared = _topic_distance_matrix(components, metric) ** 2
    total = squared.sum() / (2.0 * n_topics)  # trace of the double-centred matrix
    if n_topics < 2 or total <= 0.0:
        return coordinates, explained
    kpca = KernelPCA(n_components=min(2, n_topics), kernel="precomputed",
                     eigen_solver="auto", random_state=0)
    embedded = kpca.fit_transform(-0.5 * squared)
    coordinates[:, :embedded.shape[1]] = embedded
    explained[:embedded.shape[1]] = np.clip(kpca.eigenvalues_, 0.0, None) / total
    return coordinates, explained


@validate_params(
    {
        "estimator": [HasMethods(["fit"])],
        "feature_names": ["array-like", None],
        "metric": [StrOptions(set(_ALIGN_METRICS))],
        "label_method": [StrOptions(set(LABEL_METHODS))],
        "n_words": [StrictInterval(Integral, 1, None, closed="left")],
    },
    prefer_skip_nested_validation=True,
)
def topic_map(estimator, feature_names=None, *, metric="hellinger", label_method="frex",
              n_words=3):
    """The topics on a plane, alike topics close: an intertopic distance map.

    Places each topic so that the distances between topics on the plane
    follow the distances between their word distributions (normalized
    ``components_``) as closely as two axes can: the first two principal
    coordinates of those distances (classical multidimensional scaling).
    This is LDAvis's intertopic distance map (Sievert and Shirley 2014),
    BERTopic's ``visualize_topics``;
    :class:`~sklearn_clda.plotting.TopicMapDisplay` draws it, for a
    :class:`~sklearn_clda.CompoundLDA` once per collection.

    Parameters
    ----------
    estimator : estimator or Pipeline
        A fitted topic model with ``components_``
        (:class:`~sklearn_clda.CompoundLDA`,
        :class:`~sklearn_clda.LDAGibbs`,
        :class:`~sklearn.decomposition.LatentDirichletAllocation`), or a
        fitted Pipeline ending with one.

    feature_names : array-like of str of shape (n_features,), default=None
        The vocabulary. ``None`` uses the Pipeline's vocabulary, else the
        model's ``feature_names_in_``, else ``"word 0"``, ``"word 1"``, ...

    metric : {"hellinger", "jsd", "tv"}, default="hellinger"
        Distance between two topics' word distributions (as in
        :func:`~sklearn_clda.metrics.align_topics`). Hellinger distances
        are Euclidean, so the coordinates are those of a PCA of the square
        roots of the distributions; LDAvis uses the Jensen-Shannon
        divergence (``"jsd"``), which takes time in proportion to
        ``K**2 * V``.

    label_method : {"prob", "frex", "lift", "score", "relevance"}, \
            default="frex"
        How each topic's words are ranked (:func:`topic_labels`).

    n_words : int, default=3
        Number of words per topic (at most the vocabulary size).

    Returns
    -------
    topics : pandas.DataFrame
        One row per topic, in the model's order, with columns ``topic``,
        ``x`` and ``y`` (the first and second principal coordinates),
        ``share`` (the topic's share of the weight of ``components_``, of
        the training tokens for the Gibbs models) and ``words``.
        ``topics.attrs["explained"]`` holds, for each axis, its
        eigenvalue's share of the total: for Hellinger distances, how much
        of the spread of the topics around their centre the axis shows.

    See Also
    --------
    topic_hierarchy : The same distances, as a tree.
    collection_topic_summary : Each collection's share of each topic.
    sklearn_clda.plotting.TopicMapDisplay : The map, drawn.

    Notes
    -----
    Two axes keep only part of the distances: topics far apart on the map
    are far apart in their words, but two topics close on it may differ
    along the axes it leaves out (``attrs["explained"]`` says how much
    the two show). :func:`topic_hierarchy` uses all of the distances.

    Examples
    --------
    Four topics over six words, two about sport and two about politics:

    >>> import numpy as np
    >>> from sklearn.decomposition import LatentDirichletAllocation
    >>> from sklearn_clda.inspection import topic_map
    >>> lda = LatentDirichletAllocation(n_components=4)
    >>> lda.components_ = np.array([[30.0, 20.0, 10.0, 1.0, 1.0, 1.0],
    ...                             [20.0, 30.0, 1.0, 1.0, 2.0, 1.0],
    ...                             [1.0, 1.0, 1.0, 30.0, 20.0, 10.0],
    ...                             [1.0, 2.0, 1.0, 20.0, 30.0, 1.0]])
    >>> vocab = ["goal", "match", "league", "vote", "party", "senate"]
    >>> topics = topic_map(lda, vocab, n_words=2)
    >>> topics[["topic", "words"]].to_dict("list")
    {'topic': [0, 1, 2, 3], 'words': [['goal', 'league'], ['match', 'goal'], ['vote', 'senate'], ['party', 'vote']]}
    >>> np.sign(topics["x"]).tolist()  # the first axis parts sport from politics
    [-1.0, -1.0, 1.0, 1.0]
    >>> topics.attrs["explained"].round(2).tolist()
    [0.9, 0.06]
    """
    caller = "topic_map"
    pd = require_pandas(caller)
    model, _, pipeline_names = unwrap(estimator)
    components = placed_topics(model, caller)
    names = resolve_feature_names(model, feature_names, pipeline_names, components.shape[1],
                                  caller)
    coordinates, explained = topic_coordinates(components, metric)
    words = _top_indices(word_scores(components, label_method),
                         min(n_words, components.shape[1]))
    table = pd.DataFrame({
        "topic": np.arange(components.shape[0]),
        "x": coordinates[:, 0],
        "y": coordinates[:, 1],
        "share": topic_shares(components),
        "words": [names[row].tolist() for row in words],
    })
    table.attrs["explained"] = explained
    return table

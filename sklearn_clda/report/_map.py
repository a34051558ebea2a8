"""The page's interactive map of the topics: their places, every shown
collection's shares, and the words that LDAvis's relevance ranks at each
setting of the page's slider."""

import numpy as np

from ..inspection._labels import _Columns, _log
from ..inspection._map import topic_coordinates
from ..metrics._topics import _normalize_rows, _top_indices

#: The map's square, its margin and its largest circle's radius (SVG units).
MAP_SIZE = 400
MAP_MARGIN = 44
MAX_RADIUS = 34

#: The slider's settings of relevance's lambda (0: by lift, 1: by
#: probability) and the first one shown, Sievert and Shirley's choice.
LAMBDAS = tuple(step / 10 for step in range(11))
START_LAMBDA = 0.6


def map_data(model, names, stats, order, shown, n_words):
    """The map of topics ``order`` (at least 3) as the page draws it: SVG
    places and radii, the corpus's shares and the ``shown`` collections'
    (none for a model of one collection), and for each topic the words
    among its ``n_words`` most relevant at some setting of the slider, with
    the two logs that relevance weighs (the page ranks them as
    :func:`~sklearn_clda.inspection.topic_labels` with
    ``method="relevance"`` does). None for fewer than 3 topics."""
    if len(order) < 3:
        return None
    components = np.asarray(model.components_, dtype=np.float64)
    coordinates, explained = topic_coordinates(components[order], "hellinger")
    x, y = _svg_places(coordinates)
    corpus = stats.corpus[order]
    shown = shown if len(stats.labels) > 1 else []  # one collection: the corpus
    collections = stats.pi[np.ix_(shown, order)]
    peak = max(float(corpus.max()), float(collections.max(initial=0.0)), 1e-300)
    return {
        "size": MAP_SIZE, "max_radius": MAX_RADIUS, "peak": peak,
        "topics": [int(k) for k in order], "x": x, "y": y,
        "radius": MAX_RADIUS * np.sqrt(corpus / peak), "corpus": corpus,
        "collections": [{"name": stats.labels[j], "shares": row}
                        for j, row in zip(shown, collections)],
        "explained": explained, "lambdas": LAMBDAS, "start_lambda": START_LAMBDA,
        "n_words": int(min(n_words, components.shape[1])),
        "words": _relevant_words(components, names, order, n_words),
    }


def _svg_places(coordinates):
    """The topics' places in the map's square, y up, both axes on one scale
    (distances on the map keep their proportions)."""
    low, high = coordinates.min(axis=0), coordinates.max(axis=0)
    scale = (MAP_SIZE - 2 * MAP_MARGIN) / max(float((high - low).max()), 1e-12)
    centre = 0.5 * (low + high)
    x = MAP_SIZE / 2 + (coordinates[:, 0] - centre[0]) * scale
    y = MAP_SIZE / 2 - (coordinates[:, 1] - centre[1]) * scale
    return x, y


def _relevant_words(components, names, order, n_words):
    """For each topic of ``order``, its candidate words: those among its
    ``n_words`` most relevant at some lambda of :data:`LAMBDAS`, each with
    its vocabulary index (ties go to the lower), ``log phi`` and
    ``log lift``, the terms of relevance as ``inspection._labels`` computes
    them."""
    phi = _normalize_rows(components[order])
    log_phi = _log(phi)
    log_lift = log_phi - _Columns.of(components, phi, "relevance").log_p
    n = min(n_words, components.shape[1])
    candidates = np.zeros(log_phi.shape, dtype=bool)
    for lam in LAMBDAS:
        top = _top_indices(lam * log_phi + (1.0 - lam) * log_lift, n)
        np.put_along_axis(candidates, top, True, axis=1)
    return [
        [{"word": str(names[v]), "index": int(v), "log_phi": float(log_phi[i, v]),
          "log_lift": float(log_lift[i, v])} for v in np.flatnonzero(candidates[i])]
        for i in range(len(order))
    ]

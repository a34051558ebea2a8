"""The report's documents that read like another collection than their own."""

import numpy as np

__all__ = ["reads_like"]

#: The most work (tokens x topics) the report spends on the documents'
#: collections: about 15 s on one core (news16 at 20 topics is 15.6M, 2 s;
#: at 100 topics 78M, 7 s).
MAX_WORK = 150_000_000

#: A document reads like another collection when the posterior probability
#: of its own is below this.
BELOW = 0.1

#: Documents shown per collection.
SHOWN = 3

#: The most collections the report estimates the documents' collections
#: for: the work grows with the documents' topics times the collections
#: (minutes at thousands), as the pairwise comparisons' does.
MAX_COLLECTIONS = 40


def _omitted(why):
    return {"omitted": why, "below": BELOW, "collections": {}}, None


def reads_like(model, X, groups, snippet):
    """``(summary, table)``: per collection, how many of its documents give
    their own collection a probability below :data:`BELOW` and the
    :data:`SHOWN` that most read like another, with ``snippet(row)``; and
    the table of :func:`~sklearn_clda.inspection.document_collections`
    (seeded with 0) for the CSV file. ``(None, None)`` for a model of one
    collection or documents without groups; a reason in ``omitted``
    (and no table) past :data:`MAX_WORK` or for labels the model lacks."""
    from ..inspection import document_collections

    if model.groups_ is None or len(model.groups_) < 2 or groups is None:
        return None, None
    if len(model.groups_) > MAX_COLLECTIONS:
        return _omitted(f"{len(model.groups_)} collections (the report estimates it for up "
                        f"to {MAX_COLLECTIONS}); run sklearn_clda.inspection."
                        "document_collections on them")
    known = set(model.groups_.tolist())
    if any(label not in known for label in np.asarray(groups).tolist()):
        return _omitted("some documents' collections are not the model's")
    work = int(X.sum()) * model.components_.shape[0]
    if work > MAX_WORK:
        return _omitted(f"{int(X.sum()):,} tokens at {model.components_.shape[0]} topics is "
                        f"past the report's {MAX_WORK:,} token-topics; run "
                        "sklearn_clda.inspection.document_collections on them")
    table = document_collections(model, X, groups, random_state=0)
    collections = {}
    for label in model.groups_.tolist():
        mine = table[(table["collection"] == label) & (table["own"] < BELOW)]
        shown = mine.sort_values("probability", ascending=False, kind="stable").head(SHOWN)
        collections[str(label)] = {
            "n": int(len(mine)),
            "of": int((table["collection"] == label).sum()),
            "documents": [{"row": int(row), "reads_like": str(found.most_likely),
                           "probability": float(found.probability), "own": float(found.own),
                           "snippet": snippet(int(row))}
                          for row, found in shown.iterrows()],
        }
    return {"omitted": None, "below": BELOW, "collections": collections}, table

"""The report's tables as CSV files, written from the summary."""

import numpy as np

from ._files import TABLE_FILES, write_csv

_DISTINCTIVE = ("topic", "share", "lower", "upper", "ess", "corpus_share", "ratio",
                "difference", "difference_lower", "difference_upper", "difference_ess",
                "verdict", "chains_agree")
_COLLECTIONS = ("name", "documents", "document_share", "tokens", "ess_min", "ess_median",
                "closest", "closest_distance")
_DISTANCES = ("a", "b", "distance", "lower", "upper", "ess", "rhat")
_TOPICS = ("topic", "share", "tokens", "coherence", "exclusivity", "largest_in", "largest_share",
           "largest_lower", "largest_upper", "chain_distance", "unstable")
_DOCUMENT = ("row", "collection", "weight", "snippet")


def write_tables(out_dir, summary, parts, groups):
    """Write every table of the page as CSV; return ``{key: file name}``.

    Besides the summary's tables, from the summary's ``parts``:
    ``theta`` (the documents' topic proportions, or None) and ``groups``
    (their collections, or None) give ``document_topics.csv``; ``graph``
    (:func:`~._analysis.topic_pairs`) gives ``topic_correlations.csv``;
    ``compared`` (the pairs of collections compared, which may be more than
    the page shows) gives ``collection_comparisons.csv``; ``reads_like``
    (the table of :func:`~sklearn_clda.inspection.document_collections`,
    or None) gives ``document_collections.csv``; ``effects`` (the table of
    :func:`~sklearn_clda.inspection.topic_effects` with the changes over
    the covariates' spans, or None) gives ``topic_effects.csv``, and
    ``curves`` (those of :func:`~sklearn_clda.inspection.topic_share_curves`
    along the covariates, or None) ``topic_share_curves.csv``.
    """
    theta, graph, compared, reads_like = parts.theta, parts.graph, parts.compared, parts.reads_like
    tables = {
        "collections": (_COLLECTIONS, [
            [c[key] for key in _COLLECTIONS] for c in summary["collections"]]),
        "topics": _topics(summary),
        "collection_topics": _collection_topics(summary["collection_topic"]),
        "distinctive": (("collection",) + _DISTINCTIVE, [
            [entry["collection"]] + [row[key] for key in _DISTINCTIVE]
            for entry in summary["distinctive"] for row in entry["topics"]]),
        "representative": _representative(summary),
    }
    if summary["collection_distances"]:
        tables["distances"] = (_DISTANCES, [
            [pair[key] for key in _DISTANCES]
            for pair in summary["collection_distances"]["pairs"]])
    if summary["themes"]:
        tables["themes"] = _themes(summary["themes"], summary["collection_topic"])
    if summary["collection_words"]:
        tables["collection_words"] = _collection_words(summary)
    if compared:
        keys = [key for key in compared[0]["rows"][0]]
        tables["comparisons"] = (["a", "b"] + keys, [
            [pair["a"], pair["b"]] + [row[key] for key in keys]
            for pair in compared for row in pair["rows"]])
    if graph is not None:
        tables["topic_pairs"] = _topic_pairs(graph)
    if theta is not None:
        tables["documents"] = _documents(theta, groups)
    if reads_like is not None:
        tables["reads_like"] = (["document", *reads_like.columns], [
            [d, *values] for d, values in enumerate(reads_like.itertuples(index=False))])
    if parts.effects is not None:
        tables["effects"] = _effects(parts.effects, summary)
    if parts.curves is not None:
        tables["curves"] = _curves(parts.curves, summary)
    return {key: write_csv(out_dir, TABLE_FILES[key], header, rows)
            for key, (header, rows) in tables.items()}


def _topics(summary):
    header = ("rank",) + _TOPICS[:1] + ("label_words", "top_words") + _TOPICS[1:]
    rows = []
    for rank, k in enumerate(summary["topic_order"], start=1):
        topic = summary["topics"][k]
        rows.append([rank, k, " ".join(topic["label_words"]), " ".join(topic["top_words"])]
                    + [topic[key] for key in _TOPICS[1:]])
    return header, rows


def _topic_pairs(graph):
    """Every pair of topics that is an edge within the collections or across
    the corpus, with both correlations (the first empty without collections)
    and the bootstrap interval of the first (of the second without
    collections; empty when the corpus was too large to resample)."""
    main, corpus = graph.main, graph.corpus
    within = main.within_collections
    pairs = np.argwhere(np.triu(main.adjacency | corpus.adjacency, k=1))
    header = ("topic_a", "topic_b", "within_collections", "corpus", "edge_within",
              "edge_corpus", "lower", "upper")
    a, b = pairs[:, 0], pairs[:, 1]
    none = [None] * len(pairs)

    def column(matrix, present=True):  # (a pair's value, taken for all pairs at once)
        return matrix[a, b].tolist() if present and matrix is not None else none

    rows = [list(row) for row in zip(
        a.tolist(), b.tolist(), column(main.correlation, within), column(corpus.correlation),
        column(main.adjacency, within), column(corpus.adjacency), column(main.lower),
        column(main.upper))]
    rows.sort(key=lambda row: -(row[2] if within else row[3]))
    return header, rows


def _collection_topics(table):
    header = ("collection", "topic", "mean", "lower", "upper", "ess", "rhat", "corpus_wide")
    rows = [
        [label, k, table["mean"][j][k], table["lower"][j][k], table["upper"][j][k],
         table["ess"][j][k], table["rhat"][j][k], table["corpus_wide"][k]]
        for j, label in enumerate(table["collections"])
        for k in range(len(table["corpus_wide"]))
    ]
    return header, rows


def _themes(themes, collection_topic):
    header = ("collection", "theme", "topics", "mean", "lower", "upper", "ess", "rhat",
              "corpus_wide")
    rows = [
        [label, row["name"], " ".join(map(str, row["topics"])), themes["mean"][j][t],
         themes["lower"][j][t], themes["upper"][j][t], themes["ess"][j][t],
         themes["rhat"][j][t], themes["corpus_wide"][t]]
        for j, label in enumerate(collection_topic["collections"])
        for t, row in enumerate(themes["rows"])
    ]
    return header, rows


def _representative(summary):
    header = ("topic", "within_collection") + _DOCUMENT
    rows = [[entry["topic"], None] + [doc[key] for key in _DOCUMENT]
            for entry in summary["representative_documents"] for doc in entry["documents"]]
    rows += [[row["topic"], entry["collection"]] + [doc[key] for key in _DOCUMENT]
             for entry in summary["distinctive"] for row in entry["topics"]
             for doc in row["documents"]]
    return header, rows


def _collection_words(summary):
    header = ("topic", "collection", "collection_tokens", "rank", "word", "z", "rate",
              "rest_rate")
    rows = [[entry["topic"], c["name"], c["tokens"], rank, w["word"], w["z"], w["rate"],
             w["rest_rate"]]
            for entry in summary["collection_words"] for c in entry["collections"]
            for rank, w in enumerate(c["words"], start=1)]
    return header, rows


def _documents(theta, groups):
    header = ["document", "collection"] + [f"topic_{k}" for k in range(theta.shape[1])]
    # a row's numbers formatted at once ("%.6g" each): a format call per
    # cell took 13 s for 10,764 documents and 1,000 topics
    numbers = ",".join(["%.6g"] * theta.shape[1])
    rows = [[d, None if groups is None else str(groups[d]),
             *(numbers % tuple(shares)).split(",")]
            for d, shares in enumerate(theta.tolist())]
    return header, rows


def _effects(table, summary):
    """The coefficients of every topic and term (the intercept too), with
    the topic's label words and each slope's change over its span."""
    labels = [" ".join(topic["label_words"]) for topic in summary["topics"]]
    columns = [c for c in table.columns if c != "topic"]
    rows = [[k, labels[k], *values] for k, *values in table[["topic", *columns]].itertuples(
        index=False)]
    return ["topic", "label_words", *columns], rows


def _curves(curves, summary):
    """Every topic's curve along each covariate that has one."""
    labels = [" ".join(topic["label_words"]) for topic in summary["topics"]]
    columns = ["value", "estimate", "std_error", "lower", "upper"]
    rows = [[name, k, labels[k], *values] for name, k, *values in
            curves[["covariate", "topic", *columns]].itertuples(index=False)]
    return ["covariate", "topic", "label_words", *columns], rows

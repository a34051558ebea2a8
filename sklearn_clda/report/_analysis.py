"""What the report takes from the analysis API, in the shapes the summary needs.

The one place where the report calls :mod:`sklearn_clda.inspection` (topic
labels, representative documents, posterior summaries, comparisons) and
the ordering of :class:`~sklearn_clda.plotting.CollectionTrendDisplay`.
"""

import warnings

import numpy as np
from sklearn.utils import Bunch

from ..inspection._utils import MIN_DRAWS

#: How the topics are labelled: stm's FREX, with its default weight.
LABEL_METHOD = "frex"


def topic_words(model, names, n_words):
    """Label (FREX) words and most probable words of each topic.

    Returns a Bunch with ``label_words`` and ``prob_words`` (lists of
    lists of str, one per topic), ``prob_idx`` (indices of the most
    probable words, K x n, for the word figure), ``method`` and ``n_words``.
    """
    from ..inspection import topic_labels
    from ..metrics import top_word_indices

    n = max(1, min(int(n_words), names.shape[0]))
    labels = topic_labels(model, names, method=LABEL_METHOD, n_words=n)
    return Bunch(
        method=LABEL_METHOD, n_words=n,
        label_words=[list(words) for words in labels["words"]],
        prob_words=[list(words) for words in labels["prob_words"]],
        prob_idx=top_word_indices(model.components_, n=n),
    )


def summarize_draws(chains, interval):
    """Posterior mean, equal-tailed interval, ESS and R-hat of draws of shape
    (n_chains, n_draws, J, K): one chain, or several lined up and pooled.

    The ESS (of one chain, or the multi-chain one) and the R-hat (split)
    are NaN with fewer draws per chain than the estimators need.
    """
    from ..inspection._collections import _chain_stats, equal_tailed_interval

    if chains.shape[1] >= MIN_DRAWS:
        mean, lower, upper, ess, rhats = _chain_stats(chains, interval)
    else:
        pooled = chains.reshape(-1, *chains.shape[2:])
        lower, upper = equal_tailed_interval(pooled, interval)
        mean, ess = pooled.mean(axis=0), np.full(chains.shape[2:], np.nan)
        rhats = np.full(chains.shape[2:], np.nan)
    return Bunch(mean=mean, lower=lower, upper=upper, ess=ess, rhat=rhats)


def chain_draws(fits, caller="write_report"):
    """The draws of pi of one fit or of several chains lined up with the
    first fit's topics: ``(draws, permutations, distances, unstable)``,
    ``draws`` of shape (n_chains, n_draws, J, K), however few the draws
    (the summaries say what too few allow)."""
    from ..inspection._chains import chain_draws as align

    if len(fits) == 1:
        samples = np.asarray(fits[0].collection_topic_samples_, dtype=np.float64)
        K = samples.shape[2]
        return (samples[None], np.arange(K)[None], np.zeros((1, K)),
                np.array([], dtype=np.int64))
    found = align(fits, caller, min_draws=1)
    return found.draws, found.permutations, found.distances, found.unstable


def smallest_ess(fits, caller="extend_chain"):
    """The smallest ESS over the draws of every ``pi_jk`` of one fit or of
    several chains (the multi-chain ESS of their lined-up draws), or None
    (too few draws)."""
    from ..inspection import effective_sample_size

    draws = chain_draws(fits, caller)[0]
    if draws.shape[1] < MIN_DRAWS:
        return None
    if draws.shape[0] == 1:
        ess = effective_sample_size(draws[0])
    else:
        ess = effective_sample_size(draws, multichain=True)
    return float(np.nanmin(ess)) if np.isfinite(ess).any() else None


def document_topics(model, X, groups):
    """The documents' topic proportions from the fit, and a note.

    ``(theta, None)`` when ``X`` and ``groups`` are the documents the model
    was fitted on, in its order (by the fit's fingerprint); ``(None, None)``
    for other rows, and ``(None, note)`` for as many rows that are not those
    documents, or may not be (a model that keeps no fingerprint).
    """
    from .._fingerprint import fitted_on

    theta = getattr(model, "doc_topic_", None)
    if theta is None or theta.shape[0] != X.shape[0]:
        return None, None
    same = fitted_on(model, X, groups, "write_report")
    if same:
        return np.asarray(theta), None
    why = ("they (or their collections) are not the fitted documents in the fitted order"
           if same is False else "the model keeps no record of the documents it was "
           "fitted on (after partial_fit, or saved before fits kept one)")
    return None, (
        f"X has as many documents as the fit's doc_topic_ ({X.shape[0]}), but {why}: "
        "the documents' topic proportions are inferred (folded in) rather than taken "
        "from the fit, and document_topics.csv is not written."
    )


class DocumentShares:
    """The documents' topic proportions, folded in once, and the documents
    most about each topic, in the corpus or within one collection: what
    :func:`~sklearn_clda.inspection.representative_documents` returns,
    without a fold-in per collection (a report of 3,000 collections spent
    a minute on them).

    Documents without a word are never picked, as there (``min_length=1``).
    """

    def __init__(self, model, X, groups):
        from ..exceptions import UnseenCollectionWarning
        from ..inspection._documents import _long_enough

        with warnings.catch_warnings():
            # Without groups, every document gets the corpus-wide mixture as prior.
            warnings.simplefilter("ignore", UnseenCollectionWarning)
            self.rows, self.theta = _long_enough(model, X, groups, np.arange(X.shape[0]), 1,
                                                 "write_report", None)
        self.members = {}
        if groups is not None:
            labels, index = np.unique(np.asarray(groups)[self.rows], return_inverse=True)
            order = np.argsort(index, kind="stable")
            bounds = np.r_[0, np.cumsum(np.bincount(index, minlength=labels.size))]
            self.members = {label: order[a:b] for label, a, b
                            in zip(labels.tolist(), bounds[:-1], bounds[1:])}

    def top(self, n, topics, collection=None):
        """``{topic: [(row, theta), ...]}``: the ``n`` documents most about
        each topic, within ``collection`` when given (empty when there are
        no groups or the collection has no document with a word)."""
        from ..inspection._documents import top_rows

        if collection is None:
            positions = np.arange(self.rows.size)
        else:
            key = collection.item() if isinstance(collection, np.generic) else collection
            positions = self.members.get(key)
            if positions is None:
                return {}
        out = {}
        for k in topics:
            best = positions[top_rows(self.theta[positions, k], n)]
            out[int(k)] = [(int(self.rows[p]), float(self.theta[p, k])) for p in best]
        return out


#: Words kept per topic and collection, and the z-score of the log-odds
#: a word needs to be shown on the page (about the 97.7% normal quantile).
COLLECTION_WORDS = 8
MIN_WORD_Z = 2.0


def collection_words(model, X, groups, names, order):
    """How each collection words each topic, topics in ``order``.

    ``[{"topic": k, "collections": [{"name", "tokens", "words"}, ...]}, ...]``
    where ``words`` are the collection's :data:`COLLECTION_WORDS` words of
    highest z-score in the topic (``{"word", "z", "rate", "rest_rate"}``,
    :func:`~sklearn_clda.inspection.topic_words_by_collection`) and
    ``tokens`` its expected tokens in the topic. Empty with fewer than two
    collections.
    """
    from ..inspection import topic_words_by_collection

    if groups is None or len(np.unique(np.asarray(groups))) < 2:
        return []
    table = topic_words_by_collection(model, X, groups, n_words=COLLECTION_WORDS,
                                      feature_names=names)
    # The table's rows of a (topic, collection) are consecutive, ranked from
    # 1: cut at the ranks 1, over plain lists (a pandas group per pair took
    # 16 s for 1,000 collections).
    starts = np.flatnonzero(table["rank"].to_numpy() == 1)
    ends = np.r_[starts[1:], len(table)]
    heads = table.iloc[starts]
    words = list(zip(*(table[c].tolist() for c in ("word", "z", "rate", "rest_rate"))))
    by_topic = {}
    for k, label, tokens, a, b in zip(heads["topic"].tolist(), heads["collection"].tolist(),
                                      heads["collection_tokens"].tolist(), starts, ends):
        by_topic.setdefault(int(k), []).append({
            "name": str(label),
            "tokens": float(tokens),
            "words": [{"word": w, "z": z, "rate": rate, "rest_rate": rest}
                      for w, z, rate, rest in words[a:b]],
        })
    return [{"topic": int(k), "collections": by_topic[int(k)]} for k in order]


def compare(model, stats, a, b, interval):
    """Rows comparing collections ``a`` and ``b`` (positions) topic by topic,
    over the chains of ``stats.fits``."""
    from ..inspection import compare_collections

    fits = stats.fits if len(stats.fits) > 1 else stats.fits[0]
    found = compare_collections(fits, model.groups_[a], model.groups_[b], ci=interval)
    return [
        {"topic": int(row.topic), "share_a": stats.pi[a, row.topic],
         "share_b": stats.pi[b, row.topic], "difference": row.mean, "lower": row.lower,
         "upper": row.upper, "p_greater": row.prob_greater, "ess": row.ess,
         # with several chains: whether each chain alone puts it on this side
         "chains_agree": bool(row.chains_agree) if "chains_agree" in found else None}
        for row in found.itertuples(index=False)
    ]


def collection_order(model):
    """Whether the collections' labels order them (numbers or dates), and how."""
    from ..plotting._trend import ordered_positions

    if model.groups_ is None:
        return {"ordered": False, "order": None, "kind": None}
    try:
        positions, x, _ = ordered_positions(model, None, "write_report")
    except ValueError:
        return {"ordered": False, "order": None, "kind": None}
    return {
        "ordered": True,
        "order": [str(model.groups_[j]) for j in positions],
        "kind": "dates" if np.asarray(x).dtype.kind == "M" else "numbers",
    }


def trend_display(stats, names, interval):
    """Each topic's share across the ordered collections (pooled over the
    chains of ``stats.fits``), labelled by FREX words."""
    from ..plotting import CollectionTrendDisplay

    enough = stats.chains.shape[1] >= MIN_DRAWS
    ci = interval if enough else None
    # (too few draws to pool: the first fit's mean mixtures)
    fits = stats.fits if len(stats.fits) > 1 and enough else stats.fits[0]
    return CollectionTrendDisplay.from_estimator(
        fits, feature_names=names, ci=ci, label_method=LABEL_METHOD)


#: Correlation an edge of the topic graph must exceed (stm's default), and
#: the edges listed on the page (all are in topic_correlations.csv).
CORRELATION_CUTOFF = 0.01
PAGE_EDGES = 12
#: Bootstrap resamples of the correlations on the page, the work they may
#: take (documents x topics^2 x resamples: 10^10 is about 4 s on one core),
#: and the fewest worth taking (fewer: no intervals, with a note).
BOOTSTRAP_DRAWS = 200
BOOTSTRAP_WORK = 1e10
MIN_BOOTSTRAP_DRAWS = 50
#: The memory the resamples' correlation matrices may hold (8 K^2 bytes each).
BOOTSTRAP_BYTES = 2**28
#: Most topics whose correlations the report computes (K x K matrices, and a
#: graph and table no one could read beyond it).
MAX_CORRELATED_TOPICS = 2000


def bootstrap_draws(n_documents, n_topics):
    """Resamples for the correlation intervals of a corpus this size (0: none)."""
    draws = min(BOOTSTRAP_DRAWS, int(BOOTSTRAP_WORK / max(1, n_documents * n_topics ** 2)),
                BOOTSTRAP_BYTES // (8 * n_topics ** 2))
    return draws if draws >= MIN_BOOTSTRAP_DRAWS else 0


def correlations_omitted(n_documents, n_topics):
    """Why the report leaves the topic correlations out, or None."""
    if n_documents < 3:
        return f"it needs at least 3 documents, and there are {n_documents}"
    if n_topics > MAX_CORRELATED_TOPICS:
        return (f"the report correlates at most {MAX_CORRELATED_TOPICS:,} topics, and "
                f"there are {n_topics:,}")
    return None


def topic_pairs(model, X, groups, fitted, interval):
    """Which topics go together in documents: ``(summary, graph)``.

    With two collections or more, within the collections (each document's
    proportions relative to its collection's mean), beside the corpus-wide
    correlation, and the pairs that correlate only across the corpus;
    with one, across the corpus. ``summary`` holds JSON values for the
    page, ``graph`` the :func:`~sklearn_clda.inspection.topic_correlation`
    results (``main`` and ``corpus``) for the figure and the CSV table.
    ``fitted``: whether ``X`` are the fitted documents (their proportions
    are then the fit's, otherwise they are folded in). The main
    correlations (within the collections, or across the corpus with one)
    get bootstrap intervals of mass ``interval`` (:func:`bootstrap_draws`).
    Without correlations (:func:`correlations_omitted`): ``({"omitted":
    why}, None)``.
    """
    from ..inspection import topic_correlation

    omitted = correlations_omitted(X.shape[0], model.components_.shape[0])
    if omitted is not None:
        return {"omitted": omitted}, None
    data = None if fitted else X
    within = groups is not None and len(set(map(str, groups))) >= 2
    draws = bootstrap_draws(X.shape[0], model.components_.shape[0])
    boot = {"n_bootstrap": draws, "ci": interval, "random_state": 0}
    corpus = topic_correlation(model, data, groups, cutoff=CORRELATION_CUTOFF,
                               **({} if within else boot))
    main = corpus
    if within:
        main = topic_correlation(model, data, groups, cutoff=CORRELATION_CUTOFF,
                                 within_collections=True, **boot)
    gone = corpus.edges[~main.adjacency[corpus.edges.topic_a, corpus.edges.topic_b]]
    summary = {
        "omitted": None, "within": within, "cutoff": CORRELATION_CUTOFF,
        "n_edges": len(main.edges), "n_edges_corpus": len(corpus.edges),
        "n_bootstrap": draws, "interval": interval,
        "n_clear": int(main.edges["clear"].sum()) if draws else None,
        "edges": _pairs(main.edges.head(PAGE_EDGES), main, corpus),
        "collection_only": _pairs(gone.head(PAGE_EDGES // 2), main, corpus) if within else [],
    }
    return summary, Bunch(main=main, corpus=corpus)


def _pairs(edges, main, corpus):
    """The pairs of ``edges`` with their correlation within the collections
    (None without), its bootstrap interval (None without) and whether it
    is clear, and their correlation across the corpus."""
    within = main.within_collections
    out = []
    for a, b in edges[["topic_a", "topic_b"]].itertuples(index=False):
        bounds = (None, None) if main.lower is None else (float(main.lower[a, b]),
                                                          float(main.upper[a, b]))
        out.append({
            "topic_a": int(a), "topic_b": int(b),
            "within": float(main.correlation[a, b]) if within else None,
            "corpus": float(corpus.correlation[a, b]),
            "lower": bounds[0], "upper": bounds[1],
            "clear": None if bounds[0] is None else bounds[0] > CORRELATION_CUTOFF,
        })
    return out

"""The report's one summary: the content of ``report.json`` and the page's input.

:func:`build_summary` computes every number the page shows into one dict of
plain JSON values; the page's template renders that dict and nothing else,
and ``report.json`` is the same dict. A new field is one line here and one
in the template.
"""

import datetime
import math
import re
import warnings
from pathlib import Path

import numpy as np
from sklearn.utils import Bunch

from ..inspection._collection_distances import pair_distances
from ..inspection._info import most_used_in
from . import _analysis
from ._analysis import MIN_DRAWS
from ._covariate_effects import covariate_effects
from ._files import TABLE_FILES
from ._map import map_data
from ._reads_like import reads_like
from ._stats import MAX_RHAT, MIN_ESS, collection_statistics, trend_after_burn_in

#: Topics drawn, the largest first, in the figures with a panel or row per
#: topic (the heatmap, the words): drawing a figure grows with its topics
#: (43 s at K = 400), and past this a figure is too tall to read.
MAX_FIGURE_TOPICS = 40

# Keys of ``texts_info`` shown in the page and kept in report.json.
_INFO_KEYS = ("source", "format", "text_column", "group_column", "n_read", "n_skipped",
              "notes")
_SNIPPET_CHARS = 280  # characters of a document shown in the page
_SNIPPET_WORDS = 25  # words shown for a document given as counts only
_TOPIC_DOCUMENTS = 3  # representative documents per topic
_COLLECTION_DOCUMENTS = 2  # ... per distinctive topic of a collection
MAX_COMPARED = 12  # collections whose pairs the page shows (all pairs) at most
# ... whose pairs collection_comparisons.csv holds at most (780 pairs; their
# number grows with the square of the collections', and so does their time)
MAX_CSV_COMPARED = 40
MAX_BAR_COLLECTIONS = 10  # collections drawn as grouped bars (a color each) at most
# Collections the page's per-collection tables, cards and figures show at most
# (those with the most documents); the CSV tables and report.json hold all.
MAX_PAGE_COLLECTIONS = 40


def jsonable(value):
    """``value`` with NumPy values as Python ones and NaN/inf as None."""
    kind = type(value)  # (the plain leaves first: most of a big summary's values)
    if kind is str or kind is int or kind is bool or value is None:
        return value
    if kind is float:
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return jsonable(value.tolist())
    if isinstance(value, np.generic):
        return jsonable(value.item())
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


def build_summary(model, X, names, options):
    """The summary dict (JSON values) and the arrays the figures and tables need.

    ``options`` is the Bunch of :func:`~sklearn_clda.report.write_report`'s
    arguments. Returns ``(summary, parts)``; ``parts`` holds the collection
    statistics (``stats``), the topics' words (``labels``), the table order
    of the topics (``order``) and its first :data:`MAX_FIGURE_TOPICS`, which
    the figures of every topic draw (``figure_order``), the documents' topic
    proportions from the fit (``theta``, or None), the topic correlations
    (``graph``, :func:`~._analysis.topic_pairs`), the pairs of collections
    compared for the CSV table (``compared``, JSON values; the page's are in
    the summary), the positions of the collections the page shows
    (``shown``), the covariates' effects with the changes over their
    spans (``effects``, a DataFrame, or None without covariates) and the
    curves along them (``curves``, a DataFrame, or None).
    """
    from .. import __version__

    stats = collection_statistics([model, *options.chains], X, options.groups,
                                  options.interval)
    labels = _analysis.topic_words(model, names, options.top_words)
    theta, theta_note = _analysis.document_topics(model, X, options.groups)
    topics = _topics(model, X, names, options.groups, labels, stats, theta)
    pairs, graph = _analysis.topic_pairs(model, X, options.groups, theta is not None,
                                         options.interval)
    docs = _DocumentPicker(model, X, names, options)
    reads, reads_table = reads_like(model, X, options.groups, docs.snippet)
    info = _input_info(options.texts_info)
    shown = shown_collections(stats)
    comparisons, compared = _comparisons(model, stats, options.interval, topics.order)
    distances = _collection_distances(stats, options.interval)
    effects, effects_table, curves = (
        (None, None, None) if options.covariates is None
        else covariate_effects(model, X, options.covariates, options.groups, options.interval))
    summary = {
        "title": options.title,
        "generated": datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z").strip(),
        "sklearn_clda_version": __version__,
        "input": info,
        "n_documents": X.shape[0],
        "n_tokens": topics.n_tokens,
        "vocabulary_size": names.shape[0],
        "n_components": model.components_.shape[0],
        "collections": _collections(stats, distances),
        "collection_distances": distances,
        "shown_collections": None if shown is None else [stats.labels[j] for j in shown],
        "groups": [] if model.groups_ is None else model.groups_.tolist(),
        "settings": dict(options.settings or {}),
        "model": _model_settings(model),
        "fit_seconds": options.fit_seconds,
        "labels": {"method": labels.method, "n_words": labels.n_words},
        "topics": topics.rows,
        "topic_order": topics.order,
        "representative_documents": docs.by_topic(topics.order),
        "collection_words": _analysis.collection_words(model, X, options.groups, names,
                                                       topics.order),
        "collection_words_min_z": _analysis.MIN_WORD_Z,
        "topic_pairs": pairs,
        "snippets": "words" if options.texts is None else "text",
        "collection_topic": _collection_topic(stats, options.interval),
        "themes": _themes(model, names, stats, options.interval, options.n_themes),
        "distinctive": _distinctive(model, stats, options.n_distinctive, docs),
        "reads_like": reads,
        "comparisons": comparisons,
        "trend": _analysis.collection_order(model),
        "covariates": effects,
        "diagnostics": _diagnostics(model, stats, options.extension),
        "notes": info["notes"] + topics.notes + ([theta_note] if theta_note else []),
        "model_note": options.model_note,
        "model_file": "model.joblib",
        "model_file_contents": "pipeline" if options.pipeline_saved else "CompoundLDA",
        "safe_model_file": "model.npz",
        "safe_model_file_contents": "CompoundLDA, read with sklearn_clda.load_model",
    }
    order = np.asarray(topics.order)
    K = order.size
    summary["figure_topics"] = None if K <= MAX_FIGURE_TOPICS else MAX_FIGURE_TOPICS
    parts = Bunch(stats=stats, labels=labels, order=order, theta=theta, graph=graph,
                  compared=jsonable(compared), reads_like=reads_table, effects=effects_table,
                  curves=curves,
                  figure_order=order[:MAX_FIGURE_TOPICS],
                  shown=np.arange(len(stats.labels)) if shown is None else shown)
    summary["topic_map"] = map_data(model, names, stats, parts.figure_order, parts.shown,
                                    options.top_words)
    return jsonable(summary), parts


def shown_collections(stats):
    """Positions of the collections the page shows one by one, in label
    order: the :data:`MAX_PAGE_COLLECTIONS` with the most documents (ties:
    the first label), or ``None`` for all of them."""
    from ..plotting._base import largest_collections  # (no matplotlib)

    if len(stats.labels) <= MAX_PAGE_COLLECTIONS:
        return None
    return largest_collections(stats.docs, MAX_PAGE_COLLECTIONS)


def _input_info(texts_info):
    """The input's description, naming the input file but not its folders."""
    info = {key: (texts_info or {}).get(key) for key in _INFO_KEYS}
    info["notes"] = list(info["notes"] or [])
    if info["source"]:
        source = str(info["source"])
        info["source"] = Path(source).name or source
    return info


def _model_settings(model):
    return {
        "n_components": model.components_.shape[0], "alpha": model.alpha_,
        "gamma": model.gamma_, "eta": model.eta_, "algorithm": model.algorithm,
        "max_iter": model.max_iter, "random_state": model.random_state,
    }


def _collections(stats, distances):
    """One row per collection: its size, ESS and, with three collections or
    more, the closest other collection by its mixture and their distance."""
    closest, closest_distance = _closest(len(stats.labels), distances)
    rows = []
    for j, label in enumerate(stats.labels):
        ess = stats.ess[j]
        finite = np.isfinite(ess).all()
        rows.append({
            "name": label,
            "documents": int(stats.docs[j]),
            "document_share": float(stats.weights[j]),
            "tokens": None if stats.tokens is None else int(stats.tokens[j]),
            "ess_min": float(ess.min()) if finite else None,
            "ess_median": float(np.median(ess)) if finite else None,
            "closest": None if closest is None else stats.labels[closest[j]],
            "closest_distance": None if closest is None else float(closest_distance[j]),
        })
    return rows


def _collection_distances(stats, interval):
    """The Hellinger distance between every two collections' mixtures,
    summarized over the pooled draws (:func:`~sklearn_clda.inspection.
    collection_distances`): its matrix of posterior means and one row per
    pair; None for one collection, more than :data:`MAX_CSV_COMPARED` or
    too few draws."""
    J = len(stats.labels)
    if not 2 <= J <= MAX_CSV_COMPARED or stats.chains.shape[1] < MIN_DRAWS:
        return None
    a, b, mean, lower, upper, ess, rhats = pair_distances(stats.chains, "hellinger", interval)
    matrix = np.zeros((J, J))
    matrix[a, b] = matrix[b, a] = mean
    pairs = [{"a": stats.labels[i], "b": stats.labels[j], "distance": float(m),
              "lower": float(lo), "upper": float(hi), "ess": float(e), "rhat": float(r)}
             for i, j, m, lo, hi, e, r in zip(a, b, mean, lower, upper, ess, rhats)]
    return {"metric": "hellinger", "matrix": matrix.tolist(), "pairs": pairs}


def _closest(n_collections, distances):
    """``(closest, distance)``: each collection's nearest other collection
    (position) and their distance, or ``(None, None)`` for fewer than three
    collections (or no distances)."""
    if distances is None or n_collections < 3:
        return None, None
    matrix = np.array(distances["matrix"])
    np.fill_diagonal(matrix, np.inf)
    closest = matrix.argmin(axis=1)
    return closest, matrix[np.arange(n_collections), closest]


def _topics(model, X, names, groups, labels, stats, theta):
    """One row per topic (in topic order), the table's order and notes;
    ``theta`` is the documents' proportions from the fit, or None."""
    from ..metrics import topic_coherence, topic_exclusivity, topic_sizes

    K = model.components_.shape[0]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        coherence = topic_coherence(X, model.components_, top_n=labels.n_words)
    notes = [str(w.message) for w in caught]
    # stm's exclusivity of the same words (FREX weight 0.7, stm's default)
    exclusivity = topic_exclusivity(model.components_, labels.n_words, frex_weight=0.7)
    if theta is not None:
        sizes = topic_sizes(theta, X)
    else:
        sizes = topic_sizes(model, X, groups=groups)
    total = sizes.sum()
    shares = sizes / total if total > 0 else np.zeros(K)
    empty_docs = int(np.sum(np.asarray(X.sum(axis=1)).ravel() == 0))
    if empty_docs:
        notes.append(
            f"{empty_docs} document(s) have no word of the vocabulary (only stop "
            "words or rare words); they are kept but do not shape the topics."
        )
    peaks = most_used_in(stats.pi, stats.lower)
    rows = []
    for k in range(K):
        peak = peaks[k]
        rows.append({
            "topic": k,
            "label_words": labels.label_words[k],
            "top_words": labels.prob_words[k],
            "tokens": float(sizes[k]),
            "share": float(shares[k]),
            "coherence": float(coherence[k]),
            "exclusivity": float(exclusivity[k]),
            "largest_in": stats.labels[peak],
            "largest_share": float(stats.pi[peak, k]),
            "largest_lower": float(stats.lower[peak, k]),
            "largest_upper": float(stats.upper[peak, k]),
            # with several chains: the farthest match of the topic in another
            # chain, and whether some chain lacks it (farther than 0.5)
            "chain_distance": float(stats.distances[k]) if len(stats.fits) > 1 else None,
            "unstable": bool(k in stats.unstable),
        })
    order = np.argsort(-shares, kind="stable").tolist()
    return Bunch(rows=rows, order=order, n_tokens=int(X.sum()), notes=notes)


def _collection_topic(stats, interval):
    many = len(stats.labels) > MAX_BAR_COLLECTIONS
    return {
        "collections": stats.labels,
        # grouped bars up to MAX_BAR_COLLECTIONS collections, then a panel
        # per topic with a row per collection (colors and legend stop reading)
        "chart": "points" if many else "bars",
        "mean": stats.pi,
        "lower": stats.lower,
        "upper": stats.upper,
        "ess": stats.ess,
        "rhat": stats.rhat,
        "interval": interval,
        "corpus_wide": stats.corpus,
        "corpus_weights": "documents per collection",
    }


def _themes(model, names, stats, interval, n_themes):
    """The topics cut into ``n_themes`` themes by their words, each with its
    topics and every collection's share of it (the sum of its topics in
    every draw), or None for ``n_themes=0``."""
    from ..inspection import topic_themes
    from ..inspection._topic_groups import group_draws, group_indicator

    if not n_themes:
        return None
    themes = topic_themes(model, n_themes, names, n_words=3)
    draws, _, unstable = group_draws(stats.chains, np.asarray(stats.unstable, dtype=np.intp),
                                     themes, "write_report")
    sums = _analysis.summarize_draws(draws, interval)
    indicator = group_indicator(themes, stats.pi.shape[1], "write_report")[1]
    rows = [{"name": name, "topics": topics, "unstable": bool(t in unstable)}
            for t, (name, topics) in enumerate(themes.items())]
    return {"rows": rows, "mean": stats.pi @ indicator, "lower": sums.lower,
            "upper": sums.upper, "ess": sums.ess, "rhat": sums.rhat,
            "corpus_wide": stats.corpus @ indicator}


def verdict(lower, upper, ess, agree=False):
    """``"clear"``, ``"uncertain"``, ``"every chain"`` or ``"few draws"`` for
    a difference's interval.

    A difference is clear when its interval excludes 0 and rests on an
    effective sample size of at least :data:`MIN_ESS` draws. With fewer
    (or an unknown ESS) it is called neither clear nor uncertain: "few
    draws", unless several chains were pooled and each chain's own
    interval excludes 0 on the same side (``agree``, from
    :func:`~sklearn_clda.inspection._collections.chains_agree`): "every chain", a direction that holds
    wherever the chains settled, without a calibrated interval.
    """
    if ess is not None and ess >= MIN_ESS:
        return "clear" if lower > 0 or upper < 0 else "uncertain"
    return "every chain" if agree else "few draws"


def _distinctive(model, stats, n_distinctive, docs):
    """For each collection, its most over-represented topics (by difference),
    with the collection's documents most about each of them."""
    diff = stats.diff
    out = []
    for j, label in enumerate(stats.labels):
        rows = []
        for k in np.argsort(-diff.mean[j], kind="stable")[: max(1, int(n_distinctive))]:
            if diff.mean[j, k] <= 0:
                break
            corpus = stats.corpus[k]
            agree = stats.diff_agree is not None and bool(stats.diff_agree[j, k])
            said = verdict(diff.lower[j, k], diff.upper[j, k], diff.ess[j, k], agree)
            rows.append({
                "topic": int(k),
                "share": stats.pi[j, k],
                "lower": stats.lower[j, k],
                "upper": stats.upper[j, k],
                "ess": stats.ess[j, k],
                "corpus_share": corpus,
                "ratio": stats.pi[j, k] / corpus if corpus > 0 else None,
                "difference": diff.mean[j, k],
                "difference_lower": diff.lower[j, k],
                "difference_upper": diff.upper[j, k],
                "difference_ess": diff.ess[j, k],
                "verdict": said,
                "clear": said == "clear",
                "chains_agree": agree if stats.diff_agree is not None else None,
            })
        found = docs.within(None if model.groups_ is None else model.groups_[j],
                            [row["topic"] for row in rows])
        for row in rows:
            row["documents"] = found.get(row["topic"], [])
        out.append({"collection": label, "documents": int(stats.docs[j]), "topics": rows})
    return out


def _comparisons(model, stats, interval, order):
    """Every pair of collections compared topic by topic, the topics in the
    topic table's order: ``(for the page, for the CSV)``. The page shows the
    pairs of at most :data:`MAX_COMPARED` collections; the CSV holds those
    of at most :data:`MAX_CSV_COMPARED`."""
    J = len(stats.labels)
    if J < 2:
        return {"pairs": [], "omitted": "a single collection"}, []
    if J > MAX_CSV_COMPARED:
        return {"pairs": [], "omitted": f"{J} collections (pairs are compared for up to "
                                        f"{MAX_CSV_COMPARED})"}, []
    if stats.chains.shape[1] < MIN_DRAWS:
        return {"pairs": [], "omitted": f"fewer than {MIN_DRAWS} kept draws of the mixtures"}, []
    pairs = [_pair(model, stats, interval, order, a, b)
             for a in range(J) for b in range(a + 1, J)]
    if J > MAX_COMPARED:
        omitted = (f"{J} collections (the page shows the pairs of up to {MAX_COMPARED}); "
                   f"all {len(pairs)} pairs are in {TABLE_FILES['comparisons']}")
        return {"pairs": [], "omitted": omitted}, pairs
    return {"pairs": pairs, "omitted": None}, pairs


def _pair(model, stats, interval, order, a, b):
    """Collections ``a`` and ``b`` (positions) compared topic by topic."""
    by_topic = {row["topic"]: row for row in _analysis.compare(model, stats, a, b, interval)}
    rows = [by_topic[k] for k in order]
    for row in rows:
        row["verdict"] = verdict(row["lower"], row["upper"], row["ess"],
                                 bool(row["chains_agree"]))
    return {"a": stats.labels[a], "b": stats.labels[b], "rows": rows}


def _diagnostics(model, stats, extension):
    """The numbers and notes of the "Fit diagnostics" section."""
    n_draws = stats.samples.shape[0]
    trace = getattr(model, "trace_", {}) or {}
    ll = np.asarray(trace.get("log_likelihood", [np.nan]), dtype=np.float64)
    seconds = _sampler_seconds(stats.fits)
    ess = stats.ess if np.isfinite(stats.ess).all() else None
    rhat = stats.rhat[np.isfinite(stats.rhat)]
    trend = trend_after_burn_in(trace, model.burn_in_)
    return {
        "n_iter": int(model.n_iter_),
        "burn_in": int(model.burn_in_),
        "thin": int(model.thin),
        "n_draws": int(n_draws),
        "n_chains": len(stats.fits),
        "chain_seeds": [fit.random_state if isinstance(fit.random_state, int) else None
                        for fit in stats.fits],
        "unstable_topics": stats.unstable.tolist(),
        "sampler_seconds": seconds,
        "final_log_likelihood": float(ll[-1]),
        "log_likelihood_points": int(np.isfinite(ll).sum()),
        "log_likelihood_rise_after_burn_in": trend,
        "ess_median": None if ess is None else float(np.median(ess)),
        "ess_min": None if ess is None else float(np.min(ess)),
        "ess_target": MIN_ESS,
        "n_below_target": int(np.sum(~(stats.ess >= MIN_ESS))),
        "n_intervals": int(stats.ess.size),
        "rhat_max": float(rhat.max()) if rhat.size else None,
        "rhat_limit": MAX_RHAT,
        "n_rhat_above": int(np.sum(rhat > MAX_RHAT)),
        "extension": None if extension is None else dict(extension),
    }


def _sampler_seconds(fits):
    """The sampler's own time, summed over the chains, or None if not recorded."""
    total = 0.0
    for fit in fits:
        seconds = (getattr(fit, "trace_", {}) or {}).get("seconds")
        if seconds is None or not len(seconds):
            return None
        total += float(seconds[-1])
    return total


class _DocumentPicker:
    """Representative documents with their snippets, for topics and collections."""

    def __init__(self, model, X, names, options):
        self.X, self.names = X, names
        self.texts, self.groups = options.texts, options.groups
        self.shares = _analysis.DocumentShares(model, X, options.groups)

    def _rows(self, found):
        return [
            {"row": int(row), "collection": self._collection(row), "weight": float(weight),
             "snippet": self.snippet(row)}
            for row, weight in found
        ]

    def by_topic(self, order):
        """``[{"topic": k, "documents": [...]}, ...]`` in the given topic order."""
        found = self.shares.top(_TOPIC_DOCUMENTS, order)
        return [{"topic": int(k), "documents": self._rows(found.get(int(k), []))}
                for k in order]

    def within(self, collection, topics):
        """``{topic: [...]}``: the collection's documents most about each topic."""
        if not topics:
            return {}
        found = self.shares.top(_COLLECTION_DOCUMENTS, topics, collection)
        return {k: self._rows(rows) for k, rows in found.items()}

    def _collection(self, row):
        return None if self.groups is None else str(self.groups[row])

    def snippet(self, row):
        """The document's text, shortened; its most frequent words without texts."""
        if self.texts is not None:
            text = re.sub(r"\s+", " ", str(self.texts[row])).strip()
            if len(text) <= _SNIPPET_CHARS:
                return text
            cut = text[:_SNIPPET_CHARS].rsplit(" ", 1)[0]
            return cut + " \u2026"
        counts = self.X.getrow(row)
        order = np.argsort(-counts.data, kind="stable")[:_SNIPPET_WORDS]
        return " ".join(self.names[counts.indices[order]].tolist())

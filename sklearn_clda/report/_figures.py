"""The report's figures, drawn with the package's displays and saved as PNG."""

import warnings

import numpy as np

from . import _analysis
from ._files import FIGURE_FILES, write_file

_MAX_TRACE_PANELS = 6  # collections drawn in the pi trace and ACF figures
_LABEL_WORDS = 3  # words in a topic's label in the figures
_BAR_TOPICS = 6  # topics in the bar chart
_MAP_PANELS = 9  # collections drawn on the map of topics

#: The page's note on a report written without its figures.
NO_FIGURES_NOTE = ("the figures were not drawn (figures=False, or --no-figures on the "
                   "command line); the tables and CSV files hold their numbers")


def draw_figures(model, names, out_dir, parts, summary, dpi):
    """Draw and save every figure; return ``{key: file name}``.

    The heatmap and the word panels follow the topic table's order (its
    first ``MAX_FIGURE_TOPICS``, ``parts.figure_order``); topic labels use
    the table's label words (FREX when available). A warning that several
    figures raise (a character of a label that the font lacks) is given
    once.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        files = _draw_all(model, names, out_dir, parts, summary, dpi)
    seen = set()
    for record in caught:
        key = (record.category, str(record.message))
        if key not in seen:
            seen.add(key)
            # from this module, so that filters on the package's warnings apply
            warnings.warn(record.message, stacklevel=1)
    return files


def _draw_all(model, names, out_dir, parts, summary, dpi):
    stats, order = parts.stats, parts.figure_order
    n_draws = stats.chains.shape[1]  # of each chain
    words = [[_short(w) for w in label[:_LABEL_WORDS]] for label in parts.labels.label_words]
    saver = _Saver(out_dir, dpi)
    shown = parts.shown
    saver.save("heatmap", lambda: _heatmap(stats, shown, order, words))
    saver.save("bars", lambda: _bars(stats, shown, words, summary["collection_topic"]))
    if len(stats.labels) >= 2 and len(order) >= 3:
        saver.save("map", lambda: _map(model, stats, shown, order))
    distances = summary["collection_distances"]
    if distances is not None and len(stats.labels) >= 3:
        saver.save("distances", lambda: _distances(distances, stats.labels))
    if summary["trend"]["ordered"]:
        saver.save("trend", lambda: _analysis.trend_display(
            stats, names, summary["collection_topic"]["interval"]))
    saver.save("words", lambda: _words(model, names, parts, order, words))
    saver.save("quality", lambda: _quality(summary["topics"], order, words))
    if len(order) >= 3:
        saver.save("tree", lambda: _tree(model, order, words))
    if parts.graph is not None:
        saver.save("correlation", lambda: _correlation(parts.graph.main, order, words))
    if summary["covariates"] is not None:
        saver.save("effects", lambda: _effects(summary["covariates"], order, words))
        if parts.curves is not None:
            saver.save("curves", lambda: _curves(parts.curves, words,
                                                 summary["covariates"]["interval"]))
    saver.save("trace", lambda: _trace(stats.fits), parse_math=True)
    if n_draws >= 2:
        shown = np.argsort(-stats.docs, kind="stable")[:_MAX_TRACE_PANELS]
        collections = None
        if model.groups_ is not None and len(stats.labels) > _MAX_TRACE_PANELS:
            collections = [model.groups_[j] for j in sorted(shown)]
        # several chains with enough draws to line up: a line style per chain
        fits = stats.fits if len(stats.fits) > 1 and n_draws >= _analysis.MIN_DRAWS else model
        saver.save("pi_trace", lambda: _pi_display(fits, collections, "trace", n_draws))
        saver.save("pi_acf", lambda: _pi_display(fits, collections, "acf", n_draws))
    return saver.files


class _Saver:
    """Draws a display, saves its figure to the folder and closes it."""

    def __init__(self, out_dir, dpi):
        self.out_dir, self.dpi, self.files = out_dir, dpi, {}

    def save(self, key, make, parse_math=False):
        import matplotlib.pyplot as plt
        from matplotlib import rc_context

        before = set(plt.get_fignums())
        # Labels are user text: do not let a "$" start matplotlib's mathtext.
        with rc_context({} if parse_math else {"text.parse_math": False}):
            try:
                fig = make().figure_
                write_file(self.out_dir, FIGURE_FILES[key], lambda fh: fig.savefig(
                    fh, format="png", dpi=self.dpi, facecolor="white"))
            finally:
                for num in set(plt.get_fignums()) - before:
                    plt.close(num)
        self.files[key] = FIGURE_FILES[key]


def _trace(fits):
    """The log-likelihood of every chain against the sweep, on one panel."""
    from ..plotting import TraceDisplay

    if len(fits) == 1:
        return TraceDisplay.from_estimator(fits[0], keys=["log_likelihood"])
    names = [f"chain {c + 1}" + (f" (seed {fit.random_state})"
                                 if isinstance(fit.random_state, int) else "")
             for c, fit in enumerate(fits)]
    display = TraceDisplay.from_estimator(fits[0], keys=["log_likelihood"], name=names[0])
    for fit, name in zip(fits[1:], names[1:]):
        TraceDisplay.from_estimator(fit, keys=["log_likelihood"], name=name,
                                    ax=display.axes_)
    return display


#: Longest collection label or word drawn in a figure (the page shows them whole).
_FIGURE_TEXT = 40


def _short(text):
    """``text``, cut to :data:`_FIGURE_TEXT` characters with an ellipsis."""
    text = str(text)
    return text if len(text) <= _FIGURE_TEXT else text[:_FIGURE_TEXT - 1] + "\u2026"


def _heatmap(stats, shown, order, words):
    """The topics ``order`` in the collections the page shows."""
    from ..plotting import CollectionTopicDisplay

    return CollectionTopicDisplay(
        stats.pi[np.ix_(shown, order)], topics=order, topic_words=[words[k] for k in order],
        collection_labels=[_short(stats.labels[j]) for j in shown], kind="heatmap",
    ).plot()


def _bars(stats, shown, words, collection_topic):
    """The topics that differ most (over every collection), in the
    collections the page shows, as grouped bars or, for many collections,
    a panel per topic (``collection_topic["chart"]``)."""
    from ..plotting import CollectionTopicDisplay
    from ..plotting._base import select_topics

    topics = select_topics(stats.pi, _BAR_TOPICS)
    cells = np.ix_(shown, topics)
    intervals = stats.samples.shape[0] > 1
    interval = collection_topic["interval"]
    return CollectionTopicDisplay(
        stats.pi[cells],
        lower=stats.lower[cells] if intervals else None,
        upper=stats.upper[cells] if intervals else None,
        topics=topics, topic_words=[words[k] for k in topics],
        collection_labels=[_short(stats.labels[j]) for j in shown],
        interval=interval if intervals else None, kind=collection_topic["chart"],
    ).plot()


def _words(model, names, parts, order, words):
    """Most probable words of the topics ``order``, titled with their labels."""
    from ..plotting import TopicWordsDisplay
    from ..plotting._base import topic_word_distributions

    phi = topic_word_distributions(model, "write_report")
    idx = parts.labels.prob_idx[order]
    return TopicWordsDisplay(
        names[idx], np.take_along_axis(phi[order], idx, axis=1), topics=order,
        topic_labels=[f"{k}: {' '.join(words[k])}" for k in order],
    ).plot()


def _quality(topics, order, words):
    """The coherence and exclusivity of the figure's topics, labelled with
    their first two label words."""
    from ..plotting import TopicQualityDisplay

    shown = [topics[k] for k in order]
    return TopicQualityDisplay(
        [t["coherence"] for t in shown], [t["exclusivity"] for t in shown],
        shares=[t["share"] for t in shown], topics=order,
        topic_labels=[f"{k}: {' '.join(words[k][:2])}" for k in order],
        coherence_name="Coherence (UMass)",
    ).plot()


def _tree(model, order, words):
    """The tree of the figure's topics, as ``topic_hierarchy`` makes it by
    default (Ward's linkage of Hellinger distances)."""
    from ..inspection._hierarchy import topic_linkage
    from ..plotting import TopicHierarchyDisplay

    components = np.asarray(model.components_, dtype=np.float64)[order]
    return TopicHierarchyDisplay(
        topic_linkage(components, "hellinger", "ward"),
        topic_labels=[f"{k}: {' '.join(words[k])}" for k in order],
        distance_name="Hellinger distance between the topics' words, Ward linkage",
    ).plot()


def _map(model, stats, shown, order):
    """The figure's topics placed by their words, once for each of the
    :data:`_MAP_PANELS` shown collections with the most documents: circles
    by the collection's share, dashed by the corpus's."""
    from ..inspection._map import topic_coordinates
    from ..plotting import TopicMapDisplay
    from ..plotting._base import largest_collections
    from ..plotting._map import COLLECTION_RATIO, axis_labels

    panels = np.asarray(shown)[largest_collections(stats.docs[shown], _MAP_PANELS)]
    components = np.asarray(model.components_, dtype=np.float64)[order]
    coordinates, explained = topic_coordinates(components, "hellinger")
    return TopicMapDisplay(
        coordinates, stats.pi[np.ix_(panels, order)], reference=stats.corpus[order],
        topics=order, panel_labels=[_short(stats.labels[j]) for j in panels],
        axis_labels=axis_labels(explained), ratio_label=COLLECTION_RATIO,
    ).plot()


def _distances(distances, labels):
    """The matrix of the collections' distances, alike collections side by side."""
    from ..plotting import CollectionDistanceDisplay
    from ..plotting._collection_distance import METRIC_NAMES

    return CollectionDistanceDisplay(
        distances["matrix"], collection_labels=[_short(label) for label in labels],
        distance_name=METRIC_NAMES[distances["metric"]]).plot()


def _correlation(found, order, words):
    """The graph of the topics ``order`` that go together."""
    from ..plotting import TopicCorrelationDisplay

    cells = np.ix_(order, order)
    return TopicCorrelationDisplay(
        found.correlation[cells], found.adjacency[cells], shares=found.shares[order],
        topics=order, topic_labels=[f"{k}: {' '.join(words[k])}" for k in order],
    ).plot()


_EFFECT_COLUMNS = 4  # panels of the covariates' figure side by side


def _effects(section, order, words):
    """A panel per covariate: the change of each of the figure's topics'
    share over the covariate's span, in percentage points, with its
    interval."""
    from matplotlib.ticker import MaxNLocator

    from ..plotting import TopicEffectDisplay
    from ..plotting._base import axes_grid

    terms = section["terms"]
    columns = min(len(terms), _EFFECT_COLUMNS)
    rows = -(-len(terms) // columns)
    _, _, panels, _ = axes_grid(None, len(terms), columns, figsize=(
        6.0 * columns, rows * max(2.6, 1.2 + 0.32 * len(order))))
    for ax, term in zip(panels, terms):
        by_topic = {row["topic"]: row for row in term["rows"]}
        change = 100 * np.array([[by_topic[k][key] for k in order]  # percentage points
                                 for key in ("change", "change_lower", "change_upper")])
        display = TopicEffectDisplay(
            *change, topics=order, topic_labels=[f"{k}: {' '.join(words[k])}" for k in order],
            term=_short(term["name"]), interval=section["interval"]).plot(ax=ax)
        ax.xaxis.set_major_locator(MaxNLocator(nbins=6))
        ax.set_xlabel(f"Change in the topic share (percentage points),\n"
                      f"{_short(term['name'])} from {term['low']:.6g} to {term['high']:.6g} "
                      f"({section['interval']:.0%} interval)")
    return display


_CURVE_COLUMNS = 2  # panels of the covariates' curves side by side


def _curves(curves, words, interval):
    """A panel per covariate with a curve: the shares of the topics that
    vary most along it, with their bands."""
    from ..plotting import TopicShareCurveDisplay
    from ..plotting._base import axes_grid

    names = list(dict.fromkeys(curves["covariate"]))
    columns = min(len(names), _CURVE_COLUMNS)
    _, _, panels, _ = axes_grid(None, len(names), columns,
                                figsize=(8.0 * columns, 4.2 * -(-len(names) // columns)))
    labels = [f"{k}: {' '.join(topic_words)}" for k, topic_words in enumerate(words)]
    for ax, name in zip(panels, names):
        curve = curves[curves["covariate"] == name].copy()
        curve.attrs = {"covariate": _short(name), "ci": interval}
        topics = list(dict.fromkeys(curve["topic"]))
        display = TopicShareCurveDisplay.from_curves(
            curve, topic_labels=[labels[k] for k in topics], ax=ax)
    return display


def _pi_display(fits, collections, kind, n_draws):
    from ..plotting import PiTraceDisplay

    extra = {"max_lag": min(50, n_draws - 1)} if kind == "acf" else {}
    return PiTraceDisplay.from_estimator(fits, collections=collections, kind=kind, **extra)

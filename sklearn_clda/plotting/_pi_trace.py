"""Trace and autocorrelation plots of the kept draws of the collection mixtures."""

from numbers import Integral

import numpy as np
from sklearn.utils._param_validation import StrOptions, validate_params

from .._corpus import StrictInterval
from ..inspection._collections import _draws
from ._acf import autocorrelation
from ._base import (
    axes_grid,
    check_attribute,
    check_clda,
    check_matplotlib,
    check_topics,
    merge_kw,
    select_topics,
    shown_collections,
    unwrap_estimator,
)

__all__ = ["PiTraceDisplay"]

_KINDS = ("trace", "acf")
_KIND = StrOptions(set(_KINDS))
_POSITIVE_INT = StrictInterval(Integral, 1, None, closed="left")
_DEFAULT_N_TOPICS = 5
#: Line styles of the chains, in turn.
_CHAIN_STYLES = ("-", "--", ":", "-.")


def _kept_iterations(model, n_draws):
    """Sweep numbers of the kept draws, or None if they cannot be told."""
    burn_in = getattr(model, "burn_in_", None)
    thin = getattr(model, "thin", None)
    n_iter = getattr(model, "n_iter_", None)
    if burn_in is None or thin is None or n_iter is None:
        return None
    iterations = burn_in + thin * np.arange(1, n_draws + 1)
    if iterations[-1] > n_iter:
        return None
    return iterations


class PiTraceDisplay:
    """Trace plots or autocorrelations of the draws of ``pi``.

    One panel per collection, one line per topic: either the kept draws of
    the collection's topic proportion against the sweep (``kind="trace"``,
    to see the chain move and settle) or their sample autocorrelation
    against the lag (``kind="acf"``, to see how fast the chain mixes).

    Use :meth:`from_estimator` to build it from a fitted
    :class:`~sklearn_clda.CompoundLDA`; the constructor takes precomputed
    values. All attributes are set in :meth:`plot`.

    Parameters
    ----------
    samples : ndarray of shape (n_draws, n_collections, n_topics) or \
            (n_chains, n_draws, n_collections, n_topics)
        Draws of the shown topics' proportions in the shown collections, of
        one chain or of several (topics lined up): then each chain is drawn
        with its own line style, in the topic's color.

    iterations : ndarray of shape (n_draws,), default=None
        Sweep of each draw, the x axis of the traces. ``None`` numbers the
        draws ``0..n_draws-1``.

    topics : array-like of int of shape (n_topics,), default=None
        Model indices of the shown topics, used in the default labels.

    topic_labels : list of str of shape (n_topics,), default=None
        Line labels. ``None`` means ``"Topic k"``.

    collection_labels : list of str of shape (n_collections,), default=None
        Collection names, in the panel titles ``"Collection <name>"``.
        ``None`` means ``"0".."n_collections-1"``.

    kind : {"trace", "acf"}, default="trace"
        View drawn by :meth:`plot` when its ``kind`` is not given.

    max_lag : int, default=50
        Largest lag of the autocorrelations (clipped to ``n_draws - 1``).

    Attributes
    ----------
    axes_ : ndarray of matplotlib Axes
        The panels: of shape ``(n_rows, n_cols)`` (extra cells switched
        off) or the shape of the ``ax`` passed.

    bounding_ax_ : matplotlib Axes or None
        The single Axes passed as ``ax`` and divided into the grid, if any.

    lines_ : ndarray of shape (n_collections, n_topics) of Line2D
        The line of each topic in each collection's panel; with several
        chains, of shape (n_chains, n_collections, n_topics).

    acf_ : ndarray of shape (n_lags, n_collections, n_topics) or None
        ``kind="acf"``: the plotted autocorrelations (lag 0 first); with
        several chains, of shape (n_chains, n_lags, n_collections,
        n_topics).

    legend_ : matplotlib Legend or None
        The legend of the topics.

    figure_ : matplotlib Figure
        Figure containing the panels.

    See Also
    --------
    autocorrelation : The sample autocorrelation function used here.
    TraceDisplay : Log-likelihood and priors against the sweep.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> from sklearn_clda import CompoundLDA
    >>> from sklearn_clda.datasets import make_compound_corpus
    >>> from sklearn_clda.plotting import PiTraceDisplay
    >>> corpus = make_compound_corpus(n_topics=4, n_features=30, n_collections=3,
    ...                               docs_per_collection=30, doc_length=40,
    ...                               random_state=0)
    >>> clda = CompoundLDA(n_components=4, max_iter=200, thin=1, random_state=0)
    >>> clda = clda.fit(corpus.data, groups=corpus.groups)
    >>> disp = PiTraceDisplay.from_estimator(clda, topics=[0, 2], collections=[0, 1])
    >>> disp.lines_.shape  # collections x topics
    (2, 2)
    >>> disp = PiTraceDisplay.from_estimator(clda, kind="acf", max_lag=20)
    >>> disp.acf_.shape  # lags 0..20, 3 collections, 4 topics
    (21, 3, 4)
    >>> plt.close("all")
    """

    def __init__(
        self,
        samples,
        *,
        iterations=None,
        topics=None,
        topic_labels=None,
        collection_labels=None,
        kind="trace",
        max_lag=50,
    ):
        self.samples = samples
        self.iterations = iterations
        self.topics = topics
        self.topic_labels = topic_labels
        self.collection_labels = collection_labels
        self.kind = kind
        self.max_lag = max_lag

    def _labels(self, n_collections, n_topics):
        """Legend labels of the topics and panel titles of the collections."""
        topics = np.arange(n_topics) if self.topics is None else np.asarray(self.topics)
        labels = (
            [f"Topic {k}" for k in topics] if self.topic_labels is None
            else [str(label) for label in self.topic_labels]
        )
        titles = (
            [f"Collection {j}" for j in range(n_collections)]
            if self.collection_labels is None
            else [f"Collection {label}" for label in self.collection_labels]
        )
        if len(labels) != n_topics or len(titles) != n_collections:
            raise ValueError(
                f"Got {len(labels)} topic labels and {len(titles)} collection "
                f"labels for {n_topics} topics and {n_collections} collections."
            )
        return labels, titles

    def _series(self, kind, chains, max_lag):
        """x values, y values (n_chains, n_points, n_collections, n_topics),
        axis labels and default line style of the plot; sets ``acf_``."""
        n_draws = chains.shape[1]
        self.acf_ = None
        if kind == "acf":
            if max_lag is None:
                max_lag = check_attribute(self, "max_lag", [_POSITIVE_INT])
            if n_draws < 2:
                raise ValueError(
                    "The autocorrelation needs at least 2 kept draws, got "
                    f"{n_draws}; keep more (larger max_iter or smaller thin)."
                )
            acf = np.stack([autocorrelation(chain, max_lag=max_lag) for chain in chains])
            self.acf_ = acf[0] if chains.shape[0] == 1 else acf
            line = {"marker": "o", "markersize": 2.5, "linewidth": 1.0}
            return (np.arange(acf.shape[1]), acf, "Lag (kept draws)", "Autocorrelation",
                    line)
        if self.iterations is None:
            x, xlabel = np.arange(n_draws), "Kept draw"
        else:
            x, xlabel = np.asarray(self.iterations), "Iteration"
        line = {"linewidth": 1.0}
        if n_draws <= 30:
            line.update(marker="o", markersize=2.5)
        return x, chains, xlabel, "Topic proportion", line

    def _chains(self):
        """The samples as (n_chains, n_draws, n_collections, n_topics)."""
        samples = np.asarray(self.samples, dtype=np.float64)
        if samples.ndim not in (3, 4) or 0 in samples.shape:
            raise ValueError(
                "samples must have shape (n_draws, n_collections, n_topics) or "
                f"(n_chains, n_draws, n_collections, n_topics), got {samples.shape}."
            )
        if not np.all(np.isfinite(samples)):
            raise ValueError(
                f"{type(self).__name__} got NaN or infinite values in samples; "
                "there is nothing to draw for them."
            )
        return samples[None] if samples.ndim == 3 else samples

    def _legend(self, fig, panels, bounding, ax, n_chains):
        """The topics' legend, with the chains' line styles when there are several."""
        import matplotlib.lines as mlines

        handles = list(self.lines_[0] if n_chains == 1 else self.lines_[0, 0])
        handles += [mlines.Line2D([], [], color="0.3", linestyle=_CHAIN_STYLES[c % 4],
                                  label=f"chain {c + 1}") for c in range(n_chains)
                    if n_chains > 1]
        if bounding is None and ax is None:
            # A figure of our own: one legend to the right of the grid.
            return fig.legend(handles=handles, loc="outside right upper",
                              title="Topic", frameon=False)
        return panels[0].legend(handles=handles, fontsize="small")

    @validate_params(
        {
            "kind": [_KIND, None],
            "max_lag": [_POSITIVE_INT, None],
            "n_cols": [_POSITIVE_INT, None],
            "legend": ["boolean"],
            "confidence_band": ["boolean"],
        },
        prefer_skip_nested_validation=False,
    )
    def plot(
        self,
        ax=None,
        *,
        kind=None,
        max_lag=None,
        n_cols=None,
        line_kw=None,
        legend=True,
        confidence_band=True,
        figsize=None,
    ):
        """Plot the traces or autocorrelations.

        Parameters
        ----------
        ax : matplotlib Axes or array-like of Axes, default=None
            ``None`` creates a new figure. One Axes (created as a subplot)
            is divided into one panel per collection; an array-like gives
            one Axes per collection.

        kind : {"trace", "acf"}, default=None
            ``None`` uses ``self.kind``.

        max_lag : int, default=None
            Largest lag for ``kind="acf"``; ``None`` uses ``self.max_lag``.

        n_cols : int, default=None
            Number of columns of the grid; ``None`` means
            ``min(2, n_collections)``.

        line_kw : dict, default=None
            Keyword arguments of :meth:`matplotlib.axes.Axes.plot`.

        legend : bool, default=True
            Whether to add a legend of the topics (to the first panel).

        confidence_band : bool, default=True
            ``kind="acf"``: shade ``+-1.96 / sqrt(n_draws)``, the range in
            which about 95% of the autocorrelations of independent draws
            fall.

        figsize : tuple of float, default=None
            Size of a new figure; ``None`` sizes it to the grid.

        Returns
        -------
        display : PiTraceDisplay
            The display, with the artists stored as attributes.
        """
        check_matplotlib(f"{type(self).__name__}.plot")
        from matplotlib.ticker import MaxNLocator

        if kind is None:
            kind = check_attribute(self, "kind", [_KIND])
        chains = self._chains()
        n_chains, n_draws, n_collections, n_topics = chains.shape
        labels, titles = self._labels(n_collections, n_topics)
        x, values, xlabel, ylabel, default_line = self._series(kind, chains, max_lag)

        n_cols = min(2 if n_cols is None else n_cols, n_collections)
        n_rows = -(-n_collections // n_cols)
        if figsize is None:
            figsize = (4.6 * n_cols + (1.6 if legend else 0.0), 2.6 * n_rows + 0.3)
        fig, axes, panels, bounding = axes_grid(
            ax, n_collections, n_cols, figsize=figsize, sharex=True, sharey=True
        )
        lines = np.empty((n_chains, n_collections, n_topics), dtype=object)
        for j, panel in enumerate(panels):
            if kind == "acf":
                if confidence_band:
                    band = 1.96 / np.sqrt(n_draws)
                    panel.axhspan(-band, band, color="0.9", zorder=0, linewidth=0)
                panel.axhline(0.0, color="0.5", linewidth=0.8, zorder=1)
            for c in range(n_chains):
                for k in range(n_topics):
                    (lines[c, j, k],) = panel.plot(x, values[c, :, j, k], **merge_kw(
                        {**default_line, "color": f"C{k % 10}",
                         "linestyle": _CHAIN_STYLES[c % 4],
                         "label": labels[k] if c == 0 else "_nolegend_"}, line_kw))
            panel.set_title(titles[j])
            panel.grid(True, color="0.92")
        self.lines_ = lines[0] if n_chains == 1 else lines
        # Limits are set once all panels are drawn: set_ylim stops the
        # autoscaling of every axes sharing y.
        finite = values[np.isfinite(values)]
        if kind == "acf":
            low = min(-0.25, float(finite.min()) - 0.05) if finite.size else -0.25
            limits = (low, 1.05)
        else:
            top = float(finite.max()) if finite.size else 1.0
            limits = (0.0, top * 1.05 if top > 0 else 1.0)
        for panel in panels:
            panel.set_ylim(*limits)
            # lags and sweeps are whole numbers
            panel.xaxis.set_major_locator(MaxNLocator(integer=True))
        for i, panel in enumerate(panels):
            if i + n_cols >= n_collections:
                panel.set_xlabel(xlabel)
            if i % n_cols == 0:
                panel.set_ylabel(ylabel)
        self.legend_ = self._legend(fig, panels, bounding, ax, n_chains) if legend else None
        self.axes_ = axes
        self.bounding_ax_ = bounding
        self.figure_ = fig
        return self

    @classmethod
    @validate_params(
        {"kind": [_KIND], "max_lag": [_POSITIVE_INT]},
        # plot_kw is checked by plot.
        prefer_skip_nested_validation=False,
    )
    def from_estimator(
        cls,
        estimator,
        *,
        topics=None,
        collections=None,
        kind="trace",
        max_lag=50,
        ax=None,
        **plot_kw,
    ):
        """Plot the draws of ``pi`` kept by a fitted CompoundLDA.

        Parameters
        ----------
        estimator : CompoundLDA, Pipeline, or list of them
            A fitted :class:`~sklearn_clda.CompoundLDA` (or a Pipeline
            ending with one); its ``collection_topic_samples_`` are plotted.
            Or several fits of the same model (chains differing in
            ``random_state``): their draws, lined up with the first fit's
            topics (:func:`~sklearn_clda.inspection.align_chains`), a line
            style per chain; chains that settled apart show as lines at
            different heights.

        topics : array-like of int, default=None
            Indices of the topics to show (one line each). ``None`` shows
            the 5 topics whose proportions differ most across collections
            (with one collection: the 5 largest).

        collections : array-like, default=None
            Labels of the collections to show (one panel each), as in
            ``groups_``; a model fitted without groups has the single
            collection ``"all"``. ``None`` shows every collection, up to 40;
            with more, the 40 with the most documents, with a warning.

        kind : {"trace", "acf"}, default="trace"
            ``"trace"``: the draws against the sweep they were kept at.
            ``"acf"``: their autocorrelation against the lag, counted in
            kept draws (``thin`` sweeps apart).

        max_lag : int, default=50
            Largest lag for ``kind="acf"`` (clipped to ``n_draws - 1``).

        ax : matplotlib Axes or array-like of Axes, default=None
            Where to draw; see :meth:`plot`.

        **plot_kw : dict
            Further keyword arguments of :meth:`plot`.

        Returns
        -------
        display : PiTraceDisplay
            The plotted display.
        """
        caller = f"{cls.__name__}.from_estimator"
        check_matplotlib(caller)
        several = isinstance(estimator, (list, tuple))
        chains = _draws(estimator, caller)[1] if several else None
        model, _ = unwrap_estimator(estimator[0] if several else estimator)
        samples = check_clda(model, caller)
        n_components = samples.shape[2]
        if topics is None:
            topics = select_topics(
                np.asarray(model.collection_topic_, dtype=np.float64), _DEFAULT_N_TOPICS
            )
        else:
            topics = check_topics(topics, n_components)
        positions, labels = shown_collections(model, collections, caller)
        shown = (samples[:, positions][:, :, topics] if chains is None
                 else chains[:, :, positions][:, :, :, topics])
        display = cls(
            shown,
            iterations=_kept_iterations(model, samples.shape[0]),
            topics=topics,
            collection_labels=labels,
            kind=kind,
            max_lag=max_lag,
        )
        return display.plot(ax=ax, **plot_kw)

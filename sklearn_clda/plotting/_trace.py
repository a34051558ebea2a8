"""Log-likelihood and learned priors against the Gibbs sweep."""

import numpy as np
from sklearn.utils.validation import check_is_fitted

from ._base import axes_grid, check_matplotlib, merge_kw, unwrap_estimator

__all__ = ["TraceDisplay"]

_AXIS_KEYS = ("iteration", "seconds")
_LINE_GID = "sklearn_clda.trace"
_BURN_IN_GID = "sklearn_clda.burn_in"
_LABELS = {
    "log_likelihood": "Log-likelihood",
    "alpha": r"$\alpha$",
    "gamma": r"$\gamma$",
    "eta": r"$\eta$",
    "doc_topic_prior": "doc_topic_prior",
    "topic_word_prior": "topic_word_prior",
    "acceptance_rate": "Acceptance rate",
}


def _varies(values):
    values = np.asarray(values, dtype=np.float64)
    finite = values[np.isfinite(values)]
    return finite.size > 0 and finite.max() != finite.min()


class TraceDisplay:
    """Log-likelihood (and learned priors) of a Gibbs sampler against the sweep.

    One panel per recorded quantity of an estimator's ``trace_``, stacked
    with a shared x axis: the joint log-likelihood shows burn-in and
    convergence, and the priors learned by Gibbs-EM (or sampled) show
    where they settled. The end of burn-in is marked by a dashed line.

    Use :meth:`from_estimator` to build it from a fitted
    :class:`~sklearn_clda.CompoundLDA` or :class:`~sklearn_clda.LDAGibbs`
    (fit with ``evaluate_every > 0`` to record more than the last sweep);
    the constructor takes a trace dictionary. All attributes are set in
    :meth:`plot`.

    Parameters
    ----------
    trace : dict of str to array-like
        Equal-length arrays: ``"iteration"`` (and optionally
        ``"seconds"``) and the recorded quantities.

    keys : list of str, default=None
        The quantities to plot, one panel each. ``None`` means
        ``"log_likelihood"`` and every other quantity that changes during
        the run (learned or sampled priors, MGS acceptance rates).

    burn_in : int, default=None
        Number of burn-in sweeps, marked on iteration axes.

    estimator_name : str, default=None
        Label of the lines (shown in a legend when several estimators are
        drawn on the same axes).

    Attributes
    ----------
    axes_ : ndarray of matplotlib Axes
        One panel per quantity, of shape ``(n_keys, 1)`` or the shape of
        the ``ax`` passed.

    bounding_ax_ : matplotlib Axes or None
        The single Axes passed as ``ax`` and divided into panels, if any.

    lines_ : dict of str to matplotlib Line2D
        The line of each quantity.

    burn_in_lines_ : list of matplotlib Line2D or None
        The burn-in markers.

    figure_ : matplotlib Figure
        Figure containing the panels.

    See Also
    --------
    PiTraceDisplay : Traces of the draws of the collection mixtures.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> from sklearn_clda import CompoundLDA
    >>> from sklearn_clda.datasets import make_compound_corpus
    >>> from sklearn_clda.plotting import TraceDisplay
    >>> corpus = make_compound_corpus(n_topics=3, n_features=30, random_state=0)
    >>> clda = CompoundLDA(n_components=3, max_iter=100, evaluate_every=5,
    ...                    learn_priors="eta", random_state=0)
    >>> clda = clda.fit(corpus.data, groups=corpus.groups)
    >>> disp = TraceDisplay.from_estimator(clda)
    >>> sorted(disp.lines_)  # the log-likelihood and the learned eta
    ['eta', 'log_likelihood']
    >>> disp.lines_["log_likelihood"].get_xdata()[:3].tolist()
    [0, 5, 10]
    >>> plt.close("all")
    """

    def __init__(self, trace, *, keys=None, burn_in=None, estimator_name=None):
        self.trace = trace
        self.keys = keys
        self.burn_in = burn_in
        self.estimator_name = estimator_name

    def _keys(self):
        trace = self.trace
        if not isinstance(trace, dict) or "iteration" not in trace:
            raise ValueError("trace must be a dict with an 'iteration' array (see trace_).")
        if self.keys is None:
            keys = ["log_likelihood"] if "log_likelihood" in trace else []
            keys += [
                key for key in trace
                if key not in (*_AXIS_KEYS, "log_likelihood") and _varies(trace[key])
            ]
            if not keys:
                raise ValueError("trace holds no quantity to plot.")
            return keys
        keys = [self.keys] if isinstance(self.keys, str) else list(self.keys)
        unknown = [key for key in keys if key not in trace or key in _AXIS_KEYS]
        if unknown or not keys:
            available = [key for key in trace if key not in _AXIS_KEYS]
            raise ValueError(
                f"keys {unknown or keys!r} cannot be plotted; the trace records "
                f"{available}."
            )
        return keys

    def plot(self, ax=None, *, x="iteration", line_kw=None, show_burn_in=True,
             figsize=None):
        """Plot the traced quantities.

        Parameters
        ----------
        ax : matplotlib Axes or array-like of Axes, default=None
            ``None`` creates a new figure. One Axes (created as a subplot)
            is divided into one panel per quantity; an array-like gives one
            Axes per quantity. Passing the ``axes_`` of an earlier display
            overlays a second run.

        x : {"iteration", "seconds"}, default="iteration"
            The x axis: the sweep, or the wall-clock time since sampling
            started.

        line_kw : dict, default=None
            Keyword arguments of :meth:`matplotlib.axes.Axes.plot`.

        show_burn_in : bool, default=True
            Mark the end of burn-in with a dashed vertical line (iteration
            axis only).

        figsize : tuple of float, default=None
            Size of a new figure; ``None`` sizes it to the panels.

        Returns
        -------
        display : TraceDisplay
            The display, with the artists stored as attributes.
        """
        check_matplotlib(f"{type(self).__name__}.plot")
        if x not in _AXIS_KEYS:
            raise ValueError(f"x must be one of {list(_AXIS_KEYS)}, got {x!r}.")
        keys = self._keys()  # (checks that the trace is a dict first)
        if x not in self.trace:
            raise ValueError(f"The trace has no {x!r} record.")
        xs = np.asarray(self.trace[x])
        if figsize is None:
            figsize = (6.4, 1.2 + 2.0 * len(keys))
        fig, axes, panels, bounding = axes_grid(
            ax, len(keys), 1, figsize=figsize, sharex=True
        )
        # Runs drawn on the same axes get one colour each, in every panel.
        run = max(sum(ln.get_gid() == _LINE_GID for ln in p.lines) for p in panels)
        defaults = {
            "linewidth": 1.2, "color": f"C{run % 10}", "gid": _LINE_GID,
            "label": self.estimator_name or "_nolegend_",
        }
        if xs.size <= 50:
            defaults.update(marker="o", markersize=3)
        self.lines_ = {}
        mark = show_burn_in and self.burn_in is not None and x == "iteration"
        self.burn_in_lines_ = [] if mark else None
        for key, panel in zip(keys, panels):
            values = np.asarray(self.trace[key], dtype=np.float64)
            if values.shape != xs.shape:
                raise ValueError(
                    f"trace[{key!r}] has {values.size} entries for {xs.size} "
                    f"values of {x!r}."
                )
            (line,) = panel.plot(xs, values, **merge_kw(defaults, line_kw))
            self.lines_[key] = line
            panel.set_ylabel(_LABELS.get(key, key))
            panel.grid(True, color="0.92")
            if mark:
                self.burn_in_lines_.append(self._burn_in_marker(panel, panel is panels[0]))
        panels[-1].set_xlabel("Iteration" if x == "iteration" else "Seconds")
        # Several runs on the same axes: one legend, in the first panel.
        labelled = [
            ln for ln in panels[0].lines
            if ln.get_gid() == _LINE_GID and not ln.get_label().startswith("_")
        ]
        if len(labelled) > 1:
            panels[0].legend(handles=labelled, fontsize="small")
            if panels[0].get_title() in {ln.get_label() for ln in labelled}:
                panels[0].set_title("")  # a single run's title; the legend names them
        elif self.estimator_name and ax is None:
            panels[0].set_title(self.estimator_name)
        self.axes_ = axes
        self.bounding_ax_ = bounding
        self.figure_ = fig
        return self

    def _burn_in_marker(self, panel, annotate):
        """A dashed line at the end of burn-in, shared by runs drawn on ``panel``."""
        for existing in panel.lines:
            if existing.get_gid() == _BURN_IN_GID and existing.get_xdata()[0] == self.burn_in:
                return existing
        marker = panel.axvline(
            self.burn_in, color="0.4", linestyle="--", linewidth=0.9,
            label="_burn-in", gid=_BURN_IN_GID,
        )
        if annotate:
            panel.annotate(
                "burn-in", xy=(self.burn_in, 0.0), xycoords=("data", "axes fraction"),
                xytext=(3, 3), textcoords="offset points", ha="left", va="bottom",
                fontsize="small", color="0.3",
            )
        return marker

    @classmethod
    def from_estimator(
        cls, estimator, *, keys=None, x="iteration", name=None, ax=None, **plot_kw
    ):
        """Plot the ``trace_`` of a fitted Gibbs topic model.

        Parameters
        ----------
        estimator : LDAGibbs, CompoundLDA or Pipeline
            A fitted estimator with ``trace_`` (or a Pipeline ending with
            one). Fit with ``evaluate_every > 0`` to record the
            log-likelihood along the run, not only at the last sweep.

        keys : list of str, default=None
            Quantities of ``trace_`` to plot. ``None`` means the
            log-likelihood and every prior or statistic that changes during
            the run (learned priors).

        x : {"iteration", "seconds"}, default="iteration"
            The x axis.

        name : str, default=None
            Label of the lines, shown in a legend when several runs are
            drawn on the same axes. ``None`` means the estimator's class
            name.

        ax : matplotlib Axes or array-like of Axes, default=None
            Where to draw; see :meth:`plot`.

        **plot_kw : dict
            Further keyword arguments of :meth:`plot`.

        Returns
        -------
        display : TraceDisplay
            The plotted display.
        """
        check_matplotlib(f"{cls.__name__}.from_estimator")
        model, _ = unwrap_estimator(estimator)
        if not hasattr(model, "trace_") and hasattr(model, "components_"):
            raise ValueError(
                f"{cls.__name__}.from_estimator needs a model that records a "
                f"trace_ (LDAGibbs, CompoundLDA); the fitted "
                f"{type(model).__name__} has none."
            )
        check_is_fitted(model, "trace_")
        display = cls(
            model.trace_,
            keys=keys,
            burn_in=getattr(model, "burn_in_", None),
            estimator_name=type(model).__name__ if name is None else name,
        )
        return display.plot(ax=ax, x=x, **plot_kw)

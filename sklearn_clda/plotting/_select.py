"""Held-out perplexity, coherence, exclusivity, stability, residual dispersion and
fit time against K."""

from numbers import Integral

import numpy as np
from sklearn.utils._param_validation import validate_params

from .._corpus import StrictInterval
from ..inspection._select import MEASURES, PARAMETER_CONSTRAINTS, search_n_components
from ._base import axes_grid, check_matplotlib, merge_kw, std_of

__all__ = ["SelectNComponentsDisplay"]

_TITLES = {
    "perplexity": ("Held-out perplexity", "lower is better"),
    "coherence": ("Coherence", "higher is better"),
    "exclusivity": ("Exclusivity", "higher is better"),
    "stability": ("Stability across folds", "higher is better"),
    "dispersion": ("Residual dispersion", "about 1 when explained"),
    "fit_time": ("Fit time (s)", None),
}


class SelectNComponentsDisplay:
    """Held-out perplexity, coherence, exclusivity, stability, dispersion and fit time against K.

    The six measures of
    :func:`~sklearn_clda.inspection.select_n_components` in one figure,
    one panel each, with a band of one standard deviation over the
    cross-validation folds (the plot of stm's ``searchK``).

    Build it with :meth:`from_estimator` (which runs the search) or
    :meth:`from_results` (a search's results). All attributes are set in
    :meth:`plot`.

    Parameters
    ----------
    n_components : array-like of shape (n_points,)
        The numbers of topics (x values).

    scores : dict of str to array-like of shape (n_points,)
        Mean of each measure (``"perplexity"``, ``"coherence"``,
        ``"exclusivity"``, ``"stability"``, ``"dispersion"``,
        ``"fit_time"``) at each number of topics.

    std : dict of str to array-like of shape (n_points,), default=None
        Standard deviations over the folds, drawn as bands (missing names,
        or ``None``, draw none).

    Attributes
    ----------
    axes_ : ndarray of matplotlib Axes of shape (2, 3)
        The panels, or the shape of the ``ax`` passed.

    lines_ : dict of str to matplotlib Line2D
        The line of each measure.

    fill_between_ : dict of str to PolyCollection or None
        The band of each measure (None without a standard deviation).

    figure_ : matplotlib Figure
        Figure containing the panels.

    See Also
    --------
    sklearn_clda.inspection.select_n_components : The measures.
    PerplexityDisplay : Perplexity against K for several models.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> from sklearn_clda.plotting import SelectNComponentsDisplay
    >>> disp = SelectNComponentsDisplay.from_results({
    ...     "n_components": [5, 10, 20],
    ...     "perplexity": [900.0, 850.0, 840.0],
    ...     "coherence": [-40.0, -45.0, -52.0],
    ...     "exclusivity": [8.1, 8.9, 9.3],
    ...     "stability": [0.9, 0.85, 0.7],
    ...     "dispersion": [3.1, 2.4, 2.2],
    ...     "fit_time": [1.0, 1.6, 2.9],
    ... })
    >>> disp.lines_["exclusivity"].get_ydata().tolist()
    [8.1, 8.9, 9.3]
    >>> disp.axes_.shape
    (2, 3)
    >>> plt.close("all")
    """

    def __init__(self, n_components, scores, *, std=None):
        self.n_components = n_components
        self.scores = scores
        self.std = std

    def _series(self):
        """``(x, {measure: (y, std or None)})`` sorted by x, checked."""
        x = np.asarray(self.n_components, dtype=np.float64).ravel()
        order = np.argsort(x, kind="stable")
        series = {}
        for name in MEASURES:
            if name not in self.scores:
                raise ValueError(
                    f"scores has no {name!r}; it needs {list(MEASURES)}, as "
                    "returned by select_n_components."
                )
            y = np.asarray(self.scores[name], dtype=np.float64).ravel()
            if y.shape != x.shape:
                raise ValueError(
                    f"scores[{name!r}] passed to {type(self).__name__} has {y.size} "
                    f"values for {x.size} numbers of topics."
                )
            std = std_of(self, name, x.size)
            series[name] = (y[order], None if std is None else std[order])
        return x[order], series

    @validate_params(
        {"n_cols": [StrictInterval(Integral, 1, None, closed="left")]},
        prefer_skip_nested_validation=False,
    )
    def plot(self, ax=None, *, n_cols=3, line_kw=None, fill_between_kw=None, figsize=None):
        """Plot the six measures against the number of topics.

        Parameters
        ----------
        ax : matplotlib Axes or array-like of 6 Axes or more, default=None
            ``None`` creates a new figure; one Axes (created as a subplot)
            is divided into the panels.

        n_cols : int, default=3
            Number of columns of panels.

        line_kw : dict, default=None
            Keyword arguments of :meth:`matplotlib.axes.Axes.plot`.

        fill_between_kw : dict, default=None
            Keyword arguments of :meth:`matplotlib.axes.Axes.fill_between`.

        figsize : tuple of float, default=None
            Size of a new figure; ``None`` sizes it to the grid.

        Returns
        -------
        display : SelectNComponentsDisplay
            The display, with the artists stored as attributes.
        """
        check_matplotlib(f"{type(self).__name__}.plot")
        x, series = self._series()
        n_cols = max(1, min(n_cols, len(MEASURES)))
        n_rows = -(-len(MEASURES) // n_cols)
        fig, axes, panels, _ = axes_grid(
            ax, len(MEASURES), n_cols, figsize=figsize or (4.2 * n_cols, 3.0 * n_rows),
            sharex=True,
        )
        self.lines_, self.fill_between_ = {}, {}
        for i, (panel, name) in enumerate(zip(panels, MEASURES)):
            y, std = series[name]
            (line,) = panel.plot(
                x, y, **merge_kw({"color": f"C{i}", "marker": "o", "markersize": 4}, line_kw)
            )
            self.lines_[name] = line
            self.fill_between_[name] = None if std is None else panel.fill_between(
                x, y - std, y + std,
                **merge_kw({"color": line.get_color(), "alpha": 0.2, "linewidth": 0},
                           fill_between_kw),
            )
            title, hint = _TITLES[name]
            panel.set_title(title)
            if hint:
                panel.set_ylabel(hint, fontsize="small")
            if i + n_cols >= len(MEASURES):  # nothing below: the x axis is labelled
                panel.set_xlabel("Number of topics")
                panel.tick_params(axis="x", labelbottom=True)
            panel.grid(True, color="0.92")
            if x.size <= 12 and np.all(x == np.round(x)):
                panel.set_xticks(x, [str(int(v)) for v in x])
        self.axes_ = axes
        self.figure_ = fig
        return self

    @classmethod
    def from_results(cls, results, *, ax=None, **plot_kw):
        """Plot the results of :func:`~sklearn_clda.inspection.select_n_components`.

        Parameters
        ----------
        results : pandas.DataFrame or dict of array-like
            The search's results: ``n_components``, each measure's mean
            (``perplexity``, ``coherence``, ``exclusivity``, ``stability``,
            ``dispersion``, ``fit_time``) and optionally its standard deviation
            (``perplexity_std``, ...).

        ax : matplotlib Axes or array-like of 6 Axes or more, default=None
            Where to draw; see :meth:`plot`.

        **plot_kw : dict
            Further keyword arguments of :meth:`plot`.

        Returns
        -------
        display : SelectNComponentsDisplay
            The plotted display.
        """
        check_matplotlib(f"{cls.__name__}.from_results")
        if "n_components" not in results:
            raise ValueError(
                "results must hold 'n_components' and the measures, as returned "
                "by select_n_components."
            )
        scores = {name: results[name] for name in MEASURES if name in results}
        std = {name: results[f"{name}_std"] for name in MEASURES if f"{name}_std" in results}
        display = cls(results["n_components"], scores, std=std or None)
        return display.plot(ax=ax, **plot_kw)

    @classmethod
    @validate_params(PARAMETER_CONSTRAINTS, prefer_skip_nested_validation=False)
    def from_estimator(
        cls,
        estimator,
        X,
        groups=None,
        *,
        n_components,
        cv=3,
        coherence="umass",
        n_jobs=None,
        random_state=None,
        ax=None,
        **plot_kw,
    ):
        """Run :func:`~sklearn_clda.inspection.select_n_components` and plot it.

        Parameters
        ----------
        estimator : estimator or Pipeline
            The topic model to fit at every number of topics.

        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Document-term counts, or the Pipeline's input.

        groups : array-like of shape (n_samples,), default=None
            Collection label of each document.

        n_components : array-like of int
            The numbers of topics to try.

        cv : int, cross-validation generator or iterable, default=3
            How documents are split into folds.

        coherence : "umass" or callable, default="umass"
            Coherence score of the topics.

        n_jobs : int, default=None
            Number of fits run in parallel.

        random_state : int, RandomState instance or None, default=None
            Shuffles the documents into folds when ``cv`` is an int.

        ax : matplotlib Axes or array-like of 6 Axes or more, default=None
            Where to draw; see :meth:`plot`.

        **plot_kw : dict
            Further keyword arguments of :meth:`plot`.

        Returns
        -------
        display : SelectNComponentsDisplay
            The plotted display.

        See Also
        --------
        sklearn_clda.inspection.select_n_components : The parameters in
            detail.
        """
        check_matplotlib(f"{cls.__name__}.from_estimator")
        raw = search_n_components(
            estimator, X, groups, n_components, cv, coherence, n_jobs, random_state
        )
        display = cls(
            raw["n_components"],
            {name: raw[name].mean(axis=1) for name in MEASURES},
            std={name: raw[name].std(axis=1) for name in MEASURES},
        )
        return display.plot(ax=ax, **plot_kw)

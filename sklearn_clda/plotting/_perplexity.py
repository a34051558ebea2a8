"""Perplexity (or any score) against the number of topics for several models."""

import inspect

import numpy as np
from sklearn.base import clone

from .._corpus import check_sparse_structure
from ._base import check_matplotlib, merge_kw, single_axes, std_of

__all__ = ["PerplexityDisplay"]

_STD_STYLES = ("fill_between", "errorbar", None)


def _accepts(method, name):
    try:
        return name in inspect.signature(method).parameters
    except (TypeError, ValueError):
        return False


def _cv_key(cv_results, name, what):
    """The ``param_*`` key of ``cv_results`` for a parameter name."""
    if f"param_{name}" in cv_results:
        return f"param_{name}"
    keys = [k for k in cv_results if k.startswith("param_") and k.endswith(f"__{name}")]
    if len(keys) == 1:
        return keys[0]
    available = sorted(k[len("param_"):] for k in cv_results if k.startswith("param_"))
    if keys:
        raise ValueError(
            f"{what}={name!r} matches several parameters {sorted(keys)}; pass "
            f"the full name. Parameters searched: {available}."
        )
    raise ValueError(
        f"{what}={name!r} is not a searched parameter of cv_results; "
        f"parameters searched: {available}."
    )


def _group_name(value):
    # An estimator searched as a Pipeline step is shown by its class name.
    if hasattr(value, "get_params") and not isinstance(value, type):
        return type(value).__name__
    return str(value)


class PerplexityDisplay:
    """Held-out perplexity (or any score) against the number of topics.

    One line per model, as in the paper's Figure 4 (perplexity against
    ``K`` for LDA and cLDA), with a band of one standard deviation when
    the results of several runs or folds are given.

    Build it with :meth:`from_results` (scores you computed),
    :meth:`from_cv_results` (a grid search's ``cv_results_``) or
    :meth:`from_estimators` (fits the models for you). All attributes are
    set in :meth:`plot`.

    Parameters
    ----------
    n_components : array-like of shape (n_points,) or dict of such arrays
        The x values (numbers of topics, or any parameter), shared by all
        models or given per model name.

    scores : dict of str to array-like of shape (n_points,)
        Mean score of each model at each x value; NaN leaves a gap.

    std : dict of str to array-like of shape (n_points,), default=None
        Standard deviations drawn around the means (missing names, or
        ``None``, draw none).

    score_name : str, default="Perplexity"
        Label of the y axis.

    param_name : str, default="Number of topics"
        Label of the x axis.

    Attributes
    ----------
    ax_ : matplotlib Axes
        Axes with the plot.

    figure_ : matplotlib Figure
        Figure containing the plot.

    lines_ : dict of str to matplotlib Line2D
        The line of each model.

    fill_between_ : dict of str to PolyCollection or None
        With ``std_display_style="fill_between"``: each model's band.

    errorbar_ : dict of str to ErrorbarContainer or None
        With ``std_display_style="errorbar"``: each model's error bars.

    legend_ : matplotlib Legend or None
        The legend of the models.

    See Also
    --------
    TraceDisplay : Log-likelihood against the sweep.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> from sklearn_clda.plotting import PerplexityDisplay
    >>> disp = PerplexityDisplay.from_results(
    ...     [10, 20, 30],
    ...     {"LDA": [1510.0, 1480.0, 1470.0], "cLDA": [1460.0, 1420.0, 1415.0]},
    ... )
    >>> sorted(disp.lines_)
    ['LDA', 'cLDA']
    >>> disp.lines_["cLDA"].get_ydata().tolist()
    [1460.0, 1420.0, 1415.0]

    Runs repeated with different seeds give a band of one standard
    deviation:

    >>> disp = PerplexityDisplay.from_results(
    ...     [10, 20], {"LDA": [[1500.0, 1520.0], [1470.0, 1490.0]]})
    >>> disp.lines_["LDA"].get_ydata().tolist()
    [1510.0, 1480.0]
    >>> plt.close("all")
    """

    def __init__(
        self,
        n_components,
        scores,
        *,
        std=None,
        score_name="Perplexity",
        param_name="Number of topics",
    ):
        self.n_components = n_components
        self.scores = scores
        self.std = std
        self.score_name = score_name
        self.param_name = param_name

    def _series(self):
        if not isinstance(self.scores, dict) or not self.scores:
            raise ValueError("scores must be a non-empty dict {model name: scores}.")
        out = []
        for name, values in self.scores.items():
            if isinstance(self.n_components, dict):
                if name not in self.n_components:
                    raise ValueError(f"n_components has no x values for model {name!r}.")
                x = self.n_components[name]
            else:
                x = self.n_components
            x = np.asarray(x, dtype=np.float64).ravel()
            y = np.asarray(values, dtype=np.float64).ravel()
            if x.shape != y.shape:
                raise ValueError(
                    f"Model {name!r} has {y.size} scores for {x.size} values of "
                    "n_components."
                )
            out.append((str(name), x, y, std_of(self, name, y.size)))
        return out

    def plot(
        self,
        ax=None,
        *,
        std_display_style="fill_between",
        line_kw=None,
        fill_between_kw=None,
        errorbar_kw=None,
        legend=True,
    ):
        """Plot the scores against the number of topics.

        Parameters
        ----------
        ax : matplotlib Axes, default=None
            Axes to draw on; ``None`` creates a new figure.

        std_display_style : {"fill_between", "errorbar"} or None, \
                default="fill_between"
            How to draw the standard deviations (when given): a shaded
            band, error bars, or not at all.

        line_kw : dict, default=None
            Keyword arguments of :meth:`matplotlib.axes.Axes.plot`.

        fill_between_kw : dict, default=None
            Keyword arguments of :meth:`matplotlib.axes.Axes.fill_between`.

        errorbar_kw : dict, default=None
            Keyword arguments of :meth:`matplotlib.axes.Axes.errorbar`.

        legend : bool, default=True
            Whether to add a legend of the models.

        Returns
        -------
        display : PerplexityDisplay
            The display, with the artists stored as attributes.
        """
        check_matplotlib(f"{type(self).__name__}.plot")
        if std_display_style not in _STD_STYLES:
            raise ValueError(
                f"std_display_style must be one of {list(_STD_STYLES)}, got "
                f"{std_display_style!r}."
            )
        series = self._series()
        fig, ax = single_axes(ax, figsize=(6.4, 4.2))
        self.lines_, self.fill_between_, self.errorbar_ = {}, {}, {}
        for i, (name, x, y, std) in enumerate(series):
            order = np.argsort(x, kind="stable")
            x, y = x[order], y[order]
            std = None if std is None else std[order]
            color = f"C{i % 10}"
            self.fill_between_[name] = self.errorbar_[name] = None
            if std is not None and std_display_style == "errorbar":
                container = ax.errorbar(
                    x, y, yerr=std,
                    **merge_kw({"color": color, "marker": "o", "markersize": 4,
                                "capsize": 3, "label": name}, {**(line_kw or {}),
                                                               **(errorbar_kw or {})}),
                )
                self.errorbar_[name] = container
                self.lines_[name] = container.lines[0]
                continue
            (line,) = ax.plot(
                x, y,
                **merge_kw({"color": color, "marker": "o", "markersize": 4,
                            "label": name}, line_kw),
            )
            self.lines_[name] = line
            if std is not None and std_display_style == "fill_between":
                self.fill_between_[name] = ax.fill_between(
                    x, y - std, y + std,
                    **merge_kw({"color": line.get_color(), "alpha": 0.2,
                                "linewidth": 0}, fill_between_kw),
                )
        xs = np.unique(np.concatenate([s[1] for s in series]))
        xs = xs[np.isfinite(xs)]
        if 0 < xs.size <= 12 and np.all(xs == np.round(xs)):
            ax.set_xticks(xs, [str(int(v)) for v in xs])
        ax.set_xlabel(self.param_name)
        ax.set_ylabel(self.score_name)
        ax.grid(True, color="0.92")
        self.legend_ = ax.legend(title="Model") if legend else None
        self.ax_ = ax
        self.figure_ = fig
        return self

    # ---------------------------------------------------------- constructors
    @classmethod
    def from_results(
        cls,
        n_components,
        results,
        *,
        score_name="Perplexity",
        param_name="Number of topics",
        ax=None,
        **plot_kw,
    ):
        """Plot scores computed for several models and numbers of topics.

        Parameters
        ----------
        n_components : array-like of shape (n_points,)
            The numbers of topics (x values), shared by all models.

        results : dict of str to array-like
            For each model name, its scores at each ``n_components``: an
            array of shape ``(n_points,)``, or ``(n_points, n_runs)`` for
            repeated runs (different seeds, folds or chains), drawn as the
            mean with a band of one standard deviation (``ddof=0``, as in
            scikit-learn's ``cv_results_``). NaN marks a missing result.

        score_name : str, default="Perplexity"
            Label of the y axis.

        param_name : str, default="Number of topics"
            Label of the x axis.

        ax : matplotlib Axes, default=None
            Axes to draw on; ``None`` creates a new figure.

        **plot_kw : dict
            Further keyword arguments of :meth:`plot`.

        Returns
        -------
        display : PerplexityDisplay
            The plotted display.
        """
        check_matplotlib(f"{cls.__name__}.from_results")
        x = np.asarray(n_components, dtype=np.float64).ravel()
        if not isinstance(results, dict) or not results:
            raise ValueError("results must be a non-empty dict {model name: scores}.")
        scores, std = {}, {}
        for name, values in results.items():
            values = np.asarray(values, dtype=np.float64)
            if values.ndim == 1:
                values = values[:, None]
            if values.ndim != 2 or values.shape[0] != x.shape[0]:
                raise ValueError(
                    f"results[{name!r}] must have shape (n_points,) or (n_points, "
                    f"n_runs) with n_points={x.shape[0]}, got {values.shape}."
                )
            with np.errstate(invalid="ignore"):
                counts = np.sum(np.isfinite(values), axis=1)
                total = np.where(np.isfinite(values), values, 0.0).sum(axis=1)
                mean = np.where(counts > 0, total / np.maximum(counts, 1), np.nan)
                dev = np.where(np.isfinite(values), values - mean[:, None], 0.0)
                spread = np.sqrt((dev ** 2).sum(axis=1) / np.maximum(counts, 1))
            scores[name] = mean
            std[name] = spread if values.shape[1] > 1 else None
        display = cls(
            x, scores, std=std, score_name=score_name, param_name=param_name
        )
        return display.plot(ax=ax, **plot_kw)

    @classmethod
    def from_cv_results(
        cls,
        cv_results,
        param="n_components",
        *,
        scoring="score",
        group_by=None,
        negate=False,
        score_name=None,
        param_name=None,
        ax=None,
        **plot_kw,
    ):
        """Plot a grid search's mean test score against one parameter.

        Parameters
        ----------
        cv_results : dict
            The ``cv_results_`` of a fitted
            :class:`~sklearn.model_selection.GridSearchCV` (or any search).

        param : str, default="n_components"
            The parameter on the x axis. A Pipeline step's parameter can be
            given without its prefix when unambiguous (``"n_components"``
            finds ``"compoundlda__n_components"``).

        scoring : str, default="score"
            Which score: ``mean_test_<scoring>`` and ``std_test_<scoring>``
            are plotted (the std as a band). Use the scorer's name with
            multi-metric scoring.

        group_by : str, default=None
            A second searched parameter; one line per value (an estimator
            searched as a Pipeline step is named by its class). Without it,
            every candidate must have a different ``param`` value.

        negate : bool, default=False
            Plot minus the score, e.g. to show perplexity from a scorer that
            returns its negative.

        score_name : str, default=None
            Label of the y axis; ``None`` derives it from ``scoring``.

        param_name : str, default=None
            Label of the x axis; ``None`` uses ``param``.

        ax : matplotlib Axes, default=None
            Axes to draw on; ``None`` creates a new figure.

        **plot_kw : dict
            Further keyword arguments of :meth:`plot`.

        Returns
        -------
        display : PerplexityDisplay
            The plotted display.
        """
        check_matplotlib(f"{cls.__name__}.from_cv_results")
        mean_key, std_key = f"mean_test_{scoring}", f"std_test_{scoring}"
        if mean_key not in cv_results:
            available = sorted(k[len("mean_test_"):] for k in cv_results
                               if k.startswith("mean_test_"))
            raise ValueError(
                f"cv_results has no {mean_key!r}; scorings available: {available}."
            )
        param_key = _cv_key(cv_results, param, "param")
        values = cv_results[param_key]
        mask = np.ma.getmaskarray(values)
        values = np.ma.getdata(values)
        mean = np.asarray(cv_results[mean_key], dtype=np.float64)
        std = np.asarray(cv_results.get(std_key, np.zeros_like(mean)), dtype=np.float64)
        if negate:
            mean = -mean
        if group_by is None:
            groups = np.array(["score"] * len(mean), dtype=object)
        else:
            group_key = _cv_key(cv_results, group_by, "group_by")
            group_values = cv_results[group_key]
            mask = mask | np.ma.getmaskarray(group_values)
            groups = np.array([_group_name(v) for v in np.ma.getdata(group_values)],
                              dtype=object)
        keep = ~mask
        xs, scores, stds = {}, {}, {}
        for name in dict.fromkeys(groups[keep]):  # first-seen order
            rows = np.flatnonzero(keep & (groups == name))
            try:
                x = np.asarray([values[r] for r in rows], dtype=np.float64)
            except (TypeError, ValueError) as exc:
                raise ValueError(
                    f"param={param!r} must take numeric values to be plotted on "
                    f"the x axis, got {[values[r] for r in rows]!r}."
                ) from exc
            if np.unique(x).size != x.size:
                raise ValueError(
                    f"Several candidates share a value of {param!r}"
                    + (f" within group {name!r}" if group_by is not None else "")
                    + "; pass group_by=<another searched parameter> to draw one "
                    "line per value of it."
                )
            xs[name], scores[name], stds[name] = x, mean[rows], std[rows]
        if score_name is None:
            score_name = "Mean test score" if scoring == "score" else f"Mean test {scoring}"
            if negate:
                score_name = f"- {score_name}"
        if group_by is None and "legend" not in plot_kw:
            plot_kw["legend"] = False
        display = cls(
            xs, scores, std=stds, score_name=score_name,
            param_name=param if param_name is None else param_name,
        )
        return display.plot(ax=ax, **plot_kw)

    @classmethod
    def from_estimators(
        cls,
        estimators,
        X_train,
        X_test,
        n_components,
        *,
        groups_train=None,
        groups_test=None,
        score_name="Perplexity",
        ax=None,
        **plot_kw,
    ):
        """Fit each model at each number of topics and plot held-out perplexity.

        For every model and every value in ``n_components``, a clone with
        that ``n_components`` is fitted on ``X_train`` and its
        ``perplexity(X_test)`` is plotted (for this package's models, by
        document completion). Models whose ``fit`` and ``perplexity``
        accept ``groups`` (:class:`~sklearn_clda.CompoundLDA`) get
        ``groups_train`` and ``groups_test``.

        Parameters
        ----------
        estimators : dict of str to estimator
            The models to compare, e.g. ``{"LDA": LDAGibbs(...), "cLDA":
            CompoundLDA(...)}``; each needs ``n_components`` and
            ``perplexity``.

        X_train : {array-like, sparse matrix} of shape (n_train, n_features)
            Training document-term counts.

        X_test : {array-like, sparse matrix} of shape (n_test, n_features)
            Held-out document-term counts.

        n_components : array-like of int
            The numbers of topics to try.

        groups_train, groups_test : array-like, default=None
            Collection labels of the training and held-out documents.

        score_name : str, default="Perplexity"
            Label of the y axis.

        ax : matplotlib Axes, default=None
            Axes to draw on; ``None`` creates a new figure.

        **plot_kw : dict
            Further keyword arguments of :meth:`plot`.

        Returns
        -------
        display : PerplexityDisplay
            The plotted display.
        """
        caller = f"{cls.__name__}.from_estimators"
        check_matplotlib(caller)
        # The models may be third-party ones: check the sparse structure
        # before any of them reads it.
        X_train = check_sparse_structure(X_train, caller, "X_train")
        X_test = check_sparse_structure(X_test, caller, "X_test")
        if not isinstance(estimators, dict) or not estimators:
            raise ValueError("estimators must be a non-empty dict {name: estimator}.")
        grid = [int(k) for k in np.asarray(n_components).ravel()]
        scores = {}
        for name, estimator in estimators.items():
            if not hasattr(estimator, "perplexity"):
                raise ValueError(
                    f"estimators[{name!r}] ({type(estimator).__name__}) has no "
                    "perplexity method."
                )
            values = []
            for k in grid:
                model = clone(estimator).set_params(n_components=k)
                if groups_train is not None and _accepts(model.fit, "groups"):
                    model.fit(X_train, groups=groups_train)
                else:
                    model.fit(X_train)
                if groups_test is not None and _accepts(model.perplexity, "groups"):
                    values.append(model.perplexity(X_test, groups=groups_test))
                else:
                    values.append(model.perplexity(X_test))
            scores[name] = np.asarray(values, dtype=np.float64)
        display = cls(np.asarray(grid), scores, score_name=score_name)
        return display.plot(ax=ax, **plot_kw)

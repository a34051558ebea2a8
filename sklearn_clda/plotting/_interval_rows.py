"""Rows of points with intervals, one per topic: the picture of stm's
``plot.estimateEffect``, shared by the displays that draw one."""

from numbers import Real

import numpy as np

from ._base import check_matplotlib, finite_values, merge_kw, single_axes

__all__ = []


class IntervalRowsMixin:
    """One row per topic: a point (the attribute ``_value_name``), its
    interval (``lower``, ``upper``) as a line and a vertical line at zero;
    the rows whose interval leaves out zero in color, the others in grey.

    A display using it names the points' attribute and its plural
    (``_value_name``, ``_values_name``), stores ``lower``, ``upper``, ``topics``,
    ``topic_labels`` and ``interval`` besides the points, and gives the
    axis label by ``_axis_label``; :meth:`_plot_rows` sets ``order_``,
    ``clear_``, ``errorbars_``, ``ax_`` and ``figure_``.
    """

    _value_name, _values_name = "difference", "differences"

    def _checked(self):
        """``(values, lower, upper, labels)`` validated against each other."""
        names = (self._value_name, "lower", "upper")
        rows = [finite_values(self, name, getattr(self, name), "(n_topics,)")
                for name in names]
        if rows[0].shape[0] != 1 or any(r.shape != rows[0].shape for r in rows):
            raise ValueError(
                f"{names[0]}, lower and upper must be 1-d arrays of one length, got "
                f"shapes {[np.shape(getattr(self, n)) for n in names]}."
            )
        values, lower, upper = (r[0] for r in rows)
        if np.any(lower > values) or np.any(values > upper):
            raise ValueError(f"Each {names[0]} must lie within its interval: "
                             f"lower <= {names[0]} <= upper.")
        interval = self.interval
        if interval is not None and not (isinstance(interval, Real) and 0 < interval < 1):
            raise ValueError(f"interval of {type(self).__name__} must be a number in (0, 1) "
                             f"or None, got {interval!r}.")
        n_topics = values.size
        topics = np.arange(n_topics) if self.topics is None else np.asarray(self.topics)
        if topics.shape != (n_topics,):
            raise ValueError(f"topics has {topics.size} entries for {n_topics} "
                             f"{self._values_name}.")
        labels = ([f"Topic {k}" for k in topics] if self.topic_labels is None
                  else [str(label) for label in self.topic_labels])
        if len(labels) != n_topics:
            raise ValueError(f"topic_labels has {len(labels)} entries for {n_topics} topics.")
        return values, lower, upper, labels

    def _plot_rows(self, ax, sort, errorbar_kw):
        """Draw the rows on ``ax`` (or a new figure sized to them), by value
        when ``sort``, else the first at the top; store the artists."""
        check_matplotlib(f"{type(self).__name__}.plot")
        values, lower, upper, labels = self._checked()
        fig, ax, order, y = rows_layout(ax, values, sort)
        clear = (lower > 0) | (upper < 0)
        errorbars = self._draw_rows(ax, y, (values, lower, upper), clear, errorbar_kw)
        self._finish(ax, labels, order)
        self.order_, self.clear_, self.errorbars_ = order, clear, errorbars
        self.ax_, self.figure_ = ax, fig
        return self

    @staticmethod
    def _draw_rows(ax, y, values, highlighted, errorbar_kw):
        """Each point and its interval (``values``: point, lower, upper) at
        its row ``y``: the ``highlighted`` ones in color, the others in
        grey. Returns the ErrorbarContainers drawn (an empty group none)."""
        point, lower, upper = values
        drawn = []
        for chosen, color in ((True, "C0"), (False, "0.55")):
            rows = np.flatnonzero(highlighted == chosen)
            if rows.size:
                drawn.append(ax.errorbar(
                    point[rows], y[rows],
                    xerr=[point[rows] - lower[rows], upper[rows] - point[rows]],
                    **merge_kw({"fmt": "o", "color": color, "ecolor": color, "capsize": 3,
                                "markersize": 5, "linestyle": "none"}, errorbar_kw),
                ))
        return drawn

    def _finish(self, ax, labels, order):
        """The zero line, the row labels (``order``: bottom to top), the
        axis label and the grid."""
        n_topics = len(labels)
        ax.axvline(0.0, color="0.3", linewidth=0.8)
        ax.set_yticks(np.arange(n_topics), [labels[k] for k in order])
        ax.set_ylim(-0.7, n_topics - 0.3)
        ax.set_xlabel(self._axis_label())
        ax.grid(True, axis="x", color="0.92")


def rows_layout(ax, values, sort):
    """``(figure, axes, order, y)``: ``ax`` or a new figure sized to the
    topics, the topics' positions bottom to top (by ``values`` when
    ``sort``, else the first at the top) and each topic's row."""
    n_topics = values.size
    fig, ax = single_axes(ax, figsize=(7.0, 1.2 + 0.32 * n_topics))
    order = np.argsort(values, kind="stable") if sort else np.arange(n_topics)[::-1]
    y = np.empty(n_topics)
    y[order] = np.arange(n_topics)
    return fig, ax, order, y
